//! The reference servers under load (issue 8): 8 concurrent Streamable HTTP sessions of
//! 1,000 turns each against each server. Every Response is checked at all three levels
//! (message, exchange, dialogue); each session watches for anything of another session's
//! (commitments for Domain Access, the refinement count for User State Refinement); and the
//! server's memory is back to its idle level once the sessions have ended. The turns per
//! second are printed (`cargo test --release load:: -- --nocapture` for figures worth
//! quoting).

use crate::common;

use bkn_explorer::protocol::Interface;
use common::{Dialogue, Reply, commitment_states, plan, spawn_http};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SESSIONS: usize = 8;
const TURNS: usize = 1_000;

/// The resident memory of a process, in KiB (Linux).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .expect("VmRSS in /proc")
}

async fn session(url: &str, interface: Interface) -> Dialogue {
    common::http_dialogue(url, interface).await
}

/// One Domain Access session: it commits its own statements, then asks for constraints and
/// feasibility; every answer must list its commitments and no other session's.
async fn dac_session(url: String, k: usize) {
    let mut d = session(&url, Interface::Dac).await;
    let own = [format!("s{k}-a"), format!("s{k}-b")];
    let first = d
        .send(json!({"Kind": "commitment", "Commitments": [
            {"CommitmentID": own[0], "Statement": format!("Kiosk#3 not locatedAt MLoc:Square.Spot{k}")},
            {"CommitmentID": own[1], "Statement": "Avatar#7 locatedAt MLoc:Square.Gate"},
        ]}))
        .await
        .response();
    assert_eq!(commitment_states(&first).len(), 2);
    for turn in 1..TURNS {
        let fields = if turn % 2 == 0 {
            json!({"Kind": "constraints", "EntityIDs": ["Fountain#1", "Avatar#7"]})
        } else {
            plan(&[
                "MM-Add Nil Kiosk#3 At MLoc:Square.Stage",
                "Hide Nil Bench#2",
                "Post Nil Item#12 To Process#Market",
            ])
        };
        let response = match d.send(fields).await {
            Reply::Response(r) => r,
            Reply::ToolError(t) => panic!("session {k}, turn {turn}: a tool error: {t}"),
        };
        let ids: Vec<String> = commitment_states(&response).keys().cloned().collect();
        assert_eq!(
            ids, own,
            "session {k}, turn {turn}: the commitments are this session's only"
        );
    }
    d.client.cancel().await.ok();
}

/// One User State Refinement session: feedback on one User every turn; the refinement count
/// is this session's own.
async fn usr_session(url: String, k: usize) {
    let mut d = session(&url, Interface::Usr).await;
    let user = if k.is_multiple_of(2) {
        "User#Ana"
    } else {
        "User#Ben"
    };
    for turn in 0..TURNS {
        let conflicts = if turn % 3 == 0 {
            vec!["frowned at the kiosk"]
        } else {
            vec![]
        };
        let response = d
            .send(json!({"UserID": user, "Feedback": {
                "Hypothesis": "Emotion is curious", "Conflicts": conflicts}}))
            .await
            .response();
        assert_eq!(
            response["RefinedUserState"]["Cycle"],
            json!(turn + 1),
            "session {k}, turn {turn}: the refinement count is this session's"
        );
    }
    d.client.cancel().await.ok();
}

async fn load(which: &str) {
    let mut server = spawn_http(&[which.to_owned()]).await;
    let pid = server.child.id().expect("the server runs");
    // Idle: after one short session has come and gone (first-use allocations made).
    let mut warm = session(&server.url, Interface::from_code(which).unwrap()).await;
    let body: Value = match which {
        "dac" => json!({"Kind": "constraints", "EntityIDs": ["Fountain#1"]}),
        _ => json!({"UserID": "User#Ana", "Feedback": {"Hypothesis": "Emotion is curious"}}),
    };
    for _ in 0..20 {
        warm.send(body.clone()).await.response();
    }
    warm.client.cancel().await.ok();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = rss_kib(pid);

    let started = Instant::now();
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|k| {
            let url = server.url.clone();
            let which = which.to_owned();
            tokio::spawn(async move {
                match which.as_str() {
                    "dac" => dac_session(url, k).await,
                    _ => usr_session(url, k).await,
                }
            })
        })
        .collect();
    let mut peak = idle;
    for t in tasks {
        t.await.expect("a session ran to its end");
        peak = peak.max(rss_kib(pid));
    }
    let elapsed = started.elapsed();
    let turns = (SESSIONS * TURNS) as f64;
    // The sessions have ended (DELETE): the server holds no state of theirs...
    let health = format!("{}/health", server.url.trim_end_matches("/mcp"));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let live: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
        if live["sessions"] == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{which}: the server still holds {} sessions' state after they ended",
            live["sessions"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // ... and its memory comes back to about its idle level (the allocator keeps a little:
    // an eighth of the idle size, or 4 MiB, is allowed).
    let allowed = idle + (idle / 8).max(4096);
    let mut after = rss_kib(pid);
    let deadline = Instant::now() + Duration::from_secs(10);
    while after > allowed && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        after = rss_kib(pid);
    }
    println!(
        "{which}: {SESSIONS} sessions x {TURNS} turns over HTTP in {elapsed:.2?}: {:.0} turns/s; memory idle {idle} KiB, peak {peak} KiB, after {after} KiB",
        turns / elapsed.as_secs_f64()
    );
    assert!(
        after <= allowed,
        "{which}: memory {after} KiB after the sessions ended, idle was {idle} KiB (peak {peak} KiB)"
    );
    server.child.kill().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn domain_access_under_load() {
    load("dac").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_state_refinement_under_load() {
    load("usr").await;
}
