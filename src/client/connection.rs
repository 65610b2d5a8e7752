//! A connection: one MCP session with one server, over stdio (a child process) or Streamable
//! HTTP. Connecting also discovers what the server offers; calls run with a timeout that
//! progress pushes back and can be cancelled. Every failure comes back as an error that says
//! what happened in words (with the server's exit status and last stderr line where there is
//! one), never as a panic.

use crate::client::affinity::SharedCpu;
use crate::client::event::{ConnectionId, Event, EventSink, LogKind};
use crate::client::generation::{self, ProtocolChoice, StateHome};
use crate::client::handler::Handler;
use crate::client::http::LoggingHttpClient;
use crate::client::http_turn::{HttpTurns, SessionHeaders, TurnFailure, TurnPlace};
use crate::client::limits;
use crate::client::listen::{self, ListChanges};
use crate::client::oauth::client::{Authorizer, AuthorizingClient};
use crate::client::oauth::{OAuthOptions, SignInNotice};
use crate::client::param_headers;
use crate::client::spec::{self, ServerSpec, TransportSpec};
use crate::client::stdio::{Direct, Health, ServerInput, ServerOutput, StdioTransport};
use crate::client::task::{Called, Stopped};
use crate::protocol::conformance::{Check, Finding};
use crate::protocol::message::new_id;
use crate::protocol::resources::{self, Published};
use crate::protocol::{Interface, Requirement};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorData, JsonObject, Prompt,
    ReadResourceRequestParams, Resource, ResourceContents, ServerJsonRpcMessage, ServerResult,
    Tool,
};
use rmcp::service::ClientServiceExt;
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What a connection needs besides the server's definition.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// How long to wait for the handshake, and for each request (progress extends it).
    pub timeout: Duration,
    /// The largest message taken from the server.
    pub max_message_bytes: usize,
    pub events: EventSink,
    /// The program that runs embedded reference servers (this executable by default; tests
    /// point it at the built binary).
    pub embedded_program: Option<PathBuf>,
    /// Ask the server for its log (logging/setLevel info), for a log pane to show.
    pub subscribe_logs: bool,
    /// OAuth for HTTP servers that want it (not used with a token or an Authorization
    /// header given).
    pub oauth: OAuthOptions,
    /// Runs an embedded reference server (one without extra arguments) inside this process
    /// instead of as a child: one program start and one compilation of the schemas instead
    /// of two, for one-shot commands (`send`). Made by the layer that knows the servers.
    pub in_process: Option<InProcess>,
    /// Keeps this thread and an embedded reference server started as a child on one CPU
    /// (`affinity`): for commands that hold one sequential dialogue on a current-thread
    /// runtime (`dialogue`, `test`, `replay`), where a turn's hand-over across CPUs costs more
    /// than the turn's work. Never for servers the user names: their threads are not ours to
    /// place.
    pub share_cpu: bool,
    /// One HTTP client for every connection made with these options, instead of one each.
    /// Making one reads the system's root certificates (a few milliseconds): `load --fresh`,
    /// which opens a session for each time through a scenario, spent half its CPU on it. The
    /// client's pooled connections live on the runtime they were made on, so it is shared
    /// only by connections on one runtime.
    pub http_client: Option<reqwest::Client>,
    /// The MCP generation named on the command line, if any: it wins over a server's own
    /// `protocol` in its servers file.
    pub protocol: Option<ProtocolChoice>,
    /// The generation when neither the command line nor the server's entry names one
    /// (config.toml's `protocol`, else auto).
    pub protocol_default: ProtocolChoice,
    /// What to answer when a server asks for an elicitation or a sampling (`--answers`).
    pub answers: Option<Arc<crate::client::answers::Answers>>,
    /// Where to put what a server asks when `answers` has nothing for it: a person (the
    /// explorer).
    pub ask: Option<crate::client::answers::AskSink>,
    /// Who hears of the tasks a call waits for, besides the log and the events (a headless
    /// command prints them).
    pub task_notes: Option<crate::client::task::TaskNotes>,
}

/// How long a kept-alive connection waits in the client's pool: less than the servers'
/// own wait for a next request (10 s for this program's listeners, 5 s for Node's), so that
/// the client lets it go first, rather than send a turn on a connection the server is closing
/// at that moment (a failed turn, not retried once sent).
pub const POOL_IDLE: Duration = Duration::from_secs(4);

/// The HTTP client a connection uses unless one is given (`ConnectOptions::http_client`).
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(timeout)
        .pool_idle_timeout(POOL_IDLE)
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))
}

/// Starts the reference server of an interface on the current runtime and gives the
/// client's ends of the pipe between them (what the server writes, what it reads).
#[derive(Clone)]
pub struct InProcess(pub Arc<StartInProcess>);

pub type StartInProcess =
    dyn Fn(Interface) -> Result<(ServerOutput, ServerInput), String> + Send + Sync;

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InProcess")
    }
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            timeout: Duration::from_secs(30),
            max_message_bytes: 64 * 1024 * 1024,
            events: EventSink::none(),
            embedded_program: None,
            subscribe_logs: false,
            oauth: OAuthOptions::default(),
            in_process: None,
            share_cpu: false,
            http_client: None,
            protocol: None,
            protocol_default: ProtocolChoice::Auto,
            answers: None,
            ask: None,
            task_notes: None,
        }
    }
}

impl ConnectOptions {
    /// The generation to speak with `spec`: the command line's, else the server's entry's,
    /// else the default.
    pub fn protocol_for(&self, spec: &ServerSpec) -> ProtocolChoice {
        self.protocol
            .or(spec.protocol)
            .unwrap_or(self.protocol_default)
    }
}

/// What the server said about itself, and what was found on it.
#[derive(Clone, Debug, Default)]
pub struct ServerSummary {
    /// The version negotiated (2026-07-28 or later: stateless, `generation::StateHome`).
    pub protocol_version: String,
    /// What the client offered: auto, or one pinned generation.
    pub protocol_asked: ProtocolChoice,
    /// The connection goes on with a dialogue that spoke another MCP generation before (a
    /// recorded one, or before a reconnect), and why: what the user is warned of.
    pub generation_note: Option<String>,
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub instructions: Option<String>,
    pub has_tools: bool,
    pub has_resources: bool,
    pub has_prompts: bool,
    pub has_logging: bool,
    pub tools: Vec<Tool>,
    /// The tools it offers that the client hides, and why: their `x-mcp-header` annotations
    /// are invalid (SEP-2243: a client must not call them).
    pub hidden_tools: Vec<HiddenTool>,
    /// The tool that carries each interface (found by its inputSchema Header const, else name).
    pub bkn_tools: BTreeMap<Interface, String>,
    /// How the server's BKN tools break MCP-BINDING section 1 (no outputSchema, no Header
    /// const in the inputSchema).
    pub findings: Vec<Finding>,
    /// The URIs of the resources it offers.
    pub resources: Vec<String>,
    /// The M-Instance (and U-Environment) its resources name, and which resource said so.
    pub published: Option<Published>,
    /// Why its resources could not be read, if they could not.
    pub resource_problem: Option<String>,
}

/// A tool the server offers that the client does not call (`ServerSummary::hidden_tools`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HiddenTool {
    pub name: String,
    pub reason: String,
}

impl std::fmt::Display for HiddenTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool {} is hidden: its x-mcp-header annotations are invalid ({}), and a client \
             must not call such a tool (SEP-2243)",
            self.name, self.reason
        )
    }
}

/// Where the DialogID of the session came from (MCP-BINDING section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogIdOrigin {
    /// The `Mcp-Session-Id` the HTTP server assigned.
    McpSession,
    /// Made by the client: stdio, or an HTTP server without sessions.
    Client,
}

/// Why a connection could not be made.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    pub message: String,
    /// The server's definition asks for `${input:ID}` and no value was given: the explorer
    /// asks the user and tries again.
    pub needs_input: Option<spec::vars::InputRequest>,
    /// The server answered the handshake and refused what was offered (the generation, the
    /// version): another offer may be taken.
    pub refused: bool,
}

impl From<String> for ConnectError {
    fn from(message: String) -> Self {
        ConnectError {
            message,
            needs_input: None,
            refused: false,
        }
    }
}

