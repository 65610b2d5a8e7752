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

use crate::client::answers::{self, Answers};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};
use rmcp::service::RequestContext;

/// The name of a 2026-07-28 input request (rmcp drives each with its key as the id); a
/// server's own request over 2025-11-25 has a number, and no name.
fn input_name(context: &RequestContext<RoleClient>) -> Option<String> {
    match &context.id {
        rmcp::model::NumberOrString::String(key) => Some(key.to_string()),
        rmcp::model::NumberOrString::Number(_) => None,
    }
}

/// The client handler of one connection.
pub struct Handler {
    connection: ConnectionId,
    events: EventSink,
    /// Counts progress notifications; a request waiting on this connection watches it.
    progress: watch::Sender<u64>,
    /// What to answer when the server asks for an elicitation or a sampling (`--answers`);
    /// without, such a request is refused with an error that names what was asked.
    answers: Option<std::sync::Arc<Answers>>,
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

    pub fn new(
        connection: ConnectionId,
        events: EventSink,
        answers: Option<std::sync::Arc<Answers>>,
    ) -> (Handler, watch::Receiver<u64>) {
        let (progress, watcher) = watch::channel(0);
        (
            Handler {
                connection,
                events,
                progress,
                answers,
            },
            watcher,
        )
    }

    /// The answer to what the server asks (`method`, the input request's `name` over
    /// 2026-07-28, `asked` its message), read as `T`; the error names what was asked. Logged
    /// either way, so the user sees what the server wanted.
    fn answer<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        name: Option<&str>,
        asked: &str,
    ) -> Result<T, McpError> {
        let found = self
            .answers
            .as_ref()
            .and_then(|a| a.for_request(name, method));
        let Some(answer) = found else {
            let why = answers::unanswered(method, name, asked);
            self.events
                .log(self.connection, LogKind::Client, why.clone());
            return Err(McpError::new(
                rmcp::model::ErrorCode(answers::UNANSWERED_CODE),
                why,
                None,
            ));
        };
        self.events.log(
            self.connection,
            LogKind::Client,
            format!(
                "the server asked for {method} (\"{asked}\"); answered from --answers: {answer}"
            ),
        );
        serde_json::from_value(answer.clone()).map_err(|e| {
            McpError::invalid_request(
                format!("the --answers entry for {method} is not its result: {e}"),
                None,
            )
        })
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut info = Implementation::new("bkn-explorer", env!("CARGO_PKG_VERSION"));
        info.title = Some("bkn-explorer".into());
        // The initialize lifecycle with sessions (2025-11-25): a dialogue is an MCP session,
        // and pinning the version is kinder to servers that do not know newer ones.
        // Elicitation and sampling are declared when there is something to answer with.
        let mut capabilities = ClientCapabilities::default();
        if self.answers.is_some() {
            capabilities.elicitation = Some(Default::default());
            capabilities.sampling = Some(Default::default());
        }
        ClientConfig::new(capabilities, info).with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let asked = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message.clone(),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                format!("{message} ({url})")
            }
            other => serde_json::to_string(other).unwrap_or_default(),
        };
        let mut answer: ElicitResult = self.answer(
            answers::ELICITATION,
            input_name(&context).as_deref(),
            &asked,
        )?;
        // An accepted form takes the schema's defaults for what the answer leaves out, as a
        // form filled in by a person starts from them (SEP-1034).
        if let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = &request
            && answer.action == rmcp::model::ElicitationAction::Accept
        {
            let schema = serde_json::to_value(requested_schema).unwrap_or_default();
            let mut content = match answer.content.take() {
                Some(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            if let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) {
                for (name, property) in properties {
                    if let Some(default) = property.get("default")
                        && !content.contains_key(name)
                    {
                        content.insert(name.clone(), default.clone());
                    }
                }
            }
            answer.content = Some(serde_json::Value::Object(content));
        }
        Ok(answer)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        let asked = params
            .messages
            .last()
            .and_then(|m| serde_json::to_value(&m.content).ok())
            .map(|c| c.to_string())
            .unwrap_or_default();
        self.answer(answers::SAMPLING, input_name(&context).as_deref(), &asked)
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
