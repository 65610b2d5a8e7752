//! A server's lists that change, over MCP 2026-07-28: no session and no standing stream, so the
//! client opens a `subscriptions/listen` stream (SEP-2575) when the server offers list
//! changes, and reads its tools and resources again on each event. Against a Python SDK
//! server whose tool list changes on a call (tests/peers/py_changing_server.py) and the fault
//! server's `tools-change`, over stdio and HTTP, through the explorer's engine; a flood of
//! events costs one pending refresh, and turns go on meanwhile. The same Python server also
//! offers a tool with an invalid `x-mcp-header`, which the client hides.

use crate::common;

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::defaults::{Chosen, Overrides};
use bkn_explorer::client::engine::{Engine, EngineEvent};
use bkn_explorer::client::event::Event;
use bkn_explorer::client::generation::ProtocolChoice;
use bkn_explorer::client::spec::{ServerSpec, StdioSpec, TransportSpec};
use bkn_explorer::client::turn::Turn;
use bkn_explorer::protocol::Interface;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// The Python of the SDK peers (tests/peers/install.sh makes it once; later runs find it).
fn python() -> String {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/install.sh");
            let out = std::process::Command::new(script)
                .output()
                .expect("tests/peers/install.sh runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "installing the SDK peers failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let lines: Vec<&str> = stdout.lines().collect();
            let [.., python, _node] = lines[..] else {
                panic!("install.sh printed no paths: {stdout}")
            };
            python.to_owned()
        })
        .clone()
}

fn changing_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers/py_changing_server.py")
        .display()
        .to_string()
}

/// A child that prints `LISTENING URL` first, ended when dropped.
struct Listening {
    child: std::process::Child,
    url: String,
}

impl Listening {
    fn start(program: &str, args: &[&str]) -> Listening {
        use std::io::BufRead;
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines.next().expect("an address").unwrap();
        let url = line
            .strip_prefix("LISTENING ")
            .unwrap_or_else(|| panic!("not an address: {line}"))
            .to_owned();
        Listening { child, url }
    }

