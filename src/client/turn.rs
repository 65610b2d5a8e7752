//! One turn of a dialogue as it happened: the Request, what came back, the findings of every
//! check, and the times. This is also how a turn is written in a session file, so its field
//! names are chosen to read well and diff well there.

use crate::client::connection::CallError;
use crate::protocol::Interface;
use crate::protocol::conformance::Finding;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub request: Value,
    #[serde(flatten)]
    pub reply: Reply,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<TurnFinding>,
    /// When the Request was sent (RFC 3339, milliseconds).
    pub sent: String,
    /// When the reply came (absent when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    /// Milliseconds from sending to the reply (or to giving up).
    pub latency_ms: f64,
}

/// What came back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reply {
    /// A Response (the tool's structuredContent).
    Response(Value),
    /// The server rejected the Request: a tool error (`isError`), with its text.
    ToolError(String),
    /// Nothing usable came back.
    Error(TurnError),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Timeout,
    Cancelled,
    TooLarge,
    /// The connection ended (the server died, the session expired).
    Gone,
    /// The server answered with a JSON-RPC error.
    Protocol,
    Transport,
    /// The Request could not be sent (not a JSON object, no connection).
    NotSent,
}

impl From<&CallError> for TurnError {
    fn from(e: &CallError) -> TurnError {
        let kind = match e {
            CallError::Timeout { .. } => ErrorKind::Timeout,
            CallError::Cancelled => ErrorKind::Cancelled,
            CallError::TooLarge(_) => ErrorKind::TooLarge,
            CallError::Gone(_) => ErrorKind::Gone,
            CallError::Protocol(_) => ErrorKind::Protocol,
            CallError::Transport(_) => ErrorKind::Transport,
        };
        TurnError {
            kind,
            message: e.to_string(),
        }
    }
}

/// Which message of the turn a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subject {
    Request,
    Response,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFinding {
    pub on: Subject,
    #[serde(flatten)]
    pub finding: Finding,
}

impl Turn {
    pub fn response(&self) -> Option<&Value> {
        match &self.reply {
            Reply::Response(v) => Some(v),
            _ => None,
        }
    }

    /// The interface of the Request, from its Header.
    pub fn interface(&self) -> Option<Interface> {
        self.request
            .get("Header")
            .and_then(Value::as_str)
            .and_then(Interface::from_header)
    }

    /// The Request's TurnIndex, if it has one.
    pub fn turn_index(&self) -> Option<u64> {
        self.request
            .get("TurnIndex")
            .and_then(crate::protocol::message::as_index)
    }

    /// Kind for BKN-DAC, "feedback" for BKN-USR.
    pub fn kind(&self) -> String {
        match self.interface() {
            Some(Interface::Usr) => "feedback".into(),
            _ => self
                .request
                .get("Kind")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned(),
        }
    }

    /// The Response's Outcome, if a Response came.
    pub fn outcome(&self) -> Option<&str> {
        self.response()
            .and_then(|r| r.get("Outcome"))
            .and_then(Value::as_str)
    }

    pub fn conforms(&self) -> bool {
        self.findings.is_empty()
    }
}
