//! The explorer driven by keys against real servers: the reference servers as child
//! processes over stdio (as `bkn-explorer` with no arguments starts them) and over HTTP, and
//! the fault server for what goes wrong. Each test types what a user types and asserts the
//! state the explorer arrives at; nothing here is mocked.

use crate::common;
use strum::VariantArray;

use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::client::turn::TurnKind;
use bkn_explorer::client::turn::{ErrorKind, Reply};
use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::dac::Kind;
use bkn_explorer::tui::action::Pane;
use bkn_explorer::tui::app::{App, DetailTab};
use bkn_explorer::tui::composer::Mode;
use bkn_explorer::tui::dialogue::Status;
use bkn_explorer::tui::ids::DialogueId;
use bkn_explorer::tui::overlay::Overlay;
use bkn_explorer::tui::testing::Drive;
use common::tui::{Harness, options, render, text};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use serde_json::Value;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

/// The explorer on both reference servers, as `bkn-explorer` with no arguments starts it,
/// once both dialogues are open.
async fn on_reference_servers() -> Harness {
    let mut h = Harness::new(options(
        vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ],
        "dark",
    ));
    h.until(WAIT, "both dialogues to open", |app| {
        app.workspace().dialogues().len() == 2
            && app
                .workspace()
                .dialogues()
                .values()
                .all(|d| d.status == Status::Open)
    })
    .await;
    h
}

/// The explorer on the fault server, once its dialogue is open.
async fn on_fault_server(fault: &str, extra: &[&str]) -> Harness {
    let mut h = Harness::new(options(vec![common::fault_spec(fault, extra)], "dark"));
    h.until(WAIT, "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    h
}

fn current(app: &App) -> DialogueId {
    app.workspace().current().expect("a dialogue is shown")
}

/// Where the dialogue shown is among the tabs.
fn shown(app: &App) -> usize {
    app.workspace()
        .current()
        .and_then(|c| app.workspace().dialogues().position(c))
        .expect("a dialogue is shown")
}

/// Moves the composer to the field with this label (Alt-arrows leave multi-line fields).
fn go_to_field(h: &mut Harness, label: &str) {
    let d = current(&h.runner.app);
    let c = &h.runner.app.workspace().dialogue(d).unwrap().composer;
    let offset = usize::from(c.interface == Interface::Dac);
    let target = offset
        + c.fields
            .iter()
            .position(|f| f.spec.label == label)
            .unwrap_or_else(|| {
                let labels: Vec<&str> = c.fields.iter().map(|f| f.spec.label.as_str()).collect();
                panic!("no field {label} for this Kind; there are {labels:?}")
            });
    for _ in 0..20 {
        let row = h.runner.app.workspace().dialogue(d).unwrap().composer.row;
        match row.cmp(&target) {
            std::cmp::Ordering::Less => h.key_with(KeyCode::Down, KeyModifiers::ALT),
            std::cmp::Ordering::Greater => h.key_with(KeyCode::Up, KeyModifiers::ALT),
            std::cmp::Ordering::Equal => return,
        }
    }
    panic!("could not reach the field {label}");
}

/// Picks a Kind on the composer's Kind row with ← →.
fn choose_kind(h: &mut Harness, kind: Kind) {
    let d = current(&h.runner.app);
    for _ in 0..10 {
        h.key_with(KeyCode::Up, KeyModifiers::ALT);
    }
    for _ in 0..Kind::VARIANTS.len() {
        if h.runner.app.workspace().dialogue(d).unwrap().composer.kind == kind {
            return;
        }
        h.key(KeyCode::Right);
    }
    panic!("the Kind row never showed {}", kind.as_str());
}

/// Empties the field the composer is on (F7).
fn clear_field(h: &mut Harness) {
    h.key(KeyCode::F(7));
}

fn fill(h: &mut Harness, label: &str, text: &str) {
    go_to_field(h, label);
    clear_field(h);
    h.type_text(text);
}

/// Sends with F5 and waits for the turn to land; returns its index in the transcript.
async fn send(h: &mut Harness) -> usize {
    let d = current(&h.runner.app);
    let before = h
        .runner
        .app
        .workspace()
        .dialogue(d)
        .unwrap()
        .transcript
        .len();
    h.key(KeyCode::F(5));
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .get(d)
            .unwrap()
            .link
            .pending()
            .is_some(),
        "F5 did not start a turn; the screen:\n{}",
        text(&render(&h.runner.app, 120, 40))
    );
    h.until(WAIT, "the turn to finish", move |app| {
        app.workspace().dialogue(d).unwrap().transcript.len() > before
    })
    .await;
    before
}

fn response(h: &Harness, turn: usize) -> Value {
    let d = current(&h.runner.app);
    h.runner
        .app
        .workspace()
        .dialogue(d)
        .unwrap()
        .transcript
        .turns()[turn]
        .turn
        .response()
        .unwrap_or_else(|| {
            panic!(
                "turn {turn} has no Response: {:?}",
                h.runner
                    .app
                    .workspace()
                    .dialogue(d)
                    .unwrap()
                    .transcript
                    .turns()[turn]
                    .turn
                    .reply
            )
        })
}

/// What each Kind needs to be answered by the reference Domain Access.
fn compose(h: &mut Harness, kind: Kind) {
    choose_kind(h, kind);
    match kind {
        Kind::SemanticGrounding => fill(h, "Terms", "bench\nkiosk"),
        Kind::Affordances | Kind::Constraints | Kind::BehaviouralExpectations => {
            fill(h, "Entity IDs", "Kiosk#3");
            fill(h, "Space", "Space:Square");
        }
        Kind::Feasibility => {
            fill(h, "Space", "Space:Square");
            fill(
                h,
                "Steps",
                "MM-Add Nil Kiosk#3 At MLoc:Square.Stage\nPost Nil Item#12 To Process#Market",
            );
        }
        Kind::Clarification => {
            fill(h, "Question", "Which bench do you mean?");
            fill(h, "Terms", "bench");
        }
        Kind::Commitment => fill(
            h,
            "Commit",
            "c1: Kiosk#3 not locatedAt MLoc:Square.Fountain",
        ),
    }
}

