//! A deliberately broken BKN-DAC server, to see how a client copes (the explorer's own tests
//! use it; so can anyone testing a Basic Knowledge). It answers like the reference Domain
//! Access server, except for one fault:
//!
//!   exit-on-initialize   exits when the client opens (initialize, or server/discover)
//!   crash-on-call        exits (status 101) when a tool is called
//!   garbage              writes lines that are not JSON-RPC instead of answering
//!   hang                 never answers a tool call
//!   slow                 answers after --delay seconds, sending progress meanwhile;
//!                        the first --fast N calls are answered at once (0 by default)
//!   huge                 answers with a message of --size-mb MiB (20 by default)
//!   wrong-request-id     answers with a RequestID that is not the Request's QueryID
//!   missing-outcome      answers without Outcome
//!   no-structured        answers with the JSON in a text block only
//!   tools-change         says its tools changed (notifications/tools/list_changed) after
//!                        each answer: not a fault, a server whose offer moves. Over
//!                        2025-11-25 on the session; over 2026-07-28 on every open
//!                        subscriptions/listen stream (it serves them, for tools lists).
//!                        --flood N says it N times after each answer
//!   task                 answers each call with a Task (SEP-2663, the client must declare
//!                        the tasks extension) that completes with the Response after
//!                        --polls tasks/get (3 by default), each saying how many are left
//!   task-fails           the same, and the task ends failed (a JSON-RPC error)
//!   task-input           the same, and the task then asks for input (an elicitation keyed
//!                        "confirm"): completed once tasks/update accepts, failed if declined
//!   task-stuck           the task stays "working" with the same message, for ever
//!   task-lost            the task is forgotten at once (as one whose ttl passed): tasks/get
//!                        answers that it knows no such task
//!   none                 no fault at all
//!
//! A task's Response is made when the call comes, so a dialogue's turns keep their order.
//!
//! usage: bkn-fault-server --fault NAME [--delay SECONDS] [--fast N] [--size-mb N] [--polls N]
//!        [--poll-ms MS] [--flood N] [--http PORT [--max-connections N]]
//!
//! Over HTTP it answers both MCP generations, a dialogue kept in its MCP session
//! (2025-11-25) or by its DialogID (2026-07-28), as the reference servers do, within the
//! same bounds (--max-connections, 1,024 by default; each request's head within 10 s).

#![allow(deprecated)]

use bkn_explorer::protocol::schema;
use bkn_explorer::protocol::{Interface, Mode};
use bkn_explorer::server::dac::domain::Domain;
use bkn_explorer::server::dac::{DacDialogue, DomainAccess};
use bkn_explorer::server::mcp::Backend;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DetailedTask, GetTaskParams, GetTaskResult, InitializeRequestParams,
    InitializeResult, InputRequest, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Task, TaskPayload, TaskStatus,
    Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    ExitOnInitialize,
    CrashOnCall,
    Garbage,
    Hang,
    Slow,
    Huge,
    WrongRequestId,
    MissingOutcome,
    NoStructured,
    ToolsChange,
    Task,
    TaskFails,
    TaskInput,
    TaskStuck,
    TaskLost,
}

impl Fault {
    fn makes_tasks(self) -> bool {
        matches!(
            self,
            Fault::Task | Fault::TaskFails | Fault::TaskInput | Fault::TaskStuck | Fault::TaskLost
        )
    }

    fn parse(s: &str) -> Option<Fault> {
        Some(match s {
            "none" => Fault::None,
            "exit-on-initialize" => Fault::ExitOnInitialize,
            "crash-on-call" => Fault::CrashOnCall,
            "garbage" => Fault::Garbage,
            "hang" => Fault::Hang,
            "slow" => Fault::Slow,
            "huge" => Fault::Huge,
            "wrong-request-id" => Fault::WrongRequestId,
            "missing-outcome" => Fault::MissingOutcome,
            "no-structured" => Fault::NoStructured,
            "tools-change" => Fault::ToolsChange,
            "task" => Fault::Task,
            "task-fails" => Fault::TaskFails,
            "task-input" => Fault::TaskInput,
            "task-stuck" => Fault::TaskStuck,
            "task-lost" => Fault::TaskLost,
            _ => return None,
        })
    }
}

