//! Snapshots of every pane and overlay of the explorer, drawn on ratatui's TestBackend from
//! scripted states: a feasibility dialogue with every PA Status, commitments in all three
//! states, findings, each kind of failed turn, a BKN-USR dialogue, the composer (form and
//! raw), the protocol log, a pending turn, and each overlay. Each state is drawn at 120x40 and
//! 80x24, in the dark and the high-contrast themes; a snapshot holds the characters and a
//! letter-per-cell map of the styles with its legend, so colours are checked too.
//!
//! The states come from `tests/fixtures/tui/states.json`, a session file (the shipped Domain
//! Access tour and User State Refinement dialogues, and a dialogue written for these tests).
//! Update the snapshots with `INSTA_UPDATE=always cargo test tui_snapshots::` and review
//! the diff.

use crate::common;

use bkn_explorer::client::event::{LogEntry, LogKind};
use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::dac::Kind;
use bkn_explorer::protocol::resources::{Vocabulary, Words};
use bkn_explorer::session::Session;
use bkn_explorer::tui::action::{Action, Pane};
use bkn_explorer::tui::app::{DetailTab, ServerStatus, Severity};
use bkn_explorer::tui::composer::Composer;
use bkn_explorer::tui::dialogue::{DialogueState, Pending, Status};
use bkn_explorer::tui::overlay::Overlay;
use bkn_explorer::tui::theme::Theme;
use common::tui::{Harness, normalize, options, render, root, styles, text};
use ratatui::crossterm::event::KeyCode;
use ratatui::style::Color;
use std::collections::HashSet;
use std::time::{Duration, SystemTime};

/// The dialogues of the fixture session.
const TOUR: usize = 0;
const STATES: usize = 1;
const USR: usize = 2;
const RECONNECT: usize = 3;

fn scripted(theme: &str) -> Harness {
    let options = match theme {
        // NO_COLOR's theme: no colour at all (no built-in theme file).
        "no-color" => {
            let mut options = options(Vec::new(), "dark");
            options.theme = Theme::no_color();
            options
        }
        theme => options(Vec::new(), theme),
    };
    let mut h = Harness::new(options);
    let session = Session::load(&root().join("tests/fixtures/tui/states.json"))
        .expect("the fixture session loads");
    h.show_session(session);
    h
}

fn show(h: &mut Harness, dialogue: usize, turn: usize, tab: DetailTab, focus: Pane) {
    let app = &mut h.runner.app;
    let id = app.workspace().dialogues().id_at(dialogue);
    app.workspace_mut().set_current(id);
    app.workspace_mut()
        .dialogues_mut()
        .nth(dialogue)
        .unwrap()
        .transcript
        .select(Some(turn));
    app.workspace_mut()
        .dialogues_mut()
        .nth(dialogue)
        .unwrap()
        .transcript
        .detail_tab = tab;
    app.screen_mut().set_focus(focus);
    h.draw();
}

/// What the composer completes from (the reference Domain Access's names).
fn vocabulary() -> Vocabulary {
    let mut v = Vocabulary {
        has_resources: true,
        ..Vocabulary::default()
    };
    for (words, ids) in [
        (Words::Entities, &["Avatar#7", "Bench#2", "Kiosk#3"][..]),
        (
            Words::MLocations,
            &[
                "MLoc:Square.Gate",
                "MLoc:Square.Stage",
                "MLoc:Market.Stall2",
            ][..],
        ),
        (Words::Spaces, &["Space:Square"][..]),
        (Words::Actions, &["MM-Add", "MM-Move", "Post"][..]),
    ] {
        for id in ids {
            v.add(words, id);
        }
    }
    v
}

/// A fresh feasibility form in the tour's composer, with the focus on its Steps.
fn feasibility_form(h: &mut Harness) {
    show(h, TOUR, 6, DetailTab::Feasibility, Pane::Composer);
    h.runner
        .app
        .workspace_mut()
        .servers_mut()
        .next()
        .unwrap()
        .vocabulary = vocabulary();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    h.runner
        .app
        .workspace_mut()
        .dialogues_mut()
        .nth(TOUR)
        .unwrap()
        .composer = c;
    go_to(h, "Steps");
}

/// Tabs to a composer field (Tab or Shift-Tab), as a user does.
fn go_to(h: &mut Harness, label: &str) {
    for _ in 0..12 {
        let c = &h.runner.app.current_dialogue().unwrap().composer;
        let target = c
            .fields
            .iter()
            .position(|f| f.spec.label == label)
            .unwrap_or_else(|| panic!("no field {label}"));
        match c.focused_field().map(|i| i.cmp(&target)) {
            Some(std::cmp::Ordering::Equal) => return,
            Some(std::cmp::Ordering::Greater) => h.key(KeyCode::BackTab),
            _ => h.key(KeyCode::Tab),
        }
    }
    panic!("could not reach the field {label}");
}

/// Adds a finished turn to the dialogue of every PA Status (its row 6).
fn add_turn(h: &mut Harness, (request, response): (serde_json::Value, serde_json::Value)) {
    use bkn_explorer::client::turn::{Reply, Turn};
    use bkn_explorer::protocol::raw::RawJson;
    let turn = Turn {
        request: RawJson::from_value(&request),
        reply: Reply::Response(RawJson::from_value(&response)),
        findings: Vec::new(),
        sent: "2026-01-01T00:00:00.000Z".into(),
        received: Some("2026-01-01T00:00:00.004Z".into()),
        latency_ms: 4.0,
        new_session: false,
        asked: Vec::new(),
    };
    h.runner
        .app
        .workspace_mut()
        .dialogues_mut()
        .nth(STATES)
        .unwrap()
        .load_turns([turn]);
}

/// Two Process Actions, one step answered (Clash), and `Overall: feasible`.
fn contradicted_feasibility() -> (serde_json::Value, serde_json::Value) {
    let request = serde_json::json!({"Header": "PGM-KDA-V1.0", "Mode": "RQ",
        "Kind": "feasibility", "TurnIndex": 6, "ProcessActions": [
            {"Step": 1, "Statement": "MM-Add Nil Kiosk#3 At MLoc:Square.Stage"},
            {"Step": 2, "Statement": "Post Nil Item#12 To Process#Market"}]});
    let response = serde_json::json!({"Header": "PGM-KDA-V1.0", "Mode": "RS",
        "TurnIndex": 6, "Outcome": "answered",
        "Feasibility": {"Overall": "feasible",
            "Steps": [{"Step": 1, "PAStatus": "Clash", "Reason": "the Stage is taken"}]}});
    (request, response)
}

