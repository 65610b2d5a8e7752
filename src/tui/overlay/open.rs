//! Opening a session: a path typed (completed as it is typed, Tab extends it), or one of the
//! sessions listed (the sessions folder's and the recent ones). Enter and a click on a row
//! are one action (`choose`): a session opens, a folder is gone into.

use super::{Input, Outcome, OverlayHits, centered, framed, leaves, list_row};
use crate::tui::action::{Action, Handled};
use crate::tui::app::App;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::path::PathBuf;

pub struct PickerItem {
    pub path: PathBuf,
    pub label: String,
    pub detail: String,
}

pub struct OpenFile {
    pub input: Input,
    /// The session files of the sessions folder and the recent ones.
    pub items: Vec<PickerItem>,
    pub loading: bool,
    /// Paths that complete what is typed.
    pub completions: Vec<String>,
    /// The highlighted row: of `completions` while something is typed, else of `items`.
    pub selected: usize,
    /// The file being opened, if any.
    pub opening: Option<PathBuf>,
    /// Why the last opening failed (the file is left as it was).
    pub error: Option<String>,
}

impl Default for OpenFile {
    fn default() -> Self {
        OpenFile::new()
    }
}

impl OpenFile {
    pub fn new() -> OpenFile {
        OpenFile {
            input: Input::default(),
            items: Vec::new(),
            loading: true,
            completions: Vec::new(),
            selected: 0,
            opening: None,
            error: None,
        }
    }

