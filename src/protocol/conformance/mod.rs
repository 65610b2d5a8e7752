//! The conformance engine, at three levels: a message on its own, a Response against its
//! Request, and each message against the dialogue so far. Every finding carries a JSON
//! pointer, the requirement and rule it breaks, and a sentence a person understands.
//! Nothing here panics on any input (see the property tests).

mod dialogue;
mod exchange;
mod finding;
mod message;

pub use dialogue::{Accepted, DialogueChecker};
pub use exchange::check_exchange;
pub use finding::{Check, Finding, Level};
pub use message::{MessageCheck, check_message, check_message_as, ijson_findings, interface_of};

use crate::protocol::{Interface, Mode};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};

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
    let mut checker = SequenceChecker::new(None);
    SequenceReport {
        messages: messages.iter().map(|m| checker.message(m)).collect(),
    }
}

/// What came back for a Request, as a session file records a turn.
#[derive(Clone, Copy, Debug)]
pub enum TurnReply<'a> {
    Response(&'a Value),
    /// The server rejected the Request with a tool error.
    Rejected,
    /// Nothing came back (a timeout, a lost connection): the server may have taken it.
    Nothing,
}

/// The findings of one recorded turn: on its Request, and on its Response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnFindings {
    pub request: Vec<Finding>,
    pub response: Vec<Finding>,
}

/// The three levels of checks over a dialogue read in order, one message (or one recorded
/// turn) at a time, keeping only the dialogue state the rules need: what the dialogue checker
/// keeps, and a short summary of each Request not answered yet (for the exchange check),
/// of which the newest `PENDING` are kept.
pub struct SequenceChecker {
    expected: Option<Interface>,
    dialogue: DialogueChecker,
    /// Requests not answered yet, reduced to what the exchange check reads, by QueryID.
    pending: HashMap<String, Value>,
    order: VecDeque<String>,
}

impl SequenceChecker {
    /// The most Requests awaiting their Response kept for the exchange check. A Response to
    /// an older one still gets the message and dialogue checks.
    pub const PENDING: usize = 4096;

    /// `expected`: the interface the dialogue is known to be (a session says), else each
    /// message's Header decides.
    pub fn new(expected: Option<Interface>) -> SequenceChecker {
        SequenceChecker {
            expected,
            dialogue: DialogueChecker::new(),
            pending: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    /// A message of a sequence (a file of messages, where there is no tool error to tell a
    /// rejected Request): a Request that breaks a rule itself is not counted as accepted, so
    /// that a valid retry with its TurnIndex is not a finding.
    pub fn message(&mut self, message: &Value) -> Vec<Finding> {
        self.message_read(message, &[])
    }

    /// `message`, for a message read from text with what I-JSON forbids in it (see
    /// `protocol::ijson`): those are findings of the message too.
    pub fn message_read(
        &mut self,
        message: &Value,
        irregular: &[crate::protocol::ijson::Irregularity],
    ) -> Vec<Finding> {
        let mut findings = ijson_findings(message, irregular, self.expected);
        findings.extend(check_message(message, self.expected).findings);
        findings.extend(self.dialogue.check(message));
        if is_response(message) {
            if let Some(request) = message
                .get("RequestID")
                .and_then(Value::as_str)
                .and_then(|id| self.pending.remove(id))
            {
                findings.extend(check_exchange(&request, message));
            }
            self.dialogue.accept(message);
        } else {
            self.dialogue.accept_counting(message, findings.is_empty());
            self.remember(message);
        }
        findings
    }

    /// One recorded turn: its Request, and what came back.
    pub fn turn(&mut self, request: &Value, reply: TurnReply) -> TurnFindings {
        let interface = self.expected;
        let mut out = TurnFindings {
            request: check_message_as(request, interface, Some(Mode::Request)).findings,
            response: Vec::new(),
        };
        out.request.extend(self.dialogue.check(request));
        let counts = out.request.is_empty() && !matches!(reply, TurnReply::Rejected);
        self.dialogue.accept_counting(request, counts);
        if let TurnReply::Response(response) = reply {
            out.response = check_message_as(response, interface, Some(Mode::Response)).findings;
            out.response.extend(check_exchange(request, response));
            out.response.extend(self.dialogue.check(response));
            self.dialogue.accept(response);
        }
        out
    }

    /// Keeps what the exchange check needs of a Request until its Response comes.
    fn remember(&mut self, request: &Value) {
        let Some(query_id) = request.get("QueryID").and_then(Value::as_str) else {
            return;
        };
        if self.pending.contains_key(query_id) {
            return;
        }
        if self.order.len() >= Self::PENDING
            && let Some(oldest) = self.order.pop_front()
        {
            self.pending.remove(&oldest);
        }
        self.order.push_back(query_id.to_owned());
        self.pending
            .insert(query_id.to_owned(), exchange_part(request));
        // Answered ones leave `pending` but not `order`: drop their names now and then.
        if self.order.len() > 2 * self.pending.len() + 64 {
            let pending = &self.pending;
            self.order.retain(|id| pending.contains_key(id));
        }
    }
}

fn is_response(message: &Value) -> bool {
    message.get("Mode").and_then(Value::as_str) == Some("RS")
        || (message.get("Mode").is_none() && message.get("RequestID").is_some())
}

/// The part of a Request the exchange check reads (its Statements and texts left out).
fn exchange_part(request: &Value) -> Value {
    let mut kept = Map::new();
    let Some(object) = request.as_object() else {
        return Value::Null;
    };
    for key in [
        "Header",
        "Mode",
        "QueryID",
        "DialogID",
        "TurnIndex",
        "MInstance",
        "UEnvironment",
        "SessionID",
        "Kind",
    ] {
        if let Some(v) = object.get(key) {
            kept.insert(key.to_owned(), v.clone());
        }
    }
    if let Some(Value::Array(steps)) = object.get("ProcessActions") {
        let steps = steps
            .iter()
            .map(|s| {
                let mut step = Map::new();
                if let Some(n) = s.get("Step") {
                    step.insert("Step".into(), n.clone());
                }
                Value::Object(step)
            })
            .collect();
        kept.insert("ProcessActions".into(), Value::Array(steps));
    }
    Value::Object(kept)
}
