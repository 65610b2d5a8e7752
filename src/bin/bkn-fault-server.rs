//! A deliberately broken BKN-DAC server, to see how a client copes (the explorer's own tests
//! use it; so can anyone testing a Basic Knowledge). It answers like the reference Domain
//! Access server, except for one fault:
//!
//!   exit-on-initialize   exits when the client opens (initialize, or server/discover)
//!   crash-on-call        exits (status 101) when a tool is called
//!   garbage              writes lines that are not JSON-RPC instead of answering
//!   hang                 never answers a tool call
//!   slow                 answers after --delay seconds, sending progress meanwhile
//!   huge                 answers with a message of --size-mb MiB (20 by default)
//!   wrong-request-id     answers with a RequestID that is not the Request's QueryID
//!   missing-outcome      answers without Outcome
//!   no-structured        answers with the JSON in a text block only
//!   tools-change         says its tools changed (notifications/tools/list_changed) after
//!                        each answer: not a fault, a server whose offer moves. Over
//!                        2025-11-25 on the session; over 2026-07-28 on every open
//!                        subscriptions/listen stream (it serves them, for tools lists).
//!                        --flood N says it N times after each answer
//!   none                 no fault at all
//!
//! usage: bkn-fault-server --fault NAME [--delay SECONDS] [--size-mb N] [--flood N] [--http PORT]

#![allow(deprecated)]

use bkn_explorer::protocol::schema;
use bkn_explorer::protocol::{Interface, Mode};
use bkn_explorer::server::dac::domain::Domain;
use bkn_explorer::server::dac::{DacDialogue, DomainAccess};
use bkn_explorer::server::mcp::Backend;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
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
}

impl Fault {
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
            _ => return None,
        })
    }
}

#[derive(Clone)]
struct Options {
    fault: Fault,
    delay: Duration,
    size: usize,
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
    dialogue: Arc<Mutex<DacDialogue>>,
    /// The answers counted when a listen was accepted (before its acknowledgement): an answer
    /// given between then and the stream's start is told on it, not lost.
    listen_from: Arc<Mutex<Option<u64>>>,
}

impl ServerHandler for Faulty {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
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
                return Err(McpError::internal_error("cancelled", None));
            }
            Fault::Hang => {
                context.ct.cancelled().await;
                eprintln!("fault: the hanging call was cancelled");
                return Err(McpError::internal_error("cancelled", None));
            }
            Fault::Slow => {
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
            }
            _ => {}
        }
        let mut response = {
            let mut dialogue = self.dialogue.lock().unwrap_or_else(|p| p.into_inner());
            self.backend.answer(&mut dialogue, &arguments)
        };
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
                return Ok(
                    CallToolResult::success(vec![ContentBlock::text(response.to_string())]).into(),
                );
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
            _ => {}
        }
        Ok(CallToolResult::structured(response).into())
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
    let Some(fault) = value("--fault").as_deref().and_then(Fault::parse) else {
        eprintln!(
            "usage: bkn-fault-server --fault NAME [--delay SECONDS] [--size-mb N] [--flood N] [--http PORT] (see the source for the faults)"
        );
        std::process::exit(2);
    };
    let options = Options {
        fault,
        delay: Duration::from_secs_f64(
            value("--delay").and_then(|d| d.parse().ok()).unwrap_or(2.0),
        ),
        size: value("--size-mb")
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(20)
            * 1024
            * 1024,
        flood: value("--flood").and_then(|s| s.parse().ok()).unwrap_or(1),
        answered: Arc::new(tokio::sync::watch::channel(0).0),
    };
    let backend = Arc::new(DomainAccess::new(
        Domain::default_domain(),
        Default::default(),
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let make = move || Faulty {
            options: options.clone(),
            backend: backend.clone(),
            dialogue: Arc::default(),
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
            Some(port) => {
                use rmcp::transport::StreamableHttpServerConfig;
                use rmcp::transport::streamable_http_server::StreamableHttpService;
                use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
                let service = StreamableHttpService::new(
                    move || Ok(make()),
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default(),
                );
                let app = axum::Router::new().nest_service("/mcp", service);
                let listener =
                    tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>().unwrap_or(0)))
                        .await
                        .expect("a port");
                eprintln!(
                    "bkn-fault-server listening on http://{}/mcp",
                    listener.local_addr().expect("an address")
                );
                axum::serve(listener, app).await.expect("serving");
            }
        }
    });
}