#[tokio::test]
async fn every_kind_is_composed_sent_and_shown() {
    let mut h = on_reference_servers().await;
    assert_eq!(
        shown(&h.runner.app),
        0,
        "the explorer starts on Domain Access"
    );
    assert_eq!(h.runner.app.focus(), Pane::Composer);
    for (n, kind) in Kind::VARIANTS.iter().copied().enumerate() {
        compose(&mut h, kind);
        let turn = send(&mut h).await;
        let d = &h.runner.app.workspace().dialogues().nth(0).unwrap();
        let view = &d.transcript.turns()[turn];
        assert_eq!(view.summary.kind, TurnKind::Dac(kind));
        assert_eq!(
            view.summary.turn_index,
            Some(n as u64),
            "TurnIndex counts up"
        );
        assert!(
            view.turn.findings.is_empty(),
            "{}: the reference server's reply has findings: {:?}",
            kind.as_str(),
            view.turn.findings
        );
        let r = response(&h, turn);
        assert_eq!(r["Outcome"], "answered", "{}: {r:#}", kind.as_str());
        // The new turn is selected and its detail is the tab its Kind is about.
        assert_eq!(d.transcript.selected(), Some(turn));
        let expected_tab = match kind {
            Kind::Feasibility => DetailTab::Feasibility,
            Kind::Commitment => DetailTab::Commitments,
            _ => DetailTab::Answer,
        };
        assert_eq!(h.runner.app.shown_detail_tab(), expected_tab);
        // Commitments were a one-off action: the form empties them; the rest stays.
        if kind == Kind::Commitment {
            let c = &h
                .runner
                .app
                .workspace()
                .dialogues()
                .nth(0)
                .unwrap()
                .composer;
            let commit = c.fields.iter().find(|f| f.spec.label == "Commit").unwrap();
            assert_eq!(commit.editor.lines().join(""), "");
        }
        if kind == Kind::Feasibility {
            let c = &h
                .runner
                .app
                .workspace()
                .dialogues()
                .nth(0)
                .unwrap()
                .composer;
            let steps = c.fields.iter().find(|f| f.spec.label == "Steps").unwrap();
            assert_eq!(
                steps.editor.lines().len(),
                2,
                "the steps stay to iterate on"
            );
        }
    }
    // The feasibility turn's statuses are on screen, as the Feasibility tab draws them.
    let feasibility = Kind::VARIANTS
        .iter()
        .position(|k| *k == Kind::Feasibility)
        .unwrap();
    h.show_nth(0);
    h.select_turn(feasibility);
    h.detail_tab(DetailTab::Feasibility);
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(screen.contains("Ack"), "{screen}");
    assert!(screen.contains("InsRights"), "{screen}");
    // The commitment of the last turn is retained, and the Commitments tab says so.
    h.select_turn(Kind::VARIANTS.len() - 1);
    h.detail_tab(DetailTab::Commitments);
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(
        screen.contains("c1") && screen.contains("retained"),
        "{screen}"
    );
}

#[tokio::test]
async fn feedback_goes_to_user_state_refinement_and_the_refined_state_shows() {
    let mut h = on_reference_servers().await;
    // Leave the composer, switch to dialogue 2 with its number key, come back with c.
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('2'));
    assert_eq!(shown(&h.runner.app), 1);
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(1)
            .unwrap()
            .interface,
        Interface::Usr
    );
    h.key(KeyCode::Char('c'));
    fill(&mut h, "User", "User#Ana");
    fill(&mut h, "Hypothesis", "Emotion is curious");
    fill(&mut h, "Conflicts", "Ana frowned at the kiosk");
    let turn = send(&mut h).await;
    let r = response(&h, turn);
    assert_eq!(r["Header"], "PGM-KUS-V1.0");
    assert_eq!(r["RefinedUserState"]["UserID"], "User#Ana", "{r:#}");
    assert!(r["Engagement"]["Level"].is_number(), "{r:#}");
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(1)
            .unwrap()
            .transcript
            .turns()[turn]
            .turn
            .findings
            .is_empty()
    );
    assert_eq!(h.runner.app.shown_detail_tab(), DetailTab::UserState);
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(screen.contains("User#Ana"), "{screen}");
    assert!(screen.contains("Engagement"), "{screen}");
}

#[tokio::test]
async fn a_slow_turn_is_pending_without_blocking_and_esc_cancels_it() {
    let mut h = on_fault_server("slow", &["--delay", "60"]).await;
    fill(&mut h, "Question", "anything");
    h.key(KeyCode::F(5));
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_some()
    );
    // Esc leaves the composer (NAV, always); Esc again cancels the pending turn.
    h.key(KeyCode::Esc);
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_some()
    );
    h.key(KeyCode::Esc);
    h.until(WAIT, "the cancelled turn", |app| {
        app.workspace().dialogues().nth(0).unwrap().transcript.len() == 1
    })
    .await;
    let view = &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()[0];
    match &view.turn.reply {
        Reply::Error(e) => assert_eq!(e.kind, ErrorKind::Cancelled, "{}", e.message),
        other => panic!("expected a cancelled turn, got {other:?}"),
    }
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_none()
    );
    assert_eq!(
        h.runner.app.workspace().dialogues().nth(0).unwrap().status,
        Status::Open,
        "the dialogue goes on"
    );
    // The server was told: it logs the cancellation it received.
    h.until(WAIT, "the server's note of the cancellation", |app| {
        (0..app.log().visible_len()).any(|i| {
            app.log()
                .visible(i)
                .is_some_and(|e| e.text.contains("cancelled"))
        })
    })
    .await;
}

