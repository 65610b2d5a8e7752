//! Update on its own: events in, state and effects out. No server, no file, no terminal, no
//! clock (the time is the event's); each test is what a user does and what must follow.

use super::*;
use crate::client::connection::{DialogIdOrigin, ServerSummary};
use crate::client::defaults::Chosen;
use crate::client::engine::EngineEvent;
use crate::client::spec::ServerSpec;
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError};
use crate::protocol::Interface;
use crate::protocol::raw::RawJson;
use crate::tui::action::Pane;
use crate::tui::app::{DetailTab, Paths};
use crate::tui::event::{OpenPurpose, SavePurpose};
use crate::tui::overlay::{ConfirmPurpose, Overlay};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Position;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The explorer driven through events (shared with the integration tests).
use crate::tui::testing::{Drive, Fixture as T, options};

fn turn(request: Value, response: Option<Value>) -> Turn {
    Turn {
        request: RawJson::from_value(&request),
        reply: match response {
            Some(r) => Reply::Response(RawJson::from_value(&r)),
            None => Reply::Error(TurnError {
                kind: ErrorKind::Gone,
                message: "the server exited".into(),
            }),
        },
        findings: Vec::new(),
        sent: "2026-11-30T00:00:00.000Z".into(),
        received: Some("2026-11-30T00:00:00.001Z".into()),
        latency_ms: 1.0,
        new_session: false,
        asked: Vec::new(),
    }
}

fn grounding(index: u64) -> Turn {
    turn(
        json!({"Header": "PGM-KDA-V1.0", "Kind": "semantic_grounding", "TurnIndex": index,
               "Terms": [{"Text": "bench"}]}),
        Some(json!({"Header": "PGM-KDA-V1.0", "TurnIndex": index, "Outcome": "answered"})),
    )
}

fn saves(fx: &[Effect]) -> Vec<(PathBuf, SavePurpose, Session)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Save {
                path,
                session,
                purpose,
                ..
            } => Some((path.clone(), *purpose, (**session).clone())),
            _ => None,
        })
        .collect()
}

fn closes(fx: &[Effect]) -> Vec<u64> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Close { key } => Some(*key),
            _ => None,
        })
        .collect()
}

fn quits(fx: &[Effect]) -> Vec<bool> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Quit { clean, .. } => Some(*clean),
            _ => None,
        })
        .collect()
}

use crate::session::Session;

#[test]
fn the_explorer_starts_with_one_open_per_server_and_shows_the_first() {
    let (mut t, fx) = T::new(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ]);
    let opens: Vec<(u64, Interface)> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Open {
                key,
                interface,
                first_turn,
                ..
            } => {
                assert_eq!(*first_turn, 0);
                Some((*key, *interface))
            }
            _ => None,
        })
        .collect();
    assert_eq!(opens, [(1, Interface::Dac), (2, Interface::Usr)]);
    assert_eq!(t.app.workspace.current(), Some(t.dialogue(1)));
    // NAV until the dialogue in view is open; then its composer (issue 29).
    assert_eq!(t.app.screen.focus(), Pane::Sidebar);
    assert!(!t.app.typing());
    t.opened(2);
    assert_eq!(t.app.screen.focus(), Pane::Sidebar, "not the one in view");
    t.opened(1);
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    assert!(t.app.typing());
}

/// Issue 29: a start whose only dialogue failed stays in NAV (q quits, never typed into
/// Question), and the failed server is named by its command line, not "Domain Access".
#[test]
fn a_start_whose_dialogue_failed_stays_in_nav_and_names_the_command() {
    let spec = ServerSpec::from_command_line("no-such-server --flag").unwrap();
    let (mut t, _) = T::new(vec![spec]);
    t.event(Event::Engine(Box::new(EngineEvent::Failed {
        dialogue: 1,
        error: "cannot start no-such-server: No such file or directory (os error 2)".into(),
        summary: None,
        needs_input: None,
    })));
    assert_eq!(t.app.screen.focus(), Pane::Sidebar);
    assert!(!t.app.typing());
    let shown = screen(&t, 120, 40);
    assert!(shown.contains(" NAV "), "{shown}");
    assert!(
        shown.contains("· no-such-server --flag · failed"),
        "{shown}"
    );
    assert!(!shown.contains("Domain Access"), "{shown}");
    assert_eq!(quits(&t.key(KeyCode::Char('q'))), [true]);
    // Answering the recovery offered at start is not moving: the composer still follows.
    let mut o = options(vec![ServerSpec::embedded(Interface::Dac)]);
    o.recover = vec![crate::tui::persist::Recovery {
        path: Some(PathBuf::from("/data/recovered-1.json")),
        drafts: None,
        ending: crate::tui::persist::Ending::Unclean,
    }];
    let (mut t, _) = T::start(o);
    assert!(matches!(t.app.overlay(), Some(Overlay::Confirm(_))));
    t.key(KeyCode::Char('n'));
    assert_eq!(t.app.screen.focus(), Pane::Sidebar);
    t.opened(1);
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    // A key before the dialogue opens is the person's: the composer is not entered after.
    let (mut t, _) = T::new(vec![ServerSpec::embedded(Interface::Dac)]);
    t.key(KeyCode::Char('?'));
    t.key(KeyCode::Esc);
    t.opened(1);
    assert_eq!(t.app.screen.focus(), Pane::Sidebar);
}

#[test]
fn a_usr_dialogue_opens_on_the_user_state_tab() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('2'));
    assert_eq!(t.current().interface, Interface::Usr);
    assert_eq!(t.app.shown_detail_tab(), DetailTab::UserState);
}

#[test]
fn x_on_a_dialogue_with_turns_asks_first_and_n_keeps_it() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('x'));
    assert!(fx.is_empty(), "nothing closes before the answer: {fx:?}");
    assert!(matches!(
        &t.app.overlay(),
        Some(Overlay::Confirm(c)) if c.purpose == ConfirmPurpose::CloseDialogue(1)
    ));
    let fx = t.key(KeyCode::Char('n'));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(t.app.overlay().is_none());
    assert_eq!(t.app.workspace.dialogues().len(), 2);
    // Esc answers no too.
    t.key(KeyCode::Char('x'));
    assert!(t.key(KeyCode::Esc).is_empty());
    assert_eq!(t.app.workspace.dialogues().len(), 2);
}

#[test]
fn y_closes_the_dialogue_and_the_autosave_no_longer_has_it() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('x'));
    let fx = t.key(KeyCode::Char('y'));
    assert_eq!(closes(&fx), [1]);
    let saved = saves(&fx);
    assert_eq!(saved.len(), 1, "{fx:?}");
    assert_eq!(saved[0].1, SavePurpose::Autosave);
    assert!(saved[0].2.dialogues.is_empty());
    assert_eq!(t.app.workspace.dialogues().len(), 1);
    assert_eq!(t.current().interface, Interface::Usr);
}

#[test]
fn x_on_an_empty_dialogue_closes_it_at_once() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('x'));
    assert_eq!(closes(&fx), [1]);
    assert!(t.app.overlay().is_none());
}

/// The Resources overlay, a resource read and scrolled, as the person left it before `W`.
fn resource_read_and_scrolled(t: &mut T) {
    use crate::client::resources::Read;
    t.key(KeyCode::Esc);
    t.key(KeyCode::F(3));
    t.resources_listed(1, &["dac://domain", "dac://spaces/S"]);
    t.key(KeyCode::Down);
    t.key(KeyCode::Enter);
    t.event(Event::Engine(Box::new(EngineEvent::ResourceRead {
        dialogue: 1,
        uri: "dac://spaces/S".into(),
        result: Ok(Read {
            uri: "dac://spaces/S".into(),
            mime_type: None,
            shown: sixty_lines(),
            json: false,
        }),
    })));
    t.draw();
    // To the content, three lines down.
    t.key(KeyCode::Tab);
    for _ in 0..3 {
        t.key(KeyCode::Down);
    }
    t.draw();
}

fn sixty_lines() -> String {
    (0..60).map(|i| format!("line {i}\n")).collect()
}

/// The Resources overlay (under the prompt, or shown): the resource read and its scroll.
fn resources_beneath(t: &T) -> (Option<String>, usize) {
    let under = t.app.overlays_beneath().last().or(t.app.overlay());
    let Some(Overlay::Resources(r)) = under else {
        panic!("no Resources overlay");
    };
    let uri = r
        .shown
        .as_ref()
        .and_then(|s| s.as_ref().ok())
        .map(|r| r.uri.clone());
    (uri, r.scroll)
}

fn write_prompt(t: &T) -> &crate::tui::overlay::Prompt {
    match t.app.overlay() {
        Some(Overlay::Prompt(p)) => p,
        _ => panic!("no prompt"),
    }
}

/// `W` in the Resources overlay opens its prompt over it: Esc, a write, a file there asked
/// about first (n keeps the path typed, y overwrites), a failure said in the prompt with the
/// path kept, Tab completing; each time the overlay comes back as it was.
#[test]
fn w_in_the_resources_overlay_writes_over_it_and_comes_back_to_the_same_resource() {
    use crate::tui::event::SaveWhat;
    let mut t = T::reference();
    resource_read_and_scrolled(&mut t);
    let before = resources_beneath(&t);
    assert_eq!(before, (Some("dac://spaces/S".into()), 3));

    // Esc: back to the overlay, unchanged.
    t.key(KeyCode::Char('W'));
    assert_eq!(write_prompt(&t).input.text(), "S.txt");
    assert_eq!(resources_beneath(&t), before);
    assert!(t.key(KeyCode::Esc).is_empty());
    assert!(matches!(t.app.overlay(), Some(Overlay::Resources(_))));
    assert!(t.app.overlays_beneath().is_empty());
    assert_eq!(resources_beneath(&t), before);

    // Tab completes the path typed (the runner lists the folder).
    t.key(KeyCode::Char('W'));
    for _ in 0.."S.txt".len() {
        t.key(KeyCode::Backspace);
    }
    t.type_text("out/");
    let fx = t.key(KeyCode::Tab);
    assert!(
        matches!(&fx[..], [Effect::CompletePath { typed, .. }] if typed == "out/"),
        "{fx:?}"
    );
    t.event(Event::PathCompletions {
        typed: "out/".into(),
        paths: vec!["out/square.txt".into()],
    });
    assert_eq!(write_prompt(&t).input.text(), "out/square.txt");

    // Enter: the runner looks; a file is there, so a question over the prompt.
    let fx = t.key(KeyCode::Enter);
    let target = PathBuf::from("/work/out/square.txt");
    let what = SaveWhat::Json(sixty_lines());
    assert!(
        matches!(&fx[..], [Effect::CheckSaveTarget { path, what: w }] if *path == target && *w == what),
        "{fx:?}"
    );
    let note = &write_prompt(&t).note;
    assert!(note.contains("writing /work/out/square.txt"), "{note}");
    let fx = t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: what.clone(),
    });
    assert!(fx.is_empty(), "nothing written before the answer: {fx:?}");
    // Enter pressed twice: the runner's second answer asks no second question.
    t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: what.clone(),
    });
    assert_eq!(
        t.app.overlays_beneath().len(),
        2,
        "the prompt and the overlay"
    );
    assert!(matches!(
        t.app.overlay(),
        Some(Overlay::Confirm(c)) if c.purpose == ConfirmPurpose::Overwrite(target.clone(), what.clone())
    ));
    // Drawn: the question over the prompt over the resource.
    let shown = screen(&t, 120, 40);
    assert!(shown.contains("The file exists"), "{shown}");
    assert!(shown.contains("line 3"), "{shown}");
    // n: the file is kept; the prompt is back with the path typed.
    assert!(t.key(KeyCode::Char('n')).is_empty());
    assert_eq!(write_prompt(&t).input.text(), "out/square.txt");
    assert!(write_prompt(&t).note.contains("not written"));
    assert_eq!(resources_beneath(&t), before);

    // Again, y overwrites: the runner writes it (atomically) and says so.
    t.key(KeyCode::Enter);
    t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: what.clone(),
    });
    let fx = t.key(KeyCode::Char('y'));
    assert!(
        matches!(&fx[..], [Effect::WriteJson { path, text }] if *path == target && *text == sixty_lines()),
        "{fx:?}"
    );
    assert!(matches!(t.app.overlay(), Some(Overlay::Prompt(_))));
    // It failed (a read-only folder): said with its cause, the prompt kept with the path.
    t.event(Event::CopyWritten {
        path: target.clone(),
        result: Err("Permission denied (os error 13)".into()),
    });
    let said = &t.app.notices().shown().expect("a notice").text;
    assert_eq!(
        said,
        "cannot write /work/out/square.txt: Permission denied (os error 13)"
    );
    assert_eq!(write_prompt(&t).input.text(), "out/square.txt");
    assert!(write_prompt(&t).note.contains("Permission denied"));
    // Fixed, written: the overlay is back on the same resource, where it was.
    for _ in 0.."square.txt".len() {
        t.key(KeyCode::Backspace);
    }
    t.type_text("s.txt");
    let fx = t.key(KeyCode::Enter);
    let target = PathBuf::from("/work/out/s.txt");
    assert!(matches!(&fx[..], [Effect::CheckSaveTarget { path, .. }] if *path == target));
    let fx = t.event(Event::SaveTarget {
        path: target.clone(),
        exists: false,
        folder_exists: true,
        what: what.clone(),
    });
    assert!(matches!(&fx[..], [Effect::WriteJson { path, .. }] if *path == target));
    t.event(Event::CopyWritten {
        path: target.clone(),
        result: Ok(()),
    });
    assert_eq!(
        t.app.notices().shown().map(|n| n.text.as_str()),
        Some("wrote /work/out/s.txt")
    );
    assert!(matches!(t.app.overlay(), Some(Overlay::Resources(_))));
    assert!(t.app.overlays_beneath().is_empty());
    assert_eq!(resources_beneath(&t), before);

    // A folder that is not there: said in the prompt, the path kept.
    t.key(KeyCode::Char('W'));
    t.key(KeyCode::Enter);
    t.event(Event::SaveTarget {
        path: PathBuf::from("/work/S.txt"),
        exists: false,
        folder_exists: false,
        what: what.clone(),
    });
    assert!(write_prompt(&t).note.contains("that folder does not exist"));
    assert_eq!(write_prompt(&t).input.text(), "S.txt");
    // What an earlier write to another path comes to does not close this prompt.
    t.event(Event::CopyWritten {
        path: PathBuf::from("/work/out/s.txt"),
        result: Ok(()),
    });
    assert_eq!(write_prompt(&t).input.text(), "S.txt");
    // A list read again while the prompt is open reaches the overlay under it.
    t.resources_listed(1, &["dac://a", "dac://domain", "dac://spaces/S"]);
    t.key(KeyCode::Esc);
    let Some(Overlay::Resources(r)) = t.app.overlay() else {
        panic!()
    };
    assert_eq!(
        r.selected, 2,
        "the list came to the overlay under the prompt"
    );
}