/// Why a call did not return a result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("no answer within {}{}", crate::duration::show(*.after), .note.as_ref().map(|n| format!("; {n}")).unwrap_or_default())]
    Timeout {
        after: Duration,
        note: Option<String>,
    },
    /// Dropping the call sent the server notifications/cancelled.
    #[error("cancelled before the answer came; the server was sent notifications/cancelled")]
    Cancelled,
    /// The call's task (SEP-2663) was given up: the user cancelled it, or it stopped
    /// changing; the server was sent tasks/cancel.
    #[error("{0}")]
    TaskCancelled(String),
    #[error("{0}")]
    TooLarge(String),
    /// The connection ended: the server exited, closed its output, or the HTTP session ended.
    #[error("{0}")]
    Gone(String),
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Protocol(String),
    /// The server asked for input (an elicitation, a sampling) that this client could not
    /// give; the message names what it asked.
    #[error("{0}")]
    Unanswered(String),
    /// The client does not send this call (a hidden tool): nothing was sent.
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Transport(String),
}

/// A call's error when the server has forgotten the HTTP session.
const SESSION_GONE: &str = "the server no longer knows this HTTP session (404): it expired or the server restarted, and the dialogue's state there (its commitments) is gone; reconnect to start a new dialogue";

/// See `Connection::shown_name`.
pub fn shown_name(given: &str, ours: &str) -> String {
    const MOST: usize = 80;
    let given = given.trim();
    let mut own: String = given
        .chars()
        .take(MOST)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_debug().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if given.chars().count() > MOST {
        own.push('…');
    }
    if own.is_empty() || own == ours {
        ours.to_owned()
    } else {
        format!("{own} ({ours})")
    }
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

pub struct Connection {
    pub id: ConnectionId,
    pub spec: ServerSpec,
    pub summary: ServerSummary,
    pub dialog_id: String,
    pub dialog_id_origin: DialogIdOrigin,
    service: RunningService<RoleClient, Handler>,
    /// The HTTP client, for results too deep for rmcp's reader.
    http: Option<LoggingHttpClient>,
    /// The hot path for turns over stdio (`client::stdio`).
    direct: Option<Arc<Direct>>,
    /// The hot path for turns over HTTP (`client::http_turn`), where it sends what rmcp would.
    http_turns: Option<HttpTurns>,
    progress: watch::Receiver<u64>,
    child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
    health: Arc<Mutex<Health>>,
    /// Set when we close the connection, so that the server's leaving is not news.
    closing: Arc<AtomicBool>,
    timeout: Duration,
    events: EventSink,
    /// Who hears of the tasks a call waits for (`ConnectOptions::task_notes`).
    task_notes: Option<crate::client::task::TaskNotes>,
    /// This thread and the server on one CPU (`ConnectOptions::share_cpu`), until the end.
    _shared_cpu: Option<SharedCpu>,
    /// The server's list changes, told once until read again (`listen.rs`).
    changes: Arc<ListChanges>,
    /// Ends the 2026-07-28 listen stream (`listen::open`): on close, or when dropped.
    listening: tokio_util::sync::DropGuard,
    /// The `x-mcp-header` annotations of the tools that have any (most have none), mirrored
    /// into `Mcp-Param-*` headers on each call over HTTP.
    annotated: HashMap<String, Vec<param_headers::Annotation>>,
}

impl Connection {
    /// The server as messages name it once connected: the name it gives itself in
    /// `serverInfo`, with ours (a stdio server's program, the user's name for it) in
    /// parentheses when it differs, so that "python" becomes "weather-demo (python)". Control
    /// characters in the server's name are escaped, and a long one cut: it is the server's
    /// text.
    pub fn shown_name(&self) -> String {
        shown_name(&self.summary.name, &self.spec.name)
    }
    /// Connects to go on with a dialogue that spoke MCP `before` (the version a session file
    /// or a proxy's recording holds for it, or the one of the connection a reconnect
    /// replaces): that generation is asked for first, unless the command line or the server's
    /// entry pins one. A server that refuses it now is reached as `options` would reach it
    /// (auto: the newest both sides speak); the dialogue goes on, and the summary's
    /// `generation_note` says so, as it does whenever the dialogue now speaks another
    /// generation than before. (A BKN dialogue means the same in either generation:
    /// MCP-BINDING section 3; only where its state lives changes.)
    pub async fn connect_as_before(
        spec: &ServerSpec,
        options: &ConnectOptions,
        before: Option<&str>,
    ) -> Result<Connection, ConnectError> {
        let Some(before) = before.filter(|v| !v.is_empty()) else {
            return Connection::connect(spec, options).await;
        };
        let pinned = options.protocol.or(spec.protocol);
        let as_before = ProtocolChoice::of_version(before);
        let mut connection = match pinned {
            Some(_) => Connection::connect(spec, options).await?,
            None => {
                let mut first = options.clone();
                first.protocol = Some(as_before);
                match Connection::connect(spec, &first).await {
                    Ok(c) => c,
                    Err(refused) if refused.refused => {
                        let mut c = Connection::connect(spec, options).await.map_err(|again| {
                            ConnectError {
                                message: format!(
                                    "{}\nAsked again with --protocol {}: {}",
                                    refused.message,
                                    options.protocol_for(spec),
                                    again.message
                                ),
                                ..again
                            }
                        })?;
                        c.summary.generation_note = Some(format!(
                            "the dialogue spoke MCP {before}, which the server refuses now ({}); \
                             it goes on over {}",
                            refused.message,
                            generation::describe(&c.summary.protocol_version)
                        ));
                        c
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        let now = &connection.summary.protocol_version;
        if connection.summary.generation_note.is_none()
            && generation::is_stateless(before) != generation::is_stateless(now)
        {
            connection.summary.generation_note = Some(format!(
                "the dialogue spoke MCP {before}; it goes on over {}, as --protocol {} asks",
                generation::describe(now),
                connection.summary.protocol_asked
            ));
        }
        Ok(connection)
    }

    /// Connects, initializes and discovers. The connection is one MCP session.
    pub async fn connect(
        spec: &ServerSpec,
        options: &ConnectOptions,
    ) -> Result<Connection, ConnectError> {
        let id = NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed);
        let events = options.events.clone();
        let protocol = options.protocol_for(spec);
        let (handler, progress) = Handler::new(
            id,
            events.clone(),
            options.answers.clone(),
            options.ask.clone(),
            protocol != ProtocolChoice::Session,
        );
        let changes = handler.list_changes();
        let health = Arc::new(Mutex::new(Health::default()));
        let closing = Arc::new(AtomicBool::new(false));
        events.log(
            id,
            LogKind::Client,
            format!("connecting to {} ({})", spec.name, spec.location()),
        );
        if protocol != ProtocolChoice::Auto {
            events.log(
                id,
                LogKind::Client,
                format!("MCP {protocol} only (--protocol)"),
            );
        }
        let setup = Setup {
            id,
            spec,
            options,
            protocol,
            events: &events,
            health: &health,
            closing: &closing,
        };
        let transport = match &spec.transport {
            TransportSpec::Http(h) => setup.over_http(handler, h).await?,
            TransportSpec::Embedded { interface, args }
                if args.is_empty() && options.in_process.is_some() =>
            {
                setup.in_process(handler, *interface).await?
            }
            TransportSpec::Stdio(_) | TransportSpec::Embedded { .. } => {
                setup.child_process(handler).await?
            }
        };
        let mut connection = Connection {
            id,
            spec: spec.clone(),
            summary: summary_of(&transport.service, protocol),
            dialog_id: new_id(),
            dialog_id_origin: DialogIdOrigin::Client,
            service: transport.service,
            http: transport.http,
            direct: transport.direct,
            http_turns: transport.http_turns,
            progress,
            child: transport.child,
            health,
            closing,
            timeout: options.timeout,
            events,
            task_notes: options.task_notes.clone(),
            _shared_cpu: transport.shared_cpu,
            changes,
            listening: CancellationToken::new().drop_guard(),
            annotated: HashMap::new(),
        };
        connection.choose_dialog_id(options.subscribe_logs);
        connection.learn_server(options).await?;
        connection.log_connected();
        Ok(connection)
    }

    /// The DialogID is the MCP session's over a 2025-11-25 HTTP session; otherwise the
    /// client's own (a 2026-07-28 server that still sends a session id is not heard), which
    /// the stdio hot path then sends in each turn's envelope.
    fn choose_dialog_id(&mut self, subscribe_logs: bool) {
        if self.state_home() == StateHome::McpSession
            && let Some(session) = self.http.as_ref().and_then(LoggingHttpClient::session_id)
        {
            self.dialog_id = session;
            self.dialog_id_origin = DialogIdOrigin::McpSession;
        }
        if self.state_home() == StateHome::DialogId
            && let Some(direct) = &self.direct
        {
            direct.set_envelope(envelope(&self.service, subscribe_logs));
        }
    }

    /// After the handshake: what the server offers (tools, resources, prompts), its list
    /// changes listened for, and its log asked for when wanted.
    async fn learn_server(&mut self, options: &ConnectOptions) -> Result<(), ConnectError> {
        // Listening first: a change from then on is heard, and the lists read next are new.
        self.listen_for_changes().await;
        self.learn_tools().await.map_err(|e| {
            ConnectError::from(format!("{}: tools/list failed: {e}", self.spec.name))
        })?;
        self.discover().await;
        // 2026-07-28 has no logging/setLevel: the level travels in each turn's `_meta`.
        if options.subscribe_logs
            && self.summary.has_logging
            && self.state_home() == StateHome::McpSession
        {
            #[allow(deprecated)]
            let level = rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info);
            #[allow(deprecated)]
            let _ = self
                .with_timeout(self.service.peer().set_level(level))
                .await;
        }
        Ok(())
    }

    fn log_connected(&self) {
        self.events.log(
            self.id,
            LogKind::Client,
            format!(
                "connected: {} {} over {}, DialogID {} ({})",
                self.summary.name,
                self.summary.version,
                generation::describe(&self.summary.protocol_version),
                self.dialog_id,
                match self.dialog_id_origin {
                    DialogIdOrigin::McpSession => "the MCP session id",
                    DialogIdOrigin::Client => "made by the client",
                }
            ),
        );
    }

    /// Whether the server lives on when this connection ends (a server reached by URL), so
    /// that a later connection finds what it kept; a stdio server is started for its
    /// connection and ends with it.
    pub fn outlives_its_connections(&self) -> bool {
        matches!(self.spec.transport, TransportSpec::Http(_))
    }

    /// Lists the server's tools, and finds the BKN ones among them (MCP-BINDING section 1).
    async fn learn_tools(&mut self) -> Result<(), CallError> {
        if !self.summary.has_tools {
            return Ok(());
        }
        let listed = self
            .with_timeout(self.service.peer().list_all_tools())
            .await?;
        // x-mcp-header is of 2026-07-28 (rmcp's transport applies it from there on too):
        // before, annotations mean nothing and no tool is hidden for them.
        let recorded = self
            .http
            .as_ref()
            .map(LoggingHttpClient::take_hidden)
            .unwrap_or_default();
        self.annotated.clear();
        let mut hidden = Vec::new();
        let mut tools = Vec::with_capacity(listed.len());
        if self.state_home() == StateHome::DialogId {
            // Over HTTP rmcp's transport has dropped the tools with invalid annotations
            // already: its client recorded them, and why.
            hidden.extend(
                recorded
                    .into_iter()
                    .map(|(name, reason)| HiddenTool { name, reason }),
            );
            for tool in listed {
                match param_headers::annotations(&tool.input_schema) {
                    Ok(found) => {
                        if !found.is_empty() {
                            self.annotated.insert(tool.name.to_string(), found);
                        }
                        tools.push(tool);
                    }
                    Err(reason) if !hidden.iter().any(|h| h.name == tool.name) => {
                        hidden.push(HiddenTool {
                            name: tool.name.to_string(),
                            reason,
                        })
                    }
                    Err(_) => {}
                }
            }
        } else {
            tools = listed;
        }
        for h in &hidden {
            self.events.log(self.id, LogKind::Client, h.to_string());
        }
        self.summary.hidden_tools = hidden;
        self.summary.bkn_tools = find_bkn_tools(&tools);
        self.summary.findings = tool_findings(&tools, &self.summary.bkn_tools);
        self.summary.tools = tools;
        Ok(())
    }

    /// Over 2026-07-28, where the server offers list changes (its `listChanged` capabilities):
    /// a `subscriptions/listen` stream for them, kept open while the connection lives
    /// (over 2025-11-25 they come on the session, to the handler).
    async fn listen_for_changes(&mut self) {
        if self.state_home() != StateHome::DialogId {
            return;
        }
        let Some(filter) = self
            .service
            .peer()
            .peer_info()
            .and_then(|info| listen::filter_for(&info.capabilities))
        else {
            return;
        };
        let stop = CancellationToken::new();
        listen::open(
            self.service.peer().clone(),
            filter,
            self.changes.clone(),
            stop.clone(),
            self.timeout,
        )
        .await;
        self.listening = stop.drop_guard();
    }

    /// Whether the server said its lists changed and they have not been read again since
    /// (a change told before anyone listened for it, while the connection was being made).
    pub fn lists_changed(&self) -> bool {
        self.changes.is_pending()
    }

    /// Reads again what the server offers (its tools, its resources and what they publish),
    /// after it said they changed. What cannot be read is said in the summary, as at connect.
    pub async fn refresh(&mut self) {
        self.changes.reading_again();
        if let Err(e) = self.learn_tools().await {
            self.summary.resource_problem = Some(format!("tools/list failed: {e}"));
        }
        self.summary.published = None;
        self.summary.resource_problem = None;
        self.discover().await;
    }

    /// Where the server keeps this connection's dialogue (MCP-BINDING section 3).
    pub fn state_home(&self) -> StateHome {
        StateHome::of(&self.summary.protocol_version)
    }

    /// Reads what the server publishes about itself (MCP-BINDING section 1): the list of its
    /// resources, and the M-Instance named by `dac://domain` or `usr://users`.
    async fn discover(&mut self) {
        if !self.summary.has_resources {
            return;
        }
        let listed = match self.list_resources().await {
            Ok(list) => list,
            Err(e) => {
                self.summary.resource_problem = Some(format!("resources/list failed: {e}"));
                return;
            }
        };
        self.summary.resources = listed.iter().map(|r| r.uri.to_string()).collect();
        // The interface's own resource first, when the server serves both.
        let mut candidates: Vec<&str> = Vec::new();
        for (interface, uri) in [
            (Interface::Dac, resources::DAC_DOMAIN),
            (Interface::Usr, resources::USR_USERS),
        ] {
            if self.summary.resources.iter().any(|r| r == uri) {
                if self.summary.bkn_tools.contains_key(&interface) {
                    candidates.insert(0, uri);
                } else {
                    candidates.push(uri);
                }
            }
        }
        for uri in candidates {
            match self.read_resource_text(uri).await {
                Ok(text) => {
                    if let Some(p) = resources::published_in_text(uri, &text) {
                        self.summary.published = Some(p);
                        return;
                    }
                }
                Err(e) => {
                    self.summary.resource_problem = Some(format!("reading {uri} failed: {e}"))
                }
            }
        }
    }

    async fn with_timeout<T>(
        &self,
        f: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, CallError> {
        match tokio::time::timeout(self.timeout, f).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.call_error(e).await),
            Err(_) => Err(CallError::Timeout {
                after: self.timeout,
                note: self.health_note(),
            }),
        }
    }

    /// The tool of an interface on this server, if it has one.
    pub fn tool_for(&self, interface: Interface) -> Option<&str> {
        self.summary.bkn_tools.get(&interface).map(String::as_str)
    }

    /// Calls a tool. The timeout starts again with every progress notification; `cancel`
    /// stops waiting and tells the server (`notifications/cancelled`, or `tasks/cancel` for a
    /// task the call became).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        self.refuse_hidden(name)?;
        let text = || {
            serde_json::value::to_raw_value(&arguments)
                .map_err(|e| CallError::Protocol(format!("the arguments cannot be written: {e}")))
        };
        let called = if let Some(direct) = &self.direct {
            match self.call_directly(direct, name, &text()?, cancel).await {
                Some(answered) => answered,
                None => self.call_through_rmcp(name, arguments, cancel).await,
            }
        } else if let Some(turns) = self.http_turns.as_ref().filter(|t| t.is_on()) {
            match self
                .call_over_http(turns, name, &text()?, Some(&arguments), cancel)
                .await
            {
                Some(answered) => answered,
                None => self.call_through_rmcp(name, arguments, cancel).await,
            }
        } else {
            self.call_through_rmcp(name, arguments, cancel).await
        };
        self.to_result(called?, cancel).await
    }

    /// A tool the client hides (invalid `x-mcp-header` annotations) is not called.
    fn refuse_hidden(&self, name: &str) -> Result<(), CallError> {
        match self.summary.hidden_tools.iter().find(|h| h.name == name) {
            Some(hidden) => Err(CallError::Refused(format!("not sent: {hidden}"))),
            None => Ok(()),
        }
    }

    /// Calls a tool with `request` as its arguments, given also as its compact text (which
    /// the stdio hot path writes as it is).
    pub async fn call_turn(
        &self,
        name: &str,
        request: &Value,
        text: &serde_json::value::RawValue,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        self.refuse_hidden(name)?;
        let mut called = None;
        if let Some(direct) = &self.direct {
            called = self.call_directly(direct, name, text, cancel).await;
        } else if let Some(turns) = self.http_turns.as_ref().filter(|t| t.is_on()) {
            called = self
                .call_over_http(turns, name, text, request.as_object(), cancel)
                .await;
        }
        let called = match called {
            Some(called) => called,
            None => {
                let arguments = request.as_object().cloned().unwrap_or_default();
                self.call_through_rmcp(name, arguments, cancel).await
            }
        };
        self.to_result(called?, cancel).await
    }

    /// The call's result: as it came, or the end of the task it became.
    async fn to_result(
        &self,
        called: Called,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let task = match called {
            Called::Result(result) => return Ok(result),
            Called::Task(task) => task,
        };
        let follower = crate::client::task::Follower {
            peer: self.service.peer(),
            handler: self.service.service(),
            connection: self.id,
            events: &self.events,
            notes: self.task_notes.as_ref(),
            timeout: self.timeout,
        };
        match follower.follow(task, cancel).await {
            Ok(result) => Ok(result),
            Err(Stopped::Call(e)) => Err(e),
            Err(Stopped::Service(e)) => Err(self.call_error(e).await),
        }
    }

    /// Gives the server, when it asks during the next turn, what the recording of that turn
    /// gave (a replay).
    pub fn answer_turn_as_recorded(&self, asked: &[crate::client::answers::Asked]) {
        self.service.service().answer_turn_as_recorded(asked);
    }

    /// What the server asked (and was given) since the last turn took it.
    pub fn take_asked(&self) -> Vec<crate::client::answers::Asked> {
        self.service.service().take_asked()
    }

    /// Whether a call's first poll writes its Request (the stdio hot path); through rmcp
    /// the service loop's task writes it.
    pub fn writes_on_first_poll(&self) -> bool {
        self.direct.is_some()
    }

    async fn call_through_rmcp(
        &self,
        name: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<Called, CallError> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let progress = self.progress_from_now();
        // Dropping the call (a timeout, a cancel) sends notifications/cancelled. A
        // 2026-07-28 `input_required` result's rounds are driven through the handler (what
        // the server asks, answered from --answers or by the person), up to a result or a
        // task.
        let rounds =
            crate::client::task::rounds(self.service.peer(), self.service.service(), params);
        match self.wait(name, rounds, progress, cancel).await? {
            Ok(Called::Result(result)) => Ok(Called::Result(self.undeep(result))),
            Ok(task) => Ok(task),
            Err(e) => Err(self.call_error(e).await),
        }
    }

    /// `call_tool` on the stdio hot path: the same waiting, progress, timeout and cancel, and
    /// the same errors, as through rmcp. None when the server asked for input (2026-07-28
    /// `input_required`): rmcp's client, which answers it, is to send the call.
    async fn call_directly(
        &self,
        direct: &Direct,
        name: &str,
        arguments: &serde_json::value::RawValue,
        cancel: &CancellationToken,
    ) -> Option<Result<Called, CallError>> {
        let progress = self.progress_from_now();
        let call = match direct.call(name, arguments).await {
            Ok(call) => call,
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => {
                return Some(Err(self.call_error(ServiceError::TransportClosed).await));
            }
            Err(e) => {
                return Some(Err(self
                    .call_error(ServiceError::TransportSend(
                        rmcp::transport::DynamicTransportError::new::<StdioTransport, RoleClient>(
                            e,
                        ),
                    ))
                    .await));
            }
        };
        let answered = match self.wait(name, call.answer, progress, cancel).await {
            Ok(answered) => answered,
            Err(stopped) => {
                // As rmcp does when a call is dropped; the server may have gone, so no
                // waiting for the notification to be written.
                direct.forget(&call.id);
                let peer = self.service.peer().clone();
                let id = call.id;
                tokio::spawn(async move {
                    let cancelled = rmcp::model::CancelledNotificationParam::new(Some(id), None);
                    let _ = peer.notify_cancelled(cancelled).await;
                });
                return Some(Err(stopped));
            }
        };
        match answered {
            Ok(message) => self.tool_result_of(message).await.transpose(),
            // The transport stopped reading: the server has gone.
            Err(_) => Some(Err(self.call_error(ServiceError::TransportClosed).await)),
        }
    }

    /// `call_tool` on the HTTP hot path: the same waiting, progress, timeout and cancel, and
    /// the same errors, as through rmcp. None when the server asked for authorization: it did
    /// not take the Request, and rmcp's client (which signs in) is to send it.
    async fn call_over_http(
        &self,
        turns: &HttpTurns,
        name: &str,
        arguments: &serde_json::value::RawValue,
        parsed: Option<&JsonObject>,
        cancel: &CancellationToken,
    ) -> Option<Result<Called, CallError>> {
        let progress = self.progress_from_now();
        let handler = self.service.service();
        // The annotated arguments, mirrored into headers (SEP-2243); none for most tools.
        let params = match (self.annotated.get(name), parsed) {
            (Some(annotated), Some(arguments)) => param_headers::headers(annotated, arguments),
            _ => Vec::new(),
        };
        let (id, answer) = turns.call(name, arguments, params, |n| handler.notified(n));
        let answered = match self.wait(name, answer, progress, cancel).await {
            Ok(answered) => answered,
            Err(stopped) => {
                // As rmcp does when a call is dropped (the request's connection is closed).
                let peer = self.service.peer().clone();
                tokio::spawn(async move {
                    let cancelled = rmcp::model::CancelledNotificationParam::new(Some(id), None);
                    let _ = peer.notify_cancelled(cancelled).await;
                });
                return Some(Err(stopped));
            }
        };
        Some(match answered {
            Ok(message) => return self.tool_result_of(message).await.transpose(),
            Err(TurnFailure::Unauthorized | TurnFailure::NotTaken) => return None,
            Err(TurnFailure::SessionGone) => Err(self.gone(SESSION_GONE.to_owned())),
            Err(TurnFailure::Unreachable(why)) => {
                Err(self.gone(format!("the server cannot be reached any more ({why})")))
            }
            Err(TurnFailure::Broken(why)) => {
                self.events.log(self.id, LogKind::Client, why.clone());
                Err(CallError::Transport(why))
            }
        })
    }

    /// The answer to a `tools/call` taken past rmcp, as rmcp would give it: a result, or a
    /// task (SEP-2663) to follow; `Ok(None)` when the server asked for input (2026-07-28
    /// `input_required`), and the call is sent again through rmcp, which answers it.
    async fn tool_result_of(
        &self,
        message: ServerJsonRpcMessage,
    ) -> Result<Option<Called>, CallError> {
        match message {
            ServerJsonRpcMessage::Response(r) => match r.result {
                ServerResult::CallToolResult(result) => Ok(Some(Called::Result(result))),
                ServerResult::CreateTaskResult(task) => Ok(Some(Called::Task(task))),
                ServerResult::InputRequiredResult(_) => Ok(None),
                other => Err(CallError::Protocol(format!(
                    "the answer to tools/call is not a tool result: {}",
                    serde_json::to_string(&other).unwrap_or_default()
                ))),
            },
            ServerJsonRpcMessage::Error(e) => {
                Err(self.call_error(ServiceError::McpError(e.error)).await)
            }
            _ => Err(CallError::Protocol(
                "the answer to tools/call is not a Response".into(),
            )),
        }
    }

    /// The connection has ended, for `why`: said once as an event, and as the call's error.
    fn gone(&self, why: String) -> CallError {
        self.events.emit(Event::Closed {
            connection: self.id,
            reason: why.clone(),
        });
        CallError::Gone(why)
    }

    /// Progress notifications from now on (taken before a request is sent, so that none
    /// that answers it is missed).
    fn progress_from_now(&self) -> watch::Receiver<u64> {
        let mut progress = self.progress.clone();
        progress.mark_unchanged();
        progress
    }

    /// Waits for `answer`. The timeout starts again with every progress notification; a
    /// cancel stops waiting. Either stop is logged and returned as the call's error.
    async fn wait<T>(
        &self,
        name: &str,
        answer: impl Future<Output = T>,
        mut progress: watch::Receiver<u64>,
        cancel: &CancellationToken,
    ) -> Result<T, CallError> {
        tokio::pin!(answer);
        let mut deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            tokio::select! {
                answered = &mut answer => return Ok(answered),
                () = tokio::time::sleep_until(deadline) => {
                    self.events.log(self.id, LogKind::Client, format!("{name}: no answer within {}; cancelled", crate::duration::show(self.timeout)));
                    return Err(CallError::Timeout { after: self.timeout, note: self.health_note() });
                }
                changed = progress.changed() => {
                    if changed.is_ok() {
                        deadline = tokio::time::Instant::now() + self.timeout;
                    }
                }
                () = cancel.cancelled() => {
                    self.events.log(self.id, LogKind::Client, format!("{name}: cancelled by the user"));
                    return Err(CallError::Cancelled);
                }
            }
        }
    }

    /// A result the HTTP client read because it was nested too deep for rmcp, in place of
    /// the marker rmcp got.
    fn undeep(&self, result: CallToolResult) -> CallToolResult {
        let key = result
            .meta
            .as_ref()
            .and_then(|m| m.get(crate::client::http::DEEP_MARKER))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match (key, &self.http) {
            (Some(key), Some(http)) => http
                .take_deep(&key)
                .and_then(|deep| {
                    use serde::Deserialize;
                    CallToolResult::deserialize(serde_stacker::Deserializer::new(deep)).ok()
                })
                .unwrap_or(result),
            _ => result,
        }
    }

    async fn call_error(&self, e: ServiceError) -> CallError {
        match e {
            ServiceError::McpError(ErrorData { code, message, .. })
                if code.0 == limits::TOO_LARGE_CODE =>
            {
                CallError::TooLarge(message.into_owned())
            }
            ServiceError::McpError(error)
                if error.code.0 == crate::client::answers::UNANSWERED_CODE =>
            {
                CallError::Unanswered(error.message.into_owned())
            }
            ServiceError::McpError(error) => {
                CallError::Protocol(format!("{} ({})", error.message, error.code.0))
            }
            ServiceError::TransportClosed => {
                let why = match &self.child {
                    Some(child) => exit_note(child, &self.health).await,
                    None => String::new(),
                };
                let what = if self.child.is_some() {
                    "the server closed the connection"
                } else {
                    "the HTTP session ended (the server may have restarted or expired it)"
                };
                self.events.emit(Event::Closed {
                    connection: self.id,
                    reason: format!("{what}{why}"),
                });
                CallError::Gone(format!("{what}{why}"))
            }
            ServiceError::Timeout { timeout } => CallError::Timeout {
                after: timeout,
                note: self.health_note(),
            },
            ServiceError::Cancelled { .. } => CallError::Cancelled,
            ServiceError::TransportSend(e) => {
                let text = plain(&chain(&e));
                if text.contains("404") || text.to_lowercase().contains("session expired") {
                    self.gone(SESSION_GONE.to_owned())
                } else if text.contains("error sending request") {
                    self.gone(format!("the server cannot be reached any more ({text})"))
                } else {
                    CallError::Transport(format!("cannot reach the server: {text}"))
                }
            }
            other => CallError::Transport(other.to_string()),
        }
    }

    fn health_note(&self) -> Option<String> {
        self.health
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .describe()
    }

    pub async fn list_resources(&self) -> Result<Vec<Resource>, CallError> {
        if !self.summary.has_resources {
            return Ok(Vec::new());
        }
        self.with_timeout(self.service.peer().list_all_resources())
            .await
    }

    /// Reads a resource: every content the server gave, as it gave it.
    pub async fn read_resource_contents(
        &self,
        uri: &str,
    ) -> Result<Vec<ResourceContents>, CallError> {
        let result = self
            .with_timeout(
                self.service
                    .peer()
                    .read_resource(ReadResourceRequestParams::new(uri)),
            )
            .await?;
        Ok(result.contents)
    }

    /// Reads a resource as JSON (text resources that parse), else as text.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, CallError> {
        let text = self.read_resource_text(uri).await?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Reads a resource's text contents, joined by newlines.
    async fn read_resource_text(&self, uri: &str) -> Result<String, CallError> {
        let result = self
            .with_timeout(
                self.service
                    .peer()
                    .read_resource(ReadResourceRequestParams::new(uri)),
            )
            .await?;
        let text = result
            .contents
            .iter()
            .filter_map(|c| match c {
                ResourceContents::TextResourceContents { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        Ok(text)
    }

    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, CallError> {
        if !self.summary.has_prompts {
            return Ok(Vec::new());
        }
        self.with_timeout(self.service.peer().list_all_prompts())
            .await
    }

    /// Ends the session (for HTTP, the server is told; a stdio server's stdin is closed, and
    /// the process is ended if it does not leave by itself).
    pub async fn close(self) {
        let id = self.id;
        let events = self.events.clone();
        self.closing.store(true, Ordering::Relaxed);
        drop(self.listening);
        // A server stuck in a call may never see the end of its input: it gets a moment,
        // then it is ended, so that closing never keeps the user waiting.
        let _ = tokio::time::timeout(Duration::from_secs(1), self.service.cancel()).await;
        if let Some(child) = self.child {
            let mut child = child.lock().await;
            if tokio::time::timeout(Duration::from_millis(500), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
        events.log(id, LogKind::Client, "connection closed");
    }

    /// Whether the transport is still up.
    pub fn is_open(&self) -> bool {
        !self.service.is_transport_closed()
    }
}

/// How the MCP handshake over a stdio transport (a child's pipes or an in-process one) failed.
enum HandshakeFailure {
    Refused(Box<rmcp::service::ClientInitializeError>),
    TimedOut,
}

impl HandshakeFailure {
    /// The error, with what is known of the server's end after it and what to do.
    fn error(
        self,
        name: &str,
        timeout: Duration,
        end: &ServerEnd,
        asked: ProtocolChoice,
    ) -> ConnectError {
        const BY_HAND: &str = "run the command by hand to see what it does, and check its \
             arguments and environment; `bkn-explorer doctor` with the same server options \
             shows each step";
        let wrote_junk = end
            .said
            .as_deref()
            .is_some_and(|s| s.contains("not JSON-RPC"));
        let advice = if wrote_junk {
            "a stdio MCP server writes only JSON-RPC messages to its stdout (its logs go to \
             stderr): check that the command is an MCP server"
        } else {
            BY_HAND
        };
        let said = end
            .said
            .as_deref()
            .map(|s| format!("; {s}"))
            .unwrap_or_default();
        let refused = matches!(&self, HandshakeFailure::Refused(e)
            if super::opening::handshake_refusal(e, asked).is_some());
        let mut error = ConnectError::from(match self {
            HandshakeFailure::Refused(e) => {
                match (super::opening::handshake_refusal(&e, asked), &end.exited) {
                    // It answered, and refused: its answer says why.
                    (Some(refused), _) => format!("{name} {refused}{}", end.note()),
                    (None, Some(exited)) => format!(
                        "{name} {exited} before completing the MCP handshake{said}: {advice}"
                    ),
                    (None, None) => {
                        format!("{name} {}{said}: {advice}", initialize_error(&e, asked))
                    }
                }
            }
            HandshakeFailure::TimedOut => format!(
                "{name} did not complete the MCP handshake within {}{}: {advice}",
                crate::duration::show(timeout),
                end.note()
            ),
        });
        error.refused = refused;
        error
    }
}

/// What the server told of itself in the handshake.
fn summary_of(
    service: &RunningService<RoleClient, Handler>,
    protocol: ProtocolChoice,
) -> ServerSummary {
    let mut summary = ServerSummary {
        protocol_asked: protocol,
        ..ServerSummary::default()
    };
    if let Some(info) = service.peer().peer_info() {
        summary.protocol_version = info.protocol_version.to_string();
        if let Some(server) = &info.server_info {
            summary.name = server.name.clone();
            summary.version = server.version.clone();
            summary.title = server.title.clone();
        }
        summary.instructions = info.instructions.clone();
        summary.has_tools = info.capabilities.tools.is_some();
        summary.has_resources = info.capabilities.resources.is_some();
        summary.has_prompts = info.capabilities.prompts.is_some();
        summary.has_logging = info.capabilities.logging.is_some();
    }
    summary
}

/// What a transport's set-up hands to the connection.
struct Transport {
    service: RunningService<RoleClient, Handler>,
    child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
    http: Option<LoggingHttpClient>,
    direct: Option<Arc<Direct>>,
    http_turns: Option<HttpTurns>,
    shared_cpu: Option<SharedCpu>,
}

/// What each transport's set-up is given: the connection's id, the generation asked for,
/// where its events go and the server's health record.
struct Setup<'a> {
    id: ConnectionId,
    spec: &'a ServerSpec,
    options: &'a ConnectOptions,
    protocol: ProtocolChoice,
    events: &'a EventSink,
    health: &'a Arc<Mutex<Health>>,
    closing: &'a Arc<AtomicBool>,
}

/// An HTTP server's address and headers, with their variables read.
struct HttpTarget {
    url: String,
    headers: HashMap<http::HeaderName, http::HeaderValue>,
    /// The same headers (and the token's), as text, for the doctor when the handshake fails.
    sent: Vec<(String, String)>,
    token: Option<String>,
}

impl HttpTarget {
    fn read(spec: &ServerSpec, h: &spec::HttpSpec) -> Result<HttpTarget, ConnectError> {
        let expand = expander(spec);
        let url = expand(&h.url)?;
        let mut headers = HashMap::new();
        let mut sent: Vec<(String, String)> = Vec::new();
        for (k, v) in &h.headers {
            let v = expand(v)?;
            let name = http::HeaderName::try_from(k.as_str())
                .map_err(|e| ConnectError::from(format!("header {k}: {e}")))?;
            let value = http::HeaderValue::try_from(v.as_str())
                .map_err(|e| ConnectError::from(format!("header {k}: {e}")))?;
            sent.push((k.clone(), v));
            headers.insert(name, value);
        }
        let token = h.token.as_deref().map(&expand).transpose()?;
        if let Some(token) = &token {
            sent.push(("Authorization".into(), format!("Bearer {token}")));
        }
        Ok(HttpTarget {
            url,
            headers,
            sent,
            token,
        })
    }
}

impl Setup<'_> {
    /// Streamable HTTP through rmcp, signing in with OAuth when the server wants it; turns
    /// then go past rmcp where they can (`http_turns`).
    async fn over_http(
        &self,
        handler: Handler,
        h: &spec::HttpSpec,
    ) -> Result<Transport, ConnectError> {
        let target = HttpTarget::read(self.spec, h)?;
        // A session the server forgot must end the dialogue visibly: rmcp would otherwise
        // start a new one behind our back (reinit defaults to on), and the server's dialogue
        // state (commitments) would be gone without a word.
        let mut config = StreamableHttpClientTransportConfig::with_uri(target.url.clone())
            .custom_headers(target.headers.clone())
            .reinit_on_expired_session(false);
        if let Some(token) = &target.token {
            config = config.auth_header(token.clone());
        }
        let inner = match &self.options.http_client {
            Some(shared) => shared.clone(),
            None => http_client(self.options.timeout).map_err(ConnectError::from)?,
        };
        let client = LoggingHttpClient::new(
            inner.clone(),
            self.id,
            self.events.clone(),
            self.options.max_message_bytes,
        );
        let authorizer = self.authorizer(h, &target.url)?;
        let transport = StreamableHttpClientTransport::with_client(
            AuthorizingClient::new(client.clone(), authorizer.clone()),
            config,
        );
        let lifecycle = self.http_lifecycle(&inner, &target).await;
        let serving = handler.serve_with_lifecycle(transport, lifecycle);
        let served = within_handshake_time(
            serving,
            authorizer.as_deref(),
            &target.url,
            self.options.timeout,
        )
        .await?;
        let service = match served {
            Ok(service) => service,
            Err(e) => {
                return Err(self
                    .http_handshake_failure(&e, &target, h.legacy_sse, authorizer.as_deref())
                    .await);
            }
        };
        let http_turns = if authorizer.as_ref().is_some_and(|a| a.holds_token()) {
            // A sign-in gave a token: rmcp's client refreshes it, so turns stay with rmcp.
            None
        } else {
            self.http_turns(&inner, &target, &service, &client)
        };
        Ok(Transport {
            service,
            child: None,
            http: Some(client),
            direct: None,
            http_turns,
            shared_cpu: None,
        })
    }

    /// An OAuth sign-in for the server, unless the user gave an Authorization of their own
    /// (a token, or the header).
    fn authorizer(
        &self,
        h: &spec::HttpSpec,
        url: &str,
    ) -> Result<Option<Arc<Authorizer>>, ConnectError> {
        let given_authorization = h.token.is_some()
            || h.headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"));
        if given_authorization {
            return Ok(None);
        }
        let oauth = oauth_options(&self.options.oauth, h.oauth.as_ref(), &expander(self.spec))?;
        Ok(Some(Authorizer::new(
            url,
            oauth,
            sign_in_reporter(self.events, self.id, &self.spec.name),
        )))
    }

    /// Auto over HTTP asks server/discover first, itself: rmcp's auto mode takes a legacy
    /// server's answer that is not a discover result (some answer any unknown method with
    /// `{}`) for a failure instead of falling back.
    async fn http_lifecycle(
        &self,
        client: &reqwest::Client,
        target: &HttpTarget,
    ) -> rmcp::service::ClientLifecycleMode {
        match self.protocol {
            ProtocolChoice::Auto => probe_generation(
                client,
                &target.url,
                &target.headers,
                target.token.as_deref(),
                self.options,
            )
            .await
            .lifecycle(),
            other => other.lifecycle(),
        }
    }

    /// A failed HTTP handshake, said as the step that failed and what to do (the doctor's
    /// steps, up to the first request of the handshake), with a failed sign-in's reason.
    async fn http_handshake_failure(
        &self,
        e: &rmcp::service::ClientInitializeError,
        target: &HttpTarget,
        legacy_sse: bool,
        authorizer: Option<&Authorizer>,
    ) -> ConnectError {
        let refused = super::opening::handshake_refusal(e, self.protocol).is_some();
        let url = &target.url;
        let failure =
            super::doctor::http_failure(url, &target.sent, legacy_sse, self.protocol).await;
        // A server that wants a token and advertises no OAuth: the sign-in tried in passing
        // failed for that reason, and the step's sentence already says what to do.
        let signing_in = authorizer
            .filter(|_| !failure.as_ref().is_some_and(|f| f.needs_a_token))
            .and_then(|a| a.failure())
            .map(|why| format!("; signing in with OAuth failed: {why}"))
            .unwrap_or_default();
        let why = match failure {
            Some(step) => step.sentence,
            None => initialize_error(e, self.protocol),
        };
        ConnectError {
            refused,
            ..ConnectError::from(format!("cannot connect to {url}: {why}{signing_in}"))
        }
    }

    /// Turns past rmcp: on the MCP session (2025-11-25), or with the request's own envelope
    /// (2026-07-28, no session); none when the server gave a 2025-11-25 session no id.
    fn http_turns(
        &self,
        inner: &reqwest::Client,
        target: &HttpTarget,
        service: &RunningService<RoleClient, Handler>,
        client: &LoggingHttpClient,
    ) -> Option<HttpTurns> {
        let info = service.peer().peer_info()?;
        let place = match (
            generation::is_stateless(info.protocol_version.as_str()),
            client.session_id(),
        ) {
            (true, _) => TurnPlace::Stateless(envelope(service, self.options.subscribe_logs)),
            (false, Some(session_id)) => TurnPlace::Session(session_id),
            (false, None) => return None,
        };
        HttpTurns::for_session(
            inner.clone(),
            SessionHeaders {
                url: &target.url,
                place,
                protocol_version: info.protocol_version.as_str(),
                custom: &target.headers,
                token: target.token.as_deref(),
            },
            self.options.max_message_bytes,
            self.id,
            self.events.clone(),
        )
        .map(|turns| turns.answering(service.service().responder()))
    }

    /// An embedded reference server inside this process, over in-memory pipes.
    async fn in_process(
        &self,
        handler: Handler,
        interface: Interface,
    ) -> Result<Transport, ConnectError> {
        let start = self.options.in_process.as_ref().expect("checked");
        let pipes = (start.0)(interface).map_err(ConnectError::from)?;
        let (service, direct) = self.handshake(handler, pipes).await.map_err(|failed| {
            failed.error(
                &self.spec.name,
                self.options.timeout,
                &ServerEnd::default(),
                self.protocol,
            )
        })?;
        Ok(Transport {
            service,
            child: None,
            http: None,
            direct: Some(direct),
            http_turns: None,
            shared_cpu: None,
        })
    }

    /// A stdio server (or an embedded one) started as a child process; one that fails the
    /// handshake is ended, so that a retry does not leave one more behind.
    async fn child_process(&self, handler: Handler) -> Result<Transport, ConnectError> {
        let (child, pid, pipes) = self.spawn_child()?;
        let (service, direct) = match self.handshake(handler, pipes).await {
            Ok(started) => started,
            Err(failed) => {
                let end = server_end(&child, self.health).await;
                end_child(&child, self.closing).await;
                return Err(failed.error(
                    &self.spec.name,
                    self.options.timeout,
                    &end,
                    self.protocol,
                ));
            }
        };
        // After the handshake: the start-up work on both sides is done by then. A failure
        // only costs speed: the dialogue goes on where it is.
        let shared_cpu = match pid {
            Some(pid)
                if self.options.share_cpu
                    && matches!(self.spec.transport, TransportSpec::Embedded { .. }) =>
            {
                SharedCpu::with(pid).ok()
            }
            _ => None,
        };
        Ok(Transport {
            service,
            child: Some(child),
            http: None,
            direct: Some(direct),
            http_turns: None,
            shared_cpu,
        })
    }

    /// The server's command started with its stdio piped, its stderr read into the log and
    /// the health record: the child, its pid, and its stdout and stdin.
    #[allow(clippy::type_complexity)]
    fn spawn_child(
        &self,
    ) -> Result<
        (
            Arc<tokio::sync::Mutex<tokio::process::Child>>,
            Option<u32>,
            (ServerOutput, ServerInput),
        ),
        ConnectError,
    > {
        let (program, args, env, cwd) = command_of(self.spec, self.options)?;
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&args)
            .envs(&env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &cwd {
            command.current_dir(cwd);
        }
        let mut child = command
            .spawn()
            .map_err(|e| ConnectError::from(format!("cannot start {}: {e}", program.display())))?;
        let pid = child.id();
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let child = Arc::new(tokio::sync::Mutex::new(child));
        spawn_stderr_reader(
            stderr,
            self.id,
            self.events.clone(),
            self.health.clone(),
            ExitWatch {
                child: child.clone(),
                closing: self.closing.clone(),
            },
        );
        Ok((child, pid, (Box::new(stdout), Box::new(stdin))))
    }

    async fn handshake(
        &self,
        handler: Handler,
        pipes: (ServerOutput, ServerInput),
    ) -> Result<(RunningService<RoleClient, Handler>, Arc<Direct>), HandshakeFailure> {
        handshake(
            handler,
            pipes,
            self.options,
            self.protocol,
            self.id,
            self.events,
            self.health,
        )
        .await
    }
}

/// The handshake's end, waited for within `timeout`; the time a person takes to sign in is
/// theirs, not the server's.
async fn within_handshake_time<T>(
    serving: impl std::future::Future<Output = T>,
    authorizer: Option<&Authorizer>,
    url: &str,
    timeout: Duration,
) -> Result<T, ConnectError> {
    tokio::pin!(serving);
    loop {
        match tokio::time::timeout(timeout, &mut serving).await {
            Ok(served) => return Ok(served),
            Err(_) if authorizer.is_some_and(|a| a.is_waiting_for_a_person()) => {}
            Err(_) => {
                return Err(ConnectError::from(format!(
                    "{url} did not complete the MCP handshake within {}",
                    crate::duration::show(timeout)
                )));
            }
        }
    }
}

/// Puts the stdio transport on a server's pipes (a child's, or an in-process pipe's) and makes
/// the MCP handshake over it. The session comes back with the transport's hot path for turns.
async fn handshake(
    handler: Handler,
    (output, input): (ServerOutput, ServerInput),
    options: &ConnectOptions,
    protocol: ProtocolChoice,
    id: ConnectionId,
    events: &EventSink,
    health: &Arc<Mutex<Health>>,
) -> Result<(RunningService<RoleClient, Handler>, Arc<Direct>), HandshakeFailure> {
    let transport = StdioTransport::new(
        output,
        input,
        options.max_message_bytes,
        id,
        events.clone(),
        health.clone(),
    );
    let direct = transport.direct();
    let serving = handler.serve_with_lifecycle(transport, protocol.lifecycle());
    match tokio::time::timeout(options.timeout, serving).await {
        Ok(Ok(service)) => Ok((service, direct)),
        Ok(Err(e)) => Err(HandshakeFailure::Refused(Box::new(e))),
        Err(_) => Err(HandshakeFailure::TimedOut),
    }
}

/// Which generation an HTTP server speaks, from its answer to `server/discover`: 2026-07-28
/// when the answer lists it, 2025-11-25 when the server answers with an error or with a
/// result that is not a discover result, and auto (rmcp's) when the answer says neither (a
/// 401 for a sign-in, a server that cannot be reached: the handshake then says why). The
/// answer is read within the message limit.
async fn probe_generation(
    client: &reqwest::Client,
    url: &str,
    custom: &HashMap<http::HeaderName, http::HeaderValue>,
    token: Option<&str>,
    options: &ConnectOptions,
) -> ProtocolChoice {
    let opening = &super::opening::Opening::sequence(ProtocolChoice::Stateless)[0];
    let mut request = client
        .post(url)
        .timeout(options.timeout)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(opening.with_id(0).to_string());
    for (k, v) in opening.headers() {
        request = request.header(k, v);
    }
    for (k, v) in custom {
        request = request.header(k.clone(), v.clone());
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let Ok(response) = request.send().await else {
        return ProtocolChoice::Auto;
    };
    if matches!(response.status().as_u16(), 401 | 403) {
        return ProtocolChoice::Auto;
    }
    match super::doctor::answer_of(response, options.max_message_bytes).await {
        // "Not that version, but these": a 2026-07-28 server that wants the request again
        // (rmcp's discover lifecycle retries with a version it lists).
        Some(answer)
            if answer.pointer("/error/code").and_then(Value::as_i64) == Some(-32022)
                && answer
                    .pointer("/error/data/supported")
                    .and_then(Value::as_array)
                    .is_some_and(|v| {
                        v.iter()
                            .filter_map(Value::as_str)
                            .any(generation::is_stateless)
                    }) =>
        {
            ProtocolChoice::Stateless
        }
        Some(answer) => match opening.judge(&answer) {
            super::opening::Answered::Speaks { .. } => ProtocolChoice::Stateless,
            super::opening::Answered::Refused(_) => ProtocolChoice::Session,
        },
        None => ProtocolChoice::Auto,
    }
}

/// What every request of a 2026-07-28 connection carries in `_meta` (SEP-2575): the
/// negotiated version, and the client's capabilities and identity, as rmcp sends them; with
/// `logs`, the level of the server's log wanted (info), which replaced logging/setLevel.
fn envelope(
    service: &RunningService<RoleClient, Handler>,
    logs: bool,
) -> serde_json::Map<String, Value> {
    use rmcp::ClientHandler;
    let info = service.service().get_info();
    let version = service
        .peer()
        .peer_info()
        .map(|p| p.protocol_version.clone())
        .unwrap_or(rmcp::model::ProtocolVersion::V_2026_07_28);
    let mut meta = rmcp::model::RequestMetaObject::with_client_context(
        version,
        info.client_info,
        info.capabilities,
    );
    if logs {
        #[allow(deprecated)]
        meta.set_log_level(rmcp::model::LoggingLevel::Info);
    }
    meta.0.0
}

/// Reads `${…}` in a server's definition against the environment, its file and the inputs
/// given; the error names the file, the server and the variable.
fn expander(spec: &ServerSpec) -> impl Fn(&str) -> Result<String, ConnectError> + '_ {
    move |value: &str| {
        let env = |name: &str| std::env::var(name).ok();
        let scope = spec.scope(&env);
        scope.expand(value).map_err(|e| ConnectError {
            message: scope.describe(&e),
            needs_input: match e {
                spec::vars::VarError::NeedsInput(r) => Some(r),
                _ => None,
            },
            refused: false,
        })
    }
}

pub type Command = (
    PathBuf,
    Vec<String>,
    BTreeMap<String, String>,
    Option<PathBuf>,
);

pub fn command_of(spec: &ServerSpec, options: &ConnectOptions) -> Result<Command, ConnectError> {
    match &spec.transport {
        TransportSpec::Stdio(s) => {
            let expand = expander(spec);
            let args = s
                .args
                .iter()
                .map(|a| expand(a))
                .collect::<Result<Vec<_>, _>>()?;
            let mut env = BTreeMap::new();
            if let Some(file) = &s.env_file {
                let path = expand(file)?;
                let lines = dotenvy::from_path_iter(&path).map_err(|e| {
                    ConnectError::from(format!("server \"{}\": envFile {path}: {e}", spec.name))
                })?;
                for line in lines {
                    let (k, v) = line.map_err(|e| {
                        ConnectError::from(format!("server \"{}\": envFile {path}: {e}", spec.name))
                    })?;
                    env.insert(k, v);
                }
            }
            for (k, v) in &s.env {
                env.insert(k.clone(), expand(v)?);
            }
            let cwd = s
                .cwd
                .as_deref()
                .map(&expand)
                .transpose()?
                .map(PathBuf::from);
            Ok((PathBuf::from(expand(&s.command)?), args, env, cwd))
        }
        TransportSpec::Embedded { interface, args } => {
            let program = match &options.embedded_program {
                Some(p) => p.clone(),
                None => std::env::current_exe().map_err(|e| {
                    ConnectError::from(format!(
                        "cannot find this program to start its reference server: {e}"
                    ))
                })?,
            };
            let mut all = vec!["serve".to_owned(), interface.code().to_owned()];
            all.extend(args.iter().cloned());
            Ok((program, all, BTreeMap::new(), None))
        }
        TransportSpec::Http(_) => unreachable!("HTTP has no command"),
    }
}

/// What the stderr reader needs to tell when the server process ends by itself.
struct ExitWatch {
    child: Arc<tokio::sync::Mutex<tokio::process::Child>>,
    closing: Arc<AtomicBool>,
}

/// Reads a stdio server's stderr into the log and the health record. Its end usually means
/// the process ended: if it did and we were not closing it, a `Closed` event says so at once,
/// so that a server that dies between turns shows as gone without waiting for the next turn.
fn spawn_stderr_reader(
    stderr: tokio::process::ChildStderr,
    id: ConnectionId,
    events: EventSink,
    health: Arc<Mutex<Health>>,
    watch: ExitWatch,
) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            events.log(id, LogKind::Stderr, line.clone());
            let mut h = health.lock().unwrap_or_else(|p| p.into_inner());
            h.stderr_tail.push_back(line);
            if h.stderr_tail.len() > Health::STDERR_LINES {
                h.stderr_tail.pop_front();
            }
        }
        if watch.closing.load(Ordering::Relaxed) {
            return;
        }
        let exited = {
            let mut child = watch.child.lock().await;
            matches!(
                tokio::time::timeout(Duration::from_secs(1), child.wait()).await,
                Ok(Ok(_))
            )
        };
        if exited && !watch.closing.load(Ordering::Relaxed) {
            let note = exit_note(&watch.child, &health).await;
            events.emit(Event::Closed {
                connection: id,
                reason: format!("the server process ended{note}"),
            });
        }
    });
}

