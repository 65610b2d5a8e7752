//! The MCP client engine against the reference servers (stdio and HTTP) and against a
//! deliberately broken server: every fault gives the right findings or a clear error within
//! the timeout, never a panic or a hang. Also the headless commands' exit codes.

use crate::common;

use bkn_explorer::client::connection::{ConnectOptions, Connection, DialogIdOrigin};
use bkn_explorer::client::defaults::Chosen;
use bkn_explorer::client::dialogue::{Dialogue, Filling};
use bkn_explorer::client::event::{Event, EventSink, LogKind};
use bkn_explorer::client::generation::ProtocolChoice;
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::client::turn::{ErrorKind, Reply, Turn};
use bkn_explorer::protocol::Interface;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn fault_server() -> &'static str {
    env!("CARGO_BIN_EXE_bkn-fault-server")
}

fn options(timeout_s: u64) -> ConnectOptions {
    ConnectOptions {
        timeout: Duration::from_secs(timeout_s),
        embedded_program: Some(PathBuf::from(common::bin())),
        ..ConnectOptions::default()
    }
}

async fn open(spec: &ServerSpec, options: &ConnectOptions, interface: Interface) -> Dialogue {
    let connection = Connection::connect(spec, options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    Dialogue::open(connection, interface, Chosen::built_in())
        .map_err(|e| e.message)
        .unwrap()
}

/// One turn. What ended it is judged from its reply (a timeout, an exit, a limit each say
/// so), never from a wall clock; a turn that never ends (a timeout that does not fire) fails
/// here, after two minutes, longer than any timeout these tests set.
async fn turn(d: &mut Dialogue, fields: Value) -> Turn {
    let request = d.prepare(fields, Filling::Missing);
    tokio::time::timeout(
        Duration::from_secs(120),
        d.send(request, &CancellationToken::new()),
    )
    .await
    .expect("the turn ends")
}

fn checks(turn: &Turn) -> Vec<String> {
    turn.findings
        .iter()
        .map(|f| format!("{} {}", f.finding.check, f.finding.pointer))
        .collect()
}

fn error(turn: &Turn) -> (ErrorKind, String) {
    match &turn.reply {
        Reply::Error(e) => (e.kind, e.message.clone()),
        other => panic!("expected an error, got {other:?}"),
    }
}

const CONSTRAINTS: &str = r#"{"Kind": "constraints", "EntityIDs": ["Fountain#1"]}"#;

fn constraints() -> Value {
    serde_json::from_str(CONSTRAINTS).unwrap()
}

#[tokio::test]
async fn dialogues_with_both_reference_servers_over_both_transports() {
    let http_dac = common::spawn_http(&["dac".into()]).await;
    let http_usr = common::spawn_http(&["usr".into()]).await;
    let cases = [
        (
            ServerSpec::embedded(Interface::Dac),
            Interface::Dac,
            DialogIdOrigin::Client,
        ),
        (
            ServerSpec::embedded(Interface::Usr),
            Interface::Usr,
            DialogIdOrigin::Client,
        ),
        (
            common::http_spec(&http_dac.url),
            Interface::Dac,
            DialogIdOrigin::McpSession,
        ),
        (
            common::http_spec(&http_usr.url),
            Interface::Usr,
            DialogIdOrigin::McpSession,
        ),
    ];
    // Each in both generations: 2025-11-25 pinned (the dialogue is the MCP session), and
    // auto, which gets 2026-07-28 from the reference servers (kept by DialogID).
    let cases = cases.into_iter().flat_map(|(spec, interface, origin)| {
        [
            (spec.clone(), interface, origin, ProtocolChoice::Session),
            (
                spec,
                interface,
                DialogIdOrigin::Client,
                ProtocolChoice::Auto,
            ),
        ]
    });
    for (spec, interface, origin, protocol) in cases {
        let options = ConnectOptions {
            protocol: Some(protocol),
            ..options(10)
        };
        let mut d = open(&spec, &options, interface).await;
        assert_eq!(d.connection.dialog_id_origin, origin, "{protocol}");
        let expected = match protocol {
            ProtocolChoice::Session => "2025-11-25",
            _ => "2026-07-28",
        };
        assert_eq!(d.connection.summary.protocol_version, expected);
        assert_eq!(d.tool, interface.tool_name());
        let body = match interface {
            Interface::Dac => constraints(),
            Interface::Usr => {
                json!({"UserID": "User#Ana", "Feedback": {"Hypothesis": "Emotion is curious"}})
            }
        };
        for expected in 0..3 {
            assert_eq!(d.next_turn(), expected);
            let t = turn(&mut d, body.clone()).await;
            assert!(t.conforms(), "{:?}", t.findings);
            let r = t.response().expect("a Response");
            assert_eq!(r["TurnIndex"], expected);
            assert_eq!(
                r["DialogID"],
                d.dialog_id(),
                "the DialogID is the connection's"
            );
            assert!(t.latency_ms > 0.0 && t.received.is_some());
        }
        // A rejected Request: a tool error, and the TurnIndex is not used up.
        let t = d
            .send(json!({"Mode": "RQ"}), &CancellationToken::new())
            .await;
        assert!(matches!(t.reply, Reply::ToolError(_)));
        assert!(
            checks(&t).iter().any(|c| c.starts_with("schema.required")),
            "the client checks Requests too: {:?}",
            checks(&t)
        );
        assert_eq!(d.next_turn(), 3);
        // A filled Request the server refuses (its client-side findings aside) is taken back
        // from the dialogue's bookkeeping: the next Request may use its TurnIndex.
        let mut refused = d.prepare(body.clone(), Filling::Missing);
        refused["Unexpected"] = json!(true);
        let t = d.send(refused, &CancellationToken::new()).await;
        assert!(matches!(t.reply, Reply::ToolError(_)));
        let t = turn(&mut d, body.clone()).await;
        assert!(t.conforms(), "{:?}", t.findings);
        assert_eq!(t.response().expect("a Response")["TurnIndex"], 3);
        d.close().await;
    }
}

/// Over both transports; a turn takes the hot path on each (its id is `call-N`, which rmcp
/// never gives), and the server's log line, sent on the turn's own event stream over HTTP,
/// still reaches the log.
#[tokio::test]
async fn the_protocol_log_has_every_message() {
    let http = common::spawn_http(&["dac".into()]).await;
    for spec in [
        ServerSpec::embedded(Interface::Dac),
        common::http_spec(&http.url),
    ] {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = ConnectOptions {
            events: EventSink::new(tx),
            subscribe_logs: true,
            ..options(10)
        };
        let mut d = open(&spec, &options, Interface::Dac).await;
        let t = turn(&mut d, constraints()).await;
        assert!(t.conforms(), "{:?}", t.findings);
        d.close().await;
        let mut kinds = Vec::new();
        let mut texts = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let Event::Log(entry) = event {
                kinds.push(entry.kind);
                texts.push(entry.text);
            }
        }
        let has = |needle: &str| texts.iter().any(|t| t.contains(needle));
        assert!(
            has("\"method\":\"server/discover\"")
                && has("\"method\":\"tools/call\"")
                && has("\"structuredContent\""),
            "{} {texts:#?}",
            spec.location()
        );
        assert!(
            has("\"id\":\"call-1\""),
            "the turn took the hot path on {}: {texts:#?}",
            spec.location()
        );
        assert!(kinds.contains(&LogKind::Sent) && kinds.contains(&LogKind::Received));
        assert!(
            kinds.contains(&LogKind::ServerLog),
            "the server's log arrives after setLevel: {texts:#?}"
        );
        assert!(has("turn 0 constraints: answered"), "{texts:#?}");
    }
}

