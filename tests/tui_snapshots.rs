//! Snapshots of every pane and overlay of the explorer, drawn on ratatui's TestBackend: a
//! feasibility dialogue with every PA Status, commitments in all three states, findings,
//! each kind of failed turn, a BKN-USR dialogue, the composer (form and raw), the protocol
//! log, a pending turn, and each overlay. Each state is drawn at 120x40 and 80x24, in the dark
//! and the high-contrast themes; a snapshot holds the characters and a letter-per-cell map of
//! the styles with its legend, so colours are checked too.
//!
//! Each state is reached by events only (`tui::testing::Fixture`, a frame drawn after each
//! as the runner draws): the session `tests/fixtures/tui/states.json` read as Ctrl-O reads
//! one (the shipped Domain Access tour and User State Refinement dialogues, and a dialogue
//! written for these tests), then keys and clicks, and what the engine and the runner would
//! report (a dialogue opened, a turn, a log line, certify progress, a list of sessions).
//! Nothing is carried out: the scenes are exact, their time the fixture's.
//! Update the snapshots with `INSTA_UPDATE=always cargo test tui_snapshots::` and review
//! the diff.

use crate::common;

use bkn_explorer::client::connection::{DialogIdOrigin, ServerSummary};
use bkn_explorer::client::defaults::Chosen;
use bkn_explorer::client::engine::{DialogueKey, EngineEvent};
use bkn_explorer::client::event::{Event as ClientEvent, LogEntry, LogKind};
use bkn_explorer::client::turn::{Reply, Turn};
use bkn_explorer::protocol::Interface;
use bkn_explorer::protocol::dac::Kind;
use bkn_explorer::protocol::raw::RawJson;
use bkn_explorer::protocol::resources::{Vocabulary, Words};
use bkn_explorer::session::Session;
use bkn_explorer::tui::action::{Action, Pane};
use bkn_explorer::tui::app::DetailTab;
use bkn_explorer::tui::effect::Effect;
use bkn_explorer::tui::event::{Event, OpenPurpose};
use bkn_explorer::tui::testing::{Drive, Fixture};
use bkn_explorer::tui::theme::Theme;
use common::tui::{normalize, options, render, root, styles, text};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use ratatui::style::Color;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The dialogues of the fixture session.
const TOUR: usize = 0;
const STATES: usize = 1;
const USR: usize = 2;
const RECONNECT: usize = 3;

/// A built-in theme by name, or NO_COLOR's (`no-color`: no colour at all, no theme file).
fn theme(name: &str) -> Theme {
    match name {
        "no-color" => Theme::no_color(),
        name => Theme::built_in(name).expect("a built-in theme"),
    }
}

/// The explorer in `theme`, the fixture session opened in it (as Ctrl-O opens one), a
/// frame drawn after each event as the runner draws.
fn scripted(theme: Theme) -> Fixture {
    scripted_with(theme, |_| {})
}

/// The same, the session file changed by `change` first (a dialogue named otherwise, a
/// turn more).
fn scripted_with(theme: Theme, change: impl FnOnce(&mut Session)) -> Fixture {
    scripted_in(theme, &root(), change)
}

/// The same in a working folder of the test's naming (a prompt that writes names it: as on a
/// user's machine, not this checkout's).
fn scripted_in(theme: Theme, cwd: &std::path::Path, change: impl FnOnce(&mut Session)) -> Fixture {
    let mut options = options(Vec::new(), "dark");
    options.theme = theme;
    options.paths.cwd = cwd.to_owned();
    let (h, _) = Fixture::start(options);
    let mut h = h.framed();
    let mut session = Session::load(&root().join("tests/fixtures/tui/states.json"))
        .expect("the fixture session loads");
    // As the runner reads a file: judged by today's rules.
    session.recheck();
    change(&mut session);
    h.event(Event::SessionRead {
        stamp: None,
        path: PathBuf::from("test-session.json"),
        purpose: OpenPurpose::Open,
        result: Ok(session),
    });
    h
}

/// Shows a turn of a dialogue in a detail tab, the focus on a pane: clicks on its tab, its
/// row, the detail tab and the pane, as a user does.
fn show(h: &mut Fixture, dialogue: usize, turn: usize, tab: DetailTab, focus: Pane) {
    h.show_nth(dialogue);
    h.select_turn(turn);
    h.detail_tab(tab);
    h.focus(focus);
}