/// A Response of a server that follows no schema: an Outcome, a PA Status, a Step, an
/// Overall and Answer members of its own.
fn foreign_feasibility() -> (serde_json::Value, serde_json::Value) {
    let (request, _) = contradicted_feasibility();
    let response = serde_json::json!({"Header": "PGM-KDA-V1.0", "Mode": "RS",
        "TurnIndex": 6, "Outcome": "mostly", "SourcesUsed": "everything",
        "Answer": {"Text": "done", "Mood": {"valence": -1}, "Relations": ["a knows b"]},
        "Feasibility": {"Overall": "probably",
            "Steps": [{"Step": 1, "PAStatus": "Perhaps", "Reason": "who knows"},
                      {"Step": -2, "PAStatus": "Ack"}]}});
    (request, response)
}

/// The states, by name: each makes a scripted explorer ready to draw.
async fn state(name: &str, theme: &str) -> Harness {
    let mut h = scripted(theme);
    match name {
        "feasibility_every_status" => show(&mut h, STATES, 0, DetailTab::Feasibility, Pane::Detail),
        "commitments_three_states" => show(&mut h, TOUR, 7, DetailTab::Commitments, Pane::Detail),
        "answer_affordances" => show(&mut h, TOUR, 2, DetailTab::Answer, Pane::Transcript),
        "answer_grounding" => show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript),
        // The Answer of a commitment turn: its commitments line wraps, never cut.
        "answer_commitments_line" => show(&mut h, TOUR, 5, DetailTab::Answer, Pane::Detail),
        "findings" => show(&mut h, STATES, 1, DetailTab::Findings, Pane::Detail),
        "raw" => show(&mut h, TOUR, 0, DetailTab::Raw, Pane::Detail),
        // A long string (the Answer's Text) wraps in Raw.
        "raw_long_strings" => {
            show(&mut h, TOUR, 5, DetailTab::Raw, Pane::Detail);
            // Down to the Request's Question, longer than an 80-column pane.
            for _ in 0..17 {
                h.key(KeyCode::Down);
            }
        }
        "no_reply_server_gone" => {
            show(&mut h, STATES, 4, DetailTab::Answer, Pane::Transcript);
            h.runner.app.notify(
                "the server closed the connection; the server exited with status 101",
                Severity::Error,
            );
        }
        "tool_error" => show(&mut h, TOUR, 9, DetailTab::Answer, Pane::Transcript),
        "user_state" => show(&mut h, USR, 1, DetailTab::UserState, Pane::Detail),
        // What changed since the User's previous state: +, - and ~ say it without colour.
        "user_state_changes" => show(&mut h, USR, 3, DetailTab::UserState, Pane::Detail),
        // Another User's first state in the same dialogue: compared with none of Ana's.
        "user_state_other_user" => show(&mut h, USR, 5, DetailTab::UserState, Pane::Detail),
        // A server that claims `feasible` over a Clash step and leaves a step out: the
        // transcript row is marked ⚠ as the tab is, and its steps are counted by PA Status.
        "feasibility_contradicted" => {
            add_turn(&mut h, contradicted_feasibility());
            show(&mut h, STATES, 6, DetailTab::Feasibility, Pane::Transcript);
        }
        // A foreign server's values that conform to nothing: each shown as it came, marked.
        "feasibility_foreign" => {
            add_turn(&mut h, foreign_feasibility());
            show(&mut h, STATES, 6, DetailTab::Feasibility, Pane::Transcript);
        }
        "answer_foreign" => {
            add_turn(&mut h, foreign_feasibility());
            show(&mut h, STATES, 6, DetailTab::Answer, Pane::Detail);
        }
        // The server leaves CommitmentStatus out: the tab says so, and shows the last list.
        "commitments_left_out" => show(&mut h, RECONNECT, 1, DetailTab::Commitments, Pane::Detail),
        // A released one, a conflicting one with its reason, a retained one.
        "commitments_released" => show(&mut h, RECONNECT, 2, DetailTab::Commitments, Pane::Detail),
        // A turn with no reply: its commitment was never taken up.
        "commitments_unsent" => show(&mut h, RECONNECT, 3, DetailTab::Commitments, Pane::Detail),
        // After a reconnect the server knows no commitment: none is shown as retained.
        "commitments_after_reconnect" => {
            show(&mut h, RECONNECT, 4, DetailTab::Commitments, Pane::Detail)
        }
        "dialogue_failed" => {
            let app = &mut h.runner.app;
            app.workspace_mut().servers_mut().next().unwrap().status = ServerStatus::Failed(
                "cannot start bkn-explorer: No such file or directory (os error 2)".into(),
            );
            let server = app.workspace().servers().id_at(0).unwrap();
            let mut d = DialogueState::new(9999, "domain-access #2".into(), server, Interface::Dac);
            d.status = Status::Failed(
                "domain-access: cannot start bkn-explorer: No such file or directory (os error 2)"
                    .into(),
            );
            let id = Some(app.workspace_mut().add_dialogue(d));
            app.workspace_mut().set_current(id);
            app.screen_mut().set_focus(Pane::Sidebar);
        }
        // A new BKN-USR dialogue opens on the User State tab.
        "usr_fresh_dialogue" => {
            let app = &mut h.runner.app;
            let server = app.workspace().servers().id_at(1).unwrap();
            let d = DialogueState::new(9998, "user-state #2".into(), server, Interface::Usr);
            let id = app.workspace_mut().add_dialogue(d);
            app.show_dialogue(id);
            app.screen_mut().set_focus(Pane::Composer);
        }
        // Many dialogues: the tab of the one in view is always on the bar.
        "tabs_many_dialogues" => {
            let app = &mut h.runner.app;
            let server = app.workspace().servers().id_at(0).unwrap();
            let mut last = None;
            for n in 2..14 {
                let d = DialogueState::new(
                    9000 + n,
                    format!("domain-access #{n}"),
                    server,
                    Interface::Dac,
                );
                last = Some(app.workspace_mut().add_dialogue(d));
            }
            app.show_dialogue(last.unwrap());
            app.screen_mut().set_focus(Pane::Transcript);
        }
        // A long title stops at the border.
        "long_title" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.runner
                .app
                .workspace_mut()
                .dialogues_mut()
                .nth(TOUR)
                .unwrap()
                .name =
                "a dialogue with a very long name that a user typed to remember what it was about"
                    .into();
        }
        "pending_turn" => {
            show(&mut h, STATES, 5, DetailTab::Answer, Pane::Transcript);
            let app = &mut h.runner.app;
            let started = app.now() - Duration::from_millis(2500);
            app.workspace_mut()
                .dialogues_mut()
                .nth(STATES)
                .unwrap()
                .link
                .pending = Some(Pending {
                started,
                request: None,
                cancelling: false,
                progress: Some((7.0, Some(100.0))),
                task: None,
            });
            app.screen_mut().set_ticks(3);
        }
        // A turn the server answered with a Task (SEP-2663): its status and message shown.
        "pending_task" => {
            show(&mut h, STATES, 5, DetailTab::Answer, Pane::Transcript);
            let app = &mut h.runner.app;
            let started = app.now() - Duration::from_millis(2500);
            app.workspace_mut()
                .dialogues_mut()
                .nth(STATES)
                .unwrap()
                .link
                .pending = Some(Pending {
                started,
                request: None,
                cancelling: false,
                progress: None,
                task: Some(bkn_explorer::client::task::TaskNote {
                    task_id: "task-7".into(),
                    status: "input_required".into(),
                    message: Some("waiting for a confirmation".into()),
                }),
            });
            app.screen_mut().set_ticks(3);
        }
        "composer_form" => {
            feasibility_form(&mut h);
            // Two statements: one fine, one broken half-way; then the Space.
            h.type_text("MM-Add Nil Kiosk#3 At MLoc:Square.Stage\nMM-Move Nil Avatar#7 Frm MLoc");
            h.key(KeyCode::Esc); // the completion list, if one is open
            go_to(&mut h, "Space");
            h.type_text("Space:Sq");
        }
        // More steps than the field shows: the marks stay on their lines and the caret
        // under the line with the error.
        "composer_steps_scrolled" => {
            feasibility_form(&mut h);
            let lines = [
                "MM-Add Nil Kiosk#3 At MLoc:Square.Stage",
                "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage",
                "Post Nil Kiosk#3 To Process#Market",
                "MM-Add Nil Bench#2 At MLoc:Square.Gate",
                "MM-Move Nil Avatar#7 Frm MLoc:Square.Stage",
                "MM-Add Nil Bench#2 At MLoc:Market.Stall2",
                "Post Nil Bench#2 To Process#Market",
            ];
            h.event(bkn_explorer::tui::event::Event::Input(
                ratatui::crossterm::event::Event::Paste(lines.join("\n")),
            ));
            // Up to the broken line, so that the field has scrolled.
            h.keys(&[KeyCode::Up, KeyCode::Up]);
        }
        // The completion list, under the word being typed.
        "composer_completion" => {
            feasibility_form(&mut h);
            h.type_text("MM-Add Nil K");
        }
        // A server without resources: the composer says why nothing completes.
        "composer_why_empty" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Composer);
            let mut c = Composer::new(Interface::Dac);
            c.set_kind(Kind::Affordances);
            h.runner
                .app
                .workspace_mut()
                .dialogues_mut()
                .nth(TOUR)
                .unwrap()
                .composer = c;
            go_to(&mut h, "Entity IDs");
        }
        "composer_raw" => {
            feasibility_form(&mut h);
            h.type_text("Hide Nil Bench#2");
            h.key(KeyCode::F(2));
        }
        "protocol_log" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Log);
            log_entries(&mut h);
            h.act(Action::ToggleLog);
            h.runner.app.screen_mut().set_focus(Pane::Log);
        }
        // Enter on a log row: the whole entry, pretty, wrapped.
        "overlay_log_entry" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Log);
            log_entries(&mut h);
            h.act(Action::ToggleLog);
            h.runner.app.screen_mut().set_focus(Pane::Log);
            h.key(KeyCode::Home);
            h.key(KeyCode::Down);
            h.key(KeyCode::Enter);
        }
        "overlay_messages" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            for (text, severity) in [
                ("saved /home/ana/sessions/square.json", Severity::Success),
                (
                    "the server rejected the Request: /Kind: Kind must be one of semantic_grounding, affordances, constraints, behavioural_expectations, feasibility, clarification, commitment; found \"groundng\"",
                    Severity::Warning,
                ),
                (
                    "the server closed the connection; the server exited with status 101; its last stderr line: thread 'main' panicked at src/fault.rs:1:1: crashing during a call, as asked",
                    Severity::Error,
                ),
            ] {
                h.runner.app.notify(text, severity);
            }
            h.key(KeyCode::Char('M'));
        }
        // The defaults of new Requests: where each came from, and an override typed.
        "overlay_defaults" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.act(Action::Defaults);
            h.type_text("MI:Harbour");
            h.key(KeyCode::Tab);
        }
        // A server's form, field by field: a problem on the required field after Enter, the
        // focus on it.
        "overlay_ask_form" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.event(bkn_explorer::tui::event::Event::Asked(ask_form()));
            h.key(KeyCode::Tab);
            h.key(KeyCode::Right);
            h.key(KeyCode::Enter);
        }
        // A sampling: the messages, and the reply being written.
        "overlay_ask_sampling" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.event(bkn_explorer::tui::event::Event::Asked(ask_sampling()));
            h.type_text("The Stage is free at noon.");
        }
        // A scenario run in the explorer: the steps' verdicts in the transcript and the
        // Expect tab on the failing one.
        "scenario_run" => play_scenario_run(&mut h),
        "overlay_help" => h.act(Action::Help),
        // A search in Raw, kept (Enter) and moved on (n): every match marked, the current one
        // more, "2/N" under the pane.
        "search_raw" => {
            show(&mut h, TOUR, 0, DetailTab::Raw, Pane::Detail);
            h.act(Action::Search);
            h.type_text("text");
            h.key(KeyCode::Enter);
            h.key(KeyCode::Char('n'));
        }
        // A search in the log, being typed.
        "search_log" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Log);
            log_entries(&mut h);
            h.act(Action::ToggleLog);
            h.runner.app.screen_mut().set_focus(Pane::Log);
            h.act(Action::Search);
            h.type_text("protocolversion");
        }
        "overlay_palette" => {
            h.runner.app.screen_mut().set_focus(Pane::Transcript);
            h.act(Action::Palette);
            h.type_text("theme");
        }
        "overlay_save_as" => {
            h.runner
                .app
                .session_mut()
                .set_path(Some("/home/ana/sessions/my-session.json".into()));
            h.act(Action::SaveAs);
        }
        // Save-as onto a file that exists asks first.
        "overlay_overwrite" => {
            // What the runner finds out about the typed path (a real file in the tmux test).
            h.event(bkn_explorer::tui::event::Event::SaveTarget {
                path: "/home/ana/sessions/square.json".into(),
                exists: true,
                folder_exists: true,
                what: bkn_explorer::tui::event::SaveWhat::Session,
            });
        }
        // x on a dialogue with turns asks first.
        "overlay_close_dialogue" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.key(KeyCode::Char('x'));
        }
        "overlay_open" => {
            h.act(Action::Open);
            h.until(
                Duration::from_secs(10),
                "the session list",
                |app| matches!(&app.overlay(), Some(Overlay::Open(o)) if !o.loading),
            )
            .await;
        }
        "overlay_quit_unsaved" => {
            for _ in 0..3 {
                h.runner.app.session_mut().turn_taken();
            }
            h.act(Action::Quit);
        }
        // Certify this server: the progress bar and the rules so far.
        "certify_running" => certify_pane(&mut h, "running"),
        // The report: every verdict (a mark and a word), a failed rule's problems and its
        // evidence below.
        "certify_report" => certify_pane(&mut h, "done"),
        // Only the failed rules, the report being saved over a file that is there.
        "certify_save_over" => certify_pane(&mut h, "save"),
        // A server that serves no tool of the interface: the whole reason, and no rule.
        "certify_unreachable" => {
            certify_pane(&mut h, "running");
            let c = h.runner.app.certify_mut().as_mut().unwrap();
            c.results.clear();
            c.current = None;
            c.phase = bkn_explorer::tui::certify::Phase::Unreachable(
                "python3 serves no BKN tool (none has Header PGM-KDA-V1.0 or PGM-KUS-V1.0, none \
                 is named bkn_dac or bkn_usr); its tools: echo, add, weather_forecast, \
                 translate, summarise"
                    .into(),
            );
        }
        // The Resources overlay: the list, the second resource read (pretty JSON).
        "overlay_resources" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.runner
                .app
                .set_overlay(Some(Overlay::Resources(Box::new(resources_overlay()))));
        }
        // W in the Resources overlay: the prompt for the path over it, the resource read
        // still shown under it.
        "overlay_resources_write" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.runner
                .app
                .set_overlay(Some(Overlay::Resources(Box::new(resources_overlay()))));
            h.key(KeyCode::Char('W'));
            // The working folder, as on the user's machine (not this checkout's).
            if let Some(Overlay::Prompt(p)) = h.runner.app.overlay_mut() {
                p.note = "in /home/ana".into();
            }
        }
        // A turn exported as command lines (a stdio server: send only).
        "overlay_export" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.act(Action::Export);
        }
        other => panic!("no state {other}"),
    }
    h
}

