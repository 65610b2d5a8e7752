//! Shared by the integration tests: the reference servers as child processes (stdio, or HTTP on
//! an ephemeral port), a bare rmcp client, and a dialogue that checks every Response it gets
//! with the conformance engine.

#![allow(dead_code)] // each test binary uses a different part

use bkn_explorer::client::dialogue::text_of;
use bkn_explorer::protocol::conformance::{DialogueChecker, check_exchange, check_message_as};
use bkn_explorer::protocol::message::{CommonDefaults, Fill, fill_request, new_id};
use bkn_explorer::protocol::{Interface, Mode};
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value, json};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};

pub type Client = RunningService<RoleClient, ()>;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_bkn-explorer")
}

/// `work` on each item, `width` at a time on threads of their own; the results in the items'
/// order. For cases that are each a row of processes to wait on (a conformance scenario, an
/// SDK peer, a certify run): one after the other, a test waits on each start in turn. A
/// panic in a case is the test's, with its message.
pub fn at_once<T: Send, R: Send>(
    width: usize,
    items: Vec<T>,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let mut items = items.into_iter().peekable();
    let mut results = Vec::new();
    while items.peek().is_some() {
        let batch: Vec<T> = items.by_ref().take(width.max(1)).collect();
        std::thread::scope(|scope| {
            let running: Vec<_> = batch
                .into_iter()
                .map(|item| scope.spawn(|| work(item)))
                .collect();
            for run in running {
                match run.join() {
                    Ok(r) => results.push(r),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
    }
    results
}

/// The interpreter `python3` on PATH stands for, found once: the stdlib-only peers are started
/// by the dozen (a certify run starts one per connection), and a version manager's shim in
/// front of the interpreter (pyenv's is a shell script) costs each start 0.2-1 s on a busy
/// machine. None when there is no python3.
pub fn python3() -> Option<&'static str> {
    static PYTHON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            (out.status.success() && !path.is_empty()).then_some(path)
        })
        .as_deref()
}

/// How a test reaches a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// Which MCP generation a test's client speaks (MCP-BINDING section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// 2025-11-25: `initialize`, and over HTTP an `Mcp-Session-Id`; the session is the dialogue.
    Session,
    /// 2026-07-28: `server/discover`, no session; the server keeps the dialogue by DialogID.
    Stateless,
}

impl Generation {
    pub const BOTH: [Generation; 2] = [Generation::Session, Generation::Stateless];

    /// How an rmcp client starts in this generation.
    pub fn lifecycle(self) -> rmcp::service::ClientLifecycleMode {
        match self {
            Generation::Session => rmcp::service::ClientLifecycleMode::Initialize,
            Generation::Stateless => rmcp::service::ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        }
    }
}

/// A reference server started for a test, and a way to open sessions on it.
pub struct Server {
    pub args: Vec<String>,
    pub transport: Transport,
    pub generation: Generation,
    http: Option<HttpChild>,
}

pub struct HttpChild {
    pub child: tokio::process::Child,
    pub url: String,
}

impl Server {
    /// Starts `bkn-explorer serve <args>`; over stdio each session is its own process.
    pub async fn start(transport: Transport, args: &[&str]) -> Server {
        Server::start_in(transport, Generation::Session, args).await
    }

    /// Starts `bkn-explorer serve <args>`, whose clients speak `generation`.
    pub async fn start_in(transport: Transport, generation: Generation, args: &[&str]) -> Server {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let http = match transport {
            Transport::Stdio => None,
            Transport::Http => Some(spawn_http(&args).await),
        };
        Server {
            args,
            transport,
            generation,
            http,
        }
    }

    pub fn url(&self) -> &str {
        &self.http.as_ref().expect("an HTTP server").url
    }

    /// A new MCP session: a new dialogue.
    pub async fn session(&self) -> Client {
        self.session_with_id().await.0
    }

    /// A dialogue on a new MCP session, with the DialogID MCP-BINDING section 3 asks for: the
    /// `Mcp-Session-Id` over HTTP, a fresh UUID over stdio.
    pub async fn dialogue(&self, interface: Interface) -> Dialogue {
        let (client, session) = self.session_with_id().await;
        let mut d = Dialogue::new(client, interface);
        if let Some(id) = session {
            d.dialog_id = id;
        }
        d
    }

