//! `bkn-explorer proxy -- CMD`: an agent (this test, speaking raw JSON-RPC over the proxy's
//! stdio, as an agent's MCP client does) talks through the proxy to a server. What the agent
//! receives is every byte the server wrote and what the server receives every byte the agent
//! wrote (both captured below the proxy with `tee`); the recording reads as a session,
//! validates, and replays without differences; the proxy ends with the server's status.

use crate::common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `bkn-explorer COMMAND FILE` (validate, replay), waited for.
fn on_file(command: &str, file: &Path) -> std::process::Output {
    std::process::Command::new(common::bin())
        .arg(command)
        .arg(file)
        .output()
        .unwrap()
}

/// `send` of one Request (as a file on its standard input) to the stdio server `server`.
fn send(server: &str, request: &str) -> std::process::Output {
    use std::io::Write;
    let mut send = std::process::Command::new(common::bin())
        .args(["send", "-", "--stdio", server])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    send.stdin
        .take()
        .unwrap()
        .write_all(request.as_bytes())
        .unwrap();
    send.wait_with_output().unwrap()
}

fn request(turn: u64, dialog: &str, m_instance: &str) -> Value {
    json!({"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":m_instance,"UEnvironment":"UE:Lab",
           "SessionID":"s-1","QueryID":format!("q-{turn}"),"QueryTime":"2026-12-01T00:00:00.000Z",
           "DialogID":dialog,"TurnIndex":turn,"DataXMData":{"DataID":format!("x-{turn}"),"Source":[{"AIMID":"agent"}]},
           "Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{"SpaceID":"Space:Square"}})
}

/// What an agent sends: the MCP lifecycle, the tool list, BKN calls, and what is not BKN
/// (a ping, a cancellation of nothing, progress metadata, a line that is not JSON).
fn agent_lines(m_instance: &str) -> Vec<String> {
    let mut lines = vec![
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"dac://domain"}}),
        json!({"jsonrpc":"2.0","id":3,"method":"ping"}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"never sent"}}),
    ]
    .into_iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>();
    for turn in 0..3u64 {
        lines.push(
            json!({"jsonrpc":"2.0","id":10 + turn,"method":"tools/call",
                   "params":{"name":"bkn_dac","arguments":request(turn, "D-agent", m_instance),
                             "_meta":{"progressToken":turn}}})
            .to_string(),
        );
    }
    lines.push("this line is not JSON".into());
    lines
}

/// Runs the proxy with `lines` as the agent's input, one at a time as an agent would (each
/// waits for the answers so far), and returns what came back and the exit status.
async fn through_proxy(
    data: &Path,
    record: &Path,
    command: &[&str],
    lines: &[String],
) -> (Vec<u8>, Option<i32>) {
    let mut proxy = tokio::process::Command::new(common::bin())
        .arg("proxy")
        .arg("--record")
        .arg(record)
        .arg("--")
        .args(command)
        .env("BKN_EXPLORER_DATA_DIR", data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the proxy starts");
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = proxy.stdout.take().unwrap();
    // Everything that comes back, kept whole; the ids answered so far, for the agent to wait on.
    let (answered_tx, mut answered) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        let mut all = Vec::new();
        let mut buffer = [0u8; 65536];
        let mut line = Vec::new();
        loop {
            let n = stdout.read(&mut buffer).await.unwrap();
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buffer[..n]);
            for &b in &buffer[..n] {
                if b == b'\n' {
                    if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                        let _ = answered_tx.send(v["id"].clone());
                    }
                    line.clear();
                } else {
                    line.push(b);
                }
            }
        }
        all
    });
    // A sequential agent: each Request waits for its answer before the next goes (answers
    // that came back out of order would make the server's own turn order differ between
    // the recorded run and its replay).
    let mut seen: Vec<Value> = Vec::new();
    for line in lines {
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
        let id = serde_json::from_str::<Value>(line)
            .ok()
            .filter(|m| m.get("method").is_some())
            .and_then(|m| m.get("id").cloned());
        match id {
            Some(id) => {
                while !seen.contains(&id) {
                    match tokio::time::timeout(Duration::from_secs(20), answered.recv()).await {
                        Ok(Some(v)) => seen.push(v),
                        _ => panic!("no answer to {line}"),
                    }
                }
            }
            None => tokio::time::sleep(Duration::from_millis(30)).await,
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), proxy.wait())
        .await
        .expect("the proxy ends after the agent")
        .unwrap();
    (reader.await.unwrap(), status.code())
}

