//! What the client does with the notifications a server sends: log lines and progress go to
//! the event channel, and progress also pushes back the deadline of the request in flight.

#![allow(deprecated)] // MCP logging is deprecated in rmcp (SEP-2577) but servers still send it.

use crate::client::event::{ConnectionId, Event, EventSink, LogKind};
use crate::client::listen::ListChanges;
use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion, ServerNotification,
};
use rmcp::service::NotificationContext;
use tokio::sync::watch;

use crate::client::answers::{self, Answers, AskSink};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};
use rmcp::service::RequestContext;

/// The defaults a form's schema gives its fields.
fn schema_defaults(schema: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, p)| p.get("default").map(|d| (name.clone(), d.clone())))
                .collect()
        })
        .unwrap_or_default()
}

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
    /// without, such a request is put to a person when there is one (`ask`), else refused
    /// with an error that names what was asked.
    answers: Option<std::sync::Arc<Answers>>,
    ask: Option<AskSink>,
    /// The server's list changes, told once until read again (shared with the 2026-07-28
    /// listen stream, `listen.rs`).
    changes: std::sync::Arc<ListChanges>,
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
        ask: Option<AskSink>,
    ) -> (Handler, watch::Receiver<u64>) {
        let (progress, watcher) = watch::channel(0);
        (
            Handler {
                connection,
                changes: ListChanges::new(connection, events.clone()),
                events,
                progress,
                answers,
                ask,
            },
            watcher,
        )
    }

    /// Where the server's list changes are told (the connection's 2026-07-28 listen stream
    /// tells the same).
    pub fn list_changes(&self) -> std::sync::Arc<ListChanges> {
        self.changes.clone()
    }

    /// The refusal of a request nobody answers (said in the log too).
    fn unanswered(&self, method: &str, name: Option<&str>, asked: &str) -> McpError {
        let why = answers::unanswered(method, name, asked);
        self.events
            .log(self.connection, LogKind::Client, why.clone());
        McpError::new(rmcp::model::ErrorCode(answers::UNANSWERED_CODE), why, None)
    }

    /// What the person at the explorer answers (None: they declined), when there is one;
    /// `Err` when nobody can answer (the refusal names what was asked).
    async fn ask_person(
        &self,
        method: &'static str,
        name: Option<&str>,
        asked: &str,
        prefill: String,
    ) -> Result<Option<String>, McpError> {
        let Some(sink) = &self.ask else {
            return Err(self.unanswered(method, name, asked));
        };
        let (reply, answered) = tokio::sync::oneshot::channel();
        let ask = answers::Ask {
            connection: self.connection,
            method,
            name: name.map(str::to_owned),
            message: asked.to_owned(),
            prefill,
            reply,
        };
        if sink.0.send(ask).is_err() {
            return Err(self.unanswered(method, name, asked));
        }
        // The person's time is theirs: no deadline here (the server's own applies).
        let answer = answered.await.unwrap_or(None);
        self.events.log(
            self.connection,
            LogKind::Client,
            match &answer {
                Some(text) => {
                    format!("the server asked for {method} (\"{asked}\"); answered: {text}")
                }
                None => format!("the server asked for {method} (\"{asked}\"); declined"),
            },
        );
        Ok(answer)
    }

    /// The answers file's answer to what the server asks (`method`, the input request's
    /// `name` over 2026-07-28, `asked` its message), read as `T`; None when it has none.
    /// Logged, so the user sees what the server wanted.
    fn answer<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        name: Option<&str>,
        asked: &str,
    ) -> Option<Result<T, McpError>> {
        let answer = self
            .answers
            .as_ref()
            .and_then(|a| a.for_request(name, method))?;
        self.events.log(
            self.connection,
            LogKind::Client,
            format!(
                "the server asked for {method} (\"{asked}\"); answered from --answers: {answer}"
            ),
        );
        Some(serde_json::from_value(answer.clone()).map_err(|e| {
            McpError::invalid_request(
                format!("the --answers entry for {method} is not its result: {e}"),
                None,
            )
        }))
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
        if self.answers.is_some() || self.ask.is_some() {
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
        let name = input_name(&context);
        let (asked, defaults) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message.clone(),
                schema_defaults(&serde_json::to_value(requested_schema).unwrap_or_default()),
            ),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                (format!("{message} ({url})"), serde_json::Map::new())
            }
            other => (
                serde_json::to_string(other).unwrap_or_default(),
                serde_json::Map::new(),
            ),
        };
        let mut answer: ElicitResult =
            match self.answer(answers::ELICITATION, name.as_deref(), &asked) {
                Some(answer) => answer?,
                None => {
                    let prefill = serde_json::Value::Object(defaults.clone()).to_string();
                    let typed = self
                        .ask_person(answers::ELICITATION, name.as_deref(), &asked, prefill)
                        .await?;
                    match typed {
                        None => ElicitResult::new(rmcp::model::ElicitationAction::Decline),
                        Some(text) => ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                            .with_content(
                                crate::protocol::json::from_str(&text)
                                    .unwrap_or(serde_json::Value::String(text)),
                            ),
                    }
                }
            };
        // An accepted form takes the schema's defaults for what the answer leaves out, as a
        // form filled in by a person starts from them (SEP-1034).
        if answer.action == rmcp::model::ElicitationAction::Accept {
            let mut content = match answer.content.take() {
                Some(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            for (name, default) in defaults {
                content.entry(name).or_insert(default);
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
        let name = input_name(&context);
        let asked = params
            .messages
            .last()
            .and_then(|m| serde_json::to_value(&m.content).ok())
            .map(|c| match c.get("text").and_then(|t| t.as_str()) {
                Some(text) => text.to_owned(),
                None => c.to_string(),
            })
            .unwrap_or_default();
        match self.answer(answers::SAMPLING, name.as_deref(), &asked) {
            Some(answer) => answer,
            None => {
                // The person writes the reply a model would have given (as MCP Inspector
                // lets one do).
                match self
                    .ask_person(answers::SAMPLING, name.as_deref(), &asked, String::new())
                    .await?
                {
                    Some(text) => Ok(CreateMessageResult::new(
                        rmcp::model::SamplingMessage::assistant_text(text),
                        "a person at bkn-explorer".into(),
                    )),
                    None => Err(McpError::new(
                        rmcp::model::ErrorCode(answers::UNANSWERED_CODE),
                        "the person at the explorer declined to write the reply",
                        None,
                    )),
                }
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.changed("tools");
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.changed("resources");
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