#[tokio::test]
async fn a_turn_answered_with_a_task_shows_its_status_and_esc_sends_tasks_cancel() {
    let mut h = on_fault_server("task", &["--polls", "1000000", "--poll-ms", "50"]).await;
    fill(&mut h, "Question", "anything");
    h.key(KeyCode::F(5));
    h.until(WAIT, "the task's status on the pending turn", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .and_then(|p| p.task.as_ref())
            .is_some_and(|t| t.task_id == "task-1" && t.status == "working")
    })
    .await;
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(screen.contains("task task-1 working"), "{screen}");
    h.keys(&[KeyCode::Esc, KeyCode::Esc]);
    h.until(WAIT, "the cancelled turn", |app| {
        app.workspace().dialogues().nth(0).unwrap().transcript.len() == 1
    })
    .await;
    match &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()[0]
        .turn
        .reply
    {
        Reply::Error(e) => {
            assert_eq!(e.kind, ErrorKind::Cancelled, "{}", e.message);
            assert!(
                e.message.contains("tasks/cancel sent (acknowledged)"),
                "{}",
                e.message
            );
        }
        other => panic!("expected a cancelled turn, got {other:?}"),
    }
    assert_eq!(
        h.runner.app.workspace().dialogues().nth(0).unwrap().status,
        Status::Open
    );
    // The log has the task's states and the cancel.
    for what in ["task task-1 working", "tasks/cancel sent"] {
        h.until(WAIT, what, |app| {
            (0..app.log().visible_len())
                .any(|i| app.log().visible(i).is_some_and(|e| e.text.contains(what)))
        })
        .await;
    }
}

#[tokio::test]
async fn keys_still_work_while_a_turn_is_pending() {
    let mut h = on_fault_server("slow", &["--delay", "60"]).await;
    h.key(KeyCode::F(5));
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_some()
    );
    h.key(KeyCode::F(6)); // leave the composer (Tab goes to its next field)
    h.key(KeyCode::Char('L'));
    assert!(h.runner.app.screen().log_shown());
    h.key(KeyCode::Char('T'));
    assert_eq!(h.runner.app.theme().name, "light");
    h.key(KeyCode::Char('?'));
    assert!(matches!(h.runner.app.overlay(), Some(Overlay::Help { .. })));
    h.key(KeyCode::Esc);
    assert!(h.runner.app.overlay().is_none());
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_some(),
        "Esc closed the help only"
    );
    h.key(KeyCode::Esc);
    h.until(WAIT, "the cancelled turn", |app| {
        app.workspace().dialogues().nth(0).unwrap().transcript.len() == 1
    })
    .await;
}

#[tokio::test]
async fn dialogues_open_switch_and_close() {
    let mut h = on_reference_servers().await;
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char(']'));
    assert_eq!(shown(&h.runner.app), 1);
    h.key(KeyCode::Char(']'));
    assert_eq!(shown(&h.runner.app), 0, "] wraps around");
    h.key(KeyCode::Char('['));
    assert_eq!(shown(&h.runner.app), 1);
    h.key(KeyCode::Char('1'));
    assert_eq!(shown(&h.runner.app), 0);
    // n opens a new dialogue (a new MCP session) on the server of the dialogue in view,
    // wherever the sidebar points.
    h.focus(Pane::Sidebar);
    h.key(KeyCode::Down);
    h.key(KeyCode::Down);
    assert_eq!(h.runner.app.sidebar().selected(), 2);
    h.key(KeyCode::Char('n'));
    assert_eq!(h.runner.app.workspace().dialogues().len(), 3);
    assert_eq!(shown(&h.runner.app), 2);
    h.until(WAIT, "the new dialogue to open", |app| {
        app.workspace().dialogues().nth(2).unwrap().status == Status::Open
    })
    .await;
    let ids: Vec<_> = h
        .runner
        .app
        .workspace()
        .dialogues()
        .values()
        .map(|d| d.link.dialog_id().map(str::to_owned))
        .collect();
    assert_ne!(ids[0], ids[2], "a new dialogue has its own DialogID");
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(2)
            .unwrap()
            .interface,
        Interface::Dac
    );
    // It opened with the composer focused; out of it, x closes it (it has no turns: no
    // question asked).
    assert_eq!(h.runner.app.focus(), Pane::Composer);
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('x'));
    h.until(WAIT, "the dialogue to close", |app| {
        app.workspace().dialogues().len() == 2
    })
    .await;
    assert!(shown(&h.runner.app) < 2);
}

#[tokio::test]
async fn a_server_that_dies_costs_one_turn_and_r_continues_in_a_new_session() {
    let mut h = on_fault_server("crash-on-call", &[]).await;
    let first_id = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .link
        .dialog_id()
        .map(str::to_owned);
    let turn = send(&mut h).await;
    match &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()[turn]
        .turn
        .reply
    {
        Reply::Error(e) => {
            assert_eq!(e.kind, ErrorKind::Gone);
            assert!(e.message.contains("exited"), "{}", e.message);
        }
        other => panic!("expected the server to be gone, got {other:?}"),
    }
    h.until(WAIT, "the dialogue to be marked closed", |app| {
        matches!(
            app.workspace().dialogues().nth(0).unwrap().status,
            Status::Closed(_)
        )
    })
    .await;
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(screen.contains("server gone"), "{screen}");
    // R: the dialogue goes on in a new MCP session.
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('R'));
    h.until(WAIT, "the dialogue to reopen", |app| {
        app.workspace().dialogues().nth(0).unwrap().status == Status::Open
    })
    .await;
    // A new server process holds nothing: a new dialogue, under a new DialogID (MCP-BINDING
    // section 3). Over 2026-07-28 (what auto gets here) a new dialogue starts at TurnIndex 0;
    // the transcript carries on.
    assert_ne!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .dialog_id()
            .map(str::to_owned),
        first_id
    );
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .next_turn(),
        0
    );
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .len(),
        1
    );
}

#[tokio::test]
async fn a_reply_that_breaks_the_binding_shows_its_findings() {
    let mut h = on_fault_server("wrong-request-id", &[]).await;
    fill(&mut h, "Terms", "bench");
    let turn = send(&mut h).await;
    let findings = &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()[turn]
        .turn
        .findings;
    assert!(
        findings
            .iter()
            .any(|f| f.finding.check.to_string() == "exchange.request-id"),
        "{findings:?}"
    );
    h.key(KeyCode::Esc);
    h.detail_tab(DetailTab::Findings);
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(screen.contains("/RequestID"), "{screen}");
    assert!(screen.contains("findings"), "{screen}");
}