#[derive(Clone)]
struct Options {
    fault: Fault,
    delay: Duration,
    /// `slow`: how many calls are answered at once before the slow ones (`--fast`).
    fast: u64,
    /// `slow`: how many calls came (shared, as `answered` is).
    calls: Arc<std::sync::atomic::AtomicU64>,
    size: usize,
    /// How many tasks/get a task answers "working" before it ends.
    polls: u32,
    /// The pollIntervalMs a task suggests.
    poll_ms: u64,
    /// Serving Streamable HTTP (`--http`).
    http: bool,
    /// How many times `tools-change` says so after each answer.
    flood: usize,
    /// How many answers were given (`tools-change`): every open listen stream says the tools
    /// changed when it grows. Shared by every instance (over HTTP at 2026-07-28 each request
    /// has its own).
    answered: Arc<tokio::sync::watch::Sender<u64>>,
}

#[derive(Clone)]
struct Faulty {
    options: Options,
    backend: Arc<DomainAccess>,
    /// The dialogue of this MCP session (2025-11-25; over stdio, the process's).
    dialogue: Arc<Mutex<DacDialogue>>,
    tasks: Arc<Mutex<Tasks>>,
    /// Over 2026-07-28 HTTP each request gets a fresh handler: the dialogues live here, by
    /// DialogID, shared by every handler (MCP-BINDING section 3), at most `MAX_DIALOGUES`.
    keyed: Arc<Mutex<std::collections::HashMap<String, Arc<Mutex<DacDialogue>>>>>,
    /// The answers counted when a listen was accepted (before its acknowledgement): an answer
    /// given between then and the stream's start is told on it, not lost.
    listen_from: Arc<Mutex<Option<u64>>>,
}

/// The most 2026-07-28 dialogues the fault server holds (it is a test server, but what it
/// listens to is outside data too).
const MAX_DIALOGUES: usize = 10_000;

impl Faulty {
    /// Where the dialogue of a call lives: keyed by its DialogID when the request came over
    /// 2026-07-28 on HTTP (no session), else this session's.
    fn dialogue_of(
        &self,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<Mutex<DacDialogue>>, String> {
        let stateless = context
            .meta
            .0
            .contains_key("io.modelcontextprotocol/protocolVersion")
            && self.options.http;
        if !stateless {
            return Ok(self.dialogue.clone());
        }
        let Some(id) = arguments.get("DialogID").and_then(Value::as_str) else {
            // The Request's own checks say what is wrong with it.
            return Ok(Arc::default());
        };
        let mut keyed = self.keyed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = keyed.get(id) {
            return Ok(d.clone());
        }
        let later = arguments
            .get("TurnIndex")
            .and_then(Value::as_u64)
            .is_some_and(|t| t > 0);
        if later {
            return Err(format!(
                "/DialogID: this server holds no dialogue {id} (it expired, or it was never opened here): a later turn needs the dialogue's earlier ones"
            ));
        }
        if keyed.len() >= MAX_DIALOGUES {
            return Err(format!(
                "/DialogID: this server holds {MAX_DIALOGUES} dialogues, its limit; it cannot start another"
            ));
        }
        Ok(keyed.entry(id.to_owned()).or_default().clone())
    }
}

/// The tasks of the task faults, by id (a few a dialogue: a turn's task is kept until the
/// server ends; the oldest go past a bound).
#[derive(Default)]
struct Tasks {
    next: u64,
    by_id: std::collections::BTreeMap<String, TaskEntry>,
}

struct TaskEntry {
    /// The tool's result, made when the call came.
    result: CallToolResult,
    polls_left: u32,
    created: String,
    cancelled: bool,
    /// task-input: the answer tasks/update gave to "confirm".
    confirmed: Option<bool>,
}

const TASKS_KEPT: usize = 1024;

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

impl Faulty {
    fn task_of(&self, id: &str) -> Result<std::sync::MutexGuard<'_, Tasks>, McpError> {
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        if tasks.by_id.contains_key(id) {
            Ok(tasks)
        } else {
            Err(McpError::invalid_params(
                format!("no task {id} here (it never was, or it is gone)"),
                None,
            ))
        }
    }