/// A certify run of the Domain Access rules as the runner reports it: the first dozen pass
/// but one that skips and one that fails with a turn and a raw exchange for evidence.
fn certify_pane(h: &mut Harness, stage: &str) {
    use bkn_explorer::certify::rules::RULES;
    use bkn_explorer::certify::{Evidence, RuleResult, Verdict};
    use bkn_explorer::client::turn::{Reply, Turn};
    use bkn_explorer::protocol::raw::RawJson;
    use bkn_explorer::tui::certify::{CertifyPane, Phase, ReportFormat, Saving};
    let rules: Vec<_> = RULES
        .iter()
        .filter(|r| r.applies_to(Interface::Dac))
        .collect();
    let turn = Turn {
        request: RawJson::from_value(&serde_json::json!({"Header": "PGM-KDA-V1.0",
            "Kind": "commitment", "TurnIndex": 2, "Release": ["certify-1"]})),
        reply: Reply::Response(RawJson::from_value(&serde_json::json!({
            "Header": "PGM-KDA-V1.0", "TurnIndex": 2, "Outcome": "answered"}))),
        findings: Vec::new(),
        sent: "2026-11-30T00:00:00.000Z".into(),
        received: Some("2026-11-30T00:00:00.001Z".into()),
        latency_ms: 1.0,
        new_session: false,
        asked: Vec::new(),
    };
    let done = if stage == "running" { 12 } else { rules.len() };
    let results: Vec<RuleResult> = rules
        .iter()
        .take(done)
        .enumerate()
        .map(|(i, rule)| {
            let (verdict, problems, evidence) = match i {
                7 => (
                    Verdict::Fail,
                    vec![
                        "turn 2: the server exited mid-rule (crashed): the connection is gone"
                            .to_owned(),
                        "a later Request: commitment certify-1 is not listed, not released"
                            .to_owned(),
                    ],
                    vec![
                        Evidence::Turn {
                            dialogue: "A".into(),
                            dialog_id: "d-1".into(),
                            protocol: "2026-07-28".into(),
                            turn: Box::new(turn.clone()),
                        },
                        Evidence::Raw {
                            transport: "stdio".into(),
                            sent: "{not json".into(),
                            received: "(nothing: the server exited)".into(),
                        },
                    ],
                ),
                11 => (Verdict::Skip, Vec::new(), Vec::new()),
                _ => (Verdict::Pass, Vec::new(), Vec::new()),
            };
            let summary = match verdict {
                Verdict::Fail => format!("{} (and 1 more)", problems[0]),
                Verdict::Skip => {
                    "the domain publishes no wallet, so InsValue cannot be provoked".into()
                }
                Verdict::Pass => format!("{} (3 checks)", rule.title),
            };
            RuleResult {
                rule,
                verdict,
                summary,
                problems,
                checked: 3,
                evidence,
                seconds: 0.25,
            }
        })
        .collect();
    let report = (stage != "running").then(|| {
        Box::new(bkn_explorer::certify::Report {
            server: "domain-access".into(),
            interface: Interface::Dac,
            protocol: "2026-07-28".into(),
            learnt: vec!["tool bkn_dac (found by its Header const), MCP 2026-07-28".into()],
            rules: results.clone(),
            seconds: 48.7,
            spec: bkn_explorer::client::spec::ServerSpec::embedded(Interface::Dac),
        })
    });
    let app = &mut h.runner.app;
    app.screen_mut().set_ticks(3);
    *app.certify_mut() = Some(CertifyPane {
        run: 1,
        server: app.workspace().servers().id_at(0).unwrap(),
        server_name: "domain-access".into(),
        spec: app.workspace().servers().nth(0).unwrap().spec.clone(),
        interface: Interface::Dac,
        phase: if stage == "running" {
            Phase::Running
        } else {
            Phase::Done
        },
        total: Some(rules.len()),
        learnt: vec!["tool bkn_dac (found by its Header const), MCP 2026-07-28".into()],
        current: (stage == "running").then(|| (12, rules[12])),
        results,
        report,
        filter: (stage == "save").then_some(Verdict::Fail),
        selected: if stage == "save" { 0 } else { 7 },
        shown: true,
        saving: (stage == "save").then(|| Saving {
            format: ReportFormat::Markdown,
            input: bkn_explorer::tui::overlay::Input::new("certify-domain-access.md"),
            exists: Some("/work/certify-domain-access.md".into()),
        }),
        note: None,
    });
}

