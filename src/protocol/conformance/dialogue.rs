//! The dialogue check: each message against the dialogue so far (MCP-BINDING section 3).
//!
//! The checker is split into `check` (pure) and `accept` (record), because what counts as the
//! "last accepted" Request depends on who uses it: a file is accepted message by message, a
//! server accepts only Requests it did not reject, a client only Requests the server took.

use crate::protocol::conformance::finding::{Check, Finding};
use crate::protocol::interface::{Interface, Mode};
use crate::protocol::message::as_index;
use crate::protocol::requirement::Requirement;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DialogueChecker {
    /// Bound by the first message.
    dialog_id: Option<String>,
    /// The TurnIndex of the last accepted Request, per interface: BKN-DAC and BKN-USR number
    /// their turns independently when one MCP session carries both.
    last_turn: HashMap<Interface, u64>,
    query_ids: HashSet<String>,
    /// Requests seen, by QueryID, and whether a Response answered them yet.
    requests: HashMap<String, bool>,
}

/// What accepting one message changed (see `DialogueChecker::accept_undoably`).
#[derive(Debug)]
#[must_use = "a message accepted undoably is undone or kept on purpose"]
pub struct Accepted {
    bound_dialog: bool,
    /// The message's QueryID, when the dialogue had not seen it before.
    new_query_id: Option<String>,
    /// That QueryID was also recorded as a Request awaiting its Response.
    new_request: bool,
    /// The interface whose last TurnIndex the message set, and the one before.
    last_turn: Option<(Interface, Option<u64>)>,
}

/// The parts of a message the dialogue rules look at.
struct Seen<'a> {
    interface: Option<Interface>,
    mode: Mode,
    dialog_id: Option<&'a str>,
    query_id: Option<&'a str>,
    turn_index: Option<u64>,
    request_id: Option<&'a str>,
}

fn seen(message: &Value) -> Seen<'_> {
    let text = |name: &str| message.get(name).and_then(Value::as_str);
    let mode = match text("Mode") {
        Some("RS") => Mode::Response,
        Some("RQ") => Mode::Request,
        // No usable Mode: the message check reports it; judge by what the message carries.
        _ if message.get("RequestID").is_some() => Mode::Response,
        _ => Mode::Request,
    };
    Seen {
        interface: text("Header").and_then(Interface::from_header),
        mode,
        dialog_id: text("DialogID"),
        query_id: text("QueryID"),
        turn_index: message.get("TurnIndex").and_then(as_index),
        request_id: text("RequestID"),
    }
}

impl DialogueChecker {
    pub fn new() -> DialogueChecker {
        DialogueChecker::default()
    }

    /// The DialogID the dialogue is bound to, once a message has been accepted.
    pub fn dialog_id(&self) -> Option<&str> {
        self.dialog_id.as_deref()
    }

    /// The TurnIndex of the last accepted Request of an interface.
    pub fn last_turn(&self, interface: Interface) -> Option<u64> {
        self.last_turn.get(&interface).copied()
    }

    /// What breaks the dialogue rules if `message` came next. Changes nothing.
    pub fn check(&self, message: &Value) -> Vec<Finding> {
        let mut findings = Vec::new();
        let m = seen(message);
        if let (Some(bound), Some(dialog_id)) = (&self.dialog_id, m.dialog_id)
            && bound != dialog_id
        {
            findings.push(Finding::new(
                "/DialogID",
                Requirement::Dialogue,
                Check::DialogId,
                format!("DialogID is \"{dialog_id}\" but this dialogue is \"{bound}\""),
            ));
        }
        if let Some(query_id) = m.query_id
            && self.query_ids.contains(query_id)
        {
            findings.push(Finding::new(
                "/QueryID",
                Requirement::Identification,
                Check::QueryIdUnique,
                format!("QueryID \"{query_id}\" was already used in this dialogue"),
            ));
        }
        match m.mode {
            Mode::Request => {
                if let (Some(turn), Some(interface)) = (m.turn_index, m.interface)
                    && let Some(&last) = self.last_turn.get(&interface)
                    && turn <= last
                {
                    findings.push(Finding::new(
                        "/TurnIndex",
                        Requirement::Dialogue,
                        Check::TurnOrder,
                        format!(
                            "TurnIndex {turn} is not after the last accepted Request's {last}; \
                             it must increase (gaps are allowed)"
                        ),
                    ));
                }
            }
            Mode::Response => {
                if let Some(request_id) = m.request_id {
                    match self.requests.get(request_id) {
                        None => findings.push(Finding::new(
                            "/RequestID",
                            Requirement::Correlation,
                            Check::UnmatchedResponse,
                            format!(
                                "RequestID \"{request_id}\" answers no Request seen before in this dialogue"
                            ),
                        )),
                        Some(true) => findings.push(Finding::new(
                            "/RequestID",
                            Requirement::Correlation,
                            Check::DuplicateResponse,
                            format!("the Request \"{request_id}\" was already answered"),
                        )),
                        Some(false) => {}
                    }
                }
            }
        }
        findings
    }