    /// A task that will end with `result`.
    fn start_task(&self, result: CallToolResult) -> CallToolResponse {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.next += 1;
        let id = format!("task-{}", tasks.next);
        let created = now();
        if tasks.by_id.len() >= TASKS_KEPT
            && let Some(oldest) = tasks.by_id.keys().next().cloned()
        {
            tasks.by_id.remove(&oldest);
        }
        tasks.by_id.insert(
            id.clone(),
            TaskEntry {
                result,
                polls_left: self.options.polls,
                created: created.clone(),
                cancelled: false,
                confirmed: None,
            },
        );
        let task = Task::new(id, TaskStatus::Working, created.clone(), created)
            .with_status_message("accepted")
            .with_poll_interval_ms(self.options.poll_ms)
            .with_ttl_ms(600_000);
        CallToolResponse::Task(CreateTaskResult::new(task))
    }
}

/// What the faults do around the Domain Access answer of a call.
impl Faulty {
    /// The faults that strike before a call is answered: a crash, garbage or silence until
    /// the client gives up, or a slow answer with progress.
    async fn before_answering(&self, context: &RequestContext<RoleServer>) -> Result<(), McpError> {
        match self.options.fault {
            Fault::CrashOnCall => {
                eprintln!(
                    "thread 'main' panicked at src/fault.rs:1:1: crashing during a call, as asked"
                );
                std::process::exit(101);
            }
            Fault::Garbage => {
                {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "this is not JSON-RPC");
                    let _ = writeln!(out, "{{\"broken\": ");
                    let _ = out.flush();
                }
                context.ct.cancelled().await;
                Err(McpError::internal_error("cancelled", None))
            }
            Fault::Hang => {
                context.ct.cancelled().await;
                eprintln!("fault: the hanging call was cancelled");
                Err(McpError::internal_error("cancelled", None))
            }
            Fault::Slow
                if self
                    .options
                    .calls
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    >= self.options.fast =>
            {
                self.slowly(context).await
            }
            _ => Ok(()),
        }
    }

    /// `slow`: waits `--delay` in steps of 200 ms, each told as progress (when the client
    /// asked for it); cancelled when the client cancels.
    async fn slowly(&self, context: &RequestContext<RoleServer>) -> Result<(), McpError> {
        let token = context.meta.get_progress_token();
        let steps = (self.options.delay.as_millis() / 200).max(1) as u32;
        for i in 0..steps {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                _ = context.ct.cancelled() => {
                    eprintln!("fault: the slow call was cancelled");
                    return Err(McpError::internal_error("cancelled", None));
                }
            }
            if let Some(token) = &token {
                let _ = context
                    .peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(i + 1))
                            .with_total(f64::from(steps)),
                    )
                    .await;
            }
        }
        Ok(())
    }

    /// The faults that strike the answer itself: made huge, its RequestID or Outcome wrong,
    /// no structured content, the tools said to change after it, or a task instead.
    fn answer_with_fault(
        &self,
        mut response: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        match self.options.fault {
            Fault::Huge => {
                // The Response travels twice in the message (structuredContent and the text
                // block): half the size each makes a message of the size asked.
                let text = "x".repeat(self.options.size / 2);
                response["Answer"] = serde_json::json!({"Text": text});
            }
            Fault::WrongRequestId => {
                response["RequestID"] = Value::String("not-the-request".into())
            }
            Fault::MissingOutcome => {
                response.as_object_mut().map(|o| o.remove("Outcome"));
            }
            Fault::NoStructured => {
                return CallToolResult::success(vec![ContentBlock::text(response.to_string())])
                    .into();
            }
            Fault::ToolsChange => {
                let peer = context.peer.clone();
                let flood = self.options.flood;
                let stateless = context
                    .protocol_version()
                    .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
                if stateless {
                    self.options.answered.send_modify(|n| *n += 1);
                } else {
                    tokio::spawn(async move {
                        for _ in 0..flood {
                            let _ = peer.notify_tool_list_changed().await;
                        }
                    });
                }
            }
            fault if fault.makes_tasks() => {
                return self.start_task(CallToolResult::structured(response));
            }
            _ => {}
        }
        CallToolResult::structured(response).into()
    }

    /// A task polled to its end: failed (task-fails, or task-input declined), waiting for a
    /// confirmation (task-input not answered yet), else completed with the call's result.
    fn task_ended(
        &self,
        entry: &TaskEntry,
        base: impl Fn(TaskStatus, String) -> Task,
    ) -> Result<DetailedTask, McpError> {
        Ok(match (self.options.fault, entry.confirmed) {
            (Fault::TaskFails, _) | (Fault::TaskInput, Some(false)) => {
                let error = serde_json::json!({
                    "code": -32603,
                    "message": "the fault server's task failed, as asked"
                });
                let task = base(TaskStatus::Failed, "failed".into());
                DetailedTask::new(
                    task,
                    TaskPayload::Failed {
                        error: error.as_object().cloned().unwrap_or_default(),
                    },
                )
            }
            (Fault::TaskInput, None) => {
                let asked: InputRequest = serde_json::from_value(serde_json::json!({
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Confirm the turn",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                            "required": ["ok"]
                        }
                    }
                }))
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                let task = base(
                    TaskStatus::InputRequired,
                    "waiting for a confirmation".into(),
                );
                DetailedTask::new(
                    task,
                    TaskPayload::InputRequired {
                        input_requests: [("confirm".to_owned(), asked)].into_iter().collect(),
                    },
                )
            }
            _ => {
                let result = serde_json::to_value(&entry.result)
                    .ok()
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default();
                let task = base(TaskStatus::Completed, "done".into());
                DetailedTask::new(task, TaskPayload::Completed { result })
            }
        })
    }
}

