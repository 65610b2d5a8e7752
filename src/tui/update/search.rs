//! Search in the Raw tab and the log (`tui::search`): `/` opens it on the pane with the focus,
//! typing goes to the first match at once, Enter keeps it (n / N move), Esc ends it.

use crate::tui::action::{Action, Context, Handled, Pane};
use crate::tui::app::{App, DetailTab, Severity};
use crate::tui::dialogue::Selected;
use crate::tui::effect::Effect;
use crate::tui::search::{self, Search};
use ratatui::crossterm::event::KeyEvent;

/// The matches of `query` in a turn's Raw document, as (document line, column): line 0 is the
/// Request's heading, its lines follow, then a blank line and the reply's heading (as the
/// Raw tab draws them).
pub fn raw_matches(s: &Selected, query: &str) -> Vec<(usize, usize)> {
    let req = s.request_lines.len();
    let mut out: Vec<(usize, usize)> =
        search::find(s.request_lines.iter().map(String::as_str), query)
            .into_iter()
            .map(|(l, c)| (l + 1, c))
            .collect();
    out.extend(
        search::find(s.response_lines.iter().map(String::as_str), query)
            .into_iter()
            .map(|(l, c)| (l + req + 3, c)),
    );
    out
}

impl App {
    pub(super) fn search_act(&mut self, action: Action) {
        match action {
            Action::Search => {
                let pane = match self.screen.focus() {
                    Pane::Log => Pane::Log,
                    _ => Pane::Detail,
                };
                if pane == Pane::Detail {
                    // The search is in the Raw tab: show it.
                    if !self.detail_tabs().contains(&DetailTab::Raw) {
                        self.notify("no Raw tab to search here", Severity::Warning);
                        return;
                    }
                    if let Some(d) = self.current_dialogue_mut() {
                        d.transcript.detail_tab = DetailTab::Raw;
                    }
                }
                self.screen.set_focus(pane);
                // The last query comes back, to change or to keep (Enter).
                let mut s = Search::new(pane);
                if let Some(old) = self.search.take().filter(|o| o.pane == pane) {
                    s.input = old.input;
                }
                self.search = Some(s);
                self.go_to_match();
            }
            Action::SearchNext | Action::SearchPrev => {
                let n = self.match_count();
                if let Some(s) = &mut self.search {
                    s.step(action == Action::SearchNext, n);
                }
                self.go_to_match();
            }
            _ => {}
        }
    }

    /// Keys while a search is shown on the pane with the focus: the line's when it is typed,
    /// else the key map's `search` place (n, N; Esc ends it). `Ignored`: not the search's.
    pub(super) fn search_key(&mut self, key: KeyEvent) -> Handled {
        // A search in Raw ends when another tab is shown: n and N are theirs again.
        if self.search.as_ref().is_some_and(|s| s.pane == Pane::Detail)
            && self.shown_detail_tab() != DetailTab::Raw
        {
            self.search = None;
        }
        let Some(s) = &mut self.search else {
            return Handled::Ignored;
        };
        if s.pane != self.screen.focus() {
            return Handled::Ignored;
        }
        if s.editing {
            if let Some(changed) = s.input.key(&key, self.config.keymap.edit(&key).as_ref()) {
                if changed {
                    s.current = 0;
                    self.go_to_match();
                }
                return Handled::Consumed;
            }
            return match self.config.keymap.action_in(&key, Context::Overlay) {
                Some(Action::Select) => {
                    s.editing = false;
                    if s.query().is_empty() {
                        self.search = None;
                    }
                    Handled::Consumed
                }
                Some(Action::Cancel) => {
                    self.search = None;
                    Handled::Consumed
                }
                // Other keys are not typing: Ctrl and function keys go on to the explorer.
                _ => crate::tui::overlay::leaves(&key),
            };
        }
        match self.config.keymap.action_in(&key, Context::Search) {
            Some(action @ (Action::SearchNext | Action::SearchPrev)) => {
                self.search_act(action);
                Handled::Consumed
            }
            Some(Action::Cancel) => {
                self.search = None;
                Handled::Consumed
            }
            _ => Handled::Ignored,
        }
    }

    pub(super) fn search_paste(&mut self, text: &str, _fx: &mut [Effect]) -> bool {
        match &mut self.search {
            Some(s) if s.editing && s.pane == self.screen.focus() => {
                if s.input.insert_str(text) {
                    s.current = 0;
                    self.go_to_match();
                }
                true
            }
            _ => false,
        }
    }

    /// How many matches the search has now.
    fn match_count(&self) -> usize {
        let Some(s) = &self.search else { return 0 };
        match s.pane {
            Pane::Log => self.log.matching(s.query()).len(),
            _ => self
                .current_dialogue()
                .and_then(|d| d.transcript.selection())
                .map_or(0, |sel| raw_matches(sel, s.query()).len()),
        }
    }

    /// Brings the current match into view: the log's row is selected (following stops); the
    /// Raw tab scrolls to put its line near the top.
    fn go_to_match(&mut self) {
        let Some(s) = &self.search else { return };
        let query = s.query().to_owned();
        let current = s.current;
        match s.pane {
            Pane::Log => {
                let found = self.log.matching(&query);
                if let Some(&row) = found.get(current.min(found.len().saturating_sub(1))) {
                    self.log.selected = Some(row);
                    self.log.follow = false;
                }
                if let Some(s) = &mut self.search {
                    s.found = found;
                }
            }
            _ => {
                let width = self.areas().detail.width.saturating_sub(2).max(1) as usize;
                let Some(d) = self.current_dialogue_mut() else {
                    return;
                };
                let Some(sel) = d.transcript.selection() else {
                    return;
                };
                let found = raw_matches(sel, &query);
                let Some(&(line, _)) = found.get(current.min(found.len().saturating_sub(1))) else {
                    return;
                };
                // Rows above the line (the Raw tab wraps long lines at the pane's width).
                let req = sel.request_lines.len();
                let chars = |i: usize| -> usize {
                    if i == 0 || i == req + 1 || i == req + 2 {
                        1
                    } else if i <= req {
                        sel.request_widths[i - 1]
                    } else {
                        sel.response_widths[i - req - 3]
                    }
                };
                let rows: usize = (0..line).map(|i| chars(i).div_ceil(width).max(1)).sum();
                d.transcript.detail_scroll = rows.saturating_sub(2);
            }
        }
    }
}
