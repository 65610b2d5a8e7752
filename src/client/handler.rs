//! What the client does with the notifications a server sends: log lines and progress go to
//! the event channel, and progress also pushes back the deadline of the request in flight.

#![allow(deprecated)] // MCP logging is deprecated in rmcp (SEP-2577) but servers still send it.

use crate::client::event::{ConnectionId, Event, EventSink, LogKind};
use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion, ServerNotification,
};
use rmcp::service::NotificationContext;
use tokio::sync::watch;

/// The client handler of one connection.
pub struct Handler {
    connection: ConnectionId,
    events: EventSink,
    /// Counts progress notifications; a request waiting on this connection watches it.
    progress: watch::Sender<u64>,
}

impl Handler {
    /// A notification that came outside rmcp (on a turn's response on the HTTP hot path):
    /// handled as rmcp would hand it over.
    pub fn notified(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::LoggingMessageNotification(n) => self.logged(n.params),
            ServerNotification::ProgressNotification(n) => self.progressed(n.params),
            _ => {}
        }
    }

    fn logged(&self, p: LoggingMessageNotificationParam) {
        let data = match &p.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let logger = p.logger.map(|l| format!("{l}: ")).unwrap_or_default();
        let level = serde_json::to_value(p.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.events.log(
            self.connection,
            LogKind::ServerLog,
            format!("[{level}] {logger}{data}"),
        );
    }

    fn progressed(&self, p: ProgressNotificationParam) {
        self.progress.send_modify(|n| *n += 1);
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        let message = p
            .message
            .clone()
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        self.events.log(
            self.connection,
            LogKind::Progress,
            format!("{}{total}{message}", p.progress),
        );
        self.events.emit(Event::Progress {
            connection: self.connection,
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    }

    pub fn new(connection: ConnectionId, events: EventSink) -> (Handler, watch::Receiver<u64>) {
        let (progress, watcher) = watch::channel(0);
        (
            Handler {
                connection,
                events,
                progress,
            },
            watcher,
        )
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut info = Implementation::new("bkn-explorer", env!("CARGO_PKG_VERSION"));
        info.title = Some("bkn-explorer".into());
        // The initialize lifecycle with sessions (2025-11-25): a dialogue is an MCP session,
        // and pinning the version is kinder to servers that do not know newer ones.
        ClientConfig::new(ClientCapabilities::default(), info)
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_logging_message(
        &self,
        p: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logged(p);
    }

    async fn on_progress(
        &self,
        p: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progressed(p);
    }
}
