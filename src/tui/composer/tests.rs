use super::*;
use crate::protocol::process_action::Expected;
use crate::protocol::resources::Words;

struct Fixture {
    vocabulary: Vocabulary,
    defaults: CommonDefaults,
    commitments: Vec<String>,
    last_accepted: Option<u64>,
}

impl Fixture {
    fn new() -> Fixture {
        let mut v = Vocabulary {
            has_resources: true,
            ..Vocabulary::default()
        };
        for e in ["Avatar#7", "Kiosk#3", "Process#Market"] {
            v.add(Words::Entities, e);
        }
        for l in ["MLoc:Square.Stage", "MLoc:Square.Gate"] {
            v.add(Words::MLocations, l);
        }
        for a in ["MM-Move", "MM-Add", "Post"] {
            v.add(Words::Actions, a);
        }
        Fixture {
            vocabulary: v,
            defaults: CommonDefaults::default(),
            commitments: vec!["c1".into()],
            last_accepted: Some(3),
        }
    }

    fn ctx(&self) -> Context<'_> {
        Context {
            vocabulary: &self.vocabulary,
            commitments: &self.commitments,
            dialog_id: "dialog",
            next_turn: 4,
            last_accepted: self.last_accepted,
            defaults: &self.defaults,
        }
    }
}

fn key(c: &mut Composer, code: KeyCode, ctx: &Context) -> Handled {
    let key = KeyEvent::new(code, KeyModifiers::NONE);
    let keys = KeyActions::of(&crate::tui::action::Keymap::default(), &key);
    c.handle_key(key, &keys, ctx, 10)
}

fn type_text(c: &mut Composer, text: &str, ctx: &Context) {
    for ch in text.chars() {
        let code = if ch == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(ch)
        };
        key(c, code, ctx);
    }
}

fn go_to(c: &mut Composer, label: &str) {
    let i = c
        .fields
        .iter()
        .position(|f| f.spec.label == label)
        .unwrap_or_else(|| panic!("no field {label}"));
    c.row = i + usize::from(c.interface == Interface::Dac);
}

#[test]
fn form_and_raw_carry_the_request_across() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    go_to(&mut c, "Steps");
    type_text(
        &mut c,
        "MM-Move Nil Avatar#7 To MLoc:Square.Stage\nPost Nil Kiosk#3 To Process#Market",
        &ctx,
    );
    go_to(&mut c, "Commit");
    type_text(&mut c, "Avatar#7 locatedAt MLoc:Square.Gate", &ctx);
    assert!(c.checked.ok(), "{:?}", c.checked);
    let request = c.preview(&ctx).unwrap();
    assert_eq!(request["TurnIndex"], 4);
    assert_eq!(
        request["ProcessActions"][1]["Statement"],
        "Post Nil Kiosk#3 To Process#Market"
    );
    // c1 is the dialogue's already: the form makes up another ID.
    assert_eq!(request["Commitments"][0]["CommitmentID"], "c2");
    c.toggle_mode(&ctx);
    assert_eq!(c.mode, Mode::Raw);
    assert!(text_of(&c.raw).contains("\"DialogID\": \"dialog\""));
    // An edit in the raw JSON shows in the form; unknown properties are kept aside.
    let mut edited: Value = serde_json::from_str(&text_of(&c.raw)).unwrap();
    edited["DescrMetadata"] = json!("note");
    edited["EntityIDs"] = json!(["Kiosk#3"]);
    c.raw = editor(&edited.to_string());
    c.toggle_mode(&ctx);
    assert_eq!(c.mode, Mode::Form, "{:?}", c.message);
    assert_eq!(c.extra.get("DescrMetadata"), Some(&json!("note")));
    assert_eq!(
        c.extra.get("EntityIDs"),
        Some(&json!(["Kiosk#3"])),
        "kept although feasibility's form does not show it"
    );
    let again = c.preview(&ctx).unwrap();
    assert_eq!(again["ProcessActions"], request["ProcessActions"]);
    assert_ne!(again["QueryID"], request["QueryID"], "made afresh");
    // Broken JSON stays raw, with the reason.
    c.toggle_mode(&ctx);
    c.raw = editor("{\"Kind\": ");
    c.recheck(&ctx);
    assert!(c.checked.syntax.is_some());
    c.toggle_mode(&ctx);
    assert_eq!(c.mode, Mode::Raw);
    assert!(c.message.as_deref().unwrap().contains("not JSON"));
}

