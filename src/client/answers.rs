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

/// A question a server asked, put to the person at the explorer: `prefill` is where their
/// answer starts (an elicitation's defaults as JSON; nothing for a sampling), `reply` takes
/// what they typed, or None when they declined.
pub struct Ask {
    pub connection: crate::client::event::ConnectionId,
    pub method: &'static str,
    /// The input request's name (2026-07-28).
    pub name: Option<String>,
    /// What the server says it wants.
    pub message: String,
    pub prefill: String,
    pub reply: tokio::sync::oneshot::Sender<Option<String>>,
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