/// Ends a server process that a failed connection leaves behind.
async fn end_child(child: &tokio::sync::Mutex<tokio::process::Child>, closing: &AtomicBool) {
    closing.store(true, Ordering::Relaxed);
    let mut child = child.lock().await;
    let _ = child.kill().await;
}

/// What is known of a stdio server's end: how it exited (if it has), and what it said (lines
/// on its stdout that are not JSON-RPC, its last stderr line).
#[derive(Default)]
struct ServerEnd {
    /// "exited with status 3", "was killed by a signal".
    exited: Option<String>,
    said: Option<String>,
}

impl ServerEnd {
    /// "; the server exited with status 3; its last stderr line: …".
    fn note(&self) -> String {
        let mut note = String::new();
        if let Some(exited) = &self.exited {
            note.push_str("; the server ");
            note.push_str(exited);
        }
        if let Some(said) = &self.said {
            note.push_str("; ");
            note.push_str(said);
        }
        note
    }
}

async fn server_end(
    child: &tokio::sync::Mutex<tokio::process::Child>,
    health: &Mutex<Health>,
) -> ServerEnd {
    let mut child = child.lock().await;
    let status = tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
    // Give the stderr reader a moment to take the last lines, and the transport, when it
    // never had an answer, to read what the server left on its stdout.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let drained = health
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .drained
        .take();
    if let Some(drained) = drained {
        let _ = tokio::time::timeout(Duration::from_secs(1), drained).await;
    }
    let exited = match status {
        Ok(Ok(s)) => Some(match s.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_owned(),
        }),
        _ => None,
    };
    let said = health.lock().unwrap_or_else(|p| p.into_inner()).describe();
    ServerEnd { exited, said }
}