#[test]
fn save_as_shows_the_full_path_and_asks_before_overwriting() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('S'));
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("Save-as asks for a path");
    };
    assert_eq!(p.note, "→ /work/sessions/session.json");
    // Type a bare name: it goes in the sessions folder, with .json.
    for _ in 0.."session.json".len() {
        t.key(KeyCode::Backspace);
    }
    t.type_text("tour");
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!()
    };
    assert_eq!(p.note, "→ /work/sessions/tour.json");
    let fx = t.key(KeyCode::Enter);
    let target = PathBuf::from("/work/sessions/tour.json");
    assert!(
        matches!(&fx[..], [Effect::CheckSaveTarget { path, .. }] if *path == target),
        "{fx:?}"
    );
    // It exists: a question, and nothing written.
    let fx = t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: crate::tui::event::SaveWhat::Session,
    });
    assert!(fx.is_empty());
    assert!(matches!(
        &t.app.overlay(),
        Some(Overlay::Confirm(c)) if c.purpose == ConfirmPurpose::Overwrite(target.clone(), crate::tui::event::SaveWhat::Session)
    ));
    assert!(t.key(KeyCode::Char('n')).is_empty(), "n keeps the file");
    assert!(t.app.session().path().is_none());
    // Again, and y overwrites.
    t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: crate::tui::event::SaveWhat::Session,
    });
    let fx = t.key(KeyCode::Char('y'));
    let saved = saves(&fx);
    assert_eq!(saved.len(), 1);
    assert_eq!((&saved[0].0, saved[0].1), (&target, SavePurpose::Explicit));
    t.event(Event::Saved {
        path: target.clone(),
        purpose: SavePurpose::Explicit,
        result: Ok(()),
        stamp: None,
    });
    assert_eq!(t.app.session().path(), Some(target.as_path()));
    assert_eq!(t.app.session().unsaved(), 0);
    // Saving to the session's own file asks nothing.
    let fx = t.event(Event::SaveTarget {
        path: target.clone(),
        exists: true,
        folder_exists: true,
        what: crate::tui::event::SaveWhat::Session,
    });
    assert_eq!(saves(&fx).len(), 1);
}

#[test]
fn save_as_makes_no_folder_the_user_did_not_ask_for() {
    let mut t = T::reference();
    let fx = t.event(Event::SaveTarget {
        path: PathBuf::from("/work/nowhere/s.json"),
        exists: false,
        folder_exists: false,
        what: crate::tui::event::SaveWhat::Session,
    });
    assert!(saves(&fx).is_empty());
    let notice = t.app.notices().shown().expect("a notice");
    assert!(notice.text.contains("does not exist"), "{}", notice.text);
}

#[test]
fn save_paths_resolve_home_bare_names_and_relative_paths() {
    let paths = options(Vec::new()).paths;
    assert_eq!(
        resolve_save_path("a", &paths),
        PathBuf::from("/work/sessions/a.json")
    );
    assert_eq!(
        resolve_save_path("out/a.json", &paths),
        PathBuf::from("/work/out/a.json")
    );
    assert_eq!(
        resolve_save_path("/tmp/a.session", &paths),
        PathBuf::from("/tmp/a.session")
    );
    let no_sessions = Paths {
        sessions_dir_exists: false,
        ..paths
    };
    assert_eq!(
        resolve_save_path("a.json", &no_sessions),
        PathBuf::from("/work/a.json")
    );
}

#[test]
fn a_signal_with_unsaved_turns_writes_the_autosave_then_leaves_keeping_the_marker() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    let fx = t.event(Event::Signal(crate::tui::event::Signal::Term));
    assert_eq!(closes(&fx), [1, 2], "both sessions are ended");
    let saved = saves(&fx);
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].0, PathBuf::from("/data/autosave-7.json"));
    assert_eq!(saved[0].1, SavePurpose::BeforeLeaving);
    assert_eq!(saved[0].2.dialogues[0].turns.len(), 1);
    assert!(quits(&fx).is_empty(), "not before the save is written");
    // Written or not, it leaves, and not cleanly (the next start offers the autosave).
    for result in [Ok(()), Err("disk full".to_owned())] {
        let fx = t.event(Event::Saved {
            path: saved[0].0.clone(),
            purpose: SavePurpose::BeforeLeaving,
            result,
            stamp: None,
        });
        assert_eq!(quits(&fx), [false]);
    }
}

#[test]
fn a_signal_without_work_is_a_clean_quit() {
    let mut t = T::reference();
    let fx = t.event(Event::Signal(crate::tui::event::Signal::Hup));
    assert_eq!(quits(&fx), [true]);
    assert!(saves(&fx).is_empty());
}

#[test]
fn quit_with_unsaved_turns_asks_and_y_ends_every_session() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('q'));
    assert!(fx.is_empty());
    assert!(matches!(
        &t.app.overlay(),
        Some(Overlay::Confirm(c)) if c.purpose == ConfirmPurpose::Quit
    ));
    let fx = t.key(KeyCode::Char('y'));
    assert_eq!(closes(&fx), [1, 2]);
    assert_eq!(quits(&fx), [true]);
}

#[test]
fn a_reconnect_is_a_new_session_recorded_on_the_next_turn() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.event(Event::Engine(Box::new(EngineEvent::Closed { dialogue: 1 })));
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('R'));
    assert_eq!(closes(&fx), [1]);
    let (key, first) = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open {
                key, first_turn, ..
            } => Some((*key, *first_turn)),
            _ => None,
        })
        .expect("an Open");
    assert_ne!(key, 1, "a new engine dialogue");
    assert_eq!(first, 1, "TurnIndex carries on");
    assert_eq!(t.current().link.last_accepted(), Some(0));
    t.opened(key);
    // A new dialogue on the server: nothing of before is "the last TurnIndex it took" (the
    // composer warned about the number it chose itself after R over 2026-07-28).
    assert_eq!(t.current().link.last_accepted(), None);
    t.finished(key, grounding(1));
    let d = t.current();
    assert!(!d.transcript.turns()[0].turn.new_session);
    assert!(
        d.transcript.turns()[1].turn.new_session,
        "the reconnect is recorded"
    );
    let session = t.app.snapshot();
    assert!(session.dialogues[0].turns[1].new_session);
    // The Commitments view starts afresh at the new session.
    assert_eq!(d.transcript.commitments_at(1).session_start, 1);
}

#[test]
fn a_failed_turn_leaves_its_commitments_unsent_and_ids_stay_unique() {
    let mut t = T::reference();
    // A commitment turn that the server never answered.
    t.finished(
        1,
        turn(
            json!({"Header": "PGM-KDA-V1.0", "Kind": "commitment", "TurnIndex": 0,
                   "Commitments": [{"CommitmentID": "c1", "Statement": "Kiosk#3 locatedAt MLoc:Square.Stage"}]}),
            None,
        ),
    );
    let d = t.current();
    let view = d.transcript.commitments_at(0);
    assert!(
        view.rows.iter().all(|r| r.state.is_absent()),
        "nothing is shown as retained: {view:?}"
    );
    // Two commitments typed without an ID get IDs the dialogue has not used.
    let request = t
        .app
        .with_composer(|c, ctx| {
            c.set_kind(crate::protocol::dac::Kind::Commitment);
            let i = c
                .fields
                .iter()
                .position(|f| f.spec.key == "Commitments")
                .expect("a Commitments field");
            c.fields[i].editor = crate::tui::composer::editor(
                "Kiosk#3 locatedAt MLoc:Square.Stage\nKiosk#3 ownedBy Avatar#7",
            );
            c.content(ctx.commitments)
        })
        .unwrap()
        .expect("content");
    let ids: Vec<&str> = request["Commitments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["CommitmentID"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert!(!ids.contains(&"c1"), "c1 was used: {ids:?}");
}

#[test]
fn a_click_selects_the_row_the_frame_drew_after_keyboard_scrolling() {
    let mut t = T::reference();
    for i in 0..30 {
        t.finished(1, grounding(i));
    }
    t.key(KeyCode::Esc);
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    // The user goes up with the keys; the frame drew rows 12.. at the transcript's top.
    for _ in 0..5 {
        t.key(KeyCode::Up);
    }
    // The frame drew the window where the selection is; a click on its third row.
    t.draw();
    let (rows, top) = (t.hits.transcript_rows, t.hits.transcript_top);
    assert!(top > 0, "scrolled: the window is not at the first turn");
    t.click(rows.x + 10, rows.y + 2);
    assert_eq!(t.current().transcript.selected(), Some(top + 2));
    assert_eq!(t.current().transcript.scroll, top);
}

#[test]
fn typing_in_the_composer_is_never_a_global_key() {
    let mut t = T::reference();
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    // Tab moves to the next field; the letters after it are text.
    let mut fx = t.key(KeyCode::Tab);
    fx.extend(t.type_text("nxqR"));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(t.app.workspace.dialogues().len(), 2);
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    assert!(t.app.overlay().is_none());
}

#[test]
fn n_opens_on_the_server_of_the_dialogue_in_view() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('2'));
    // Never shown before, dialogue 2 takes the focus it was switched from.
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    // The sidebar still points at the first server.
    assert_eq!(t.app.sidebar().selected(), 0);
    let fx = t.key(KeyCode::Char('n'));
    let (spec, interface) = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open {
                spec, interface, ..
            } => Some((spec.clone(), *interface)),
            _ => None,
        })
        .expect("an Open");
    assert_eq!(interface, Interface::Usr);
    assert_eq!(spec, t.server_of(2).spec);
    assert_eq!(t.app.workspace.current(), Some(t.dialogue(3)));
    assert_eq!(
        t.app.workspace().dialogue_by_key(3).unwrap().name,
        format!("{} #2", t.server_of(2).name)
    );
}

#[test]
fn each_dialogue_keeps_its_own_focus_and_detail_tab() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc); // the transcript of dialogue 1
    t.key(KeyCode::Char('l')); // its next detail tab
    let tab = t.app.shown_detail_tab();
    t.key(KeyCode::Char('2'));
    t.key(KeyCode::Char('c')); // the composer of dialogue 2
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('1'));
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    assert_eq!(t.app.shown_detail_tab(), tab);
    t.key(KeyCode::Char('2'));
    assert_eq!(t.app.shown_detail_tab(), DetailTab::UserState);
}

#[test]
fn send_asks_the_runner_and_esc_cancels_the_pending_turn() {
    let mut t = T::reference();
    t.type_text("bench");
    let fx = t.key(KeyCode::F(5));
    let Some(Effect::Send { key, request, .. }) = fx.first() else {
        panic!("F5 sends: {fx:?}");
    };
    assert_eq!(*key, 1);
    assert_eq!(request["Kind"], "semantic_grounding");
    assert!(t.current().link.pending().is_some());
    // A second F5 while pending sends nothing.
    assert!(t.key(KeyCode::F(5)).is_empty());
    // Esc in the composer leaves it (NAV); Esc outside cancels the turn, and only that.
    assert!(t.key(KeyCode::Esc).is_empty());
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    let fx = t.key(KeyCode::Esc);
    assert!(matches!(&fx[..], [Effect::Cancel { key: 1 }]), "{fx:?}");
    assert_eq!(
        t.app.screen.focus(),
        Pane::Transcript,
        "Esc cancelled, and only that"
    );
}

#[test]
fn a_turn_that_became_a_task_shows_it_and_esc_cancels_the_task() {
    let mut t = T::reference();
    t.type_text("bench");
    t.key(KeyCode::F(5));
    let note = crate::client::task::TaskNote {
        task_id: "task-9".into(),
        status: "working".into(),
        message: Some("2 polls to go".into()),
    };
    let fx = t.event(Event::Engine(Box::new(EngineEvent::Client(
        crate::client::event::Event::Task {
            connection: 1,
            note: note.clone(),
        },
    ))));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(t.current().link.pending().unwrap().task, Some(note));
    // A task of another connection is not this turn's.
    t.event(Event::Engine(Box::new(EngineEvent::Client(
        crate::client::event::Event::Task {
            connection: 2,
            note: crate::client::task::TaskNote {
                task_id: "other".into(),
                status: "working".into(),
                message: None,
            },
        },
    ))));
    assert_eq!(
        t.current()
            .link
            .pending()
            .unwrap()
            .task
            .as_ref()
            .unwrap()
            .task_id,
        "task-9"
    );
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Esc);
    assert!(matches!(&fx[..], [Effect::Cancel { key: 1 }]), "{fx:?}");
    let said = &t.app.notices().shown().unwrap().text;
    assert!(said.contains("tasks/cancel for task task-9"), "{said}");
}

#[test]
fn a_dialogue_that_is_not_open_sends_nothing_and_says_why() {
    let (mut t, _) = T::new(vec![ServerSpec::embedded(Interface::Dac)]);
    let fx = t.key(KeyCode::F(5));
    assert!(fx.is_empty());
    assert!(t.app.notices().shown().unwrap().text.contains("connecting"));
}

#[test]
fn a_turn_is_autosaved_and_counts_as_unsaved() {
    let mut t = T::reference();
    let fx = t.finished(1, grounding(0));
    let saved = saves(&fx);
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].1, SavePurpose::Autosave);
    assert_eq!(t.app.session().unsaved(), 1);
}

#[test]
fn notices_fade_by_the_time_of_the_events_and_stay_in_the_messages() {
    let mut t = T::reference();
    // A copy written: the runner says so, and the explorer tells it.
    t.event(Event::CopyWritten {
        path: PathBuf::from("/work/hello.json"),
        result: Ok(()),
    });
    assert_eq!(
        t.app.notices().shown().map(|n| n.text.as_str()),
        Some("wrote /work/hello.json")
    );
    t.now += crate::tui::app::NOTICE_TIME;
    t.event(Event::Tick);
    assert!(t.app.notices().shown().is_none());
    assert!(
        t.app
            .notices()
            .messages()
            .any(|m| m.text == "wrote /work/hello.json")
    );
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('M'));
    assert!(matches!(t.app.overlay(), Some(Overlay::Messages { .. })));
}

#[test]
fn enter_on_a_log_row_opens_the_entry() {
    let mut t = T::reference();
    t.logged(crate::client::event::LogEntry::new(
        1,
        crate::client::event::LogKind::Client,
        "{\"a\": 1}",
    ));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('L'));
    t.focus(Pane::Log);
    t.key(KeyCode::End);
    t.key(KeyCode::Enter);
    assert!(matches!(t.app.overlay(), Some(Overlay::LogEntry { .. })));
    let fx = t.key(KeyCode::Char('y'));
    assert!(
        matches!(&fx[..], [Effect::Clipboard { text }] if text.contains("\"a\": 1")),
        "{fx:?}"
    );
}

#[test]
fn ctrl_o_lists_sessions_and_completes_typed_paths() {
    let mut t = T::reference();
    let fx = t.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert!(matches!(&fx[..], [Effect::ListSessions]), "{fx:?}");
    let fx = t.type_text("/tm");
    assert!(
        matches!(fx.last(), Some(Effect::CompletePath { typed, .. }) if typed == "/tm"),
        "{fx:?}"
    );
    t.event(Event::PathCompletions {
        typed: "/tm".into(),
        paths: vec!["/tmp/".into()],
    });
    let Some(Overlay::Open(o)) = &t.app.overlay() else {
        panic!()
    };
    assert_eq!(o.completions, ["/tmp/"]);
    t.type_text("p/x.json");
    let fx = t.key(KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::ReadSession { path, purpose: OpenPurpose::Open }] if path == &PathBuf::from("/tmp/x.json")),
        "{fx:?}"
    );
}

#[test]
fn a_session_that_cannot_be_read_changes_nothing() {
    let mut t = T::reference();
    t.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    t.event(Event::SessionRead {
        stamp: None,
        path: PathBuf::from("/tmp/bad.json"),
        purpose: OpenPurpose::Open,
        result: Err("bad.json: line 3, column 4: expected value".into()),
    });
    let Some(Overlay::Open(o)) = &t.app.overlay() else {
        panic!("the overlay stays, with the error")
    };
    assert!(o.error.as_deref().unwrap().contains("line 3"));
    assert!(t.app.session().path().is_none());
    assert_eq!(t.app.workspace.dialogues().len(), 2);
}