#[tokio::test]
async fn the_reference_server_over_http() {
    let server = common::spawn_http(&["dac".to_owned()]).await;
    let spec = ServerSpec::from_url(&server.url).expect("a URL");
    let mut h = Harness::new(options(vec![spec], "dark"));
    h.until(WAIT, "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    compose(&mut h, Kind::Feasibility);
    let turn = send(&mut h).await;
    let r = response(&h, turn);
    assert_eq!(r["Feasibility"]["Overall"], "partially_feasible", "{r:#}");
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .dialog_id(),
        r["DialogID"].as_str(),
        "over HTTP the DialogID is the MCP session's"
    );
}

#[tokio::test]
async fn the_raw_editor_sends_what_it_shows_and_stays_in_sync_with_the_form() {
    let mut h = on_reference_servers().await;
    compose(&mut h, Kind::SemanticGrounding);
    h.key(KeyCode::F(2));
    let d = &h.runner.app.workspace().dialogues().nth(0).unwrap();
    assert_eq!(d.composer.mode, Mode::Raw);
    let raw: Value = serde_json::from_str(&d.composer.raw.lines().join("\n")).expect("JSON");
    assert_eq!(raw["Terms"][0]["Text"], "bench");
    assert_eq!(raw["Header"], "PGM-KDA-V1.0", "common fields are filled");
    // Bad JSON is shown in place and not sent.
    h.key(KeyCode::Char('x'));
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .composer
            .checked
            .syntax
            .is_some()
    );
    h.key(KeyCode::F(5));
    assert!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .pending()
            .is_none(),
        "bad JSON is not sent"
    );
    h.key(KeyCode::Backspace);
    let turn = send(&mut h).await;
    assert_eq!(response(&h, turn)["Outcome"], "answered");
    // Back to the form: the Terms are still there.
    h.key(KeyCode::F(2));
    let d = &h.runner.app.workspace().dialogues().nth(0).unwrap();
    assert_eq!(d.composer.mode, Mode::Form);
    let terms = d
        .composer
        .fields
        .iter()
        .find(|f| f.spec.label == "Terms")
        .expect("a Terms field");
    assert_eq!(terms.editor.lines()[0], "bench");
}

#[tokio::test]
async fn mouse_clicks_focus_and_select_and_y_copies_the_response() {
    let mut h = on_reference_servers().await;
    compose(&mut h, Kind::SemanticGrounding);
    send(&mut h).await;
    send(&mut h).await;
    let rows = h.runner.hits.transcript_rows;
    h.click(rows.x + 3, rows.y);
    assert_eq!(h.runner.app.focus(), Pane::Transcript);
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .selected(),
        Some(0)
    );
    h.key(KeyCode::Char('y'));
    let copied: Value =
        serde_json::from_str(h.runner.clipboard.as_deref().expect("y copies")).expect("JSON");
    assert_eq!(copied["TurnIndex"], 0);
    assert_eq!(copied["Mode"], "RS");
}

#[tokio::test]
async fn a_session_is_saved_and_opened_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("explored.json");
    let mut h = on_reference_servers().await;
    compose(&mut h, Kind::Feasibility);
    send(&mut h).await;
    h.key_with(KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert!(matches!(h.runner.app.overlay(), Some(Overlay::Prompt(_))));
    h.retype_prompt(&path.display().to_string());
    h.key(KeyCode::Enter);
    h.until(WAIT, "the save", |app| {
        app.session().path().is_some() && !app.session().saving()
    })
    .await;
    assert_eq!(h.runner.app.session().unsaved(), 0);
    let saved = bkn_explorer::session::Session::load(&path).expect("the saved session loads");
    assert_eq!(
        saved.dialogues.len(),
        1,
        "only dialogues with turns are saved"
    );
    assert_eq!(saved.dialogues[0].turns.len(), 1);

    // Opened again with Ctrl-O and its path, it shows as recorded, the same turns.
    h.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    h.type_text(&path.display().to_string());
    h.key(KeyCode::Enter);
    h.until(WAIT, "the session to open", |app| {
        app.workspace().dialogues().len() == 1
            && app.workspace().dialogues().nth(0).unwrap().status == Status::Recorded
    })
    .await;
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .len(),
        1
    );
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .turns()[0]
            .summary
            .kind,
        TurnKind::Dac(Kind::Feasibility)
    );
    assert_eq!(h.runner.app.session().path(), Some(path.as_path()));
}

#[tokio::test]
async fn after_end_the_detail_scrolls_back_from_the_last_page() {
    let mut h = Harness::new(options(Vec::new(), "dark"));
    let session = bkn_explorer::session::Session::load(
        &common::tui::root().join("tests/fixtures/tui/states.json"),
    )
    .unwrap();
    h.show_session(session);
    h.show_nth(0);
    h.select_turn(0);
    h.detail_tab(DetailTab::Raw);
    h.key(KeyCode::End);
    let at_end = h.screen();
    let (_, shown) = h.runner.hits.detail_top.expect("the detail was drawn");
    assert!(
        shown > 0 && shown < 1000,
        "the last page starts at line {shown}"
    );
    h.key(KeyCode::Up);
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .detail_scroll,
        shown - 1
    );
    let up = h.screen();
    assert_ne!(at_end, up, "one key up moves the view at once");
}

/// A recorded dialogue replayed from the explorer: `r` sends its Requests again in a fresh
/// dialogue and the Replay tab shows recorded and new side by side.
async fn replayed(domain: Option<&std::path::Path>) -> Harness {
    let mut h = Harness::new(options(Vec::new(), "dark"));
    let mut session =
        bkn_explorer::session::Session::load(&common::tui::root().join("sessions/dac-tour.json"))
            .unwrap();
    // The session's server, run on another domain file.
    if let Some(path) = domain
        && let bkn_explorer::client::spec::TransportSpec::Embedded { args, .. } =
            &mut session.servers[0].transport
    {
        *args = vec!["--domain".into(), path.display().to_string()];
    }
    h.show_session(session);
    h.focus(Pane::Transcript);
    h.key(KeyCode::Char('r'));
    // A command of the file's own (another domain) is started once the user says so.
    if domain.is_some() {
        assert!(
            matches!(h.runner.app.overlay(), Some(Overlay::Confirm(c)) if c.title.starts_with("Start")),
            "r asks before it starts the file's command"
        );
        h.key(KeyCode::Char('y'));
    }
    assert_eq!(h.runner.app.shown_detail_tab(), DetailTab::Replay);
    h.until(WAIT, "the replay to finish", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .runs
            .replay()
            .is_some_and(|r| !r.running)
    })
    .await;
    h
}