#[tokio::test]
async fn non_conformant_responses_give_their_findings() {
    let mut d = open(
        &common::fault_spec("wrong-request-id", &[]),
        &options(10),
        Interface::Dac,
    )
    .await;
    let t = turn(&mut d, constraints()).await;
    let found = checks(&t);
    assert!(
        found.contains(&"exchange.request-id /RequestID".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"dialogue.unmatched-response /RequestID".to_owned()),
        "{found:?}"
    );

    let mut d = open(
        &common::fault_spec("missing-outcome", &[]),
        &options(10),
        Interface::Dac,
    )
    .await;
    let t = turn(&mut d, constraints()).await;
    assert_eq!(checks(&t), ["schema.required /Outcome"]);

    let mut d = open(
        &common::fault_spec("no-structured", &[]),
        &options(10),
        Interface::Dac,
    )
    .await;
    let t = turn(&mut d, constraints()).await;
    assert_eq!(checks(&t), ["binding.structured-content "]);
    assert_eq!(
        t.outcome().as_deref(),
        Some("answered"),
        "the Response was read from the text block"
    );
}

#[tokio::test]
async fn a_crash_during_a_call_is_a_clear_error() {
    let mut d = open(
        &common::fault_spec("crash-on-call", &[]),
        &options(10),
        Interface::Dac,
    )
    .await;
    // (A 10 s timeout: a turn it ended would be a Timeout, not Gone.)
    let t = turn(&mut d, constraints()).await;
    let (kind, message) = error(&t);
    assert_eq!(kind, ErrorKind::Gone);
    assert!(
        message.contains("exited with status 101") && message.contains("panicked"),
        "{message}"
    );
    // The dialogue is still there; its next turn fails the same way, at once.
    let t = turn(&mut d, constraints()).await;
    assert!(
        matches!(error(&t).0, ErrorKind::Gone | ErrorKind::Transport),
        "{:?}",
        t.reply
    );
}