/// A scenario's run as the runner reports it, made of the tour's recorded turns: three
/// passed, one failed an expectation, one could not run.
fn play_scenario_run(h: &mut Harness) {
    use bkn_explorer::scenario::expect::Failure;
    use bkn_explorer::scenario::run::StepRun;
    use bkn_explorer::tui::event::{Event, ScenarioEvent, ScenarioInfo};
    show(h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
    h.act(Action::RunScenario);
    if let Some(Overlay::Prompt(p)) = h.runner.app.overlay_mut() {
        p.input = bkn_explorer::tui::overlay::Input::new("/nowhere/kiosk.yaml");
    }
    h.key(KeyCode::Enter);
    let key = h
        .runner
        .app
        .workspace()
        .dialogues()
        .values()
        .last()
        .unwrap()
        .key;
    let turns: Vec<_> = h
        .runner
        .app
        .workspace()
        .dialogues()
        .nth(TOUR)
        .unwrap()
        .transcript
        .turns()
        .iter()
        .map(|t| t.turn.clone())
        .collect();
    let send = |h: &mut Harness, e: ScenarioEvent| h.event(Event::Scenario(e));
    send(
        h,
        ScenarioEvent::Loaded {
            dialogue: key,
            result: Ok(ScenarioInfo {
                name: "a kiosk on the stage".into(),
                steps: 5,
            }),
        },
    );
    send(
        h,
        ScenarioEvent::Opened {
            dialogue: key,
            dialog_id: "7c1d2e3f-0000-4000-8000-00000000b001".into(),
        },
    );
    for (i, (name, turn)) in [
        ("ground the terms", 0),
        ("what the square allows", 3),
        ("keep the avatar at the gate", 5),
        ("a plan that breaks the commitment", 6),
    ]
    .into_iter()
    .enumerate()
    {
        let failures = if i == 3 {
            vec![Failure {
                expectation: "PA Statuses Ack, Clash, InsRights".into(),
                pointer: Some("/Feasibility/Steps/1/PAStatus".into()),
                expected: "[Ack, Clash, InsRights]".into(),
                actual: "[Ack, Clash, InsRights, LocOOR, QualNS, Clash, Ack]".into(),
            }]
        } else {
            Vec::new()
        };
        send(
            h,
            ScenarioEvent::Step {
                dialogue: key,
                step: Box::new(StepRun {
                    index: i,
                    name: name.into(),
                    latency_ms: turns[turn].latency_ms,
                    turn: Some(turns[turn].clone()),
                    failures,
                    attempts: 1,
                    not_run: None,
                }),
                expectations: if i == 3 {
                    vec![
                        "conforms".into(),
                        "PA Statuses Ack, Clash, InsRights".into(),
                        "Overall partially_feasible".into(),
                    ]
                } else {
                    vec!["conforms".into(), "Outcome answered".into()]
                },
            },
        );
    }
    send(
        h,
        ScenarioEvent::Step {
            dialogue: key,
            step: Box::new(StepRun {
                index: 4,
                name: "a misspelt Kind is refused".into(),
                turn: None,
                latency_ms: 0.0,
                failures: Vec::new(),
                attempts: 0,
                not_run: Some("the connection is gone: the server exited with status 101".into()),
            }),
            expectations: vec!["a tool error".into()],
        },
    );
    send(
        h,
        ScenarioEvent::Done {
            dialogue: key,
            error: None,
        },
    );
    let d = h.runner.app.workspace().dialogues().len() - 1;
    h.runner
        .app
        .workspace_mut()
        .dialogues_mut()
        .nth(d)
        .unwrap()
        .transcript
        .select(Some(3));
    h.runner
        .app
        .workspace_mut()
        .dialogues_mut()
        .nth(d)
        .unwrap()
        .transcript
        .detail_tab = DetailTab::Expect;
    h.draw();
}

fn ask_form() -> bkn_explorer::tui::event::AskView {
    bkn_explorer::tui::event::AskView {
        id: 1,
        connection: 1,
        method: bkn_explorer::client::answers::ELICITATION,
        name: Some("booking".into()),
        message: "Book the Stage for the kiosk: who books, for how many, and which slot?".into(),
        asking: bkn_explorer::client::answers::Asking::Form {
            schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Your name", "description": "as on the permit"},
                    "slot": {"type": "string", "title": "Slot", "oneOf": [
                        {"const": "am", "title": "Morning"},
                        {"const": "pm", "title": "Afternoon"}]},
                    "people": {"type": "integer", "title": "People", "minimum": 1, "default": 2},
                    "lights": {"type": "boolean", "title": "Stage lights"},
                    "extras": {"type": "array", "title": "Extras", "items": {"enum": ["chairs", "sound"]}}
                },
                "required": ["name", "slot"]
            }),
        },
    }
}