#[tokio::test]
async fn the_tour_replays_from_the_explorer_without_differences() {
    let h = replayed(None).await;
    let r = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .runs
        .replay()
        .unwrap();
    assert_eq!((r.done, r.differing, r.error.as_ref()), (10, 0, None));
    let screen = text(&render(&h.runner.app, 120, 40));
    assert!(
        screen.contains("replay: 10 turns, no differences"),
        "{screen}"
    );
}

#[tokio::test]
async fn a_replay_against_a_changed_domain_shows_the_differences_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("poorer.json");
    let mut domain: Value =
        serde_json::from_str(bkn_explorer::server::dac::domain::DEFAULT_DOMAIN).unwrap();
    domain["Requester"]["Wallet"]["Amount"] = 3.into();
    std::fs::write(&path, domain.to_string()).unwrap();
    let mut h = replayed(Some(&path)).await;
    let r = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .runs
        .replay()
        .unwrap();
    assert!(r.differing > 0, "a poorer wallet changes some answers");
    // The first turn that differs, in the Replay tab.
    let differing = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()
        .iter()
        .position(|t| t.replay.as_ref().is_some_and(|r| !r.differences.is_empty()))
        .unwrap();
    h.select_turn(differing);
    let screen = text(&render(&h.runner.app, 160, 50));
    assert!(
        screen.contains("recorded") && screen.contains("replayed"),
        "{screen}"
    );
    assert!(screen.contains("≠"), "{screen}");
}

/// Every MCP session the explorer opened over HTTP, the ones `R` opened included, is ended
/// (DELETE) when it quits: the server holds none afterwards.
#[tokio::test]
async fn sessions_opened_by_reconnects_are_ended_on_quit() {
    let server = common::spawn_http(&["dac".to_owned()]).await;
    // Over 2025-11-25, where a reconnect is a new MCP session (the server's own).
    let mut spec = ServerSpec::from_url(&server.url).expect("a URL");
    spec.protocol = Some(bkn_explorer::client::generation::ProtocolChoice::Session);
    let mut h = Harness::new(options(vec![spec], "dark"));
    h.until(WAIT, "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    h.key(KeyCode::Esc);
    for _ in 0..3 {
        h.key(KeyCode::Char('R'));
        h.until(WAIT, "the new session", |app| {
            app.workspace().dialogues().nth(0).unwrap().status == Status::Open
        })
        .await;
    }
    let health = format!("{}/health", server.url.trim_end_matches("/mcp"));
    let sessions = || async {
        let v: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
        v["sessions"].as_u64().unwrap()
    };
    // Each R ended the session before it.
    let deadline = std::time::Instant::now() + WAIT;
    while sessions().await != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "old sessions were not ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.key(KeyCode::Char('q'));
    assert_eq!(h.runner.quit, Some(true));
    h.until_closed(WAIT).await;
    assert_eq!(sessions().await, 0, "the last session was ended on quit");
}

/// A Domain Access of someone else's (Python, another M-Instance, written from the binding):
/// the explorer learns its M-Instance, completes from its resources, names it by what it says
/// in `initialize`, and the first Request composed in the form is answered.
#[tokio::test]
async fn a_third_party_server_in_another_m_instance_works_from_the_form() {
    let line = format!(
        "{} {}/tests/peers/raw_dac_server.py",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = ServerSpec::from_command_line(&line).expect("a command line");
    let mut h = Harness::new(options(vec![spec], "dark"));
    h.until(WAIT, "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    let app = &h.runner.app;
    assert_ne!(
        app.workspace().servers().nth(0).unwrap().name,
        "python3",
        "named by what it says it is"
    );
    let defaults = app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .defaults
        .as_ref()
        .unwrap();
    assert_eq!(defaults.values.m_instance, "MI:Elsewhere");
    assert!(
        app.workspace()
            .servers()
            .nth(0)
            .unwrap()
            .vocabulary
            .has_resources
    );
    compose(&mut h, Kind::Affordances);
    fill(&mut h, "Space", "Space:Lab");
    let turn = send(&mut h).await;
    let r = response(&h, turn);
    assert_eq!(r["MInstance"], "MI:Elsewhere");
    assert_ne!(r["Outcome"], "not_answered", "{r:#}");
    let screen = h.screen();
    assert!(screen.contains("MI:Elsewhere"), "{screen}");
}

/// A server that has no BKN tool (any other MCP server): its failed tab says what can still
/// be done with it (its tools, a tools/call, its resources), not to reconnect.
#[tokio::test]
async fn a_server_without_a_bkn_tool_is_shown_what_can_be_done_with_it() {
    let line = format!(
        "python3 {}/tests/peers/raw_dac_server.py --not-bkn",
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = ServerSpec::from_command_line(&line).expect("a command line");
    let mut h = Harness::new(options(vec![spec], "dark"));
    h.until(WAIT, "the dialogue to fail", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| matches!(d.status, Status::Failed(_)))
    })
    .await;
    let Status::Failed(error) = &h.runner.app.workspace().dialogues().nth(0).unwrap().status else {
        unreachable!()
    };
    assert!(error.contains("bkn-explorer tools --stdio"), "{error}");
    assert!(error.contains("bkn-explorer call lookup"), "{error}");
    assert!(error.contains("bkn-explorer read dac://domain"), "{error}");
    let screen = h.screen();
    assert!(screen.contains("bkn-explorer tools"), "{screen}");
    assert!(screen.contains("use another server"), "{screen}");
    assert!(!screen.contains("reconnects"), "{screen}");
}

/// A shipped scenario run from the explorer (the palette's Run a scenario): each step a turn
/// of a dialogue of its own, with its verdict.
#[tokio::test]
async fn a_scenario_runs_in_the_explorer_step_by_step() {
    let mut h = on_reference_servers().await;
    h.key(KeyCode::Esc);
    h.act(bkn_explorer::tui::action::Action::RunScenario);
    h.retype_prompt("scenarios/dac-kiosk.yaml");
    h.key(KeyCode::Enter);
    h.until(WAIT, "the scenario to finish", |app| {
        app.workspace()
            .dialogues()
            .values()
            .last()
            .and_then(|d| d.runs.scenario())
            .is_some_and(|s| !s.running)
    })
    .await;
    let d = h
        .runner
        .app
        .workspace()
        .dialogues()
        .values()
        .last()
        .unwrap();
    assert_eq!(d.transcript.len(), 5);
    assert!(
        d.transcript
            .turns()
            .iter()
            .all(|t| t.expect.as_ref().is_some_and(|e| e.failures.is_empty())),
        "every step passed"
    );
    assert_eq!(d.runs.scenario().unwrap().passed, 5);
    let screen = h.screen();
    assert!(screen.contains("test: a kiosk on the stage"), "{screen}");
    assert!(screen.contains("✓"), "{screen}");
    assert!(screen.contains("all 5 steps passed"), "{screen}");
}

/// `R` over MCP 2026-07-28 (the server keeps the dialogue by its DialogID): the new connection
/// goes on with the same dialogue, its commitment still holds (Clash), it is not marked a new
/// session, and the user is told so; the dialogue's own checks find nothing to say about the
/// commitment they learnt before the reconnect.
#[tokio::test]
async fn a_reconnect_over_2026_goes_on_with_the_dialogue_and_its_state() {
    let server = common::spawn_http(&["dac".to_owned()]).await;
    let spec = ServerSpec::from_url(&server.url).expect("a URL");
    let mut h = Harness::new(options(vec![spec], "dark"));
    h.until(WAIT, "the dialogue to open", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .is_some_and(|d| d.status == Status::Open)
    })
    .await;
    let dialog_id = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .link
        .dialog_id()
        .map(str::to_owned);
    choose_kind(&mut h, Kind::Commitment);
    fill(
        &mut h,
        "Commit",
        "c1: Kiosk#3 not locatedAt MLoc:Square.Stage",
    );
    let first = send(&mut h).await;
    assert_eq!(
        response(&h, first)["CommitmentStatus"][0]["Status"],
        "retained"
    );
    h.key(KeyCode::F(6));
    h.key(KeyCode::Char('R'));
    h.until(WAIT, "the reconnect", |app| {
        app.workspace().dialogues().nth(0).unwrap().status == Status::Open
    })
    .await;
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .link
            .dialog_id()
            .map(str::to_owned),
        dialog_id,
        "the same dialogue"
    );
    let said: Vec<&str> = h
        .runner
        .app
        .notices()
        .messages()
        .map(|m| m.text.as_str())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("reconnected under the same DialogID")),
        "{said:?}"
    );
    h.key(KeyCode::Char('c'));
    choose_kind(&mut h, Kind::Feasibility);
    fill(&mut h, "Space", "Space:Square");
    fill(&mut h, "Steps", "MM-Add Nil Kiosk#3 At MLoc:Square.Stage");
    let second = send(&mut h).await;
    let r = response(&h, second);
    assert_eq!(r["Feasibility"]["Steps"][0]["PAStatus"], "Clash", "{r:#}");
    let view = &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .transcript
        .turns()[second];
    assert!(!view.turn.new_session, "not a new session");
    assert!(view.turn.findings.is_empty(), "{:?}", view.turn.findings);
}

