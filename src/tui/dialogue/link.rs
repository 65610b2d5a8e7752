//! A dialogue's connection: the engine connection it runs on, its DialogID and tool, the MCP
//! version it speaks, and the turn in flight.

use crate::client::connection::DialogIdOrigin;
use crate::client::turn::{Reply, Turn};
use serde_json::Value;
use std::time::Instant;

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

/// What the engine says of a dialogue whose MCP session is open.
#[derive(Clone, Debug)]
pub struct Opened {
    pub connection: u64,
    pub dialog_id: String,
    pub origin: DialogIdOrigin,
    pub tool: String,
    pub protocol_version: String,
    /// The TurnIndex its next Request gets.
    pub next_turn: u64,
}

/// How a dialogue reaches its server: the engine connection, the DialogID and where it came
/// from, the tool it calls, the MCP version, the TurnIndex to send next and the last one the
/// server took, and the turn in flight. Kept in step with the engine's events through the
/// methods below, each named after what happened; read through its accessors.
#[derive(Clone, Debug, Default)]
pub struct Link {
    /// The engine's connection it runs on (client events name connections).
    connection: Option<u64>,
    dialog_id: Option<String>,
    origin: Option<DialogIdOrigin>,
    tool: Option<String>,
    /// The MCP version it speaks (or spoke: recorded in its session file or the proxy's
    /// recording): a reconnect, a take-over and a replay ask for that generation first.
    protocol_version: Option<String>,
    /// The next turn to arrive starts a new MCP session.
    new_session: bool,
    /// The TurnIndex of the last Request the server took.
    last_accepted: Option<u64>,
    next_turn: u64,
    pending: Option<Pending>,
}

impl Link {
    /// A dialogue as a recording has it (a session file, a proxy's journal, a scenario run
    /// by the runner): its DialogID and the MCP version it spoke, no connection.
    pub fn recorded(dialog_id: String, protocol_version: Option<String>) -> Link {
        Link {
            dialog_id: Some(dialog_id),
            protocol_version,
            ..Link::default()
        }
    }

    // ---- what it is ----

    pub fn connection(&self) -> Option<u64> {
        self.connection
    }

    /// Whether it runs on this engine connection.
    pub fn is_on(&self, connection: u64) -> bool {
        self.connection == Some(connection)
    }

    pub fn dialog_id(&self) -> Option<&str> {
        self.dialog_id.as_deref()
    }

    pub fn origin(&self) -> Option<DialogIdOrigin> {
        self.origin
    }

    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Whether the session it is opening goes on from an earlier one (a reconnect).
    pub fn reconnecting(&self) -> bool {
        self.new_session
    }

    /// The TurnIndex of the last Request the server took.
    pub fn last_accepted(&self) -> Option<u64> {
        self.last_accepted
    }

    /// The TurnIndex its next Request gets.
    pub fn next_turn(&self) -> u64 {
        self.next_turn
    }

    /// The turn in flight, if there is one.
    pub fn pending(&self) -> Option<&Pending> {
        self.pending.as_ref()
    }

    // ---- what happened to it ----

    /// Its MCP session is open (again): the engine's connection, DialogID, tool and version.
    pub fn opened(&mut self, opened: Opened) {
        self.connection = Some(opened.connection);
        self.dialog_id = Some(opened.dialog_id);
        self.origin = Some(opened.origin);
        self.tool = Some(opened.tool);
        self.protocol_version = Some(opened.protocol_version);
        // A new 2026-07-28 dialogue starts at 0 whatever the transcript says.
        self.next_turn = opened.next_turn;
    }

    /// A reconnect opened a new session that went on with the dialogue the server kept
    /// (by its DialogID): the turns that follow are of the same session.
    pub fn continued_by_server(&mut self) {
        self.new_session = false;
    }

    /// A reconnect opened a new session the server knows nothing of before: no TurnIndex
    /// of before is "the last the server took".
    pub fn started_afresh(&mut self) {
        self.last_accepted = None;
    }

    /// A runner's session (a scenario's) named its DialogID.
    pub fn named(&mut self, dialog_id: String) {
        self.dialog_id = Some(dialog_id);
    }

    /// It is being connected again: the turn in flight is dropped, and when it has turns
    /// the next one starts a new session.
    pub fn reconnect(&mut self, has_turns: bool) {
        self.pending = None;
        self.new_session = has_turns;
    }

    /// Whether the turn that arrives starts a new session (asked once: the next does not).
    pub fn take_new_session(&mut self) -> bool {
        std::mem::take(&mut self.new_session)
    }

    /// A Request was sent at `at`: the turn is in flight.
    pub fn turn_sent(&mut self, at: Instant) {
        self.pending = Some(Pending {
            started: at,
            request: None,
            cancelling: false,
            progress: None,
            task: None,
        });
    }

    /// The engine filled the Request in flight and sent it: this is what went.
    pub fn turn_started(&mut self, request: Value) {
        if let Some(p) = &mut self.pending {
            p.request = Some(request);
        }
    }

    /// The server reported progress on the turn in flight.
    pub fn progress(&mut self, progress: f64, total: Option<f64>) {
        if let Some(p) = &mut self.pending {
            p.progress = Some((progress, total));
        }
    }

    /// The turn in flight became a task (SEP-2663), or its task changed.
    pub fn became_task(&mut self, note: crate::client::task::TaskNote) {
        if let Some(p) = &mut self.pending {
            p.task = Some(note);
        }
    }

    /// Asks to cancel the turn in flight: the turn, when there is one not already being
    /// cancelled (the server is then to be told).
    pub fn cancel(&mut self) -> Option<&Pending> {
        let p = self.pending.as_mut().filter(|p| !p.cancelling)?;
        p.cancelling = true;
        Some(p)
    }

    /// The turn in flight ended (answered or not): the TurnIndex to send next, as the
    /// engine has it.
    pub fn answered(&mut self, next_turn: u64) {
        self.pending = None;
        self.next_turn = next_turn;
    }

    /// A turn of TurnIndex `index` is in the dialogue (read from a file, run by a
    /// scenario): the next Request goes after it.
    pub fn saw_turn_index(&mut self, index: u64) {
        self.next_turn = self.next_turn.max(index + 1);
    }

    /// Notes a turn's TurnIndex as taken, unless the server refused it with a tool error.
    pub fn accepted(&mut self, turn: &Turn) {
        if !matches!(turn.reply, Reply::ToolError(_))
            && let Some(t) = turn.turn_index()
        {
            self.last_accepted = Some(self.last_accepted.map_or(t, |l| l.max(t)));
        }
    }
}