    /// The rows the list shows.
    pub fn rows(&self) -> usize {
        if self.input.text().is_empty() {
            self.items.len()
        } else {
            self.completions.len()
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
        let last = self.rows().saturating_sub(1);
        let outcome = match action {
            Some(Action::Cancel) => Outcome::Close,
            Some(Action::Select) => self.choose(self.selected),
            Some(Action::Complete) => self.tab(),
            Some(Action::Down) => {
                self.selected = (self.selected + 1).min(last);
                Outcome::Stay
            }
            Some(Action::Up) => {
                self.selected = self.selected.saturating_sub(1);
                Outcome::Stay
            }
            Some(Action::PageDown) => {
                self.selected = (self.selected + 10).min(last);
                Outcome::Stay
            }
            Some(Action::PageUp) => {
                self.selected = self.selected.saturating_sub(10);
                Outcome::Stay
            }
            _ => return (leaves(key), Outcome::Stay),
        };
        (Handled::Consumed, outcome)
    }

    fn edited(&mut self, changed: bool) -> Outcome {
        if !changed {
            return Outcome::Stay;
        }
        self.selected = 0;
        // Until the runner's answer for the new text: the completions that still fit it.
        let typed = self.input.text().to_owned();
        self.completions.retain(|c| c.starts_with(&typed));
        Outcome::Typed(self.input.text().to_owned())
    }

    /// Tab: what every completion shares is typed; when that is all typed already, the
    /// highlighted one is taken.
    fn tab(&mut self) -> Outcome {
        let typed = self.input.text().to_owned();
        let (text, list) = complete(&typed, self.completions.clone());
        let text = match (text == typed, list.get(self.selected)) {
            (true, Some(highlighted)) => highlighted.clone(),
            _ => text,
        };
        if text == typed {
            return Outcome::Stay;
        }
        self.input.set(&text);
        self.edited(true)
    }

    /// Enter on a row, or a click on it: a session listed or a file completed opens; a
    /// folder completed is gone into; with no completion, the path as typed opens.
    pub fn choose(&mut self, row: usize) -> Outcome {
        let path = if self.input.text().is_empty() {
            match self.items.get(row) {
                Some(item) => item.path.clone(),
                None => return Outcome::Stay,
            }
        } else {
            match self.completions.get(row).cloned() {
                Some(folder) if folder.ends_with('/') => {
                    self.input.set(&folder);
                    return self.edited(true);
                }
                Some(file) => PathBuf::from(file),
                None => PathBuf::from(self.input.text()),
            }
        };
        self.error = None;
        self.opening = Some(path.clone());
        Outcome::OpenPath(path)
    }

    pub fn click(&mut self, row: usize) -> Outcome {
        self.selected = row;
        self.choose(row)
    }

    pub fn wheel(&mut self, down: bool) {
        self.selected = if down {
            (self.selected + 1).min(self.rows().saturating_sub(1))
        } else {
            self.selected.saturating_sub(1)
        };
    }

    pub fn paste(&mut self, text: &str) -> Outcome {
        let changed = self.input.insert_str(text);
        self.edited(changed)
    }

    /// The runner's completions of `typed` (dropped when something else is typed by now).
    pub fn completed(&mut self, typed: &str, paths: Vec<String>) {
        if self.input.text() == typed {
            self.completions = paths;
            self.selected = 0;
        }
    }

    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        let r = centered(area, 96, area.height.saturating_sub(6).min(24));
        let k = |a| super::key_of(app.keymap(), &a);
        let title = format!(
            " Open a session · type a path ({} completes) or pick one · {} opens ",
            k(Action::Complete),
            k(Action::Select)
        );
        let inner = framed(frame, app, r, &title);
        let mut hits = OverlayHits {
            area: Some(r),
            ..OverlayHits::default()
        };
        let width = inner.width as usize;
        let mut lines = self.head_lines(app, width);
        let top = inner.y + lines.len() as u16;
        let room = inner.height.saturating_sub(lines.len() as u16 + 1) as usize;
        let start = self.selected.saturating_sub(room.saturating_sub(1));
        let (note, rows) = if self.input.text().is_empty() {
            (self.sessions_note(app), self.session_rows(app, width))
        } else {
            (self.completions_note(app), self.completion_rows(width))
        };
        lines.extend(note);
        for (i, line) in rows.into_iter().enumerate().skip(start).take(room) {
            hits.rows.push((
                Rect::new(inner.x, top + (i - start) as u16, inner.width, 1),
                i,
            ));
            lines.push(list_row(app, line, i == self.selected));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        hits
    }

    /// The path being typed, why the last one did not open, and the one opening.
    fn head_lines<'a>(&self, app: &App, width: usize) -> Vec<Line<'a>> {
        let t = app.theme();
        let mut lines = vec![
            self.input
                .line(Span::styled("path › ", t.fg(t.colors.accent)), None),
        ];
        if let Some(e) = &self.error {
            // The whole reason, wrapped (its place in the file is often on a later line).
            for row in crate::tui::view::text::wrap_capped(&e.replace('\n', " "), width, 6) {
                lines.push(Line::styled(row, t.fg(t.colors.error)));
            }
            lines.push(Line::styled(
                "(nothing was opened; the dialogues in view are as they were)",
                t.muted(),
            ));
        }
        if let Some(path) = &self.opening {
            lines.push(Line::styled(
                format!("{} opening {}…", app.spinner(), path.display()),
                t.fg(t.colors.accent),
            ));
        }
        lines
    }

    /// Above the session files: that they are being read, or that there are none.
    fn sessions_note<'a>(&self, app: &App) -> Option<Line<'a>> {
        let t = app.theme();
        if self.loading {
            Some(Line::styled(
                format!("{} reading the sessions folder…", app.spinner()),
                t.muted(),
            ))
        } else if self.items.is_empty() {
            Some(Line::styled(
                format!(
                    "no session files in {} and no recent ones: type a path",
                    app.config().paths.sessions_dir.display()
                ),
                t.muted(),
            ))
        } else {
            None
        }
    }

    /// The session files: name, and where and when.
    fn session_rows<'a>(&self, app: &App, width: usize) -> Vec<Line<'a>> {
        let t = app.theme();
        self.items
            .iter()
            .map(|item| {
                Line::from(vec![
                    Span::raw(format!(
                        " {:<w$}",
                        cut(&item.label, width / 2),
                        w = width / 2
                    )),
                    Span::styled(cut(&item.detail, (width / 2).saturating_sub(2)), t.muted()),
                ])
            })
            .collect()
    }

    fn completions_note<'a>(&self, app: &App) -> Option<Line<'a>> {
        self.completions.is_empty().then(|| {
            Line::styled(
                format!(
                    "no JSON file or folder starts so ({} opens the path as typed)",
                    super::key_of(app.keymap(), &Action::Select)
                ),
                app.theme().muted(),
            )
        })
    }

    /// The paths that complete what is typed.
    fn completion_rows<'a>(&self, width: usize) -> Vec<Line<'a>> {
        self.completions
            .iter()
            .map(|c| Line::raw(format!(" {}", cut(c, width.saturating_sub(1)))))
            .collect()
    }
}

/// What Tab makes of `typed` given the paths that complete it: the one there is, or what
/// they all share (never less than typed); and the list to show when more than one fit.
pub fn complete(typed: &str, paths: Vec<String>) -> (String, Vec<String>) {
    match paths.as_slice() {
        [] => (typed.to_owned(), Vec::new()),
        [one] => (one.clone(), Vec::new()),
        [first, rest @ ..] => {
            let mut shared = first.as_str();
            for p in rest {
                let n = shared
                    .char_indices()
                    .zip(p.chars())
                    .find(|((_, a), b)| a != b)
                    .map_or(shared.len().min(p.len()), |((i, _), _)| i);
                shared = &shared[..n];
            }
            let text = if shared.chars().count() > typed.chars().count() {
                shared.to_owned()
            } else {
                typed.to_owned()
            };
            (text, paths)
        }
    }
}
