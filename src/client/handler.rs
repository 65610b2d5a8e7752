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

/// A sampling message's content as text to read: its text, else its JSON.
fn sampled_text<T: serde::Serialize>(content: &T) -> String {
    let value = serde_json::to_value(content).unwrap_or_default();
    match value.get("text").and_then(|t| t.as_str()) {
        Some(text) => text.to_owned(),
        None => value.to_string(),
    }
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
    responder: Responder,
    /// The server's list changes, told once until read again (shared with the 2026-07-28
    /// listen stream, `listen.rs`).
    changes: std::sync::Arc<ListChanges>,
    /// Whether to declare the tasks extension (SEP-2663): when the client may speak
    /// 2026-07-28, whose extension it is (the client then follows a task to its result).
    tasks: bool,
}

/// What answers a server's requests of its own (elicitations, samplings): from `--answers`,
/// else from the person at the explorer (`ask`), else a refusal that names what was asked.
/// Cloned into the HTTP hot path, where such a request can come on a turn's response.
#[derive(Clone)]
pub struct Responder {
    connection: ConnectionId,
    events: EventSink,
    answers: Option<std::sync::Arc<Answers>>,
    ask: Option<AskSink>,
    /// What the server asked and was given, for the turn in flight to keep.
    asked: answers::AskedLog,
    /// What a replayed turn's recording gave, for the turn in flight.
    recorded: std::sync::Arc<std::sync::Mutex<answers::RecordedAnswers>>,
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
        tasks: bool,
    ) -> (Handler, watch::Receiver<u64>) {
        let (progress, watcher) = watch::channel(0);
        (
            Handler {
                connection,
                changes: ListChanges::new(connection, events.clone()),
                events: events.clone(),
                progress,
                responder: Responder {
                    connection,
                    events,
                    answers,
                    ask,
                    asked: Default::default(),
                    recorded: Default::default(),
                },
                tasks,
            },
            watcher,
        )
    }

    /// Where the server's list changes are told (the connection's 2026-07-28 listen stream
    /// tells the same).
    pub fn list_changes(&self) -> std::sync::Arc<ListChanges> {
        self.changes.clone()
    }

    /// What the server asked since the last turn took it (see `answers::Asked`).
    pub fn take_asked(&self) -> Vec<answers::Asked> {
        self.responder.take_asked()
    }

    /// What the recording being replayed gave at the turn about to be sent: given again
    /// when the server asks the same (after `--answers`, before the person).
    pub fn answer_turn_as_recorded(&self, asked: &[answers::Asked]) {
        *self
            .responder
            .recorded
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = answers::RecordedAnswers::of(asked);
    }

    /// What answers the server's own requests, for a path outside rmcp.
    pub fn responder(&self) -> Responder {
        self.responder.clone()
    }
}

impl Responder {
    /// What the server asked since the last turn took it (see `answers::Asked`).
    pub fn take_asked(&self) -> Vec<answers::Asked> {
        self.asked.take()
    }

    /// Whether anything answers (the capabilities to declare).
    pub fn can_answer(&self) -> bool {
        self.answers.is_some() || self.ask.is_some()
    }

    /// Keeps what was asked and given, for the turn in flight.
    fn keep(
        &self,
        method: &str,
        name: Option<&str>,
        asked: &str,
        by: answers::AnsweredBy,
        answer: Result<serde_json::Value, String>,
    ) {
        let (answer, refusal) = match answer {
            Ok(answer) => (Some(answer), None),
            Err(refusal) => (None, Some(refusal)),
        };
        self.asked.push(answers::Asked {
            method: method.to_owned(),
            name: name.map(str::to_owned),
            message: asked.to_owned(),
            by,
            answer,
            refusal,
        });
    }

