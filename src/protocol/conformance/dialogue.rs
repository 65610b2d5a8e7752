//! The dialogue check: each message against the dialogue so far (MCP-BINDING sections 3 and 4).
//!
//! The checker is split into `check` (pure) and `accept` (record), because what counts as the
//! "last accepted" Request depends on who uses it: a file is accepted message by message (a
//! Request that is itself non-conformant, or that a tool error answered, is not), a server
//! accepts only Requests it did not reject, a client only Requests the server took.
//!
//! What it remembers grows with the dialogue only by what the rules need: a 64-bit hash of
//! every QueryID (uniqueness, and whether a Request was answered), the last accepted TurnIndex
//! per interface, and the commitments the dialogue has seen with their last status.

use crate::protocol::conformance::finding::{Check, Finding};
use crate::protocol::dac::CommitmentState;
use crate::protocol::interface::{Interface, Mode};
use crate::protocol::message::as_index;
use crate::protocol::requirement::Requirement;
use crate::protocol::triple::Triple;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// A QueryID as the checker keeps it: a hash, so that a dialogue of a million messages holds
/// eight bytes per identifier rather than the identifier. (Two identifiers that share a
/// 64-bit SipHash are vanishingly unlikely: about one in 10^7 for a million of them.)
type IdHash = u64;

fn id_hash(id: &str) -> IdHash {
    // DefaultHasher::new() has fixed keys: the same identifier always hashes the same.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DialogueChecker {
    /// Bound by the first message.
    dialog_id: Option<String>,
    /// The TurnIndex of the last accepted Request, per interface: BKN-DAC and BKN-USR number
    /// their turns independently when one MCP session carries both.
    last_turn: HashMap<Interface, u64>,
    query_ids: HashSet<IdHash>,
    /// Requests seen, by QueryID: whether a Response answered them yet, and the commitments
    /// they asked to retain or release (BKN-DAC).
    requests: HashMap<IdHash, RequestEntry>,
    /// Every commitment the dialogue has seen, with the status its last Response gave it
    /// and what its statement says.
    commitments: HashMap<String, Known>,
}

/// What a triple states, whatever its polarity: subject, predicate, object.
type Fact<'a> = (&'a str, &'a str, &'a str);

/// A commitment the dialogue has seen.
#[derive(Clone, Debug, PartialEq)]
struct Known {
    /// The status the last Response gave it (`None`: asked for, but no Response listed it).
    status: Option<CommitmentState>,
    /// Its statement as last stated.
    claim: Claim,
}

/// What a commitment's statement says, as the binding's triple grammar reads it (section 4).
#[derive(Clone, Debug, PartialEq)]
enum Claim {
    Triple(Triple),
    /// Not a triple: retained as text, never conflicting.
    Opaque,
    /// No Statement string to read (the message check reports the shape).
    Unread,
}

