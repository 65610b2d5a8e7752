//! The fault matrix of docs/reliability.md, through the two ways in: the engine the explorer
//! runs (`client::engine::Engine`, one task per dialogue, events on a channel) and the
//! headless `bkn-explorer dialogue` command. Every fault must end in a clear error, with no
//! panic, and with what came before kept: the engine goes on serving the explorer's other
//! dialogue, and the command saves the turns it has. What ended each case is read from the
//! error (a timeout says "no answer within 2 s" and took at least the timeout; an exit, a
//! refusal or a limit says so, which a timeout could not), never from a wall clock, which a
//! busy machine stretches; a case that never ends fails at the engine's one-minute guard.
//! (tests/client.rs has the same faults at the level of one `Dialogue`.)

use crate::common;

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::defaults::{Chosen, Overrides};
use bkn_explorer::client::engine::{Engine, EngineEvent};
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::client::turn::{ErrorKind, Reply, Turn};
use bkn_explorer::protocol::Interface;
use bkn_explorer::session::Session;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;

/// The timeout every case runs with.
const TIMEOUT: Duration = Duration::from_secs(2);

fn options(max_mb: usize) -> ConnectOptions {
    ConnectOptions {
        timeout: TIMEOUT,
        max_message_bytes: max_mb * 1024 * 1024,
        embedded_program: Some(PathBuf::from(common::bin())),
        ..ConnectOptions::default()
    }
}

fn constraints() -> Value {
    json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]})
}

/// What a fault must come to.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// The dialogue cannot open; the error says these words.
    NoDialogue(&'static [&'static str]),
    /// The turn fails with this kind; the error says these words.
    Failed(ErrorKind, &'static [&'static str]),
    /// A Response came, with a finding of this check.
    Finding(&'static str),
    /// The Response came whole (a big one, within the limit).
    Taken,
}

/// The explorer's engine with two dialogues: one on the reference server (to show it goes on),
/// one on the faulty server.
struct Explorer {
    engine: Engine,
    events: mpsc::UnboundedReceiver<EngineEvent>,
    /// The caller names dialogues (the explorer's state does).
    next_key: u64,
}

impl Explorer {
    /// Over 2025-11-25 sessions: what the HTTP cases (a deleted or restarted session) are about.
    fn over_sessions(max_mb: usize) -> Explorer {
        Explorer::with(ConnectOptions {
            protocol: Some(bkn_explorer::client::generation::ProtocolChoice::Session),
            ..options(max_mb)
        })
    }

    fn new(max_mb: usize) -> Explorer {
        Explorer::with(options(max_mb))
    }

    fn with(options: ConnectOptions) -> Explorer {
        let (tx, events) = mpsc::unbounded_channel();
        Explorer {
            engine: Engine::new(tx, options),
            events,
            next_key: 1,
        }
    }

    /// Opens a dialogue; returns its key and its DialogID, or the error.
    async fn open(&mut self, spec: ServerSpec) -> (u64, Result<String, String>) {
        let key = self.next_key;
        self.next_key += 1;
        self.engine.open(
            key,
            spec,
            Interface::Dac,
            Chosen::built_in(),
            Overrides::default(),
            0,
        );
        loop {
            match self.next().await {
                EngineEvent::Opened {
                    dialogue,
                    dialog_id,
                    ..
                } if dialogue == key => return (key, Ok(dialog_id)),
                EngineEvent::Failed {
                    dialogue, error, ..
                } if dialogue == key => return (key, Err(error)),
                _ => {}
            }
        }
    }

    async fn turn(&mut self, key: u64) -> Turn {
        assert!(self.engine.send(
            key,
            constraints(),
            bkn_explorer::client::dialogue::Filling::Missing,
        ));
        loop {
            if let EngineEvent::TurnFinished { dialogue, turn, .. } = self.next().await
                && dialogue == key
            {
                return turn;
            }
        }
    }

    async fn next(&mut self) -> EngineEvent {
        tokio::time::timeout(Duration::from_secs(60), self.events.recv())
            .await
            .expect("an engine event within a minute")
            .expect("the engine is alive")
    }
}

