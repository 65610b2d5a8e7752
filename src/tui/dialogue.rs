//! The state of one dialogue tab: its turns (each read once into what the transcript shows),
//! the selected turn (parsed, for the detail panes), what is pending, its composer and its
//! replay.

use crate::client::connection::DialogIdOrigin;
use crate::client::engine::DialogueKey;
use crate::client::turn::{ErrorKind, Reply, Summary, Turn};
use crate::protocol::Interface;
use crate::protocol::dac::CommitmentState;
use crate::session::diff::{self, Difference, SideBySide};
use crate::tui::composer::Composer;
use serde_json::Value;
use std::time::Instant;

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Connecting,
    Open,
    Failed(String),
    Closed(String),
    /// Loaded from a session file, not connected.
    Recorded,
}

/// A turn and what the transcript and the commitments view need of it, read once.
#[derive(Clone, Debug)]
pub struct TurnView {
    pub turn: Turn,
    pub summary: Summary,
    /// The statuses the Response gives every commitment, in its order.
    pub statuses: Vec<(String, CommitmentState)>,
    /// The commitments the Request asked to retain: (ID, Statement).
    pub asked: Vec<(String, String)>,
    /// Why commitments conflict, from the Answer's text: (ID, reason).
    pub conflicts: Vec<(String, String)>,
    /// The first turn of a new MCP session (after a reconnect).
    pub new_session: bool,
    pub replay: Option<ReplayedView>,
}

#[derive(Clone, Debug)]
pub struct ReplayedView {
    pub turn: Turn,
    pub differences: Vec<Difference>,
}