/// The engine key of the dialogue `n`th in the tabs.
fn key_of(h: &Fixture, n: usize) -> DialogueKey {
    h.app()
        .workspace()
        .dialogues()
        .nth(n)
        .expect("the dialogue")
        .key
}

/// The tour's recorded turns.
fn tour_turns(h: &Fixture) -> Vec<Turn> {
    let tour = h.app().workspace().dialogues().nth(TOUR).expect("the tour");
    tour.transcript
        .turns()
        .iter()
        .map(|t| t.turn.clone())
        .collect()
}

/// The keys of the dialogues effects open.
fn opens(fx: &[Effect]) -> Vec<DialogueKey> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Open { key, .. } => Some(*key),
            _ => None,
        })
        .collect()
}

/// `R` on the dialogue `n`th in the tabs, and the engine reports it open again under its
/// DialogID (the server kept it), on a server that publishes `vocabulary`.
fn reconnected(h: &mut Fixture, n: usize, vocabulary: Vocabulary) -> DialogueKey {
    h.show_nth(n);
    h.focus(Pane::Transcript);
    let fx = h.key(KeyCode::Char('R'));
    let key = *opens(&fx).first().expect("R opens the dialogue again");
    let d = h
        .app()
        .workspace()
        .dialogue_by_key(key)
        .expect("the dialogue");
    let (dialog_id, next_turn) = (
        d.link.dialog_id().unwrap_or_default().to_owned(),
        d.link.next_turn(),
    );
    let server = h.app().workspace().server(d.server).expect("its server");
    let summary = ServerSummary {
        name: server.name.clone(),
        protocol_version: "2026-07-28".into(),
        has_tools: true,
        bkn_tools: [(Interface::Dac, Interface::Dac.tool_name().to_owned())].into(),
        ..Default::default()
    };
    h.event(Event::Engine(Box::new(EngineEvent::Opened {
        dialogue: key,
        connection: key,
        dialog_id,
        origin: DialogIdOrigin::Client,
        tool: Interface::Dac.tool_name().into(),
        summary: Box::new(summary),
        vocabulary: Box::new(vocabulary),
        defaults: Box::new(Chosen::built_in()),
        continued: true,
        next_turn,
    })));
    key
}

/// `n` on the server of the dialogue `n`th in the tabs: the new dialogue's engine key.
fn new_dialogue(h: &mut Fixture, n: usize) -> DialogueKey {
    h.show_nth(n);
    h.focus(Pane::Transcript);
    let fx = h.key(KeyCode::Char('n'));
    *opens(&fx).first().expect("n opens a dialogue")
}

/// A turn the engine reports finished on a dialogue.
fn finished(h: &mut Fixture, key: DialogueKey, turn: Turn) {
    let next_turn = turn.turn_index().map_or(0, |t| t + 1);
    h.event(Event::Engine(Box::new(EngineEvent::TurnFinished {
        dialogue: key,
        turn,
        next_turn,
    })));
}

/// A dialogue the engine could not open, and why.
fn failed(h: &mut Fixture, key: DialogueKey, error: &str) {
    h.event(Event::Engine(Box::new(EngineEvent::Failed {
        dialogue: key,
        error: error.into(),
        summary: None,
        needs_input: None,
    })));
}

/// Types text key by key, a newline as Enter (a list of completions, which takes Enter,
/// closed first with Esc, as a user would).
fn type_text(h: &mut Fixture, text: &str) {
    for ch in text.chars() {
        if ch == '\n' {
            if h.current().composer.completion.is_some() {
                h.key(KeyCode::Esc);
            }
            h.key(KeyCode::Enter);
        } else {
            h.key(KeyCode::Char(ch));
        }
    }
}

