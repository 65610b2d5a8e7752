//! The sidebar's own state: which row is selected and which servers are folded. Its rows are
//! computed from the workspace each time (each server, then its dialogues when unfolded), so
//! they never go stale; the selection is a place among them, kept in range when rows go. A
//! sub-state of `App` with private fields and its own keys and clicks (`Handled`): moving and
//! folding are its own; showing a dialogue is the App's (it moves the focus too).

use crate::tui::action::{Action, Handled};
use crate::tui::ids::{DialogueId, ServerId};
use crate::tui::workspace::Workspace;
use std::collections::HashSet;

/// A row of the sidebar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidebarRow {
    Server(ServerId),
    Dialogue(DialogueId),
}

#[derive(Debug, Default)]
pub struct Sidebar {
    /// The selected row's place among the rows.
    selected: usize,
    /// Servers whose dialogues are not listed (a server starts unfolded).
    folded: HashSet<ServerId>,
}

impl Sidebar {
    /// The rows: each server, then its dialogues unless it is folded.
    pub fn rows(&self, workspace: &Workspace) -> Vec<SidebarRow> {
        let mut rows = Vec::new();
        for s in workspace.servers().ids() {
            rows.push(SidebarRow::Server(s));
            if self.is_expanded(s) {
                rows.extend(
                    workspace
                        .dialogues_of(s)
                        .map(|(d, _)| SidebarRow::Dialogue(d)),
                );
            }
        }
        rows
    }

    /// The selected row's place among the rows.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The selected row, if the place still has one.
    pub fn selected_row(&self, workspace: &Workspace) -> Option<SidebarRow> {
        self.rows(workspace).get(self.selected).copied()
    }

    /// Whether a server's dialogues are listed under it.
    pub fn is_expanded(&self, server: ServerId) -> bool {
        !self.folded.contains(&server)
    }

    /// Lists a server's dialogues (a pane about the server shows them).
    pub fn expand(&mut self, server: ServerId) {
        self.folded.remove(&server);
    }

    /// Back to the first row (the rows were replaced).
    pub fn reset(&mut self) {
        self.selected = 0;
        self.folded.clear();
    }

    /// Keeps the selection on a row after rows went.
    pub fn clamp(&mut self, workspace: &Workspace) {
        self.selected = self
            .selected
            .min(self.rows(workspace).len().saturating_sub(1));
    }

    /// A key's action, with the focus on the sidebar: moving by `delta` rows (Up, Down, the
    /// pages, Top, Bottom) and Enter on a server (folds or unfolds it) are its own; Enter on a
    /// dialogue is not (the App shows it).
    pub fn act(&mut self, action: &Action, delta: isize, workspace: &Workspace) -> Handled {
        match action {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom => {
                let n = self.rows(workspace).len();
                self.selected = match n {
                    0 => 0,
                    n => (self.selected as isize)
                        .saturating_add(delta)
                        .clamp(0, n as isize - 1) as usize,
                };
                Handled::Consumed
            }
            Action::Select => match self.selected_row(workspace) {
                Some(SidebarRow::Server(s)) => {
                    if !self.folded.remove(&s) {
                        self.folded.insert(s);
                    }
                    Handled::Consumed
                }
                _ => Handled::Ignored,
            },
            _ => Handled::Ignored,
        }
    }

    /// A click on a row the last frame drew: it is selected, where it is now (Ignored when it
    /// went since the frame).
    pub fn click(&mut self, row: SidebarRow, workspace: &Workspace) -> Handled {
        match self.rows(workspace).iter().position(|r| *r == row) {
            Some(at) => {
                self.selected = at;
                Handled::Consumed
            }
            None => Handled::Ignored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::spec::ServerSpec;
    use crate::protocol::Interface;
    use crate::tui::dialogue::DialogueState;

    fn workspace() -> (Workspace, ServerId, DialogueId) {
        let mut w = Workspace::default();
        let s = w.add_server(ServerSpec::embedded(Interface::Dac), Interface::Dac);
        let key = w.new_key();
        let d = w.add_dialogue(DialogueState::new(key, "d".into(), s, Interface::Dac));
        w.add_server(ServerSpec::embedded(Interface::Usr), Interface::Usr);
        (w, s, d)
    }

    #[test]
    fn enter_on_a_server_folds_it_and_moving_stays_among_the_rows() {
        let (w, s, d) = workspace();
        let mut bar = Sidebar::default();
        assert_eq!(bar.rows(&w).len(), 3);
        assert_eq!(bar.act(&Action::Select, 0, &w), Handled::Consumed);
        assert!(!bar.is_expanded(s));
        assert_eq!(bar.rows(&w).len(), 2, "its dialogue is not listed");
        assert_eq!(
            bar.act(&Action::Bottom, isize::MAX / 2, &w),
            Handled::Consumed
        );
        assert_eq!(bar.selected(), 1);
        assert_eq!(bar.act(&Action::Up, -1, &w), Handled::Consumed);
        bar.act(&Action::Select, 0, &w);
        assert_eq!(bar.rows(&w).len(), 3, "unfolded");
        assert_eq!(bar.act(&Action::Down, 1, &w), Handled::Consumed);
        assert_eq!(bar.selected_row(&w), Some(SidebarRow::Dialogue(d)));
        assert_eq!(
            bar.act(&Action::Select, 0, &w),
            Handled::Ignored,
            "a dialogue is the App's to show"
        );
        assert_eq!(bar.act(&Action::Send, 0, &w), Handled::Ignored);
    }

    #[test]
    fn a_click_on_a_row_gone_since_the_frame_is_ignored() {
        let (mut w, _, d) = workspace();
        let mut bar = Sidebar::default();
        assert_eq!(bar.click(SidebarRow::Dialogue(d), &w), Handled::Consumed);
        assert_eq!(bar.selected(), 1);
        w.remove_dialogue(d);
        assert_eq!(bar.click(SidebarRow::Dialogue(d), &w), Handled::Ignored);
        bar.act(&Action::Bottom, isize::MAX / 2, &w);
        assert_eq!(bar.selected(), 1);
        let last = w.servers().last_id().unwrap();
        w.remove_server(last);
        bar.clamp(&w);
        assert_eq!(bar.selected(), 0, "kept on a row");
    }
}