impl Claim {
    fn of(statement: Option<&Value>) -> Claim {
        match statement.and_then(Value::as_str) {
            Some(text) => Triple::parse(text).map_or(Claim::Opaque, Claim::Triple),
            None => Claim::Unread,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
struct RequestEntry {
    answered: bool,
    /// Boxed: most Requests carry no commitment.
    commitments: Option<Box<Asked>>,
}

/// The commitments a Request asked to retain (with what each states), and those it
/// released.
#[derive(Clone, Debug, Default, PartialEq)]
struct Asked {
    retain: Vec<(String, Claim)>,
    release: Vec<String>,
}

impl Asked {
    fn of(request: &Value) -> Option<Box<Asked>> {
        let items = |name: &str| {
            request
                .get(name)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        };
        let asked = Asked {
            retain: items("Commitments")
                .filter_map(|c| {
                    let id = c.get("CommitmentID")?.as_str()?;
                    Some((id.to_owned(), Claim::of(c.get("Statement"))))
                })
                .collect(),
            release: items("ReleasedCommitmentIDs")
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        };
        (!asked.retain.is_empty() || !asked.release.is_empty()).then(|| Box::new(asked))
    }
}

/// What accepting one message changed (see `DialogueChecker::accept_undoably`).
#[derive(Debug)]
#[must_use = "a message accepted undoably is undone or kept on purpose"]
pub struct Accepted {
    bound_dialog: bool,
    /// The message's QueryID, when the dialogue had not seen it before.
    new_query_id: Option<IdHash>,
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

/// Every commitment the dialogue has (`expected`) is listed among the Response's `entries`.
fn check_all_listed(
    expected: &[&str],
    entries: &[(usize, &str, Option<&str>)],
    out: &mut Vec<Finding>,
) {
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|id| !entries.iter().any(|(_, e, _)| e == id))
        .collect();
    if !missing.is_empty() {
        out.push(Finding::new(
            "/CommitmentStatus",
            Requirement::Response,
            Check::CommitmentMissing,
            format!(
                "{} {} not listed, though the dialogue has seen {}; every Response lists \
                 each commitment of the dialogue",
                names(&missing),
                if missing.len() == 1 { "is" } else { "are" },
                if missing.len() == 1 { "it" } else { "them" },
            ),
        ));
    }
}

/// How a Response's Outcome bears on the commitments: a Request answered `not_answered`
/// changed nothing (binding section 2.2: a Request for another M-Instance, say), so its own
/// commitments and releases were not taken up.
fn took_up(response: &Value) -> bool {
    response.get("Outcome").and_then(Value::as_str) != Some("not_answered")
}

/// `c1, c2 and c3`.
fn names(ids: &[&str]) -> String {
    match ids {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
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

    /// The commitments the dialogue has seen, with the status the last Response gave each.
    pub fn commitments(&self) -> impl Iterator<Item = (&str, Option<CommitmentState>)> {
        self.commitments
            .iter()
            .map(|(id, k)| (id.as_str(), k.status))
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
            && self.query_ids.contains(&id_hash(query_id))
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
                    match self.requests.get(&id_hash(request_id)) {
                        None => findings.push(Finding::new(
                            "/RequestID",
                            Requirement::Correlation,
                            Check::UnmatchedResponse,
                            format!(
                                "RequestID \"{request_id}\" answers no Request seen before in this dialogue"
                            ),
                        )),
                        Some(entry) if entry.answered => findings.push(Finding::new(
                            "/RequestID",
                            Requirement::Correlation,
                            Check::DuplicateResponse,
                            format!("the Request \"{request_id}\" was already answered"),
                        )),
                        Some(entry) => {
                            if m.interface == Some(Interface::Dac) {
                                self.check_commitments(message, entry, &mut findings);
                            }
                        }
                    }
                }
            }
        }
        findings
    }

    /// MCP-BINDING section 4, on a BKN-DAC Response to a Request the dialogue knows.
    fn check_commitments(&self, response: &Value, request: &RequestEntry, out: &mut Vec<Finding>) {
        let none = Asked::default();
        let asked = match &request.commitments {
            Some(a) if took_up(response) => a.as_ref(),
            _ => &none,
        };
        let expected = self.expected_commitments(asked);
        let Some(listed) = response.get("CommitmentStatus") else {
            if !expected.is_empty() {
                out.push(Finding::new(
                    "/CommitmentStatus",
                    Requirement::Response,
                    Check::CommitmentMissing,
                    format!(
                        "CommitmentStatus is missing, but the dialogue has {} commitment{} ({}); \
                         every Response lists each one it has seen",
                        expected.len(),
                        if expected.len() == 1 { "" } else { "s" },
                        names(&expected)
                    ),
                ));
            }
            return;
        };
        let Some(listed) = listed.as_array() else {
            return; // not an array: the message check says so
        };
        let entries: Vec<(usize, &str, Option<&str>)> = listed
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                Some((
                    i,
                    e.get("CommitmentID")?.as_str()?,
                    e.get("Status").and_then(Value::as_str),
                ))
            })
            .collect();
        check_all_listed(&expected, &entries, out);
        self.check_listed_statuses(asked, &expected, &entries, out);
        self.check_statements(asked, &entries, out);
    }

    /// What a Response must list, sorted: every commitment seen before, and those this
    /// Request asked to retain.
    fn expected_commitments<'a>(&'a self, asked: &'a Asked) -> Vec<&'a str> {
        let mut expected: Vec<&str> = self.commitments.keys().map(String::as_str).collect();
        for (id, _) in &asked.retain {
            if !expected.contains(&id.as_str()) {
                expected.push(id);
            }
        }
        expected.sort_unstable();
        expected
    }

    /// Each listed commitment is one of the dialogue's, released where this Request released
    /// it, and still retained where it was and this Request neither released nor restated it.
    fn check_listed_statuses(
        &self,
        asked: &Asked,
        expected: &[&str],
        entries: &[(usize, &str, Option<&str>)],
        out: &mut Vec<Finding>,
    ) {
        for &(i, id, status) in entries {
            if !expected.contains(&id) {
                out.push(Finding::new(
                    format!("/CommitmentStatus/{i}/CommitmentID"),
                    Requirement::Response,
                    Check::CommitmentUnknown,
                    format!(
                        "{id} is not a commitment of this dialogue: no Request asked to retain it"
                    ),
                ));
                continue;
            }
            let Some(status) = status.and_then(CommitmentState::parse) else {
                continue; // an unknown status is the message check's to report
            };
            let restated = asked.retain.iter().any(|(r, _)| r == id);
            let released = asked.release.iter().any(|r| r == id);
            if released && !restated {
                if status != CommitmentState::Released {
                    out.push(Finding::new(
                        format!("/CommitmentStatus/{i}/Status"),
                        Requirement::Response,
                        Check::CommitmentReleased,
                        format!(
                            "{id} is {} but this Request released it; it is released in the \
                             Response to the Request that releases it",
                            status.as_str()
                        ),
                    ));
                }
            } else if !restated
                && self.commitments.get(id).and_then(|k| k.status)
                    == Some(CommitmentState::Retained)
                && status != CommitmentState::Retained
            {
                out.push(Finding::new(
                    format!("/CommitmentStatus/{i}/Status"),
                    Requirement::Response,
                    Check::CommitmentRetained,
                    format!(
                        "{id} was retained and this Request neither released nor restated it, \
                         yet it is now {}; a retained commitment stays retained until released \
                         or restated",
                        status.as_str()
                    ),
                ));
            }
        }
    }

    /// MCP-BINDING section 4, on what the statements say: two contradictory statements are
    /// never both `retained` in one Response, and an opaque statement is never `conflicting`.
    /// A statement is the one the Request restated, else the one the dialogue knows.
    fn check_statements(
        &self,
        asked: &Asked,
        entries: &[(usize, &str, Option<&str>)],
        out: &mut Vec<Finding>,
    ) {
        let claim_of = |id: &str| -> Option<&Claim> {
            match asked.retain.iter().rev().find(|(r, _)| r == id) {
                Some((_, claim)) => Some(claim),
                None => self.commitments.get(id).map(|k| &k.claim),
            }
        };
        // The retained triples so far, by fact (subject, predicate, object): the first
        // commitment of each polarity, `[affirmed, negated]`.
        let mut retained: HashMap<Fact, [Option<&str>; 2]> = HashMap::new();
        for &(i, id, status) in entries {
            let status = status.and_then(CommitmentState::parse);
            match (claim_of(id), status) {
                (Some(Claim::Opaque), Some(CommitmentState::Conflicting)) => {
                    out.push(Finding::new(
                        format!("/CommitmentStatus/{i}/Status"),
                        Requirement::Response,
                        Check::CommitmentOpaqueConflicting,
                        format!(
                            "{id} is conflicting, but its statement is not a triple (Subject \
                             Predicate Object): opaque text is retained and never conflicts"
                        ),
                    ));
                }
                (Some(Claim::Triple(t)), Some(CommitmentState::Retained)) => {
                    let fact = (t.subject.as_str(), t.predicate.as_str(), t.object.as_str());
                    let sides = retained.entry(fact).or_default();
                    let (own, other) = (usize::from(t.negated), usize::from(!t.negated));
                    if let Some(other_id) = sides[other] {
                        out.push(Finding::new(
                            format!("/CommitmentStatus/{i}/Status"),
                            Requirement::Response,
                            Check::CommitmentContradiction,
                            format!(
                                "{id} ({t}) and {other_id} contradict each other, yet both are \
                                 retained; of two contradictory statements at most one is"
                            ),
                        ));
                    }
                    sides[own].get_or_insert(id);
                }
                _ => {}
            }
        }
    }

    /// Records `message` as part of the dialogue, a Request's TurnIndex included.
    pub fn accept(&mut self, message: &Value) {
        self.accept_counting(message, true);
    }

    /// Records `message`; a Request's TurnIndex counts as the last accepted one only when
    /// `counts` (a Request that is itself non-conformant or that was rejected does not: a
    /// valid retry may use its TurnIndex again).
    pub fn accept_counting(&mut self, message: &Value, counts: bool) {
        let m = seen(message);
        if self.dialog_id.is_none() {
            self.dialog_id = m.dialog_id.map(str::to_owned);
        }
        if let Some(query_id) = m.query_id {
            self.query_ids.insert(id_hash(query_id));
        }
        match m.mode {
            Mode::Request => {
                if counts && let (Some(turn), Some(interface)) = (m.turn_index, m.interface) {
                    let last = self.last_turn.entry(interface).or_insert(turn);
                    *last = (*last).max(turn);
                }
                if let Some(query_id) = m.query_id {
                    self.requests
                        .entry(id_hash(query_id))
                        .or_insert_with(|| RequestEntry {
                            answered: false,
                            commitments: if m.interface == Some(Interface::Dac) {
                                Asked::of(message)
                            } else {
                                None
                            },
                        });
                }
            }
            Mode::Response => {
                let Some(entry) = m
                    .request_id
                    .and_then(|id| self.requests.get_mut(&id_hash(id)))
                else {
                    return;
                };
                if entry.answered {
                    return;
                }
                entry.answered = true;
                let asked = entry.commitments.take();
                if m.interface != Some(Interface::Dac) {
                    return;
                }
                if let Some(asked) = asked.filter(|_| took_up(message)) {
                    for (id, claim) in asked.retain {
                        // Restating replaces the statement; the status comes from the listing.
                        self.commitments
                            .entry(id)
                            .and_modify(|k| k.claim = claim.clone())
                            .or_insert(Known {
                                status: None,
                                claim,
                            });
                    }
                }
                let listed = message
                    .get("CommitmentStatus")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten();
                for e in listed {
                    let (Some(id), Some(status)) = (
                        e.get("CommitmentID").and_then(Value::as_str),
                        e.get("Status")
                            .and_then(Value::as_str)
                            .and_then(CommitmentState::parse),
                    ) else {
                        continue;
                    };
                    // Only commitments the dialogue knows: an unknown one was reported.
                    if let Some(known) = self.commitments.get_mut(id) {
                        known.status = Some(status);
                    }
                }
            }
        }
    }

    /// `accept`, keeping what it takes to take the message back with `undo`: a client records
    /// its Request while the server works on it, before it knows whether the server takes it,
    /// so that the bookkeeping is not added to the time the turn takes.
    pub fn accept_undoably(&mut self, message: &Value) -> Accepted {
        let m = seen(message);
        let query_id = m.query_id.map(id_hash);
        let accepted = Accepted {
            bound_dialog: self.dialog_id.is_none() && m.dialog_id.is_some(),
            new_query_id: query_id.filter(|id| !self.query_ids.contains(id)),
            new_request: m.mode == Mode::Request
                && query_id.is_some_and(|id| !self.requests.contains_key(&id)),
            last_turn: m
                .interface
                .filter(|_| m.mode == Mode::Request && m.turn_index.is_some())
                .map(|interface| (interface, self.last_turn.get(&interface).copied())),
        };
        self.accept(message);
        accepted
    }

    /// Takes back a Request accepted with `accept_undoably` (and nothing accepted since).
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

    /// Keeps a Request on the record (its QueryID, its place awaiting a Response) but takes
    /// back its TurnIndex: what a tool error that answered it means.
    pub fn reject(&mut self, accepted: Accepted) {
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

    /// A BKN-DAC Request asking to retain `(id, statement)`s, and a Response to it listing
    /// `(id, status)`s.
    fn committing(query_id: &str, turn: u64, commitments: &[(&str, &str)]) -> Value {
        let mut r = request(query_id, turn);
        r["Kind"] = json!("commitment");
        r["Commitments"] = commitments
            .iter()
            .map(|(id, s)| json!({"CommitmentID": id, "Statement": s}))
            .collect();
        r
    }

    fn answer(request_id: &str, statuses: &[(&str, &str)]) -> Value {
        json!({"Header": "PGM-KDA-V1.0", "Mode": "RS", "DialogID": "d-1",
               "QueryID": format!("r-{request_id}"), "RequestID": request_id,
               "Outcome": "answered",
               "CommitmentStatus": statuses.iter()
                   .map(|(id, s)| json!({"CommitmentID": id, "Status": s}))
                   .collect::<Vec<_>>()})
    }

    fn checks(findings: &[Finding]) -> Vec<Check> {
        findings.iter().map(|f| f.check).collect()
    }

    #[test]
    fn contradictory_commitments_are_never_both_retained() {
        // In one Request.
        let mut checker = DialogueChecker::new();
        checker.accept(&committing(
            "q-1",
            0,
            &[
                ("c1", "Kiosk#3 locatedAt MLoc:Square.Stage"),
                ("c2", "Kiosk#3 not  locatedAt MLoc:Square.Stage"),
            ],
        ));
        let both = checker.check(&answer("q-1", &[("c1", "retained"), ("c2", "retained")]));
        assert_eq!(checks(&both), [Check::CommitmentContradiction]);
        assert_eq!(both[0].pointer, "/CommitmentStatus/1/Status");
        assert!(both[0].message.contains("c2") && both[0].message.contains("c1"));
        let fine = answer("q-1", &[("c1", "retained"), ("c2", "conflicting")]);
        assert!(checker.check(&fine).is_empty());
        checker.accept(&fine);

        // Across two Requests: c1 retained earlier, c3 says the opposite later.
        checker.accept(&committing(
            "q-2",
            1,
            &[("c3", "Kiosk#3 not locatedAt MLoc:Square.Stage")],
        ));
        let later = checker.check(&answer(
            "q-2",
            &[
                ("c1", "retained"),
                ("c2", "conflicting"),
                ("c3", "retained"),
            ],
        ));
        assert_eq!(checks(&later), [Check::CommitmentContradiction]);
        // Another object, or another case of `not` (opaque text), contradicts nothing.
        let mut checker = DialogueChecker::new();
        checker.accept(&committing(
            "q-1",
            0,
            &[
                ("c1", "Kiosk#3 locatedAt MLoc:Square.Stage"),
                ("c2", "Kiosk#3 not locatedAt MLoc:Square.Gate"),
                ("c3", "Kiosk#3 NOT locatedAt MLoc:Square.Stage"),
            ],
        ));
        let r = answer(
            "q-1",
            &[("c1", "retained"), ("c2", "retained"), ("c3", "retained")],
        );
        assert!(checker.check(&r).is_empty());
    }

    #[test]
    fn an_opaque_statement_is_never_conflicting() {
        let mut checker = DialogueChecker::new();
        checker.accept(&committing(
            "q-1",
            0,
            &[
                ("c1", "be nice"),
                ("c2", "Fountain#1 NOT locatedAt MLoc:Square.Fountain"),
                ("c3", "Fountain#1 not locatedAt MLoc:Square.Fountain"),
            ],
        ));
        let r = answer(
            "q-1",
            &[
                ("c1", "conflicting"),
                ("c2", "conflicting"),
                ("c3", "conflicting"),
            ],
        );
        let found = checker.check(&r);
        assert_eq!(
            checks(&found),
            [
                Check::CommitmentOpaqueConflicting,
                Check::CommitmentOpaqueConflicting
            ]
        );
        let pointers: Vec<&str> = found.iter().map(|f| f.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/CommitmentStatus/0/Status", "/CommitmentStatus/1/Status"]
        );
        // The statement judged is the latest: c1 restated as a triple may conflict.
        checker.accept(&answer(
            "q-1",
            &[
                ("c1", "retained"),
                ("c2", "retained"),
                ("c3", "conflicting"),
            ],
        ));
        checker.accept(&committing("q-2", 1, &[("c1", "Fountain#1 isA Kiosk")]));
        let r = answer(
            "q-2",
            &[
                ("c1", "conflicting"),
                ("c2", "conflicting"),
                ("c3", "conflicting"),
            ],
        );
        let found = checker.check(&r);
        // c2 stays opaque (and was retained: the retained rule says so too).
        assert!(
            found
                .iter()
                .any(|f| f.check == Check::CommitmentOpaqueConflicting
                    && f.pointer == "/CommitmentStatus/1/Status"),
            "{found:?}"
        );
        assert!(
            !found
                .iter()
                .any(|f| f.pointer == "/CommitmentStatus/0/Status"),
            "{found:?}"
        );
    }

    #[test]
    fn a_rejected_request_frees_its_turn_but_keeps_its_query_id() {
        let mut checker = DialogueChecker::new();
        let rejected = checker.accept_undoably(&request("q-1", 0));
        checker.reject(rejected);
        assert!(checker.check(&request("q-2", 0)).is_empty(), "a retry");
        assert_eq!(
            checker.check(&request("q-1", 0))[0].check,
            Check::QueryIdUnique
        );
    }
}