    /// Records `message` as part of the dialogue.
    pub fn accept(&mut self, message: &Value) {
        let m = seen(message);
        if self.dialog_id.is_none() {
            self.dialog_id = m.dialog_id.map(str::to_owned);
        }
        if let Some(query_id) = m.query_id {
            self.query_ids.insert(query_id.to_owned());
        }
        match m.mode {
            Mode::Request => {
                if let (Some(turn), Some(interface)) = (m.turn_index, m.interface) {
                    let last = self.last_turn.entry(interface).or_insert(turn);
                    *last = (*last).max(turn);
                }
                if let Some(query_id) = m.query_id {
                    self.requests.entry(query_id.to_owned()).or_insert(false);
                }
            }
            Mode::Response => {
                if let Some(answered) = m.request_id.and_then(|id| self.requests.get_mut(id)) {
                    *answered = true;
                }
            }
        }
    }

    /// `accept`, keeping what it takes to take the message back with `undo`: a client records
    /// its Request while the server works on it, before it knows whether the server takes it,
    /// so that the bookkeeping is not added to the time the turn takes.
    pub fn accept_undoably(&mut self, message: &Value) -> Accepted {
        let m = seen(message);
        let accepted = Accepted {
            bound_dialog: self.dialog_id.is_none() && m.dialog_id.is_some(),
            new_query_id: m
                .query_id
                .filter(|id| !self.query_ids.contains(*id))
                .map(str::to_owned),
            new_request: m.mode == Mode::Request
                && m.query_id.is_some_and(|id| !self.requests.contains_key(id)),
            last_turn: m
                .interface
                .filter(|_| m.mode == Mode::Request && m.turn_index.is_some())
                .map(|interface| (interface, self.last_turn.get(&interface).copied())),
        };
        self.accept(message);
        accepted
    }

    /// Takes back a message accepted with `accept_undoably` (and nothing accepted since).
    pub fn undo(&mut self, accepted: Accepted) {
        if accepted.bound_dialog {
            self.dialog_id = None;
        }
        if let Some(query_id) = &accepted.new_query_id {
            self.query_ids.remove(query_id);
            if accepted.new_request {
                self.requests.remove(query_id);
            }
        }
        match accepted.last_turn {
            Some((interface, Some(last))) => {
                self.last_turn.insert(interface, last);
            }
            Some((interface, None)) => {
                self.last_turn.remove(&interface);
            }
            None => {}
        }
    }

    /// `check` then `accept`: for a dialogue read from a file, where every message counts.
    pub fn observe(&mut self, message: &Value) -> Vec<Finding> {
        let findings = self.check(message);
        self.accept(message);
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(query_id: &str, turn: u64) -> Value {
        json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ", "DialogID": "d-1",
               "QueryID": query_id, "TurnIndex": turn})
    }

    #[test]
    fn undo_takes_a_request_back_exactly() {
        let mut checker = DialogueChecker::new();
        // On an empty dialogue: undoing unbinds the DialogID and forgets the turn.
        let first = checker.accept_undoably(&request("q-1", 3));
        assert_eq!(checker.dialog_id(), Some("d-1"));
        checker.undo(first);
        assert_eq!(checker, DialogueChecker::new());

        // On a dialogue under way: the state before comes back, and the TurnIndex and
        // QueryID of the Request taken back are free again.
        checker.accept(&request("q-1", 3));
        checker.accept(
            &json!({"Header": "PGM-KDA-V1.0", "Mode": "RS", "DialogID": "d-1",
                               "QueryID": "r-1", "RequestID": "q-1", "TurnIndex": 3}),
        );
        let before = checker.clone();
        let second = checker.accept_undoably(&request("q-2", 7));
        assert_eq!(checker.last_turn(Interface::Dac), Some(7));
        checker.undo(second);
        assert_eq!(checker, before);
        assert!(checker.check(&request("q-2", 4)).is_empty());

        // A repeated QueryID stays known after the repeat is taken back.
        let repeat = checker.accept_undoably(&request("q-1", 8));
        checker.undo(repeat);
        assert_eq!(checker, before);
    }
}
