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

/// How a dialogue reaches its server: the engine connection, the DialogID and where it came
/// from, the tool it calls, the MCP version, the TurnIndex to send next and the last one the
/// server took, and the turn in flight. Plain data the update keeps in step with the engine's
/// events.
#[derive(Clone, Debug, Default)]
pub struct Link {
    /// The engine's connection it runs on (client events name connections).
    pub connection: Option<u64>,
    pub dialog_id: Option<String>,
    pub origin: Option<DialogIdOrigin>,
    pub tool: Option<String>,
    /// The MCP version it speaks (or spoke: recorded in its session file or the proxy's
    /// recording): a reconnect, a take-over and a replay ask for that generation first.
    pub protocol_version: Option<String>,
    /// The next turn to arrive starts a new MCP session.
    pub new_session: bool,
    /// The TurnIndex of the last Request the server took.
    pub last_accepted: Option<u64>,
    pub next_turn: u64,
    pub pending: Option<Pending>,
}

impl Link {
    /// Notes a turn's TurnIndex as taken, unless the server refused it with a tool error.
    pub fn accepted(&mut self, turn: &Turn) {
        if !matches!(turn.reply, Reply::ToolError(_))
            && let Some(t) = turn.turn_index()
        {
            self.last_accepted = Some(self.last_accepted.map_or(t, |l| l.max(t)));
        }
    }
}