/// A server that says its tools changed: on its session (`notifications/tools/list_changed`,
/// 2025-11-25), or on the `subscriptions/listen` stream the explorer opened (2026-07-28): the
/// explorer reads its tools and resources again, and says so.
#[tokio::test]
async fn a_server_whose_tools_change_is_read_again() {
    use bkn_explorer::client::generation::ProtocolChoice;
    for protocol in [ProtocolChoice::Session, ProtocolChoice::Stateless] {
        let mut spec = common::fault_spec("tools-change", &[]);
        spec.protocol = Some(protocol);
        let mut h = Harness::new(options(vec![spec], "dark"));
        h.until(WAIT, "the dialogue to open", |app| {
            app.workspace()
                .dialogues()
                .nth(0)
                .is_some_and(|d| d.status == Status::Open)
        })
        .await;
        fill(&mut h, "Terms", "bench");
        send(&mut h).await;
        h.until(WAIT, "the tools read again", |app| {
            app.notices()
                .messages()
                .any(|m| m.text.contains("tools or resources changed"))
        })
        .await;
        let server = &h.runner.app.workspace().servers().nth(0).unwrap();
        assert_eq!(
            server.summary.as_ref().map(|s| s.bkn_tools.len()),
            Some(1),
            "{protocol}: its BKN tool is still known"
        );
        if protocol == ProtocolChoice::Stateless {
            let log = &h.runner.app.log();
            assert!(
                (0..log.visible_len()).any(|i| log
                    .visible(i)
                    .is_some_and(|e| e.text.contains("listening for tools list changes"))),
                "the explorer's log says it listens"
            );
        }
    }
}

/// MCP-BINDING section 6 in the explorer: a session holding a Request nested 999 levels
/// (saved by `dialogue --save`) opens, its turn is shown, replayed (`r`), taken over (its
/// Request sent again in a dialogue of the user's own) and saved, the Request whole at every
/// step. On a thread with the explorer's stack (`DEEP_STACK`), as the explorer runs.
#[test]
fn a_request_nested_999_levels_opens_shows_is_sent_again_and_saved() {
    std::thread::Builder::new()
        .stack_size(bkn_explorer::protocol::json::DEEP_STACK)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(deep_request_in_the_explorer())
        })
        .unwrap()
        .join()
        .expect("the explorer handled the deep Request");
}