impl ServerHandler for Faulty {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if self.options.fault.makes_tasks() {
            let mut extensions = rmcp::model::ExtensionCapabilities::new();
            extensions.insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                serde_json::Map::new(),
            );
            capabilities.extensions = Some(extensions);
        }
        ServerConfig::new(capabilities)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let id = request.task_id;
        if self.options.fault == Fault::TaskLost {
            return Err(McpError::invalid_params(
                format!("no task {id} here (it never was, or it is gone)"),
                None,
            ));
        }
        let mut tasks = self.task_of(&id)?;
        let entry = tasks.by_id.get_mut(&id).expect("checked");
        let base = |status: TaskStatus, message: String| {
            Task::new(id.clone(), status, entry.created.clone(), now())
                .with_status_message(message)
                .with_poll_interval_ms(self.options.poll_ms)
                .with_ttl_ms(600_000)
        };
        let detailed = if entry.cancelled {
            let task = base(
                TaskStatus::Cancelled,
                "cancelled, as the client asked".into(),
            );
            DetailedTask::new(task, TaskPayload::Cancelled)
        } else if self.options.fault == Fault::TaskStuck {
            let task = base(TaskStatus::Working, "thinking".into());
            DetailedTask::new(task, TaskPayload::Working)
        } else if entry.polls_left > 0 {
            entry.polls_left -= 1;
            let left = entry.polls_left;
            let task = base(
                TaskStatus::Working,
                format!(
                    "working: {left} poll{} to go",
                    if left == 1 { "" } else { "s" }
                ),
            );
            DetailedTask::new(task, TaskPayload::Working)
        } else {
            self.task_ended(entry, base)?
        };
        Ok(GetTaskResult::new(detailed))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let id = request.task_id;
        let mut tasks = self.task_of(&id)?;
        let entry = tasks.by_id.get_mut(&id).expect("checked");
        let Some(answer) = request.input_responses.get("confirm") else {
            return Err(McpError::invalid_params(
                "tasks/update: no answer to the input request \"confirm\"",
                None,
            ));
        };
        let accepted = answer["action"] == "accept" && answer["content"]["ok"] == true;
        entry.confirmed = Some(accepted);
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let id = request.task_id;
        let mut tasks = self.task_of(&id)?;
        tasks.by_id.get_mut(&id).expect("checked").cancelled = true;
        eprintln!("fault: task {id} cancelled");
        Ok(())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.options.fault == Fault::ExitOnInitialize {
            eprintln!("fault: exiting during initialize");
            std::process::exit(1);
        }
        context.peer.set_peer_info(request.clone());
        Ok(self.get_info())
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, McpError> {
        if self.options.fault == Fault::ExitOnInitialize {
            eprintln!("fault: exiting during server/discover");
            std::process::exit(1);
        }
        Ok(rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        *self.listen_from.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(*self.options.answered.borrow());
        Some(requested.clone())
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        let mut answered = self.options.answered.subscribe();
        let mut told = self
            .listen_from
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or(*answered.borrow());
        loop {
            let now = *answered.borrow_and_update();
            if now > told {
                told = now;
                for _ in 0..self.options.flood {
                    if context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                changed = answered.changed() => if changed.is_err() { return Ok(()) },
            }
        }
    }

    async fn list_tools(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let object = |mode: Mode| match schema::self_contained(Interface::Dac, mode) {
            Value::Object(map) => Arc::new(map.clone()),
            _ => unreachable!(),
        };
        let tool = Tool::new("bkn_dac", "BKN-DAC, with a fault", object(Mode::Request))
            .with_raw_output_schema(object(Mode::Response));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        self.before_answering(&context).await?;
        let dialogue = match self.dialogue_of(&arguments, &context) {
            Ok(dialogue) => dialogue,
            Err(why) => return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into()),
        };
        let response = {
            let mut dialogue = dialogue.lock().unwrap_or_else(|p| p.into_inner());
            self.backend.answer(&mut dialogue, &arguments)
        };
        Ok(self.answer_with_fault(response, &context))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(options) = Options::read(&value) else {
        eprintln!(
            "usage: bkn-fault-server --fault NAME [--delay SECONDS] [--fast N] [--size-mb N] [--flood N] [--http PORT] (see the source for the faults)"
        );
        std::process::exit(2);
    };
    let backend = Arc::new(DomainAccess::new(
        Domain::default_domain(),
        Default::default(),
    ));
    let max_connections = value("--max-connections")
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(bkn_explorer::server::per_core::Bounds::default().max_connections);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // One table of tasks for the server: over 2026-07-28 HTTP each request may get a new
    // handler, and a task outlives the call that made it.
    let tasks: Arc<Mutex<Tasks>> = Arc::default();
    runtime.block_on(async move {
        let keyed = Arc::default();
        let make = move || Faulty {
            options: options.clone(),
            backend: backend.clone(),
            dialogue: Arc::default(),
            tasks: tasks.clone(),
            keyed: Arc::clone(&keyed),
            listen_from: Arc::default(),
        };
        match value("--http") {
            None => {
                let running = make()
                    .serve(rmcp::transport::stdio())
                    .await
                    .expect("a session");
                let _ = running.waiting().await;
            }
            Some(port) => serve_http(make, &port, max_connections).await,
        }
    });
}

impl Options {
    /// The options the command line gives (`value` of a flag); `None` without a fault it
    /// knows. Numbers that do not read take their defaults.
    fn read(value: &dyn Fn(&str) -> Option<String>) -> Option<Options> {
        let fault = value("--fault").as_deref().and_then(Fault::parse)?;
        Some(Options {
            fault,
            delay: Duration::from_secs_f64(
                value("--delay").and_then(|d| d.parse().ok()).unwrap_or(2.0),
            ),
            fast: value("--fast").and_then(|s| s.parse().ok()).unwrap_or(0),
            calls: Arc::default(),
            size: value("--size-mb")
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(20)
                * 1024
                * 1024,
            polls: value("--polls").and_then(|s| s.parse().ok()).unwrap_or(3),
            poll_ms: value("--poll-ms")
                .and_then(|s| s.parse().ok())
                .unwrap_or(20),
            http: value("--http").is_some(),
            flood: value("--flood").and_then(|s| s.parse().ok()).unwrap_or(1),
            answered: Arc::new(tokio::sync::watch::channel(0).0),
        })
    }
}

/// Serves Streamable HTTP on 127.0.0.1:`port` (0: any free port, said on standard error),
/// a handler made by `make` for each session or stateless request.
async fn serve_http(
    make: impl Fn() -> Faulty + Send + Sync + 'static,
    port: &str,
    max_connections: usize,
) {
    use rmcp::transport::StreamableHttpServerConfig;
    use rmcp::transport::streamable_http_server::StreamableHttpService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    let service = StreamableHttpService::new(
        move || Ok(make()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().unwrap_or(0)))
        .await
        .expect("a port");
    eprintln!(
        "bkn-fault-server listening on http://{}/mcp",
        listener.local_addr().expect("an address")
    );
    // The bounds of every listener of this program (connections held, each request's head
    // within its deadline, idle connections closed): a client under test must not be able
    // to hold it open for ever either.
    let served = bkn_explorer::server::per_core::serve(
        listener,
        app,
        tokio_util::sync::CancellationToken::new(),
        bkn_explorer::server::per_core::Bounds {
            max_connections: max_connections.max(1),
            ..Default::default()
        },
    )
    .expect("serving");
    served.await.expect("serving").expect("serving");
}
