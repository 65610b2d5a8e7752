//! *Certify this server* in the explorer against real servers: the run from the palette on
//! the reference Domain Access server over stdio (every rule passes or skips), stopped with
//! Esc, against a server that crashes on every call (the rules fail with the reason and the
//! pane finishes), and against the third-party peer with a defect, whose failed rule's
//! evidence Enter opens as a recorded dialogue. Nothing here is mocked.

use crate::common;

use bkn_explorer::certify::Verdict;
use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::spec::{ServerSpec, StdioSpec, TransportSpec};
use bkn_explorer::protocol::Interface;
use bkn_explorer::tui::action::Action;
use bkn_explorer::tui::app::App;
use bkn_explorer::tui::certify::Phase;
use bkn_explorer::tui::dialogue::Status;
use common::tui::{Harness, options};
use ratatui::crossterm::event::KeyCode;
use std::time::Duration;

/// Runs a test on a runtime like the explorer's: worker threads with its deep stack
/// (`robustness.deep` sends a Request nested 999 levels, and reads the answer).
fn as_the_explorer_runs(test: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(bkn_explorer::protocol::json::DEEP_STACK)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

/// A whole run in a debug build on a loaded machine: generous.
const RUN: Duration = Duration::from_secs(300);

async fn on(spec: ServerSpec) -> Harness {
    on_with(spec, common::tui::connect()).await
}

async fn on_with(spec: ServerSpec, connect: ConnectOptions) -> Harness {
    let mut h = Harness::with(options(vec![spec], "dark"), connect, None);
    h.until(Duration::from_secs(30), "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    h
}

fn finished(app: &App) -> bool {
    app.certify().is_some_and(|c| !c.running())
}

fn peer(defect: &str) -> ServerSpec {
    ServerSpec::new(
        "peer-dac",
        TransportSpec::Stdio(StdioSpec {
            command: common::python3().expect("python3").into(),
            args: vec![
                common::tui::root()
                    .join("tests/peers/certify_peer.py")
                    .display()
                    .to_string(),
                defect.into(),
            ],
            ..StdioSpec::default()
        }),
    )
}

#[test]
fn the_palette_certifies_the_reference_server_and_shows_every_rule() {
    as_the_explorer_runs(the_palette_certifies_the_reference_server_and_shows_every_rule_());
}

async fn the_palette_certifies_the_reference_server_and_shows_every_rule_() {
    let mut h = on(ServerSpec::embedded(Interface::Dac)).await;
    h.act(Action::Palette);
    h.type_text("Certify this server");
    h.key(KeyCode::Enter);
    assert!(h.app().certify_shown(), "the pane shows at once");
    h.until(RUN, "the progress bar to count rules", |app| {
        app.certify()
            .as_ref()
            .is_some_and(|c| c.total.is_some() && !c.results.is_empty())
    })
    .await;
    let screen = h.screen();
    let total = h.app().certify().and_then(|c| c.total).unwrap();
    assert!(
        screen.contains("░") && screen.contains(&format!("/{total} ")),
        "{screen}"
    );
    h.until(RUN, "the report", finished).await;
    let c = h.app().certify().cloned().unwrap();
    assert_eq!(c.phase, Phase::Done);
    assert_eq!(Some(c.results.len()), c.total);
    assert_eq!(c.count(Verdict::Fail), 0, "{}", h.screen());
    assert!(c.count(Verdict::Pass) > 40);
    let screen = h.screen();
    assert!(screen.contains("✓ pass tools.found-by-header"), "{screen}");
    assert!(screen.contains("✗ 0 failed"), "{screen}");
}

#[test]
fn esc_stops_a_run_after_the_rule_under_way() {
    as_the_explorer_runs(esc_stops_a_run_after_the_rule_under_way_());
}

async fn esc_stops_a_run_after_the_rule_under_way_() {
    let mut h = on(ServerSpec::embedded(Interface::Dac)).await;
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('V'));
    h.until(RUN, "a first rule", |app| {
        app.certify().is_some_and(|c| !c.results.is_empty())
    })
    .await;
    h.key(KeyCode::Esc);
    assert_eq!(h.app().certify().unwrap().phase, Phase::Cancelling);
    h.until(RUN, "the run to stop", finished).await;
    let c = h.app().certify().cloned().unwrap();
    assert_eq!(c.phase, Phase::Cancelled);
    assert!(c.results.len() < c.total.unwrap(), "stopped early");
    assert!(h.screen().contains("stopped"), "{}", h.screen());
}

#[test]
fn a_server_that_crashes_mid_run_fails_its_rules_with_the_reason_and_the_pane_ends() {
    as_the_explorer_runs(
        a_server_that_crashes_mid_run_fails_its_rules_with_the_reason_and_the_pane_ends_(),
    );
}

async fn a_server_that_crashes_mid_run_fails_its_rules_with_the_reason_and_the_pane_ends_() {
    // A short timeout: what the crashing server leaves unanswered (raw lines) is waited for
    // no longer than it, and a crash is told from a timeout by its reason.
    let connect = ConnectOptions {
        timeout: Duration::from_secs(3),
        ..common::tui::connect()
    };
    let mut h = on_with(common::fault_spec("crash-on-call", &[]), connect).await;
    h.act(Action::Certify);
    h.until(RUN, "the report", finished).await;
    let c = h.app().certify().cloned().unwrap();
    assert_eq!(c.phase, Phase::Done, "{}", h.screen());
    let gaps = c
        .results
        .iter()
        .find(|r| r.rule.name == "turns.gaps")
        .unwrap();
    assert_eq!(gaps.verdict, Verdict::Fail);
    assert!(gaps.summary.contains("crashed"), "{}", gaps.summary);
    // What needs no call still passes: each rule starts on a fresh connection.
    let schema = c
        .results
        .iter()
        .find(|r| r.rule.name == "tools.output-schema")
        .unwrap();
    assert_eq!(schema.verdict, Verdict::Pass);
}

#[test]
fn enter_on_a_failed_rule_opens_its_evidence_as_a_dialogue_to_replay() {
    as_the_explorer_runs(enter_on_a_failed_rule_opens_its_evidence_as_a_dialogue_to_replay_());
}

async fn enter_on_a_failed_rule_opens_its_evidence_as_a_dialogue_to_replay_() {
    let mut h = on(peer("--forget-release")).await;
    h.act(Action::Certify);
    h.until(RUN, "the report", finished).await;
    // Only the failed rules, then Enter on the first.
    h.key(KeyCode::Char('f'));
    let c = h.app().certify().cloned().unwrap();
    let failed = c.selected_result().expect("a failed rule");
    assert_eq!(failed.rule.name, "commitments.release");
    assert_eq!(c.rows().len(), 1);
    let before = h.app().workspace().dialogues().len();
    h.key(KeyCode::Enter);
    assert!(!h.app().certify_shown());
    assert!(h.app().workspace().dialogues().len() > before);
    let d = h.app().current_dialogue().unwrap();
    assert!(d.name.starts_with("commitments.release: "), "{}", d.name);
    assert_eq!(d.status, Status::Recorded);
    assert!(!d.transcript.is_empty());
    assert!(
        d.transcript
            .turns()
            .iter()
            .any(|t| !t.turn.findings.is_empty()),
        "the turn that shows the defect keeps its findings"
    );
    // It replays against the server, as an opened session's dialogue does.
    h.key(KeyCode::Char('r'));
    h.until(RUN, "the replay to end", |app| {
        app.current_dialogue()
            .and_then(|d| d.runs.replay())
            .is_some_and(|r| !r.running)
    })
    .await;
}