async fn deep_request_in_the_explorer() {
    use bkn_explorer::session::Session;
    let mut deep = serde_json::json!("bottom");
    for _ in 0..997 {
        deep = serde_json::json!({ "n": deep });
    }
    let request = serde_json::json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ", "Kind": "constraints",
        "EntityIDs": ["Avatar#7"],
        "DataXMData": {"DataID": "d", "Source": [{"AIMID": "PGM-BKN"}], "Deep": deep}});
    let deepest = format!("/DataXMData/Deep{}", "/n".repeat(997));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.json");
    std::fs::write(&file, serde_json::to_vec(&request).unwrap()).unwrap();
    let recorded = dir.path().join("recorded.json");
    let out = std::process::Command::new(common::bin())
        .arg("dialogue")
        .arg(&file)
        .arg("--save")
        .arg(&recorded)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut h = Harness::new(options(Vec::new(), "dark"));
    h.show_session(Session::load(&recorded).unwrap());
    assert_eq!(h.runner.app.workspace().dialogues().len(), 1);
    assert_eq!(
        h.runner
            .app
            .workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .transcript
            .turns()[0]
            .turn
            .request_value()
            .pointer(&deepest),
        Some(&serde_json::json!("bottom"))
    );
    // Shown: the transcript, and the Raw tab from its first page to its last.
    h.show_nth(0);
    h.select_turn(0);
    h.detail_tab(DetailTab::Raw);
    let first = h.screen();
    assert!(first.contains("DataXMData"), "{first}");
    h.key(KeyCode::End);
    assert_ne!(h.screen(), first, "the last page of the deep Request");

    // Replayed: its Request sent again in a fresh dialogue, the same answer.
    h.focus(Pane::Transcript);
    h.key(KeyCode::Char('r'));
    h.until(WAIT, "the replay to finish", |app| {
        app.workspace()
            .dialogues()
            .nth(0)
            .unwrap()
            .runs
            .replay()
            .is_some_and(|r| !r.running)
    })
    .await;
    let r = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(0)
        .unwrap()
        .runs
        .replay()
        .unwrap();
    assert_eq!((r.done, r.differing, r.error.as_ref()), (1, 0, None));

    // Taken over: sent again in a dialogue of the user's own, answered.
    h.act(bkn_explorer::tui::action::Action::TakeOver);
    h.until(WAIT, "the take-over to send the Request", |app| {
        app.workspace()
            .dialogues()
            .nth(1)
            .is_some_and(|d| d.transcript.len() == 1 && d.runs.takeover().is_none())
    })
    .await;
    let taken = &h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(1)
        .unwrap()
        .transcript
        .turns()[0]
        .turn;
    assert_eq!(
        taken.request_value().pointer(&deepest),
        Some(&serde_json::json!("bottom"))
    );
    assert!(
        matches!(&taken.reply, Reply::Response(_)),
        "{:?}",
        taken.reply
    );

    // Saved, and read back whole.
    let saved = dir.path().join("saved.json");
    h.act(bkn_explorer::tui::action::Action::SaveAs);
    assert!(matches!(h.runner.app.overlay(), Some(Overlay::Prompt(_))));
    h.retype_prompt(&saved.display().to_string());
    h.key(KeyCode::Enter);
    h.until(WAIT, "the save", |app| {
        app.session().path() == Some(saved.as_path()) && !app.session().saving()
    })
    .await;
    let back = Session::load(&saved).expect("the saved session loads");
    let turns: Vec<_> = back.dialogues.iter().flat_map(|d| &d.turns).collect();
    assert!(!turns.is_empty());
    for t in turns {
        assert_eq!(
            t.request.value().pointer(&deepest),
            Some(&serde_json::json!("bottom")),
            "saved whole"
        );
    }
}

/// The explorer says which MCP generation each server speaks and where its dialogue's state
/// lives (MCP-BINDING section 3): in the sidebar beside the server's tools, and in the status
/// line of the dialogue shown; one server pinned to each generation.
#[tokio::test]
async fn the_generation_and_where_state_lives_are_shown() {
    use bkn_explorer::client::generation::ProtocolChoice;
    let mut dac = ServerSpec::embedded(Interface::Dac);
    dac.protocol = Some(ProtocolChoice::Session);
    let mut usr = ServerSpec::embedded(Interface::Usr);
    usr.protocol = Some(ProtocolChoice::Stateless);
    let mut h = Harness::new(options(vec![dac, usr], "dark"));
    h.until(WAIT, "both dialogues to open", |app| {
        app.workspace().dialogues().len() == 2
            && app
                .workspace()
                .dialogues()
                .values()
                .all(|d| d.status == Status::Open)
    })
    .await;
    let screen = text(&render(&h.runner.app, 160, 40));
    assert!(screen.contains("bkn_dac  2025-11-25 session"), "{screen}");
    assert!(
        screen.contains("bkn_usr  2026-07-28 by DialogID"),
        "{screen}"
    );
    for (d, words) in [
        (0, "2025-11-25 (in its session)"),
        (1, "2026-07-28 (by DialogID)"),
    ] {
        h.show_nth(d);
        let screen = text(&render(&h.runner.app, 160, 40));
        assert!(screen.contains(&format!("connected {words}")), "{screen}");
    }
}

/// F3: the reference Domain Access's resources listed, one read (pretty JSON), copied; a
/// click on another row reads that one.
#[tokio::test]
async fn the_resources_overlay_lists_reads_and_copies_a_servers_resources() {
    use bkn_explorer::tui::resources::ResourcesOverlay;
    fn overlay(app: &App) -> Option<&ResourcesOverlay> {
        match &app.overlay() {
            Some(Overlay::Resources(r)) => Some(r),
            _ => None,
        }
    }
    let mut h = on_reference_servers().await;
    h.key(KeyCode::F(3));
    h.until(WAIT, "the list of resources", |app| {
        overlay(app).is_some_and(|r| matches!(&r.list, Some(Ok(l)) if l.len() == 4))
    })
    .await;
    let screen = h.screen();
    assert!(screen.contains("Resources · domain-access"), "{screen}");
    assert!(screen.contains("› dac://domain"), "{screen}");
    h.key(KeyCode::Enter);
    h.until(WAIT, "dac://domain read", |app| {
        overlay(app)
            .is_some_and(|r| matches!(&r.shown, Some(Ok(read)) if read.uri == "dac://domain"))
    })
    .await;
    let screen = h.screen();
    assert!(
        screen.contains("\"MInstance\": \"MI:PublicSquare\""),
        "{screen}"
    );
    assert!(screen.contains("application/json · JSON"), "{screen}");
    h.key(KeyCode::Char('y'));
    let copied = h.runner.clipboard.clone().expect("a copy");
    let v: Value = serde_json::from_str(&copied).expect("the copy is the JSON");
    assert_eq!(v["MInstance"], "MI:PublicSquare");
    // A click on the second resource reads it.
    let screen = h.screen();
    let (row, col) = screen
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            l.find("dac://spaces/Space:Square")
                .map(|x| (y, l[..x].chars().count()))
        })
        .expect("the second row");
    h.click(col as u16, row as u16);
    h.until(WAIT, "the Space read", |app| {
        overlay(app).is_some_and(
            |r| matches!(&r.shown, Some(Ok(read)) if read.uri == "dac://spaces/Space:Square"),
        )
    })
    .await;
    h.key(KeyCode::Esc);
    assert!(h.runner.app.overlay().is_none());
}

