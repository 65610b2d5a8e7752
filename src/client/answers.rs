//! What the client answers when a server asks it for something: an elicitation (a form for
//! the user) or a sampling request (a message from a model). Over 2025-11-25 a server sends
//! these as requests of its own (`elicitation/create`, `sampling/createMessage`); over
//! 2026-07-28 a tool's result asks for them (`input_required`, SEP-2322) and the client sends
//! the call again with the answers. rmcp drives both through the client handler, which asks
//! this.
//!
//! Headless commands take the answers from a file (`--answers FILE`): a JSON object whose keys
//! are an input request's name (2026-07-28: the key in `inputRequests`) or a method
//! (`elicitation/create`, `sampling/createMessage`), looked up in that order, and whose values
//! are the result to give (`{"action": "accept", "content": {...}}` for an elicitation; `{"role":
//! "assistant", "content": {"type": "text", "text": "..."}, "model": "..."}` for sampling).
//! Without an answer, the request is refused with an error that names what the server asked.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

/// The JSON-RPC code of this client's refusal of a request it has no answer for (in the
/// implementation-defined range, so no server sends it by chance): a refusal of the client's
/// own, told apart from the server's errors.
pub const UNANSWERED_CODE: i32 = -32091;

pub const ELICITATION: &str = "elicitation/create";
pub const SAMPLING: &str = "sampling/createMessage";

/// The answers a command was given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers {
    by_key: Map<String, Value>,
}

impl Answers {
    /// Reads an answers file; the error names the file and what is wrong where.
    pub fn read(path: &Path) -> Result<Answers, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--answers {}: {e}", path.display()))?;
        Answers::parse(&text).map_err(|e| format!("--answers {}: {e}", path.display()))
    }

    /// `--answers FILE`, read when the command line is.
    pub fn from_arg(path: &str) -> Result<std::sync::Arc<Answers>, String> {
        Answers::read(Path::new(path)).map(std::sync::Arc::new)
    }

    pub fn parse(text: &str) -> Result<Answers, String> {
        let value: Value = crate::protocol::json::from_str(text).map_err(|e| e.to_string())?;
        let Value::Object(by_key) = value else {
            return Err(
                "the answers are a JSON object keyed by an input request's name or a \
                        method (elicitation/create, sampling/createMessage)"
                    .into(),
            );
        };
        for (key, answer) in &by_key {
            if !answer.is_object() {
                return Err(format!(
                    "/{key}: an answer is a JSON object (the result to give)"
                ));
            }
        }
        Ok(Answers { by_key })
    }

    /// The answer to the input request named `name` (if it has a name), else to `method`.
    pub fn for_request(&self, name: Option<&str>, method: &str) -> Option<&Value> {
        name.and_then(|n| self.by_key.get(n))
            .or_else(|| self.by_key.get(method))
    }
}

/// What a server asks a person for.
#[derive(Clone, Debug, PartialEq)]
pub enum Asking {
    /// A form (elicitation, form mode): its requested schema, an object of primitive fields.
    Form { schema: Value },
    /// A page to open (elicitation, URL mode); the person says when they are done.
    Url { url: String },
    /// The reply a model would give to these messages (sampling).
    Sampling {
        messages: Vec<SampledMessage>,
        system: Option<String>,
        max_tokens: u32,
    },
}

/// One message of a sampling request, as text to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampledMessage {
    pub role: String,
    pub text: String,
}

/// What the person answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The form's fields (an object), or the sampling reply's text (a string); a URL
    /// elicitation accepted takes `null`.
    Accept(Value),
    /// They said no.
    Decline,
    /// They dismissed the question without choosing (Esc).
    Cancel,
}

/// A question a server asked, put to the person at the explorer: `reply` takes what they
/// answered.
pub struct Ask {
    pub connection: crate::client::event::ConnectionId,
    pub method: &'static str,
    /// The input request's name (2026-07-28).
    pub name: Option<String>,
    /// What the server says it wants.
    pub message: String,
    pub asking: Asking,
    pub reply: tokio::sync::oneshot::Sender<Reply>,
}

/// Who answered what a server asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnsweredBy {
    /// The person at the explorer.
    Person,
    /// The `--answers` file.
    File,
    /// Nobody: the request was refused.
    Nobody,
}

/// What a server asked during a turn, and what it was given: saved with the turn, so a
/// session shows (and a replay can give again) what the dialogue needed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Asked {
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub message: String,
    pub by: AnsweredBy,
    /// The result given to the server (an `ElicitResult`, a `CreateMessageResult`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// Why nothing was given (a refusal, a person who declined a sampling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// At most this many questions are kept with one turn (a server that asks in a loop is
/// answered each time, but its questions do not grow the session without bound).
pub const MAX_ASKED_PER_TURN: usize = 32;

/// What a connection's server asked since the last turn took them.
#[derive(Clone, Debug, Default)]
pub struct AskedLog(std::sync::Arc<std::sync::Mutex<Vec<Asked>>>);

impl AskedLog {
    pub fn push(&self, asked: Asked) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if held.len() < MAX_ASKED_PER_TURN {
            held.push(asked);
        }
    }

    /// What was asked since the last take (the turn that just ended takes it).
    pub fn take(&self) -> Vec<Asked> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Where questions for a person go (the explorer's runner shows them).
#[derive(Clone)]
pub struct AskSink(pub tokio::sync::mpsc::UnboundedSender<Ask>);

impl std::fmt::Debug for AskSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskSink")
    }
}

/// The error a request without an answer gets: it names what the server asked, and how to
/// answer it.
pub fn unanswered(method: &str, name: Option<&str>, asked: &str) -> String {
    let named = name
        .map(|n| format!(" (input request \"{n}\")"))
        .unwrap_or_default();
    format!(
        "the server asked for {method}{named}: \"{asked}\"; bkn-explorer has no answer for it: \
         give --answers FILE with an entry \"{}\" (or \"{method}\")",
        name.unwrap_or(method)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_found_by_name_then_by_method() {
        let a = Answers::parse(
            r#"{"confirm": {"action": "accept", "content": {"ok": true}},
                "elicitation/create": {"action": "decline"}}"#,
        )
        .unwrap();
        assert_eq!(
            a.for_request(Some("confirm"), ELICITATION).unwrap()["action"],
            "accept"
        );
        assert_eq!(
            a.for_request(Some("other"), ELICITATION).unwrap()["action"],
            "decline"
        );
        assert!(a.for_request(None, SAMPLING).is_none());
    }

    #[test]
    fn a_file_that_is_not_answers_says_why() {
        assert!(Answers::parse("[1]").unwrap_err().contains("JSON object"));
        assert!(Answers::parse(r#"{"x": 1}"#).unwrap_err().contains("/x"));
        let e = unanswered(ELICITATION, Some("confirm"), "Please confirm");
        assert!(e.contains("\"confirm\"") && e.contains("--answers"), "{e}");
    }
}
