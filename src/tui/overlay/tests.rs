//! Each overlay's keys, clicks and pastes, through the key map (as `keys.toml` changes it).

use super::*;
use crate::tui::keys_file;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn press(o: &mut Overlay, code: KeyCode) -> Outcome {
    o.key(key(code), &Keymap::default(), &Hits::default()).1
}

fn type_in(o: &mut Overlay, text: &str) {
    for c in text.chars() {
        press(o, KeyCode::Char(c));
    }
}

fn click(o: &mut Overlay, hits: &Hits, column: u16, row: u16) -> Outcome {
    o.mouse(
        MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        },
        hits,
    )
}

fn palette() -> Palette {
    Palette::new(vec![
        (Action::Save, "Save the session".into(), "Ctrl-s".into()),
        (
            Action::ToggleLog,
            "Show or hide the protocol log".into(),
            "L".into(),
        ),
        (
            Action::SetTheme("light".into()),
            "Theme: light".into(),
            String::new(),
        ),
    ])
}

#[test]
fn fuzzy_matches_rank_the_best_first() {
    let mut p = palette();
    p.query = Input::new("thm lig");
    p.refilter();
    assert_eq!(p.chosen(), Some(Action::SetTheme("light".into())));
    p.query = Input::new("plog");
    p.refilter();
    assert_eq!(p.chosen(), Some(Action::ToggleLog));
    p.query = Input::new("zzzz");
    p.refilter();
    assert_eq!(p.chosen(), None);
}

#[test]
fn the_palette_types_letters_moves_with_arrows_and_runs_on_enter_or_click() {
    let mut o = Overlay::Palette(palette());
    // j and k are typed here, not moves.
    type_in(&mut o, "jk");
    let Overlay::Palette(p) = &o else { panic!() };
    assert_eq!(p.query.text(), "jk");
    press(&mut o, KeyCode::Char('u'));
    let Overlay::Palette(p) = &mut o else {
        panic!()
    };
    p.query = Input::default();
    p.refilter();
    press(&mut o, KeyCode::Down);
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::Run(Action::ToggleLog)
    );
    let hits = Hits {
        overlay: Some(Rect::new(0, 0, 40, 10)),
        overlay_rows: vec![(Rect::new(1, 3, 38, 1), 2)],
        ..Hits::default()
    };
    assert_eq!(
        click(&mut o, &hits, 5, 3),
        Outcome::Run(Action::SetTheme("light".into()))
    );
    assert_eq!(click(&mut o, &hits, 50, 30), Outcome::Close);
    // A paste filters, on one line.
    assert_eq!(o.paste("plo\r\n"), Outcome::Stay);
    let Overlay::Palette(p) = &o else { panic!() };
    assert_eq!(p.chosen(), Some(Action::ToggleLog));
}

#[test]
fn keys_toml_reaches_the_overlays_keys() {
    let (map, problems) = keys_file::apply(
        "[overlay]\nselect = \"Ctrl-l\"\ndown = \"Ctrl-n\"\n[question]\nyes = \"j\"\n",
    );
    assert!(problems.is_empty(), "{problems:?}");
    let mut o = Overlay::Palette(palette());
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    o.key(ctrl('n'), &map, &Hits::default());
    assert_eq!(
        o.key(ctrl('l'), &map, &Hits::default()).1,
        Outcome::Run(Action::ToggleLog)
    );
    // Enter is no longer Select: it does nothing, and is not typed.
    let mut o = Overlay::Palette(palette());
    assert_eq!(
        o.key(key(KeyCode::Enter), &map, &Hits::default()).1,
        Outcome::Stay
    );
    let mut q = Overlay::Confirm(Confirm {
        title: "t".into(),
        message: "m".into(),
        purpose: ConfirmPurpose::Quit,
    });
    assert_eq!(
        q.key(key(KeyCode::Char('j')), &map, &Hits::default()).1,
        Outcome::Answered(ConfirmPurpose::Quit, true)
    );
    assert_eq!(
        q.key(key(KeyCode::Char('y')), &map, &Hits::default()).1,
        Outcome::Stay
    );
    // The box names the keys in use.
    assert_eq!(ConfirmPurpose::Quit.keys_shown(&map), " j yes · n no ");
}

