//! One turn of a dialogue as it happened: the Request, what came back, the findings of every
//! check, and the times. This is also how a turn is written in a session file, so its field
//! names are chosen to read well and diff well there.

use crate::client::connection::CallError;
use crate::protocol::Interface;
use crate::protocol::conformance::Finding;
use crate::protocol::dac::Kind;
use crate::protocol::lenient::{
    DacRequestView, DacResponseView, Exchange, Field, UsrRequestView, UsrResponseView,
};
use crate::protocol::message::as_index;
use crate::protocol::raw::RawJson;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

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
    /// What the server asked while it worked on the Request (an elicitation, a sampling),
    /// and what it was given.
    pub asked: Vec<crate::client::answers::Asked>,
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
    #[serde(default)]
    asked: Vec<crate::client::answers::Asked>,
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
            asked: f.asked,
        })
    }
}

impl Serialize for Turn {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Turn", 8)?;
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
        if !self.asked.is_empty() {
            s.serialize_field("asked", &self.asked)?;
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
            CallError::Cancelled | CallError::TaskCancelled(_) => ErrorKind::Cancelled,
            CallError::TooLarge(_) => ErrorKind::TooLarge,
            CallError::Gone(_) => ErrorKind::Gone,
            CallError::Protocol(_) | CallError::Unanswered(_) | CallError::Refused(_) => {
                ErrorKind::Protocol
            }
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

/// What a turn asks: a BKN-DAC Kind, BKN-USR feedback, or whatever a Request said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnKind {
    Dac(Kind),
    Feedback,
    Other(String),
}

impl TurnKind {
    pub fn as_str(&self) -> &str {
        match self {
            TurnKind::Dac(k) => k.as_str(),
            TurnKind::Feedback => "feedback",
            TurnKind::Other(s) => s,
        }
    }
}

impl std::fmt::Display for TurnKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a transcript shows of a turn, read once from its messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub interface: Option<Interface>,
    pub turn_index: Option<u64>,
    pub kind: TurnKind,
    /// A few words of what the turn is about (the terms, the steps, the User …).
    pub about: String,
}

/// What `Turn::head` reads.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnHead {
    pub interface: Option<Interface>,
    pub kind: TurnKind,
    pub turn_index: Option<u64>,
    /// As it was written.
    pub outcome: Option<String>,
}

/// A few words of what a turn is about, for a transcript row.
fn about(kind: &TurnKind, exchange: &Exchange) -> String {
    let (request, response) = match exchange {
        Exchange::Usr { request, response } => return usr_about(request, response.as_ref()),
        Exchange::Dac { request, response } => (request, response),
    };
    let main = dac_about(kind, request, response.as_ref());
    let asked: Vec<String> = request
        .commitments
        .items()
        .iter()
        .filter_map(Field::known)
        .filter(|c| !c.commitment_id.is_absent())
        .map(|c| c.commitment_id.str().into_owned())
        .collect();
    let released = request.released_commitment_ids.texts();
    let mut parts = Vec::new();
    if !main.is_empty() {
        parts.push(main);
    }
    if !asked.is_empty() {
        parts.push(format!("commit {}", asked.join(", ")));
    }
    if !released.is_empty() {
        parts.push(format!("release {}", released.join(", ")));
    }
    parts.join("; ")
}

/// A BKN-USR turn: its User (the Request's, else the refined state's), and the hypothesis its
/// feedback is about.
fn usr_about(request: &UsrRequestView, response: Option<&UsrResponseView>) -> String {
    let state_user = response
        .and_then(|r| r.refined_user_state.known())
        .map(|s| &s.user_id)
        .filter(|id| !id.is_absent());
    let user = match (&request.user_id, state_user) {
        (Field::Absent, None) => "(the dialogue's User)".into(),
        (Field::Absent, Some(id)) => id.str().into_owned(),
        (id, _) => id.str().into_owned(),
    };
    let hypothesis = request
        .feedback
        .known()
        .map(|f| &f.hypothesis)
        .filter(|h| !h.is_absent());
    match hypothesis {
        Some(h) => format!("{user}: {}", h.str()),
        None => user,
    }
}

