//! What both reference servers share over MCP (MCP-BINDING sections 1-3): one tool whose
//! input and output schemas are the data type's Request and Response schemas, the two kinds
//! of failure kept apart, and the dialogue state of each MCP session.
//!
//! A `Backend` answers conformant Requests; `BknServer` does everything around it. One
//! `BknServer` value is one MCP session: over stdio the process has one, over HTTP the
//! session manager makes one per session, so dialogue state is isolated and dropped with the
//! session by construction.

#![allow(deprecated)] // MCP logging is deprecated in rmcp (SEP-2577) but still what clients show.

use crate::protocol::conformance::{
    DialogueChecker, Finding, check_exchange, check_message_as, ijson_findings,
};
use crate::protocol::ijson::Irregularity;
use crate::protocol::schema;
use crate::protocol::{Interface, Mode};
use crate::server::dialogues::{DialogueLimits, Dialogues, Principal};
use rmcp::ErrorData as McpError;
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A resource a server offers so that clients can compose good Requests.
#[derive(Clone, Debug)]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    pub description: String,
}

/// What answers the Requests of one interface.
pub trait Backend: Send + Sync + 'static {
    /// What the server remembers within one dialogue (commitments, the refined User State).
    type Dialogue: Default + Send + 'static;

    fn interface(&self) -> Interface;

    /// The name of its tool (the interface's own, unless a recording named another).
    fn tool_name(&self) -> String {
        self.interface().tool_name().to_owned()
    }

    /// The AIM ID the Responses name as their source in DataXMData.
    fn aim_id(&self) -> &str;

    /// A paragraph for the tool description and the server's instructions.
    fn describe(&self) -> String;

    /// Answers a conformant Request (already checked) with a Response.
    fn answer(&self, dialogue: &mut Self::Dialogue, request: &Value) -> Value;

    fn resources(&self) -> Vec<ResourceInfo>;

    /// The JSON of a resource, if the URI names one.
    fn read(&self, uri: &str) -> Option<Value>;

    /// One line about a turn for the MCP log, e.g. "turn 3 feasibility: partially_feasible".
    fn summarize(&self, request: &Value, response: &Value) -> String {
        let turn = request.get("TurnIndex").cloned().unwrap_or_default();
        let outcome = response
            .get("Outcome")
            .and_then(Value::as_str)
            .unwrap_or("?");
        format!("turn {turn}: {outcome}")
    }
}

/// One handler of a reference server: over 2025-11-25 one MCP session (over stdio the
/// process has one, over HTTP the session manager makes one per session, so a session's
/// dialogue is isolated and dropped with it by construction); over 2026-07-28, where rmcp
/// makes a handler per HTTP request, the dialogues are the server's, kept by DialogID in
/// `keyed` (shared by every handler of the server).
pub struct BknServer<B: Backend> {
    backend: Arc<B>,
    session: Arc<Mutex<Session<B::Dialogue>>>,
    keyed: Arc<Dialogues<DialogueState<B::Dialogue>>>,
}

impl<B: Backend> Clone for BknServer<B> {
    fn clone(&self) -> Self {
        BknServer {
            backend: self.backend.clone(),
            session: self.session.clone(),
            keyed: self.keyed.clone(),
        }
    }
}

/// What a server remembers of one dialogue, wherever it lives.
#[derive(Default)]
pub struct DialogueState<D> {
    checker: DialogueChecker,
    dialogue: D,
}

struct Session<D> {
    state: DialogueState<D>,
    /// The level the client asked for with logging/setLevel; no log is sent before it asks.
    log_level: Option<LoggingLevel>,
}

/// Where a turn's dialogue lives (MCP-BINDING section 3).
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// In this handler's MCP session (2025-11-25, or any session made by `initialize`).
    Session,
    /// Kept by DialogID for `principal` (2026-07-28: no session); the log level, if any,
    /// came with the request.
    Keyed {
        principal: Principal,
        log_level: Option<LoggingLevel>,
    },
}