    /// The fault server over HTTP: its address is on stderr.
    fn fault(args: &[&str]) -> Listening {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bkn-fault-server"))
            .args(args)
            .args(["--http", "0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the fault server starts");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().expect("an address").unwrap();
        let url = line
            .rsplit_once("listening on ")
            .unwrap_or_else(|| panic!("not an address: {line}"))
            .1
            .to_owned();
        Listening { child, url }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio(name: &str, command: &str, args: &[&str]) -> ServerSpec {
    ServerSpec::new(
        name,
        TransportSpec::Stdio(StdioSpec {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            ..StdioSpec::default()
        }),
    )
}

/// The explorer's engine with one dialogue, speaking 2026-07-28 only.
struct Explorer {
    engine: Engine,
    events: mpsc::UnboundedReceiver<EngineEvent>,
    /// What the client layer said (its log, list changes), in order.
    said: Vec<Event>,
}

const KEY: u64 = 1;

impl Explorer {
    async fn open(spec: ServerSpec) -> Explorer {
        let (tx, events) = mpsc::unbounded_channel();
        let options = ConnectOptions {
            timeout: Duration::from_secs(20),
            embedded_program: Some(PathBuf::from(common::bin())),
            protocol: Some(ProtocolChoice::Stateless),
            ..ConnectOptions::default()
        };
        let mut explorer = Explorer {
            engine: Engine::new(tx, options),
            events,
            said: Vec::new(),
        };
        explorer.engine.open(
            KEY,
            spec,
            Interface::Dac,
            Chosen::built_in(),
            Overrides::default(),
            0,
        );
        loop {
            match explorer.next().await {
                EngineEvent::Opened { summary, .. } => {
                    assert!(summary.protocol_version.starts_with("2026"), "{summary:?}");
                    return explorer;
                }
                EngineEvent::Failed { error, .. } => panic!("the dialogue did not open: {error}"),
                _ => {}
            }
        }
    }

    async fn next(&mut self) -> EngineEvent {
        let Ok(event) = tokio::time::timeout(Duration::from_secs(60), self.events.recv()).await
        else {
            panic!(
                "no engine event within a minute; the client said {:#?}",
                self.said
            )
        };
        let event = event.expect("the engine is alive");
        if let EngineEvent::Client(said) = &event {
            self.said.push(said.clone());
        }
        event
    }

    async fn turn(&mut self) -> Turn {
        assert!(self.engine.send(
            KEY,
            json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}),
            bkn_explorer::client::dialogue::Filling::Missing,
        ));
        loop {
            if let EngineEvent::TurnFinished { turn, .. } = self.next().await {
                return turn;
            }
        }
    }

    /// Waits for the client to say the server's lists changed (once more than `before`
    /// times; it may have said so while a turn was being waited for).
    async fn list_changed(&mut self, before: usize) {
        while self.list_changes_told() <= before {
            self.next().await;
        }
    }

    /// Reads the server's offer again (what the explorer does on a list change): its tools.
    async fn refresh(&mut self) -> Vec<String> {
        assert!(self.engine.refresh(KEY));
        loop {
            if let EngineEvent::Refreshed { summary, .. } = self.next().await {
                return summary.tools.iter().map(|t| t.name.to_string()).collect();
            }
        }
    }

    fn log_says(&self, words: &str) -> bool {
        self.said
            .iter()
            .any(|e| matches!(e, Event::Log(entry) if entry.text.contains(words)))
    }

    fn list_changes_told(&self) -> usize {
        self.said
            .iter()
            .filter(|e| matches!(e, Event::ListChanged { .. }))
            .count()
    }
}

fn answered(turn: &Turn) {
    assert!(
        matches!(
            turn.reply,
            bkn_explorer::client::turn::Reply::Response { .. }
        ),
        "{:?}",
        turn.reply
    );
}

/// The Python SDK's server adds a tool on each call and publishes it on its listen streams:
/// the engine hears it on the stream it opened and reads the new tool list, over stdio and
/// over HTTP.
#[tokio::test]
async fn the_engine_sees_a_python_sdk_servers_new_tools_over_stdio_and_http() {
    let python = python();
    let script = changing_script();
    let http = Listening::start(&python, &[&script, "--transport", "http", "--port", "0"]);
    for spec in [
        stdio("py-changing", &python, &[&script]),
        common::http_spec(&http.url),
    ] {
        let case = spec.location();
        let mut explorer = Explorer::open(spec).await;
        assert!(
            explorer.log_says("listening for tools and resources list changes")
                || explorer.log_says("subscriptions/listen"),
            "{case}: {:?}",
            explorer.said
        );
        let turn = explorer.turn().await;
        answered(&turn);
        explorer.list_changed(0).await;
        let tools = explorer.refresh().await;
        assert!(
            tools.iter().any(|t| t.starts_with("note_")),
            "{case}: the new tool is listed: {tools:?}"
        );
        assert!(tools.contains(&"bkn_dac".to_owned()), "{case}: {tools:?}");
        // The stream stays open: the next change is heard too.
        answered(&explorer.turn().await);
        explorer.list_changed(1).await;
        let again = explorer.refresh().await;
        assert!(
            again.len() > tools.len(),
            "{case}: {again:?} after {tools:?}"
        );
        explorer.engine.close(KEY);
    }
}

/// A tool whose `x-mcp-header` annotation is invalid (SEP-2243) is hidden over 2026-07-28 on
/// stdio as over HTTP (there rmcp's transport drops it, and the client still says why): not
/// among the tools, listed apart with the reason, said in the log, a call of it refused.
#[tokio::test]
async fn a_tool_with_an_invalid_x_mcp_header_is_hidden_over_stdio_and_http() {
    use bkn_explorer::client::connection::{CallError, Connection};
    let python = python();
    let script = changing_script();
    let http = Listening::start(&python, &[&script, "--transport", "http", "--port", "0"]);
    for spec in [
        stdio("py-changing", &python, &[&script]),
        common::http_spec(&http.url),
    ] {
        let case = spec.location();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = ConnectOptions {
            protocol: Some(ProtocolChoice::Stateless),
            events: bkn_explorer::client::event::EventSink::new(tx),
            ..ConnectOptions::default()
        };
        let connection = Connection::connect(&spec, &options).await.unwrap();
        let s = &connection.summary;
        assert!(s.tools.iter().all(|t| t.name != "bad_header"), "{case}");
        assert_eq!(s.hidden_tools.len(), 1, "{case}: {:?}", s.hidden_tools);
        assert_eq!(s.hidden_tools[0].name, "bad_header");
        assert!(
            s.hidden_tools[0]
                .reason
                .contains("`My Region` is not an HTTP header name"),
            "{case}: {}",
            s.hidden_tools[0].reason
        );
        let refused = connection
            .call_tool(
                "bad_header",
                Default::default(),
                &tokio_util::sync::CancellationToken::new(),
            )
            .await;
        assert!(
            matches!(&refused, Err(CallError::Refused(why)) if why.contains("not sent")),
            "{case}: {refused:?}"
        );
        connection.close().await;
        let logged = std::iter::from_fn(|| rx.try_recv().ok()).any(
            |e| matches!(e, Event::Log(entry) if entry.text.contains("tool bad_header is hidden")),
        );
        assert!(logged, "{case}: the log says it");
    }
}

/// Arguments annotated with `x-mcp-header` travel in `Mcp-Param-*` headers over HTTP, which
/// the Python SDK's server checks against the body (a call without them gets HTTP 400), as it
/// checks `Mcp-Name` (`echo_région` needs Base64 there), values that need Base64 included.
#[tokio::test]
async fn annotated_arguments_travel_in_mcp_param_headers_to_a_python_sdk_server() {
    use bkn_explorer::client::connection::Connection;
    let python = python();
    let script = changing_script();
    let http = Listening::start(&python, &[&script, "--transport", "http", "--port", "0"]);
    let options = ConnectOptions {
        protocol: Some(ProtocolChoice::Stateless),
        ..ConnectOptions::default()
    };
    let connection = Connection::connect(&common::http_spec(&http.url), &options)
        .await
        .unwrap();
    for tool in ["echo_region", "echo_r\u{e9}gion"] {
        for region in ["us-west1", "Hello, \u{4e16}\u{754c}", " padded "] {
            let arguments = json!({"region": region}).as_object().cloned().unwrap();
            let result = connection
                .call_tool(tool, arguments, &tokio_util::sync::CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("{tool} {region:?}: {e}"));
            assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
            let text = serde_json::to_value(&result.content).unwrap();
            assert_eq!(text[0]["text"], region, "{tool}: {result:?}");
        }
    }
    connection.close().await;
}

/// The fault server's `tools-change` over 2026-07-28 serves `subscriptions/listen` and says
/// its tools changed there after each answer, over stdio and HTTP.
#[tokio::test]
async fn the_fault_servers_tools_change_is_heard_over_2026_on_stdio_and_http() {
    let http = Listening::fault(&["--fault", "tools-change"]);
    for spec in [
        common::fault_spec("tools-change", &[]),
        common::http_spec(&http.url),
    ] {
        let case = spec.location();
        let mut explorer = Explorer::open(spec).await;
        answered(&explorer.turn().await);
        explorer.list_changed(0).await;
        let tools = explorer.refresh().await;
        assert_eq!(tools, ["bkn_dac"], "{case}");
        assert!(
            explorer.log_says("listening for tools list changes"),
            "{case}: {:?}",
            explorer.said
        );
        explorer.engine.close(KEY);
    }
}

/// A server that floods its listen stream (10,000 events for two turns): the client tells of
/// the change once until the lists are read again, so nothing queues up, and the turns in
/// between are answered.
#[tokio::test]
async fn a_flooding_listen_stream_costs_one_pending_refresh() {
    let mut explorer =
        Explorer::open(common::fault_spec("tools-change", &["--flood", "5000"])).await;
    answered(&explorer.turn().await);
    explorer.list_changed(0).await;
    answered(&explorer.turn().await);
    let tools = explorer.refresh().await;
    assert_eq!(tools, ["bkn_dac"]);
    // One told before the reading; at most one more while it read (a change during the
    // reading is news again).
    let told = explorer.list_changes_told();
    assert!((1..=2).contains(&told), "told {told} times");
    assert!(explorer.engine.is_open(KEY));
}