#[tokio::test]
async fn every_byte_passes_both_ways_and_the_exchanges_are_recorded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (sent_to_server, written_by_server) =
        (dir.path().join("in.bin"), dir.path().join("out.bin"));
    let server = format!(
        "tee {} | {} {}/tests/peers/raw_dac_server.py | tee {}",
        sent_to_server.display(),
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR"),
        written_by_server.display()
    );
    let record = dir.path().join("agent.jsonl");
    let lines = agent_lines("MI:Elsewhere");
    let (received, status) =
        through_proxy(dir.path(), &record, &["sh", "-c", &server], &lines).await;
    assert_eq!(status, Some(0));

    let agent_sent: Vec<u8> = lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    assert_eq!(
        std::fs::read(&sent_to_server).unwrap(),
        agent_sent,
        "the server got every byte the agent wrote"
    );
    assert_eq!(
        std::fs::read(&written_by_server).unwrap(),
        received,
        "the agent got every byte the server wrote"
    );
    let answers: Vec<Value> = received
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    assert!(
        answers.iter().any(|a| a["id"] == 12),
        "the last call was answered: {answers:?}"
    );

    // The recording: one dialogue of three turns, checked as everywhere else.
    let session = bkn_explorer::session::Session::load(&record).unwrap();
    assert_eq!(session.dialogues.len(), 1);
    let dialogue = &session.dialogues[0];
    assert_eq!(dialogue.dialog_id, "D-agent");
    assert_eq!(dialogue.turns.len(), 3);
    assert!(
        dialogue.turns.iter().all(|t| t.conforms()),
        "{:?}",
        dialogue.turns[0].findings
    );
    let validate = on_file("validate", &record);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );

    // A server made from the recording offers what the recorded one did (its tool and the
    // resource the agent read), so that a client fills its Requests alike and is answered.
    let mock = format!(
        "{} serve --from-session {} --log-level warn",
        common::bin(),
        record.display()
    );
    let tools = std::process::Command::new(common::bin())
        .args(["tools", "--format", "json", "--stdio", &mock])
        .output()
        .unwrap();
    let described: Value = serde_json::from_slice(&tools.stdout).unwrap();
    assert_eq!(
        described["resources"].as_array().map(Vec::len),
        Some(1),
        "{described}"
    );
    assert_eq!(described["resources"][0]["uri"], "dac://domain");
    assert_eq!(described["published"]["MInstance"], "MI:Elsewhere");
    let out = send(
        &mock,
        r#"{"Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{"SpaceID":"Space:Square"}}"#,
    );
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        response["MInstance"], "MI:Elsewhere",
        "filled from the recorded dac://domain"
    );
    assert_ne!(response["Outcome"], "not_answered", "{response}");
}

#[tokio::test]
async fn a_recording_of_the_reference_server_replays_without_differences() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("reference.jsonl");
    let lines = agent_lines("MI:PublicSquare");
    let (received, status) = through_proxy(
        dir.path(),
        &record,
        &[common::bin(), "serve", "dac", "--log-level", "warn"],
        &lines,
    )
    .await;
    assert_eq!(status, Some(0));
    assert!(!received.is_empty());
    let session = bkn_explorer::session::Session::load(&record).unwrap();
    assert_eq!(session.dialogues[0].turns.len(), 3);
    // The recording names the command this test started: trusted, as the user would say.
    let replay = std::process::Command::new(common::bin())
        .arg("replay")
        .arg(&record)
        .arg("--trust-servers")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&replay.stdout);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