fn judge(case: &str, outcome: Outcome, result: Result<Turn, String>) {
    match (outcome, result) {
        (Outcome::NoDialogue(words), Err(e)) => {
            for w in words {
                assert!(e.contains(w), "{case}: the error lacks \"{w}\": {e}");
            }
        }
        (Outcome::Failed(kind, words), Ok(turn)) => match &turn.reply {
            Reply::Error(e) => {
                assert_eq!(e.kind, kind, "{case}: {}", e.message);
                // A timeout fires at its time, never before it.
                if kind == ErrorKind::Timeout {
                    assert!(
                        turn.latency_ms >= TIMEOUT.as_millis() as f64,
                        "{case}: timed out after {} ms",
                        turn.latency_ms
                    );
                }
                for w in words {
                    assert!(
                        e.message.contains(w),
                        "{case}: the error lacks \"{w}\": {}",
                        e.message
                    );
                }
            }
            other => panic!("{case}: expected a failed turn, got {other:?}"),
        },
        (Outcome::Finding(check), Ok(turn)) => {
            assert!(turn.response().is_some(), "{case}: no Response");
            assert!(
                turn.findings
                    .iter()
                    .any(|f| f.finding.check.to_string() == check),
                "{case}: no {check} finding in {:?}",
                turn.findings
            );
        }
        (Outcome::Taken, Ok(turn)) => {
            assert!(turn.response().is_some(), "{case}: {:?}", turn.reply);
        }
        (expected, got) => panic!(
            "{case}: expected {expected:?}, got {:?}",
            got.map(|t| t.reply)
        ),
    }
}

/// The stdio faults, through the engine, each beside a healthy dialogue.
#[tokio::test]
async fn stdio_faults_through_the_explorers_engine() {
    let cases: &[(&str, &[&str], usize, Outcome)] = &[
        (
            "exit-on-initialize",
            &[],
            64,
            Outcome::NoDialogue(&["exited with status 1", "exiting during server/discover"]),
        ),
        (
            "crash-on-call",
            &[],
            64,
            Outcome::Failed(ErrorKind::Gone, &["exited with status 101", "crashing"]),
        ),
        (
            "garbage",
            &[],
            64,
            Outcome::Failed(
                ErrorKind::Timeout,
                &["no answer within 2 s", "not JSON-RPC"],
            ),
        ),
        (
            "hang",
            &[],
            64,
            Outcome::Failed(ErrorKind::Timeout, &["no answer within 2 s"]),
        ),
        ("huge", &[], 64, Outcome::Taken),
        (
            "huge",
            &[],
            8,
            Outcome::Failed(ErrorKind::TooLarge, &["20.0 MiB, over the 8.0 MiB limit"]),
        ),
        (
            "wrong-request-id",
            &[],
            64,
            Outcome::Finding("exchange.request-id"),
        ),
        (
            "missing-outcome",
            &[],
            64,
            Outcome::Finding("schema.required"),
        ),
        (
            "no-structured",
            &[],
            64,
            Outcome::Finding("binding.structured-content"),
        ),
    ];
    for (name, extra, max_mb, outcome) in cases {
        let case = format!("{name} (limit {max_mb} MiB)");
        // A big answer within the limit is to be taken whole, and one beyond it refused for
        // its size, however long 20 MiB takes to be made and cross a pipe on a busy machine:
        // its turn is not the timeout's to judge (a long one, so that only the size can end
        // it).
        let mut explorer = match outcome {
            Outcome::Taken | Outcome::Failed(ErrorKind::TooLarge, _) => {
                Explorer::with(ConnectOptions {
                    timeout: Duration::from_secs(120),
                    ..options(*max_mb)
                })
            }
            _ => Explorer::new(*max_mb),
        };
        let (healthy, opened) = explorer.open(ServerSpec::embedded(Interface::Dac)).await;
        opened.unwrap();
        // The open (where exit-on-initialize strikes) and the turn: what ended each is judged
        // from its error.
        let (key, opened) = explorer.open(common::fault_spec(name, extra)).await;
        let result = match opened {
            Ok(_) => Ok(explorer.turn(key).await),
            Err(e) => Err(e),
        };
        judge(&case, *outcome, result);
        // The explorer goes on: its other dialogue still answers.
        let turn = explorer.turn(healthy).await;
        assert!(
            turn.response().is_some() && turn.findings.is_empty(),
            "{case}: the healthy dialogue after the fault: {:?}",
            turn.reply
        );
    }
}

