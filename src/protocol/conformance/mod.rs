//! The conformance engine, at three levels: a message on its own, a Response against its
//! Request, and each message against the dialogue so far. Every finding carries a JSON
//! pointer, the requirement and rule it breaks, and a sentence a person understands.
//! Nothing here panics on any input (see the property tests).

mod dialogue;
mod exchange;
mod finding;
mod message;

pub use dialogue::DialogueChecker;
pub use exchange::check_exchange;
pub use finding::{Check, Finding, Level};
pub use message::{MessageCheck, check_message, check_message_as, interface_of};

use serde_json::Value;
use std::collections::HashMap;

/// The findings of one message of a sequence, at all three levels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SequenceReport {
    /// One entry per message, in order.
    pub messages: Vec<Vec<Finding>>,
}

impl SequenceReport {
    pub fn finding_count(&self) -> usize {
        self.messages.iter().map(Vec::len).sum()
    }
}

/// Checks messages read in order as one dialogue: each message on its own, each Response
/// against the Request it names, and each message against the dialogue before it.
pub fn check_sequence(messages: &[Value]) -> SequenceReport {
    let mut dialogue = DialogueChecker::new();
    let mut requests: HashMap<&str, &Value> = HashMap::new();
    let mut report = SequenceReport::default();
    for message in messages {
        let mut findings = check_message(message, None).findings;
        findings.extend(dialogue.observe(message));
        let is_response = message.get("Mode").and_then(Value::as_str) == Some("RS")
            || (message.get("Mode").is_none() && message.get("RequestID").is_some());
        if is_response {
            if let Some(request) = message
                .get("RequestID")
                .and_then(Value::as_str)
                .and_then(|id| requests.get(id))
            {
                findings.extend(check_exchange(request, message));
            }
        } else if let Some(query_id) = message.get("QueryID").and_then(Value::as_str) {
            requests.entry(query_id).or_insert(message);
        }
        report.messages.push(findings);
    }
    report
}