#[tokio::test]
async fn findings_of_a_faulty_server_are_in_the_recording_and_the_servers_status_is_the_proxys() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("faulty.jsonl");
    let server = format!(
        "{} {}/tests/peers/raw_dac_server.py --clash-feasible; exit 3",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    );
    let mut lines = agent_lines("MI:Elsewhere");
    lines.truncate(2);
    lines.push(json!({"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"bkn_dac","arguments":
        {"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":"MI:Elsewhere","UEnvironment":"UE:Lab","SessionID":"s-1",
         "QueryID":"q-f","QueryTime":"2026-12-01T00:00:00.000Z","DialogID":"D-f","TurnIndex":0,
         "DataXMData":{"DataID":"x-f","Source":[{"AIMID":"agent"}]},"Kind":"feasibility",
         "ProcessActions":[{"Step":0,"Statement":"MM-Move Nil Robot#1 To MLoc:Lab.Bench"},
                           {"Step":1,"Statement":"MM-Move Nil Robot#1 To MLoc:Lab.Door"}]}}}).to_string());
    let (_, status) = through_proxy(dir.path(), &record, &["sh", "-c", &server], &lines).await;
    assert_eq!(status, Some(3), "the server's exit status");
    let session = bkn_explorer::session::Session::load(&record).unwrap();
    let turn = &session.dialogues[0].turns[0];
    assert!(
        matches!(turn.reply, bkn_explorer::client::turn::Reply::Response(_)),
        "answered"
    );
    let checks: Vec<String> = turn
        .findings
        .iter()
        .map(|f| f.finding.check.to_string())
        .collect();
    assert!(
        checks.iter().any(|c| c.contains("feasibility.overall")),
        "{checks:?}"
    );
    let validate = on_file("validate", &record);
    assert_eq!(validate.status.code(), Some(1));
}

#[tokio::test]
async fn a_server_that_cannot_start_fails_as_it_would_without_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("none.jsonl");
    let (received, status) = through_proxy(dir.path(), &record, &["/no/such/server"], &[]).await;
    assert!(received.is_empty());
    assert_eq!(status, Some(127), "as a shell says for a command not found");
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.contains("cannot start /no/such/server"), "{text}");
}

#[test]
fn a_recording_is_never_written_over() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("kept.jsonl");
    std::fs::write(&record, "mine").unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["proxy", "--record"])
        .arg(&record)
        .args(["--", "sh", "-c", "exit 0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "the traffic still passes");
    assert!(String::from_utf8_lossy(&out.stderr).contains("never written over"));
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "mine");
}

/// `serve --from-session`: the dialogues of the shipped sessions (recorded with the
/// reference servers: commitments, feasibility, refinement), sent again by another client
/// (`replay`: a new MCP session, its own DialogID and QueryIDs) to a server made from each
/// recording, get Responses equal to the recorded ones apart from the correlation fields; a
/// question the recording has no answer for gets a conformant not_answered, at once.
#[test]
fn a_server_made_from_a_recording_answers_its_requests_again() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["dac-tour", "usr-refinement"] {
        let session = root.join(format!("sessions/{name}.json"));
        let server = format!(
            "{} serve --from-session {} --log-level warn",
            common::bin(),
            session.display()
        );
        let replay = std::process::Command::new(common::bin())
            .arg("replay")
            .arg(&session)
            .args(["--stdio", &server])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&replay.stdout);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "{name}:\n{out}\n{}",
            String::from_utf8_lossy(&replay.stderr)
        );
        assert!(out.contains("no differences"), "{out}");
    }
    let server = format!(
        "{} serve --from-session {} --log-level warn",
        common::bin(),
        root.join("sessions/dac-tour.json").display()
    );
    let started = std::time::Instant::now();
    let out = send(
        &server,
        r#"{"Kind":"constraints","EntityIDs":["Stall#9"],"Space":{"SpaceID":"Space:Square"}}"#,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a conformant Response: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["Outcome"], "not_answered");
    assert!(
        response["Answer"]["Text"]
            .as_str()
            .unwrap()
            .contains("Nothing in the recording")
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered, not left hanging"
    );
}