/// "; it exited with status 3; its last stderr line: …", once the process has exited.
async fn exit_note(
    child: &tokio::sync::Mutex<tokio::process::Child>,
    health: &Mutex<Health>,
) -> String {
    server_end(child, health).await.note()
}

/// An error with the errors that caused it: reqwest says "connection refused" only in its
/// source.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// A transport error without rmcp's type names: "Transport [rmcp::…] error: X" is "X".
fn plain(text: &str) -> String {
    match (text.find("Transport ["), text.find("] error: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &text[..start], &text[end + "] error: ".len()..])
        }
        _ => text.to_owned(),
    }
}

/// rmcp's handshake errors, in words.
fn initialize_error(e: &rmcp::service::ClientInitializeError, asked: ProtocolChoice) -> String {
    if let Some(refused) = super::opening::handshake_refusal(e, asked) {
        return refused;
    }
    let error = &chain(e);
    if error.contains("Connection refused")
        || error.contains("connection refused")
        || error.contains("tcp connect")
    {
        "refused the connection (is the server running?)".into()
    } else if error.contains("closed") || error.contains("Closed") {
        "closed the connection during the MCP handshake".into()
    } else if error.contains("Broken pipe") || error.contains("broken pipe") {
        "stopped reading its input during the MCP handshake".into()
    } else {
        format!("failed the MCP handshake: {}", plain(error))
    }
}

