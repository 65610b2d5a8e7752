//! A line to type: the path to save the session or a test at, a scenario to run, a server to
//! add, a server's `${input:…}`, a log filter. In a line that takes a path, Tab completes it
//! (`complete`): the folder is read by the runner, the candidates come back as an event.

use super::{Input, Outcome, OverlayHits, centered, framed, key_hint, leaves, list_row};
use crate::tui::action::{Action, Handled};
use crate::tui::app::App;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptPurpose {
    SaveAs,
    FilterLog,
    /// Save the dialogue in view as a test (a scenario file).
    SaveTest,
    /// Run a scenario file on the server in view.
    RunScenario,
    /// A server to add: a command line, a URL, or the name of one found.
    AddServer,
    /// The value of a server's `${input:ID}` (the server, the input's ID).
    ServerInput(crate::tui::ids::ServerId, String),
    /// Write the JSON in view to a file (`W`).
    WriteJson,
    /// Write what an overlay shows (a resource read, a command line) to a file: this text.
    WriteText(String),
}

impl PromptPurpose {
    /// Whether what is typed is a path (Tab completes it).
    pub fn takes_path(&self) -> bool {
        self.extensions().is_some()
    }

    /// The files that complete a path typed here (besides folders): `Some(&[])` for any.
    pub fn extensions(&self) -> Option<&'static [&'static str]> {
        match self {
            PromptPurpose::SaveAs => Some(&["json"]),
            PromptPurpose::SaveTest | PromptPurpose::RunScenario => Some(&["yaml", "yml"]),
            PromptPurpose::WriteJson | PromptPurpose::WriteText(_) => Some(&[]),
            _ => None,
        }
    }
}

pub struct Prompt {
    pub title: String,
    pub input: Input,
    pub purpose: PromptPurpose,
    /// Lines under the input, updated as it is typed (Save-as: the full path it writes).
    pub note: String,
    /// Shown as dots (a password or a token).
    pub secret: bool,
    /// The paths that complete what is typed, after a Tab that found more than one.
    pub completions: Vec<String>,
    /// The highlighted completion.
    pub selected: usize,
}

impl Prompt {
    pub fn new(title: impl Into<String>, text: &str, purpose: PromptPurpose) -> Prompt {
        Prompt {
            title: title.into(),
            input: Input::new(text),
            purpose,
            note: String::new(),
            secret: false,
            completions: Vec::new(),
            selected: 0,
        }
    }

    pub fn keys(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        edit: Option<&Action>,
    ) -> (Handled, Outcome) {
        if let Some(changed) = self.input.key(key, edit) {
            return (Handled::Consumed, self.edited(changed));
        }
        let last = self.completions.len().saturating_sub(1);
        match action {
            Some(Action::Cancel) => (Handled::Consumed, Outcome::Close),
            Some(Action::Select) => (Handled::Consumed, self.select()),
            Some(Action::Complete) => match self.purpose.extensions() {
                Some(extensions) => (
                    Handled::Consumed,
                    Outcome::CompletePath(self.input.text().to_owned(), extensions),
                ),
                None => (Handled::Consumed, Outcome::Stay),
            },
            Some(Action::Down) if !self.completions.is_empty() => {
                self.selected = (self.selected + 1).min(last);
                (Handled::Consumed, Outcome::Stay)
            }
            Some(Action::Up) if !self.completions.is_empty() => {
                self.selected = self.selected.saturating_sub(1);
                (Handled::Consumed, Outcome::Stay)
            }
            _ => (leaves(key), Outcome::Stay),
        }
    }

    /// What typing came to: a new text drops the completions it had.
    fn edited(&mut self, changed: bool) -> Outcome {
        if !changed {
            return Outcome::Stay;
        }
        self.completions.clear();
        self.selected = 0;
        Outcome::Typed(self.input.text().to_owned())
    }

    pub fn paste(&mut self, text: &str) -> Outcome {
        let changed = self.input.insert_str(text);
        self.edited(changed)
    }

    /// The candidates the runner found for `typed` (still what is typed): one is taken, more
    /// than one extend the line to what they share and are listed.
    pub fn completed(&mut self, typed: &str, paths: Vec<String>) -> Option<Outcome> {
        if self.input.text() != typed {
            return None;
        }
        let (text, list) = super::open::complete(typed, paths);
        self.completions = list;
        self.selected = 0;
        if text != typed {
            self.input.set(&text);
            return Some(Outcome::Typed(text));
        }
        None
    }

    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        let t = app.theme();
        // The notes wrap (a write's failure says why at length), three lines each at most.
        let inside = centered(area, 90, 1).width.saturating_sub(2) as usize;
        let notes: Vec<String> = self
            .note
            .lines()
            .flat_map(|n| crate::tui::view::text::wrap_capped(n, inside, 3))
            .collect();
        let listed = self.completions.len().min(8);
        let r = centered(area, 90, 5 + notes.len().max(1) as u16 + listed as u16);
        // The keys in use (keys.toml's), as every box names them.
        let mut keys: Vec<(&[Action], &str)> = vec![(&[Action::Select], "confirms")];
        if self.purpose.takes_path() {
            keys.push((&[Action::Complete], "completes"));
        }
        keys.push((&[Action::Cancel], "cancels"));
        let hint = format!(" {} ", key_hint(app.keymap(), &keys));
        let inner = framed(frame, app, r, &hint);
        let mut hits = OverlayHits {
            area: Some(r),
            ..OverlayHits::default()
        };
        let width = inner.width as usize;
        let mask = self.secret.then_some('•');
        let mut lines = vec![
            Line::styled(cut(&self.title, width), t.muted()),
            self.input.line(Span::raw(""), mask),
        ];
        lines.extend(
            notes
                .iter()
                .map(|n| Line::styled(cut(n, width), t.fg(t.colors.info))),
        );
        let start = self.selected.saturating_sub(listed.saturating_sub(1));
        for (i, c) in self.completions.iter().enumerate().skip(start).take(listed) {
            hits.rows.push((
                Rect::new(inner.x, inner.y + lines.len() as u16, inner.width, 1),
                i,
            ));
            let line = Line::raw(format!(" {}", cut(c, width.saturating_sub(1))));
            lines.push(list_row(app, line, i == self.selected));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        hits
    }

    /// Enter: on a highlighted completion it takes it; else it confirms the line.
    fn select(&mut self) -> Outcome {
        match self.completions.get(self.selected).cloned() {
            Some(chosen) => {
                self.input.set(&chosen);
                self.completions.clear();
                self.edited(true)
            }
            None => Outcome::Submit(self.purpose.clone(), self.input.text().to_owned()),
        }
    }

    /// A click on a completion takes it, as Enter on it does.
    pub fn click(&mut self, row: usize) -> Outcome {
        self.selected = row;
        self.select()
    }
}