/// `proxy --http`: an MCP client (the explorer's own `dialogue`, and raw HTTP) through the
/// proxy to the reference server over Streamable HTTP: the session, its messages and their
/// answers pass (the same answers as directly), one dialogue per MCP session is recorded,
/// validates and replays without differences; `--token` guards the listening side.
#[tokio::test]
async fn an_http_proxy_passes_sessions_through_and_records_one_dialogue_each() {
    let upstream = common::spawn_http(&["dac".to_owned()]).await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("http.jsonl");
    let (mut proxy, url) = common::http_proxy(&upstream.url, &record, &[]).await;
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(&requests, (0..3).map(|i| format!("{}\n", json!({"Kind":"constraints","EntityIDs":[format!("Kiosk#{i}")],"Space":{"SpaceID":"Space:Square"}}))).collect::<String>()).unwrap();
    for protocol in ["2025-11-25", "2026-07-28"] {
        // One recorded dialogue each: an MCP session over 2025-11-25, a DialogID over
        // 2026-07-28.
        common::dialogue_ok(&requests, &["--url", &url, "--protocol", protocol]).await;
    }
    // Raw: the answer to tools/list in one session, through the proxy and directly.
    let client = reqwest::Client::new();
    let post = |to: &str, session: Option<&str>, body: Value| {
        let mut r = client
            .post(to)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-06-18");
        }
        r.send()
    };
    let init = post(&url, None, json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}})).await.unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    init.text().await.unwrap();
    post(
        &url,
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await
    .unwrap();
    let message = |text: String| -> Value {
        let data = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| !d.is_empty())
            .map(str::to_owned)
            .unwrap_or(text);
        serde_json::from_str(&data).unwrap()
    };
    let via_proxy = message(
        post(
            &url,
            Some(&session),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap(),
    );
    let direct = message(
        post(
            &upstream.url,
            Some(&session),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        )
        .await
        .unwrap()
        .text()
        .await
        .unwrap(),
    );
    assert_eq!(
        via_proxy, direct,
        "the session reached the server through the proxy"
    );
    // The recording, from its address (what `--watch http://…` follows), from any byte on.
    let base = url.trim_end_matches("/mcp");
    let whole = client
        .get(format!("{base}/recording"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&whole[..], &std::fs::read(&record).unwrap()[..]);
    let rest = client
        .get(format!("{base}/recording?from=100"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&rest[..], &whole[100..]);
    let text = String::from_utf8_lossy(&whole);
    // The 2025-11-25 session's end (its DELETE); a 2026-07-28 dialogue has no end but the
    // proxy's.
    assert_eq!(
        text.matches("\"closed\"").count(),
        1,
        "the session's end is recorded"
    );
    proxy.start_kill().unwrap();
    proxy.wait().await.unwrap();

    let s = bkn_explorer::session::Session::load(&record).unwrap();
    assert_eq!(
        s.dialogues.len(),
        2,
        "one dialogue per MCP session, and per DialogID over 2026-07-28"
    );
    assert!(s.dialogues.iter().all(|d| d.turns.len() == 3));
    let validate = on_file("validate", &record);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&validate.stdout)
    );
    let replay = on_file("replay", &record);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );

    // Guarded: without the proxy's token the agent is refused; with it, it passes.
    let (_guarded, url) = common::http_proxy(
        &upstream.url,
        &dir.path().join("guarded.jsonl"),
        &["--token", "s3cret"],
    )
    .await;
    let refused = tokio::process::Command::new(common::bin())
        .args(["tools", "--no-sign-in", "--url", &url])
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let allowed = tokio::process::Command::new(common::bin())
        .args(["tools", "--token", "s3cret", "--url", &url])
        .output()
        .await
        .unwrap();
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
}

/// A page on another site must not read what the proxy recorded (live session ids among
/// it), nor reach the upstream through it: Host and Origin are the proxy's own, or refused
/// with a JSON-RPC body. A declared body over the limit is refused before it is read.
#[tokio::test]
async fn the_http_proxy_checks_host_and_origin_and_bounds_bodies() {
    let server = common::spawn_http(&["dac".into()]).await;
    let dir = tempfile::tempdir().unwrap();
    let (_proxy, url) = common::http_proxy(
        &server.url,
        &dir.path().join("r.jsonl"),
        &["--max-message-mb", "1"],
    )
    .await;
    let recording = url.replace("/mcp", "/recording");
    let client = reqwest::Client::new();
    let fine = client.get(&recording).send().await.unwrap();
    assert_eq!(fine.status(), 200);
    for (name, value) in [("host", "evil.example"), ("origin", "http://evil.example")] {
        let refused = client
            .get(&recording)
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "{name}: {value}");
        let body: serde_json::Value = refused.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("evil.example")
        );
    }
    // Nor the upstream through it: a POST to /mcp with a foreign Host or Origin is refused
    // before it goes on (the proxy rewrites Host, so the upstream's own check cannot see it).
    for (name, value) in [("host", "evil.example"), ("origin", "http://evil.example")] {
        let refused = client
            .post(&url)
            .header(name, value)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "POST /mcp, {name}: {value}");
    }
    // A declared length over the limit: answered at once, though only 10 bytes come.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // Two Host headers (which one a check would see is not defined): refused.
    let mut raw = tokio::net::TcpStream::connect(&address).await.unwrap();
    raw.write_all(
        format!("GET /recording HTTP/1.1\r\nHost: {address}\r\nHost: evil.example\r\n\r\n")
            .as_bytes(),
    )
    .await
    .unwrap();
    let mut answer = vec![0u8; 1024];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), raw.read(&mut answer))
        .await
        .expect("answered at once")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).into_owned();
    assert!(
        answer.starts_with("HTTP/1.1 403") && answer.contains("more than one Host"),
        "{answer}"
    );
    let mut raw = tokio::net::TcpStream::connect(&address).await.unwrap();
    raw.write_all(
        format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n0123456789").as_bytes(),
    )
    .await
    .unwrap();
    let mut answer = vec![0u8; 512];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), raw.read(&mut answer))
        .await
        .expect("answered at once")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 413"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
}