fn ask_sampling() -> bkn_explorer::tui::event::AskView {
    use bkn_explorer::client::answers::{Asking, SAMPLING, SampledMessage};
    bkn_explorer::tui::event::AskView {
        id: 2,
        connection: 1,
        method: SAMPLING,
        name: None,
        message: "When is the Stage free?".into(),
        asking: Asking::Sampling {
            messages: vec![
                SampledMessage {
                    role: "user".into(),
                    text: "You plan events on the public square.".into(),
                },
                SampledMessage {
                    role: "user".into(),
                    text: "When is the Stage free?".into(),
                },
            ],
            system: Some("Answer in one sentence.".into()),
            max_tokens: 120,
        },
    }
}

fn log_entries(h: &mut Harness) {
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_996_800_123);
    for (kind, text) in [
        (
            LogKind::Sent,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        ),
        (
            LogKind::Received,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"bkn-explorer-dac","version":"0.1.0"},"capabilities":{"tools":{"listChanged":false},"resources":{},"logging":{}},"instructions":"Domain Access for the public square: ask for domain knowledge, the feasibility of Process Actions, and to retain commitments."}}"#,
        ),
        (LogKind::ServerLog, "info: dialogue 5f0c2a9e opened"),
        (LogKind::Progress, "progress 3/10: step 3"),
        (LogKind::Stderr, "WARN rmcp: a line on stderr"),
        (
            LogKind::Client,
            "connected: bkn-explorer-dac 0.1.0 (MCP 2025-11-25)",
        ),
    ] {
        let mut e = LogEntry::new(1, kind, text);
        e.at = at;
        h.runner.app.log_mut().push(e);
    }
}

