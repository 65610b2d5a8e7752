//! The client engine's speed (issue 5):
//! - what the engine adds per turn over a bare rmcp call to the same server (target: under
//!   10%): the same Request, filled the same way, to `bkn-explorer serve dac` over stdio, once
//!   through a bare rmcp client and once through a `Dialogue` (the conformance checks of
//!   Request, Response, exchange and dialogue, the protocol log the explorer keeps, the turn
//!   record). Both servers run with the same arguments as the embedded one (its log level
//!   costs the server a few microseconds a turn). Two measures: `paired` alternates the two in
//!   blocks and cancels the drift of a shared machine; the criterion pair measures each in
//!   its own window, and on two shared cores reads higher (see docs/performance.md);
//! - `bkn-explorer send` end to end as a process, starting the reference server over stdio
//!   (target: under 50 ms).

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::dialogue::{Dialogue, Filling};
use bkn_explorer::client::event::EventSink;
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::client::turn::Reply;
use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::message::{CommonDefaults, Fill, fill_request, new_id};
use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn body() -> Value {
    json!({"Kind": "constraints", "EntityIDs": ["Fountain#1", "Avatar#7"]})
}

/// One turn as a bare rmcp client makes it: the common fields filled, the tool called,
/// nothing checked.
async fn bare_turn(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    dialog_id: &str,
    turn: u64,
) -> rmcp::model::CallToolResult {
    let mut request = body().as_object().unwrap().clone();
    fill_request(
        &mut request,
        Interface::Dac,
        dialog_id,
        turn,
        &CommonDefaults::default(),
        Fill::Missing,
    );
    let result = client
        .call_tool(CallToolRequestParams::new("bkn_dac").with_arguments(request))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    result
}

/// A bare rmcp client of `bkn-explorer serve dac` over stdio, started as the embedded
/// server is.
async fn bare_client() -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_bkn-explorer")).configure(|c| {
        c.args(["serve", "dac"]);
    });
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

/// A dialogue of the explorer's engine with the embedded Domain Access over stdio.
async fn engine_dialogue(events: EventSink) -> Dialogue {
    let options = ConnectOptions {
        events,
        embedded_program: Some(PathBuf::from(env!("CARGO_BIN_EXE_bkn-explorer"))),
        ..ConnectOptions::default()
    };
    let spec = ServerSpec::embedded(Interface::Dac);
    Dialogue::connect(
        &spec,
        &options,
        Interface::Dac,
        bkn_explorer::client::defaults::Chosen::built_in(),
        &Default::default(),
    )
    .await
    .unwrap()
}

/// An event sink drained by a task, as the explorer's event loop drains it.
fn drained_events() -> EventSink {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    EventSink::new(tx)
}

fn engine_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("per turn, dac over stdio");
    group.measurement_time(Duration::from_secs(6));

    // A bare rmcp client: fill the common fields, call the tool, nothing else.
    let bare = rt.block_on(bare_client());
    let dialog_id = new_id();
    let mut turn = 0u64;
    group.bench_function("bare rmcp call", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(bare_turn(&bare, &dialog_id, turn).await);
                    turn += 1;
                }
                start.elapsed()
            })
        })
    });
    rt.block_on(async { bare.cancel().await.ok() });

    // The engine, as the explorer runs it: its own stdio transport (size limit, health),
    // the protocol log on (drained by a task, as the explorer's event loop does), every
    // check on every turn.
    let mut dialogue = rt.block_on(async { engine_dialogue(drained_events()).await });
    let cancel = CancellationToken::new();
    group.bench_function("engine turn (checks, log, record)", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let request = dialogue.prepare(body(), Filling::Missing);
                    let turn = dialogue.send(request, &cancel).await;
                    assert!(turn.findings.is_empty(), "{:?}", turn.findings);
                    black_box(turn);
                }
                start.elapsed()
            })
        })
    });
    rt.block_on(dialogue.close());
    group.finish();
}

fn send_process(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let request = dir.path().join("request.json");
    std::fs::write(&request, body().to_string()).unwrap();
    let mut group = c.benchmark_group("process");
    group.sample_size(20);
    group.bench_function("bkn-explorer send (stdio reference server)", |b| {
        b.iter(|| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_bkn-explorer"))
                .arg("send")
                .arg(&request)
                .stderr(Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success());
            black_box(out.stdout)
        })
    });
    group.finish();
}

/// The overhead as one figure. Bare calls and engine turns take turns in blocks of
/// consecutive turns (a dialogue's pace), against two servers started alike, the order
/// swapped every round; each round's engine block is compared with the bare block next to it,
/// so that drift on a busy machine (two cores shared with the servers) falls on both, and the
/// median of the rounds' ratios is the figure. A third arm, the engine without the protocol
/// log (as headless commands run it), shows what the log costs.
fn paired_overhead(_: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let bare = bare_client().await;
        let mut logged = engine_dialogue(drained_events()).await;
        let mut quiet = engine_dialogue(EventSink::none()).await;
        let cancel = CancellationToken::new();
        let dialog_id = new_id();
        let mut turn = 0u64;
        const ROUNDS: usize = 80;
        const TURNS: u32 = 100;
        // Per round: the mean turn of the bare, logged-engine and quiet-engine blocks.
        let mut rounds: Vec<[Duration; 3]> = Vec::new();
        for round in 0..ROUNDS {
            let mut times = [Duration::ZERO; 3];
            for arm in (0..3).map(|k| (k + round) % 3) {
                let start = Instant::now();
                for _ in 0..TURNS {
                    if arm == 0 {
                        black_box(bare_turn(&bare, &dialog_id, turn).await);
                        turn += 1;
                        continue;
                    }
                    let dialogue = if arm == 1 { &mut logged } else { &mut quiet };
                    let request = dialogue.prepare(body(), Filling::Missing);
                    let turn = dialogue.send(request, &cancel).await;
                    assert!(turn.findings.is_empty(), "{:?}", turn.findings);
                    assert!(matches!(turn.reply, Reply::Response(_)), "{:?}", turn.reply);
                    black_box(turn);
                }
                times[arm] = start.elapsed() / TURNS;
            }
            rounds.push(times);
        }
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let micros =
            |arm: usize| median(rounds.iter().map(|r| r[arm].as_secs_f64() * 1e6).collect());
        let overhead = |arm: usize| {
            median(
                rounds
                    .iter()
                    .map(|r| (r[arm].as_secs_f64() / r[0].as_secs_f64() - 1.0) * 100.0)
                    .collect(),
            )
        };
        println!(
            "paired, {ROUNDS} rounds of {TURNS} turns per arm (medians): bare rmcp {:.1} us, \
             engine {:.1} us, engine without the protocol log {:.1} us per turn; \
             the engine adds {:.1}% ({:.1}% without the log)",
            micros(0),
            micros(1),
            micros(2),
            overhead(1),
            overhead(2),
        );
        logged.close().await;
        quiet.close().await;
        bare.cancel().await.ok();
    });
}

criterion_group!(benches, paired_overhead, engine_overhead, send_process);
criterion_main!(benches);