/// Clears the composer (F8) and picks a Kind on its Kind row with → (Alt-↑ reaches it). A
/// composer left in raw JSON (the tour's last Request has a Kind the form does not know)
/// is given a Kind there first, and goes back to the form (F2).
fn fresh_composer(h: &mut Fixture, kind: Kind) {
    h.focus(Pane::Composer);
    h.key(KeyCode::F(8));
    if h.current().composer.mode == bkn_explorer::tui::composer::Mode::Raw {
        // After the `{` of the `{}` left.
        h.key(KeyCode::Up);
        h.key(KeyCode::End);
        h.type_text("\"Kind\": \"semantic_grounding\"");
        h.key(KeyCode::F(2));
    }
    for _ in 0..12 {
        h.key_with(KeyCode::Up, KeyModifiers::ALT);
    }
    for _ in 0..10 {
        if h.current().composer.kind == kind {
            return;
        }
        h.key(KeyCode::Right);
    }
    panic!(
        "the Kind row never showed {}:\n{}",
        kind.as_str(),
        text(&render(h.app(), 120, 40))
    );
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

/// A fresh feasibility form in the tour's composer, with the focus on its Steps: the tour
/// reconnected (R) to a server publishing the reference Domain Access's names.
fn feasibility_form(h: &mut Fixture) {
    reconnected(h, TOUR, vocabulary());
    show(h, TOUR, 6, DetailTab::Feasibility, Pane::Composer);
    fresh_composer(h, Kind::Feasibility);
    go_to(h, "Steps");
}

/// Tabs to a composer field (Tab or Shift-Tab), as a user does.
fn go_to(h: &mut Fixture, label: &str) {
    for _ in 0..12 {
        let c = &h.current().composer;
        let target = c
            .fields
            .iter()
            .position(|f| f.spec.label == label)
            .unwrap_or_else(|| panic!("no field {label}"));
        match c.focused_field().map(|i| i.cmp(&target)) {
            Some(std::cmp::Ordering::Equal) => return,
            Some(std::cmp::Ordering::Greater) => h.key(KeyCode::BackTab),
            _ => h.key(KeyCode::Tab),
        };
    }
    panic!("could not reach the field {label}");
}

/// A recorded turn (what a session file holds).
fn recorded_turn((request, response): (serde_json::Value, serde_json::Value)) -> Turn {
    Turn {
        request: RawJson::from_value(&request),
        reply: Reply::Response(RawJson::from_value(&response)),
        findings: Vec::new(),
        sent: "2026-01-01T00:00:00.000Z".into(),
        received: Some("2026-01-01T00:00:00.004Z".into()),
        latency_ms: 4.0,
        new_session: false,
        asked: Vec::new(),
    }
}

/// The fixture session with a turn more in the dialogue of every PA Status (its row 6).
fn with_turn(theme: Theme, turn: (serde_json::Value, serde_json::Value)) -> Fixture {
    scripted_with(theme, |s| {
        s.dialogues[STATES].turns.push(recorded_turn(turn));
    })
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

/// The states, by name: each makes a scripted explorer ready to draw, by the events that
/// lead there (keys and clicks, what the engine and the runner report).
fn state(name: &str, theme_name: &str) -> Fixture {
    state_in(name, theme(theme_name))
}

fn state_in(name: &str, theme: Theme) -> Fixture {
    let mut h = match name {
        "feasibility_contradicted" => with_turn(theme, contradicted_feasibility()),
        "feasibility_foreign" | "answer_foreign" => with_turn(theme, foreign_feasibility()),
        // A long title stops at the border.
        "long_title" => scripted_with(theme, |s| {
            s.dialogues[TOUR].name = Some(
                "a dialogue with a very long name that a user typed to remember what it was about"
                    .into(),
            );
        }),
        "overlay_resources_write" => scripted_in(theme, std::path::Path::new("/home/ana"), |_| {}),
        _ => scripted(theme),
    };
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
        // The dialogue is continued (R), and its server dies at once, as the turn shown says
        // it did before.
        "no_reply_server_gone" => {
            show(&mut h, STATES, 4, DetailTab::Answer, Pane::Transcript);
            let fx = h.key(KeyCode::Char('R'));
            failed(
                &mut h,
                opens(&fx)[0],
                "the server closed the connection; the server exited with status 101",
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
        "feasibility_contradicted" | "feasibility_foreign" => {
            show(&mut h, STATES, 6, DetailTab::Feasibility, Pane::Transcript)
        }
        // A foreign server's values that conform to nothing: each shown as it came, marked.
        "answer_foreign" => show(&mut h, STATES, 6, DetailTab::Answer, Pane::Detail),
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
        // A new dialogue on the tour's server, whose command cannot start.
        "dialogue_failed" => {
            let key = new_dialogue(&mut h, TOUR);
            failed(
                &mut h,
                key,
                "domain-access: cannot start bkn-explorer: No such file or directory (os error 2)",
            );
            h.focus(Pane::Sidebar);
        }
        // A new BKN-USR dialogue opens on the User State tab.
        "usr_fresh_dialogue" => {
            new_dialogue(&mut h, USR);
            h.focus(Pane::Composer);
        }
        // Many dialogues: the tab of the one in view is always on the bar.
        "tabs_many_dialogues" => {
            show(&mut h, TOUR, 9, DetailTab::Answer, Pane::Transcript);
            for _ in 0..12 {
                h.focus(Pane::Transcript);
                h.key(KeyCode::Char('n'));
            }
            h.focus(Pane::Transcript);
        }
        "long_title" => show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript),
        "pending_turn" | "pending_task" => {
            let key = reconnected(&mut h, STATES, Vocabulary::default());
            fresh_composer(&mut h, Kind::SemanticGrounding);
            go_to(&mut h, "Terms");
            h.type_text("bench");
            h.key(KeyCode::F(5));
            assert!(
                h.current().link.pending().is_some(),
                "F5 sent the turn:\n{}",
                text(&render(h.app(), 120, 40))
            );
            show(&mut h, STATES, 5, DetailTab::Answer, Pane::Transcript);
            let client = |e: ClientEvent| Event::Engine(Box::new(EngineEvent::Client(e)));
            if name == "pending_turn" {
                h.event(client(ClientEvent::Progress {
                    connection: key,
                    progress: 7.0,
                    total: Some(100.0),
                    message: None,
                }));
            } else {
                // The server answered with a Task (SEP-2663): its status and message shown.
                h.event(client(ClientEvent::Task {
                    connection: key,
                    note: bkn_explorer::client::task::TaskNote {
                        task_id: "task-7".into(),
                        status: "input_required".into(),
                        message: Some("waiting for a confirmation".into()),
                    },
                }));
            }
            // 2.5 s after it was sent, three ticks of the spinner.
            let sent = h
                .app()
                .current_dialogue()
                .unwrap()
                .link
                .pending()
                .unwrap()
                .started;
            let waited = h.app().now() - sent;
            h.advance(Duration::from_millis(2500 - 30) - waited);
            for _ in 0..3 {
                h.event(Event::Tick);
            }
        }
        "composer_form" => {
            feasibility_form(&mut h);
            // Two statements: one fine, one broken half-way; then the Space.
            type_text(
                &mut h,
                "MM-Add Nil Kiosk#3 At MLoc:Square.Stage\nMM-Move Nil Avatar#7 Frm MLoc",
            );
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
            h.event(Event::Input(ratatui::crossterm::event::Event::Paste(
                lines.join("\n"),
            )));
            // Up to the broken line, so that the field has scrolled.
            h.key(KeyCode::Up);
            h.key(KeyCode::Up);
        }
        // The completion list, under the word being typed.
        "composer_completion" => {
            feasibility_form(&mut h);
            h.type_text("MM-Add Nil K");
        }
        // A server without resources: the composer says why nothing completes.
        "composer_why_empty" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Composer);
            fresh_composer(&mut h, Kind::Affordances);
            go_to(&mut h, "Entity IDs");
        }
        "composer_raw" => {
            feasibility_form(&mut h);
            h.type_text("Hide Nil Bench#2");
            h.key(KeyCode::F(2));
        }
        "protocol_log" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            log_entries(&mut h);
            h.focus(Pane::Log);
        }
        // Enter on a log row: the whole entry, pretty, wrapped.
        "overlay_log_entry" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            log_entries(&mut h);
            h.focus(Pane::Log);
            h.key(KeyCode::Home);
            h.key(KeyCode::Down);
            h.key(KeyCode::Enter);
        }
        // What the run said: a save, a Request the server refused (a turn of the dialogue
        // of reconnects), and that dialogue's server dying at its reconnect.
        "overlay_messages" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.event(Event::Saved {
                path: "/home/ana/sessions/square.json".into(),
                purpose: bkn_explorer::tui::event::SavePurpose::Explicit,
                result: Ok(()),
                stamp: None,
            });
            let refused = tour_turns(&h).swap_remove(9);
            let reconnects = key_of(&h, RECONNECT);
            finished(&mut h, reconnects, refused);
            h.show_nth(RECONNECT);
            h.focus(Pane::Transcript);
            let fx = h.key(KeyCode::Char('R'));
            failed(
                &mut h,
                opens(&fx)[0],
                "the server closed the connection; the server exited with status 101; its last stderr line: thread 'main' panicked at src/fault.rs:1:1: crashing during a call, as asked",
            );
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
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
            h.event(Event::Asked(ask_form()));
            h.key(KeyCode::Tab);
            h.key(KeyCode::Right);
            h.key(KeyCode::Enter);
        }
        // A sampling: the messages, and the reply being written.
        "overlay_ask_sampling" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            h.event(Event::Asked(ask_sampling()));
            h.type_text("The Stage is free at noon.");
        }
        // A scenario run in the explorer: the steps' verdicts in the transcript and the
        // Expect tab on the failing one.
        "scenario_run" => play_scenario_run(&mut h),
        "overlay_help" => {
            h.act(Action::Help);
        }
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
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            log_entries(&mut h);
            h.focus(Pane::Log);
            h.act(Action::Search);
            h.type_text("protocolversion");
        }
        "overlay_palette" => {
            h.focus(Pane::Transcript);
            h.act(Action::Palette);
            h.type_text("theme");
        }
        // The session saved as my-session.json, then Save-as again.
        "overlay_save_as" => {
            h.event(Event::Saved {
                path: "/home/ana/sessions/my-session.json".into(),
                purpose: bkn_explorer::tui::event::SavePurpose::Explicit,
                result: Ok(()),
                stamp: None,
            });
            h.act(Action::SaveAs);
        }
        // Save-as onto a file that exists asks first.
        "overlay_overwrite" => {
            // What the runner finds out about the typed path (a real file in the tmux test).
            h.event(Event::SaveTarget {
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
        // Ctrl-O: the runner lists the repository's sessions/.
        "overlay_open" => {
            h.act(Action::Open);
            h.event(Event::PickerItems(
                bkn_explorer::tui::persist::picker_items(&root().join("sessions"), None),
            ));
        }
        // Three turns came on the dialogue of every PA Status since the session was opened
        // (answered as the tour's first three were).
        "overlay_quit_unsaved" => {
            let key = key_of(&h, STATES);
            for turn in tour_turns(&h).into_iter().take(3) {
                finished(&mut h, key, turn);
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
        "certify_unreachable" => certify_pane(&mut h, "unreachable"),
        // The Resources overlay: the list, the second resource read (pretty JSON).
        "overlay_resources" => {
            let key = reconnected(&mut h, TOUR, Vocabulary::default());
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            resources_overlay(&mut h, key);
        }
        // W in the Resources overlay: the prompt for the path over it, the resource read
        // still shown under it.
        "overlay_resources_write" => {
            let key = reconnected(&mut h, TOUR, Vocabulary::default());
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
            resources_overlay(&mut h, key);
            h.key(KeyCode::Char('W'));
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
fn certify_pane(h: &mut Fixture, stage: &str) {
    use bkn_explorer::certify::rules::RULES;
    use bkn_explorer::certify::{Evidence, RuleResult, Verdict};
    use bkn_explorer::client::turn::{Reply, Turn};
    use bkn_explorer::protocol::raw::RawJson;
    use bkn_explorer::tui::certify::CertifyEvent;
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
    let done = if matches!(stage, "running" | "unreachable") {
        12
    } else {
        rules.len()
    };
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
    let report = (!matches!(stage, "running" | "unreachable")).then(|| {
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
    // V on the tour's server, and what the runner reports.
    show(h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
    h.act(Action::Certify);
    let run = h.app().certify().expect("the pane").run;
    let send = |h: &mut Fixture, e: CertifyEvent| {
        h.event(Event::Certify(e));
    };
    send(
        h,
        CertifyEvent::Learnt {
            run,
            total: rules.len(),
            learnt: vec!["tool bkn_dac (found by its Header const), MCP 2026-07-28".into()],
        },
    );
    if stage == "unreachable" {
        send(
            h,
            CertifyEvent::Done {
                run,
                result: Err(
                    "python3 serves no BKN tool (none has Header PGM-KDA-V1.0 or PGM-KUS-V1.0, \
                     none is named bkn_dac or bkn_usr); its tools: echo, add, weather_forecast, \
                     translate, summarise"
                        .into(),
                ),
            },
        );
    } else {
        for (index, result) in results.into_iter().enumerate() {
            send(
                h,
                CertifyEvent::Started {
                    run,
                    index,
                    rule: result.rule,
                },
            );
            send(
                h,
                CertifyEvent::Finished {
                    run,
                    index,
                    result: Box::new(result),
                },
            );
        }
        match report {
            None => send(
                h,
                CertifyEvent::Started {
                    run,
                    index: 12,
                    rule: rules[12],
                },
            ),
            Some(report) => send(
                h,
                CertifyEvent::Done {
                    run,
                    result: Ok(report),
                },
            ),
        }
        if stage == "save" {
            // Only the failed rules (f), the report saved as Markdown (m) over a file there.
            h.key(KeyCode::Char('f'));
            h.key(KeyCode::Char('m'));
            h.key(KeyCode::Enter);
            send(
                h,
                CertifyEvent::Exists {
                    path: "/work/certify-domain-access.md".into(),
                },
            );
        } else {
            // The failed rule selected.
            for _ in 0..7 {
                h.key(KeyCode::Down);
            }
        }
    }
    for _ in 0..3 {
        h.event(Event::Tick);
    }
}

/// A scenario's run as the runner reports it, made of the tour's recorded turns: three
/// passed, one failed an expectation, one could not run.
fn play_scenario_run(h: &mut Fixture) {
    use bkn_explorer::scenario::expect::Failure;
    use bkn_explorer::scenario::run::StepRun;
    use bkn_explorer::tui::event::{ScenarioEvent, ScenarioInfo};
    show(h, TOUR, 0, DetailTab::Answer, Pane::Transcript);
    h.act(Action::RunScenario);
    h.retype_prompt("/nowhere/kiosk.yaml");
    h.key(KeyCode::Enter);
    let key = h.app().workspace().dialogues().values().last().unwrap().key;
    let turns = tour_turns(h);
    let send = |h: &mut Fixture, e: ScenarioEvent| {
        h.event(Event::Scenario(e));
    };
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
    // The failing step's Expect tab.
    h.select_turn(3);
    h.detail_tab(DetailTab::Expect);
    h.focus(Pane::Transcript);
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

/// Lines of the protocol log, as connection 1 reports them.
fn log_entries(h: &mut Fixture) {
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
        h.event(Event::Engine(Box::new(EngineEvent::Client(
            ClientEvent::Log(e),
        ))));
    }
}

/// The Resources overlay (F3) on the tour's connection: the reference Domain Access's
/// resources listed, its Square read (↓, Enter).
fn resources_overlay(h: &mut Fixture, key: DialogueKey) {
    use bkn_explorer::client::resources::{Listed, Read};
    let listed = |uri: &str, title: &str| Listed {
        uri: uri.into(),
        name: uri.into(),
        title: Some(title.into()),
        description: None,
        mime_type: Some("application/json".into()),
    };
    h.key(KeyCode::F(3));
    h.event(Event::Engine(Box::new(EngineEvent::ResourcesListed {
        dialogue: key,
        result: Ok(vec![
            listed("dac://domain", "The domain MI:PublicSquare"),
            listed("dac://spaces/Space:Square", "Space:Square (central square)"),
            listed("dac://spaces/Space:Market", "Space:Market (market hall)"),
        ]),
    })));
    h.key(KeyCode::Down);
    h.key(KeyCode::Enter);
    h.event(Event::Engine(Box::new(EngineEvent::ResourceRead {
        dialogue: key,
        uri: "dac://spaces/Space:Square".into(),
        result: Ok(Read {
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
    })));
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

fn snapshot(name: &str) {
    let no_color = NO_COLOR.contains(&name).then_some("no-color");
    for theme in ["dark", "high-contrast"].into_iter().chain(no_color) {
        for (w, hgt) in [(120u16, 40u16), (80, 24)] {
            let mut h = state(name, theme);
            h.resize(w, hgt);
            let buffer = render(h.app(), w, hgt);
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
            #[test]
            fn $name() {
                snapshot(stringify!($name));
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
#[test]
fn no_color_shows_the_selected_row_and_the_search_matches() {
    for name in [
        "overlay_palette",
        "overlay_open",
        "search_raw",
        "search_log",
    ] {
        for (w, hgt) in [(120u16, 40u16), (80, 24)] {
            let mut h = state(name, "no-color");
            h.resize(w, hgt);
            let buffer = render(h.app(), w, hgt);
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
#[test]
fn every_colour_on_screen_comes_from_the_theme() {
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
        let mut h = state_in(name, probe.clone());
        for (w, hgt) in [(120u16, 40u16), (80, 24), (200, 60)] {
            h.resize(w, hgt);
            let buffer = render(h.app(), w, hgt);
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
#[test]
fn the_states_cover_every_pa_status_and_commitment_state() {
    let h = state("feasibility_every_status", "dark");
    let screen = text(&render(h.app(), 200, 60));
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
    let h = state("commitments_three_states", "dark");
    let screen = text(&render(h.app(), 200, 60));
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
#[test]
fn every_drawn_character_is_readable_in_every_theme() {
    let mut failures = Vec::new();
    for theme in ["dark", "light", "high-contrast"] {
        for name in ALL {
            let mut h = state(name, theme);
            let need = h.app().theme().promised_contrast();
            let colors = h.app().theme().colors.clone();
            for (w, hgt) in [(120u16, 40u16), (80, 24)] {
                h.resize(w, hgt);
                let buffer = render(h.app(), w, hgt);
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
#[test]
fn user_state_wraps_every_long_line() {
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
        let mut h = scripted_with(theme("dark"), |s| {
            s.dialogues[USR]
                .turns
                .push(recorded_turn((request.clone(), response.clone())));
        });
        show(&mut h, USR, 8, DetailTab::UserState, Pane::Detail);
        // To the tab's last page.
        h.key(KeyCode::End);
        h.resize(w, hgt);
        h.key(KeyCode::End);
        let shown = text(&render(h.app(), w, hgt));
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
#[test]
fn tabs_tell_dialogues_apart_and_use_the_free_width() {
    use bkn_explorer::session::journal::Line;
    use bkn_explorer::tui::event::WatchEvent;
    let top = |h: &Fixture, w: u16| {
        text(&render(h.app(), w, 30))
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    // Four dialogues of one proxy's recording, followed as they pass it.
    let (h, _) = Fixture::start(options(Vec::new(), "dark"));
    let mut h = h.framed();
    let line = |l: Line| Event::Watch(WatchEvent::Line(Box::new(l)));
    h.event(Event::Watch(WatchEvent::Started(PathBuf::from(
        "/data/recordings/r.jsonl",
    ))));
    let server = bkn_explorer::client::spec::ServerSpec::from_url("http://127.0.0.1:18080/mcp")
        .expect("a URL");
    let name = server.name.clone();
    h.event(line(Line::Start {
        name: None,
        servers: vec![server],
        lock: None,
    }));
    for id in 1..=4 {
        h.event(line(Line::Dialogue {
            id,
            server: name.clone(),
            interface: Interface::Dac,
            dialog_id: format!("{id}{id}{id}{id}-x"),
            protocol_version: None,
        }));
    }
    assert_eq!(h.app().workspace().dialogues().len(), 4);
    let bar = top(&h, 120);
    for n in 1..=4 {
        assert!(
            bar.contains(&format!("proxied {n}")),
            "tab {n} not told apart: {bar}"
        );
    }
    assert!(!bar.contains('›'), "a tab hidden with room to spare: {bar}");
    // Equal names (a session file's): the short DialogID tells them apart.
    let ids = [
        "aaaa1111-x-1",
        "bbbb2222-x-2",
        "cccc3333-x-3",
        "dddd4444-x-4",
    ];
    let h = scripted_with(theme("dark"), |s| {
        for (d, id) in s.dialogues.iter_mut().zip(ids) {
            d.name = Some("127.0.0.1:18080 live".into());
            d.dialog_id = id.into();
        }
    });
    let bar = top(&h, 120);
    for id in ["aaaa", "bbbb", "cccc", "dddd"] {
        assert!(bar.contains(id), "DialogID {id} not shown: {bar}");
    }
}

/// At a tiny size (30x8) a hint too long for its place shows not at all, never as a fragment
/// cut into a field (`Question     t: compose a Re`).
#[test]
fn a_tiny_screen_shows_no_hint_fragment() {
    let mut h = state("usr_fresh_dialogue", "dark");
    // A Domain Access dialogue of its own, open, a clarification being composed.
    let key = new_dialogue(&mut h, TOUR);
    h.opened(key);
    fresh_composer(&mut h, Kind::Clarification);
    go_to(&mut h, "Question");
    for (w, hgt) in [(30u16, 8u16), (40, 10), (30, 12)] {
        h.resize(w, hgt);
        let shown = text(&render(h.app(), w, hgt));
        assert!(
            !shown.contains("compose a") || shown.contains("compose a Request below and press"),
            "{w}x{hgt}: a hint cut to a fragment:\n{shown}"
        );
        assert!(shown.contains("┃Question          "), "{w}x{hgt}:\n{shown}");
    }
}
