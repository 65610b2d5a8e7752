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

#[derive(Clone, Debug, Default)]
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

    /// `check` then `accept`: for a dialogue read from a file, where every message counts.
    pub fn observe(&mut self, message: &Value) -> Vec<Finding> {
        let findings = self.check(message);
        self.accept(message);
        findings
    }
}