#[test]
fn a_recovery_is_offered_at_start_and_y_reads_it() {
    let mut o = options(Vec::new());
    o.recover = vec![crate::tui::persist::Recovery {
        path: Some(PathBuf::from("/data/recovered-1.json")),
        drafts: None,
        ending: crate::tui::persist::Ending::Unclean,
    }];
    let (mut app, _) = App::new(o, Instant::now());
    let fx = app.handle(
        Event::Input(Input::Key(KeyEvent::from(KeyCode::Char('y')))),
        Instant::now(),
        &Hits::default(),
    );
    assert!(
        matches!(
            &fx[..],
            [Effect::ReadSession {
                purpose: OpenPurpose::Recover,
                ..
            }]
        ),
        "{fx:?}"
    );
}

#[test]
fn copying_says_honestly_where_the_text_can_have_gone() {
    let mut t = T::reference_with(|o| o.in_tmux = true);
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('y'));
    assert!(matches!(&fx[..], [Effect::Clipboard { .. }]), "{fx:?}");
    let text = &t.app.notices().shown().unwrap().text;
    assert!(
        text.contains("set-clipboard") && text.contains('W'),
        "{text}"
    );
    // W asks where (Tab completes the path), then checks the target before writing.
    t.key(KeyCode::Char('W'));
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("a prompt for the path")
    };
    assert_eq!(p.input.text(), "turn-0.json");
    let fx = t.key(KeyCode::Tab);
    assert!(
        matches!(&fx[..], [Effect::CompletePath { typed, extensions: [] }] if typed == "turn-0.json"),
        "{fx:?}"
    );
    let fx = t.key(KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::CheckSaveTarget { path, what: crate::tui::event::SaveWhat::Json(text) }]
            if path.ends_with("turn-0.json") && text.contains("answered")),
        "{fx:?}"
    );
}

#[test]
fn a_new_theme_is_remembered() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('T'));
    assert_eq!(t.app.config.theme.name, "light");
    assert!(matches!(&fx[..], [Effect::RememberTheme { name }] if name == "light"));
}

#[test]
fn the_detail_scroll_comes_back_from_the_last_page_the_frame_showed() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    // A terminal small enough that the turn's detail is longer than its pane.
    t.resize(80, 16);
    t.key(KeyCode::Esc);
    t.detail_tab(DetailTab::Raw);
    t.key(KeyCode::End);
    // The frame could show from line `last` at most (End asked for far past it).
    t.draw();
    let (_, last) = t.hits.detail_top.expect("the detail drawn");
    assert!(last > 0, "the detail is longer than its pane");
    t.key(KeyCode::Up);
    assert_eq!(t.current().transcript.detail_scroll, last - 1);
}

#[test]
fn a_server_is_named_by_its_initialize_name_made_distinct() {
    let (mut t, _) = T::new(vec![
        ServerSpec::from_command_line("python3 a.py").unwrap(),
        ServerSpec::from_command_line("python3 b.py").unwrap(),
    ]);
    t.opened(1);
    t.opened(2);
    let names: Vec<&str> = t
        .app
        .workspace
        .servers()
        .values()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["bkn-dac", "bkn-dac-2"]);
    assert_eq!(
        t.app.workspace().dialogue_by_key(2).unwrap().name,
        "bkn-dac-2 #1"
    );
}

#[test]
fn defaults_say_where_they_came_from_and_the_user_overrides_them_per_dialogue() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('D'));
    let Some(Overlay::Defaults(form)) = &t.app.overlay() else {
        panic!("D opens the defaults");
    };
    assert_eq!(form.now[0].0, "MI:PublicSquare");
    assert_eq!(form.now[0].1, "built in");
    t.type_text("MI:Harbour");
    let fx = t.key(KeyCode::Enter);
    let Some(Effect::SetDefaults { key, defaults }) = fx.first() else {
        panic!("the engine dialogue is told: {fx:?}");
    };
    assert_eq!(*key, 1);
    assert_eq!(defaults.values.m_instance, "MI:Harbour");
    assert!(matches!(
        defaults.m_instance,
        crate::client::defaults::Origin::User(_)
    ));
    assert_eq!(
        defaults.u_environment,
        crate::client::defaults::Origin::BuiltIn
    );
    // The composer fills it in; a reconnect keeps it; a new dialogue of the server does not.
    let preview = t
        .app
        .with_composer(|c, ctx| c.preview(ctx))
        .unwrap()
        .unwrap();
    assert_eq!(preview["MInstance"], "MI:Harbour");
    let fx = t.key(KeyCode::Char('R'));
    let overrides = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open { overrides, .. } => Some(overrides.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(overrides.m_instance.as_deref(), Some("MI:Harbour"));
    let fx = t.key(KeyCode::Char('n'));
    let overrides = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open { overrides, .. } => Some(overrides.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(overrides.m_instance, None);
}

#[test]
fn defaults_for_a_server_reach_its_open_and_new_dialogues() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('D'));
    // SessionID, then the scope: every dialogue of the server.
    t.key(KeyCode::Tab);
    t.key(KeyCode::Tab);
    t.type_text("AUS:42");
    t.key(KeyCode::Tab);
    t.key(KeyCode::Right);
    let fx = t.key(KeyCode::Enter);
    assert_eq!(
        fx.iter()
            .filter(|e| matches!(e, Effect::SetDefaults { key: 1, .. }))
            .count(),
        1,
        "{fx:?}"
    );
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::SetDefaults { key: 2, .. })),
        "the other server's dialogue is not touched"
    );
    assert_eq!(
        t.server_of(1).overrides.session_id.as_deref(),
        Some("AUS:42")
    );
    let fx = t.key(KeyCode::Char('n'));
    let overrides = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open { overrides, .. } => Some(overrides.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(overrides.session_id.as_deref(), Some("AUS:42"));
    // Emptied, it goes back to the server's (here the built-in) value.
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('1'));
    t.key(KeyCode::Char('D'));
    t.key(KeyCode::Tab);
    t.key(KeyCode::Tab);
    t.key_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
    t.key(KeyCode::Enter);
    assert_eq!(t.server_of(1).overrides.session_id, None);
    assert_eq!(
        t.app
            .workspace()
            .dialogue_by_key(1)
            .unwrap()
            .defaults
            .as_ref()
            .unwrap()
            .values
            .session_id,
        crate::protocol::message::CommonDefaults::default().session_id
    );
}

#[test]
fn a_dialogue_is_saved_as_a_test_asking_before_it_overwrites() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.palette("Save the dialogue as a test");
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("a prompt for the path");
    };
    assert!(p.note.ends_with(".yaml"), "{}", p.note);
    let fx = t.key(KeyCode::Enter);
    let Some(Effect::CheckSaveTarget { path, what }) = fx.first() else {
        panic!("{fx:?}");
    };
    assert_eq!(*what, crate::tui::event::SaveWhat::Scenario(1));
    let path = path.clone();
    let fx = t.event(Event::SaveTarget {
        path: path.clone(),
        exists: true,
        folder_exists: true,
        what: crate::tui::event::SaveWhat::Scenario(1),
    });
    assert!(fx.is_empty(), "a question first");
    let fx = t.key(KeyCode::Char('y'));
    let Some(Effect::WriteFile {
        path: written,
        text,
        what,
    }) = fx.first()
    else {
        panic!("{fx:?}");
    };
    assert_eq!((written, *what), (&path, "scenario"));
    let scenario = crate::scenario::parse(text, &path).expect("the file is a scenario");
    assert_eq!(scenario.steps.len(), 1);
    assert_eq!(scenario.steps[0].request["Terms"][0]["Text"], "bench");
}

/// The runner's report of a scenario's step `index` on dialogue `key` (a grounding turn),
/// with the expectations it failed.
fn step_ran(
    key: u64,
    index: usize,
    failures: Vec<crate::scenario::expect::Failure>,
    expectations: &[&str],
) -> Event {
    let step = crate::scenario::run::StepRun {
        index,
        name: format!("step {index}"),
        turn: Some(grounding(index as u64)),
        latency_ms: 1.0,
        failures,
        attempts: 1,
        not_run: None,
    };
    Event::Scenario(crate::tui::event::ScenarioEvent::Step {
        dialogue: key,
        step: Box::new(step),
        expectations: expectations.iter().map(|e| e.to_string()).collect(),
    })
}

#[test]
fn a_scenario_runs_in_a_dialogue_of_its_own_with_each_steps_verdict() {
    use crate::scenario::expect::Failure;
    use crate::tui::event::{ScenarioEvent, ScenarioInfo};
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.palette("Run a scenario");
    t.type_text("kiosk.yaml");
    let fx = t.key(KeyCode::Enter);
    let Some(Effect::RunScenario { key, path, spec }) = fx.first() else {
        panic!("{fx:?}");
    };
    assert_eq!(path, &PathBuf::from("/work/kiosk.yaml"));
    assert_eq!(spec, &t.server_of(1).spec, "on the server in view");
    let key = *key;
    assert_eq!(t.app.workspace.current(), Some(t.dialogue(3)));
    assert_eq!(t.app.shown_detail_tab(), DetailTab::Expect);
    t.event(Event::Scenario(ScenarioEvent::Loaded {
        dialogue: key,
        result: Ok(ScenarioInfo {
            name: "kiosk".into(),
            steps: 2,
        }),
    }));
    t.event(Event::Scenario(ScenarioEvent::Opened {
        dialogue: key,
        dialog_id: "d".into(),
    }));
    t.event(step_ran(key, 0, Vec::new(), &["conforms"]));
    // Esc while it runs stops it.
    let fx = t.key(KeyCode::Esc);
    assert!(
        matches!(&fx[..], [Effect::StopScenario { key: k }] if *k == key),
        "{fx:?}"
    );
    let failure = Failure {
        expectation: "Outcome not_answered".into(),
        pointer: Some("/Outcome".into()),
        expected: "not_answered".into(),
        actual: "\"answered\"".into(),
    };
    t.event(step_ran(
        key,
        1,
        vec![failure],
        &["conforms", "Outcome not_answered"],
    ));
    t.event(Event::Scenario(ScenarioEvent::Done {
        dialogue: key,
        error: None,
    }));
    let d = t.current();
    let failures: Vec<usize> = d
        .transcript
        .turns()
        .iter()
        .map(|v| v.expect.as_ref().map_or(usize::MAX, |e| e.failures.len()))
        .collect();
    assert_eq!(failures, [0, 1], "each step's turn with its verdict");
    let s = d.runs.scenario().unwrap();
    assert_eq!((s.passed, s.failed, s.running), (1, 1, false));
    assert_eq!(d.name, "test: kiosk");
    assert!(
        t.app
            .notices
            .shown()
            .unwrap()
            .text
            .contains("1 of 2 steps failed")
    );
}

/// A scenario file with mistakes: each is in the messages, and the dialogue says it failed.
#[test]
fn a_scenario_file_with_mistakes_says_each_and_its_dialogue_failed() {
    use crate::tui::event::ScenarioEvent;
    let mut t = T::reference();
    t.palette("Run a scenario");
    t.type_text("bad.yaml");
    let fx = t.key(KeyCode::Enter);
    let Some(Effect::RunScenario { key, .. }) = fx.first() else {
        panic!()
    };
    t.event(Event::Scenario(ScenarioEvent::Loaded {
        dialogue: *key,
        result: Err("bad.yaml:3:13: \"x\" is not a Kind\nbad.yaml:5:1: unknown field".into()),
    }));
    assert!(matches!(
        t.current().status,
        crate::tui::dialogue::Status::Failed(_)
    ));
    assert!(
        t.app
            .notices
            .messages()
            .any(|m| m.text.contains("bad.yaml:5:1"))
    );
}

/// Effects that open a dialogue, as (key, server name).
fn opens(fx: &[Effect]) -> Vec<(u64, String)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Open { key, spec, .. } => Some((*key, spec.name.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_server_is_added_by_command_line_url_or_a_name_found() {
    let mut t = T::reference();
    let mut found = ServerSpec::from_command_line("found-srv --flag").unwrap();
    found.name = "lab".into();
    t.servers_found(vec![found]);
    t.in_sidebar(KeyCode::Char('a'));
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("the add-server prompt")
    };
    assert!(p.note.contains("lab · found-srv --flag"), "{}", p.note);
    t.type_text("lab");
    let fx = t.key(KeyCode::Enter);
    assert_eq!(opens(&fx), [(3, "lab".to_owned())]);
    assert_eq!(t.current().key, 3, "the new server's dialogue is in view");
    // A URL, then a command line, named like one in use.
    t.in_sidebar(KeyCode::Char('a'));
    t.type_text("http://127.0.0.1:9/mcp");
    let fx = t.key(KeyCode::Enter);
    assert_eq!(opens(&fx), [(4, "127.0.0.1:9".to_owned())]);
    t.in_sidebar(KeyCode::Char('a'));
    t.type_text("found-srv --other");
    let fx = t.key(KeyCode::Enter);
    assert_eq!(opens(&fx), [(5, "found-srv".to_owned())]);
    assert_eq!(t.app.workspace.servers().len(), 5);
    // The palette offers what is found and not added yet: nothing now.
    assert!(t.app.found_not_added().is_empty());
}

#[test]
fn removing_a_server_with_turns_asks_and_closes_its_dialogues() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.show(1);
    let server = t.current().server;
    let fx = t.in_sidebar(KeyCode::Delete);
    assert!(closes(&fx).is_empty(), "asks first");
    assert!(matches!(
        &t.app.overlay(),
        Some(Overlay::Confirm(c)) if c.purpose == ConfirmPurpose::RemoveServer(server)
    ));
    let fx = t.key(KeyCode::Char('y'));
    assert_eq!(closes(&fx), [1]);
    assert!(!t.app.workspace.servers().contains(server), "really gone");
    assert_eq!(
        t.app.session().unsaved(),
        0,
        "its turn is in no later save (the question said so): no longer counted"
    );
    assert_eq!(
        t.app.sidebar_rows().len(),
        2,
        "the other server and its dialogue"
    );
    // The one left, without turns, goes at once.
    let fx = t.in_sidebar(KeyCode::Delete);
    assert_eq!(closes(&fx), [2]);
    assert!(t.app.sidebar_rows().is_empty());
}

#[test]
fn an_input_the_server_file_asks_for_is_prompted_and_the_dialogue_reopened() {
    let (mut t, fx) = T::new(vec![ServerSpec::from_url("http://h/mcp").unwrap()]);
    assert_eq!(opens(&fx).len(), 1);
    let request = crate::client::spec::vars::InputRequest {
        id: "pat".into(),
        description: Some("GitHub token".into()),
        password: true,
    };
    t.event(Event::Engine(Box::new(EngineEvent::Failed {
        dialogue: 1,
        error: "needs ${input:pat}".into(),
        summary: None,
        needs_input: Some(Box::new(request)),
    })));
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("the input prompt")
    };
    assert!(p.secret && p.title.contains("GitHub token"), "{}", p.title);
    t.type_text("s3cret");
    let fx = t.key(KeyCode::Enter);
    assert_eq!(closes(&fx), [1], "the failed dialogue goes");
    let reopened: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Open { spec, .. } => Some(spec.answers.get("pat").cloned()),
            _ => None,
        })
        .collect();
    assert_eq!(reopened, [Some("s3cret".to_owned())]);
}