#[test]
fn statements_are_checked_and_completions_accepted_with_tab_without_a_space() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    go_to(&mut c, "Steps");
    type_text(&mut c, "MM-Mo", &ctx);
    assert_eq!(c.completion.as_ref().unwrap().items, ["MM-Move"]);
    assert_eq!(key(&mut c, KeyCode::Tab, &ctx), Handled::Consumed);
    type_text(&mut c, " Nil Av", &ctx);
    assert_eq!(c.completion.as_ref().unwrap().items, ["Avatar#7"]);
    key(&mut c, KeyCode::Tab, &ctx);
    type_text(&mut c, " To MLoc:Square.", &ctx);
    // ↑ ↓ move in the list; Enter takes the one chosen.
    let items = c.completion.as_ref().unwrap().items.clone();
    assert_eq!(items, ["MLoc:Square.Stage", "MLoc:Square.Gate"]);
    key(&mut c, KeyCode::Down, &ctx);
    key(&mut c, KeyCode::Enter, &ctx);
    let steps = c.fields.iter().find(|f| f.spec.label == "Steps").unwrap();
    assert_eq!(
        steps.editor.lines()[0],
        "MM-Move Nil Avatar#7 To MLoc:Square.Gate",
        "no space added after a completion"
    );
    assert!(c.checked.statements.is_empty());
    type_text(&mut c, " Towards X", &ctx);
    let (line, error) = &c.checked.statements[0];
    assert_eq!(
        (*line, error.position, error.expected),
        (0, 41, Expected::Preposition)
    );
    // Esc closes a list; without one it is the explorer's.
    c.refresh_completion(&ctx, true);
    if c.completion.is_some() {
        assert_eq!(key(&mut c, KeyCode::Esc, &ctx), Handled::Consumed);
    }
    assert_eq!(key(&mut c, KeyCode::Esc, &ctx), Handled::Ignored);
}

#[test]
fn an_id_is_found_by_any_of_its_parts_after_those_it_begins_with() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    go_to(&mut c, "Steps");
    type_text(&mut c, "MM-Move Nil Avatar#7 To Gate", &ctx);
    assert_eq!(c.completion.as_ref().unwrap().items, ["MLoc:Square.Gate"]);
    key(&mut c, KeyCode::Tab, &ctx);
    let steps = c.fields.iter().find(|f| f.spec.label == "Steps").unwrap();
    assert_eq!(
        steps.editor.lines()[0],
        "MM-Move Nil Avatar#7 To MLoc:Square.Gate"
    );
}

#[test]
fn tab_moves_between_fields_and_leaves_after_the_last() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.row = 0;
    let rows = c.rows();
    for expected in 1..rows {
        assert_eq!(key(&mut c, KeyCode::Tab, &ctx), Handled::Consumed);
        assert_eq!(c.row, expected);
    }
    assert_eq!(
        key(&mut c, KeyCode::Tab, &ctx),
        Handled::Ignored,
        "past the last"
    );
    assert_eq!(key(&mut c, KeyCode::BackTab, &ctx), Handled::Consumed);
    assert_eq!(c.row, rows - 2);
    // Letters on the Kind row pick a Kind; they never leak out as global keys.
    c.row = 0;
    assert_eq!(key(&mut c, KeyCode::Char('f'), &ctx), Handled::Consumed);
    assert_eq!(c.kind, Kind::Feasibility);
    assert_eq!(key(&mut c, KeyCode::Char('n'), &ctx), Handled::Consumed);
}

#[test]
fn a_long_field_scrolls_with_its_cursor() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    go_to(&mut c, "Steps");
    type_text(&mut c, "x1\nx2\nx3\nx4\nx5\nx6\nx7\nx8", &ctx);
    let steps = c.fields.iter().find(|f| f.spec.label == "Steps").unwrap();
    assert_eq!(steps.height(), 5);
    assert_eq!((steps.editor.cursor().0, steps.top), (7, 3));
    for _ in 0..6 {
        key(&mut c, KeyCode::Up, &ctx);
    }
    let steps = c.fields.iter().find(|f| f.spec.label == "Steps").unwrap();
    assert_eq!((steps.editor.cursor().0, steps.top), (1, 1));
}

#[test]
fn unknown_ids_and_an_old_turn_index_are_warned_about_but_not_blocked() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Constraints);
    go_to(&mut c, "Entity IDs");
    type_text(&mut c, "Avatar#7, Ghost#1", &ctx);
    assert!(c.checked.ok());
    assert_eq!(c.checked.warnings.len(), 1, "{:?}", c.checked.warnings);
    assert!(c.checked.warnings[0].contains("Ghost#1"));
    c.toggle_mode(&ctx);
    let mut v: Value = serde_json::from_str(&text_of(&c.raw)).unwrap();
    v["TurnIndex"] = json!(2);
    c.raw = editor(&v.to_string());
    c.recheck(&ctx);
    assert!(
        c.checked
            .warnings
            .iter()
            .any(|w| w.contains("TurnIndex 2 is not after 3")),
        "{:?}",
        c.checked.warnings
    );
}

#[test]
fn an_unclosed_string_is_reported_where_it_opens() {
    let text = "{\n  \"Kind\": \"constraints\",\n  \"Question\": \"where is\n}\n";
    let e = raw_syntax_error(text).unwrap();
    assert_eq!((e.line, e.column), (3, 15), "{e}");
}