/// How the BKN tools a server offers break MCP-BINDING section 1: a tool of an interface
/// declares an outputSchema (the Response schema), and its inputSchema carries the Header of
/// its interface as a const (by which a client finds it).
pub fn tool_findings(tools: &[Tool], bkn_tools: &BTreeMap<Interface, String>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (interface, name) in bkn_tools {
        let Some(tool) = tools.iter().find(|t| t.name == name.as_str()) else {
            continue;
        };
        let escaped = name.replace('~', "~0").replace('/', "~1");
        let header = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.get("Header"))
            .and_then(|h| h.get("const"))
            .and_then(Value::as_str);
        if header != Some(interface.header()) {
            findings.push(Finding::new(
                format!("/tools/{escaped}/inputSchema/properties/Header"),
                Requirement::Binding,
                Check::InputHeader,
                format!(
                    "the {} tool {name}'s inputSchema does not carry \"Header\": {{\"const\": \"{}\"}}; \
                     a client finds the tool of an interface by it (found here by its name only)",
                    interface.name(),
                    interface.header()
                ),
            ));
        }
        if tool.output_schema.is_none() {
            findings.push(Finding::new(
                format!("/tools/{escaped}/outputSchema"),
                Requirement::Binding,
                Check::OutputSchema,
                format!(
                    "the {} tool {name} declares no outputSchema; MCP-BINDING section 1 asks for \
                     the {} Response schema, so that clients know what structuredContent holds",
                    interface.name(),
                    interface.name()
                ),
            ));
        }
    }
    findings
}