#[test]
fn a_sign_in_shows_on_its_server_and_without_a_browser_the_url_goes_to_the_clipboard() {
    use crate::client::event::Event as ClientEvent;
    use crate::client::oauth::SignInNotice;
    let spec = ServerSpec::from_url("https://mcp.example/mcp").unwrap();
    let name = spec.name.clone();
    let (mut t, _) = T::new(vec![spec]);
    let sign_in = |notice| {
        Event::Engine(Box::new(EngineEvent::Client(ClientEvent::SignIn {
            connection: 7,
            server: name.clone(),
            notice,
        })))
    };
    let url = "https://as.example/authorize?client_id=c&state=s".to_owned();

    let fx = t.event(sign_in(SignInNotice::Open {
        url: url.clone(),
        browser: None,
    }));
    assert!(
        matches!(&fx[..], [Effect::Clipboard { text }] if *text == url),
        "the URL is put on the clipboard: {fx:?}"
    );
    let notice = &t.app.notices().shown().unwrap().text;
    assert!(notice.contains(&url) && notice.contains("(M)"), "{notice}");
    assert!(matches!(
        t.server_of(1).sign_in,
        Some(SignInNotice::Open { .. })
    ));

    let fx = t.event(sign_in(SignInNotice::SignedIn {
        scopes: vec!["dac".into()],
        expires_in: Some(Duration::from_secs(3600)),
    }));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        matches!(&t.server_of(1).sign_in, Some(SignInNotice::SignedIn { scopes, .. }) if scopes == &["dac"])
    );

    // A browser that opened: nothing to copy, the person is told where to look.
    let fx = t.event(sign_in(SignInNotice::Open {
        url,
        browser: Some("xdg-open".into()),
    }));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        t.app
            .notices
            .shown()
            .unwrap()
            .text
            .contains("opened in xdg-open")
    );

    // A notice for a server that is not here (removed meanwhile) changes nothing.
    let other = Event::Engine(Box::new(EngineEvent::Client(ClientEvent::SignIn {
        connection: 8,
        server: "gone".into(),
        notice: SignInNotice::Failed { reason: "x".into() },
    })));
    assert!(t.event(other).is_empty());
}

#[test]
fn a_watched_recording_shows_live_dialogues_turn_by_turn_until_it_ends() {
    use crate::session::journal::Line;
    use crate::tui::dialogue::Status;
    use crate::tui::event::WatchEvent;
    let (mut t, _) = T::new(Vec::new());
    let line = |l: Line| Event::Watch(WatchEvent::Line(Box::new(l)));
    t.event(Event::Watch(WatchEvent::Started(PathBuf::from(
        "/data/recordings/r.jsonl",
    ))));
    let server = ServerSpec::from_command_line("my-da --flag").unwrap();
    t.event(line(Line::Start {
        name: None,
        servers: vec![server.clone()],
        lock: None,
    }));
    assert_eq!(t.app.workspace.servers().len(), 1);
    assert_eq!(
        t.app.workspace().servers().values().next().unwrap().status,
        crate::tui::app::ServerStatus::Recorded
    );
    t.event(line(Line::Dialogue {
        id: 1,
        server: server.name.clone(),
        interface: Interface::Dac,
        dialog_id: "D".into(),
        protocol_version: None,
    }));
    assert_eq!(t.current().status, Status::Live);
    assert_eq!(t.current().link.dialog_id(), Some("D"));
    for i in 0..2 {
        t.event(line(Line::Turn {
            dialogue: 1,
            turn: Box::new(grounding(i)),
        }));
    }
    assert_eq!(t.current().transcript.len(), 2);
    assert_eq!(
        t.current().transcript.selected(),
        Some(1),
        "the newest turn is followed"
    );
    // A second session's dialogue, and its end (its MCP session closed), while the first goes on.
    t.event(line(Line::Dialogue {
        id: 2,
        server: server.name.clone(),
        interface: Interface::Dac,
        dialog_id: "E".into(),
        protocol_version: None,
    }));
    t.event(line(Line::Closed {
        dialogue: 2,
        reason: "the agent ended its MCP session".into(),
        cause: None,
    }));
    assert_eq!(
        t.app.workspace().dialogue_by_key(2).unwrap().status,
        Status::Recorded
    );
    assert_eq!(
        t.current().status,
        Status::Live,
        "the first is still in view, and live"
    );
    // Sending into a live dialogue is refused, with what to do instead.
    let fx = t.key(KeyCode::F(5));
    assert!(
        fx.iter().all(|e| !matches!(e, Effect::Send { .. })),
        "{fx:?}"
    );
    t.event(line(Line::End("the agent closed its side".into())));
    assert_eq!(t.current().status, Status::Recorded);
    assert!(t.app.notices().shown().unwrap().text.contains("ended"));
}

/// A watched dialogue is never shown more live than the recording knows: one closed as idle
/// or because the proxy stopped says so (not "recorded": it may go on at its server), and
/// when the recording's writer is gone without its end (a proxy killed) every live one is
/// "ended (recording stopped)".
#[test]
fn a_watched_dialogue_stops_being_live_when_the_recording_stops_following_it() {
    use crate::session::journal::{Closing, Line};
    use crate::tui::dialogue::{Status, Unfollowed};
    use crate::tui::event::WatchEvent;
    let (mut t, _) = T::new(Vec::new());
    let line = |l: Line| Event::Watch(WatchEvent::Line(Box::new(l)));
    t.event(Event::Watch(WatchEvent::Started(PathBuf::from(
        "/data/recordings/r.jsonl",
    ))));
    let server = ServerSpec::from_command_line("my-da").unwrap();
    t.event(line(Line::Start {
        name: None,
        servers: vec![server.clone()],
        lock: Some(crate::session::journal::WriterLock::Flock),
    }));
    for (id, dialog) in [(1, "A"), (2, "B"), (3, "C"), (4, "D")] {
        t.event(line(Line::Dialogue {
            id,
            server: server.name.clone(),
            interface: Interface::Dac,
            dialog_id: dialog.into(),
            protocol_version: Some("2026-07-28".into()),
        }));
        t.event(line(Line::Turn {
            dialogue: id,
            turn: Box::new(grounding(0)),
        }));
    }
    let status = |t: &T, key| {
        t.app
            .workspace()
            .dialogue_by_key(key)
            .unwrap()
            .status
            .clone()
    };
    let keys: Vec<_> = t.app.live.as_ref().unwrap().keys().collect();
    t.event(line(Line::Closed {
        dialogue: 1,
        reason: "no exchange for 30 min".into(),
        cause: Some(Closing::Idle),
    }));
    t.event(line(Line::Closed {
        dialogue: 2,
        reason: "the proxy stopped".into(),
        cause: Some(Closing::RecordingStopped),
    }));
    t.event(line(Line::Closed {
        dialogue: 3,
        reason: "the agent closed its side".into(),
        cause: Some(Closing::Ended),
    }));
    assert_eq!(status(&t, keys[0]), Status::Unfollowed(Unfollowed::Idle));
    assert_eq!(
        status(&t, keys[1]),
        Status::Unfollowed(Unfollowed::RecordingStopped)
    );
    assert_eq!(status(&t, keys[2]), Status::Recorded);
    assert_eq!(status(&t, keys[3]), Status::Live);
    // The writer is gone without writing its end.
    t.event(Event::Watch(WatchEvent::WriterGone(
        "its writer no longer holds it (the proxy was killed)".into(),
    )));
    assert_eq!(
        status(&t, keys[3]),
        Status::Unfollowed(Unfollowed::RecordingStopped)
    );
    assert_eq!(status(&t, keys[2]), Status::Recorded, "an end stays an end");
    let notice = &t.app.notices().shown().unwrap().text;
    assert!(
        notice.contains("no more of the recording") && notice.contains("1 live dialogue"),
        "{notice}"
    );
    // Shown as such: no live mark anywhere, the state said in the transcript's header.
    let idle = screen(&t, 120, 40);
    assert!(idle.contains("ended (idle)"), "{idle}");
    let last = t.app.workspace().dialogue_of_key(keys[3]);
    t.app.workspace.set_current(last);
    let shown = screen(&t, 120, 40);
    assert!(!shown.contains("◉"), "{shown}");
    assert!(shown.contains("ended (recording stopped)"), "{shown}");
    // Taking one over still works (it is a recording with turns).
    let fx = t.key(KeyCode::Char('O'));
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Open { .. })),
        "{fx:?}"
    );
}

/// The MCP generation a dialogue spoke goes with it: a take-over of a recorded one asks for
/// the recording's, a reconnect for the one of the connection it replaces, and a session
/// saved says each dialogue's own.
#[test]
fn take_over_and_reconnect_ask_for_the_generation_the_dialogue_spoke() {
    use crate::session::journal::Line;
    use crate::tui::event::WatchEvent;
    let spoke = |fx: &[Effect]| {
        fx.iter()
            .find_map(|e| match e {
                Effect::Open { spoke, .. } => Some(spoke.clone()),
                _ => None,
            })
            .expect("a dialogue is opened")
    };
    let (mut t, _) = T::new(Vec::new());
    let line = |l: Line| Event::Watch(WatchEvent::Line(Box::new(l)));
    t.event(Event::Watch(WatchEvent::Started(PathBuf::from(
        "/data/recordings/r.jsonl",
    ))));
    let server = ServerSpec::from_command_line("my-da --flag").unwrap();
    t.event(line(Line::Start {
        name: None,
        servers: vec![server.clone()],
        lock: None,
    }));
    t.event(line(Line::Dialogue {
        id: 1,
        server: server.name.clone(),
        interface: Interface::Dac,
        dialog_id: "D".into(),
        protocol_version: Some("2025-11-25".into()),
    }));
    t.event(line(Line::Turn {
        dialogue: 1,
        turn: Box::new(grounding(0)),
    }));
    t.event(line(Line::End("the agent closed its side".into())));
    assert_eq!(
        t.app.snapshot().dialogues[0].protocol_version.as_deref(),
        Some("2025-11-25"),
        "saved as recorded"
    );
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::Char('O'));
    assert_eq!(spoke(&fx).as_deref(), Some("2025-11-25"));
    // Its own dialogue, once open over 2026-07-28, reconnects asking for 2026-07-28.
    let Some(Effect::Open { key, .. }) = fx.iter().find(|e| matches!(e, Effect::Open { .. }))
    else {
        unreachable!()
    };
    let key = *key;
    let summary = ServerSummary {
        protocol_version: "2026-07-28".into(),
        generation_note: Some(
            "the dialogue spoke MCP 2025-11-25; it goes on over MCP 2026-07-28".into(),
        ),
        ..Default::default()
    };
    t.event(Event::Engine(Box::new(EngineEvent::Opened {
        dialogue: key,
        connection: key,
        dialog_id: "dialog".into(),
        origin: DialogIdOrigin::Client,
        tool: "bkn_dac".into(),
        summary: Box::new(summary),
        vocabulary: Box::default(),
        defaults: Box::new(Chosen::built_in()),
        continued: false,
        next_turn: 0,
    })));
    assert!(
        (0..t.app.log().visible_len())
            .filter_map(|n| t.app.log().visible(n))
            .any(|e| e.text.contains("it goes on over MCP 2026-07-28")),
        "the change of generation is in the log"
    );
    t.show(key);
    let fx = t.key(KeyCode::Char('R'));
    assert_eq!(spoke(&fx).as_deref(), Some("2026-07-28"));
}

#[test]
fn taking_over_sends_the_recorded_requests_again_compares_them_and_hands_over_the_composer() {
    use crate::tui::dialogue::Status;
    let (mut t, _) = T::new(vec![ServerSpec::embedded(Interface::Dac)]);
    t.opened(1);
    for i in 0..3 {
        t.finished(1, grounding(i));
    }
    // The three turns as a session file records them: opened, a recorded dialogue.
    let recorded = t.app.snapshot();
    t.session_read("/work/sessions/recorded.json", recorded);
    assert_eq!(t.current().status, Status::Recorded);
    let source = t.app.workspace().current().unwrap();
    // Its second turn selected (its last is, once opened).
    t.focus(Pane::Transcript);
    t.key(KeyCode::Up);
    assert_eq!(t.current().transcript.selected(), Some(1));
    let fx = t.key(KeyCode::Char('O'));
    let Some(Effect::Open { key, .. }) = fx.iter().find(|e| matches!(e, Effect::Open { .. }))
    else {
        panic!("a dialogue of its own is opened: {fx:?}")
    };
    let key = *key;
    let fx = t.opened(key);
    let sends: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                request, filling, ..
            } => Some((request["TurnIndex"].clone(), *filling)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sends,
        [(json!(0), crate::client::dialogue::Filling::Fresh)],
        "the first recorded Request, made fresh"
    );
    let fx = t.finished(key, grounding(0));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Send { request, .. } if request["TurnIndex"] == 1)),
        "{fx:?}"
    );
    // An answer that differs from the recorded one shows in the source's Replay tab.
    let mut other = grounding(1);
    other.reply = Reply::ToolError("no".into());
    let fx = t.finished(key, other);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Send { .. })),
        "up to the selected turn only"
    );
    let source = t.app.workspace().dialogue(source).unwrap();
    assert!(
        source.transcript.turns()[0]
            .replay
            .as_ref()
            .unwrap()
            .differences
            .is_empty()
    );
    assert!(
        !source.transcript.turns()[1]
            .replay
            .as_ref()
            .unwrap()
            .differences
            .is_empty()
    );
    assert!(
        t.app
            .notices
            .shown()
            .unwrap()
            .text
            .contains("1 answered differently")
    );
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    assert!(t.current().runs.takeover().is_none());
}

fn ask(id: u64, asking: crate::client::answers::Asking) -> crate::tui::event::AskView {
    use crate::client::answers::{Asking, ELICITATION, SAMPLING};
    crate::tui::event::AskView {
        id,
        connection: 1,
        method: match asking {
            Asking::Sampling { .. } => SAMPLING,
            _ => ELICITATION,
        },
        name: Some("confirm".into()),
        message: "Please confirm to continue".into(),
        asking,
    }
}

fn confirm_form() -> crate::client::answers::Asking {
    crate::client::answers::Asking::Form {
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "confirmed": {"type": "boolean", "title": "Confirmed", "default": true},
                "seats": {"type": "integer", "minimum": 1}
            },
            "required": ["confirmed", "seats"]
        }),
    }
}

