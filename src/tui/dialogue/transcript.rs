//! The turns of a dialogue and how they are being read: the selected turn (parsed once for
//! the detail panes), the scroll positions, the detail tab and the focus. The turns, the
//! selection and the IDs they used are private: a selected index is always one of the turns,
//! and the parsed selection is always that turn's.

use super::turn_view::{
    CommitmentRow, CommitmentsView, Listed, ReplayedView, Selected, StepCheck, TurnView,
};
use crate::client::turn::Reply;
use crate::protocol::Interface;
use crate::protocol::lenient::Field;
use crate::tui::action::Pane;
use crate::tui::app::DetailTab;

pub struct Transcript {
    turns: Vec<TurnView>,
    selected: Option<usize>,
    selection: Option<Selected>,
    /// Every CommitmentID the dialogue has used (asked for in any Request, listed by any
    /// Response): completion offers them, and an ID the form makes up is none of them.
    used_ids: Vec<String>,
    /// The transcript row the window starts at (moved so the selected one shows).
    pub scroll: usize,
    /// The first line of the detail pane asked for.
    pub detail_scroll: usize,
    /// The dialogue's own detail tab and focus, kept when another dialogue is shown (no
    /// focus of its own until it has been shown: it takes the one of the dialogue before).
    pub detail_tab: DetailTab,
    pub focus: Option<Pane>,
}

impl Transcript {
    pub fn new(interface: Interface) -> Transcript {
        Transcript {
            turns: Vec::new(),
            selected: None,
            selection: None,
            used_ids: Vec::new(),
            scroll: 0,
            detail_scroll: 0,
            detail_tab: DetailTab::for_interface(interface, false, false)[0],
            focus: None,
        }
    }

    pub fn turns(&self) -> &[TurnView] {
        &self.turns
    }

    pub fn len(&self) -> usize {
        self.turns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    pub fn turn(&self, index: usize) -> Option<&TurnView> {
        self.turns.get(index)
    }

    pub fn last(&self) -> Option<&TurnView> {
        self.turns.last()
    }

    /// The row of the selected turn.
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    pub fn selected_turn(&self) -> Option<&TurnView> {
        self.selected.and_then(|i| self.turns.get(i))
    }

    /// The selected turn parsed for the detail panes.
    pub fn selection(&self) -> Option<&Selected> {
        self.selection.as_ref()
    }

    /// Every CommitmentID the dialogue has used.
    pub fn used_ids(&self) -> &[String] {
        &self.used_ids
    }

    /// Adds a turn (its IDs become used ones).
    pub fn add(&mut self, view: TurnView) {
        let listed: Vec<&str> = match &view.listed {
            Listed::Statuses(s) => s.iter().map(|(id, _)| id.as_str()).collect(),
            _ => Vec::new(),
        };
        for id in view.asked.iter().map(|(id, _)| id.as_str()).chain(listed) {
            if !self.used_ids.iter().any(|i| i == id) {
                self.used_ids.push(id.to_owned());
            }
        }
        self.turns.push(view);
    }

    /// Selects a turn (none when the index is not one of them); a newly selected turn's
    /// detail starts at its top.
    pub fn select(&mut self, index: Option<usize>) {
        let index = index.filter(|i| *i < self.turns.len());
        if self.selected != index || self.selection.is_none() {
            self.detail_scroll = 0;
        }
        self.selected = index;
        self.refresh_selection();
    }

    /// Re-reads the selected turn (after its replay came in).
    pub fn refresh_selection(&mut self) {
        self.selection = self
            .selected
            .and_then(|i| Some(Selected::of(i, self.turns.get(i)?)));
    }

    /// A turn's replay came in: kept beside it (and shown, when it is the selected one).
    pub fn set_replayed(&mut self, index: usize, replayed: ReplayedView) {
        if let Some(view) = self.turns.get_mut(index) {
            view.replay = Some(replayed);
        }
        if self.selected == Some(index) {
            self.refresh_selection();
        }
    }

    /// Forgets every turn's replay (a new one begins).
    pub fn clear_replays(&mut self) {
        for view in &mut self.turns {
            view.replay = None;
        }
    }

    /// A scenario step's verdict, beside its turn.
    pub fn set_expect(&mut self, index: usize, check: StepCheck) {
        if let Some(view) = self.turns.get_mut(index) {
            view.expect = Some(check);
        }
        if self.selected == Some(index) {
            self.refresh_selection();
        }
    }

    /// Moves the window so the last turn shows, when a page of `page` rows no longer
    /// reaches it.
    pub fn follow_last(&mut self, page: usize) {
        let last = self.turns.len().saturating_sub(1);
        if page > 0 && last >= self.scroll + page {
            self.scroll = last + 1 - page;
        }
    }

    /// The commitments as of a turn, as the server said them: the statuses of the last
    /// Response of the turn's MCP session that listed them, the statements from the
    /// Requests that asked, and what the turn's own Response left out.
    pub fn commitments_at(&self, upto: usize) -> CommitmentsView {
        let upto = upto.min(self.turns.len().saturating_sub(1));
        // A reconnect starts a new MCP session: the server remembers nothing before it.
        let session_start = (0..=upto)
            .rev()
            .find(|i| self.turns.get(*i).is_some_and(TurnView::new_session))
            .unwrap_or(0);
        let mut rows: Vec<CommitmentRow> = Vec::new();
        let mut from = None;
        for (i, view) in self
            .turns
            .iter()
            .enumerate()
            .take(upto + 1)
            .skip(session_start)
        {
            let answered = matches!(view.turn.reply, Reply::Response(_));
            // What the Request asked is known once the server took it.
            if answered {
                for (id, statement) in &view.asked {
                    match rows.iter_mut().find(|r| &r.id == id) {
                        Some(r) => r.statement = Some(statement.clone()),
                        None => rows.push(CommitmentRow {
                            id: id.clone(),
                            statement: Some(statement.clone()),
                            state: Field::Absent,
                            since: i,
                        }),
                    }
                }
            }
            let Listed::Statuses(statuses) = &view.listed else {
                continue;
            };
            from = Some(i);
            for (id, state) in statuses {
                let restated = view.asked.iter().any(|(a, _)| a == id);
                match rows.iter_mut().find(|r| &r.id == id) {
                    Some(r) => {
                        if r.state != *state || restated {
                            r.since = i;
                        }
                        r.state = state.clone();
                    }
                    None => rows.push(CommitmentRow {
                        id: id.clone(),
                        statement: None,
                        state: state.clone(),
                        since: i,
                    }),
                }
            }
        }
        let selected = self
            .turns
            .get(upto)
            .map(|v| v.listed.clone())
            .unwrap_or(Listed::NoResponse);
        let missing = match &selected {
            Listed::Statuses(listed) => rows
                .iter()
                .filter(|r| r.since < upto && !listed.iter().any(|(id, _)| *id == r.id))
                .map(|r| r.id.clone())
                .collect(),
            _ => Vec::new(),
        };
        CommitmentsView {
            rows,
            from,
            selected,
            missing,
            session_start,
        }
    }
}