#[tokio::test]
async fn garbage_and_hangs_end_at_the_timeout() {
    for (fault, note) in [("garbage", Some("not JSON-RPC")), ("hang", None)] {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = ConnectOptions {
            events: EventSink::new(tx),
            ..options(2)
        };
        let mut d = open(&common::fault_spec(fault, &[]), &options, Interface::Dac).await;
        let t = turn(&mut d, constraints()).await;
        let (kind, message) = error(&t);
        assert_eq!(kind, ErrorKind::Timeout, "{fault}: {message}");
        assert!(message.contains("no answer within 2 s"), "{message}");
        if let Some(note) = note {
            assert!(message.contains(note), "{message}");
        }
        // Ended by the 2 s timeout, not before it: the turn's own record agrees with what it
        // says (a lower bound that load cannot break: a timer never fires early).
        assert!(
            t.latency_ms >= 2000.0,
            "{fault}: ended after {} ms",
            t.latency_ms
        );
        if fault == "hang" {
            // The server was told: it says so on stderr (waited for, up to a generous guard).
            let deadline = Instant::now() + Duration::from_secs(30);
            let mut told = false;
            while Instant::now() < deadline && !told {
                match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
                    Ok(Some(Event::Log(e))) => {
                        told |= e.kind == LogKind::Stderr && e.text.contains("cancelled")
                    }
                    Ok(None) => break,
                    _ => {}
                }
            }
            assert!(told, "the server saw notifications/cancelled");
        }
    }
}