fn answers(fx: &[Effect]) -> Vec<(u64, crate::client::answers::Reply)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Answer { id, reply } => Some((*id, reply.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn what_a_server_asks_is_put_to_the_person_one_question_at_a_time() {
    use crate::client::answers::{Asking, Reply, SampledMessage};
    let mut t = T::reference();
    t.event(Event::Asked(ask(1, confirm_form())));
    t.event(Event::Asked(ask(
        2,
        Asking::Sampling {
            messages: vec![SampledMessage {
                role: "user".into(),
                text: "Name the square".into(),
            }],
            system: None,
            max_tokens: 50,
        },
    )));
    let Some(Overlay::Ask(a)) = &t.app.overlay() else {
        panic!("the question is shown")
    };
    assert_eq!(a.ask.id, 1);
    // The form starts from the schema's defaults; a required field left empty keeps it open,
    // with the focus on it.
    assert!(answers(&t.key(KeyCode::Enter)).is_empty());
    t.key(KeyCode::Char('3'));
    let fx = t.key(KeyCode::Enter);
    assert_eq!(
        answers(&fx),
        [(
            1,
            Reply::Accept(serde_json::json!({"confirmed": true, "seats": 3}))
        )]
    );
    let Some(Overlay::Ask(a)) = &t.app.overlay() else {
        panic!("the next question is shown")
    };
    assert_eq!(a.ask.id, 2);
    // Esc dismisses: the server is not left waiting.
    let fx = t.key(KeyCode::Esc);
    assert_eq!(answers(&fx), [(2, Reply::Cancel)]);
    assert!(t.app.overlay().is_none());
}

#[test]
fn a_stray_click_does_not_throw_away_a_question() {
    let mut t = T::reference();
    t.event(Event::Asked(ask(7, confirm_form())));
    t.draw();
    let question = t.hits.overlay.expect("the question drawn");
    assert!(!question.contains(Position::new(1, 1)));
    let fx = t.click(1, 1);
    assert!(answers(&fx).is_empty(), "{fx:?}");
    assert!(matches!(t.app.overlay(), Some(Overlay::Ask(_))));
}

#[test]
fn a_command_a_session_file_names_is_started_only_once_the_user_says_so() {
    use crate::client::spec::{StdioSpec, TransportSpec};
    let mut t = T::reference();
    let spec = ServerSpec::new(
        "helpful",
        TransportSpec::Stdio(StdioSpec {
            command: "sh".into(),
            args: vec!["-c".into(), "touch /tmp/owned".into()],
            ..StdioSpec::default()
        }),
    );
    let session = crate::session::Session {
        servers: vec![spec],
        dialogues: vec![crate::session::DialogueRecord {
            name: None,
            server: "helpful".into(),
            interface: Interface::Dac,
            dialog_id: "d".into(),
            notes: None,
            defaults: None,
            protocol_version: None,
            turns: vec![grounding(0)],
        }],
        ..Default::default()
    };
    t.event(Event::SessionRead {
        stamp: None,
        path: PathBuf::from("/tmp/sent-to-me.json"),
        purpose: OpenPurpose::Open,
        result: Ok(session),
    });
    for key in ['r', 'R'] {
        let fx = t.key(KeyCode::Char(key));
        assert!(
            !fx.iter()
                .any(|e| matches!(e, Effect::Replay { .. } | Effect::Open { .. })),
            "{key} started it: {fx:?}"
        );
        let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
            panic!("{key}: the user is asked")
        };
        assert!(
            c.message.contains("sh -c 'touch /tmp/owned'"),
            "{}",
            c.message
        );
        t.key(KeyCode::Char('n'));
        assert!(t.app.overlay().is_none());
    }
    // Yes: the replay goes on, and the server is not asked about again.
    t.key(KeyCode::Char('r'));
    let fx = t.key(KeyCode::Char('y'));
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Replay { .. })),
        "{fx:?}"
    );
    let fx = t.key(KeyCode::Char('r'));
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Replay { .. })),
        "{fx:?}"
    );
}

// ---- issue 29: nothing typed or sent is lost ----

/// The composer of the dialogue in view on a Kind, its focus on the field labelled so.
/// Goes to a field of a Kind as the person would: into the composer, the Kind chosen on its
/// row with Right, then a click on the field.
fn focus_field(t: &mut T, kind: crate::protocol::dac::Kind, label: &str) {
    t.focus(Pane::Composer);
    t.click_composer_row(0);
    for _ in 0..<crate::protocol::dac::Kind as strum::VariantArray>::VARIANTS.len() {
        if t.current().composer.kind == kind {
            break;
        }
        t.key(KeyCode::Right);
    }
    assert_eq!(t.current().composer.kind, kind);
    let i = t
        .current()
        .composer
        .fields
        .iter()
        .position(|f| f.spec.label == label)
        .expect("the field");
    t.click_composer_row(i + 1);
    assert_eq!(t.current().composer.row, i + 1);
}

#[test]
fn a_paste_with_cr_or_crlf_line_ends_keeps_its_lines() {
    for pasted in [
        "MM-Add Nil Kiosk#3 At MLoc:Square.Stage\rPost Nil Item#12 To Process#Market\r",
        "MM-Add Nil Kiosk#3 At MLoc:Square.Stage\r\nPost Nil Item#12 To Process#Market\r\n",
    ] {
        let mut t = T::reference();
        focus_field(&mut t, crate::protocol::dac::Kind::Feasibility, "Steps");
        let fx = t.event(Event::Input(Input::Paste(pasted.into())));
        assert!(fx.is_empty(), "{fx:?}");
        let c = &t.current().composer;
        let steps = &c.fields[c.focused_field().unwrap()];
        assert_eq!(
            steps.editor.lines(),
            [
                "MM-Add Nil Kiosk#3 At MLoc:Square.Stage",
                "Post Nil Item#12 To Process#Market",
                ""
            ],
            "{pasted:?}"
        );
        assert!(c.checked.statements.is_empty(), "{:?}", c.checked);
    }
}

#[test]
fn autosaves_of_several_earlier_runs_are_offered_one_by_one_saying_how_each_ended() {
    use crate::tui::persist::{Ending, Recovery};
    let mut o = options(Vec::new());
    o.recover = vec![
        Recovery {
            path: Some(PathBuf::from("/data/recovered-11-1.json")),
            drafts: None,
            ending: Ending::Signal(crate::tui::event::Signal::Hup),
        },
        Recovery {
            path: Some(PathBuf::from("/data/recovered-12-1.json")),
            drafts: None,
            ending: Ending::Unclean,
        },
    ];
    let (mut t, _) = T::start(o);
    let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
        panic!("the first offer")
    };
    assert!(
        c.message.contains("its terminal closed") && !c.title.contains("did not close cleanly"),
        "{} {}",
        c.title,
        c.message
    );
    // n keeps that file and offers the next.
    let fx = t.key(KeyCode::Char('n'));
    assert!(fx.is_empty(), "{fx:?}");
    let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
        panic!("the second offer")
    };
    assert!(c.title.contains("did not close cleanly"));
    assert!(matches!(
        &c.purpose,
        ConfirmPurpose::Recover(r) if r.path == Some(PathBuf::from("/data/recovered-12-1.json"))
    ));
    let fx = t.key(KeyCode::Char('y'));
    assert!(
        matches!(&fx[..], [Effect::ReadSession { path, purpose: OpenPurpose::Recover }] if path.ends_with("recovered-12-1.json")),
        "{fx:?}"
    );
    assert!(t.app.overlay().is_none());
}

fn ctrl(t: &mut T, c: char) -> Vec<Effect> {
    t.key_with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn confirm_purpose(t: &T) -> Option<ConfirmPurpose> {
    match &t.app.overlay() {
        Some(Overlay::Confirm(c)) => Some(c.purpose.clone()),
        _ => None,
    }
}

#[test]
fn ctrl_o_with_unsaved_turns_asks_to_save_or_set_them_aside_first() {
    use crate::tui::event::SavePurpose as P;
    let mut t = T::reference();
    t.finished(1, grounding(0));
    assert_eq!(t.app.session().unsaved(), 1);
    // Asked, nothing listed yet; a stray key does nothing; n stays.
    let fx = ctrl(&mut t, 'o');
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(confirm_purpose(&t), Some(ConfirmPurpose::OpenOverUnsaved));
    assert!(t.key(KeyCode::Char('y')).is_empty());
    assert_eq!(confirm_purpose(&t), Some(ConfirmPurpose::OpenOverUnsaved));
    assert!(t.key(KeyCode::Char('n')).is_empty());
    assert!(t.app.overlay().is_none());
    assert_eq!(t.current().transcript.len(), 1);
    // a: set aside in a new file of the data directory, then Open.
    ctrl(&mut t, 'o');
    let fx = t.key(KeyCode::Char('a'));
    let saved = saves(&fx);
    assert_eq!(saved.len(), 1, "{fx:?}");
    assert_eq!(
        (&saved[0].0, saved[0].1),
        (&PathBuf::from("/data/set-aside"), P::SetAside)
    );
    assert_eq!(saved[0].2.dialogues[0].turns.len(), 1);
    assert!(t.app.overlay().is_none(), "not opened before it is written");
    let fx = t.event(Event::Saved {
        path: "/data/set-aside/set-aside-1.json".into(),
        purpose: P::SetAside,
        result: Ok(()),
        stamp: None,
    });
    assert!(matches!(&fx[..], [Effect::ListSessions]), "{fx:?}");
    assert!(matches!(t.app.overlay(), Some(Overlay::Open(_))));
    assert_eq!(t.app.session().unsaved(), 0);
    assert!(
        t.app
            .notices
            .shown()
            .unwrap()
            .text
            .contains("set-aside-1.json")
    );
}

#[test]
fn ctrl_o_save_first_saves_then_opens_and_a_failed_save_opens_nothing() {
    use crate::tui::event::SavePurpose as P;
    let mut t = T::reference();
    // The session has a file: it was saved there.
    t.event(Event::Saved {
        path: "/work/sessions/s.json".into(),
        purpose: SavePurpose::Explicit,
        result: Ok(()),
        stamp: None,
    });
    t.finished(1, grounding(0));
    ctrl(&mut t, 'o');
    let fx = t.key(KeyCode::Char('s'));
    let saved = saves(&fx);
    assert_eq!(
        (&saved[0].0, saved[0].1),
        (&PathBuf::from("/work/sessions/s.json"), P::Explicit)
    );
    assert!(t.app.overlay().is_none());
    // Failed: nothing opens, the turns stay unsaved.
    let fx = t.event(Event::Saved {
        path: "/work/sessions/s.json".into(),
        purpose: P::Explicit,
        result: Err("disk full".into()),
        stamp: None,
    });
    assert!(fx.is_empty() && t.app.overlay().is_none(), "{fx:?}");
    assert_eq!(t.app.session().unsaved(), 1);
    ctrl(&mut t, 'o');
    t.key(KeyCode::Char('s'));
    let fx = t.event(Event::Saved {
        path: "/work/sessions/s.json".into(),
        purpose: P::Explicit,
        result: Ok(()),
        stamp: None,
    });
    assert!(matches!(&fx[..], [Effect::ListSessions]), "{fx:?}");
    assert!(matches!(t.app.overlay(), Some(Overlay::Open(_))));
    // A session without a file: s asks for a name; giving up forgets the Open.
    let mut t = T::reference();
    t.finished(1, grounding(0));
    ctrl(&mut t, 'o');
    t.key(KeyCode::Char('s'));
    assert!(matches!(&t.app.overlay(), Some(Overlay::Prompt(_))));
    t.key(KeyCode::Esc);
    assert_eq!(t.app.session.waiting_for_save(), None);
}

#[test]
fn ctrl_s_does_not_write_over_a_file_changed_on_disk_and_asks() {
    use crate::tui::event::{FileStamp, SavePurpose as P};
    let stamp = |len| {
        Some(FileStamp {
            len,
            modified: None,
        })
    };
    let path = PathBuf::from("/work/sessions/s.json");
    let mut t = T::reference();
    t.event(Event::SessionRead {
        path: path.clone(),
        purpose: OpenPurpose::Open,
        result: Ok(Session::default()),
        stamp: stamp(10),
    });
    let unchanged = |fx: &[Effect]| -> Vec<Option<FileStamp>> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Save { unchanged, .. } => Some(unchanged.clone()),
                _ => None,
            })
            .collect()
    };
    let fx = ctrl(&mut t, 's');
    assert_eq!(
        unchanged(&fx),
        [stamp(10)],
        "checked against the file as read"
    );
    t.event(Event::ChangedOnDisk { path: path.clone() });
    assert!(!t.app.session().saving());
    assert_eq!(
        confirm_purpose(&t),
        Some(ConfirmPurpose::SaveOverChanged(path.clone()))
    );
    // n: nothing written.
    assert!(t.key(KeyCode::Char('n')).is_empty());
    // s: save as.
    ctrl(&mut t, 's');
    t.event(Event::ChangedOnDisk { path: path.clone() });
    t.key(KeyCode::Char('s'));
    assert!(
        matches!(&t.app.overlay(), Some(Overlay::Prompt(p)) if p.purpose == crate::tui::overlay::PromptPurpose::SaveAs)
    );
    t.key(KeyCode::Esc);
    // o: overwritten without the check; the new stamp is the next save's.
    ctrl(&mut t, 's');
    t.event(Event::ChangedOnDisk { path: path.clone() });
    let fx = t.key(KeyCode::Char('o'));
    assert_eq!(unchanged(&fx), [None]);
    assert_eq!(saves(&fx)[0].1, P::Explicit);
    t.event(Event::Saved {
        path: path.clone(),
        purpose: P::Explicit,
        result: Ok(()),
        stamp: stamp(20),
    });
    assert_eq!(unchanged(&ctrl(&mut t, 's')), [stamp(20)]);
}

/// The text of the composer's field labelled so.
fn field_text(t: &T, label: &str) -> String {
    let c = &t.current().composer;
    c.fields
        .iter()
        .find(|f| f.spec.label == label)
        .expect("the field")
        .text()
}

#[test]
fn enter_on_a_turn_keeps_the_unsent_draft_it_replaces_for_ctrl_z() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    // A draft typed in the Question.
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text("Where is the fountain?");
    assert!(t.current().composer.has_draft());
    // Enter on the turn: its Request replaces the draft, which is kept, and said to be.
    t.key(KeyCode::Esc);
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    let fx = t.key(KeyCode::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    assert_eq!(field_text(&t, "Terms"), "bench");
    assert_eq!(field_text(&t, "Question"), "");
    assert!(
        !t.current().composer.has_draft(),
        "a turn's Request is no draft"
    );
    let notice = t.app.notices().shown().unwrap();
    assert!(notice.text.contains("Ctrl-Z"), "{}", notice.text);
    // Ctrl-Z: the draft back; Ctrl-Y: the turn's Request again; Ctrl-Z once more.
    t.key_with(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(field_text(&t, "Question"), "Where is the fountain?");
    assert_eq!(field_text(&t, "Terms"), "");
    t.key_with(KeyCode::Char('y'), KeyModifiers::CONTROL);
    assert_eq!(field_text(&t, "Terms"), "bench");
    t.key_with(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(field_text(&t, "Question"), "Where is the fountain?");
    // Nothing further back: said, nothing changes.
    t.key_with(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(field_text(&t, "Question"), "Where is the fountain?");
    assert!(
        t.current()
            .composer
            .message
            .as_deref()
            .is_some_and(|m| m.contains("no earlier draft"))
    );
    // Clearing keeps it too.
    t.app
        .with_composer(|c, ctx| c.clear(ctx))
        .expect("a composer");
    assert_eq!(field_text(&t, "Question"), "");
    t.key_with(KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(field_text(&t, "Question"), "Where is the fountain?");
}

/// A Request sent and refused (a tool error) leaves it in the composer: that is not an unsent
/// draft (not counted, not asked about when quitting); typing after it makes one again.
#[test]
fn the_request_just_sent_is_not_an_unsent_draft() {
    let mut t = T::reference();
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text("Where is the fountain?");
    t.key(KeyCode::Esc);
    assert!(t.current().composer.has_draft());
    let mut refused = grounding(0);
    refused.reply = Reply::ToolError("unknown User".into());
    t.finished(1, refused);
    assert!(
        !t.current().composer.has_draft(),
        "the Request just sent is in the transcript"
    );
    // Looked at as raw JSON and back in the form: still the Request sent.
    t.key(KeyCode::F(2));
    assert!(!t.current().composer.has_draft(), "as raw JSON");
    t.key(KeyCode::F(2));
    assert!(!t.current().composer.has_draft(), "back in the form");
    // Nothing unsaved is said of the draft: the quit question is about the turn only.
    t.key(KeyCode::Char('q'));
    if let Some(Overlay::Confirm(c)) = &t.app.overlay {
        assert!(!c.message.contains("unsent draft"), "{}", c.message);
        t.key(KeyCode::Char('n'));
    }
    // Typing again makes a draft.
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text(" And the kiosk?");
    t.key(KeyCode::Esc);
    assert!(t.current().composer.has_draft());
}

#[test]
fn quitting_mentions_an_unsent_draft() {
    let mut t = T::reference();
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text("Where is the fountain?");
    t.key(KeyCode::Esc);
    // No turn unsaved, but a draft: asked.
    let fx = t.key(KeyCode::Char('q'));
    assert!(quits(&fx).is_empty(), "{fx:?}");
    let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
        panic!("asked")
    };
    assert!(
        c.message.contains("domain-access #1 has an unsent draft"),
        "{}",
        c.message
    );
    t.key(KeyCode::Char('n'));
    // With a turn unsaved too (the draft sent), and a new draft, both are said.
    t.finished(1, grounding(0));
    assert!(!t.current().composer.has_draft(), "sent, no longer a draft");
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text("And the kiosk?");
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('q'));
    let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
        panic!("asked")
    };
    assert!(
        c.message.contains("1 turn is not saved") && c.message.contains("unsent draft"),
        "{}",
        c.message
    );
    assert_eq!(quits(&t.key(KeyCode::Char('y'))), [true]);
}

#[test]
fn prose_in_a_commitment_is_never_rewritten_and_enter_keeps_its_new_line() {
    use crate::protocol::resources::Words;
    let mut vocabulary = crate::protocol::resources::Vocabulary::default();
    vocabulary.add(Words::Entities, "Fountain#1");
    let mut t = T::reference_publishing(vocabulary);
    focus_field(&mut t, crate::protocol::dac::Kind::Commitment, "Commit");
    let mut fx = t.type_text("c1: Kiosk#3 locatedAt near the fountain");
    assert!(t.current().composer.completion.is_none());
    fx.extend(t.key(KeyCode::Enter));
    fx.extend(t.type_text("c2: Avatar#7 isA Foun"));
    assert!(
        t.current().composer.completion.is_some(),
        "an ID is offered"
    );
    fx.extend(t.key(KeyCode::Enter));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(
        field_text(&t, "Commit"),
        "c1: Kiosk#3 locatedAt near the fountain\nc2: Avatar#7 isA Foun\n"
    );
}

/// A click on a completion takes it, as accept-completion does (no key is faked for it).
#[test]
fn a_click_on_a_completion_takes_it() {
    use crate::protocol::resources::Words;
    let mut vocabulary = crate::protocol::resources::Vocabulary::default();
    vocabulary.add(Words::Entities, "Fountain#1");
    let mut t = T::reference_publishing(vocabulary);
    focus_field(&mut t, crate::protocol::dac::Kind::Commitment, "Commit");
    t.type_text("c2: Avatar#7 isA Foun");
    assert!(t.current().composer.completion.is_some());
    t.draw();
    let (r, _) = t.hits.completion_items[0];
    t.click(r.x + 1, r.y);
    assert!(t.current().composer.completion.is_none());
    assert_eq!(field_text(&t, "Commit"), "c2: Avatar#7 isA Fountain#1");
}

fn drafts_written(fx: &[Effect]) -> Vec<(PathBuf, Vec<crate::tui::persist::SavedDraft>)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::WriteDrafts { path, text } => {
                Some((path.clone(), serde_json::from_str(text).expect("drafts")))
            }
            _ => None,
        })
        .collect()
}

