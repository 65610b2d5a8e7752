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
use bkn_explorer::tui::action::Pane;
use bkn_explorer::tui::app::{App, DetailTab, Options, Paths};
use bkn_explorer::tui::dialogue::Status;
use bkn_explorer::tui::event::{Event, OpenPurpose};
use bkn_explorer::tui::run::Runner;
use bkn_explorer::tui::testing::{Drive, Fixture};
use bkn_explorer::tui::theme::Theme;
use bkn_explorer::tui::view;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The test options (`tui::testing::options`), with every theme there is, no data
/// directory (nothing autosaved) and the repository's folders.
fn options(servers: Vec<ServerSpec>) -> Options {
    let mut options = bkn_explorer::tui::testing::options(servers);
    options.themes = Theme::names(None);
    options.paths = Paths {
        data_dir: None,
        autosave: None,
        drafts: None,
        sessions_dir: PathBuf::from("sessions"),
        sessions_dir_exists: true,
        scenarios_dir_exists: true,
        cwd: PathBuf::from("."),
    };
    options
}

fn connect() -> ConnectOptions {
    ConnectOptions {
        embedded_program: Some(PathBuf::from(env!("CARGO_BIN_EXE_bkn-explorer"))),
        ..ConnectOptions::default()
    }
}

/// The shipped tour.
fn tour() -> Session {
    Session::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json"))
        .expect("the tour loads")
}

/// The shipped tour's turns, over and over, to `count` turns, then one whose Response is
/// about 1 MB (a long Answer text and many relations).
fn dialogue(count: usize) -> Vec<Turn> {
    let tour = tour();
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

/// The explorer with a session of one dialogue of `turns` turns opened in it (as Ctrl-O
/// opens one), its last turn selected (End), a frame drawn after each event as the runner
/// draws.
fn app_with(turns: usize) -> Fixture {
    let (t, _) = Fixture::start(options(Vec::new()));
    let mut t = t.framed();
    let mut session = tour();
    session.dialogues.truncate(1);
    session.dialogues[0].turns = dialogue(turns);
    t.event(Event::SessionRead {
        path: PathBuf::from("bench.json"),
        purpose: OpenPurpose::Open,
        result: Ok(session),
        stamp: None,
    });
    t.focus(Pane::Transcript);
    t.key(KeyCode::End);
    t
}

/// The detail's first line shown.
fn detail_scroll(t: &Fixture) -> usize {
    t.app().current_dialogue().unwrap().transcript.detail_scroll
}

/// Draws frames of the explorer as it stands, each from scratch (as after a resize: the
/// whole screen is new).
fn bench_frames(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    turns: usize,
    app: &App,
) {
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    group.bench_with_input(
        BenchmarkId::new(name, format!("{turns} turns")),
        &turns,
        |b, _| {
            b.iter(|| {
                terminal.clear().unwrap();
                terminal
                    .draw(|f| {
                        view::render(f, app);
                    })
                    .unwrap();
            })
        },
    );
}

fn frames(c: &mut Criterion) {
    let big = app_with(10_000);
    let size = big
        .app()
        .current_dialogue()
        .and_then(|d| d.transcript.turns().last())
        .map(|t| t.turn.reply.clone());
    if let Some(Reply::Response(r)) = size {
        println!("the selected Response is {} bytes", r.len());
    }
    let mut group = c.benchmark_group("frame 200x60");
    for turns in [100usize, 10_000] {
        let mut t = app_with(turns);
        for tab in [DetailTab::Answer, DetailTab::Raw, DetailTab::Findings] {
            t.detail_tab(tab);
            bench_frames(&mut group, &format!("{} tab", tab.title()), turns, t.app());
        }
        // The Answer scrolled to its last relations (the lines above are counted, not made).
        t.detail_tab(DetailTab::Answer);
        while detail_scroll(&t) < 5_990 {
            let key = if 5_990 - detail_scroll(&t) > 100 {
                KeyCode::PageDown
            } else {
                KeyCode::Down
            };
            t.key(key);
        }
        bench_frames(&mut group, "Answer tab at relation 5990", turns, t.app());
        // The feasibility tab on a feasibility turn, scrolled to the middle of the dialogue.
        let middle = t
            .app()
            .current_dialogue()
            .unwrap()
            .transcript
            .turns()
            .iter()
            .enumerate()
            .rev()
            .find(|(_, t)| t.summary.kind == TurnKind::Dac(Kind::Feasibility))
            .map(|(i, _)| i)
            .unwrap();
        t.focus(Pane::Transcript);
        for _ in middle..turns - 1 {
            t.key(KeyCode::Up);
        }
        t.detail_tab(DetailTab::Feasibility);
        bench_frames(&mut group, "Feasibility tab", turns, t.app());
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
