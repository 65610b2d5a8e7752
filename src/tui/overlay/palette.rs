//! The command palette: every action by its title, fuzzy matched (nucleo, as television and
//! helix use); Enter or a click runs the one chosen.

use super::{Input, Outcome, OverlayHits, framed, leaves, list_row};
use crate::tui::action::{Action, Handled};
use crate::tui::app::App;
use crate::tui::view::text::cut;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub struct Palette {
    pub query: Input,
    /// Every entry: what it does, and its keys.
    pub entries: Vec<(Action, String, String)>,
    /// Indices into `entries` that match the query, best first.
    pub matches: Vec<usize>,
    pub selected: usize,
}

impl Palette {
    pub fn new(entries: Vec<(Action, String, String)>) -> Palette {
        let mut p = Palette {
            query: Input::default(),
            matches: (0..entries.len()).collect(),
            entries,
            selected: 0,
        };
        p.refilter();
        p
    }

    /// Fuzzy matching over the titles and keys.
    pub fn refilter(&mut self) {
        self.selected = 0;
        if self.query.text().is_empty() {
            self.matches = (0..self.entries.len()).collect();
            return;
        }
        let mut matcher = Matcher::new(Config::DEFAULT);
        let pattern = Pattern::parse(
            self.query.text(),
            CaseMatching::Ignore,
            Normalization::Smart,
        );
        let mut scored: Vec<(usize, u32)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, (_, t, k))| {
                let text = format!("{t} {k}");
                let mut buf = Vec::new();
                pattern
                    .score(nucleo_matcher::Utf32Str::new(&text, &mut buf), &mut matcher)
                    .map(|s| (i, s))
            })
            .collect();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        self.matches = scored.into_iter().map(|(i, _)| i).collect();
    }

    pub fn chosen(&self) -> Option<Action> {
        self.matches
            .get(self.selected)
            .map(|&i| self.entries[i].0.clone())
    }

    /// Typing filters; the key map's Up/Down (and page keys) choose, Select runs, Cancel
    /// closes.
    pub fn keys(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        edit: Option<&Action>,
    ) -> (Handled, Outcome) {
        if let Some(changed) = self.query.key(key, edit) {
            if changed {
                self.refilter();
            }
            return (Handled::Consumed, Outcome::Stay);
        }
        let last = self.matches.len().saturating_sub(1);
        match action {
            Some(Action::Cancel) => return (Handled::Consumed, Outcome::Close),
            Some(Action::Select) => return (Handled::Consumed, self.run()),
            Some(Action::Down) => self.selected = (self.selected + 1).min(last),
            Some(Action::Up) => self.selected = self.selected.saturating_sub(1),
            Some(Action::PageDown) => self.selected = (self.selected + 10).min(last),
            Some(Action::PageUp) => self.selected = self.selected.saturating_sub(10),
            Some(Action::Top) => self.selected = 0,
            Some(Action::Bottom) => self.selected = last,
            _ => return (leaves(key), Outcome::Stay),
        }
        (Handled::Consumed, Outcome::Stay)
    }

    fn run(&self) -> Outcome {
        self.chosen().map_or(Outcome::Stay, Outcome::Run)
    }

    /// A click on a row runs it, as Enter on it does.
    pub fn click(&mut self, row: usize) -> Outcome {
        self.selected = row;
        self.run()
    }

    pub fn wheel(&mut self, down: bool) {
        self.selected = if down {
            (self.selected + 1).min(self.matches.len().saturating_sub(1))
        } else {
            self.selected.saturating_sub(1)
        };
    }

    pub fn paste(&mut self, text: &str) -> Outcome {
        if self.query.insert_str(text) {
            self.refilter();
        }
        Outcome::Stay
    }

    pub fn render(&self, frame: &mut Frame, app: &App, area: Rect) -> OverlayHits {
        let t = app.theme();
        let r = Rect::new(
            area.x + area.width.saturating_sub(76) / 2,
            area.y + 2,
            76.min(area.width),
            18.min(area.height.saturating_sub(3)),
        );
        let k = |a| super::key_of(app.keymap(), &a);
        let title = format!(
            " Command palette · {} runs · {} closes ",
            k(Action::Select),
            k(Action::Cancel)
        );
        let inner = framed(frame, app, r, &title);
        let mut hits = OverlayHits {
            area: Some(r),
            ..OverlayHits::default()
        };
        let mut lines = vec![
            self.query
                .line(Span::styled("› ", t.fg(t.colors.accent)), None),
        ];
        let room = inner.height.saturating_sub(1) as usize;
        let start = self.selected.saturating_sub(room.saturating_sub(1));
        for (k, &i) in self.matches.iter().enumerate().skip(start).take(room) {
            let (_, title, keys) = &self.entries[i];
            let width = inner.width as usize;
            hits.rows.push((
                Rect::new(inner.x, inner.y + 1 + (k - start) as u16, inner.width, 1),
                k,
            ));
            // A space always between the title and its keys: a title as long as its room
            // ran into them ("… in viewn" at 80 columns).
            let room = width.saturating_sub(keys.chars().count() + 4);
            let line = Line::from(vec![
                Span::raw(format!(" {:<room$} ", cut(title, room))),
                Span::styled(format!("{keys} "), t.fg(t.colors.key_hint)),
            ]);
            lines.push(list_row(app, line, k == self.selected));
        }
        if self.matches.is_empty() {
            lines.push(Line::styled(" no action matches", t.muted()));
        }
        frame.render_widget(Paragraph::new(lines), inner);
        hits
    }
}