/// The Resources overlay of the reference Domain Access, its Square read.
fn resources_overlay() -> bkn_explorer::tui::resources::ResourcesOverlay {
    use bkn_explorer::client::resources::{Listed, Read};
    let listed = |uri: &str, title: &str| Listed {
        uri: uri.into(),
        name: uri.into(),
        title: Some(title.into()),
        description: None,
        mime_type: Some("application/json".into()),
    };
    let mut o = bkn_explorer::tui::resources::ResourcesOverlay::new(1, "domain-access".into());
    o.listed(Ok(vec![
        listed("dac://domain", "The domain MI:PublicSquare"),
        listed("dac://spaces/Space:Square", "Space:Square (central square)"),
        listed("dac://spaces/Space:Market", "Space:Market (market hall)"),
    ]));
    o.selected = 1;
    o.read(
        "dac://spaces/Space:Square".into(),
        Ok(Read {
            uri: "dac://spaces/Space:Square".into(),
            mime_type: Some("application/json".into()),
            shown: serde_json::to_string_pretty(&serde_json::json!({
                "SpaceID": "Space:Square",
                "Label": "central square",
                "MLocations": ["MLoc:Square.Gate", "MLoc:Square.Stage", "MLoc:Square.Fountain"],
                "Items": [{"ItemID": "Bench#2", "Class": "Bench", "At": "MLoc:Square.Gate"}]
            }))
            .unwrap(),
            json: true,
        }),
    );
    o
}

/// The states whose colours say something text must say too: drawn with NO_COLOR as well.
const NO_COLOR: &[&str] = &[
    "feasibility_contradicted",
    "feasibility_foreign",
    "user_state_changes",
    // The selected resource and block show by their mark and reverse video alone.
    "overlay_resources",
    "overlay_export",
];

async fn snapshot(name: &str) {
    let no_color = NO_COLOR.contains(&name).then_some("no-color");
    for theme in ["dark", "high-contrast"].into_iter().chain(no_color) {
        for (w, hgt) in [(120u16, 40u16), (80, 24)] {
            let mut h = state(name, theme).await;
            h.runner.app.screen_mut().resize(w, hgt);
            let buffer = render(&h.runner.app, w, hgt);
            let shot = format!("{}\n{}", normalize(&text(&buffer)), styles(&buffer));
            // Named as when this file was a test binary of its own (its module path is
            // `suite::tui_snapshots` now), so the snapshots stay where they are.
            let mut settings = insta::Settings::clone_current();
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| {
                insta::assert_snapshot!(format!("tui_snapshots__{name}@{w}x{hgt}-{theme}"), shot)
            });
        }
    }
}

macro_rules! snapshots {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                snapshot(stringify!($name)).await;
            }
        )*
        const ALL: &[&str] = &[$(stringify!($name)),*];
    };
}

snapshots!(
    feasibility_every_status,
    commitments_three_states,
    answer_affordances,
    answer_grounding,
    answer_commitments_line,
    findings,
    raw,
    raw_long_strings,
    no_reply_server_gone,
    tool_error,
    user_state,
    user_state_changes,
    user_state_other_user,
    feasibility_contradicted,
    feasibility_foreign,
    answer_foreign,
    commitments_left_out,
    commitments_released,
    commitments_unsent,
    commitments_after_reconnect,
    dialogue_failed,
    usr_fresh_dialogue,
    tabs_many_dialogues,
    long_title,
    pending_turn,
    pending_task,
    composer_form,
    composer_steps_scrolled,
    composer_completion,
    composer_why_empty,
    composer_raw,
    protocol_log,
    overlay_log_entry,
    overlay_messages,
    overlay_defaults,
    overlay_ask_form,
    overlay_ask_sampling,
    scenario_run,
    overlay_help,
    overlay_palette,
    search_raw,
    search_log,
    overlay_save_as,
    overlay_overwrite,
    overlay_close_dialogue,
    overlay_open,
    overlay_quit_unsaved,
    certify_running,
    certify_report,
    certify_save_over,
    certify_unreachable,
    overlay_resources,
    overlay_resources_write,
    overlay_export,
);

