//! The question a server asks the person at the explorer, as one overlay with its keys, its
//! paste and its drawing (`view`): an elicitation's form built field by field from the
//! requested schema (`form`), a page to open (URL elicitation), or the reply a model would
//! give, to write or edit (sampling, as MCP Inspector lets one do). What the person answers
//! goes back to the server through the runner (`Effect::Answer`); the client logs it and keeps
//! it with the turn, so the session saves it.
//!
//! Keys, from the key map's `overlay` place (keys.toml changes them): Enter answers (in a
//! reply, Alt-Enter or Ctrl-J starts a new line), Ctrl-D declines, Esc dismisses (MCP's
//! `cancel`: no choice made). Tab and ↑↓ move between a form's fields, → / Space and ←
//! change a choice.

pub mod form;
pub mod view;

use crate::client::answers::{Asking, Reply};
use crate::tui::action::{Action, Handled};
use crate::tui::event::AskView;
use form::Form;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

pub enum Body {
    Form(Form),
    /// A page to open; Enter says it is done.
    Url,
    /// The reply to write.
    Reply(Box<TextArea<'static>>),
}

pub struct AskOverlay {
    pub ask: AskView,
    pub body: Body,
    /// Why the last Enter did not answer.
    pub problem: Option<String>,
}

/// What came of a key.
#[derive(Clone, Debug, PartialEq)]
pub enum AskOutcome {
    Stay,
    Answer(Reply),
}

impl AskOverlay {
    pub fn new(ask: AskView) -> AskOverlay {
        let body = match &ask.asking {
            Asking::Form { schema } => Body::Form(Form::new(schema.clone())),
            Asking::Url { .. } => Body::Url,
            Asking::Sampling { .. } => Body::Reply(Box::new(crate::tui::composer::editor(""))),
        };
        AskOverlay {
            ask,
            body,
            problem: None,
        }
    }

    /// A key with the default key map (what the tests press).
    #[cfg(test)]
    pub fn key(&mut self, key: &KeyEvent) -> (Handled, AskOutcome) {
        let map = crate::tui::action::Keymap::default();
        let actions = map.actions_in(key, crate::tui::action::Context::Overlay);
        self.keys(key, &actions, map.edit(key).as_ref())
    }

    /// A key, with the action the key map gives it in the `overlay` place: Cancel dismisses,
    /// No declines, Select answers, Complete / Down and FocusPrev / Up move between a form's
    /// fields, next-tab / previous-tab change a choice, new-line breaks a reply's line. A
    /// letter is typing where text is typed (a text field, the reply: `j` and `k` are no
    /// moves there); `close` (q) never dismisses a question, a filled form would be lost.
    /// `actions`: every action the key has there (Space moves in a choice and picks in a
    /// multiple one), the first the one it does elsewhere.
    pub fn keys(
        &mut self,
        key: &KeyEvent,
        actions: &[Action],
        edit: Option<&Action>,
    ) -> (Handled, AskOutcome) {
        use Handled::Consumed;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let takes_text = match &self.body {
            Body::Form(form) => form.takes_text(),
            Body::Reply(_) => true,
            Body::Url => false,
        };
        let typing = takes_text && matches!(key.code, KeyCode::Char(_)) && !ctrl && !alt;
        let actions = if typing { &[][..] } else { actions };
        let action = actions.first().cloned();
        match action {
            Some(Action::Cancel) => return (Consumed, AskOutcome::Answer(Reply::Cancel)),
            Some(Action::No) => return (Consumed, AskOutcome::Answer(Reply::Decline)),
            _ => {}
        }
        match &mut self.body {
            Body::Url => match action {
                Some(Action::Select) => (
                    Consumed,
                    AskOutcome::Answer(Reply::Accept(serde_json::Value::Null)),
                ),
                _ if ctrl => (Handled::Ignored, AskOutcome::Stay),
                _ => (Consumed, AskOutcome::Stay),
            },
            Body::Form(form) => form_keys(form, &mut self.problem, key, actions, edit),
            Body::Reply(editor) => reply_keys(editor, &mut self.problem, key, action),
        }
    }