/// A password in the upstream's URL is never written in clear: not in the recording's name,
/// nor its servers (a `${VAR}` reference), nor what the proxy says.
#[tokio::test]
async fn a_password_in_the_upstream_url_is_never_recorded_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("r.jsonl");
    let (mut proxy, _url) =
        common::http_proxy("http://ana:s3cret@127.0.0.1:9/mcp", &record, &[]).await;
    proxy.start_kill().unwrap();
    proxy.wait().await.unwrap();
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("URL_PASSWORD}"), "{text}");
}

/// An upstream that answers as `upstream` does, `delay` later: every request is held, then
/// passed on whole, and its answer comes back whole (a JSON body, as the reference server's).
async fn slower(upstream: String, delay: Duration) -> String {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, Method, StatusCode};
    let client = reqwest::Client::new();
    let relay = move |method: Method, headers: HeaderMap, body: Bytes| {
        let (client, upstream) = (client.clone(), upstream.clone());
        async move {
            tokio::time::sleep(delay).await;
            let mut request = client.request(method, &upstream).body(body);
            for (name, value) in &headers {
                if !matches!(name.as_str(), "host" | "content-length") {
                    request = request.header(name, value);
                }
            }
            let answer = request.send().await.unwrap();
            let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
            let mut back = HeaderMap::new();
            for (name, value) in answer.headers() {
                if !matches!(name.as_str(), "content-length" | "transfer-encoding") {
                    back.insert(name.clone(), value.clone());
                }
            }
            (status, back, answer.bytes().await.unwrap())
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().fallback(relay))
            .await
            .unwrap()
    });
    url
}

/// The latency an HTTP proxy records is from the agent's request to the server's answer: an
/// upstream that takes 300 ms to answer gives turns of at least 300 ms (the request's time was
/// taken once the answer was back, and turns read 0.02 ms).
#[tokio::test]
async fn the_http_proxy_records_the_time_the_server_took() {
    let upstream = common::spawn_http(&["dac".to_owned()]).await;
    let delay = Duration::from_millis(300);
    let slow = slower(upstream.url.clone(), delay).await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("slow.jsonl");
    let (mut proxy, url) = common::http_proxy(&slow, &record, &[]).await;
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(
        &requests,
        "{\"Kind\":\"constraints\",\"EntityIDs\":[\"Kiosk#3\"],\"Space\":{\"SpaceID\":\"Space:Square\"}}\n",
    )
    .unwrap();
    for protocol in ["2025-11-25", "2026-07-28"] {
        common::dialogue_ok(&requests, &["--url", &url, "--protocol", protocol]).await;
    }
    proxy.start_kill().unwrap();
    proxy.wait().await.unwrap();
    let s = bkn_explorer::session::Session::load(&record).unwrap();
    let latencies: Vec<f64> = s
        .dialogues
        .iter()
        .flat_map(|d| d.turns.iter().map(|t| t.latency_ms))
        .collect();
    assert_eq!(latencies.len(), 2, "one turn in each generation");
    assert!(
        latencies
            .iter()
            .all(|&ms| ms >= delay.as_secs_f64() * 1000.0),
        "recorded latencies {latencies:?} ms, the server took {delay:?}"
    );
}
