//! The mouse: what is under the pointer comes from where the last frame drew things.

use crate::tui::action::{Action, Handled, Pane};
use crate::tui::app::App;
use crate::tui::effect::Effect;
use crate::tui::hits::Hits;
use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

impl App {
    pub(super) fn mouse(&mut self, mouse: MouseEvent, hits: &Hits, fx: &mut Vec<Effect>) {
        if self.overlay.is_some() {
            self.overlay_mouse(mouse, hits, fx);
            return;
        }
        if self.certify_shown() {
            self.certify_mouse(mouse, hits, fx);
            return;
        }
        let at = Position::new(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                if let Some(pane) = hits.pane_at(at) {
                    self.scroll_pane(pane, mouse.kind == MouseEventKind::ScrollUp, fx);
                }
            }
            MouseEventKind::Down(MouseButton::Left) => self.left_click(at, hits, fx),
            _ => {}
        }
    }

    /// The wheel scrolls the pane under the pointer by three rows, without moving the focus.
    fn scroll_pane(&mut self, pane: Pane, up: bool, fx: &mut Vec<Effect>) {
        let previous = self.screen.focus();
        self.screen.set_focus(pane);
        let action = if up { Action::Up } else { Action::Down };
        for _ in 0..3 {
            self.act(action.clone(), fx);
        }
        self.screen.set_focus(previous);
    }

    /// A left click: on a tab, a detail tab, a sidebar row, a completion, a composer row,
    /// a transcript row or a log row (what the last frame drew there), and the focus goes
    /// to the pane clicked.
    fn left_click(&mut self, at: Position, hits: &Hits, fx: &mut Vec<Effect>) {
        if let Some(id) = Hits::find(&hits.tabs, at) {
            self.show_dialogue(id);
            return;
        }
        if let Some(tab) = Hits::find(&hits.detail_tabs, at) {
            if let Some(d) = self.current_dialogue_mut() {
                d.transcript.detail_tab = tab;
                d.transcript.detail_scroll = 0;
            }
            self.screen.set_focus(Pane::Detail);
            return;
        }
        if let Some(row) = Hits::find(&hits.sidebar_rows, at) {
            self.screen.set_focus(Pane::Sidebar);
            // The row drawn, where it is now (none when it went since the frame).
            if self.sidebar.click(row, &self.workspace) == Handled::Consumed {
                self.act(Action::Select, fx);
            }
            return;
        }
        if let Some(item) = Hits::find(&hits.completion_items, at) {
            self.screen.set_focus(Pane::Composer);
            self.choose_completion(item);
            return;
        }
        if let Some(row) = Hits::find(&hits.composer_rows, at) {
            self.screen.set_focus(Pane::Composer);
            if let Some(d) = self.current_dialogue_mut() {
                d.composer.row = row;
                d.composer.completion = None;
            }
            return;
        }
        self.click_transcript_row(at, hits);
        if let Some(entry) = Hits::find(&hits.log_rows, at) {
            self.log.selected = Some(entry);
            self.log.follow = entry + 1 == self.log.visible_len();
        }
        if let Some(pane) = hits.pane_at(at) {
            self.screen.set_focus(pane);
        }
    }

    /// A completion clicked is taken, as Enter on it would.
    fn choose_completion(&mut self, item: usize) {
        self.with_composer(|c, ctx| c.take_completion(item, ctx));
    }

    /// A transcript row clicked selects the turn drawn there (the window may have moved from
    /// the scroll asked for, to show the selected row: the frame says where it was).
    fn click_transcript_row(&mut self, at: Position, hits: &Hits) {
        if hits.transcript_rows.contains(at)
            && let Some(d) = self.current_dialogue_mut()
        {
            let row = hits.transcript_top + (at.y - hits.transcript_rows.y) as usize;
            if row < d.transcript.len() {
                d.transcript.select(Some(row));
                d.transcript.scroll = hits.transcript_top;
            }
        }
    }

    fn overlay_mouse(&mut self, mouse: MouseEvent, hits: &Hits, fx: &mut Vec<Effect>) {
        if let Some(overlay) = &mut self.overlay {
            let outcome = overlay.mouse(mouse, hits);
            self.overlay_outcome(outcome, fx);
        }
    }
}
