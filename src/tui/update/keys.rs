//! Keys: an open overlay takes them first, then the log's filter, then the composer when it
//! has the focus (it leaves to the explorer only what it does not use), then the key table.

use crate::tui::action::{Action, Context, Handled, Pane};
use crate::tui::app::App;
use crate::tui::effect::Effect;
use crate::tui::hits::Hits;
use ratatui::crossterm::event::KeyEvent;

impl App {
    pub(super) fn key(&mut self, key: KeyEvent, hits: &Hits, fx: &mut Vec<Effect>) {
        if let Some(mut overlay) = self.overlay.take() {
            let (handled, outcome) = overlay.key(key, &self.config.keymap, hits);
            self.overlay = Some(overlay);
            self.overlay_outcome(outcome, fx);
            if handled == Handled::Ignored
                && let Some(action) = self
                    .config
                    .keymap
                    .action_for(&key, self.screen.focus(), true)
            {
                self.act(action, fx);
            }
            return;
        }
        if self.certify_shown() {
            if self.certify_key(key, fx) == Handled::Ignored
                && let Some(action) = self
                    .config
                    .keymap
                    .action_for(&key, self.screen.focus(), true)
            {
                self.act(action, fx);
            }
            return;
        }
        if self.search_key(key) == Handled::Consumed {
            return;
        }
        if self.screen.focus() == Pane::Log && self.log.editing_filter {
            self.log_filter_key(key);
            return;
        }
        if self.screen.focus() == Pane::Composer && self.workspace.current().is_some() {
            let anywhere = self.config.keymap.action_for(&key, Pane::Composer, true);
            // Tab, Shift-Tab and Esc mean something in the form first (the next field, the
            // completion list); the other keys that apply anywhere are actions.
            if let Some(action) = &anywhere
                && !matches!(
                    action,
                    Action::FocusNext | Action::FocusPrev | Action::Cancel
                )
            {
                self.act(action.clone(), fx);
                return;
            }
            let raw_lines = self.areas().raw_lines();
            let keys = crate::tui::composer::KeyActions::of(&self.config.keymap, &key);
            let handled = self
                .with_composer(|c, ctx| c.handle_key(key, &keys, ctx, raw_lines))
                .unwrap_or(Handled::Ignored);
            if handled == Handled::Ignored
                && let Some(action) = anywhere
            {
                self.act(action, fx);
            }
            return;
        }
        if let Some(action) =
            self.config
                .keymap
                .action_for(&key, self.screen.focus(), self.typing())
        {
            self.act(action, fx);
        }
    }

    /// The log's filter line (the one line editor): it filters as it is typed; Enter or Esc
    /// leave it (the filter stays; an empty one shows every entry).
    fn log_filter_key(&mut self, key: KeyEvent) {
        if let Some(changed) = self
            .log
            .filter_input
            .key(&key, self.config.keymap.edit(&key).as_ref())
        {
            if changed {
                let text = self.log.filter_input.text().to_owned();
                self.log.set_filter(text);
            }
            return;
        }
        if matches!(
            self.config.keymap.action_in(&key, Context::Overlay),
            Some(Action::Select | Action::Cancel)
        ) {
            self.log.editing_filter = false;
        }
    }
}
