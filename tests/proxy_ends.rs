//! How a proxy's recording says that a dialogue is over or no longer followed (issue 29, and
//! 26's proxy item): over 2026-07-28 there is no MCP session whose end closes a dialogue, so
//! the proxy closes each one it recorded when its stdio connection ends, when the proxy is
//! stopped by a signal, and after `--dialogue-idle` without an exchange; a proxy killed by
//! SIGKILL writes nothing, and a watcher tells it by the recording's lock (a file) or the
//! proxy's address (`--watch http://…`). Real transports: the proxy and the reference server
//! as child processes, over stdio and HTTP on loopback; the agents are raw JSON-RPC and the
//! official Python SDK's client.

use crate::common;

use bkn_explorer::session::journal::{Closing, Line, read_line};
use bkn_explorer::tui::watch::Follower;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A 2026-07-28 `tools/call` of the Domain Access tool in dialogue `dialog`: no initialize,
/// the version and capabilities in `_meta`.
fn call_2026(id: u64, dialog: &str, turn: u64) -> String {
    serde_json::json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{}},
        "name":"bkn_dac","arguments":{"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":"MI:PublicSquare",
            "UEnvironment":"UE:Lab","SessionID":"s-1","QueryID":format!("q-{id}"),
            "QueryTime":"2026-12-01T00:00:00.000Z","DialogID":dialog,"TurnIndex":turn,
            "DataXMData":{"DataID":format!("x-{id}"),"Source":[{"AIMID":"agent"}]},
            "Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{"SpaceID":"Space:Square"}}}})
    .to_string()
}

/// The `closed` lines of a recording (dialogue, cause) and its `end`, if any.
fn ends(record: &Path) -> (Vec<(u64, Option<Closing>)>, Option<String>) {
    let text = std::fs::read_to_string(record).unwrap();
    let mut closed = Vec::new();
    let mut end = None;
    for (i, line) in text.lines().enumerate() {
        match read_line(i + 1, line.as_bytes()).unwrap() {
            Line::Closed {
                dialogue, cause, ..
            } => closed.push((dialogue, cause)),
            Line::End(why) => end = Some(why),
            _ => {}
        }
    }
    (closed, end)
}

