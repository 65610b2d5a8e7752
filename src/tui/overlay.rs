//! What can cover the main screen: the help, the command palette, a question, the session
//! picker.

use crate::tui::action::Action;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use std::path::PathBuf;

pub enum Overlay {
    Help {
        scroll: usize,
    },
    Palette(Palette),
    /// A line of text to type (the name to save a session as).
    Prompt(Prompt),
    Picker(Picker),
    Confirm(Confirm),
}

pub struct Palette {
    pub query: String,
    /// Every entry: what it does, and its keys.
    pub entries: Vec<(Action, String, String)>,
    /// Indices into `entries` that match the query, best first.
    pub matches: Vec<usize>,
    pub selected: usize,
}

impl Palette {
    pub fn new(entries: Vec<(Action, String, String)>) -> Palette {
        let mut p = Palette {
            query: String::new(),
            matches: (0..entries.len()).collect(),
            entries,
            selected: 0,
        };
        p.refilter();
        p
    }

    /// Fuzzy matching over the titles (nucleo, as television and helix use).
    pub fn refilter(&mut self) {
        self.selected = 0;
        if self.query.is_empty() {
            self.matches = (0..self.entries.len()).collect();
            return;
        }
        let mut matcher = Matcher::new(Config::DEFAULT);
        let pattern = Pattern::parse(&self.query, CaseMatching::Ignore, Normalization::Smart);
        let titles: Vec<(usize, String)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (_, t, k))| (i, format!("{t} {k}")))
            .collect();
        let mut scored: Vec<(usize, u32)> = titles
            .iter()
            .filter_map(|(i, text)| {
                let mut buf = Vec::new();
                pattern
                    .score(nucleo_matcher::Utf32Str::new(text, &mut buf), &mut matcher)
                    .map(|s| (*i, s))
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptPurpose {
    SaveAs,
    FilterLog,
}

pub struct Prompt {
    pub title: String,
    pub input: String,
    pub purpose: PromptPurpose,
}

pub struct PickerItem {
    pub path: PathBuf,
    pub label: String,
    pub detail: String,
}

pub struct Picker {
    pub items: Vec<PickerItem>,
    /// The list is being read (in the background).
    pub loading: bool,
    /// The file being opened (in the background), if any.
    pub opening: Option<PathBuf>,
    pub selected: usize,
    /// Why the last opening failed (the file is left as it was).
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfirmPurpose {
    /// Quit although the session has unsaved turns.
    Quit,
    /// Recover the autosaved session of a run that did not end cleanly.
    Recover(PathBuf),
}

pub struct Confirm {
    pub title: String,
    pub message: String,
    pub purpose: ConfirmPurpose,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_matches_rank_the_best_first() {
        let mut p = Palette::new(vec![
            (Action::Save, "Save the session".into(), "Ctrl-s".into()),
            (
                Action::ToggleLog,
                "Show or hide the protocol log".into(),
                "L".into(),
            ),
            (
                Action::SetTheme("light".into()),
                "Theme: light".into(),
                String::new(),
            ),
        ]);
        p.query = "thm lig".into();
        p.refilter();
        assert_eq!(p.chosen(), Some(Action::SetTheme("light".into())));
        p.query = "plog".into();
        p.refilter();
        assert_eq!(p.chosen(), Some(Action::ToggleLog));
        p.query = "zzzz".into();
        p.refilter();
        assert_eq!(p.chosen(), None);
    }
}