    /// The refusal of a request nobody answers (said in the log, and kept with the turn).
    fn unanswered(
        &self,
        method: &str,
        name: Option<&str>,
        asked: &str,
        asking: Option<&answers::Asking>,
    ) -> McpError {
        let why = answers::unanswered(method, name, asked, asking);
        self.events
            .log(self.connection, LogKind::Client, why.clone());
        self.keep(
            method,
            name,
            asked,
            answers::AnsweredBy::Nobody,
            Err(why.clone()),
        );
        McpError::new(rmcp::model::ErrorCode(answers::UNANSWERED_CODE), why, None)
    }

    /// What the person at the explorer answers, when there is one; `Err` when nobody can
    /// answer (the refusal names what was asked).
    async fn ask_person(
        &self,
        method: &'static str,
        name: Option<&str>,
        asked: &str,
        asking: answers::Asking,
    ) -> Result<answers::Reply, McpError> {
        let Some(sink) = &self.ask else {
            return Err(self.unanswered(method, name, asked, Some(&asking)));
        };
        let (reply, answered) = tokio::sync::oneshot::channel();
        let ask = answers::Ask {
            connection: self.connection,
            method,
            name: name.map(str::to_owned),
            message: asked.to_owned(),
            asking,
            reply,
        };
        if let Err(unsent) = sink.0.send(ask) {
            return Err(self.unanswered(method, name, asked, Some(&unsent.0.asking)));
        }
        // The person's time is theirs: no deadline here (the server's own applies). A
        // question nobody will answer any more (the explorer closing) is dismissed.
        Ok(answered.await.unwrap_or(answers::Reply::Cancel))
    }

