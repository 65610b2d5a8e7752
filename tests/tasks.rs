//! Tasks (SEP-2663, the 2026-07-28 extension): a server that answers a turn's `tools/call`
//! with a Task is followed to its result, through real processes: the fault server (the
//! reference Domain Access, answering with tasks that complete, fail, ask for input, never
//! change or are forgotten) and a third-party server in Python (raw JSON-RPC, written from
//! SEP-2663 alone), through the headless commands and the client library the explorer runs.

use crate::common;

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::defaults::{Chosen, Overrides};
use bkn_explorer::client::dialogue::{Dialogue, Filling};
use bkn_explorer::client::task::{TaskNote, TaskNotes};
use bkn_explorer::client::turn::{ErrorKind, Reply};
use bkn_explorer::protocol::Interface;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn fault(fault: &str, extra: &str) -> String {
    format!(
        "{} --fault {fault} {extra}",
        env!("CARGO_BIN_EXE_bkn-fault-server")
    )
}

fn python_peer(flags: &str) -> String {
    format!(
        "{} {}/tests/peers/raw_task_server.py {flags}",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A commitment retained at turn 0, and a plan that breaks it at turn 1.
fn commit_then_break() -> String {
    [
        json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Kiosk#3 not locatedAt MLoc:Square.Stage"}]}),
        common::plan(&["MM-Add Nil Kiosk#3 At MLoc:Square.Stage"]),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n")
}

/// Runs the explorer with `args` and `stdin`: the exit code, stdout, stderr.
fn explorer(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(common::bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn statuses(response: &Value) -> Vec<String> {
    common::statuses(response)
}

#[test]
fn a_task_is_followed_to_its_result_and_the_dialogue_is_judged_across_turns() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(&requests, commit_then_break()).unwrap();
    let saved = dir.path().join("tasks.json");
    let (code, out, err) = explorer(
        &[
            "dialogue",
            requests.to_str().unwrap(),
            "--stdio",
            &fault("task", "--polls 3"),
            "--save",
            saved.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let turns = lines(&out);
    assert_eq!(turns.len(), 2, "{out}");
    // The second turn's task ended with the Clash the first turn's commitment makes.
    let broken = &turns[1]["response"];
    assert_eq!(statuses(broken), ["Clash"], "{out}");
    assert_eq!(broken["Feasibility"]["Overall"], "infeasible");
    assert!(turns.iter().all(|t| t["conforms"] == true), "{out}");
    // Each task's progress, as it changed.
    for needed in [
        "note: task task-1 working: accepted",
        "note: task task-1 working: working: 2 polls to go",
        "note: task task-1 completed: done",
        "note: task task-2 completed: done",
    ] {
        assert!(err.contains(needed), "{needed} in {err}");
    }
    // Saved as any turn is: the Response the task completed with.
    let session = bkn_explorer::session::Session::load(&saved).unwrap();
    let turns = &session.dialogues[0].turns;
    assert_eq!(turns.len(), 2);
    assert_eq!(statuses(&turns[1].response().unwrap()), ["Clash"]);
}

#[test]
fn a_task_over_http_is_followed_to_its_result_across_turns() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_bkn-fault-server"))
        .args(["--fault", "task", "--http", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let url = banner.trim().rsplit(' ').next().unwrap().to_owned();
    // Over 2026-07-28 HTTP the fault server keeps the dialogue by DialogID: the commitment
    // of turn 0's task is held when turn 1's task is answered.
    let (code, out, err) = explorer(&["dialogue", "-", "--url", &url], &commit_then_break());
    server.kill().unwrap();
    let _ = server.wait();
    assert_eq!(code, 0, "{err}");
    let turns = lines(&out);
    assert_eq!(turns.len(), 2, "{out}");
    assert_eq!(statuses(&turns[1]["response"]), ["Clash"], "{out}");
    assert!(err.contains("note: task task-1 completed"), "{err}");
    assert!(err.contains("note: task task-2 completed"), "{err}");
}

#[test]
fn a_failed_task_is_an_error_that_names_it() {
    let request = json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}).to_string();
    let (code, out, err) = explorer(
        &["send", "-", "--stdio", &fault("task-fails", "--polls 1")],
        &request,
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("task task-1 failed: the fault server's task failed, as asked (-32603)"),
        "{err}"
    );
}

#[test]
fn a_forgotten_task_and_one_that_never_changes_end_in_clear_errors() {
    let request = json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}).to_string();
    let (code, _, err) = explorer(&["send", "-", "--stdio", &fault("task-lost", "")], &request);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the server no longer knows task task-1"),
        "{err}"
    );
    // Bounded by the turn's timeout, which a change of the task would have started again.
    let (code, _, err) = explorer(
        &[
            "send",
            "-",
            "--timeout",
            "1",
            "--stdio",
            &fault("task-stuck", ""),
        ],
        &request,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("task task-1 stayed working for 1 s without a change")
            && err.contains("tasks/cancel"),
        "{err}"
    );
}

#[test]
fn input_required_inside_a_task_is_answered_and_given_back_with_tasks_update() {
    let dir = tempfile::tempdir().unwrap();
    let request = json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}).to_string();
    let accept = dir.path().join("accept.json");
    std::fs::write(
        &accept,
        r#"{"confirm": {"action": "accept", "content": {"ok": true}}}"#,
    )
    .unwrap();
    let decline = dir.path().join("decline.json");
    std::fs::write(&decline, r#"{"elicitation/create": {"action": "decline"}}"#).unwrap();
    let server = fault("task-input", "--polls 1");
    let saved = dir.path().join("asked.json");
    let (code, out, err) = explorer(
        &[
            "dialogue",
            "-",
            "--stdio",
            &server,
            "--answers",
            accept.to_str().unwrap(),
            "--save",
            saved.to_str().unwrap(),
        ],
        &request,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out)[0]["response"]["Outcome"], "answered", "{out}");
    // What the task asked, and the answer, are kept with the turn.
    let session: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let asked = &session["dialogues"][0]["turns"][0]["asked"][0];
    assert_eq!(asked["name"], "confirm", "{session}");
    assert_eq!(asked["answer"]["action"], "accept", "{session}");
    assert!(
        err.contains("note: task task-1 input_required: waiting for a confirmation"),
        "{err}"
    );
    let (code, _, err) = explorer(
        &[
            "send",
            "-",
            "--stdio",
            &server,
            "--answers",
            decline.to_str().unwrap(),
        ],
        &request,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("task task-1 failed"), "{err}");
    // Nobody to answer: the error names what the server asked, and the task is cancelled.
    let (code, _, err) = explorer(&["send", "-", "--stdio", &server], &request);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("input request \"confirm\"") && err.contains("--answers"),
        "{err}"
    );
}

