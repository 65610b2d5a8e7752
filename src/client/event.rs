//! What the client layer reports while it works: the protocol log (every JSON-RPC message in
//! both directions), server logs and progress, server stderr, and the life of connections and
//! turns. Everything goes to one channel that whoever listens (the TUI, a headless command)
//! drains; log entries carry at most `LOG_TEXT_LIMIT` bytes of text so the channel and the
//! listener's buffers stay bounded.

use serde::Serialize;
use std::time::SystemTime;
use tokio::sync::mpsc;

/// The most text a log entry keeps; the whole message is in the turn that carried it.
pub const LOG_TEXT_LIMIT: usize = 64 * 1024;

/// Identifies one connection (one MCP session) for the life of the program.
pub type ConnectionId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    /// A JSON-RPC message this client sent.
    Sent,
    /// A JSON-RPC message the server sent.
    Received,
    /// A `notifications/message` log line from the server.
    ServerLog,
    /// A `notifications/progress` from the server.
    Progress,
    /// A line the server process wrote to its stderr.
    Stderr,
    /// Something the client noticed: a line that is not JSON-RPC, an oversized message,
    /// a connection that ended.
    Client,
}

impl LogKind {
    pub fn label(self) -> &'static str {
        match self {
            LogKind::Sent => "->",
            LogKind::Received => "<-",
            LogKind::ServerLog => "log",
            LogKind::Progress => "progress",
            LogKind::Stderr => "stderr",
            LogKind::Client => "client",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct LogEntry {
    #[serde(with = "time_millis")]
    pub at: SystemTime,
    pub connection: ConnectionId,
    pub kind: LogKind,
    /// The message (possibly cut at `LOG_TEXT_LIMIT`).
    pub text: String,
    /// The size of the whole message in bytes.
    pub size: usize,
}

impl LogEntry {
    pub fn new(connection: ConnectionId, kind: LogKind, text: impl Into<String>) -> LogEntry {
        let mut text = text.into();
        let size = text.len();
        if size > LOG_TEXT_LIMIT {
            let mut cut = LOG_TEXT_LIMIT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        LogEntry {
            at: SystemTime::now(),
            connection,
            kind,
            text,
            size,
        }
    }

    pub fn truncated(&self) -> bool {
        self.size > self.text.len()
    }
}

mod time_millis {
    use serde::Serializer;
    use std::time::{SystemTime, UNIX_EPOCH};

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        let ms = t
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        s.serialize_u128(ms)
    }
}

/// Everything the client layer reports.
#[derive(Clone, Debug)]
pub enum Event {
    Log(LogEntry),
    /// Progress of a request in flight (also logged).
    Progress {
        connection: ConnectionId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A task (SEP-2663) a call is waiting for changed: its status or its message (also
    /// logged).
    Task {
        connection: ConnectionId,
        note: crate::client::task::TaskNote,
    },
    /// A server asked for OAuth and a sign-in is under way, done or failed (also logged).
    SignIn {
        connection: ConnectionId,
        /// The server's name in its definition (the connection has no other name yet while it
        /// signs in during the handshake).
        server: String,
        notice: crate::client::oauth::SignInNotice,
    },
    /// The server said its list of tools or resources changed (`notifications/*/list_changed`):
    /// what was learnt from them (the BKN tools, the completion data) is to be read again.
    ListChanged {
        connection: ConnectionId,
        /// "tools" or "resources".
        what: &'static str,
    },
    /// A connection ended (the server exited, the session expired, the user closed it).
    Closed {
        connection: ConnectionId,
        reason: String,
    },
}

/// Where events go; a sink with no receiver drops them (headless commands that do not care).
#[derive(Clone, Debug, Default)]
pub struct EventSink {
    tx: Option<mpsc::UnboundedSender<Event>>,
}

impl EventSink {
    pub fn new(tx: mpsc::UnboundedSender<Event>) -> EventSink {
        EventSink { tx: Some(tx) }
    }

    pub fn none() -> EventSink {
        EventSink { tx: None }
    }

    pub fn emit(&self, event: Event) {
        if let Some(tx) = &self.tx {
            // A listener that went away is not an error of the connection.
            let _ = tx.send(event);
        }
    }

    pub fn log(&self, connection: ConnectionId, kind: LogKind, text: impl Into<String>) {
        if self.tx.is_some() {
            self.emit(Event::Log(LogEntry::new(connection, kind, text)));
        }
    }

    pub fn wants_logs(&self) -> bool {
        self.tx.is_some()
    }
}