    /// A new MCP session and, over HTTP, its `Mcp-Session-Id`.
    pub async fn session_with_id(&self) -> (Client, Option<String>) {
        match &self.http {
            None => {
                let command = tokio::process::Command::new(bin()).configure(|c| {
                    c.arg("serve")
                        .args(&self.args)
                        .arg("--log-level")
                        .arg("warn");
                });
                let (transport, _stderr) = TokioChildProcess::builder(command)
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("the server starts");
                use rmcp::service::ClientServiceExt;
                (
                    ().serve_with_lifecycle(transport, self.generation.lifecycle())
                        .await
                        .expect("the MCP lifecycle starts over stdio"),
                    None,
                )
            }
            Some(h) => http_session_in(&h.url, self.generation).await,
        }
    }
}

/// A session with an HTTP server, and its `Mcp-Session-Id` (through bkn-explorer's HTTP
/// client: rmcp's, wrapped to capture the id).
pub async fn http_session(url: &str) -> (Client, Option<String>) {
    http_session_in(url, Generation::Session).await
}

/// A client of an HTTP server in `generation`, and the `Mcp-Session-Id` if there is one.
pub async fn http_session_in(url: &str, generation: Generation) -> (Client, Option<String>) {
    use rmcp::service::ClientServiceExt;
    let http = bkn_explorer::client::http::LoggingHttpClient::new(
        reqwest::Client::new(),
        0,
        bkn_explorer::client::event::EventSink::none(),
        64 * 1024 * 1024,
    );
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_owned(),
        );
    let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
    let client =
        ().serve_with_lifecycle(transport, generation.lifecycle())
            .await
            .expect("the MCP lifecycle starts over HTTP");
    (client, http.session_id())
}

/// A dialogue with an HTTP server, its DialogID the `Mcp-Session-Id`.
pub async fn http_dialogue(url: &str, interface: Interface) -> Dialogue {
    let (client, session) = http_session(url).await;
    let mut d = Dialogue::new(client, interface);
    d.dialog_id = session.expect("the server assigns a session id");
    d
}

/// Starts an HTTP server on an ephemeral port and waits for the line that names its URL.
pub async fn spawn_http(args: &[String]) -> HttpChild {
    let ephemeral: &[&str] = if args.iter().any(|a| a == "--http") {
        &[]
    } else {
        &["--http", "127.0.0.1:0"]
    };
    let mut child = tokio::process::Command::new(bin())
        .arg("serve")
        .args(args)
        .args(ephemeral)
        .args(["--log-level", "warn"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line.find("http://") {
                return line[at..].trim().to_owned();
            }
        }
        panic!("the server exited before listening");
    })
    .await
    .expect("the server listens within 20 s");
    // Keep draining stderr so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    HttpChild { child, url }
}

/// What came back from one turn.
#[derive(Debug)]
pub enum Reply {
    Response(Value),
    /// A tool error (`isError`), with its text.
    ToolError(String),
}

impl Reply {
    pub fn response(self) -> Value {
        match self {
            Reply::Response(v) => v,
            Reply::ToolError(t) => panic!("expected a Response, got a tool error:\n{t}"),
        }
    }

    pub fn tool_error(self) -> String {
        match self {
            Reply::ToolError(t) => t,
            Reply::Response(v) => panic!("expected a tool error, got a Response:\n{v:#}"),
        }
    }
}

/// A dialogue over one MCP session, played as Basic Knowledge would.
pub struct Dialogue {
    pub client: Client,
    pub interface: Interface,
    pub dialog_id: String,
    pub next_turn: u64,
    pub defaults: CommonDefaults,
    checker: DialogueChecker,
}

impl Dialogue {
    pub fn new(client: Client, interface: Interface) -> Dialogue {
        Dialogue {
            client,
            interface,
            dialog_id: new_id(),
            next_turn: 0,
            defaults: CommonDefaults::default(),
            checker: DialogueChecker::new(),
        }
    }

    /// Fills the common fields of `fields`, sends it, and checks the Response at all three
    /// levels (the test fails on any finding).
    pub async fn send(&mut self, fields: Value) -> Reply {
        let mut request = fields.as_object().cloned().unwrap_or_default();
        fill_request(
            &mut request,
            self.interface,
            &self.dialog_id,
            self.next_turn,
            &self.defaults,
            Fill::Missing,
        );
        self.send_as_is(Value::Object(request)).await
    }