/// With NO_COLOR the selected row of a list and a search's matches still show: the selection
/// in reverse video and marked `›`, matches in reverse video, the current one bold and
/// underlined (the styles are in the snapshot under the text).
#[tokio::test]
async fn no_color_shows_the_selected_row_and_the_search_matches() {
    for name in [
        "overlay_palette",
        "overlay_open",
        "search_raw",
        "search_log",
    ] {
        for (w, hgt) in [(120u16, 40u16), (80, 24)] {
            let mut h = state(name, "dark").await;
            h.runner.app.set_theme(Theme::no_color());
            h.runner.app.screen_mut().resize(w, hgt);
            let buffer = render(&h.runner.app, w, hgt);
            let shot = format!("{}\n{}", normalize(&text(&buffer)), styles(&buffer));
            let mut settings = insta::Settings::clone_current();
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| {
                insta::assert_snapshot!(format!("tui_snapshots__{name}@{w}x{hgt}-no-color"), shot)
            });
        }
    }
}

/// A theme whose every colour is distinct: whatever a frame shows must be one of them (or
/// the terminal's default), so no pane picks a colour of its own.
#[tokio::test]
async fn every_colour_on_screen_comes_from_the_theme() {
    let mut toml = String::from("name = \"probe\"\n[colors]\n");
    for (i, key) in bkn_explorer::tui::theme::Colors::KEYS.iter().enumerate() {
        toml.push_str(&format!("{key} = \"#{:06x}\"\n", 0x100000 + i * 7));
    }
    let probe = Theme::parse(&toml, "probe", None, &mut Vec::new()).expect("the probe theme");
    let allowed: HashSet<Color> = probe
        .colors
        .all()
        .into_iter()
        .map(|(_, c)| c)
        .chain([Color::Reset])
        .collect();
    for name in ALL {
        let mut h = state(name, "dark").await;
        h.runner.app.set_theme(probe.clone());
        for (w, hgt) in [(120u16, 40u16), (80, 24), (200, 60)] {
            h.runner.app.screen_mut().resize(w, hgt);
            let buffer = render(&h.runner.app, w, hgt);
            for y in 0..hgt {
                for x in 0..w {
                    let cell = &buffer[(x, y)];
                    for (what, color) in [("foreground", cell.fg), ("background", cell.bg)] {
                        assert!(
                            allowed.contains(&color),
                            "state {name} at {w}x{hgt}: the cell ({x}, {y}) {:?} has a {what} {color} that is not in the theme",
                            cell.symbol()
                        );
                    }
                }
            }
        }
    }
}

/// The states cover what the issue asks for: every PA Status, the three commitment states,
/// both interfaces.
#[tokio::test]
async fn the_states_cover_every_pa_status_and_commitment_state() {
    let h = state("feasibility_every_status", "dark").await;
    let screen = text(&render(&h.runner.app, 200, 60));
    for status in <bkn_explorer::protocol::dac::PaStatus as strum::VariantArray>::VARIANTS
        .iter()
        .copied()
    {
        assert!(
            screen.contains(status.as_str()),
            "{} is not on the feasibility screen:\n{screen}",
            status.as_str()
        );
    }
    let h = state("commitments_three_states", "dark").await;
    let screen = text(&render(&h.runner.app, 200, 60));
    for s in ["retained", "released", "conflicting"] {
        assert!(screen.contains(s), "no {s} commitment:\n{screen}");
    }
}

/// Box drawing, blocks and the like are not text: WCAG asks 3:1 of them.
fn is_graphic(symbol: &str) -> bool {
    symbol
        .chars()
        .all(|c| matches!(c, '\u{2500}'..='\u{259f}' | '\u{25a0}'..='\u{25ff}' | '\u{2800}'..='\u{28ff}'))
}

