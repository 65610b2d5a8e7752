//! Verdicts on recorded dialogues: each turn checked in order against its dialogue's rules, as
//! the explorer checks them live, a new MCP session of a dialogue (a reconnect) starting them
//! afresh. `validate` reads session files through it, and the explorer re-checks every
//! session it opens, so that a file written by an older version, by hand or by another tool
//! is judged by today's rules, the same way everywhere.

use crate::client::turn::{Reply, Subject, TurnFinding};
use crate::protocol::Interface;
use crate::protocol::conformance::{SequenceChecker, TurnFindings, TurnReply};
use crate::session::Session;
use serde_json::Value;

/// The checker of the dialogue being read, started afresh at each dialogue and each new
/// MCP session.
pub struct Verdicts {
    /// The interface to check as, when the caller knows it better than the file.
    interface: Option<Interface>,
    current: Option<(usize, SequenceChecker)>,
}

impl Verdicts {
    pub fn new(interface: Option<Interface>) -> Verdicts {
        Verdicts {
            interface,
            current: None,
        }
    }

    /// The findings on one turn of dialogue `dialogue` (whose interface the file gives, if
    /// it does).
    pub fn turn(
        &mut self,
        dialogue: usize,
        interface: Option<Interface>,
        new_session: bool,
        request: &Value,
        reply: TurnReply,
    ) -> TurnFindings {
        let fresh = new_session || !matches!(&self.current, Some((d, _)) if *d == dialogue);
        if fresh {
            let interface = self.interface.or(interface);
            self.current = Some((dialogue, SequenceChecker::new(interface)));
        }
        let (_, checker) = self.current.as_mut().expect("made above");
        checker.turn(request, reply)
    }
}

impl Session {
    /// Replaces each turn's findings by today's verdict on it.
    pub fn recheck(&mut self) {
        let mut verdicts = Verdicts::new(None);
        for (i, dialogue) in self.dialogues.iter_mut().enumerate() {
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
