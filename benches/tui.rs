//! The explorer's speed (issue 6):
//! - one frame at 200x60 with a 10,000-turn dialogue and a 1 MB Response selected, in each
//!   detail tab (target: under 2 ms), and the same with 100 turns (the cost must not grow
//!   with the number of turns);
//! - from start to the first frame with both embedded servers connected (target: under
//!   300 ms): the explorer made, both reference servers started over stdio, initialized,
//!   discovered and their vocabularies read, then a frame drawn.

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::client::turn::{Reply, Turn, TurnKind};
use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::dac::Kind;
use bkn_explorer::protocol::raw::RawJson;
use bkn_explorer::session::Session;
use bkn_explorer::tui::app::{App, DetailTab, Options, Paths};
use bkn_explorer::tui::dialogue::{DialogueState, Status};
use bkn_explorer::tui::run::Runner;
use bkn_explorer::tui::theme::Theme;
use bkn_explorer::tui::view;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

fn options(servers: Vec<ServerSpec>) -> Options {
    Options {
        servers,
        session: None,
        theme: Theme::dark(),
        theme_warning: None,
        themes: Theme::names(None),
        keymap: Default::default(),
        paths: Paths {
            data_dir: None,
            autosave: None,
            drafts: None,
            sessions_dir: PathBuf::from("sessions"),
            sessions_dir_exists: true,
            scenarios_dir_exists: true,
            cwd: PathBuf::from("."),
        },
        recover: Vec::new(),
        overrides: Default::default(),
        in_tmux: false,
        found: Vec::new(),
        watch: None,
        token: None,
    }
}

fn connect() -> ConnectOptions {
    ConnectOptions {
        embedded_program: Some(PathBuf::from(env!("CARGO_BIN_EXE_bkn-explorer"))),
        ..ConnectOptions::default()
    }
}

/// The shipped tour's turns, over and over, to `count` turns, then one whose Response is
/// about 1 MB (a long Answer text and many relations).
fn dialogue(count: usize) -> Vec<Turn> {
    let tour =
        Session::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json"))
            .expect("the tour loads");
    let turns = &tour.dialogues[0].turns;
    let mut out: Vec<Turn> = (0..count - 1)
        .map(|i| turns[i % turns.len()].clone())
        .collect();
    let mut big = turns[0].clone();
    let mut response: Value = big.response().expect("a Response");
    let relations: Vec<Value> = (0..6000)
        .map(|i| json!({"Subject": format!("Entity#{i}"), "Predicate": "locatedAt", "Object": format!("MLoc:Square.Spot{i}")}))
        .collect();
    response["Answer"] = json!({
        "Text": "The square is busy tonight. ".repeat(20_000),
        "Relations": relations,
    });
    big.reply = Reply::Response(RawJson::from_value(&response));
    out.push(big);
    out
}

fn app_with(turns: usize) -> App {
    let (mut app, _) = App::new(options(Vec::new()), Instant::now());
    let spec = ServerSpec::embedded(Interface::Dac);
    let server = app.add_server(spec, Interface::Dac);
    if let Some(s) = app.workspace_mut().server_mut(server) {
        s.status = bkn_explorer::tui::app::ServerStatus::Recorded;
    }
    let mut d = DialogueState::new(1, "bench".into(), server, Interface::Dac);
    d.status = Status::Recorded;
    for turn in dialogue(turns) {
        d.push(turn);
    }
    let last = d.transcript.len() - 1;
    d.transcript.select(Some(last));
    let id = Some(app.workspace_mut().add_dialogue(d));
    app.workspace_mut().set_current(id);
    app
}

fn frames(c: &mut Criterion) {
    let big = app_with(10_000);
    let size = big
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()
        .last()
        .unwrap()
        .turn
        .reply
        .clone();
    if let Reply::Response(r) = size {
        println!("the selected Response is {} bytes", r.len());
    }
    let mut group = c.benchmark_group("frame 200x60");
    for turns in [100usize, 10_000] {
        let mut app = app_with(turns);
        for tab in [DetailTab::Answer, DetailTab::Raw, DetailTab::Findings] {
            app.workspace_mut()
                .dialogues_mut()
                .next()
                .unwrap()
                .transcript
                .detail_tab = tab;
            let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
            group.bench_with_input(
                BenchmarkId::new(format!("{} tab", tab.title()), format!("{turns} turns")),
                &turns,
                |b, _| {
                    b.iter(|| {
                        // Each frame from scratch, as after a resize: the whole screen is new.
                        terminal.clear().unwrap();
                        terminal
                            .draw(|f| {
                                view::render(f, &app);
                            })
                            .unwrap();
                    })
                },
            );
        }
        // The Answer scrolled to its last relations (the lines above are counted, not made).
        app.workspace_mut()
            .dialogues_mut()
            .next()
            .unwrap()
            .transcript
            .detail_tab = DetailTab::Answer;
        app.workspace_mut()
            .dialogues_mut()
            .next()
            .unwrap()
            .transcript
            .detail_scroll = 5_990;
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        group.bench_with_input(
            BenchmarkId::new("Answer tab at relation 5990", format!("{turns} turns")),
            &turns,
            |b, _| {
                b.iter(|| {
                    terminal.clear().unwrap();
                    terminal
                        .draw(|f| {
                            view::render(f, &app);
                        })
                        .unwrap();
                })
            },
        );
        app.workspace_mut()
            .dialogues_mut()
            .next()
            .unwrap()
            .transcript
            .detail_scroll = 0;
        // The feasibility tab on a feasibility turn, scrolled to the middle of the dialogue.
        let middle = app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .turns()
            .iter()
            .enumerate()
            .rev()
            .find(|(_, t)| t.summary.kind == TurnKind::Dac(Kind::Feasibility))
            .map(|(i, _)| i)
            .unwrap();
        app.workspace_mut()
            .dialogues_mut()
            .next()
            .unwrap()
            .transcript
            .select(Some(middle));
        app.workspace_mut()
            .dialogues_mut()
            .next()
            .unwrap()
            .transcript
            .detail_tab = DetailTab::Feasibility;
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        group.bench_with_input(
            BenchmarkId::new("Feasibility tab", format!("{turns} turns")),
            &turns,
            |b, _| {
                b.iter(|| {
                    terminal.clear().unwrap();
                    terminal
                        .draw(|f| {
                            view::render(f, &app);
                        })
                        .unwrap();
                })
            },
        );
    }
    group.finish();
}

fn startup(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("startup");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("to the first frame with both servers connected", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += rt.block_on(async {
                    let start = Instant::now();
                    let (tx, mut rx) = mpsc::unbounded_channel();
                    let mut runner = Runner::new(
                        options(vec![
                            ServerSpec::embedded(Interface::Dac),
                            ServerSpec::embedded(Interface::Usr),
                        ]),
                        connect(),
                        None,
                        None,
                        tx,
                    );
                    while !runner
                        .app
                        .workspace()
                        .dialogues()
                        .values()
                        .all(|d| d.status == Status::Open)
                    {
                        let event = rx.recv().await.expect("events");
                        runner.handle(event);
                    }
                    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
                    terminal.draw(|f| runner.draw(f)).unwrap();
                    let elapsed = start.elapsed();
                    // Not timed: the servers are ended (as a quit ends them).
                    runner.act(bkn_explorer::tui::action::Action::Quit);
                    while let Ok(Some(_)) =
                        tokio::time::timeout(Duration::from_millis(300), rx.recv()).await
                    {
                    }
                    elapsed
                });
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, frames, startup);
criterion_main!(benches);