impl<B: Backend> BknServer<B> {
    /// A new handler with an empty session, beside the server's dialogues kept by DialogID.
    pub fn new(backend: Arc<B>, keyed: Arc<Dialogues<DialogueState<B::Dialogue>>>) -> Self {
        BknServer {
            backend,
            session: Arc::new(Mutex::new(Session {
                state: DialogueState::default(),
                log_level: None,
            })),
            keyed,
        }
    }

    /// The dialogues kept by DialogID for a server's handlers, within `limits`.
    pub fn keyed_dialogues(limits: DialogueLimits) -> Arc<Dialogues<DialogueState<B::Dialogue>>> {
        Arc::new(Dialogues::new(limits))
    }

    fn tool(&self) -> Tool {
        let interface = self.backend.interface();
        let object = |mode: Mode| -> Arc<JsonObject> {
            match schema::self_contained(interface, mode) {
                Value::Object(map) => Arc::new(map.clone()),
                _ => unreachable!("message schemas are objects"),
            }
        };
        Tool::new(
            self.backend.tool_name(),
            format!(
                "{} ({}): takes a whole {} Request (Mode RQ) as its arguments and returns the \
                 {} Response as structuredContent. {}",
                interface.name(),
                interface.header(),
                interface.name(),
                interface.name(),
                self.backend.describe()
            ),
            object(Mode::Request),
        )
        .with_title(format!("{} {}", interface.name(), interface.server_role()))
        .with_raw_output_schema(object(Mode::Response))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )
    }

    /// Answers a `tools/call` of this session's tool without rmcp's request handling: the
    /// stdio transport's hot path (`server::stdio`). `None` for another tool's name, which
    /// takes rmcp's path and its error.
    pub fn call_directly(
        &self,
        name: &str,
        arguments: Value,
        place: Place,
        irregular: &[Irregularity],
    ) -> Option<DirectAnswer> {
        if name != self.backend.tool_name() {
            return None;
        }
        let (outcome, log) = self.turn(arguments, place, irregular);
        Some(DirectAnswer {
            outcome,
            log: log.map(|(level, line)| {
                LoggingMessageNotificationParam::new(level, Value::String(line))
                    .with_logger(name.to_owned())
            }),
        })
    }

    /// Handles one `tools/call` of the interface's tool: the whole of MCP-BINDING section 2,
    /// on the dialogue `place` says (section 3). Returns the outcome and, when the client
    /// wants logs, a line to log.
    fn turn(
        &self,
        arguments: Value,
        place: Place,
        irregular: &[Irregularity],
    ) -> (TurnOutcome, Option<(LoggingLevel, String)>) {
        match place {
            Place::Session => {
                let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
                let wants_log = wants_info(session.log_level);
                let (outcome, _) = self.answer_in(&mut session.state, arguments, irregular);
                let log = wants_log.then(|| outcome_summary(&*self.backend, &outcome));
                (outcome, log)
            }
            Place::Keyed {
                principal,
                log_level,
            } => {
                let wants_log = wants_info(log_level);
                let outcome = self.keyed_turn(arguments, principal, irregular);
                let log = wants_log.then(|| outcome_summary(&*self.backend, &outcome));
                (outcome, log)
            }
        }
    }

    /// A turn of a dialogue kept by DialogID: its state found (or made for a first turn), or
    /// a tool error that says why there is none (never an answer from empty state).
    fn keyed_turn(
        &self,
        arguments: Value,
        principal: Principal,
        irregular: &[Irregularity],
    ) -> TurnOutcome {
        let Some(dialog_id) = arguments.get("DialogID").and_then(Value::as_str) else {
            // Not conformant: its own checks say why, on state that is thrown away.
            return self
                .answer_in(&mut DialogueState::default(), arguments, irregular)
                .0;
        };
        let turn = arguments.get("TurnIndex").and_then(turn_index);
        match self.keyed.lease(principal, dialog_id, turn) {
            Err(refusal) => {
                let interface = self.backend.interface();
                let mut lines = vec![refusal.sentence()];
                lines.extend(
                    ijson_findings(&arguments, irregular, Some(interface))
                        .into_iter()
                        .chain(
                            check_message_as(&arguments, Some(interface), Some(Mode::Request))
                                .findings,
                        )
                        .map(|f| f.to_string()),
                );
                tracing::info!(dialog = dialog_id, "refused a turn: {}", lines[0]);
                TurnOutcome::Rejected(lines.join("\n"))
            }
            Ok(mut lease) => {
                let state = lease.state.clone();
                let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
                let (outcome, accepted) = self.answer_in(&mut state, arguments, irregular);
                drop(state);
                if accepted {
                    lease.opened();
                }
                outcome
            }
        }
    }

    /// Checks a Request against the dialogue `state` holds and answers it when it conforms.
    /// Also says whether it was accepted (a rejected Request changes nothing).
    fn answer_in(
        &self,
        state: &mut DialogueState<B::Dialogue>,
        arguments: Value,
        irregular: &[Irregularity],
    ) -> (TurnOutcome, bool) {
        let interface = self.backend.interface();
        // What I-JSON forbids in its text (a member given twice, a number beyond a double),
        // when the transport read it as text.
        let mut findings = ijson_findings(&arguments, irregular, Some(interface));
        findings
            .extend(check_message_as(&arguments, Some(interface), Some(Mode::Request)).findings);
        findings.extend(state.checker.check(&arguments));
        if !findings.is_empty() {
            // Section 2.1: a tool error listing each violation; no dialogue state changes.
            let text = findings
                .iter()
                .map(Finding::to_string)
                .collect::<Vec<_>>()
                .join("\n");
            tracing::info!(
                violations = findings.len(),
                "rejected a non-conformant Request"
            );
            return (TurnOutcome::Rejected(text), false);
        }
        state.checker.accept(&arguments);
        let response = self.backend.answer(&mut state.dialogue, &arguments);
        // The reference server is the reference: it checks its own Responses and says loudly
        // when one is wrong (tests fail on it too).
        let mut own = check_message_as(&response, Some(interface), Some(Mode::Response)).findings;
        own.extend(check_exchange(&arguments, &response));
        own.extend(state.checker.check(&response));
        for f in &own {
            tracing::error!(finding = %f, "the reference server produced a non-conformant Response");
        }
        state.checker.accept(&response);
        (
            TurnOutcome::Answered {
                request: arguments,
                response,
            },
            true,
        )
    }
}