fn ticks(t: &mut T, n: usize) -> Vec<Effect> {
    (0..n).flat_map(|_| t.event(Event::Tick)).collect()
}

#[test]
fn unsent_drafts_are_autosaved_as_they_change_and_put_back_on_recovery() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    let session = t.app.snapshot();
    // Nothing typed: nothing written.
    assert!(drafts_written(&ticks(&mut t, 20)).is_empty());
    focus_field(
        &mut t,
        crate::protocol::dac::Kind::SemanticGrounding,
        "Question",
    );
    t.type_text("Where is the fountain?");
    let written = drafts_written(&ticks(&mut t, 10));
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].0, PathBuf::from("/data/drafts-7.json"));
    assert_eq!(written[0].1.len(), 1);
    assert_eq!(written[0].1[0].dialogue, "domain-access #1");
    // Unchanged: not written again; a signal writes what changed since the last look.
    assert!(drafts_written(&ticks(&mut t, 30)).is_empty());
    t.type_text(" Now.");
    let fx = t.event(Event::Signal(crate::tui::event::Signal::Hup));
    assert_eq!(drafts_written(&fx).len(), 1);
    let saved = drafts_written(&fx).remove(0).1;

    // The next start: the recovery names the drafts, y reads the session, then the drafts.
    let mut o = options(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ]);
    o.recover = vec![crate::tui::persist::Recovery {
        path: Some("/data/recovered-7-1.json".into()),
        drafts: Some("/data/recovered-7-1.drafts.json".into()),
        ending: crate::tui::persist::Ending::Signal(crate::tui::event::Signal::Hup),
    }];
    let (mut t, _) = T::start(o);
    let Some(Overlay::Confirm(c)) = &t.app.overlay() else {
        panic!("offered")
    };
    assert!(c.message.contains("unsent drafts"), "{}", c.message);
    let fx = t.key(KeyCode::Char('y'));
    assert!(matches!(&fx[..], [Effect::ReadSession { .. }]), "{fx:?}");
    let fx = t.event(Event::SessionRead {
        path: "/data/recovered-7-1.json".into(),
        purpose: OpenPurpose::Recover,
        result: Ok(session),
        stamp: None,
    });
    assert!(
        matches!(fx.last(), Some(Effect::ReadDrafts { path }) if path.ends_with("recovered-7-1.drafts.json")),
        "{fx:?}"
    );
    t.event(Event::DraftsRead {
        path: "/data/recovered-7-1.drafts.json".into(),
        result: Ok(saved),
    });
    let d = t.app.workspace().dialogues().values().next().unwrap();
    let question = d
        .composer
        .fields
        .iter()
        .find(|f| f.spec.label == "Question")
        .unwrap()
        .text();
    assert_eq!(d.name, "domain-access #1");
    assert_eq!(question, "Where is the fountain? Now.");
    assert!(d.composer.has_draft());
}

/// The screen as text, as the explorer draws it now.
fn screen(t: &T, width: u16, height: u16) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            crate::tui::view::render(f, &t.app);
        })
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        for x in 0..width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_feasibility_tab_never_looks_better_than_the_steps() {
    let mut t = T::reference();
    let request = json!({"Header": "PGM-KDA-V1.0", "Kind": "feasibility", "TurnIndex": 0,
        "ProcessActions": [
            {"Step": 1, "Statement": "MM-Add Nil Kiosk#3 At MLoc:Square.Stage"},
            {"Step": 2, "Statement": "Post Nil Item#12 To Process#Market"}]});
    let response = json!({"Header": "PGM-KDA-V1.0", "TurnIndex": 0, "Outcome": "answered",
        "Feasibility": {"Overall": "feasible",
            "Steps": [{"Step": 1, "PAStatus": "Clash", "Reason": "c1 conflicts"}]}});
    t.finished(1, turn(request, Some(response)));
    t.detail_tab(DetailTab::Feasibility);
    let text = screen(&t, 120, 40);
    assert!(text.contains("0 of 2 steps Ack, 1 not answered"), "{text}");
    assert!(
        text.contains("the server says feasible, but its steps say infeasible"),
        "{text}"
    );
    let missing = text
        .lines()
        .find(|l| l.contains("Post Nil Item#12"))
        .expect("the missing step shown");
    assert!(
        missing.contains("missing") && missing.contains("no PA Status"),
        "{missing}"
    );
    // The badge is not in the colour of "feasible".
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal
        .draw(|f| {
            crate::tui::view::render(f, &t.app);
        })
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let (x, y) = (0..40u16)
        .flat_map(|y| (0..120u16).map(move |x| (x, y)))
        .find(|&(x, y)| {
            buffer[(x, y)].symbol() == "F"
                && (1..8).all(|k| x + k < 120)
                && (0..8)
                    .map(|k| buffer[(x + k, y)].symbol())
                    .collect::<String>()
                    == "FEASIBLE"
        })
        .expect("the badge");
    let theme = &t.app.config.theme;
    assert_ne!(
        buffer[(x, y)].bg,
        theme.overall(crate::protocol::dac::Overall::Feasible)
    );
    assert_eq!(
        buffer[(x, y)].bg,
        theme.overall(crate::protocol::dac::Overall::Infeasible)
    );
}

#[test]
fn an_unknown_id_in_a_statement_is_warned_about_and_the_request_still_sent() {
    use crate::protocol::resources::Words;
    let mut vocabulary = crate::protocol::resources::Vocabulary::default();
    for (w, id) in [
        (Words::Entities, "Avatar#7"),
        (Words::MLocations, "MLoc:Square.Stage"),
    ] {
        vocabulary.add(w, id);
    }
    let mut t = T::reference_publishing(vocabulary);
    focus_field(&mut t, crate::protocol::dac::Kind::Feasibility, "Steps");
    t.type_text("MM-Move Nil Ghost#1 To MLoc:Square.Stage");
    let warnings = t.current().composer.checked.warnings.clone();
    assert!(
        warnings.iter().any(|w| w.contains("Ghost#1 not among")),
        "{warnings:?}"
    );
    let fx = t.key(KeyCode::F(5));
    assert!(
        matches!(&fx[..], [Effect::Send { .. }]),
        "a warning never blocks: {fx:?}"
    );
}

#[test]
fn closing_a_dialogue_takes_its_turns_out_of_the_unsaved_count() {
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.finished(
        2,
        turn(
            json!({"Header": "PGM-USR-V1.0", "TurnIndex": 0}),
            Some(json!({})),
        ),
    );
    assert_eq!(t.app.session().unsaved(), 2);
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('x'));
    t.key(KeyCode::Char('y'));
    assert_eq!(
        t.app.session().unsaved(),
        1,
        "the other dialogue's turn only"
    );
    t.key(KeyCode::Char('x'));
    t.key(KeyCode::Char('y'));
    assert_eq!(t.app.session().unsaved(), 0);
    // Nothing unsaved: q quits at once.
    assert_eq!(quits(&t.key(KeyCode::Char('q'))), [true]);
}

#[test]
fn the_sidebar_dot_follows_the_servers_health() {
    use crate::tui::app::ServerStatus;
    let mut t = T::reference();
    assert_eq!(t.server_of(1).status, ServerStatus::Connected);
    // The server died under a turn: not "connected" any more.
    let mut gone = grounding(0);
    gone.reply = Reply::Error(TurnError {
        kind: ErrorKind::Gone,
        message: "the server exited".into(),
    });
    t.finished(1, gone);
    assert!(
        matches!(&t.server_of(1).status, ServerStatus::Failed(e) if e.contains("the server exited")),
        "{:?}",
        t.server_of(1).status
    );
    // An answer again: connected.
    t.finished(1, grounding(1));
    assert_eq!(t.server_of(1).status, ServerStatus::Connected);
    // Its only dialogue's session ended: said on the server too.
    t.event(Event::Engine(Box::new(EngineEvent::Closed { dialogue: 2 })));
    assert!(matches!(&t.server_of(2).status, ServerStatus::Failed(_)));
}

#[test]
fn a_take_over_through_the_http_proxy_uses_the_command_lines_token() {
    use crate::client::spec::TransportSpec;
    use crate::session::journal::Line;
    use crate::tui::event::WatchEvent;
    let mut o = options(Vec::new());
    o.token = Some("s3cret".into());
    let (mut t, _) = T::start(o);
    let line = |l: Line| Event::Watch(WatchEvent::Line(Box::new(l)));
    t.event(Event::Watch(WatchEvent::Started(PathBuf::from(
        "/data/recordings/r.jsonl",
    ))));
    let server = ServerSpec::from_url("http://127.0.0.1:9/mcp").unwrap();
    t.event(line(Line::Start {
        name: None,
        servers: vec![server.clone()],
        lock: None,
    }));
    t.event(line(Line::Dialogue {
        id: 1,
        server: server.name.clone(),
        interface: Interface::Dac,
        dialog_id: "D".into(),
        protocol_version: None,
    }));
    t.event(line(Line::Turn {
        dialogue: 1,
        turn: Box::new(grounding(0)),
    }));
    t.focus(Pane::Transcript);
    let fx = t.key(KeyCode::Char('O'));
    let token = fx.iter().find_map(|e| match e {
        Effect::Open { spec, .. } => match &spec.transport {
            TransportSpec::Http(h) => Some(h.token.clone()),
            _ => None,
        },
        _ => None,
    });
    assert_eq!(token, Some(Some("s3cret".into())), "{fx:?}");
}

/// The status line's first word: the mode.
fn mode_word(t: &T) -> &'static str {
    let s = screen(t, 120, 40);
    let last = s.lines().last().unwrap().trim_start().to_owned();
    if last.starts_with("✎ EDIT ") {
        "✎ EDIT"
    } else if last.starts_with("NAV ") {
        "NAV"
    } else {
        panic!("no mode on the status line: {last}")
    }
}

#[test]
fn focus_is_unmistakable_and_esc_always_leaves_the_composer() {
    let mut t = T::reference();
    assert!(t.app.typing());
    // The status line says letters are text; the composer's title has the mark.
    assert_eq!(mode_word(&t), "✎ EDIT");
    assert!(screen(&t, 120, 40).contains("▶ Compose"));
    t.type_text("Where?");
    let fx = t.key(KeyCode::F(5));
    assert!(matches!(&fx[..], [Effect::Send { .. }]), "{fx:?}");
    // Esc in the composer: back to NAV, always; the turn goes on, and how to cancel it is said.
    let fx = t.key(KeyCode::Esc);
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    assert!(!t.app.typing());
    assert_eq!(mode_word(&t), "NAV");
    assert!(screen(&t, 120, 40).contains("┏▶ Dialogue 1"));
    let notice = &t.app.notices().shown().unwrap().text;
    assert!(notice.contains("Esc again cancels"), "{notice}");
    // Esc outside the composer: the pending turn is cancelled; the focus stays in NAV.
    let fx = t.key(KeyCode::Esc);
    assert!(matches!(&fx[..], [Effect::Cancel { .. }]), "{fx:?}");
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    t.key(KeyCode::Char('?'));
    assert!(
        matches!(t.app.overlay(), Some(Overlay::Help { .. })),
        "a command, not text"
    );
}

#[test]
fn switching_to_a_dialogue_never_enters_edit() {
    let mut t = T::reference();
    // The first dialogue was left in the composer (a click on the next tab, say).
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    t.show(2);
    t.key(KeyCode::Esc);
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    // Back to the first, whose composer had the focus: NAV stays, `1` is a command.
    t.key(KeyCode::Char('1'));
    assert_eq!(t.app.workspace.current(), Some(t.dialogue(1)));
    assert_eq!(t.app.screen.focus(), Pane::Transcript);
    assert_eq!(mode_word(&t), "NAV");
    t.key(KeyCode::Char('2'));
    assert_eq!(t.app.workspace.current(), Some(t.dialogue(2)));
    assert!(
        t.current()
            .composer
            .fields
            .iter()
            .all(|f| f.text().is_empty())
    );
}

#[test]
fn the_status_line_says_what_enter_does_in_the_composer() {
    let mut t = T::reference();
    focus_field(&mut t, crate::protocol::dac::Kind::Feasibility, "Steps");
    assert!(screen(&t, 120, 40).contains("Enter new line"));
    focus_field(&mut t, crate::protocol::dac::Kind::Feasibility, "Space");
    assert!(screen(&t, 120, 40).contains("Enter next field"));
    // At 80 columns too: it is the first hint.
    let status = screen(&t, 80, 24)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(status.contains("Enter next field"), "{status}");
}