#[tokio::test]
async fn a_cancel_sends_tasks_cancel_and_the_turn_ends_as_cancelled() {
    // The cancel comes when the task is first seen, as a person's Esc would.
    let cancel = CancellationToken::new();
    let seen: Arc<Mutex<Vec<TaskNote>>> = Arc::default();
    let notes = {
        let (cancel, seen) = (cancel.clone(), seen.clone());
        TaskNotes(Arc::new(move |note: &TaskNote| {
            seen.lock().unwrap().push(note.clone());
            cancel.cancel();
        }))
    };
    let options = ConnectOptions {
        timeout: Duration::from_secs(10),
        embedded_program: Some(PathBuf::from(common::bin())),
        task_notes: Some(notes),
        ..ConnectOptions::default()
    };
    let spec = common::fault_spec("task", &["--polls", "1000000", "--poll-ms", "50"]);
    let mut d = Dialogue::connect(
        &spec,
        &options,
        Interface::Dac,
        Chosen::built_in(),
        &Overrides::default(),
    )
    .await
    .unwrap();
    let request = d.prepare(
        json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}),
        Filling::Missing,
    );
    let turn = d.send(request, &cancel).await;
    let Reply::Error(e) = &turn.reply else {
        panic!("{:?}", turn.reply)
    };
    assert_eq!(e.kind, ErrorKind::Cancelled);
    assert!(
        e.message.contains("task task-1 cancelled by the user")
            && e.message.contains("tasks/cancel sent (acknowledged)"),
        "{}",
        e.message
    );
    assert_eq!(seen.lock().unwrap()[0].status, "working");
    // Nothing lost: the turn is kept with its Request, and the connection stays open.
    assert_eq!(turn.request_value()["Kind"], "constraints");
    assert!(d.connection.is_open());
    d.close().await;
}

