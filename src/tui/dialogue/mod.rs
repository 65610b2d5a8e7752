//! The state of one dialogue tab: its turns (each read once into what the transcript shows),
//! the selected turn (parsed, for the detail panes), what is pending, its composer, its own
//! focus and detail tab, and its replay.

use crate::client::connection::DialogIdOrigin;
use crate::client::defaults::Chosen;
use crate::client::engine::DialogueKey;
use crate::client::turn::{ErrorKind, Reply, Summary, Turn};
use crate::protocol::Interface;
use crate::protocol::dac::CommitmentState;
use crate::protocol::lenient::{Exchange, Field, dac::Verdict};
use crate::session::diff::{self, Difference, SideBySide};
use crate::tui::action::Pane;
use crate::tui::app::DetailTab;
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
    /// A proxied dialogue followed as it happens (read-only; recorded once it ends).
    Live,
}

/// What a Response said of the commitments: the status of each it listed, in its order, or
/// nothing (no CommitmentStatus at all).
#[derive(Clone, Debug, PartialEq)]
pub enum Listed {
    /// No Response (a tool error, no reply): nothing was said.
    NoResponse,
    /// A Response without CommitmentStatus.
    LeftOut,
    /// Each listed ID (as text when it is not a string) and its status as it came.
    Statuses(Vec<(String, Field<CommitmentState>)>),
}

/// A turn and what the transcript and the commitments view need of it, read once.
#[derive(Clone, Debug)]
pub struct TurnView {
    pub turn: Turn,
    pub summary: Summary,
    /// Its messages read once, leniently: what the detail panes show.
    pub exchange: Exchange,
    /// A feasibility Response's steps counted, and its Overall beside theirs.
    pub verdict: Option<Verdict>,
    pub listed: Listed,
    /// The commitments the Request asked to retain: (ID, Statement).
    pub asked: Vec<(String, String)>,
    /// The CommitmentIDs the Request released.
    pub released: Vec<String>,
    pub replay: Option<ReplayedView>,
    /// When the turn is a step of a scenario run: what it expected, and what failed.
    pub expect: Option<StepCheck>,
}

/// A scenario step's verdict, beside its turn.
#[derive(Clone, Debug)]
pub struct StepCheck {
    pub step: String,
    pub expectations: Vec<String>,
    pub failures: Vec<crate::scenario::expect::Failure>,
    pub attempts: u32,
    /// The step did not run (the connection was gone): why.
    pub not_run: Option<String>,
}

/// A dialogue that runs a scenario.
#[derive(Clone, Debug, Default)]
pub struct ScenarioState {
    pub file: std::path::PathBuf,
    pub name: String,
    pub steps: usize,
    pub running: bool,
    pub passed: usize,
    pub failed: usize,
    pub error: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ReplayedView {
    pub turn: Turn,
    pub differences: Vec<Difference>,
}

impl TurnView {
    pub fn new(turn: Turn) -> TurnView {
        let (summary, exchange) = turn.read();
        let (listed, asked, released) = commitments_of(&exchange);
        TurnView {
            verdict: exchange.verdict(),
            exchange,
            turn,
            summary,
            listed,
            asked,
            released,
            replay: None,
            expect: None,
        }
    }

    pub fn new_session(&self) -> bool {
        self.turn.new_session
    }

