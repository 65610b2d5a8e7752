//! The state of one dialogue tab, in parts that each own their fields: what it is (its key,
//! name, server, interface and status), its [`Transcript`] (the turns and how they are being
//! read), its [`Link`] to the server (connection, DialogID, turn in flight), what it is
//! composing (the composer and the defaults its Requests are filled with) and its [`Runs`]
//! (scenario, replay, take-over).

mod link;
mod runs;
mod transcript;
mod turn_view;

pub use link::{Link, Opened, Pending};
pub use runs::{Replay, Runs, ScenarioState, TakeOver};
pub use transcript::Transcript;
pub use turn_view::{
    CommitmentRow, CommitmentsView, Listed, ReplayedView, Selected, StepCheck, TurnView,
};

use crate::client::defaults::Chosen;
use crate::client::engine::DialogueKey;
use crate::client::turn::Turn;
use crate::protocol::Interface;
use crate::tui::composer::Composer;

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Connecting,
    Open,
    Failed(String),
    Closed(String),
    /// Loaded from a session file, not connected.
    Recorded,
    /// A proxied dialogue followed as it happens (read-only; recorded once it ends).
    Live,
    /// A proxied dialogue that was live and that the recording no longer follows, though
    /// it may go on at its server (read-only): never shown live past what is known.
    Unfollowed(Unfollowed),
}

/// Why a watched dialogue is no longer followed (the recording's `closed` cause, or the
/// recording itself gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfollowed {
    /// No exchange for the idle expiry: the server may have dropped it.
    Idle,
    /// The recording stopped: the proxy stopped (or was killed, or cannot be reached).
    RecordingStopped,
}

impl Unfollowed {
    /// The state as the transcript's header and the status line say it.
    pub fn said(self) -> &'static str {
        match self {
            Unfollowed::Idle => "ended (idle)",
            Unfollowed::RecordingStopped => "ended (recording stopped)",
        }
    }

    /// The mark of its sidebar row and tab.
    pub fn mark(self) -> &'static str {
        match self {
            Unfollowed::Idle => "◌",
            Unfollowed::RecordingStopped => "◇",
        }
    }
}

pub struct DialogueState {
    pub key: DialogueKey,
    pub name: String,
    /// Its turns since the session was last saved (closing it takes them out of the count).
    pub unsaved: usize,
    /// Its server.
    pub server: crate::tui::ids::ServerId,
    pub interface: Interface,
    pub status: Status,
    /// Its turns, the selected one, and how the transcript and detail panes show them.
    pub transcript: Transcript,
    /// How it reaches its server, and the turn in flight.
    pub link: Link,
    pub composer: Composer,
    /// The common fields its Requests are filled with, and where each came from.
    pub defaults: Option<Chosen>,
    /// Defaults the user set for this dialogue only (over its server's).
    pub overrides: crate::client::defaults::Overrides,
    pub notes: Option<String>,
    /// The scenario, replay or take-over it runs.
    pub runs: Runs,
}

impl DialogueState {
    pub fn new(
        key: DialogueKey,
        name: String,
        server: crate::tui::ids::ServerId,
        interface: Interface,
    ) -> DialogueState {
        DialogueState {
            key,
            name,
            unsaved: 0,
            server,
            interface,
            status: Status::Connecting,
            transcript: Transcript::new(interface),
            link: Link::default(),
            composer: Composer::new(interface),
            defaults: None,
            overrides: Default::default(),
            notes: None,
            runs: Runs::default(),
        }
    }

    /// Adds a finished turn and selects it.
    pub fn push(&mut self, mut turn: Turn) {
        turn.new_session = self.link.take_new_session() && !self.transcript.is_empty();
        self.link.accepted(&turn);
        self.transcript.add(TurnView::new(turn));
        self.transcript.select(Some(self.transcript.len() - 1));
    }

    /// Adds turns read from a session.
    pub fn load_turns(&mut self, turns: impl IntoIterator<Item = Turn>) {
        for turn in turns {
            self.link.accepted(&turn);
            self.transcript.add(TurnView::new(turn));
        }
    }

