//! Snapshots of every pane and overlay of the explorer, drawn on ratatui's TestBackend from
//! scripted states: a feasibility dialogue with every PA Status, commitments in all three
//! states, findings, each kind of failed turn, a BKN-USR dialogue, the composer (form and
//! raw), the protocol log, a pending turn, and each overlay. Each state is drawn at 120x40 and
//! 80x24, in the dark and the high-contrast themes; a snapshot holds the characters and a
//! letter-per-cell map of the styles with its legend, so colours are checked too.
//!
//! The states come from `tests/fixtures/tui/states.json`, a session file (the shipped Domain
//! Access tour and User State Refinement dialogues, and a dialogue written for these tests).
//! Update the snapshots with `INSTA_UPDATE=always cargo test --test tui_snapshots` and review
//! the diff.

mod common;

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

fn scripted(theme: &str) -> Harness {
    let mut h = Harness::new(options(Vec::new(), theme));
    let session = Session::load(&root().join("tests/fixtures/tui/states.json"))
        .expect("the fixture session loads");
    h.app.load_session(session);
    h
}

fn show(h: &mut Harness, dialogue: usize, turn: usize, tab: DetailTab, focus: Pane) {
    h.app.current = Some(dialogue);
    h.app.dialogues[dialogue].select(Some(turn));
    h.app.detail_tab = tab;
    h.app.focus = focus;
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

/// The states, by name: each makes a scripted explorer ready to draw.
async fn state(name: &str, theme: &str) -> Harness {
    let mut h = scripted(theme);
    match name {
        "feasibility_every_status" => show(&mut h, STATES, 0, DetailTab::Feasibility, Pane::Detail),
        "commitments_three_states" => show(&mut h, TOUR, 7, DetailTab::Commitments, Pane::Detail),
        "answer_affordances" => show(&mut h, TOUR, 2, DetailTab::Answer, Pane::Transcript),
        "answer_grounding" => show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Transcript),
        "findings" => show(&mut h, STATES, 1, DetailTab::Findings, Pane::Detail),
        "raw" => show(&mut h, TOUR, 0, DetailTab::Raw, Pane::Detail),
        "no_reply_server_gone" => {
            show(&mut h, STATES, 4, DetailTab::Answer, Pane::Transcript);
            h.app.notify(
                "the server closed the connection; the server exited with status 101",
                Severity::Error,
            );
        }
        "tool_error" => show(&mut h, TOUR, 9, DetailTab::Answer, Pane::Transcript),
        "user_state" => show(&mut h, USR, 1, DetailTab::UserState, Pane::Detail),
        "dialogue_failed" => {
            h.app.servers[0].status = ServerStatus::Failed(
                "cannot start bkn-explorer: No such file or directory (os error 2)".into(),
            );
            let mut d = DialogueState::new(9999, "domain-access #2".into(), 0, Interface::Dac);
            d.status = Status::Failed(
                "domain-access: cannot start bkn-explorer: No such file or directory (os error 2)"
                    .into(),
            );
            h.app.dialogues.push(d);
            h.app.current = Some(h.app.dialogues.len() - 1);
            h.app.focus = Pane::Sidebar;
        }
        "pending_turn" => {
            show(&mut h, STATES, 5, DetailTab::Answer, Pane::Transcript);
            let started = h.app.now - Duration::from_millis(2500);
            h.app.dialogues[STATES].pending = Some(Pending {
                started,
                request: None,
                cancelling: false,
                progress: Some((7.0, Some(100.0))),
            });
            h.app.ticks = 3;
        }
        "composer_form" => {
            show(&mut h, TOUR, 6, DetailTab::Feasibility, Pane::Composer);
            h.app.servers[0].vocabulary = vocabulary();
            let mut c = Composer::new(Interface::Dac);
            c.set_kind(Kind::Feasibility);
            h.app.dialogues[TOUR].composer = c;
            // Down to Steps, then two statements: one fine, one broken half-way.
            h.keys(&[KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Down]);
            h.type_text("MM-Add Nil Kiosk#3 At MLoc:Square.Stage\nMM-Move Nil Avatar#7 Frm MLoc");
            h.keys(&[KeyCode::Up, KeyCode::Up, KeyCode::Up]);
            h.type_text("Space:Sq");
        }
        "composer_raw" => {
            show(&mut h, TOUR, 6, DetailTab::Feasibility, Pane::Composer);
            let mut c = Composer::new(Interface::Dac);
            c.set_kind(Kind::Feasibility);
            h.app.dialogues[TOUR].composer = c;
            h.keys(&[KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Down]);
            h.type_text("Hide Nil Bench#2");
            h.key(KeyCode::F(2));
        }
        "protocol_log" => {
            show(&mut h, TOUR, 0, DetailTab::Answer, Pane::Log);
            h.app.act(Action::ToggleLog);
            h.app.focus = Pane::Log;
            let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_996_800_123);
            for (kind, text) in [
                (
                    LogKind::Sent,
                    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
                ),
                (
                    LogKind::Received,
                    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"bkn-explorer-dac"}}}"#,
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
                h.app.log.push(e);
            }
        }
        "overlay_help" => h.app.act(Action::Help),
        "overlay_palette" => {
            h.app.focus = Pane::Transcript;
            h.app.act(Action::Palette);
            h.type_text("theme");
        }
        "overlay_save_as" => {
            h.app.session.path = Some("sessions/my-session.json".into());
            h.app.act(Action::SaveAs);
        }
        "overlay_open" => {
            h.app.act(Action::Open);
            h.until(
                Duration::from_secs(10),
                "the session list",
                |app| matches!(&app.overlay, Some(Overlay::Picker(p)) if !p.loading),
            )
            .await;
        }
        "overlay_quit_unsaved" => {
            h.app.session.unsaved = 3;
            h.app.act(Action::Quit);
        }
        other => panic!("no state {other}"),
    }
    h
}

async fn snapshot(name: &str) {
    for theme in ["dark", "high-contrast"] {
        for (w, hgt) in [(120u16, 40u16), (80, 24)] {
            let h = state(name, theme).await;
            let buffer = render(&h.app, w, hgt);
            let shot = format!("{}\n{}", normalize(&text(&buffer)), styles(&buffer));
            insta::assert_snapshot!(format!("{name}@{w}x{hgt}-{theme}"), shot);
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
    findings,
    raw,
    no_reply_server_gone,
    tool_error,
    user_state,
    dialogue_failed,
    pending_turn,
    composer_form,
    composer_raw,
    protocol_log,
    overlay_help,
    overlay_palette,
    overlay_save_as,
    overlay_open,
    overlay_quit_unsaved,
);

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
        h.app.theme = probe.clone();
        for (w, hgt) in [(120u16, 40u16), (80, 24), (200, 60)] {
            let buffer = render(&h.app, w, hgt);
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
    let screen = text(&render(&h.app, 200, 60));
    for status in bkn_explorer::protocol::dac::PaStatus::ALL {
        assert!(
            screen.contains(status.as_str()),
            "{} is not on the feasibility screen:\n{screen}",
            status.as_str()
        );
    }
    let h = state("commitments_three_states", "dark").await;
    let screen = text(&render(&h.app, 200, 60));
    for s in ["retained", "released", "conflicting"] {
        assert!(screen.contains(s), "no {s} commitment:\n{screen}");
    }
}