    /// Logs what was given to what the server asked, and keeps it with the turn.
    fn gave(
        &self,
        method: &str,
        name: Option<&str>,
        asked: &str,
        by: answers::AnsweredBy,
        answer: Result<serde_json::Value, String>,
    ) {
        let from = match by {
            answers::AnsweredBy::File => " from --answers",
            answers::AnsweredBy::Recording => " as recorded",
            _ => "",
        };
        let what = match &answer {
            Ok(answer) => format!("answered{from}: {answer}"),
            Err(why) => format!("not answered: {why}"),
        };
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("the server asked for {method} (\"{asked}\"); {what}"),
        );
        self.keep(method, name, asked, by, answer);
    }

    /// The answer given without asking a person: the answers file's, else the recording's
    /// being replayed (`method`, the input request's `name` over 2026-07-28), read as `T`,
    /// and who gave it; None when neither has one.
    fn answer<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        name: Option<&str>,
    ) -> Option<(Result<T, McpError>, answers::AnsweredBy)> {
        let (answer, by) = match self
            .answers
            .as_ref()
            .and_then(|a| a.for_request(name, method))
        {
            Some(answer) => (answer.clone(), answers::AnsweredBy::File),
            None => (
                self.recorded
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take(name, method)?,
                answers::AnsweredBy::Recording,
            ),
        };
        let from = match by {
            answers::AnsweredBy::File => "the --answers entry",
            _ => "the recorded answer",
        };
        let read = serde_json::from_value(answer).map_err(|e| {
            McpError::invalid_request(format!("{from} for {method} is not its result: {e}"), None)
        });
        Some((read, by))
    }
    /// The answer to an elicitation (`name`: the 2026-07-28 input request's key).
    pub async fn elicit(
        &self,
        request: ElicitRequestParams,
        name: Option<String>,
    ) -> Result<ElicitResult, McpError> {
        use rmcp::model::ElicitationAction;
        let (asked, schema, asking) = match &request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                let asking = answers::Asking::Form {
                    schema: schema.clone(),
                };
                (message.clone(), schema, asking)
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => (
                message.clone(),
                serde_json::Value::Null,
                answers::Asking::Url { url: url.clone() },
            ),
            other => {
                let what = serde_json::to_string(other).unwrap_or_default();
                return Err(self.unanswered(answers::ELICITATION, name.as_deref(), &what, None));
            }
        };
        let (mut answer, by) =
            match self.answer::<ElicitResult>(answers::ELICITATION, name.as_deref()) {
                Some((answer, by)) => (answer?, by),
                None => {
                    let reply = self
                        .ask_person(answers::ELICITATION, name.as_deref(), &asked, asking)
                        .await?;
                    let answer = match reply {
                        answers::Reply::Accept(content) if content.is_object() => {
                            ElicitResult::new(ElicitationAction::Accept).with_content(content)
                        }
                        answers::Reply::Accept(_) => ElicitResult::new(ElicitationAction::Accept),
                        answers::Reply::Decline => ElicitResult::new(ElicitationAction::Decline),
                        answers::Reply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
                    };
                    (answer, answers::AnsweredBy::Person)
                }
            };
        // An accepted form takes the schema's defaults for what the answer leaves out, as a
        // form filled in by a person starts from them (SEP-1034).
        if answer.action == ElicitationAction::Accept && schema.is_object() {
            let mut content = match answer.content.take() {
                Some(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            for (name, default) in schema_defaults(&schema) {
                content.entry(name).or_insert(default);
            }
            answer.content = Some(serde_json::Value::Object(content));
        }
        self.gave(
            answers::ELICITATION,
            name.as_deref(),
            &asked,
            by,
            Ok(serde_json::to_value(&answer).unwrap_or_default()),
        );
        Ok(answer)
    }

    /// The answer to a sampling request (`name`: the 2026-07-28 input request's key).
    pub async fn sample(
        &self,
        params: CreateMessageRequestParams,
        name: Option<String>,
    ) -> Result<CreateMessageResult, McpError> {
        let messages: Vec<answers::SampledMessage> = params
            .messages
            .iter()
            .map(|m| answers::SampledMessage {
                role: serde_json::to_value(&m.role)
                    .ok()
                    .and_then(|r| r.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                text: sampled_text(&m.content),
            })
            .collect();
        let asked = messages.last().map(|m| m.text.clone()).unwrap_or_default();
        if let Some((answer, by)) =
            self.answer::<CreateMessageResult>(answers::SAMPLING, name.as_deref())
        {
            let answer = answer?;
            self.gave(
                answers::SAMPLING,
                name.as_deref(),
                &asked,
                by,
                Ok(serde_json::to_value(&answer).unwrap_or_default()),
            );
            return Ok(answer);
        }
        let asking = answers::Asking::Sampling {
            messages,
            system: params.system_prompt.clone(),
            max_tokens: params.max_tokens,
        };
        // The person writes the reply a model would have given (as MCP Inspector lets one do).
        match self
            .ask_person(answers::SAMPLING, name.as_deref(), &asked, asking)
            .await?
        {
            answers::Reply::Accept(text) => {
                let text = match text {
                    serde_json::Value::String(text) => text,
                    other => other.to_string(),
                };
                let answer = CreateMessageResult::new(
                    rmcp::model::SamplingMessage::assistant_text(text),
                    "a person at bkn-explorer".into(),
                );
                self.gave(
                    answers::SAMPLING,
                    name.as_deref(),
                    &asked,
                    answers::AnsweredBy::Person,
                    Ok(serde_json::to_value(&answer).unwrap_or_default()),
                );
                Ok(answer)
            }
            answers::Reply::Decline | answers::Reply::Cancel => {
                let why = "the person at the explorer declined to write the reply";
                self.gave(
                    answers::SAMPLING,
                    name.as_deref(),
                    &asked,
                    answers::AnsweredBy::Person,
                    Err(why.into()),
                );
                Err(McpError::new(
                    rmcp::model::ErrorCode(answers::UNANSWERED_CODE),
                    why,
                    None,
                ))
            }
        }
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
        if self.responder.can_answer() {
            capabilities.elicitation = Some(Default::default());
            capabilities.sampling = Some(Default::default());
        }
        if self.tasks {
            let mut extensions = rmcp::model::ExtensionCapabilities::new();
            extensions.insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                serde_json::Map::new(),
            );
            capabilities.extensions = Some(extensions);
        }
        ClientConfig::new(capabilities, info).with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        self.responder.elicit(request, input_name(&context)).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        self.responder.sample(params, input_name(&context)).await
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