    /// Pasted text: into the field with the focus, or into the reply with its lines kept
    /// (whatever line endings the terminal sent).
    pub fn paste(&mut self, text: &str) {
        match &mut self.body {
            Body::Form(form) => form.paste(text),
            Body::Reply(editor) => {
                let text = text.replace("\r\n", "\n").replace('\r', "\n");
                editor.insert_str(text);
            }
            Body::Url => {}
        }
    }
}

/// A key in a form: Select answers (or says how many fields are not right yet), the moves
/// go between fields, the rest is the field's.
fn form_keys(
    form: &mut Form,
    problem: &mut Option<String>,
    key: &KeyEvent,
    actions: &[Action],
    edit: Option<&Action>,
) -> (Handled, AskOutcome) {
    use Handled::Consumed;
    let action = actions.first().cloned();
    match action {
        Some(Action::Select) => match form.answer() {
            Ok(content) => (Consumed, AskOutcome::Answer(Reply::Accept(content))),
            Err(n) => {
                *problem = Some(if n == 1 {
                    "one field is not right yet (marked !)".into()
                } else {
                    format!("{n} fields are not right yet (marked !)")
                });
                (Consumed, AskOutcome::Stay)
            }
        },
        Some(Action::Complete | Action::Down) => {
            form.next();
            (Consumed, AskOutcome::Stay)
        }
        Some(Action::FocusPrev | Action::Up) => {
            form.previous();
            (Consumed, AskOutcome::Stay)
        }
        _ => {
            if form.key(key, actions, edit) {
                *problem = None;
                (Consumed, AskOutcome::Stay)
            } else if key.modifiers.contains(KeyModifiers::CONTROL) {
                (Handled::Ignored, AskOutcome::Stay)
            } else {
                (Consumed, AskOutcome::Stay)
            }
        }
    }
}

/// A key in a sampling reply: new-line (Alt-Enter, Ctrl-J) makes a new line, Select sends
/// (not an empty reply), the rest is the editor's (function keys are the explorer's).
fn reply_keys(
    editor: &mut TextArea<'static>,
    problem: &mut Option<String>,
    key: &KeyEvent,
    action: Option<Action>,
) -> (Handled, AskOutcome) {
    use Handled::Consumed;
    match (key.code, action) {
        (_, Some(Action::NewLine)) => {
            editor.insert_newline();
            (Consumed, AskOutcome::Stay)
        }
        (_, Some(Action::Select)) => {
            let text = editor.lines().join("\n");
            if text.trim().is_empty() {
                // The keys that decline or dismiss are in the foot, from the key map.
                *problem = Some("write the reply first, or decline or dismiss the request".into());
                return (Consumed, AskOutcome::Stay);
            }
            (
                Consumed,
                AskOutcome::Answer(Reply::Accept(serde_json::Value::String(text))),
            )
        }
        (KeyCode::F(_), _) => (Handled::Ignored, AskOutcome::Stay),
        _ => {
            if editor.input(*key) {
                *problem = None;
            }
            (Consumed, AskOutcome::Stay)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::answers::SampledMessage;
    use serde_json::json;

    fn view(asking: Asking) -> AskView {
        AskView {
            id: 7,
            connection: 1,
            method: match asking {
                Asking::Sampling { .. } => crate::client::answers::SAMPLING,
                _ => crate::client::answers::ELICITATION,
            },
            name: None,
            message: "Please".into(),
            asking,
        }
    }

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn enter_accepts_a_form_only_when_the_schema_takes_it() {
        let mut o = AskOverlay::new(view(Asking::Form {
            schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
        }));
        let none = KeyModifiers::NONE;
        assert_eq!(o.key(&key(KeyCode::Enter, none)).1, AskOutcome::Stay);
        assert!(o.problem.as_deref().unwrap().contains("one field"));
        o.key(&key(KeyCode::Char('y'), none));
        assert_eq!(o.problem, None);
        assert_eq!(
            o.key(&key(KeyCode::Enter, none)).1,
            AskOutcome::Answer(Reply::Accept(json!({"ok": true})))
        );
    }

    #[test]
    fn esc_dismisses_and_ctrl_d_declines() {
        let mut o = AskOverlay::new(view(Asking::Url {
            url: "https://example.org/consent".into(),
        }));
        assert_eq!(
            o.key(&key(KeyCode::Esc, KeyModifiers::NONE)).1,
            AskOutcome::Answer(Reply::Cancel)
        );
        assert_eq!(
            o.key(&key(KeyCode::Char('d'), KeyModifiers::CONTROL)).1,
            AskOutcome::Answer(Reply::Decline)
        );
        assert_eq!(
            o.key(&key(KeyCode::Enter, KeyModifiers::NONE)).1,
            AskOutcome::Answer(Reply::Accept(serde_json::Value::Null))
        );
    }

    #[test]
    fn a_reply_keeps_its_lines_and_enter_sends_it() {
        let mut o = AskOverlay::new(view(Asking::Sampling {
            messages: vec![SampledMessage {
                role: "user".into(),
                text: "Summarise".into(),
            }],
            system: None,
            max_tokens: 100,
        }));
        assert_eq!(
            o.key(&key(KeyCode::Enter, KeyModifiers::NONE)).1,
            AskOutcome::Stay
        );
        o.paste("one\rtwo\r\nthree");
        o.key(&key(KeyCode::Enter, KeyModifiers::ALT));
        o.key(&key(KeyCode::Char('!'), KeyModifiers::NONE));
        assert_eq!(
            o.key(&key(KeyCode::Enter, KeyModifiers::NONE)).1,
            AskOutcome::Answer(Reply::Accept(json!("one\ntwo\nthree\n!")))
        );
    }
}