/// The HTTP faults, through the engine: refused, a session that expires mid-dialogue, a
/// server that restarts between turns.
#[tokio::test]
async fn http_faults_through_the_explorers_engine() {
    let mut explorer = Explorer::over_sessions(64);
    // Refused: nothing listens.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let (_, opened) = explorer
        .open(common::http_spec(&format!("http://127.0.0.1:{port}/mcp")))
        .await;
    judge(
        "refused",
        Outcome::NoDialogue(&["refused"]),
        opened.map(|_| unreachable!()),
    );

    // Expired: the session is deleted on the server between two turns.
    let server = common::spawn_http(&["dac".into()]).await;
    let (key, opened) = explorer.open(common::http_spec(&server.url)).await;
    // Over HTTP the DialogID is the MCP session id.
    let session = opened.unwrap();
    assert!(explorer.turn(key).await.response().is_some());
    let deleted = reqwest::Client::new()
        .delete(&server.url)
        .header("Mcp-Session-Id", session)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success());
    let turn = explorer.turn(key).await;
    judge(
        "expired",
        Outcome::Failed(ErrorKind::Gone, &["404"]),
        Ok(turn),
    );

    // Restarted: the server goes down and comes back on the same port between turns.
    let mut first = common::spawn_http(&["dac".into()]).await;
    let port = first
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let (key, opened) = explorer.open(common::http_spec(&first.url)).await;
    opened.unwrap();
    assert!(explorer.turn(key).await.response().is_some());
    first.child.kill().await.unwrap();
    let _second =
        common::spawn_http(&["dac".into(), "--http".into(), format!("127.0.0.1:{port}")]).await;
    let turn = explorer.turn(key).await;
    judge(
        "restarted",
        Outcome::Failed(ErrorKind::Gone, &["session"]),
        Ok(turn),
    );
}

/// The headless `dialogue` command against each stdio fault: a clear message, the exit code
/// of docs/reliability.md, and `--save` keeps the turns; a turn that timed out is saved with
/// at least the timeout as its latency. The cases run at once (each mostly waits on its
/// server); one that never ends fails the test after a minute.
#[test]
fn stdio_faults_through_the_headless_dialogue_command() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(&requests, format!("{}\n", constraints())).unwrap();
    let cases: &[(&str, u8, &[&str])] = &[
        ("exit-on-initialize", 2, &["exited with status 1"]),
        ("crash-on-call", 2, &["exited with status 101"]),
        ("garbage", 2, &["no answer within 2 s", "not JSON-RPC"]),
        ("hang", 2, &["no answer within 2 s"]),
        ("wrong-request-id", 1, &["exchange.request-id"]),
        ("missing-outcome", 1, &["schema.required"]),
        ("no-structured", 1, &["binding.structured-content"]),
    ];
    let (done, finished) = std::sync::mpsc::channel();
    for (name, _, _) in cases {
        let saved = dir.path().join(format!("{name}.json"));
        let mut command = std::process::Command::new(common::bin());
        command
            .args(["dialogue"])
            .arg(&requests)
            .args([
                "--stdio",
                &format!("{} --fault {name}", env!("CARGO_BIN_EXE_bkn-fault-server")),
                "--timeout",
                "2",
                "--save",
            ])
            .arg(&saved);
        let done = done.clone();
        std::thread::spawn(move || done.send((*name, command.output().unwrap())));
    }
    let mut outputs = std::collections::BTreeMap::new();
    for _ in cases {
        let (name, out) = finished
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "a case did not end within a minute: {:?} ended",
                    outputs.keys()
                )
            });
        outputs.insert(name, out);
    }
    for (name, code, words) in cases {
        let out = &outputs[name];
        let saved = dir.path().join(format!("{name}.json"));
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(i32::from(*code)), "{name}: {all}");
        // (The fault server's own simulated panic is quoted inside messages; a panic of
        // the explorer would be a line of its own.)
        assert!(
            !String::from_utf8_lossy(&out.stderr)
                .lines()
                .any(|l| l.starts_with("thread '")),
            "{name}: a panic: {all}"
        );
        for w in *words {
            assert!(all.contains(w), "{name}: the output lacks \"{w}\": {all}");
        }
        if *name != "exit-on-initialize" {
            let session = Session::load(&saved)
                .unwrap_or_else(|e| panic!("{name}: the session was not kept: {e}"));
            let turns = &session.dialogues[0].turns;
            assert!(!turns.is_empty(), "{name}: no turn saved");
            // The timeout fired at its time, not before.
            if words.iter().any(|w| w.starts_with("no answer within")) {
                assert!(
                    turns[0].latency_ms >= TIMEOUT.as_millis() as f64,
                    "{name}: timed out after {} ms",
                    turns[0].latency_ms
                );
            }
        }
    }
}