#[tokio::test]
async fn progress_extends_the_timeout_and_cancel_stops_a_turn() {
    // A 2.5 s answer with progress every 200 ms, against a 1 s timeout. That the answer
    // outlasted the timeout is told by what the server did, not by a clock here: it sent
    // all 12 of its progress steps, 200 ms of its own sleep before each.
    async fn outlasts_the_timeout(spec: &ServerSpec, how: &str) -> Dialogue {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = ConnectOptions {
            events: EventSink::new(tx),
            ..options(1)
        };
        let mut d = open(spec, &options, Interface::Dac).await;
        let t = turn(&mut d, constraints()).await;
        assert!(
            t.response().is_some(),
            "{how}: progress kept a 1 s timeout from firing: {:?}",
            t.reply
        );
        // (Each is handed on as it comes: the last may follow the answer by a moment.)
        let mut steps = Vec::new();
        while steps.len() < 12 {
            match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
                Ok(Some(Event::Progress {
                    progress, total, ..
                })) => steps.push((progress, total)),
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        assert_eq!(steps.len(), 12, "{how}: {steps:?}");
        assert_eq!(steps.last(), Some(&(12.0, Some(12.0))), "{how}: {steps:?}");
        d
    }
    outlasts_the_timeout(
        &common::fault_spec("slow", &["--delay", "2.5"]),
        "over stdio",
    )
    .await;
    // Over HTTP the progress comes on the answer's event stream, before the answer, so the
    // stream goes back to rmcp whole (the answer alone takes the hot path).
    let mut child = tokio::process::Command::new(fault_server())
        .args(["--fault", "slow", "--delay", "2.5", "--http", "0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = read_url(&mut child).await;
    let mut d = outlasts_the_timeout(&common::http_spec(&url), "over HTTP").await;
    assert!(
        turn(&mut d, constraints()).await.response().is_some(),
        "the next turn on the same session"
    );

    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = ConnectOptions {
        events: EventSink::new(tx),
        ..options(30)
    };
    let mut d = open(
        &common::fault_spec("slow", &["--delay", "20"]),
        &options,
        Interface::Dac,
    )
    .await;
    // Cancelled once the server says it is at work on the turn (its first progress), not
    // after some time: the turn is surely with the server then.
    let cancel = CancellationToken::new();
    let request = d.prepare(constraints(), Filling::Missing);
    let send = d.send(request, &cancel);
    tokio::pin!(send);
    let mut told = false;
    let t = loop {
        tokio::select! {
            t = &mut send => break t,
            Some(event) = rx.recv() => match event {
                Event::Progress { .. } => cancel.cancel(),
                Event::Log(e) => told |= e.text.contains("the slow call was cancelled"),
                _ => {}
            },
        }
    };
    // (Uncancelled, the server would answer after 20 s, within the 30 s timeout.)
    assert_eq!(error(&t).0, ErrorKind::Cancelled);
    // The server's word on its standard error, waited for (a guard, not a bound).
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && !told {
        if let Ok(Some(Event::Log(e))) =
            tokio::time::timeout(Duration::from_millis(100), rx.recv()).await
        {
            told |= e.text.contains("the slow call was cancelled");
        }
    }
    assert!(told, "the server got notifications/cancelled");
}

#[tokio::test]
async fn large_messages_are_taken_up_to_the_limit_and_refused_beyond_it_at_once() {
    let mut d = open(
        &common::fault_spec("huge", &[]),
        &options(30),
        Interface::Dac,
    )
    .await;
    let t = turn(&mut d, constraints()).await;
    let text = t.response().expect("20 MB fits the default 64 MB")["Answer"]["Text"]
        .as_str()
        .unwrap()
        .len();
    assert_eq!(
        text,
        10 * 1024 * 1024,
        "the text is in the message twice: structuredContent and the text block"
    );

    let small = ConnectOptions {
        max_message_bytes: 8 * 1024 * 1024,
        ..options(30)
    };
    let mut d = open(&common::fault_spec("huge", &[]), &small, Interface::Dac).await;
    // (A 30 s timeout: had the turn waited for it, it would be a Timeout.)
    let t = turn(&mut d, constraints()).await;
    let (kind, message) = error(&t);
    assert_eq!(kind, ErrorKind::TooLarge);
    assert!(
        message.contains("is 20.0 MiB, over the 8.0 MiB limit"),
        "{message}"
    );
    // The connection still works.
    assert!(d.connection.is_open());

    // The same over HTTP.
    let mut child = tokio::process::Command::new(fault_server())
        .args(["--fault", "huge", "--http", "0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = read_url(&mut child).await;
    let mut d = open(&common::http_spec(&url), &small, Interface::Dac).await;
    let t = turn(&mut d, constraints()).await;
    let (kind, message) = error(&t);
    assert_eq!(kind, ErrorKind::TooLarge, "{message}");
    assert!(
        message.contains("8.0 MiB limit") && message.contains("MiB"),
        "{message}"
    );
    let mut d = open(&common::http_spec(&url), &options(30), Interface::Dac).await;
    let t = turn(&mut d, constraints()).await;
    assert!(
        t.response().is_some(),
        "20 MB over HTTP with the default limit: {:?}",
        t.reply
    );
}

async fn read_url(child: &mut tokio::process::Child) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(at) = line.find("http://") {
            let url = line[at..].trim().to_owned();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return url;
        }
    }
    panic!("no URL");
}

/// A command that is no MCP server, prints a line and exits: the error quotes what it wrote
/// and says what to do, in the program's words (no transport library's "Broken pipe").
#[tokio::test]
async fn a_stdio_server_that_prints_no_json_rpc_and_exits_is_quoted() {
    for command in ["echo hello world", "sh -c 'echo hello world; exit 3'"] {
        let spec = ServerSpec::from_command_line(command).unwrap();
        let e = Connection::connect(&spec, &options(10))
            .await
            .err()
            .unwrap();
        let m = &e.message;
        assert!(m.contains("\"hello world\""), "{m}");
        assert!(m.contains("not JSON-RPC"), "{m}");
        assert!(m.contains("before completing the MCP handshake"), "{m}");
        assert!(m.contains("check that the command is an MCP server"), "{m}");
        for raw in ["Broken pipe", "os error", "Send message error", "when send"] {
            assert!(!m.contains(raw), "{m}");
        }
    }
    let spec = ServerSpec::from_command_line("sh -c 'exit 4'").unwrap();
    let e = Connection::connect(&spec, &options(10))
        .await
        .err()
        .unwrap();
    assert!(e.message.contains("exited with status 4"), "{e}");
    assert!(e.message.contains("run the command by hand"), "{e}");
    assert!(!e.message.contains("os error"), "{e}");
}

#[tokio::test]
async fn servers_that_fail_to_start_or_cannot_be_reached() {
    let e = Connection::connect(&common::fault_spec("exit-on-initialize", &[]), &options(10))
        .await
        .err()
        .unwrap();
    assert!(
        e.message.contains("exited with status 1") && e.message.contains("exiting during"),
        "{e}"
    );

    let missing = ServerSpec::from_command_line("/nonexistent/server --x").unwrap();
    let e = Connection::connect(&missing, &options(10))
        .await
        .err()
        .unwrap();
    assert!(
        e.message.contains("cannot start /nonexistent/server"),
        "{e}"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let e = Connection::connect(
        &common::http_spec(&format!("http://127.0.0.1:{port}/mcp")),
        &options(5),
    )
    .await
    .err()
    .unwrap();
    assert!(e.message.contains("refused"), "{e}");

    // A server without the interface's tool cannot carry that dialogue.
    let connection = Connection::connect(&ServerSpec::embedded(Interface::Usr), &options(10))
        .await
        .unwrap();
    let Err(no_tool) = Dialogue::open(connection, Interface::Dac, Chosen::built_in()) else {
        panic!("a USR server has no bkn_dac")
    };
    let message = no_tool.message;
    assert!(
        message.contains("has no BKN-DAC tool") && message.contains("bkn_usr"),
        "{message}"
    );
}

#[tokio::test]
async fn an_expired_or_restarted_http_session_ends_the_dialogue_clearly() {
    // The session ends on the server (here: deleted from outside, as an idle expiry does)
    // while the dialogue goes on: the next turn gets 404 and says so.
    let server = common::spawn_http(&["dac".into()]).await;
    let sessions = ConnectOptions {
        protocol: Some(ProtocolChoice::Session),
        ..options(5)
    };
    let mut d = open(&common::http_spec(&server.url), &sessions, Interface::Dac).await;
    assert!(turn(&mut d, constraints()).await.response().is_some());
    let deleted = reqwest::Client::new()
        .delete(&server.url)
        .header("Mcp-Session-Id", d.dialog_id())
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let t = turn(&mut d, constraints()).await;
    let (kind, message) = error(&t);
    assert!(
        matches!(kind, ErrorKind::Gone | ErrorKind::Transport),
        "{kind:?}: {message}"
    );
    assert!(
        message.to_lowercase().contains("session") || message.contains("404"),
        "{message}"
    );

    // A server that restarts between turns forgets the session.
    let mut first = common::spawn_http(&["dac".into()]).await;
    let port = first
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut d = open(&common::http_spec(&first.url), &sessions, Interface::Dac).await;
    let commit = json!({"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]});
    let t = turn(&mut d, commit.clone()).await;
    assert!(t.response().is_some());
    // The same over 2026-07-28, where no session holds the dialogue: the server keeps it by
    // DialogID, and a restarted one says it holds no such dialogue.
    let mut stateless = open(&common::http_spec(&first.url), &options(5), Interface::Dac).await;
    assert_eq!(stateless.connection.summary.protocol_version, "2026-07-28");
    assert!(turn(&mut stateless, commit).await.response().is_some());
    first.child.kill().await.unwrap();
    let second =
        common::spawn_http(&["dac".into(), "--http".into(), format!("127.0.0.1:{port}")]).await;
    let t = turn(&mut d, constraints()).await;
    let (kind, message) = error(&t);
    assert!(
        matches!(kind, ErrorKind::Gone | ErrorKind::Transport),
        "{kind:?}: {message}"
    );
    let t = turn(&mut stateless, constraints()).await;
    let Reply::ToolError(text) = &t.reply else {
        panic!("a later turn of a dialogue the server lost: {:?}", t.reply)
    };
    assert!(
        text.contains("holds no dialogue") && text.contains(stateless.dialog_id()),
        "{text}"
    );
    // Reconnecting starts a new dialogue, without the old commitments.
    let mut again = open(&common::http_spec(&second.url), &sessions, Interface::Dac).await;
    let t = turn(&mut again, constraints()).await;
    assert_eq!(t.response().unwrap()["CommitmentStatus"], json!([]));
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(common::bin())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn send_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("rq.json");
    std::fs::write(&request, CONSTRAINTS).unwrap();
    let request = request.to_str().unwrap();

    let (code, out, _) = run(&["send", request]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["Mode"], "RS");
    // The reference servers run inside send's process: both answer there, with every check.
    let usr = dir.path().join("usr.json");
    std::fs::write(
        &usr,
        r#"{"Header": "PGM-KUS-V1.0", "UserID": "User#Ana",
            "Feedback": {"Hypothesis": "wants to attend the concert"}}"#,
    )
    .unwrap();
    let (code, out, err) = run(&["send", usr.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let refined: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (refined["Header"].as_str(), refined["Mode"].as_str()),
        (Some("PGM-KUS-V1.0"), Some("RS"))
    );

    let wrong = format!("{} --fault wrong-request-id", fault_server());
    let (code, out, err) = run(&["send", request, "--stdio", &wrong]);
    assert_eq!(code, 1);
    assert!(out.contains("\"RequestID\": \"not-the-request\""));
    assert!(
        err.contains("response: /RequestID") && err.contains("exchange.request-id"),
        "{err}"
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"Kind": "guess"}"#).unwrap();
    let (code, _, err) = run(&["send", bad.to_str().unwrap(), "--interface", "dac"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("rejected the Request (tool error)") && err.contains("/Kind"),
        "{err}"
    );

    let (code, _, err) = run(&["send", request, "--stdio", "/nonexistent/server"]);
    assert_eq!((code, err.contains("cannot start")), (2, true), "{err}");
    let (code, _, err) = run(&["send", "/nonexistent.json"]);
    assert_eq!((code, err.contains("cannot read")), (2, true), "{err}");
    let (code, _, _) = run(&[
        "send",
        request,
        "--url",
        "http://127.0.0.1:9/mcp",
        "--timeout",
        "3",
    ]);
    assert_eq!(code, 2);
    let (code, _, err) = run(&[
        "send",
        request,
        "--stdio",
        &format!("{} --fault hang", fault_server()),
        "--timeout",
        "1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no answer within 1 s"), "{err}");
    let (code, _, err) = run(&["send", "--as-is", request]);
    assert_eq!(
        code, 1,
        "sent as is, without common fields, it is rejected: {err}"
    );
}

#[test]
fn dialogue_tools_and_call_commands() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        format!("{CONSTRAINTS}\n{{\"Kind\": \"affordances\", \"EntityIDs\": [\"Kiosk#3\"]}}\n"),
    )
    .unwrap();
    let session = dir.path().join("s.json");
    let (code, out, err) = run(&[
        "dialogue",
        requests.to_str().unwrap(),
        "--save",
        session.to_str().unwrap(),
        "--name",
        "two turns",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (
            lines[1]["turnIndex"].as_u64(),
            lines[1]["kind"].as_str(),
            lines[1]["conforms"].as_bool()
        ),
        (Some(1), Some("affordances"), Some(true))
    );
    let saved = bkn_explorer::session::Session::load(&session).unwrap();
    assert_eq!(saved.dialogues[0].turns.len(), 2);
    assert_eq!(saved.name.as_deref(), Some("two turns"));

    let (code, out, _) = run(&["tools", "--embedded", "dac", "--format", "json"]);
    assert_eq!(code, 0);
    let tools: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(tools["tools"][0]["interface"], "BKN-DAC");
    assert_eq!(tools["server"]["protocolVersion"], "2026-07-28");
    assert_eq!(tools["resources"].as_array().unwrap().len(), 4);

    let (code, out, _) = run(&["call", "bkn_dac", "{}", "--embedded", "dac"]);
    assert_eq!(code, 1, "an empty Request is a tool error");
    assert!(out.contains("\"isError\": true"));
    let (code, _, err) = run(&["call", "nosuch", "{}", "--embedded", "dac"]);
    assert_eq!(code, 2);
    assert!(err.contains("nosuch"), "{err}");

    // Without a server named, as the help says: tools describes both reference servers, call
    // uses the one whose tool it is.
    let (code, out, _) = run(&["tools", "--format", "json"]);
    assert_eq!(code, 0);
    let both: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = both
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tools"][0]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bkn_dac", "bkn_usr"]);
    let (code, out, _) = run(&["call", "bkn_usr", "{}"]);
    assert_eq!(
        code, 1,
        "the reference User State Refinement refuses an empty Request"
    );
    assert!(out.contains("PGM-KUS-V1.0"), "{out}");
    let (code, _, err) = run(&["call", "nosuch", "{}"]);
    assert_eq!(code, 2);
    assert!(err.contains("name the server of nosuch"), "{err}");
}

/// A stdio server that never answers the handshake is ended when the connection gives up:
/// trying again does not leave one more process each time.
#[tokio::test]
async fn a_server_that_never_answers_the_handshake_is_not_left_running() {
    // `sleep` reads nothing and writes nothing; its argument makes it findable.
    let marker = format!("97.{}", std::process::id());
    let spec = ServerSpec::from_command_line(&format!("sleep {marker}")).unwrap();
    let options = ConnectOptions {
        timeout: Duration::from_millis(500),
        ..ConnectOptions::default()
    };
    for _ in 0..3 {
        let e = Connection::connect(&spec, &options)
            .await
            .err()
            .expect("no handshake");
        assert!(
            e.message.contains("handshake") || e.message.contains("answer"),
            "{}",
            e.message
        );
    }
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker))
            })
            .count()
    };
    // Waited for (a guard against never, not a bound: a busy machine is slow).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while running() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} server processes are still running",
            running()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The CPUs a thread or a process's main thread may run on (`Cpus_allowed_list`).