/// Two answers to the same Request in two dialogues are the same: but for the new dialogue's
/// own DialogID, and the ids and the time each answer is given anew (QueryID, QueryTime, the
/// DataID of its data).
fn assert_same_answer(mut got: Value, mut expected: Value, how: &str) {
    for v in [&mut got, &mut expected] {
        let o = v.as_object_mut().expect("a Response");
        for k in ["DialogID", "QueryID", "QueryTime"] {
            assert!(o.remove(k).is_some(), "{how}: no {k}");
        }
        if let Some(data) = o.get_mut("DataXMData").and_then(Value::as_object_mut) {
            data.remove("DataID");
        }
    }
    assert_eq!(got, expected, "{how}");
}

/// `e` on a turn: the `bkn-explorer send` line, run for real in a shell, reaches the same
/// server and gives the same answer.
#[tokio::test]
async fn an_exported_send_line_run_for_real_gives_the_same_answer() {
    let mut h = on_reference_servers().await;
    fill(&mut h, "Question", "What is the bench, and isn't it Ana's?");
    fill(&mut h, "Terms", "bench");
    let turn = send(&mut h).await;
    let expected = response(&h, turn);
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('e'));
    let line = match &h.runner.app.overlay() {
        Some(Overlay::Export(e)) => e.blocks[0].text.clone(),
        _ => panic!("no Export overlay: {}", h.screen()),
    };
    assert!(
        line.contains("| bkn-explorer send - --embedded dac --protocol"),
        "{line}"
    );
    h.key(KeyCode::Char('y'));
    assert_eq!(h.runner.clipboard.as_deref(), Some(line.as_str()));
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bkn-explorer"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::process::Command::new("sh")
        .args(["-c", &line])
        .env("PATH", path)
        .output()
        .await
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{line}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("send prints the Response");
    assert_same_answer(got, expected, "send");
}

/// The JSON-RPC answer with id 1 in what curl printed (JSON, or server-sent events), and
/// the Response its tool result holds.
fn curl_response(out: &str) -> Value {
    let answer = out
        .lines()
        .map(|l| l.trim().trim_start_matches("data:").trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 1)
        .unwrap_or_else(|| panic!("no answer with id 1 in:\n{out}"));
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer:#}");
    serde_json::from_str(
        result["content"][0]["text"]
            .as_str()
            .expect("a text content"),
    )
    .expect("the Response")
}

/// `e` on a turn with an HTTP server, in both generations: the curl lines, run for real,
/// reach the server (2026-07-28: one POST; 2025-11-25: initialize, the call on the session,
/// DELETE) and give the same answer.
#[tokio::test]
async fn exported_curl_lines_run_for_real_give_the_same_answer_in_both_generations() {
    use bkn_explorer::client::generation::ProtocolChoice;
    let server = common::spawn_http(&["dac".to_owned()]).await;
    for (choice, version) in [
        (ProtocolChoice::Stateless, "2026-07-28"),
        (ProtocolChoice::Session, "2025-11-25"),
    ] {
        let mut spec = ServerSpec::from_url(&server.url).expect("a URL");
        spec.protocol = Some(choice);
        let mut h = Harness::new(options(vec![spec], "dark"));
        h.until(WAIT, "the dialogue to open", |app| {
            app.workspace()
                .dialogues()
                .nth(0)
                .is_some_and(|d| d.status == Status::Open)
        })
        .await;
        fill(&mut h, "Question", "What is the bench?");
        fill(&mut h, "Terms", "bench");
        let turn = send(&mut h).await;
        let expected = response(&h, turn);
        h.key(KeyCode::Esc);
        h.key(KeyCode::Char('e'));
        let curl = match &h.runner.app.overlay() {
            Some(Overlay::Export(e)) => e.blocks[1].clone(),
            _ => panic!("no Export overlay: {}", h.screen()),
        };
        assert!(curl.title.contains(version), "{}", curl.title);
        let out = tokio::process::Command::new("sh")
            .args(["-c", &curl.text])
            .output()
            .await
            .expect("sh runs");
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{}\n{printed}\n{}",
            curl.text,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_same_answer(curl_response(&printed), expected, version);
    }
}

/// With no server at all, what the explorer says points to what works: `a` adds a server and
/// Ctrl-O opens a session; never `n`, which has no server to open a dialogue on.
#[tokio::test]
async fn with_no_server_the_hints_point_to_adding_one_or_opening_a_session() {
    use bkn_explorer::tui::action::Action;
    let mut h = Harness::new(options(Vec::new(), "dark"));
    assert!(h.runner.app.workspace().servers().is_empty());
    let screen = h.screen();
    assert!(
        screen.contains("a adds one") && screen.contains("opens a session"),
        "{screen}"
    );
    assert!(!screen.contains("n opens"), "{screen}");
    h.act(Action::NewDialogue);
    let said = h.runner.app.notices().shown().map(|n| n.text.clone());
    let said = said.unwrap_or_default();
    assert!(
        said.contains("a adds one") && !said.contains("n opens"),
        "{said}"
    );
}
