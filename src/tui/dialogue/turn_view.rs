//! A turn read once: what the transcript row, the commitments view and the detail panes show
//! of it, parsed leniently (a foreign server's values are kept as they came).

use crate::client::turn::{ErrorKind, Reply, Summary, Turn};
use crate::protocol::dac::CommitmentState;
use crate::protocol::lenient::{Exchange, Field, dac::Verdict};
use crate::session::diff::{self, Difference, SideBySide};
use serde_json::Value;

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
    pub(super) fn of(index: usize, view: &TurnView) -> Selected {
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