/// `dialogue` of `turns` constraints Requests against the fault server answering the first
/// at once and each later one after ten minutes (with progress meanwhile, so no timeout
/// ends it): the run is in its second turn until it is stopped. Its standard output is piped
/// (and its standard error, for the tests that read it); `extra` is added to its arguments.
fn slow_dialogue(
    dir: &std::path::Path,
    turns: usize,
    extra: &[&std::ffi::OsStr],
) -> std::process::Child {
    let requests = dir.join("requests.jsonl");
    std::fs::write(&requests, format!("{}\n", constraints()).repeat(turns)).unwrap();
    std::process::Command::new(common::bin())
        .args(["dialogue"])
        .arg(&requests)
        .args([
            "--stdio",
            &format!(
                "{} --fault slow --fast 1 --delay 600",
                env!("CARGO_BIN_EXE_bkn-fault-server")
            ),
        ])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `dialogue` gathers its lines when turns are fast, but a line never waits behind a slow
/// turn: the first exchange's line is out while the second turn (ten minutes long) is still
/// with the server. No clock is read: the line comes while the run is still in that turn, or
/// the guard (a minute, far less than the turn) fails.
#[test]
fn a_dialogue_line_is_written_while_the_next_turn_is_slow() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = slow_dialogue(dir.path(), 2, &[]);
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(lines.next()));
    let first = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the first line waited behind the slow second turn")
        .expect("a first line")
        .unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["exchange"], 0);
    assert_eq!(first["outcome"], "answered");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended: the line was written at the end, not while the second turn ran"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// SIGTERM (or Ctrl-C) stops `dialogue` like the end of its Requests: the turn in flight is
/// cancelled and recorded, every line gathered so far is written, and --save still saves.
#[test]
fn a_signal_stops_a_dialogue_without_losing_its_lines_or_its_session() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("s.json");
    let mut child = slow_dialogue(dir.path(), 3, &["--save".as_ref(), saved.as_os_str()]);
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["outcome"], "answered");
    // The second turn is with the server now.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stopped by a signal"), "{stderr}");
    assert_eq!(
        rest.len(),
        1,
        "the cancelled turn's line, and no third: {rest:?}"
    );
    assert_eq!(rest[0]["exchange"], 1);
    assert!(rest[0].get("error").is_some(), "{}", rest[0]);
    let session = Session::load(&saved).unwrap();
    assert_eq!(session.dialogues[0].turns.len(), 2);
}

/// The fault server over HTTP keeps a dialogue in either generation: in the MCP session
/// (2025-11-25), by DialogID (2026-07-28, where each request reaches a handler of its own):
/// the commitment of turn 0 makes turn 1 Clash. A later turn of a dialogue it never held is
/// a tool error that says so.
#[test]
fn the_fault_server_keeps_its_dialogues_over_http_in_both_generations() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bkn-fault-server"))
        .args(["--fault", "none", "--http", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the fault server says its URL")
            .unwrap();
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_owned();
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(
        &requests,
        concat!(
            r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"}]}"#,
            "\n",
            r#"{"Kind": "feasibility", "ProcessActions": [{"Step": 1, "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let stray = dir.path().join("stray.json");
    std::fs::write(
        &stray,
        r#"{"Kind": "constraints", "EntityIDs": ["Avatar#7"], "TurnIndex": 3, "DialogID": "never-opened"}"#,
    )
    .unwrap();
    for protocol in ["2025-11-25", "2026-07-28"] {
        let out = std::process::Command::new(common::bin())
            .arg("dialogue")
            .arg(&requests)
            .args(["--url", &url, "--protocol", protocol])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let turns: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(turns.len(), 2, "{protocol}: {stdout}");
        assert_eq!(
            turns[1]["response"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
            "{protocol}: the commitment of turn 0 holds: {stdout}"
        );
    }
    let out = std::process::Command::new(common::bin())
        .arg("send")
        .arg(&stray)
        .args(["--url", &url, "--protocol", "2026-07-28", "--as-is"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("holds no dialogue never-opened"),
        "{stderr}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