    /// Sends a Request exactly as given.
    pub async fn send_as_is(&mut self, request: Value) -> Reply {
        let result = call(&self.client, self.interface, request.clone()).await;
        if result.is_error == Some(true) {
            assert!(
                result.structured_content.is_none(),
                "a tool error carries no structuredContent"
            );
            return Reply::ToolError(text_of(&result));
        }
        let response = result
            .structured_content
            .clone()
            .expect("structuredContent");
        // The text block carries the same JSON (MCP-BINDING section 1).
        let text: Value = serde_json::from_str(&text_of(&result)).expect("the text block is JSON");
        assert_eq!(text, response, "text block and structuredContent differ");
        let mut findings =
            check_message_as(&response, Some(self.interface), Some(Mode::Response)).findings;
        findings.extend(check_exchange(&request, &response));
        findings.extend(self.checker.check(&request));
        self.checker.accept(&request);
        findings.extend(self.checker.check(&response));
        self.checker.accept(&response);
        assert!(
            findings.is_empty(),
            "non-conformant Response:\n{findings:#?}\n{response:#}"
        );
        self.next_turn = request["TurnIndex"].as_u64().unwrap_or(self.next_turn) + 1;
        Reply::Response(response)
    }
}

pub async fn call(client: &Client, interface: Interface, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(interface.tool_name()).with_arguments(arguments))
        .await
        .expect("tools/call succeeds at the protocol level")
}

