//! Verdicts on recorded dialogues: each turn checked in order against its dialogue's rules, as
//! the explorer checks them live, a new MCP session of a dialogue (a reconnect) starting them
//! afresh. `validate` reads session files through it, and the explorer re-checks every
//! session it opens, so that a file written by an older version, by hand or by another tool
//! is judged by today's rules, the same way everywhere.

use crate::client::generation::StateHome;
use crate::client::turn::{Reply, Subject, TurnFinding};
use crate::protocol::Interface;
use crate::protocol::conformance::{SequenceChecker, TurnFindings, TurnReply};
use crate::session::Session;
use crate::session::stream::StreamedReply;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// A dialogue whose state its server keeps by DialogID (MCP 2026-07-28 or later): its server
/// (the session's key) and its DialogID. Two dialogues of a file with the same one are one
/// dialogue on the server (a new connection that went on under the DialogID, as `certify
/// --save` wrote `dialogues.lifetime` before it recorded them as one), and are judged as one.
pub type ServerDialogue = (String, String);

/// The `ServerDialogue` of a recorded dialogue, when its version says its server kept it by
/// DialogID (none when the version is not recorded: nothing is assumed).
pub fn server_dialogue(
    server: &str,
    dialog_id: &str,
    protocol_version: Option<&str>,
) -> Option<ServerDialogue> {
    protocol_version
        .filter(|v| StateHome::of(v) == StateHome::DialogId)
        .map(|_| (server.to_owned(), dialog_id.to_owned()))
}

/// How many dialogues kept by DialogID a session file's reading remembers once they are over,
/// for a later dialogue of the file that goes on with one: a file of many thousand dialogues
/// is still read in bounded memory (the oldest is forgotten first).
const KEPT_AT_MOST: usize = 256;

/// The checkers of the dialogues being read, each started afresh at its dialogue's first turn
/// and at each new MCP session. A session file holds its dialogues one after another: one
/// checker is kept (and those of the last dialogues kept by DialogID, for a later dialogue
/// that goes on with one). A journal's dialogues interleave (a proxy's concurrent sessions, a
/// Locust worker's users): each keeps its own until its `closed` line.
pub struct Verdicts {
    /// The interface to check as, when the caller knows it better than the file.
    interface: Option<Interface>,
    checkers: HashMap<usize, SequenceChecker>,
    interleaved: bool,
    /// The dialogue being read (a session file) and its `ServerDialogue`, if it has one.
    current: Option<(usize, Option<ServerDialogue>)>,
    /// Dialogues kept by DialogID that are over, oldest first.
    kept: VecDeque<(ServerDialogue, SequenceChecker)>,
}

impl Verdicts {
    /// For a session file: its dialogues one after another.
    pub fn new(interface: Option<Interface>) -> Verdicts {
        Verdicts {
            interface,
            checkers: HashMap::new(),
            interleaved: false,
            current: None,
            kept: VecDeque::new(),
        }
    }

    /// For a journal: dialogues whose turns interleave, each until `close`.
    pub fn interleaved(interface: Option<Interface>) -> Verdicts {
        Verdicts {
            interleaved: true,
            ..Verdicts::new(interface)
        }
    }

    /// Dialogue `dialogue` is over: its state is dropped.
    pub fn close(&mut self, dialogue: usize) {
        self.checkers.remove(&dialogue);
    }

    /// The findings on one turn of dialogue `dialogue` (whose interface the file gives, if
    /// it does; `kept_as`: its server and DialogID when the server kept it by DialogID).
    pub fn turn(
        &mut self,
        dialogue: usize,
        kept_as: Option<&ServerDialogue>,
        interface: Option<Interface>,
        new_session: bool,
        request: &Value,
        reply: TurnReply,
    ) -> TurnFindings {
        if !self.interleaved && self.current.as_ref().map(|c| c.0) != Some(dialogue) {
            self.next_dialogue(dialogue, kept_as);
        }
        if new_session {
            self.checkers.remove(&dialogue);
        }
        let checker = self
            .checkers
            .entry(dialogue)
            .or_insert_with(|| SequenceChecker::new(self.interface.or(interface)));
        checker.turn(request, reply)
    }

    /// The findings on a turn read from a file (a session, a journal).
    pub fn streamed(&mut self, t: &crate::session::stream::StreamedTurn) -> TurnFindings {
        let reply = match &t.reply {
            StreamedReply::Response(r) => TurnReply::Response(r),
            StreamedReply::ToolError(_) => TurnReply::Rejected,
            StreamedReply::Nothing => TurnReply::Nothing,
        };
        self.turn(
            t.dialogue,
            t.kept_as.as_ref(),
            t.interface,
            t.new_session,
            &t.request,
            reply,
        )
    }

    /// A session file's next dialogue begins: the one before is over (remembered if its
    /// server kept it by DialogID), and one that goes on with a dialogue remembered takes
    /// its checker, with the commitments and TurnIndex of its turns before.
    fn next_dialogue(&mut self, dialogue: usize, kept_as: Option<&ServerDialogue>) {
        if let Some((before, Some(key))) = self.current.take()
            && let Some(checker) = self.checkers.remove(&before)
        {
            if self.kept.len() >= KEPT_AT_MOST {
                self.kept.pop_front();
            }
            self.kept.push_back((key, checker));
        }
        self.checkers.clear();
        if let Some(key) = kept_as
            && let Some(at) = self.kept.iter().position(|(k, _)| k == key)
            && let Some((_, checker)) = self.kept.remove(at)
        {
            self.checkers.insert(dialogue, checker);
        }
        self.current = Some((dialogue, kept_as.cloned()));
    }
}

impl Session {
    /// Replaces each turn's findings by today's verdict on it.
    pub fn recheck(&mut self) {
        let mut verdicts = Verdicts::new(None);
        for (i, dialogue) in self.dialogues.iter_mut().enumerate() {
            let kept_as = server_dialogue(
                &dialogue.server,
                &dialogue.dialog_id,
                dialogue.protocol_version.as_deref(),
            );
            for turn in &mut dialogue.turns {
                let request = turn.request_value();
                let response = turn.response();
                let reply = match (&turn.reply, &response) {
                    (_, Some(r)) => TurnReply::Response(r),
                    (Reply::ToolError(_), _) => TurnReply::Rejected,
                    _ => TurnReply::Nothing,
                };
                let found = verdicts.turn(
                    i,
                    kept_as.as_ref(),
                    Some(dialogue.interface),
                    turn.new_session,
                    &request,
                    reply,
                );
                turn.findings = found
                    .request
                    .into_iter()
                    .map(|finding| TurnFinding {
                        on: Subject::Request,
                        finding,
                    })
                    .chain(found.response.into_iter().map(|finding| TurnFinding {
                        on: Subject::Response,
                        finding,
                    }))
                    .collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opened_session_is_judged_by_todays_rules() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tui/states.json"),
        )
        .unwrap();
        let mut session = Session::parse(&text).unwrap();
        // The file records no finding on this turn; the Response leaves CommitmentStatus out.
        let turn = &session.dialogues[3].turns[1];
        assert!(turn.findings.is_empty());
        session.recheck();
        let checks: Vec<String> = session.dialogues[3].turns[1]
            .findings
            .iter()
            .map(|f| f.finding.check.to_string())
            .collect();
        assert_eq!(checks, ["dialogue.commitment-missing"]);
        // After the reconnect, the new session owes nothing of the old one's.
        assert!(session.dialogues[3].turns[4].findings.is_empty());
        // The tour's misspelt Kind is still found.
        assert!(!session.dialogues[0].turns[9].findings.is_empty());
    }
}
