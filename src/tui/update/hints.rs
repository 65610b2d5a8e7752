//! What to press when there is no dialogue: it points only to what works now.

use crate::tui::action::Action;
use crate::tui::app::App;

impl App {
    /// Why there is no dialogue and the key that makes one: `n` on a server; with no server
    /// at all, `a` (add a server) and Ctrl-O (open a session), never `n`, which could not.
    pub fn no_dialogue_hint(&self) -> String {
        if self.workspace.servers().is_empty() {
            format!(
                "no server: {} adds one, {} opens a session",
                self.keymap().first_key(&Action::AddServer),
                self.keymap().first_key(&Action::Open)
            )
        } else {
            format!(
                "no dialogue: {} opens one",
                self.keymap().first_key(&Action::NewDialogue)
            )
        }
    }
}