impl TurnView {
    pub fn new(turn: Turn) -> TurnView {
        let summary = turn.summary();
        let request = turn.request_value();
        let response = turn.response();
        let statuses = response
            .as_ref()
            .and_then(|r| r.get("CommitmentStatus"))
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|c| {
                        Some((
                            c.get("CommitmentID")?.as_str()?.to_owned(),
                            CommitmentState::parse(c.get("Status")?.as_str()?)?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let asked = request
            .get("Commitments")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|c| {
                        Some((
                            c.get("CommitmentID")?.as_str()?.to_owned(),
                            c.get("Statement")?.as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let conflicts = response
            .as_ref()
            .and_then(|r| r.pointer("/Answer/Text"))
            .and_then(Value::as_str)
            .map(conflict_reasons)
            .unwrap_or_default();
        TurnView {
            turn,
            summary,
            statuses,
            asked,
            conflicts,
            new_session: false,
            replay: None,
        }
    }

    /// "answered", "— tool error —", "timeout" …: what the Outcome column shows.
    pub fn outcome_label(&self) -> String {
        match &self.turn.reply {
            Reply::Response(_) => self
                .summary
                .outcome
                .clone()
                .unwrap_or_else(|| "(no Outcome)".into()),
            Reply::ToolError(_) => "— tool error —".into(),
            Reply::Error(e) => match e.kind {
                ErrorKind::Timeout => "— timeout —".into(),
                ErrorKind::Cancelled => "— cancelled —".into(),
                ErrorKind::TooLarge => "— too large —".into(),
                ErrorKind::Gone => "— server gone —".into(),
                ErrorKind::Protocol => "— JSON-RPC error —".into(),
                ErrorKind::Transport => "— transport error —".into(),
                ErrorKind::NotSent => "— not sent —".into(),
            },
        }
    }
}

/// "c2 conflicts: c1 already commits …." sentences of the reference server's Answer text.
fn conflict_reasons(text: &str) -> Vec<(String, String)> {
    text.split(". ")
        .filter_map(|sentence| {
            let (id, reason) = sentence.split_once(" conflicts: ")?;
            (!id.contains(' ')).then(|| (id.to_owned(), reason.trim_end_matches('.').to_owned()))
        })
        .collect()
}

/// A commitment as of a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitmentRow {
    pub id: String,
    pub statement: Option<String>,
    pub state: CommitmentState,
    /// The transcript row where the state became what it is.
    pub since: usize,
    pub reason: Option<String>,
}

/// The selected turn, parsed once for the detail panes.
#[derive(Clone, Debug)]
pub struct Selected {
    pub index: usize,
    pub request: Value,
    pub response: Option<Value>,
    /// Pretty JSON, line by line, for the Raw tab (only the visible lines are drawn).
    pub request_lines: Vec<String>,
    pub response_lines: Vec<String>,
    /// Recorded and replayed side by side, when the turn was replayed.
    pub side_by_side: Vec<SideBySide>,
}

impl Selected {
    fn of(index: usize, view: &TurnView) -> Selected {
        let request = view.turn.request_value();
        let response = view.turn.response();
        let pretty = |v: &Value| {
            serde_json::to_string_pretty(v)
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect()
        };
        let side_by_side = match (
            &response,
            view.replay.as_ref().and_then(|r| r.turn.response()),
        ) {
            (Some(a), Some(b)) => diff::side_by_side(a, &b),
            _ => Vec::new(),
        };
        Selected {
            index,
            request_lines: pretty(&request),
            response_lines: match (&response, &view.turn.reply) {
                (Some(r), _) => pretty(r),
                (None, Reply::ToolError(t)) => t.lines().map(str::to_owned).collect(),
                (None, Reply::Error(e)) => vec![e.message.clone()],
                (None, Reply::Response(_)) => Vec::new(),
            },
            request,
            response,
            side_by_side,
        }
    }
}

/// A turn in flight.
#[derive(Clone, Debug)]
pub struct Pending {
    pub started: Instant,
    pub request: Option<Value>,
    pub cancelling: bool,
    pub progress: Option<(f64, Option<f64>)>,
}

/// A replay of the dialogue, running or done.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    pub running: bool,
    pub done: usize,
    pub differing: usize,
    pub error: Option<String>,
}

pub struct DialogueState {
    pub key: DialogueKey,
    pub name: String,
    /// Index of its server in the explorer's list.
    pub server: usize,
    pub interface: Interface,
    pub status: Status,
    pub dialog_id: Option<String>,
    pub origin: Option<DialogIdOrigin>,
    pub tool: Option<String>,
    pub turns: Vec<TurnView>,
    pub selected: Option<usize>,
    /// The first transcript row on screen.
    pub scroll: usize,
    pub selection: Option<Selected>,
    pub pending: Option<Pending>,
    pub next_turn: u64,
    pub composer: Composer,
    pub notes: Option<String>,
    pub replay: Option<Replay>,
    /// The first line of the detail pane on screen.
    pub detail_scroll: usize,
    /// The next turn to arrive starts a new MCP session.
    pub new_session: bool,
}

impl DialogueState {
    pub fn new(
        key: DialogueKey,
        name: String,
        server: usize,
        interface: Interface,
    ) -> DialogueState {
        DialogueState {
            key,
            name,
            server,
            interface,
            status: Status::Connecting,
            dialog_id: None,
            origin: None,
            tool: None,
            turns: Vec::new(),
            selected: None,
            scroll: 0,
            selection: None,
            pending: None,
            next_turn: 0,
            composer: Composer::new(interface),
            notes: None,
            replay: None,
            detail_scroll: 0,
            new_session: false,
        }
    }

    /// Adds a finished turn and selects it.
    pub fn push(&mut self, turn: Turn) {
        let mut view = TurnView::new(turn);
        view.new_session = std::mem::take(&mut self.new_session) && !self.turns.is_empty();
        self.turns.push(view);
        self.select(Some(self.turns.len() - 1));
    }

    pub fn select(&mut self, index: Option<usize>) {
        let index = index.filter(|i| *i < self.turns.len());
        if self.selected != index || self.selection.is_none() {
            self.detail_scroll = 0;
        }
        self.selected = index;
        self.selection = index.map(|i| Selected::of(i, &self.turns[i]));
    }

    /// Re-reads the selected turn (after its replay came in).
    pub fn refresh_selection(&mut self) {
        self.selection = self.selected.map(|i| Selected::of(i, &self.turns[i]));
    }

    /// Every commitment the dialogue had seen as of a turn: its statement, state, the turn
    /// where the state was last set, and why it conflicts.
    pub fn commitments_at(&self, upto: usize) -> Vec<CommitmentRow> {
        let mut rows: Vec<CommitmentRow> = Vec::new();
        for (i, view) in self.turns.iter().enumerate().take(upto + 1) {
            for (id, statement) in &view.asked {
                match rows.iter_mut().find(|r| &r.id == id) {
                    Some(r) => r.statement = Some(statement.clone()),
                    None => rows.push(CommitmentRow {
                        id: id.clone(),
                        statement: Some(statement.clone()),
                        state: CommitmentState::Retained,
                        since: i,
                        reason: None,
                    }),
                }
            }
            for (id, state) in &view.statuses {
                let reason = view
                    .conflicts
                    .iter()
                    .find(|(c, _)| c == id)
                    .map(|(_, r)| r.clone());
                match rows.iter_mut().find(|r| &r.id == id) {
                    Some(r) => {
                        if r.state != *state || view.asked.iter().any(|(a, _)| a == id) {
                            r.since = i;
                        }
                        r.state = *state;
                        if reason.is_some() || *state != CommitmentState::Conflicting {
                            r.reason = reason;
                        }
                    }
                    None => rows.push(CommitmentRow {
                        id: id.clone(),
                        statement: None,
                        state: *state,
                        since: i,
                        reason,
                    }),
                }
            }
        }
        rows
    }

    /// The CommitmentIDs seen so far (for completion).
    pub fn commitment_ids(&self) -> Vec<String> {
        match self.turns.len() {
            0 => Vec::new(),
            n => self
                .commitments_at(n - 1)
                .into_iter()
                .map(|r| r.id)
                .collect(),
        }
    }

    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_come_from_the_answer_text() {
        let found = conflict_reasons(
            "c2 conflicts: c1 already commits Avatar#7 locatedAt MLoc:Square.Gate, and locatedAt has one value. c3 conflicts: the domain has X. 2 commitments retained.",
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[1], ("c3".into(), "the domain has X".into()));
    }
}