#[test]
fn loading_a_request_clears_an_old_remark() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.load(&json!({"Kind": "nonsense"}), &ctx);
    c.toggle_mode(&ctx);
    assert!(c.message.is_some(), "the form needs a known Kind");
    c.load(
        &json!({"Kind": "constraints", "EntityIDs": ["Avatar#7"]}),
        &ctx,
    );
    assert_eq!(c.mode, Mode::Form);
    assert_eq!(c.message, None);
}

#[test]
fn clearing_empties_everything_and_reset_one_field() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Usr);
    go_to(&mut c, "User");
    type_text(&mut c, "User#Ana", &ctx);
    go_to(&mut c, "Hypothesis");
    type_text(&mut c, "Emotion is curious", &ctx);
    c.reset_field(&ctx);
    let content = c.content(&[]).unwrap();
    assert_eq!(content["UserID"], "User#Ana");
    assert!(content.get("Feedback").is_none());
    c.clear(&ctx);
    assert!(c.content(&[]).unwrap().is_empty());
}

#[test]
fn completion_never_rewrites_prose_and_enter_is_a_new_line_unless_the_list_was_chosen() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Commitment);
    go_to(&mut c, "Commit");
    // An ordinary word offers nothing unasked, and Enter is a new line.
    type_text(&mut c, "c1: Kiosk#3 locatedAt near the kio", &ctx);
    assert_eq!(c.completion, None, "prose is not completed unasked");
    key(&mut c, KeyCode::Enter, &ctx);
    type_text(&mut c, "c2: Avatar#7 isA Avatar", &ctx);
    let commit = |c: &Composer| {
        c.fields
            .iter()
            .find(|f| f.spec.label == "Commit")
            .unwrap()
            .editor
            .lines()
            .to_vec()
    };
    assert_eq!(
        commit(&c),
        [
            "c1: Kiosk#3 locatedAt near the kio",
            "c2: Avatar#7 isA Avatar"
        ]
    );
    // An ID-shaped word is offered; Enter without choosing is still a new line, the word
    // as typed.
    key(&mut c, KeyCode::Enter, &ctx);
    type_text(&mut c, "c3: Kio", &ctx);
    assert!(c.completion.is_some(), "an ID-shaped word is offered");
    key(&mut c, KeyCode::Enter, &ctx);
    assert_eq!(commit(&c)[2..], ["c3: Kio", ""]);
    // Chosen (↓), Enter accepts; Ctrl-Space asks, Enter accepts.
    key(&mut c, KeyCode::Backspace, &ctx);
    c.refresh_completion(&ctx, false);
    assert!(c.completion.is_some());
    key(&mut c, KeyCode::Down, &ctx);
    key(&mut c, KeyCode::Up, &ctx);
    key(&mut c, KeyCode::Enter, &ctx);
    assert_eq!(commit(&c)[2], "c3: Kiosk#3");
    // In a one-line field the list's Enter accepts (no new line to lose there).
    go_to(&mut c, "Release");
    assert!(!c.fields[c.focused_field().unwrap()].spec.widget.multiline());
}

#[test]
fn unknown_ids_inside_process_action_statements_are_warned_about_before_sending() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.set_kind(Kind::Feasibility);
    go_to(&mut c, "Steps");
    c.paste(
        "MM-Move Nil Avatar#7 To MLoc:Square.Stage With SpatialAttitude=upright\n\
         Post Nil Item#99 To Process#Market\n\
         MM-Add Nil Kiosk#3 At MLoc:Nowhere",
        &ctx,
    );
    assert!(c.checked.ok(), "{:?}", c.checked);
    let warnings = &c.checked.warnings;
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("step 1: Item#99 not among"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("step 2: MLoc:Nowhere"),
        "{warnings:?}"
    );
    // Still sendable: a warning, never a block.
    assert!(c.content(&[]).is_ok());
}

#[test]
fn a_key_written_twice_in_the_raw_editor_is_refused_with_its_place() {
    let fx = Fixture::new();
    let ctx = fx.ctx();
    let mut c = Composer::new(Interface::Dac);
    c.toggle_mode(&ctx);
    assert_eq!(c.mode, Mode::Raw);
    c.raw = editor(
        r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "bench", "Text": "fountain"}], "Kind": "affordances"}"#,
    );
    c.recheck(&ctx);
    let (field, why) = c.checked.field_error.clone().expect("refused");
    assert_eq!(field, "Raw JSON");
    assert!(
        why.contains("/Terms/0/Text") && why.contains("/Kind"),
        "{why}"
    );
    assert!(!c.checked.ok());
    let e = c.content(&[]).unwrap_err();
    assert!(e.contains("written twice"), "{e}");
    // Said once: sent.
    c.raw = editor(r#"{"Kind": "semantic_grounding", "Terms": [{"Text": "bench"}]}"#);
    c.recheck(&ctx);
    assert!(c.checked.field_error.is_none());
    assert!(c.content(&[]).is_ok());
}