#[cfg(target_os = "linux")]
fn cpus_allowed(status: &str) -> String {
    std::fs::read_to_string(status)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The process whose parent is `parent` (the server a `dialogue` started).
#[cfg(target_os = "linux")]
fn child_of(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the ")" that ends the command's name: state, then the parent's id.
        let ppid: u32 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        (ppid == parent).then_some(pid)
    })
}

/// `dialogue` places itself and the reference server it starts on one CPU (a turn's hand-over
/// then costs no wake-up across CPUs); a server the user names is left where the scheduler
/// puts it, and so is the client once that dialogue is over.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn dialogue_shares_one_cpu_with_its_reference_server_only() {
    use std::io::{BufRead, BufReader, Write};
    let all = cpus_allowed("/proc/self/status");
    if !all.contains([',', '-']) {
        eprintln!("one CPU only ({all}): nothing to place");
        return;
    }
    let named = format!("{} serve dac", common::bin());
    for (server, shared) in [(vec![], true), (vec!["--stdio", named.as_str()], false)] {
        let mut dialogue = std::process::Command::new(common::bin())
            .args(["dialogue", "-"])
            .args(&server)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut input = dialogue.stdin.take().unwrap();
        let mut output = BufReader::new(dialogue.stdout.take().unwrap());
        writeln!(input, "{}", constraints()).unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert!(
            line.contains("\"conforms\":true"),
            "a turn was made: {line}"
        );
        let pid = dialogue.id();
        let server_pid = child_of(pid).expect("the server process");
        let client = cpus_allowed(&format!("/proc/{pid}/task/{pid}/status"));
        let server = cpus_allowed(&format!("/proc/{server_pid}/status"));
        if shared {
            assert!(client.parse::<usize>().is_ok(), "one CPU: {client}");
            assert_eq!(server, client, "the server on the client's CPU");
        } else {
            assert_eq!(
                (client.as_str(), server.as_str()),
                (all.as_str(), all.as_str())
            );
        }
        drop(input);
        assert!(dialogue.wait().unwrap().success());
    }
}

/// A reader that goes away (`bkn-explorer schema dac | head -1`) ends the program quietly with
/// 141, as it ends other Unix tools: no panic, no backtrace.
#[test]
fn a_reader_that_goes_away_ends_the_program_quietly() {
    use std::io::Read;
    let mut child = std::process::Command::new(common::bin())
        .args(["schema", "dac"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(141), "{err}");
    assert!(err.is_empty(), "{err}");
}