/// A TurnIndex as a number, `2.0` as `2` (MCP-BINDING section 6); None when it is not one.
fn turn_index(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            .map(|f| f as u64)
    })
}

fn wants_info(level: Option<LoggingLevel>) -> bool {
    level.is_some_and(|l| level_rank(l) <= level_rank(LoggingLevel::Info))
}

/// The log line of a turn, and its level.
fn outcome_summary<B: Backend>(backend: &B, outcome: &TurnOutcome) -> (LoggingLevel, String) {
    match outcome {
        TurnOutcome::Answered { request, response } => {
            (LoggingLevel::Info, backend.summarize(request, response))
        }
        TurnOutcome::Rejected(text) => (
            LoggingLevel::Warning,
            format!(
                "rejected a non-conformant Request: {} violation(s)",
                text.lines().count()
            ),
        ),
    }
}

/// How a turn ended (MCP-BINDING section 2).
pub enum TurnOutcome {
    /// The Response, for `structuredContent` and its text block, and the Request it answers.
    Answered { request: Value, response: Value },
    /// A non-conformant Request: a tool error whose text lists each violation.
    Rejected(String),
}

impl TurnOutcome {
    pub fn into_result(self) -> CallToolResult {
        match self {
            TurnOutcome::Answered { response, .. } => CallToolResult::structured(response),
            TurnOutcome::Rejected(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
        }
    }
}

/// A turn answered on the stdio transport's hot path, and the log message to send before it
/// when the client asked for logs.
pub struct DirectAnswer {
    pub outcome: TurnOutcome,
    pub log: Option<LoggingMessageNotificationParam>,
}

fn level_rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl<B: Backend> ServerHandler for BknServer<B> {
    fn get_info(&self) -> ServerConfig {
        let interface = self.backend.interface();
        let mut info = Implementation::new(
            format!("bkn-explorer-{}", interface.code()),
            env!("CARGO_PKG_VERSION"),
        );
        info.title = Some(format!(
            "bkn-explorer reference {}",
            interface.server_role()
        ));
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_logging()
                // None to offer, but a client that asks gets an empty list, not -32601.
                .enable_prompts()
                .build(),
        )
        .with_server_info(info)
        .with_instructions(format!(
            "Reference {} server for {} ({}). Call the {} tool with a whole Request. Over MCP \
             2025-11-25 one MCP session is one dialogue; over 2026-07-28 (no session) a \
             dialogue is kept by its DialogID. {}",
            interface.server_role(),
            interface.name(),
            interface.header(),
            self.backend.tool_name(),
            self.backend.describe()
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![self.tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tool = self.backend.tool_name();
        if request.name != tool.as_str() {
            return Err(McpError::invalid_params(
                format!("unknown tool {}: this server has {tool}", request.name),
                None,
            ));
        }
        let parts = context.extensions.get::<http::request::Parts>();
        // Arguments too deep for rmcp's reader were read by the HTTP layer.
        let deep = parts
            .and_then(|p| {
                p.extensions
                    .get::<crate::server::transport::DeepArguments>()
            })
            .map(|d| d.0.clone());
        let arguments = Value::Object(deep.or(request.arguments).unwrap_or_default());
        let place = place_of(&context, parts);
        let (outcome, log) = self.turn(arguments, place, &[]);
        if let Some((level, line)) = log {
            let param =
                LoggingMessageNotificationParam::new(level, Value::String(line)).with_logger(tool);
            // A client that went away cannot be told; the answer still stands.
            let _ = context.peer.notify_logging_message(param).await;
        }
        Ok(outcome.into_result().into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        Ok(rmcp::model::ListPromptsResult::with_all_items(Vec::new()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources = self
            .backend
            .resources()
            .into_iter()
            .map(|r| {
                Resource::new(r.uri, r.name)
                    .with_description(r.description)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match self.backend.read(&request.uri) {
            Some(value) => {
                let text = serde_json::to_string_pretty(&value).unwrap_or_default();
                let contents =
                    ResourceContents::text(text, request.uri).with_mime_type("application/json");
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            None => Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            )),
        }
    }

    /// rmcp hands over as "custom" a request of a standard method whose params it could not
    /// read (a `tools/call` whose arguments are not an object): that is -32602 Invalid params,
    /// not an unknown method.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        if crate::server::jsonrpc::STANDARD_METHODS.contains(&request.method.as_str()) {
            let why =
                crate::server::jsonrpc::invalid_params(&request.method, request.params.as_ref());
            return Err(McpError::invalid_params(
                format!("Invalid params of {}: {why}", request.method),
                None,
            ));
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            None,
        ))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .log_level = Some(request.level);
        Ok(())
    }
}

/// Where the dialogue of a request lives: a 2026-07-28 request (its version in `_meta`, no
/// session) has it kept by DialogID for the credentials it came with; any other, in the
/// handler's session.
fn place_of(context: &RequestContext<RoleServer>, parts: Option<&http::request::Parts>) -> Place {
    let stateless = context
        .meta
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if !stateless {
        return Place::Session;
    }
    let credentials = parts
        .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok());
    Place::Keyed {
        principal: Principal::of(credentials),
        log_level: context.meta.log_level(),
    }
}