/// The tools that carry BKN-DAC and BKN-USR: by the Header const of their inputSchema first
/// (MCP-BINDING section 1), then by name.
pub fn find_bkn_tools(tools: &[Tool]) -> BTreeMap<Interface, String> {
    let mut found = BTreeMap::new();
    for tool in tools {
        let header = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.get("Header"))
            .and_then(|h| h.get("const"))
            .and_then(Value::as_str)
            .and_then(Interface::from_header);
        if let Some(interface) = header {
            found
                .entry(interface)
                .or_insert_with(|| tool.name.to_string());
        }
    }
    for tool in tools {
        if let Some(interface) = Interface::from_tool_name(&tool.name) {
            found
                .entry(interface)
                .or_insert_with(|| tool.name.to_string());
        }
    }
    found
}

/// The OAuth settings of one server: the command line's, with the servers file's own for
/// this server where the command line gives none (`${VAR}` expanded).
fn oauth_options(
    given: &OAuthOptions,
    file: Option<&spec::OAuthSpec>,
    expand: &dyn Fn(&str) -> Result<String, ConnectError>,
) -> Result<OAuthOptions, ConnectError> {
    let mut options = given.clone();
    let Some(file) = file else {
        return Ok(options);
    };
    let expanded = |v: &Option<String>| v.as_deref().map(expand).transpose();
    if options.client_id.is_none() {
        options.client_id = expanded(&file.client_id)?;
        options.client_secret = expanded(&file.client_secret)?;
    }
    if options.client_metadata_url.is_none() {
        options.client_metadata_url = expanded(&file.client_metadata_url)?;
    }
    if options.scopes.is_empty() {
        options.scopes = file.scopes.clone();
    }
    options.callback_port = options.callback_port.or(file.callback_port);
    Ok(options)
}

/// Where a connection's sign-in notices go: the event channel (and its log) when someone
/// listens, else standard error (a headless command: the person at the terminal must see
/// the URL to open).
fn sign_in_reporter(
    events: &EventSink,
    id: ConnectionId,
    server: &str,
) -> Arc<dyn Fn(SignInNotice) + Send + Sync> {
    let events = events.clone();
    let server = server.to_owned();
    Arc::new(move |notice: SignInNotice| {
        let line = notice.describe(&server);
        if events.wants_logs() {
            events.log(id, LogKind::Client, line);
            events.emit(Event::SignIn {
                connection: id,
                server: server.clone(),
                notice,
            });
        } else {
            eprintln!("{line}");
        }
    })
}