/// keys.toml reaches the line editor's keys too (`[edit]`), and a character bound there is
/// still typed.
#[test]
fn keys_toml_reaches_the_line_editors_keys() {
    let (map, problems) =
        keys_file::apply("[edit]\nline-start = \"Alt-a\"\ndelete-to-end = [\"x\", \"Alt-k\"]\n");
    assert!(problems.is_empty(), "{problems:?}");
    let mut o = Overlay::Prompt(Prompt::new("t", "", PromptPurpose::SaveAs));
    let press = |o: &mut Overlay, code, modifiers| {
        o.key(KeyEvent::new(code, modifiers), &map, &Hits::default())
    };
    for c in "box".chars() {
        press(&mut o, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let text = |o: &Overlay| match o {
        Overlay::Prompt(p) => (p.input.text().to_owned(), p.input.cursor()),
        _ => panic!(),
    };
    assert_eq!(text(&o), ("box".into(), 3), "x is typed, not a cut");
    // Ctrl-A is no longer the start of the line: the explorer's (Ignored), nothing moved.
    let (handled, _) = press(&mut o, KeyCode::Char('a'), KeyModifiers::CONTROL);
    assert_eq!((handled, text(&o)), (Handled::Ignored, ("box".into(), 3)));
    press(&mut o, KeyCode::Char('a'), KeyModifiers::ALT);
    assert_eq!(text(&o), ("box".into(), 0));
    press(&mut o, KeyCode::Char('k'), KeyModifiers::ALT);
    assert_eq!(text(&o), (String::new(), 0));
}

#[test]
fn a_ctrl_key_an_overlay_does_not_use_goes_to_the_explorer() {
    let mut o = Overlay::Palette(palette());
    let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert_eq!(
        o.key(ctrl_q, &Keymap::default(), &Hits::default()).0,
        Handled::Ignored
    );
    // Ctrl-W is the line editor's.
    let ctrl_w = KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL);
    assert_eq!(
        o.key(ctrl_w, &Keymap::default(), &Hits::default()).0,
        Handled::Consumed
    );
}

#[test]
fn a_question_answers_yes_or_no_and_nothing_else() {
    let mut o = Overlay::Confirm(Confirm {
        title: "t".into(),
        message: "m".into(),
        purpose: ConfirmPurpose::Quit,
    });
    assert_eq!(press(&mut o, KeyCode::Char('x')), Outcome::Stay);
    assert_eq!(
        press(&mut o, KeyCode::Esc),
        Outcome::Answered(ConfirmPurpose::Quit, false)
    );
    assert_eq!(
        press(&mut o, KeyCode::Char('y')),
        Outcome::Answered(ConfirmPurpose::Quit, true)
    );
}

#[test]
fn a_question_of_choices_takes_its_own_keys_and_has_no_default() {
    let path = PathBuf::from("s.json");
    let mut o = Overlay::Confirm(Confirm {
        title: "t".into(),
        message: "m".into(),
        purpose: ConfirmPurpose::SaveOverChanged(path.clone()),
    });
    assert_eq!(press(&mut o, KeyCode::Enter), Outcome::Stay);
    assert_eq!(press(&mut o, KeyCode::Char('y')), Outcome::Stay);
    assert_eq!(press(&mut o, KeyCode::Char('a')), Outcome::Stay);
    // s is "save as" here, "save first" in the other question.
    assert_eq!(
        press(&mut o, KeyCode::Char('s')),
        Outcome::Chose(
            ConfirmPurpose::SaveOverChanged(path.clone()),
            Choice::SaveAs
        )
    );
    assert_eq!(
        press(&mut o, KeyCode::Char('o')),
        Outcome::Chose(ConfirmPurpose::SaveOverChanged(path), Choice::Overwrite)
    );
    let mut o = Overlay::Confirm(Confirm {
        title: "t".into(),
        message: "m".into(),
        purpose: ConfirmPurpose::OpenOverUnsaved,
    });
    assert_eq!(
        press(&mut o, KeyCode::Char('s')),
        Outcome::Chose(ConfirmPurpose::OpenOverUnsaved, Choice::Save)
    );
    assert_eq!(
        ConfirmPurpose::OpenOverUnsaved.keys_shown(&Keymap::default()),
        " s save first · a set aside · n cancel "
    );
}

fn open_with_items() -> Overlay {
    Overlay::Open(OpenFile {
        items: vec![
            PickerItem {
                path: "sessions/a.json".into(),
                label: "a".into(),
                detail: String::new(),
            },
            PickerItem {
                path: "sessions/b.json".into(),
                label: "b".into(),
                detail: String::new(),
            },
        ],
        loading: false,
        ..OpenFile::new()
    })
}

#[test]
fn the_open_overlay_opens_a_typed_path_or_a_listed_one() {
    let mut o = open_with_items();
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::OpenPath("sessions/a.json".into())
    );
    type_in(&mut o, "/tmp/x");
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::OpenPath("/tmp/x".into())
    );
}