#[test]
fn fields_below_the_composers_room_are_said_at_80x24() {
    let mut t = T::reference();
    // A feasibility's first field: its Release field is out of view at 80x24.
    focus_field(&mut t, crate::protocol::dac::Kind::Feasibility, "Question");
    t.resize(80, 24);
    let s = screen(&t, 80, 24);
    assert!(!s.contains("Release"), "{s}");
    assert!(s.contains("more (Tab)"), "{s}");
    // Tab down to it: in view, and what is above said.
    for _ in 0..8 {
        if screen(&t, 80, 24).contains("Release") {
            break;
        }
        t.key(KeyCode::Tab);
    }
    let s = screen(&t, 80, 24);
    assert!(s.contains("Release"), "{s}");
    assert!(s.contains("above"), "{s}");
}

#[test]
fn a_duplicate_key_in_the_raw_editor_is_not_sent() {
    let mut t = T::reference();
    t.key(KeyCode::F(2));
    assert_eq!(t.current().composer.mode, crate::tui::composer::Mode::Raw);
    // F8 and Backspace empty it; the JSON is pasted in.
    t.key(KeyCode::F(8));
    for _ in 0..10 {
        t.key(KeyCode::Backspace);
    }
    assert_eq!(t.current().composer.raw.lines().join(""), "");
    let raw =
        r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "bench"}], "Kind": "feasibility"}"#;
    t.event(Event::Input(Input::Paste(raw.into())));
    assert_eq!(t.current().composer.raw.lines().join("\n"), raw);
    let fx = t.key(KeyCode::F(5));
    assert!(fx.is_empty(), "{fx:?}");
    let notice = &t.app.notices().shown().unwrap().text;
    assert!(
        notice.contains("written twice") && notice.contains("/Kind"),
        "{notice}"
    );
}

fn log_line(text: &str) -> crate::client::event::LogEntry {
    crate::client::event::LogEntry::new(1, crate::client::event::LogKind::Client, text)
}

#[test]
fn slash_searches_the_log_n_and_capital_n_go_round_esc_ends() {
    let mut t = T::reference();
    let before = t.app.log().visible_len();
    for text in [
        "{\"Kind\": \"ack\"}",
        "nothing",
        "{\"Status\": \"ACK\"}",
        "end",
    ] {
        t.logged(log_line(text));
    }
    let (first, second, last) = (before, before + 2, before + 3);
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('L'));
    t.focus(Pane::Log);
    t.key(KeyCode::Char('/'));
    t.type_text("ack");
    // Typing goes to the first match at once; Enter keeps the search.
    assert_eq!(t.app.log().selected, Some(first));
    assert!(!t.app.log().follow);
    t.key(KeyCode::Enter);
    let s = t.app.search.as_ref().expect("the search stays");
    assert!(!s.editing);
    assert_eq!(s.count(2), "1/2");
    t.key(KeyCode::Char('n'));
    assert_eq!(t.app.log().selected, Some(second));
    t.key(KeyCode::Char('n'));
    assert_eq!(t.app.log().selected, Some(first), "round the end");
    t.key(KeyCode::Char('N'));
    assert_eq!(t.app.log().selected, Some(second));
    assert!(
        t.app.overlay().is_none() && t.app.workspace.dialogues().len() == 2,
        "n was not New dialogue"
    );
    t.key(KeyCode::Esc);
    assert!(t.app.search.is_none());
    // A paste into the line is one line (CR line ends as tmux sends them).
    t.key(KeyCode::Char('/'));
    t.event(Event::Input(Input::Paste("end\r".into())));
    assert_eq!(t.app.search.as_ref().unwrap().query(), "end");
    assert_eq!(t.app.log().selected, Some(last));
}

#[test]
fn slash_in_the_detail_searches_the_raw_json_and_scrolls_to_each_match() {
    let mut t = T::reference();
    let mut terms: Vec<Value> = (0..40).map(|i| json!({"Text": format!("t{i}")})).collect();
    terms.push(json!({"Text": "needle"}));
    t.finished(
        1,
        turn(
            json!({"Header": "PGM-KDA-V1.0", "Kind": "semantic_grounding", "TurnIndex": 0,
                   "Terms": terms}),
            Some(json!({"Header": "PGM-KDA-V1.0", "TurnIndex": 0, "Note": "needle"})),
        ),
    );
    t.focus(Pane::Detail);
    t.key(KeyCode::Esc);
    t.focus(Pane::Detail);
    t.key(KeyCode::Char('/'));
    assert_eq!(
        t.current().transcript.detail_tab,
        crate::tui::app::DetailTab::Raw
    );
    t.type_text("NEEDLE");
    let first = t.current().transcript.detail_scroll;
    assert!(first > 40, "scrolled to the Request's match: {first}");
    t.key(KeyCode::Enter);
    t.key(KeyCode::Char('n'));
    let second = t.current().transcript.detail_scroll;
    assert!(second > first, "on to the Response's: {second}");
    let sel = t.current().transcript.selection().unwrap();
    assert_eq!(super::raw_matches(sel, "needle").len(), 2);
    // Another tab shown ends the search: n is New dialogue again.
    t.key(KeyCode::Char('h'));
    t.key(KeyCode::Char('n'));
    assert!(t.app.search.is_none());
    assert_eq!(t.app.workspace.dialogues().len(), 3, "n opened a dialogue");
}

#[test]
fn the_log_filter_is_the_one_line_editor() {
    let mut t = T::reference();
    t.logged(log_line("alpha beta"));
    t.logged(log_line("gamma"));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('L'));
    t.focus(Pane::Log);
    t.key(KeyCode::Char('|'));
    t.type_text("gam zz");
    assert_eq!(t.app.log().visible_len(), 0);
    t.key_with(KeyCode::Char('w'), KeyModifiers::CONTROL);
    t.key(KeyCode::Backspace);
    assert_eq!(t.app.log().filter, "gam");
    assert_eq!(t.app.log().visible_len(), 1);
    t.key(KeyCode::Enter);
    assert!(!t.app.log().editing_filter);
}

/// An id kept from before (the last frame's hits, an engine event under way) names
/// nothing once its server and dialogue are gone: nothing happens, nothing panics.
#[test]
fn a_removed_server_and_its_dialogue_are_gone_and_their_ids_name_nothing() {
    use crate::tui::app::SidebarRow;
    let mut t = T::reference();
    t.show(1);
    let (dialogue, other) = (t.dialogue(1), t.dialogue(2));
    let server = t.current().server;
    // The frame drawn before the server goes: its tab and its row.
    t.draw();
    let before = t.hits.clone();
    let tab = before.tabs.iter().find(|(_, d)| *d == dialogue).unwrap().0;
    let row = before
        .sidebar_rows
        .iter()
        .find(|(_, r)| *r == SidebarRow::Server(server))
        .unwrap()
        .0;
    let fx = t.in_sidebar(KeyCode::Delete);
    assert_eq!(closes(&fx), [1], "no turns: removed at once");
    assert!(
        !t.app.workspace.servers().contains(server)
            && !t.app.workspace.dialogues().contains(dialogue)
    );
    assert_eq!(
        t.app.workspace.current(),
        Some(other),
        "the tab after it shows"
    );
    assert_eq!(
        t.app.sidebar_rows().len(),
        2,
        "the other server and its dialogue"
    );
    // Clicks where that frame drew them (the next one is not drawn yet).
    for at in [tab, row] {
        t.hits = before.clone();
        t.click(at.x, at.y);
        assert_eq!(
            t.app.workspace.current(),
            Some(other),
            "a stale hit does nothing"
        );
    }
    // What the engine still says of the closed dialogue is dropped.
    assert!(t.finished(1, grounding(0)).is_empty());
    assert_eq!(t.app.session().unsaved(), 0);
}

#[test]
fn the_resources_overlay_asks_the_runner_and_reads_again_when_the_list_changes() {
    use crate::client::resources::Read;
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    let fx = t.key(KeyCode::F(3));
    assert!(
        matches!(&fx[..], [Effect::ListResources { key: 1 }]),
        "{fx:?}"
    );
    t.resources_listed(1, &["dac://domain", "dac://spaces/S"]);
    // A list for another dialogue is not this overlay's.
    t.resources_listed(2, &[]);
    assert!(screen(&t, 120, 40).contains("› dac://domain"));
    // Nothing read yet: W and y say so (and open nothing).
    assert!(t.key(KeyCode::Char('W')).is_empty());
    assert!(matches!(t.app.overlay(), Some(Overlay::Resources(_))));
    let said = &t.app.notices().shown().expect("a notice").text;
    assert_eq!(said, "no resource read yet: Enter reads the selected one");
    t.key(KeyCode::Down);
    let fx = t.key(KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::ReadResource { key: 1, uri }] if uri == "dac://spaces/S"),
        "{fx:?}"
    );
    t.event(Event::Engine(Box::new(EngineEvent::ResourceRead {
        dialogue: 1,
        uri: "dac://spaces/S".into(),
        result: Ok(Read {
            uri: "dac://spaces/S".into(),
            mime_type: Some("application/json".into()),
            shown: "{\n  \"SpaceID\": \"S\"\n}\n".into(),
            json: true,
        }),
    })));
    assert!(screen(&t, 120, 40).contains("\"SpaceID\": \"S\""));
    let fx = t.key(KeyCode::Char('y'));
    assert!(
        matches!(&fx[..], [Effect::Clipboard { text }] if text.contains("SpaceID")),
        "{fx:?}"
    );
    // notifications/resources/list_changed: the server's offer read again, and the list.
    let fx = t.event(Event::Engine(Box::new(EngineEvent::Client(
        crate::client::event::Event::ListChanged {
            connection: 1,
            what: "resources",
        },
    ))));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::ListResources { key: 1 }))
            && fx.iter().any(|e| matches!(e, Effect::Refresh { key: 1 })),
        "{fx:?}"
    );
    // The selection stays on its URI when the new list comes.
    t.resources_listed(1, &["dac://a", "dac://domain", "dac://spaces/S"]);
    assert!(screen(&t, 120, 40).contains("› dac://spaces/S"));
    // W asks where to write what is shown, named after the resource; Enter writes it there
    // (after the runner says whether a file is there).
    t.key(KeyCode::Char('W'));
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("no prompt");
    };
    assert_eq!(p.input.text(), "S.json");
    let fx = t.key(KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::CheckSaveTarget { path, what: crate::tui::event::SaveWhat::Json(text) }]
            if path.ends_with("S.json") && text.contains("SpaceID")),
        "{fx:?}"
    );
    // Esc leaves the prompt for the overlay, and the overlay for the explorer.
    t.key(KeyCode::Esc);
    assert!(matches!(t.app.overlay(), Some(Overlay::Resources(_))));
    t.key(KeyCode::Esc);
    assert!(t.app.overlay().is_none());
}

#[test]
fn export_without_a_turn_exports_the_draft() {
    let mut t = T::reference();
    t.type_text("Where is the bench?");
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('e'));
    let Some(Overlay::Export(e)) = &t.app.overlay() else {
        panic!("no Export overlay");
    };
    assert_eq!(e.what, "the draft");
    assert!(
        e.blocks[0].text.contains("Where is the bench?"),
        "{}",
        e.blocks[0].text
    );
    assert!(e.blocks[0].notes[0].contains("send fills the common fields"));
    assert!(screen(&t, 120, 40).contains("Export the draft as a command line"));
    // Written to a file, the lines end as a text file does.
    t.key(KeyCode::Char('W'));
    let fx = t.key(KeyCode::Enter);
    match &fx[..] {
        [
            Effect::CheckSaveTarget {
                path,
                what: crate::tui::event::SaveWhat::Json(text),
            },
        ] => {
            assert!(path.ends_with("export.sh"), "{path:?}");
            assert!(text.ends_with('\n'), "{text:?}");
            assert!(!text.ends_with("\n\n"), "{text:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tab_in_save_as_asks_the_runner_for_sessions_and_fills_in_what_it_found() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('S'));
    t.key_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
    t.type_text("se");
    let fx = t.key(KeyCode::Tab);
    assert!(
        matches!(&fx[..], [Effect::CompletePath { typed, extensions: ["json"] }] if typed == "se"),
        "{fx:?}"
    );
    t.event(Event::PathCompletions {
        typed: "se".into(),
        paths: vec!["sessions/".into(), "session.json".into()],
    });
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!("the prompt stays")
    };
    assert_eq!(p.input.text(), "session");
    assert_eq!(p.completions, ["sessions/", "session.json"]);
    // The note follows the text completed (the full path Save-as writes).
    assert!(p.note.contains("session"), "{}", p.note);
    // An answer for what is no longer typed is dropped.
    t.type_text("x");
    t.event(Event::PathCompletions {
        typed: "session".into(),
        paths: vec!["sessions/".into()],
    });
    let Some(Overlay::Prompt(p)) = &t.app.overlay() else {
        panic!()
    };
    assert_eq!(p.input.text(), "sessionx");
    assert!(p.completions.is_empty());
}

#[test]
fn a_path_pasted_in_open_is_completed_like_one_typed() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    t.key_with(KeyCode::Char('o'), KeyModifiers::CONTROL);
    let fx = t.event(Event::Input(Input::Paste("/tmp/se\r\n".into())));
    assert!(
        matches!(&fx[..], [Effect::CompletePath { typed, .. }] if typed == "/tmp/se"),
        "{fx:?}"
    );
}

/// A dialogue whose server is gone (taken out of the table under it) is not reconnected, and
/// the person is told why instead of nothing happening.
#[test]
fn reconnect_without_its_server_says_so() {
    let mut t = T::reference();
    t.key(KeyCode::Esc);
    let server = t.current().server;
    t.app.workspace.remove_server(server);
    let fx = t.key(KeyCode::Char('R'));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Open { .. })),
        "{fx:?}"
    );
    let said = &t.app.notices().shown().expect("a notice").text;
    assert!(said.contains("no longer here"), "{said}");
}