    /// The dialogue as a session file records it, on the server named so there: its name,
    /// DialogID, notes, the MCP version it spoke and its turns (no defaults of its own).
    pub fn record(&self, server: String) -> crate::session::DialogueRecord {
        crate::session::DialogueRecord {
            name: Some(self.name.clone()),
            server,
            interface: self.interface,
            dialog_id: self.link.dialog_id().unwrap_or_default().to_owned(),
            notes: self.notes.clone(),
            defaults: None,
            protocol_version: self.link.protocol_version().map(str::to_owned),
            turns: self
                .transcript
                .turns()
                .iter()
                .map(|t| t.turn.clone())
                .collect(),
        }
    }

    /// A replay of its turns begins: the ones before are forgotten.
    pub fn start_replay(&mut self) {
        self.transcript.clear_replays();
        self.runs.start_replay();
    }

    /// A turn of its replay came in: counted, and kept beside the recorded one.
    pub fn replayed(&mut self, index: usize, replayed: ReplayedView) {
        self.runs.replayed_turn(!replayed.differences.is_empty());
        self.transcript.set_replayed(index, replayed);
    }

    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::turn::Reply;
    use crate::protocol::dac::CommitmentState;
    use crate::protocol::lenient::Field;
    use crate::protocol::raw::RawJson;
    use serde_json::Value;
    use serde_json::json;

    fn turn(request: Value, response: Option<Value>, new_session: bool) -> Turn {
        Turn {
            request: RawJson::from_value(&request),
            reply: match response {
                Some(r) => Reply::Response(RawJson::from_value(&r)),
                None => Reply::ToolError("no".into()),
            },
            findings: Vec::new(),
            sent: "2026-01-01T00:00:00.000Z".into(),
            received: None,
            latency_ms: 1.0,
            new_session,
            asked: Vec::new(),
        }
    }

    fn rq(commit: &[&str]) -> Value {
        json!({"Header": "PGM-KDA-V1.0", "Kind": "commitment", "TurnIndex": 0,
            "Commitments": commit.iter().map(|c| json!({"CommitmentID": c, "Statement": "A locatedAt B"})).collect::<Vec<_>>()})
    }

    fn rs(statuses: Option<&[(&str, &str)]>) -> Value {
        let mut r = json!({"Header": "PGM-KDA-V1.0", "Outcome": "answered"});
        if let Some(s) = statuses {
            r["CommitmentStatus"] = json!(
                s.iter()
                    .map(|(id, st)| json!({"CommitmentID": id, "Status": st}))
                    .collect::<Vec<_>>()
            );
        }
        r
    }

    fn dialogue(turns: Vec<Turn>) -> DialogueState {
        let mut d = DialogueState::new(
            1,
            "d".into(),
            crate::tui::ids::ServerId::TEST,
            Interface::Dac,
        );
        d.load_turns(turns);
        d
    }

    #[test]
    fn the_view_shows_what_the_server_said_not_what_was_asked() {
        let d = dialogue(vec![
            turn(
                rq(&["c1", "c2"]),
                Some(rs(Some(&[("c1", "retained"), ("c2", "conflicting")]))),
                false,
            ),
            // A tool error: its commitment was never taken.
            turn(rq(&["c3"]), None, false),
            // The server leaves CommitmentStatus out.
            turn(rq(&[]), Some(rs(None)), false),
            // It lists c1 as released (it had released it).
            turn(
                rq(&[]),
                Some(rs(Some(&[("c1", "released"), ("c2", "conflicting")]))),
                false,
            ),
        ]);
        let v = d.transcript.commitments_at(1);
        assert!(v.rows.iter().all(|r| r.id != "c3"), "{v:?}");
        let v = d.transcript.commitments_at(2);
        assert_eq!(v.selected, Listed::LeftOut);
        assert_eq!(v.from, Some(0));
        let v = d.transcript.commitments_at(3);
        let c1 = v.rows.iter().find(|r| r.id == "c1").unwrap();
        assert_eq!(
            (&c1.state, c1.since),
            (&Field::Known(CommitmentState::Released), 3)
        );
    }