#[test]
fn enter_and_a_click_on_the_open_overlays_rows_are_one_action() {
    let hits = Hits {
        overlay: Some(Rect::new(0, 0, 60, 20)),
        overlay_rows: vec![(Rect::new(1, 2, 58, 1), 0), (Rect::new(1, 3, 58, 1), 1)],
        ..Hits::default()
    };
    // A session listed.
    let (mut by_key, mut by_click) = (open_with_items(), open_with_items());
    press(&mut by_key, KeyCode::Down);
    assert_eq!(
        press(&mut by_key, KeyCode::Enter),
        click(&mut by_click, &hits, 4, 3)
    );
    // A folder completed is gone into either way (it was opened as a file by a click).
    let completed = || {
        let mut o = Overlay::Open(OpenFile::new());
        type_in(&mut o, "se");
        let Overlay::Open(f) = &mut o else { panic!() };
        f.completed("se", vec!["sessions/".into(), "session.json".into()]);
        o
    };
    let (mut by_key, mut by_click) = (completed(), completed());
    assert_eq!(
        press(&mut by_key, KeyCode::Enter),
        Outcome::Typed("sessions/".into())
    );
    assert_eq!(
        click(&mut by_click, &hits, 4, 2),
        Outcome::Typed("sessions/".into())
    );
    let (mut by_key, mut by_click) = (completed(), completed());
    press(&mut by_key, KeyCode::Down);
    assert_eq!(
        press(&mut by_key, KeyCode::Enter),
        Outcome::OpenPath("session.json".into())
    );
    assert_eq!(
        click(&mut by_click, &hits, 4, 3),
        Outcome::OpenPath("session.json".into())
    );
}

#[test]
fn tab_types_what_the_completions_share_then_the_highlighted_one() {
    let mut o = Overlay::Open(OpenFile::new());
    type_in(&mut o, "s");
    let Overlay::Open(f) = &mut o else { panic!() };
    f.completed("s", vec!["sessions/".into(), "session.json".into()]);
    assert_eq!(
        press(&mut o, KeyCode::Tab),
        Outcome::Typed("session".into())
    );
    let Overlay::Open(f) = &mut o else { panic!() };
    f.completed("session", vec!["sessions/".into(), "session.json".into()]);
    assert_eq!(
        press(&mut o, KeyCode::Tab),
        Outcome::Typed("sessions/".into())
    );
}

#[test]
fn completing_a_path_is_a_pure_function_of_the_listing() {
    assert_eq!(open::complete("x", vec![]), ("x".into(), vec![]));
    assert_eq!(
        open::complete("~/d", vec!["~/docs/".into()]),
        ("~/docs/".into(), vec![])
    );
    let two = vec!["a/été.json".to_owned(), "a/étude/".to_owned()];
    assert_eq!(open::complete("a/", two.clone()), ("a/ét".into(), two));
}

