//! A question before something that cannot be taken back: yes or no, or a few choices (save
//! first, set aside, overwrite, save as). Its keys are the key map's `question` place.

use super::{Outcome, OverlayHits, centered, framed};
use crate::client::engine::DialogueKey;
use crate::tui::action::{Action, Context, Handled, Keymap};
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmPurpose {
    /// Quit although the session has unsaved turns.
    Quit,
    /// Recover what a run that did not end cleanly autosaved (its session, its drafts).
    Recover(crate::tui::persist::Recovery),
    /// Close a dialogue that has turns.
    CloseDialogue(DialogueKey),
    /// Save over a file that exists.
    Overwrite(PathBuf, crate::tui::event::SaveWhat),
    /// Remove a server whose dialogues have turns.
    RemoveServer(crate::tui::ids::ServerId),
    /// Start the command a session file's server runs, then do the action that needed it.
    StartCommand(crate::tui::ids::ServerId, crate::tui::action::Action),
    /// Open another session although this one has unsaved turns: save them first, set them
    /// aside (a file of the data directory), or stay.
    OpenOverUnsaved,
    /// The session's file changed on disk since it was opened or saved: overwrite it, save
    /// as another file, or stay.
    SaveOverChanged(PathBuf),
}

/// What a question of more than yes and no offers besides "no".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Save,
    SetAside,
    Overwrite,
    SaveAs,
}

impl Choice {
    /// The action of the key map that answers it.
    pub fn action(self) -> Action {
        match self {
            Choice::Save => Action::SaveFirst,
            Choice::SetAside => Action::SetAside,
            Choice::Overwrite => Action::Overwrite,
            Choice::SaveAs => Action::SaveElsewhere,
        }
    }
}

impl ConfirmPurpose {
    /// The choices, when the question is more than yes or no, and what the box calls them.
    pub fn choices(&self) -> Option<&'static [(Choice, &'static str)]> {
        match self {
            ConfirmPurpose::OpenOverUnsaved => Some(&[
                (Choice::Save, "save first"),
                (Choice::SetAside, "set aside"),
            ]),
            ConfirmPurpose::SaveOverChanged(_) => Some(&[
                (Choice::Overwrite, "overwrite"),
                (Choice::SaveAs, "save as"),
            ]),
            _ => None,
        }
    }

    /// The keys the question's box names (from the key map in use).
    pub fn keys_shown(&self, keymap: &Keymap) -> String {
        // The first key of each: the box is one line.
        let key = |a: Action| {
            let keys = keymap.keys_in(&a, Context::Question);
            keys.split(" / ").next().unwrap_or_default().to_owned()
        };
        match self.choices() {
            Some(choices) => {
                let mut shown: Vec<String> = choices
                    .iter()
                    .map(|(c, what)| format!("{} {what}", key(c.action())))
                    .collect();
                shown.push(format!("{} cancel", key(Action::No)));
                format!(" {} ", shown.join(" · "))
            }
            None => format!(" {} yes · {} no ", key(Action::Yes), key(Action::No)),
        }
    }
}

pub struct Confirm {
    pub title: String,
    pub message: String,
    pub purpose: ConfirmPurpose,
}

impl Confirm {
    /// Yes, no, or one of its choices; nothing else answers it. `actions` are every action
    /// the key is bound to in the `question` place (one key can answer two questions: `s`
    /// saves first in one, saves as in another). A question of choices has no default: Yes
    /// (Enter, y) would not say which.
    pub fn keys(&mut self, actions: &[Action]) -> (Handled, Outcome) {
        let purpose = self.purpose.clone();
        let outcome = if actions.contains(&Action::No) {
            Outcome::Answered(purpose, false)
        } else if let Some(choices) = self.purpose.choices() {
            match choices.iter().find(|(c, _)| actions.contains(&c.action())) {
                Some((choice, _)) => Outcome::Chose(purpose, *choice),
                None => Outcome::Stay,
            }
        } else if actions.contains(&Action::Yes) {
            Outcome::Answered(purpose, true)
        } else {
            Outcome::Stay
        };
        (Handled::Consumed, outcome)
    }

    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        let t = app.theme();
        let r = centered(area, 78, 7);
        let keys = self.purpose.keys_shown(app.keymap());
        let inner = framed(frame, app, r, &keys);
        let lines = vec![
            Line::styled(self.title.clone(), t.bold(t.colors.warning)),
            Line::raw(self.message.clone()),
        ];
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
        OverlayHits {
            area: Some(r),
            ..OverlayHits::default()
        }
    }
}