/// keys.toml reaches every key of the overlays of their own module (Export, Resources, a
/// server's question): what they do and the keys their foot shows are the user's.
#[test]
fn keys_toml_reaches_every_key_of_the_export_resources_and_ask_overlays() {
    use crate::client::answers::{Asking, Reply, SampledMessage};
    use crate::client::resources::Listed;
    let (keymap, problems) = crate::tui::keys_file::apply(
        "[overlay]\nselect = \"Ctrl-l\"\ncancel = \"Ctrl-g\"\nclose = \"x\"\ncopy = \"c\"\n\
         write-json = \"w\"\nreload = \"u\"\nnew-line = \"Ctrl-b\"\ndown = \"Ctrl-n\"\n\
         next-tab = \">\"\nprevious-tab = \"<\"\nexport-send = \"Alt-1\"\n\
         field-yes = \"+\"\nfield-no = \"-\"\nclear-field = \"Ctrl-x\"\n\
         [composer]\nnext-field = [\"Ctrl-n\", \"z\"]\nprevious-field = \"Alt-p\"\n\
         next-kind = \"Alt-l\"\nprevious-kind = \"Alt-h\"\nconfirm-field = \"Alt-n\"\n\
         field-down = \"Alt-j\"\nshow-completions = \"Alt-c\"\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let mut options = options(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ]);
    options.keymap = keymap;
    let (mut t, _) = T::start(options);
    t.opened(1);
    t.opened(2);
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);

    // Export: the old keys do nothing, the new ones do it.
    t.key(KeyCode::Char('e'));
    assert!(matches!(t.app.overlay, Some(Overlay::Export(_))));
    let foot = screen(&t, 120, 40);
    assert!(foot.contains("c/Ctrl-l copy · w write to a file"), "{foot}");
    for old in [KeyCode::Enter, KeyCode::Char('y'), KeyCode::Char('q')] {
        assert!(t.key(old).is_empty(), "{old:?}");
    }
    assert!(matches!(t.app.overlay, Some(Overlay::Export(_))));
    assert!(matches!(
        &t.key_with(KeyCode::Char('l'), KeyModifiers::CONTROL)[..],
        [Effect::Clipboard { .. }]
    ));
    t.key(KeyCode::Char('w'));
    assert!(
        matches!(t.app.overlay, Some(Overlay::Prompt(_))),
        "w writes"
    );
    t.key_with(KeyCode::Char('g'), KeyModifiers::CONTROL);
    t.key(KeyCode::Char('e'));
    t.key(KeyCode::Char('x'));
    assert!(t.app.overlay.is_none(), "x closes");

    // Resources.
    t.key(KeyCode::F(3));
    let listed = |uri: &str| Listed {
        uri: uri.into(),
        name: uri.into(),
        title: None,
        description: None,
        mime_type: None,
    };
    t.event(Event::Engine(Box::new(EngineEvent::ResourcesListed {
        dialogue: 1,
        result: Ok(vec![listed("dac://a"), listed("dac://b")]),
    })));
    let foot = screen(&t, 120, 40);
    assert!(foot.contains("Ctrl-l read"), "{foot}");
    assert!(foot.contains("u reload · Ctrl-g close"), "{foot}");
    for old in [
        KeyCode::Enter,
        KeyCode::Char('r'),
        KeyCode::Esc,
        KeyCode::Char('q'),
    ] {
        assert!(t.key(old).is_empty(), "{old:?}");
    }
    t.key_with(KeyCode::Char('n'), KeyModifiers::CONTROL);
    let fx = t.key_with(KeyCode::Char('l'), KeyModifiers::CONTROL);
    assert!(
        matches!(&fx[..], [Effect::ReadResource { key: 1, uri }] if uri == "dac://b"),
        "{fx:?}"
    );
    let fx = t.key(KeyCode::Char('u'));
    assert!(
        matches!(&fx[..], [Effect::ListResources { key: 1 }]),
        "{fx:?}"
    );
    t.key_with(KeyCode::Char('g'), KeyModifiers::CONTROL);
    assert!(t.app.overlay.is_none(), "Ctrl-g closes");

    // A server's question: a form's choice and fields, then a reply's lines.
    t.event(Event::Asked(ask(1, confirm_form())));
    let foot = screen(&t, 120, 40);
    assert!(foot.contains("Ctrl-l answer"), "{foot}");
    assert!(foot.contains(">/< choose"), "{foot}");
    assert!(foot.contains("yes or no: + yes, - no, > changes"), "{foot}");
    // x is no close here (a filled form would be lost), Space no longer a choice.
    t.key(KeyCode::Char('x'));
    t.key(KeyCode::Char(' '));
    // The yes-or-no field's own keys are the user's too.
    let flag = |t: &T| match t.app.overlay() {
        Some(Overlay::Ask(a)) => match &a.body {
            crate::tui::ask::Body::Form(f) => match &f.fields[f.focus].kind {
                crate::tui::ask::form::FieldKind::Flag(on) => *on,
                _ => panic!("not the yes-or-no field"),
            },
            _ => panic!("no form"),
        },
        _ => panic!("no question"),
    };
    assert_eq!(flag(&t), Some(true));
    for old in [KeyCode::Char('n'), KeyCode::Backspace] {
        t.key(old);
        assert_eq!(flag(&t), Some(true), "{old:?}");
    }
    t.key(KeyCode::Char('-'));
    assert_eq!(flag(&t), Some(false));
    t.key_with(KeyCode::Char('x'), KeyModifiers::CONTROL);
    assert_eq!(flag(&t), None);
    t.key(KeyCode::Char('+'));
    assert_eq!(flag(&t), Some(true));
    t.key(KeyCode::Char('<'));
    t.key_with(KeyCode::Char('n'), KeyModifiers::CONTROL);
    t.type_text("3");
    assert!(answers(&t.key(KeyCode::Enter)).is_empty());
    let fx = t.key_with(KeyCode::Char('l'), KeyModifiers::CONTROL);
    assert_eq!(
        answers(&fx),
        [(1, Reply::Accept(json!({"confirmed": false, "seats": 3})))]
    );
    t.event(Event::Asked(ask(
        2,
        Asking::Sampling {
            messages: vec![SampledMessage {
                role: "user".into(),
                text: "Name the square".into(),
            }],
            system: None,
            max_tokens: 50,
        },
    )));
    assert!(screen(&t, 120, 40).contains("Ctrl-b new line"));
    t.type_text("xa");
    t.key_with(KeyCode::Char('b'), KeyModifiers::CONTROL);
    t.type_text("b");
    let fx = t.key_with(KeyCode::Char('l'), KeyModifiers::CONTROL);
    assert_eq!(answers(&fx), [(2, Reply::Accept(json!("xa\nb")))]);
    t.event(Event::Asked(ask(3, confirm_form())));
    t.key(KeyCode::Esc);
    assert!(
        matches!(t.app.overlay, Some(Overlay::Ask(_))),
        "Esc no longer dismisses"
    );
    let fx = t.key_with(KeyCode::Char('g'), KeyModifiers::CONTROL);
    assert_eq!(answers(&fx), [(3, Reply::Cancel)]);

    // The composer's moves between fields and Kinds: the new keys do them, the old do not.
    let alt = |t: &mut T, c| t.key_with(KeyCode::Char(c), KeyModifiers::ALT);
    let row = |t: &T| t.current().composer.row;
    t.focus(Pane::Composer);
    t.click_composer_row(0);
    let kind = t.current().composer.kind;
    t.key(KeyCode::Right);
    assert_eq!(
        t.current().composer.kind,
        kind,
        "→ no longer changes the Kind"
    );
    alt(&mut t, 'l');
    assert_ne!(t.current().composer.kind, kind, "Alt-l does");
    alt(&mut t, 'h');
    assert_eq!(t.current().composer.kind, kind);
    t.key_with(KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(row(&t), 1, "Ctrl-n: the next field");
    // A letter bound to a move is still typed in a text field.
    t.type_text("za");
    assert_eq!(row(&t), 1);
    assert_eq!(t.current().composer.fields[0].text(), "za");
    alt(&mut t, 'n');
    assert_eq!(row(&t), 2, "Alt-n leaves a one-line field");
    alt(&mut t, 'p');
    assert_eq!(row(&t), 1);
    alt(&mut t, 'j');
    assert_eq!(row(&t), 2);
    alt(&mut t, 'p');
    t.key(KeyCode::Enter);
    assert_eq!(row(&t), 1, "Enter no longer leaves the one-line Question");
    assert_eq!(
        t.current().composer.fields[0].text(),
        "za",
        "nor is it a line break there"
    );
    // The status line names the keys in use (once the last notice has faded).
    t.now += crate::tui::app::NOTICE_TIME;
    t.event(Event::Tick);
    let shown = screen(&t, 120, 40);
    assert!(
        shown.contains("Alt-n next field"),
        "what Enter did: {shown}"
    );
    let shown = screen(&t, 200, 40);
    assert!(shown.contains("Ctrl-n next field"), "{shown}");
    assert!(shown.contains("Alt-c complete"), "{shown}");
    // Tab is the explorer's focus-next only: it leaves the composer at once.
    t.key(KeyCode::Tab);
    assert_ne!(t.app.screen.focus(), Pane::Composer);
}

/// "not sent: the Request is not JSON ..." goes once the JSON is fixed (it stayed for its
/// six seconds, saying the Request could not be sent when it could); it stays while it cannot.
#[test]
fn a_not_sent_notice_goes_once_its_cause_is_fixed() {
    let mut t = T::reference();
    t.key(KeyCode::F(2));
    t.app.current_dialogue_mut().unwrap().composer.raw =
        crate::tui::composer::editor(r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "b"}"#);
    t.app.with_composer(|c, ctx| c.recheck(ctx));
    assert!(t.key(KeyCode::F(5)).is_empty());
    let notice = t.app.notices.shown().map(|n| n.text.clone()).unwrap();
    assert!(notice.contains("not sent"), "{notice}");
    // A key that leaves it broken: still said.
    t.key(KeyCode::Char(' '));
    assert!(t.app.notices.shown().is_some(), "still not JSON");
    // The closing bracket and brace typed at the end: JSON, and the notice goes.
    t.key_with(KeyCode::End, KeyModifiers::CONTROL);
    t.key(KeyCode::Char(']'));
    assert!(t.app.notices.shown().is_some(), "still not JSON");
    t.key(KeyCode::Char('}'));
    assert!(
        t.app
            .current_dialogue()
            .unwrap()
            .composer
            .content(&[])
            .is_ok(),
        "{:?}",
        t.app.current_dialogue().unwrap().composer.content(&[])
    );
    assert!(t.app.notices.shown().is_none(), "the cause is gone");
}

/// A start on several servers whose first fails (or has no BKN tool) lands on the first
/// dialogue that has not failed, once the connections say so; never after the person moved.
#[test]
fn a_start_whose_first_server_fails_shows_the_first_that_connects() {
    let servers = || {
        vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
            ServerSpec::embedded(Interface::Dac),
        ]
    };
    let no_bkn_tool = |t: &mut T, key: u64| {
        t.event(Event::Engine(Box::new(EngineEvent::Failed {
            dialogue: key,
            error: "everything has no BKN-DAC tool; its tools: search".into(),
            summary: Some(Box::default()),
            needs_input: None,
        })))
    };
    let (mut t, _) = T::new(servers());
    // The third answers first: the first is still connecting, and stays in view.
    t.opened(3);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(1)));
    // The first has no BKN tool: the view goes to the second (still connecting), then stays
    // there as it opens.
    no_bkn_tool(&mut t, 1);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(2)));
    t.opened(2);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(2)));
    // The one that failed still says why from its tab, and where a BKN dialogue is had.
    t.show(1);
    let shown = screen(&t, 120, 40);
    assert!(shown.contains("its tools: search"), "{shown}");
    assert!(
        shown.contains("For a BKN dialogue, use another server: a in the servers pane"),
        "{shown}"
    );
    assert!(shown.contains("] shows the next dialogue"), "{shown}");
    assert!(!shown.contains("reconnects"), "{shown}");

    // The second fails too: the third, open already.
    let (mut t, _) = T::new(servers());
    no_bkn_tool(&mut t, 1);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(2)));
    no_bkn_tool(&mut t, 2);
    t.opened(3);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(3)));

    // Every one fails: the first stays in view.
    let (mut t, _) = T::new(servers());
    for key in [3, 2, 1] {
        no_bkn_tool(&mut t, key);
    }
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(1)));

    // The person pressed a key before the first failed: what they look at stays.
    let (mut t, _) = T::new(servers());
    t.key(KeyCode::Esc);
    t.opened(2);
    no_bkn_tool(&mut t, 1);
    assert_eq!(t.app.workspace().current(), Some(t.dialogue(1)));
}

fn kept(fx: &[Effect]) -> Vec<crate::tui::persist::Kept> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Quit { kept, .. } => Some(*kept),
            _ => None,
        })
        .collect()
}

/// Issue 29: the last run's copy is replaced only by a run that leaves unsaved turns of its
/// own; a run whose one turn was closed with its dialogue leaves nothing to keep.
#[test]
fn a_quit_says_what_it_leaves_for_the_last_runs_copy() {
    use crate::tui::persist::Kept;
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('q'));
    assert!(matches!(t.app.overlay(), Some(Overlay::Confirm(_))));
    assert_eq!(
        kept(&t.key(KeyCode::Char('y'))),
        [Kept {
            unsaved: 1,
            drafts: false
        }]
    );
    // The trial's run B: a turn, its dialogue closed, q: nothing to keep.
    let mut t = T::reference();
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('x'));
    t.key(KeyCode::Char('y'));
    assert_eq!(kept(&t.key(KeyCode::Char('q'))), [Kept::default()]);
}

/// Issue 29: a start tells of the last run's unsaved turns and how to open them.
#[test]
fn the_start_tells_of_the_last_runs_unsaved_turns() {
    let t = T::reference_with(|o| {
        o.last_run = Some(crate::tui::persist::LastRun {
            path: PathBuf::from("/data/last-run.json"),
            unsaved: 2,
        })
    });
    let said: Vec<&str> = t.app.notices.messages().map(|n| n.text.as_str()).collect();
    assert!(
        said.iter()
            .any(|m| m.contains("2 unsaved turns of the last run are in")
                && m.contains("/data/last-run.json")
                && m.contains("Ctrl-o to open")),
        "{said:?}"
    );
    // A quit that leaves unsaved turns of its own says it replaces them.
    let mut t = T::reference_with(|o| {
        o.last_run = Some(crate::tui::persist::LastRun {
            path: PathBuf::from("/data/last-run.json"),
            unsaved: 2,
        })
    });
    t.finished(1, grounding(0));
    t.key(KeyCode::Esc);
    t.key(KeyCode::Char('q'));
    let Some(Overlay::Confirm(c)) = t.app.overlay() else {
        panic!("the quit question")
    };
    assert!(
        c.message
            .contains("they replace the last run's 2 unsaved turns there"),
        "{}",
        c.message
    );
    // Without one, nothing is said of it.
    let t = T::reference();
    assert!(
        !t.app
            .notices
            .messages()
            .any(|n| n.text.contains("last run")),
    );
}

/// Issue 29: with the composer open (as after a take-over: the next Request in it, the
/// focus there) on a small screen with the log shown, the Feasibility tab still shows a
/// step row under its verdict and headings.
#[test]
fn the_open_composer_leaves_the_feasibility_tab_a_step_row() {
    let mut t = T::reference();
    let request = json!({"Header": "PGM-KDA-V1.0", "Kind": "feasibility", "TurnIndex": 0,
        "ProcessActions": [
            {"Step": 0, "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]});
    let response = json!({"Header": "PGM-KDA-V1.0", "TurnIndex": 0, "Outcome": "answered",
        "Feasibility": {"Overall": "infeasible",
            "Steps": [{"Step": 0, "PAStatus": "Clash", "Reason": "it would break c1"}]}});
    t.finished(1, turn(request, Some(response)));
    t.detail_tab(DetailTab::Feasibility);
    t.event(Event::Input(Input::Resize(80, 24)));
    t.act(crate::tui::action::Action::ToggleLog);
    t.draw();
    t.focus(Pane::Composer);
    t.draw();
    t.key(KeyCode::Up);
    while t.current().composer.kind != crate::protocol::dac::Kind::Commitment {
        t.key(KeyCode::Right);
    }
    assert_eq!(t.app.screen.focus(), Pane::Composer);
    let text = screen(&t, 80, 24);
    assert!(text.contains("INFEASIBLE"), "{text}");
    assert!(text.contains("PA Status"), "{text}");
    assert!(text.contains("Clash"), "the step row shows:\n{text}");
}

/// Each mistake of the files read at start (config.toml's settings one by one, a theme,
/// keys.toml) is a message of its own in the explorer's messages, not one line joined by ";"
/// that the status line cuts.
#[test]
fn each_mistake_of_the_files_read_at_start_is_a_message_of_its_own() {
    let mut o = options(Vec::new());
    o.problems = vec![
        "/c/config.toml:2: timeout = \"0\": '0' is no time at all; left out".into(),
        "/c/config.toml:3: thme is not a setting (did you mean theme?); left out".into(),
    ];
    let (app, _) = App::new(o, Instant::now());
    let texts: Vec<&str> = app.notices().messages().map(|n| n.text.as_str()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("/c/config.toml:2: timeout"))
            && texts
                .iter()
                .any(|t| t.starts_with("/c/config.toml:3: thme"))
            && !texts.iter().any(|t| t.contains("; /c/config.toml")),
        "{texts:?}"
    );
}
