//! What a server asks of the person at the explorer (an elicitation: a form to fill, a page
//! to open; a sampling: the reply a model would give), over either generation: one question
//! at a time in its overlay (`tui::ask`), the others waiting; the answer goes back to the
//! server through the runner (`Effect::Answer`), and the client logs it and keeps it with
//! the turn.

use crate::client::answers::Reply;
use crate::tui::app::{App, Severity};
use crate::tui::ask::AskOverlay;
use crate::tui::effect::Effect;
use crate::tui::event::AskView;
use crate::tui::overlay::Overlay;

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

    /// The next question waiting, in its overlay, when no overlay is open.
    pub(super) fn show_next_ask(&mut self) {
        if self.overlay.is_some() {
            return;
        }
        if let Some(ask) = self.asked.pop_front() {
            self.overlay = Some(Overlay::Ask(Box::new(AskOverlay::new(ask))));
        }
    }

    /// The person answered, declined or dismissed a question: it goes to the server.
    pub(super) fn replied(&mut self, ask: AskView, reply: Reply, fx: &mut Vec<Effect>) {
        let said = match &reply {
            Reply::Accept(_) => None,
            Reply::Decline => Some("declined"),
            Reply::Cancel => Some("dismissed"),
        };
        if let Some(said) = said {
            self.notify(
                format!("{said} the server's {}", ask.method),
                Severity::Info,
            );
        }
        fx.push(Effect::Answer { id: ask.id, reply });
    }
}