/// What a BKN-DAC turn of `kind` asks about (its commitments aside): a feasibility's verdict
/// or steps, the terms (or question) grounded or clarified, or the entities and space.
fn dac_about(
    kind: &TurnKind,
    request: &DacRequestView,
    response: Option<&DacResponseView>,
) -> String {
    match kind {
        TurnKind::Dac(Kind::Feasibility) => match response.and_then(|r| r.verdict(request)) {
            Some(verdict) => verdict.counts_text(),
            None => {
                let n = request.process_actions.items().len();
                format!("{n} step{}", if n == 1 { "" } else { "s" })
            }
        },
        TurnKind::Dac(Kind::SemanticGrounding | Kind::Clarification) => {
            let terms: Vec<String> = request
                .terms
                .items()
                .iter()
                .map(|t| match t {
                    Field::Known(t) => t.text.str().into_owned(),
                    other => other.other().map(|v| v.to_string()).unwrap_or_default(),
                })
                .collect();
            if terms.is_empty() {
                request.question.str().into_owned()
            } else {
                terms.join(", ")
            }
        }
        TurnKind::Dac(Kind::Commitment) | TurnKind::Other(_) | TurnKind::Feedback => String::new(),
        TurnKind::Dac(_) => {
            let mut ids: Vec<String> = request
                .entity_ids
                .texts()
                .into_iter()
                .map(|id| id.into_owned())
                .collect();
            if let Some(space) = request.space.known().filter(|s| !s.space_id.is_absent()) {
                ids.push(space.space_id.str().into_owned());
            }
            ids.join(", ")
        }
    }
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

    /// What the transcript shows of the turn and its messages read leniently, both from one
    /// parse of each message.
    pub fn read(&self) -> (Summary, Exchange) {
        let request = self.request.value();
        let response = self.response();
        let interface = request
            .get("Header")
            .and_then(Value::as_str)
            .and_then(Interface::from_header);
        let exchange = Exchange::read(
            interface.unwrap_or(Interface::Dac),
            &request,
            response.as_ref(),
        );
        let kind = match (interface, &exchange) {
            (Some(Interface::Usr), _) => TurnKind::Feedback,
            (_, Exchange::Dac { request, .. }) => match &request.kind {
                Field::Known(k) => TurnKind::Dac(*k),
                Field::Absent => TurnKind::Other("?".into()),
                other => TurnKind::Other(other.text().into_owned()),
            },
            (_, Exchange::Usr { .. }) => TurnKind::Feedback,
        };
        let summary = Summary {
            interface,
            turn_index: request.get("TurnIndex").and_then(as_index),
            about: about(&kind, &exchange),
            kind,
        };
        (summary, exchange)
    }

    /// The few facts a line of output needs (interface, Kind, TurnIndex, Outcome), read
    /// without parsing the messages: the rest of each is skipped, not built.
    pub fn head(&self) -> TurnHead {
        #[derive(Deserialize)]
        struct Request<'a> {
            #[serde(rename = "Header", borrow, default)]
            header: Option<Cow<'a, str>>,
            #[serde(rename = "Kind", borrow, default)]
            kind: Option<Cow<'a, str>>,
            #[serde(rename = "TurnIndex", default)]
            turn_index: Option<Value>,
        }
        #[derive(Deserialize)]
        struct Response<'a> {
            #[serde(rename = "Outcome", borrow, default)]
            outcome: Option<Cow<'a, str>>,
        }
        let request: Option<Request> = serde_json::from_str(self.request.text()).ok();
        let outcome = match &self.reply {
            Reply::Response(r) => serde_json::from_str::<Response>(r.text())
                .ok()
                .and_then(|r| r.outcome.map(Cow::into_owned)),
            _ => None,
        };
        let interface = request
            .as_ref()
            .and_then(|r| r.header.as_deref())
            .and_then(Interface::from_header);
        let kind = match (interface, request.as_ref().and_then(|r| r.kind.as_deref())) {
            (Some(Interface::Usr), _) => TurnKind::Feedback,
            (_, Some(k)) => match Kind::parse(k) {
                Some(k) => TurnKind::Dac(k),
                None => TurnKind::Other(k.to_owned()),
            },
            (_, None) => TurnKind::Other("?".into()),
        };
        TurnHead {
            interface,
            kind,
            turn_index: request
                .and_then(|r| r.turn_index)
                .as_ref()
                .and_then(as_index),
            outcome,
        }
    }

    /// The Request's TurnIndex, if it has one.
    pub fn turn_index(&self) -> Option<u64> {
        self.head().turn_index
    }

    /// Kind for BKN-DAC, "feedback" for BKN-USR.
    pub fn kind(&self) -> String {
        self.head().kind.as_str().to_owned()
    }

    /// The Response's Outcome, if a Response came, as it was written.
    pub fn outcome(&self) -> Option<String> {
        self.head().outcome
    }

    pub fn conforms(&self) -> bool {
        self.findings.is_empty()
    }
}
