//! What a server asks of the person at the explorer (an elicitation: a form to fill; a
//! sampling: the reply a model would give), over either generation: one question at a time
//! in a prompt, the others waiting; an answer or a refusal goes back to the server through the
//! runner (`Effect::Answer`), and the log says what was asked and answered (the client's
//! handler writes it).

use crate::client::answers::{ELICITATION, SAMPLING};
use crate::tui::app::{App, Severity};
use crate::tui::effect::Effect;
use crate::tui::event::AskView;
use crate::tui::overlay::{Input, Overlay, Prompt, PromptPurpose};

impl App {
    /// A question came: shown now if nothing else is, else after what is open.
    pub(super) fn ask_arrived(&mut self, ask: AskView) {
        self.notify(
            format!("the server asks: {} ({})", ask.message, ask.method),
            Severity::Warning,
        );
        self.asked.push_back(ask);
        self.show_next_ask();
    }

    /// The next question waiting, in a prompt, when no overlay is open.
    pub(super) fn show_next_ask(&mut self) {
        if self.overlay.is_some() {
            return;
        }
        if let Some(ask) = self.asked.pop_front() {
            self.overlay = Some(Overlay::Prompt(ask_prompt(ask, None)));
        }
    }

    /// The person's answer. A form's answer must be a JSON object (its fields): anything
    /// else is shown again with why, nothing sent.
    pub(super) fn answered(&mut self, ask: AskView, text: String, fx: &mut Vec<Effect>) {
        if ask.method == ELICITATION {
            let object = crate::protocol::json::from_str::<serde_json::Value>(&text)
                .ok()
                .is_some_and(|v| v.is_object());
            if !object {
                let mut prompt = ask_prompt(
                    ask,
                    Some(
                        "the answer to a form is a JSON object of its fields, e.g. {\"confirmed\": true}",
                    ),
                );
                prompt.input = Input::new(&text);
                self.overlay = Some(Overlay::Prompt(prompt));
                return;
            }
        }
        fx.push(Effect::Answer {
            id: ask.id,
            text: Some(text),
        });
    }

    /// The person declined (Esc).
    pub(super) fn declined(&mut self, ask: &AskView, fx: &mut Vec<Effect>) {
        fx.push(Effect::Answer {
            id: ask.id,
            text: None,
        });
        self.notify(
            format!("declined the server's {}", ask.method),
            Severity::Info,
        );
    }
}

/// The prompt of a question, with `problem` (why the last answer was not taken) if any.
fn ask_prompt(ask: AskView, problem: Option<&str>) -> Prompt {
    let what = match ask.method {
        SAMPLING => "write the reply a model would give",
        _ => "answer with the form's fields as JSON",
    };
    let named = ask
        .name
        .as_ref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let mut note = format!("{}\n{what} · Enter: answer · Esc: decline", ask.message);
    if let Some(problem) = problem {
        note = format!("{problem}\n{note}");
    }
    Prompt {
        title: format!("The server asks{named}: {}", ask.method),
        input: Input::new(&ask.prefill),
        purpose: PromptPurpose::Answer(ask),
        note,
        secret: false,
    }
}
