//! One turn of a dialogue as it happened: the Request, what came back, the findings of every
//! check, and the times. This is also how a turn is written in a session file, so its field
//! names are chosen to read well and diff well there.

use crate::client::connection::CallError;
use crate::protocol::Interface;
use crate::protocol::conformance::Finding;
use crate::protocol::message::as_index;
use crate::protocol::raw::RawJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "TurnFields")]
pub struct Turn {
    /// The Request as sent, kept as text (parse with `request_value`).
    pub request: RawJson,
    pub reply: Reply,
    pub findings: Vec<TurnFinding>,
    /// When the Request was sent (RFC 3339, milliseconds).
    pub sent: String,
    /// When the reply came (absent when none did).
    pub received: Option<String>,
    /// Milliseconds from sending to the reply (or to giving up).
    pub latency_ms: f64,
    /// The first turn of a new MCP session of the same dialogue (after a reconnect): the
    /// DialogID changes here, and a replay opens a new session at this point.
    pub new_session: bool,
}

/// A turn as written: the reply is one of three members. (Not `#[serde(flatten)]`: that
/// passes values through serde's generic buffer, which cannot carry a message kept as text.)
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TurnFields {
    request: RawJson,
    #[serde(default)]
    response: Option<RawJson>,
    #[serde(default)]
    tool_error: Option<String>,
    #[serde(default)]
    error: Option<TurnError>,
    #[serde(default)]
    findings: Vec<TurnFinding>,
    sent: String,
    #[serde(default)]
    received: Option<String>,
    latency_ms: f64,
    #[serde(default)]
    new_session: bool,
}

impl TryFrom<TurnFields> for Turn {
    type Error = String;

    fn try_from(f: TurnFields) -> Result<Turn, String> {
        let reply = match (f.response, f.tool_error, f.error) {
            (Some(r), None, None) => Reply::Response(r),
            (None, Some(t), None) => Reply::ToolError(t),
            (None, None, Some(e)) => Reply::Error(e),
            _ => return Err("a turn has exactly one of response, toolError and error".into()),
        };
        Ok(Turn {
            request: f.request,
            reply,
            findings: f.findings,
            sent: f.sent,
            received: f.received,
            latency_ms: f.latency_ms,
            new_session: f.new_session,
        })
    }
}

impl Serialize for Turn {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Turn", 7)?;
        s.serialize_field("request", &self.request)?;
        match &self.reply {
            Reply::Response(r) => s.serialize_field("response", r)?,
            Reply::ToolError(t) => s.serialize_field("toolError", t)?,
            Reply::Error(e) => s.serialize_field("error", e)?,
        }
        if !self.findings.is_empty() {
            s.serialize_field("findings", &self.findings)?;
        }
        s.serialize_field("sent", &self.sent)?;
        if let Some(received) = &self.received {
            s.serialize_field("received", received)?;
        }
        s.serialize_field("latencyMs", &self.latency_ms)?;
        if self.new_session {
            s.serialize_field("newSession", &true)?;
        }
        s.end()
    }
}

/// What came back.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A Response (the tool's structuredContent), kept as text.
    Response(RawJson),
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

/// What a transcript shows of a turn, read once from its messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub interface: Option<Interface>,
    pub turn_index: Option<u64>,
    /// Kind for BKN-DAC, "feedback" for BKN-USR.
    pub kind: String,
    pub outcome: Option<String>,
    /// The Overall of a feasibility Response.
    pub overall: Option<String>,
}

impl Turn {
    pub fn request_value(&self) -> Value {
        self.request.value()
    }

    /// The Response, parsed, if one came.
    pub fn response(&self) -> Option<Value> {
        match &self.reply {
            Reply::Response(r) => Some(r.value()),
            _ => None,
        }
    }

    pub fn summary(&self) -> Summary {
        let request = self.request.value();
        let response = self.response();
        let interface = request
            .get("Header")
            .and_then(Value::as_str)
            .and_then(Interface::from_header);
        let text = |v: Option<&Value>, pointer: &str| {
            v.and_then(|v| v.pointer(pointer))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Summary {
            interface,
            turn_index: request.get("TurnIndex").and_then(as_index),
            kind: match interface {
                Some(Interface::Usr) => "feedback".into(),
                _ => text(Some(&request), "/Kind").unwrap_or_else(|| "?".into()),
            },
            outcome: text(response.as_ref(), "/Outcome"),
            overall: text(response.as_ref(), "/Feasibility/Overall"),
        }
    }

    /// The Request's TurnIndex, if it has one.
    pub fn turn_index(&self) -> Option<u64> {
        self.summary().turn_index
    }

    /// Kind for BKN-DAC, "feedback" for BKN-USR.
    pub fn kind(&self) -> String {
        self.summary().kind
    }

    /// The Response's Outcome, if a Response came.
    pub fn outcome(&self) -> Option<String> {
        self.summary().outcome
    }

    pub fn conforms(&self) -> bool {
        self.findings.is_empty()
    }
}