#[test]
fn a_path_prompt_completes_on_tab_and_lists_what_is_ambiguous() {
    let mut o = Overlay::Prompt(Prompt::new("Save as", "ses", PromptPurpose::SaveAs));
    assert_eq!(
        press(&mut o, KeyCode::Tab),
        Outcome::CompletePath("ses".into(), &["json"])
    );
    let Overlay::Prompt(p) = &mut o else { panic!() };
    assert_eq!(
        p.completed("ses", vec!["sessions/".into(), "session.json".into()]),
        Some(Outcome::Typed("session".into()))
    );
    assert_eq!(p.completions.len(), 2);
    press(&mut o, KeyCode::Down);
    // Enter takes the highlighted completion; the next Enter saves.
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::Typed("session.json".into())
    );
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::Submit(PromptPurpose::SaveAs, "session.json".into())
    );
    // A prompt that is not a path has no completion: Tab does nothing.
    let mut o = Overlay::Prompt(Prompt::new("Add", "x", PromptPurpose::AddServer));
    assert_eq!(press(&mut o, KeyCode::Tab), Outcome::Stay);
}

#[test]
fn a_prompt_pastes_one_line_and_follows_it() {
    let mut o = Overlay::Prompt(Prompt::new("Save as", "", PromptPurpose::SaveAs));
    assert_eq!(o.paste("a.json\r"), Outcome::Typed("a.json".into()));
}

#[test]
fn scrolling_boxes_scroll_with_the_key_maps_keys_and_close_on_others() {
    let mut o = Overlay::Help { scroll: 0 };
    let hits = Hits {
        overlay_scroll_max: Some(5),
        ..Hits::default()
    };
    let map = Keymap::default();
    o.key(key(KeyCode::Char('j')), &map, &hits);
    o.key(key(KeyCode::End), &map, &hits);
    assert!(matches!(o, Overlay::Help { scroll: 5 }));
    assert_eq!(
        o.key(key(KeyCode::Char('x')), &map, &hits).1,
        Outcome::Close
    );
    let mut o = Overlay::LogEntry {
        entry: 3,
        scroll: 0,
    };
    assert_eq!(press(&mut o, KeyCode::Char('y')), Outcome::CopyEntry(3));
}

#[test]
fn the_defaults_form_moves_types_and_applies() {
    let mut o = Overlay::Defaults(DefaultsForm {
        inputs: [Input::default(), Input::default(), Input::default()],
        now: Default::default(),
        row: 0,
        scope: DefaultsScope::Dialogue,
        server: "s".into(),
    });
    type_in(&mut o, "m 1");
    press(&mut o, KeyCode::BackTab);
    press(&mut o, KeyCode::Char(' '));
    assert_eq!(
        press(&mut o, KeyCode::Enter),
        Outcome::SetDefaults([Some("m 1".into()), None, None], DefaultsScope::Server)
    );
}

#[test]
fn a_click_on_a_prompts_completion_takes_it_as_enter_does() {
    let mut o = Overlay::Prompt(Prompt::new("Save as", "s", PromptPurpose::SaveAs));
    let Overlay::Prompt(p) = &mut o else { panic!() };
    p.completed("s", vec!["sa.json".into(), "sb.json".into()]);
    let hits = Hits {
        overlay: Some(Rect::new(0, 0, 60, 10)),
        overlay_rows: vec![(Rect::new(1, 4, 58, 1), 0), (Rect::new(1, 5, 58, 1), 1)],
        ..Hits::default()
    };
    assert_eq!(click(&mut o, &hits, 3, 5), Outcome::Typed("sb.json".into()));
    let Overlay::Prompt(p) = &o else { panic!() };
    assert!(p.completions.is_empty());
}

#[test]
fn keys_toml_reaches_a_servers_question_too() {
    use crate::client::answers::{Asking, Reply};
    let (map, problems) = keys_file::apply("[overlay]\ncancel = \"Ctrl-g\"\n");
    assert!(problems.is_empty(), "{problems:?}");
    let mut o = Overlay::Ask(Box::new(crate::tui::ask::AskOverlay::new(
        crate::tui::event::AskView {
            id: 1,
            connection: 1,
            method: crate::client::answers::ELICITATION,
            name: None,
            message: "Your name?".into(),
            asking: Asking::Form {
                schema: serde_json::json!({"type": "object",
                    "properties": {"name": {"type": "string"}}}),
            },
        },
    )));
    // j is typed into the field, not a move.
    o.key(key(KeyCode::Char('j')), &map, &Hits::default());
    let ctrl_g = KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL);
    assert!(matches!(
        o.key(ctrl_g, &map, &Hits::default()).1,
        Outcome::Replied(_, Reply::Cancel)
    ));
}