/// `validate` reads the whole recording (no line skipped: exit 2 would say so) and exits
/// `code` (1: the recorded agent's own findings).
fn validates(record: &Path, code: i32) {
    let out = std::process::Command::new(common::bin())
        .arg("validate")
        .arg(record)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "validate accepts the recording:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn signal(pid: u32, name: &str) {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// The official Python SDK's client (`tests/peers/py_dac_client.py`) with `args`, which
/// must succeed; its standard output (one JSON line).
async fn python_client(args: &[&str]) -> String {
    let (python, _) = common::sdk_peers();
    let out = tokio::process::Command::new(python)
        .arg(common::peer("py_dac_client.py"))
        .args(args)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A file of one Request for `bkn-explorer dialogue`, in `dir`.
fn one_request(dir: &Path) -> std::path::PathBuf {
    let requests = dir.join("requests.jsonl");
    std::fs::write(
        &requests,
        "{\"Kind\":\"constraints\",\"EntityIDs\":[\"Kiosk#3\"],\"Space\":{\"SpaceID\":\"Space:Square\"}}\n",
    )
    .unwrap();
    requests
}

/// Waits (up to 60 s, a debug build under load) until `holds`.
async fn until(what: &str, holds: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !holds() {
        assert!(Instant::now() < deadline, "waited 60 s for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A 2026-07-28 agent over stdio, two dialogues (two DialogIDs): whether the agent closes
/// its side or the proxy is stopped by SIGTERM, SIGINT or SIGHUP, both dialogues are closed
/// as ended (the server, and what it held, is gone with the connection) and the recording
/// ends saying how; `validate` accepts it.
#[tokio::test]
async fn a_stdio_proxy_closes_its_dialogues_however_it_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    for how in ["close", "TERM", "INT", "HUP"] {
        let record = dir.path().join(format!("{how}.jsonl"));
        let mut proxy = tokio::process::Command::new(common::bin())
            .arg("proxy")
            .arg("--record")
            .arg(&record)
            .args(["--", common::bin(), "serve", "dac", "--log-level", "warn"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut agent = proxy.stdin.take().unwrap();
        let mut answers = BufReader::new(proxy.stdout.take().unwrap()).lines();
        for (id, dialog) in [(1, "D-one"), (2, "D-two")] {
            agent
                .write_all(format!("{}\n", call_2026(id, dialog, 0)).as_bytes())
                .await
                .unwrap();
            agent.flush().await.unwrap();
            let answer = answers.next_line().await.unwrap().unwrap();
            assert!(answer.contains("structuredContent"), "{how}: {answer}");
        }
        // Both recorded before the stop (the recording is written as they pass).
        until("both turns recorded", || {
            std::fs::read_to_string(&record).is_ok_and(|t| t.matches("\"turn\"").count() == 2)
        })
        .await;
        if how == "close" {
            drop(agent);
        } else {
            signal(proxy.id().unwrap(), how);
        }
        let status = tokio::time::timeout(Duration::from_secs(60), proxy.wait())
            .await
            .expect("the proxy ends")
            .unwrap();
        let (closed, end) = ends(&record);
        assert_eq!(
            closed,
            [(1, Some(Closing::Ended)), (2, Some(Closing::Ended))],
            "{how} ({status})"
        );
        let end = end.expect("the recording has its end");
        if how == "close" {
            assert!(end.contains("the agent closed its side"), "{end}");
        } else {
            assert!(end.contains(&format!("stopped (SIG{how})")), "{end}");
        }
        validates(&record, 0);
    }
}

/// Over HTTP, a 2026-07-28 dialogue of the official Python SDK's client through the proxy:
/// live while it talks, closed as idle once `--dialogue-idle` went by without an exchange; a
/// later one still open when the proxy is stopped is closed as no longer recorded (the
/// server may keep it), and the recording ends. A dialogue of the explorer's `dialogue`
/// command over 2025-11-25 is ended by its DELETE as before.
#[tokio::test]
async fn an_http_proxy_closes_idle_dialogues_and_those_open_when_it_stops() {
    let upstream = common::spawn_http(&["dac".to_owned()]).await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("http.jsonl");
    let (proxy, url) = common::http_proxy(&upstream.url, &record, &["--dialogue-idle", "2s"]).await;
    python_client(&["--protocol", "2026-07-28", "--url", &url]).await;
    until("the SDK's dialogue closed as idle", || {
        ends(&record).0.contains(&(1, Some(Closing::Idle)))
    })
    .await;
    let requests = one_request(dir.path());
    common::dialogue_ok(&requests, &["--url", &url, "--protocol", "2025-11-25"]).await;
    // A last 2026-07-28 turn, then the proxy is stopped before its expiry could pass: a
    // raw POST, answered at once.
    let answer = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "bkn_dac")
        .body(call_2026(7, "D-last", 0))
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    answer.bytes().await.unwrap();
    // A 2025-11-25 agent holding its session's SSE stream open (as SDK clients do) does not
    // keep the stopped proxy, and the recording's end, waiting.
    let client = reqwest::Client::new();
    let init = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    init.bytes().await.unwrap();
    client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .unwrap();
    let stream = client
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert!(stream.status().is_success(), "{}", stream.status());
    let mut proxy = proxy;
    signal(proxy.id().unwrap(), "TERM");
    tokio::time::timeout(Duration::from_secs(60), proxy.wait())
        .await
        .expect("the proxy ends with an SSE stream open")
        .unwrap();
    drop(stream);
    let (closed, end) = ends(&record);
    assert_eq!(closed[0], (1, Some(Closing::Idle)), "{closed:?}");
    assert!(
        closed.contains(&(2, Some(Closing::Ended))),
        "the 2025-11-25 session ended by its DELETE: {closed:?}"
    );
    // The last one: stopped before its idle expiry, or (a slow machine) idle before it.
    let last = closed.iter().find(|(d, _)| *d == 3).map(|(_, c)| *c);
    assert!(
        matches!(last, Some(Some(Closing::RecordingStopped | Closing::Idle))),
        "{closed:?}"
    );
    assert_eq!(closed.len(), 3, "each dialogue closed once: {closed:?}");
    assert_eq!(end.as_deref(), Some("the proxy stopped (SIGTERM)"));
    // The SDK client's third turn repeats TurnIndex 1 on purpose: its one finding.
    validates(&record, 1);
}

/// SIGKILL leaves the recording without its end: a watcher of the file tells by the lock
/// the proxy held, one of the proxy's address by the address gone; what was recorded still
/// loads and validates.
#[tokio::test]
async fn a_proxy_killed_by_sigkill_is_told_by_its_lock_and_by_its_address() {
    let upstream = common::spawn_http(&["dac".to_owned()]).await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("killed.jsonl");
    let (mut proxy, url) = common::http_proxy(&upstream.url, &record, &[]).await;
    let requests = one_request(dir.path());
    common::dialogue_ok(&requests, &["--url", &url, "--protocol", "2026-07-28"]).await;
    let mut file = Follower::new(record.clone());
    let mut address = Follower::new(url.clone().into());
    for f in [&mut file, &mut address] {
        let look = f.read_new().await.unwrap();
        assert!(
            look.lines.iter().any(|l| matches!(l, Line::Turn { .. })),
            "{:?}",
            look.lines
        );
        assert!(look.gone.is_none(), "the proxy is running");
    }
    proxy.start_kill().unwrap();
    proxy.wait().await.unwrap();
    for f in [&mut file, &mut address] {
        let look = f.read_new().await.unwrap();
        assert!(look.lines.is_empty(), "{:?}", look.lines);
        let gone = look.gone.expect("the writer is known to be gone");
        assert!(
            gone.contains("lock") || gone.contains("no longer answers"),
            "{gone}"
        );
    }
    let (closed, end) = ends(&record);
    assert!(closed.is_empty() && end.is_none(), "SIGKILL writes nothing");
    let session = bkn_explorer::session::Session::load(&record).unwrap();
    assert_eq!(session.dialogues.len(), 1);
    validates(&record, 0);
}

/// The HTTP upstream dies while a 2026-07-28 dialogue is followed: the proxy notices (it
/// tries a connection on each check, here every 5 s of a 20 s expiry) and closes the
/// dialogue as ended, well before its idle expiry and without waiting for the agent's next
/// request; the proxy goes on.
#[tokio::test]
async fn an_http_proxy_closes_its_dialogues_when_the_upstream_dies() {
    let mut upstream = common::spawn_http(&["dac".to_owned()]).await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("upstream.jsonl");
    let (mut proxy, url) =
        common::http_proxy(&upstream.url, &record, &["--dialogue-idle", "20s"]).await;
    let requests = one_request(dir.path());
    common::dialogue_ok(&requests, &["--url", &url, "--protocol", "2026-07-28"]).await;
    upstream.child.start_kill().unwrap();
    upstream.child.wait().await.unwrap();
    until("the dialogue closed", || !ends(&record).0.is_empty()).await;
    let (closed, end) = ends(&record);
    assert_eq!(closed, [(1, Some(Closing::Ended))]);
    assert!(end.is_none(), "the proxy goes on");
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.contains("no longer takes connections"), "{text}");
    assert!(proxy.try_wait().unwrap().is_none(), "the proxy still runs");
}

/// The official Python SDK's client over stdio, pinned to 2026-07-28, with the proxy as its
/// server: when it closes its side (and, under load, stops its server with SIGTERM), its
/// dialogue is closed as ended and the recording ends.
#[tokio::test]
async fn a_stdio_sdk_agent_closing_ends_its_dialogue() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("sdk.jsonl");
    let record_arg = record.display().to_string();
    let (bin, record_arg) = (common::bin(), record_arg.as_str());
    let said = python_client(&[
        "--protocol",
        "2026-07-28",
        "--",
        bin,
        "proxy",
        "--record",
        record_arg,
        "--",
        bin,
        "serve",
        "dac",
        "--log-level",
        "warn",
    ])
    .await;
    assert!(said.contains("\"protocol\": \"2026-07-28\""), "{said}");
    // The proxy ends after the SDK closed its side (the SDK may not wait for it, and sends
    // SIGTERM to a server slow to exit: either way the dialogue is ended).
    until("the recording's end", || ends(&record).1.is_some()).await;
    let (closed, end) = ends(&record);
    assert_eq!(closed, [(1, Some(Closing::Ended))]);
    let end = end.unwrap();
    assert!(
        end.contains("the agent closed its side") || end.contains("stopped (SIGTERM)"),
        "{end}"
    );
    validates(&record, 1);
}