/// The PA Statuses of a feasibility Response, in step order.
pub fn statuses(response: &Value) -> Vec<String> {
    response["Feasibility"]["Steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|s| s["PAStatus"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The status of each commitment of a Response, by ID.
pub fn commitment_states(response: &Value) -> Map<String, Value> {
    response["CommitmentStatus"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|c| {
                    (
                        c["CommitmentID"].as_str().unwrap().to_owned(),
                        c["Status"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A feasibility Request body for the given statements.
pub fn plan(statements: &[&str]) -> Value {
    let steps: Vec<Value> = statements
        .iter()
        .enumerate()
        .map(|(i, s)| json!({"Step": i, "Statement": s}))
        .collect();
    json!({"Kind": "feasibility", "ProcessActions": steps})
}

/// `bkn-fault-server` with one fault (and its options) as a stdio server: the reference
/// Domain Access, broken on purpose.
pub fn fault_spec(fault: &str, extra: &[&str]) -> bkn_explorer::client::spec::ServerSpec {
    use bkn_explorer::client::spec::{ServerSpec, StdioSpec, TransportSpec};
    let mut args = vec!["--fault".to_owned(), fault.to_owned()];
    args.extend(extra.iter().map(|s| s.to_string()));
    ServerSpec::new(
        format!("fault-{fault}"),
        TransportSpec::Stdio(StdioSpec {
            command: env!("CARGO_BIN_EXE_bkn-fault-server").into(),
            args,
            ..StdioSpec::default()
        }),
    )
}

/// A Streamable HTTP server by URL.
pub fn http_spec(url: &str) -> bkn_explorer::client::spec::ServerSpec {
    use bkn_explorer::client::spec::{HttpSpec, ServerSpec, TransportSpec};
    ServerSpec::new(
        "http",
        TransportSpec::Http(HttpSpec {
            url: url.into(),
            ..HttpSpec::default()
        }),
    )
}

pub mod tui;

/// The official MCP conformance suite, installed once (`.ci/mcp-conformance --install`): the
/// paths of its Node and of the suite.
pub fn conformance_suite() -> (String, String) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let install = std::process::Command::new(root.join(".ci/mcp-conformance"))
        .arg("--install")
        .output()
        .expect("the conformance installer runs (it needs npm; `.ci/run` makes sure of it)");
    assert!(install.status.success(), "{install:?}");
    let paths = String::from_utf8_lossy(&install.stdout).to_string();
    let mut lines = paths.lines();
    (
        lines.next().unwrap().to_owned(),
        lines.next().unwrap().to_owned(),
    )
}

/// Runs one of the suite's client scenarios with `command` as the client (the suite appends
/// the URL, and reads the command as a shell would), in a data folder of its own; whether it
/// passed, and everything it printed.
pub fn client_scenario(
    (node, suite): &(String, String),
    scenario: &str,
    command: &str,
    env: &[(&str, String)],
) -> (bool, String) {
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(node)
        .args([
            suite,
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
        ])
        .current_dir(data.path())
        .env("BKN_EXPLORER_DATA_DIR", data.path())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("the suite runs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success() && all.contains("OVERALL: PASSED"), all)
}

/// The peers written with the official SDKs (tests/peers): the Python SDK `mcp` 2.x and the
/// TypeScript SDK v2 packages, installed by tests/peers/install.sh from the package
/// registries (once; later runs find them). Their Python and Node.
pub fn sdk_peers() -> (String, String) {
    static PEERS: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    PEERS
        .get_or_init(|| {
            let script =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/install.sh");
            let out = std::process::Command::new(script)
                .output()
                .expect("tests/peers/install.sh runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "installing the SDK peers failed (the interop tests need the PyPI and npm \
                 registries):\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let lines: Vec<&str> = stdout.lines().collect();
            let [.., python, node] = lines[..] else {
                panic!("install.sh printed no paths: {stdout}")
            };
            (python.to_owned(), node.to_owned())
        })
        .clone()
}

pub fn peer(path: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(path)
        .display()
        .to_string()
}

/// A peer's HTTP server: started, its URL read from its first line.
pub struct PeerServer {
    child: std::process::Child,
    pub url: String,
}

impl PeerServer {
    /// `program script --transport http --port 0 flags...`
    pub fn start(program: &str, script: &str, flags: &[&str]) -> PeerServer {
        use std::io::BufRead;
        let mut command = std::process::Command::new(program);
        command
            .arg(peer(script))
            .args(["--transport", "http", "--port", "0"]);
        command.args(flags);
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the peer server starts");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines
            .next()
            .expect("the peer server prints its address")
            .unwrap();
        let url = line
            .strip_prefix("LISTENING ")
            .unwrap_or_else(|| panic!("not an address: {line}"))
            .to_owned();
        PeerServer { child, url }
    }
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A process's resident memory now (VmRSS), in KiB.
pub fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmRSS is in /proc/PID/status")
}

/// Runs a command to its end, as `Command::output` does, and returns with its output the
/// child's own peak resident memory in KiB: its VmHWM, read from /proc while it runs (the
/// mark is its own from its exec on). Neither getrusage(RUSAGE_CHILDREN) (the largest child
/// the test binary ever waited for: other tests' among them) nor wait4's maxrss (which counts
/// the parent's memory the child shared until its exec: the whole test binary's) would do,
/// all the tests being one binary. Growth in the last few milliseconds before the end may be
/// missed: the bounds checked are generous, and what they catch grows for seconds.
#[cfg(target_os = "linux")]
pub fn output_and_peak(command: &mut std::process::Command) -> (std::process::Output, i64) {
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    let read = |mut from: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0i64;
    let status = loop {
        // Read before the wait: once reaped, its /proc entry is gone.
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<i64>().ok())
        }) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let output = std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, peak_kib)
}

/// Reads a child's standard error until it says where it listens (its first `http://…`
/// word), then drains the rest in the background so that the child never blocks on a full
/// pipe. `who` names the child in the failure.
pub async fn listening_url(child: &mut tokio::process::Child, who: &str) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{who} says where it listens"));
        if let Some(at) = line.find("http://") {
            break line[at..].split([',', ' ']).next().unwrap().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    url
}

/// Starts `proxy --http` in front of `upstream`, recording to `record`; returns it and the
/// URL it listens on.
pub async fn http_proxy(
    upstream: &str,
    record: &std::path::Path,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(bin())
        .args(["proxy", "--http", "127.0.0.1:0", "--upstream", upstream])
        .arg("--record")
        .arg(record)
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = listening_url(&mut child, "the proxy").await;
    (child, url)
}

/// `bkn-explorer dialogue REQUESTS ARGS…`, waited for; it must succeed (its standard error
/// says why when it does not).
pub async fn dialogue_ok(requests: &std::path::Path, args: &[&str]) -> std::process::Output {
    let out = tokio::process::Command::new(bin())
        .arg("dialogue")
        .arg(requests)
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