    #[test]
    fn a_new_session_starts_the_commitments_afresh() {
        let d = dialogue(vec![
            turn(rq(&["c1"]), Some(rs(Some(&[("c1", "retained")]))), false),
            turn(rq(&[]), Some(rs(Some(&[]))), true),
        ]);
        let v = d.transcript.commitments_at(1);
        assert!(v.rows.is_empty(), "{v:?}");
        assert_eq!(v.session_start, 1);
        assert_eq!(d.transcript.used_ids(), ["c1"], "the ID stays used");
    }

    #[test]
    fn a_turn_is_read_once_into_its_lenient_view_and_verdict() {
        let request = json!({"Header": "PGM-KDA-V1.0", "Kind": "feasibility", "TurnIndex": 0,
            "ProcessActions": [{"Step": 1, "Statement": "a"}, {"Step": 2, "Statement": "b"}]});
        // Conforming in form, contradicted by its own steps.
        let response = json!({"Header": "PGM-KDA-V1.0", "Outcome": "answered",
            "Feasibility": {"Overall": "feasible",
                "Steps": [{"Step": 1, "PAStatus": "Clash", "Reason": "c1 conflicts: x"}]}});
        let view = TurnView::new(turn(request.clone(), Some(response), false));
        let verdict = view.verdict.as_ref().expect("a verdict");
        assert!(verdict.contradicted());
        assert_eq!(view.summary.about, "1 Clash · 1 not answered");
        assert_eq!(view.outcome_label(), "answered");
        // A foreign server's values: shown as they came, marked.
        let response = json!({"Header": "PGM-KDA-V1.0", "Outcome": "mostly",
            "Feasibility": {"Overall": 3, "Steps": [{"Step": 1, "PAStatus": "Fine"},
                {"Step": 2, "PAStatus": "Ack"}]}});
        let view = TurnView::new(turn(request, Some(response), false));
        assert_eq!(view.outcome_label(), "mostly?");
        let verdict = view.verdict.as_ref().unwrap();
        assert_eq!(verdict.claimed.text(), "3");
        assert!(!verdict.contradicted(), "an unknown claim is not compared");
        assert_eq!(view.summary.about, "1 Ack · 1 Fine?");
    }

    /// A stale or made-up index selects nothing and changes nothing: no lookup panics.
    #[test]
    fn the_transcript_never_panics_on_an_index_it_does_not_have() {
        let mut d = dialogue(vec![
            turn(rq(&["c1"]), Some(rs(Some(&[("c1", "retained")]))), false),
            turn(rq(&[]), Some(rs(Some(&[]))), false),
        ]);
        let t = &mut d.transcript;
        t.select(Some(7));
        assert_eq!((t.selected(), t.selection().is_none()), (None, true));
        assert!(t.turn(7).is_none() && t.selected_turn().is_none());
        t.set_replayed(
            9,
            ReplayedView {
                turn: t.turns()[0].turn.clone(),
                differences: Vec::new(),
            },
        );
        assert!(t.turns().iter().all(|v| v.replay.is_none()));
        t.select(Some(1));
        t.detail_scroll = 5;
        // The same turn again keeps the detail where it was read; another starts at its top.
        t.select(Some(1));
        assert_eq!(t.detail_scroll, 5);
        t.select(Some(0));
        assert_eq!((t.selected(), t.detail_scroll), (Some(0), 0));
        assert_eq!(t.selection().map(|s| s.index), Some(0));
        // A replay of the selected turn is read into the selection at once.
        let replayed = t.turns()[0].turn.clone();
        t.set_replayed(
            0,
            ReplayedView {
                turn: replayed,
                differences: Vec::new(),
            },
        );
        assert!(t.selected_turn().is_some_and(|v| v.replay.is_some()));
        // An empty transcript follows nothing and scrolls nowhere.
        let mut empty = dialogue(Vec::new());
        empty.transcript.follow_last(10);
        assert_eq!(empty.transcript.scroll, 0);
    }

    #[test]
    fn a_status_no_commitment_has_is_kept_as_it_came() {
        let d = dialogue(vec![turn(
            rq(&["c1"]),
            Some(rs(Some(&[("c1", "suspended")]))),
            false,
        )]);
        let v = d.transcript.commitments_at(0);
        assert_eq!(v.rows[0].state, Field::Other(json!("suspended")), "{v:?}");
    }
}