    /// "answered", "— tool error —", "timeout" …: what the Outcome column shows.
    pub fn outcome_label(&self) -> String {
        match &self.turn.reply {
            Reply::Response(_) => match self.exchange.outcome() {
                Some(Field::Known(o)) => o.as_str().to_owned(),
                // Marked: a value no Outcome has never reads as one that is.
                Some(outcome @ Field::Other(_)) => format!("{}?", outcome.text()),
                _ => "(no Outcome)".into(),
            },
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

/// What a BKN-DAC turn did to the commitments: what its Response listed, and what its
/// Request asked to retain and released.
fn commitments_of(exchange: &Exchange) -> (Listed, Vec<(String, String)>, Vec<String>) {
    let Exchange::Dac { request, response } = exchange else {
        let listed = match exchange.outcome() {
            None => Listed::NoResponse,
            Some(_) => Listed::LeftOut,
        };
        return (listed, Vec::new(), Vec::new());
    };
    let listed = match response {
        None => Listed::NoResponse,
        Some(r) if r.commitment_status.is_absent() => Listed::LeftOut,
        Some(r) => Listed::Statuses(
            r.commitment_status
                .items()
                .iter()
                .map(|c| match c {
                    Field::Known(c) => (c.commitment_id.str().into_owned(), c.status.clone()),
                    // Not even an object: shown as it came, with no status.
                    other => (other_text(other), Field::Absent),
                })
                .collect(),
        ),
    };
    let asked = request
        .commitments
        .items()
        .iter()
        .filter_map(Field::known)
        .map(|c| {
            (
                c.commitment_id.str().into_owned(),
                c.statement.str().into_owned(),
            )
        })
        .collect();
    let released = request
        .released_commitment_ids
        .items()
        .iter()
        .map(|id| id.text().into_owned())
        .collect();
    (listed, asked, released)
}

fn other_text<T>(field: &Field<T>) -> String {
    field.other().map(|v| v.to_string()).unwrap_or_default()
}

/// A commitment as the server last said it was, as of a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitmentRow {
    pub id: String,
    pub statement: Option<String>,
    /// As the server gave it; absent: asked for, but no Response of this session listed it.
    pub state: Field<CommitmentState>,
    /// The transcript row where the state became what it is (or where it was asked).
    pub since: usize,
}

/// The commitments of the dialogue as of a turn, as the server said them.
#[derive(Clone, Debug, PartialEq)]
pub struct CommitmentsView {
    pub rows: Vec<CommitmentRow>,
    /// The row of the Response whose CommitmentStatus the statuses come from.
    pub from: Option<usize>,
    /// What the selected turn's own Response said: left out, or not all of them.
    pub selected: Listed,
    /// The IDs the selected turn's Response did not list though the dialogue had them.
    pub missing: Vec<String>,
    /// The row where the current MCP session began (a reconnect starts the commitments
    /// afresh: the server forgot them).
    pub session_start: usize,
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
    /// Each line's width in characters, measured once (the Raw tab wraps long lines).
    pub request_widths: Vec<usize>,
    pub response_widths: Vec<usize>,
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
        let request_lines: Vec<String> = pretty(&request);
        let response_lines: Vec<String> = match (&response, &view.turn.reply) {
            (Some(r), _) => pretty(r),
            (None, Reply::ToolError(t)) => t.lines().map(str::to_owned).collect(),
            (None, Reply::Error(e)) => vec![e.message.clone()],
            (None, Reply::Response(_)) => Vec::new(),
        };
        let widths = |lines: &[String]| lines.iter().map(|l| l.chars().count()).collect();
        Selected {
            index,
            request_widths: widths(&request_lines),
            response_widths: widths(&response_lines),
            request_lines,
            response_lines,
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
    /// The task (SEP-2663) the turn became, as last seen.
    pub task: Option<crate::client::task::TaskNote>,
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
    /// Its turns since the session was last saved (closing it takes them out of the count).
    pub unsaved: usize,
    /// Its server.
    pub server: crate::tui::ids::ServerId,
    pub interface: Interface,
    pub status: Status,
    /// The engine's connection it runs on (client events name connections).
    pub connection: Option<u64>,
    pub dialog_id: Option<String>,
    pub origin: Option<DialogIdOrigin>,
    pub tool: Option<String>,
    /// The common fields its Requests are filled with, and where each came from.
    pub defaults: Option<Chosen>,
    pub turns: Vec<TurnView>,
    pub selected: Option<usize>,
    /// The transcript row the window starts at (moved so the selected one shows).
    pub scroll: usize,
    pub selection: Option<Selected>,
    pub pending: Option<Pending>,
    pub next_turn: u64,
    /// The TurnIndex of the last Request the server took.
    pub last_accepted: Option<u64>,
    /// Every CommitmentID the dialogue has used (asked for in any Request, listed by any
    /// Response): completion offers them, and an ID the form makes up is none of them.
    pub used_ids: Vec<String>,
    pub composer: Composer,
    pub notes: Option<String>,
    pub replay: Option<Replay>,
    /// The first line of the detail pane asked for.
    pub detail_scroll: usize,
    /// The dialogue's own detail tab and focus, kept when another dialogue is shown (no
    /// focus of its own until it has been shown: it takes the one of the dialogue before).
    pub detail_tab: DetailTab,
    pub focus: Option<Pane>,
    /// The next turn to arrive starts a new MCP session.
    pub new_session: bool,
    /// Defaults the user set for this dialogue only (over its server's).
    pub overrides: crate::client::defaults::Overrides,
    /// The scenario this dialogue runs, when it runs one.
    pub scenario: Option<ScenarioState>,
    /// A watched or recorded dialogue this one takes over, while its Requests are sent again.
    pub takeover: Option<TakeOver>,
    /// The MCP version it speaks (or spoke: recorded in its session file or the proxy's
    /// recording): a reconnect, a take-over and a replay ask for that generation first.
    pub protocol_version: Option<String>,
}

/// Taking over: the recorded Requests still to send again, and what came of those sent.
#[derive(Clone, Debug)]
pub struct TakeOver {
    /// The dialogue taken over (its Replay tab shows how the answers differ).
    pub source: crate::client::engine::DialogueKey,
    pub requests: std::collections::VecDeque<serde_json::Value>,
    pub recorded: Vec<crate::client::turn::Turn>,
    /// The Request the recording went on with, for the composer once the user has it.
    pub next: Option<serde_json::Value>,
    pub sent: usize,
    pub differing: usize,
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
            unsaved: 0,
            name,
            server,
            interface,
            status: Status::Connecting,
            connection: None,
            dialog_id: None,
            origin: None,
            tool: None,
            defaults: None,
            turns: Vec::new(),
            selected: None,
            scroll: 0,
            selection: None,
            pending: None,
            next_turn: 0,
            last_accepted: None,
            used_ids: Vec::new(),
            composer: Composer::new(interface),
            notes: None,
            replay: None,
            takeover: None,
            protocol_version: None,
            detail_scroll: 0,
            detail_tab: DetailTab::for_interface(interface, false, false)[0],
            focus: None,
            new_session: false,
            overrides: Default::default(),
            scenario: None,
        }
    }

    /// Adds a finished turn and selects it.
    pub fn push(&mut self, mut turn: Turn) {
        turn.new_session = std::mem::take(&mut self.new_session) && !self.turns.is_empty();
        if !matches!(turn.reply, Reply::ToolError(_))
            && let Some(t) = turn.turn_index()
        {
            self.last_accepted = Some(self.last_accepted.map_or(t, |l| l.max(t)));
        }
        self.add(TurnView::new(turn));
        self.select(Some(self.turns.len() - 1));
    }

    fn add(&mut self, view: TurnView) {
        let listed: Vec<&str> = match &view.listed {
            Listed::Statuses(s) => s.iter().map(|(id, _)| id.as_str()).collect(),
            _ => Vec::new(),
        };
        for id in view.asked.iter().map(|(id, _)| id.as_str()).chain(listed) {
            if !self.used_ids.iter().any(|i| i == id) {
                self.used_ids.push(id.to_owned());
            }
        }
        self.turns.push(view);
    }

    /// Adds turns read from a session.
    pub fn load_turns(&mut self, turns: impl IntoIterator<Item = Turn>) {
        for turn in turns {
            if !matches!(turn.reply, Reply::ToolError(_))
                && let Some(t) = turn.turn_index()
            {
                self.last_accepted = Some(self.last_accepted.map_or(t, |l| l.max(t)));
            }
            self.add(TurnView::new(turn));
        }
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

    /// The commitments as of a turn, as the server said them: the statuses of the last
    /// Response of the turn's MCP session that listed them, the statements from the
    /// Requests that asked, and what the turn's own Response left out.
    pub fn commitments_at(&self, upto: usize) -> CommitmentsView {
        let upto = upto.min(self.turns.len().saturating_sub(1));
        // A reconnect starts a new MCP session: the server remembers nothing before it.
        let session_start = (0..=upto)
            .rev()
            .find(|i| self.turns.get(*i).is_some_and(TurnView::new_session))
            .unwrap_or(0);
        let mut rows: Vec<CommitmentRow> = Vec::new();
        let mut from = None;
        for (i, view) in self
            .turns
            .iter()
            .enumerate()
            .take(upto + 1)
            .skip(session_start)
        {
            let answered = matches!(view.turn.reply, Reply::Response(_));
            // What the Request asked is known once the server took it.
            if answered {
                for (id, statement) in &view.asked {
                    match rows.iter_mut().find(|r| &r.id == id) {
                        Some(r) => r.statement = Some(statement.clone()),
                        None => rows.push(CommitmentRow {
                            id: id.clone(),
                            statement: Some(statement.clone()),
                            state: Field::Absent,
                            since: i,
                        }),
                    }
                }
            }
            let Listed::Statuses(statuses) = &view.listed else {
                continue;
            };
            from = Some(i);
            for (id, state) in statuses {
                let restated = view.asked.iter().any(|(a, _)| a == id);
                match rows.iter_mut().find(|r| &r.id == id) {
                    Some(r) => {
                        if r.state != *state || restated {
                            r.since = i;
                        }
                        r.state = state.clone();
                    }
                    None => rows.push(CommitmentRow {
                        id: id.clone(),
                        statement: None,
                        state: state.clone(),
                        since: i,
                    }),
                }
            }
        }
        let selected = self
            .turns
            .get(upto)
            .map(|v| v.listed.clone())
            .unwrap_or(Listed::NoResponse);
        let missing = match &selected {
            Listed::Statuses(listed) => rows
                .iter()
                .filter(|r| r.since < upto && !listed.iter().any(|(id, _)| *id == r.id))
                .map(|r| r.id.clone())
                .collect(),
            _ => Vec::new(),
        };
        CommitmentsView {
            rows,
            from,
            selected,
            missing,
            session_start,
        }
    }

    pub fn is_live(&self) -> bool {
        matches!(self.status, Status::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::raw::RawJson;
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
        let v = d.commitments_at(1);
        assert!(v.rows.iter().all(|r| r.id != "c3"), "{v:?}");
        let v = d.commitments_at(2);
        assert_eq!(v.selected, Listed::LeftOut);
        assert_eq!(v.from, Some(0));
        let v = d.commitments_at(3);
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
        let v = d.commitments_at(1);
        assert!(v.rows.is_empty(), "{v:?}");
        assert_eq!(v.session_start, 1);
        assert_eq!(d.used_ids, ["c1"], "the ID stays used");
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

    #[test]
    fn a_status_no_commitment_has_is_kept_as_it_came() {
        let d = dialogue(vec![turn(
            rq(&["c1"]),
            Some(rs(Some(&[("c1", "suspended")]))),
            false,
        )]);
        let v = d.commitments_at(0);
        assert_eq!(v.rows[0].state, Field::Other(json!("suspended")), "{v:?}");
    }
}