/// Every character drawn in every state of every shipped theme reaches WCAG AA against the
/// background it is drawn on (4.5:1 for text, 3:1 for lines and blocks), and AAA (7:1) in
/// high-contrast.
#[tokio::test]
async fn every_drawn_character_is_readable_in_every_theme() {
    let mut failures = Vec::new();
    for theme in ["dark", "light", "high-contrast"] {
        for name in ALL {
            let mut h = state(name, theme).await;
            let need = h.runner.app.theme().promised_contrast();
            let colors = h.runner.app.theme().colors.clone();
            for (w, hgt) in [(120u16, 40u16), (80, 24)] {
                h.runner.app.screen_mut().resize(w, hgt);
                let buffer = render(&h.runner.app, w, hgt);
                for y in 0..hgt {
                    for x in 0..w {
                        let cell = &buffer[(x, y)];
                        let symbol = cell.symbol();
                        if symbol.trim().is_empty() {
                            continue;
                        }
                        // Reset is the theme's own (the screen is filled with it).
                        let or = |c: Color, reset: Color| if c == Color::Reset { reset } else { c };
                        let (mut fg, mut bg) = (
                            or(cell.fg, colors.foreground),
                            or(cell.bg, colors.background),
                        );
                        if cell.modifier.contains(ratatui::style::Modifier::REVERSED) {
                            std::mem::swap(&mut fg, &mut bg);
                        }
                        let wanted = if is_graphic(symbol) { 3.0 } else { need };
                        let ratio = bkn_explorer::tui::theme::contrast_ratio(fg, bg)
                            .expect("shipped themes are #rrggbb");
                        let dim = cell.modifier.contains(ratatui::style::Modifier::DIM);
                        if ratio < wanted || dim {
                            failures.push(format!(
                                "{theme} · {name} at {w}x{hgt} ({x}, {y}) {symbol:?}: {:?} on {:?} is {ratio:.2}:1 (needs {wanted}){}",
                                cell.fg,
                                cell.bg,
                                if dim { ", and DIM" } else { "" }
                            ));
                        }
                    }
                }
            }
        }
    }
    // One line per colour pair is enough to fix it.
    let mut seen = HashSet::new();
    failures.retain(|f| {
        let key: String = f
            .split(": ")
            .nth(1)
            .map(|s| format!("{}{}", &f[..f.find(" · ").unwrap_or(0)], s))
            .unwrap_or_default();
        seen.insert(key)
    });
    assert!(
        failures.is_empty(),
        "{} colour pairs below the contrast asked for:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A long Provenance (many sources, a long method, long evidence) wraps in the User State
/// tab at 120 and 80 columns: every source, the whole method and the evidence show, none cut.
#[tokio::test]
async fn user_state_wraps_every_long_line() {
    use bkn_explorer::client::turn::{Reply, Turn};
    use bkn_explorer::protocol::raw::RawJson;
    let sources = [
        "baseline User#Ana (users file)",
        "Feedback.Hypothesis",
        "Feedback.Conflicts",
        "Feedback.Engagement",
        "Feedback.Observations",
        "the state refined at turn 6",
    ];
    let method = "rules v1 (docs/refinement.md): the hypothesis moves by a fifth with the state, \
        each known conflicting cue lowers it by its weight and moves Engagement toward passive \
        and the end of this method is here";
    let request = serde_json::json!({"Header": "PGM-KUS-V1.0", "Mode": "RQ",
        "Kind": "feedback", "TurnIndex": 8, "User": "User#Ana"});
    let response = serde_json::json!({"Header": "PGM-KUS-V1.0", "Mode": "RS",
        "TurnIndex": 8, "Outcome": "answered",
        "RefinedUserState": {"UserID": "User#Ana", "Cycle": 5, "CognitiveState": "tired"},
        "Provenance": {"Sources": sources, "Method": method,
            "Evidence": ["one piece of evidence long enough to wrap over more than one line of \
                an eighty-column pane, ending in the word lastpiece"]}});
    for (w, hgt) in [(120u16, 40u16), (80, 24)] {
        let mut h = scripted("dark");
        let turn = Turn {
            request: RawJson::from_value(&request),
            reply: Reply::Response(RawJson::from_value(&response)),
            findings: Vec::new(),
            sent: "2026-01-01T00:00:00.000Z".into(),
            received: Some("2026-01-01T00:00:00.004Z".into()),
            latency_ms: 4.0,
            new_session: false,
            asked: Vec::new(),
        };
        h.runner
            .app
            .workspace_mut()
            .dialogues_mut()
            .nth(USR)
            .unwrap()
            .load_turns([turn]);
        show(&mut h, USR, 8, DetailTab::UserState, Pane::Detail);
        // To the tab's last page.
        h.runner
            .app
            .workspace_mut()
            .dialogues_mut()
            .nth(USR)
            .unwrap()
            .transcript
            .detail_scroll = 1000;
        h.runner.app.screen_mut().resize(w, hgt);
        let shown = text(&render(&h.runner.app, w, hgt));
        for source in sources {
            // A source may wrap between its words, never inside one.
            let words: Vec<&str> = source.split(' ').collect();
            for word in words {
                assert!(
                    shown.contains(word),
                    "{w}x{hgt}: {word:?} is not shown:\n{shown}"
                );
            }
        }
        for word in ["passive", "here", "lastpiece"] {
            assert!(
                shown.contains(word),
                "{w}x{hgt}: {word:?} is not shown:\n{shown}"
            );
        }
    }
}

/// Watched dialogues of one proxy have names equal but for their number: each tab shows what
/// tells it apart, and all four show in the free width of a 120-column bar (none hidden
/// behind `1›`); dialogues with equal names show their short DialogID.
#[tokio::test]
async fn tabs_tell_dialogues_apart_and_use_the_free_width() {
    // The fixture's four dialogues, named as the proxy names what it watches.
    let mut h = scripted("dark");
    let app = &mut h.runner.app;
    assert_eq!(app.workspace().dialogues().len(), 4);
    for n in 0..4 {
        let d = app.workspace_mut().dialogues_mut().nth(n).unwrap();
        d.name = format!("127.0.0.1:18080 live {}", n + 1);
        d.status = Status::Live;
    }
    let first = app.workspace().dialogues().id_at(0).unwrap();
    app.show_dialogue(first);
    let top = |h: &Harness, w: u16| {
        text(&render(&h.runner.app, w, 30))
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let bar = top(&h, 120);
    for n in 1..=4 {
        assert!(
            bar.contains(&format!("live {n}")),
            "tab {n} not told apart: {bar}"
        );
    }
    assert!(!bar.contains('›'), "a tab hidden with room to spare: {bar}");
    // Equal names: the short DialogID tells them apart.
    for (n, id) in (0..4).zip([
        "aaaa1111-x-1",
        "bbbb2222-x-2",
        "cccc3333-x-3",
        "dddd4444-x-4",
    ]) {
        let d = h.runner.app.workspace_mut().dialogues_mut().nth(n).unwrap();
        d.name = "127.0.0.1:18080 live".into();
        d.link.dialog_id = Some(id.into());
    }
    let bar = top(&h, 120);
    for id in ["aaaa", "bbbb", "cccc", "dddd"] {
        assert!(bar.contains(id), "DialogID {id} not shown: {bar}");
    }
}

/// At a tiny size (30x8) a hint too long for its place shows not at all, never as a fragment
/// cut into a field (`Question     t: compose a Re`).
#[tokio::test]
async fn a_tiny_screen_shows_no_hint_fragment() {
    let mut h = state("usr_fresh_dialogue", "dark").await;
    let server = h.runner.app.workspace().servers().id_at(0).unwrap();
    let mut d = DialogueState::new(9997, "domain-access #2".into(), server, Interface::Dac);
    d.status = Status::Open;
    let id = h.runner.app.workspace_mut().add_dialogue(d);
    h.runner.app.show_dialogue(id);
    h.runner.app.screen_mut().set_focus(Pane::Composer);
    for (w, hgt) in [(30u16, 8u16), (40, 10), (30, 12)] {
        h.runner.app.screen_mut().resize(w, hgt);
        let shown = text(&render(&h.runner.app, w, hgt));
        assert!(
            !shown.contains("compose a") || shown.contains("compose a Request below and press"),
            "{w}x{hgt}: a hint cut to a fragment:\n{shown}"
        );
        assert!(shown.contains("┃Question          "), "{w}x{hgt}:\n{shown}");
    }
}
