//! The protocol log pane's state: the last `CAPACITY` entries (JSON-RPC traffic, server logs
//! and progress, stderr, the client's notes), a filter, and what is on screen.

use crate::client::event::LogEntry;
use std::collections::VecDeque;

pub const CAPACITY: usize = 5_000;

pub struct LogState {
    entries: VecDeque<LogEntry>,
    /// Entries dropped from the front since the start (to keep indices meaningful).
    dropped: usize,
    pub filter: String,
    pub editing_filter: bool,
    /// The filter's line while it is typed (the one line editor).
    pub filter_input: crate::tui::overlay::Input,
    /// Absolute numbers (dropped + position) of the entries that pass the filter.
    visible: VecDeque<usize>,
    /// The selected entry, as an index into the visible ones.
    pub selected: Option<usize>,
    /// Keep the newest entry selected as entries arrive.
    pub follow: bool,
}

impl Default for LogState {
    fn default() -> Self {
        LogState {
            entries: VecDeque::with_capacity(1024),
            dropped: 0,
            filter: String::new(),
            editing_filter: false,
            filter_input: Default::default(),
            visible: VecDeque::new(),
            selected: None,
            follow: true,
        }
    }
}

impl LogState {
    fn passes(&self, e: &LogEntry) -> bool {
        if self.filter.is_empty() {
            return true;
        }
        let f = self.filter.to_lowercase();
        e.kind.label().contains(&f)
            || format!("{:?}", e.kind).to_lowercase().contains(&f)
            || e.text.to_lowercase().contains(&f)
    }

    pub fn push(&mut self, entry: LogEntry) {
        if self.entries.len() == CAPACITY {
            self.entries.pop_front();
            self.dropped += 1;
            while self.visible.front().is_some_and(|n| *n < self.dropped) {
                self.visible.pop_front();
                self.selected = self.selected.map(|s| s.saturating_sub(1));
            }
        }
        let number = self.dropped + self.entries.len();
        if self.passes(&entry) {
            self.visible.push_back(number);
        }
        self.entries.push_back(entry);
        if self.follow {
            self.selected = self.visible.len().checked_sub(1);
        }
    }

    pub fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.visible = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| self.passes(e))
            .map(|(i, _)| self.dropped + i)
            .collect();
        self.selected = self.visible.len().checked_sub(1);
    }

    pub fn clear(&mut self) {
        self.dropped += self.entries.len();
        self.entries.clear();
        self.visible.clear();
        self.selected = None;
    }

    pub fn visible_len(&self) -> usize {
        self.visible.len()
    }

    /// The i-th entry that passes the filter.
    pub fn visible(&self, i: usize) -> Option<&LogEntry> {
        let n = *self.visible.get(i)?;
        self.entries.get(n - self.dropped)
    }

    /// The visible entries (their indices) whose text holds `query`, ignoring case.
    pub fn matching(&self, query: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        let query = query.to_lowercase();
        (0..self.visible.len())
            .filter(|&i| {
                self.visible(i)
                    .is_some_and(|e| e.text.to_lowercase().contains(&query))
            })
            .collect()
    }

    pub fn total(&self) -> usize {
        self.entries.len()
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.visible.len();
        if n == 0 {
            return;
        }
        let current = self.selected.unwrap_or(n - 1) as isize;
        let next = (current + delta).clamp(0, n as isize - 1) as usize;
        self.selected = Some(next);
        self.follow = next == n - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::event::LogKind;

    #[test]
    fn bounded_and_filtered() {
        let mut log = LogState::default();
        for i in 0..CAPACITY + 10 {
            let kind = if i % 2 == 0 {
                LogKind::Sent
            } else {
                LogKind::Stderr
            };
            log.push(LogEntry::new(1, kind, format!("entry {i}")));
        }
        assert_eq!(log.total(), CAPACITY);
        assert_eq!(log.visible(0).unwrap().text, "entry 10");
        log.set_filter("stderr".into());
        assert_eq!(log.visible_len(), CAPACITY / 2);
        assert!(log.visible(0).unwrap().text.ends_with('1'));
        log.push(LogEntry::new(1, LogKind::Stderr, "late"));
        assert_eq!(log.visible(log.selected.unwrap()).unwrap().text, "late");
    }
}