#[test]
fn ctrl_c_cancels_a_headless_turn_waiting_for_its_task() {
    let request = json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}).to_string();
    let mut child = Command::new(common::bin())
        .args([
            "send",
            "-",
            "--stdio",
            &fault("task", "--polls 1000000 --poll-ms 50"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.as_bytes())
        .unwrap();
    // The signal once the task is seen (its first note), not after a sleep.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut err = String::new();
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{err}");
        err.push_str(&line);
        if line.starts_with("note: task task-1 working") {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    err.push_str(&rest);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("task task-1 cancelled by the user; tasks/cancel sent (acknowledged)"),
        "{err}"
    );
}

#[test]
fn a_third_party_task_server_is_followed_and_keeps_the_dialogue() {
    // Its own M-Instance (MI:Elsewhere) comes from the dialogue's defaults flag; its
    // commitments live in its one process.
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    let lines_in = [
        json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": "c1", "Statement": "Robot#1 not locatedAt MLoc:Lab.Door"}]}),
        common::plan(&["MM-Move Nil Robot#1 To MLoc:Lab.Bench"]),
    ];
    std::fs::write(
        &requests,
        lines_in
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let (code, out, err) = explorer(
        &[
            "dialogue",
            requests.to_str().unwrap(),
            "--m-instance",
            "MI:Elsewhere",
            "--stdio",
            &python_peer("--polls 2"),
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let turns = lines(&out);
    assert_eq!(turns.len(), 2, "{out}");
    assert_eq!(turns[1]["response"]["Outcome"], "answered", "{out}");
    assert_eq!(
        turns[1]["response"]["CommitmentStatus"][0],
        json!({"CommitmentID": "c1", "Status": "retained"}),
        "the commitment of turn 0 is still held at turn 1: {out}"
    );
    assert!(
        err.contains("note: task lab-task-1 working: 1 to go"),
        "{err}"
    );
    assert!(
        err.contains("note: task lab-task-2 completed: done"),
        "{err}"
    );
    // Its Clash, from the task's result, is judged: feasible with a Clash does not conform.
    let request = common::plan(&["MM-Move Nil Robot#1 To MLoc:Lab.Bench"]).to_string();
    let (code, _, err) = explorer(
        &[
            "send",
            "-",
            "--m-instance",
            "MI:Elsewhere",
            "--stdio",
            &python_peer("--clash-feasible"),
        ],
        &request,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("feasibility.overall"), "{err}");
}

#[test]
fn a_third_party_task_server_over_http_is_followed() {
    let mut server = Command::new(common::python3().expect("python3"))
        .arg(format!(
            "{}/tests/peers/raw_task_server.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args(["--http", "0", "--polls", "3"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let url = banner.trim().rsplit(' ').next().unwrap().to_owned();
    let request = common::plan(&["MM-Move Nil Robot#1 To MLoc:Lab.Bench"]).to_string();
    let (code, out, err) = explorer(
        &["send", "-", "--m-instance", "MI:Elsewhere", "--url", &url],
        &request,
    );
    server.kill().unwrap();
    let _ = server.wait();
    assert_eq!(code, 0, "{err}");
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(statuses(&response), ["Ack"], "{out}");
    assert!(
        err.contains("note: task lab-task-1 working: 2 to go"),
        "{err}"
    );
    assert!(
        err.contains("note: task lab-task-1 completed: done"),
        "{err}"
    );
}

#[test]
fn a_third_party_task_asks_for_input_answered_from_the_answers_file() {
    let dir = tempfile::tempdir().unwrap();
    let request = common::plan(&["MM-Move Nil Robot#1 To MLoc:Lab.Bench"]).to_string();
    let yes = dir.path().join("yes.json");
    std::fs::write(
        &yes,
        r#"{"approve": {"action": "accept", "content": {"yes": true}}}"#,
    )
    .unwrap();
    let (code, out, err) = explorer(
        &[
            "send",
            "-",
            "--m-instance",
            "MI:Elsewhere",
            "--answers",
            yes.to_str().unwrap(),
            "--stdio",
            &python_peer("--ask --polls 0"),
        ],
        &request,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["Outcome"],
        "answered"
    );
    assert!(
        err.contains("note: task lab-task-1 input_required: waiting for approval"),
        "{err}"
    );
}
