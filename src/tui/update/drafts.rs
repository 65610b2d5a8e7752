//! Unsent drafts kept across a crash: written to this run's drafts' autosave about once a
//! second while they change (not on every key), and put back into their dialogues when a
//! recovery is accepted.

use crate::tui::app::{App, Severity};
use crate::tui::effect::Effect;
use crate::tui::persist::SavedDraft;
use std::path::PathBuf;

/// Ticks between two looks at whether the drafts changed (a tick is 100 ms).
const EVERY: u64 = 10;

impl App {
    /// On a tick: the drafts' autosave, when the composers changed since it was written.
    pub(super) fn autosave_drafts(&mut self, fx: &mut Vec<Effect>) {
        if !self.screen.ticks().is_multiple_of(EVERY) {
            return;
        }
        let Some(path) = self.config.paths.drafts.clone() else {
            return;
        };
        // Every change counts, and so does a dialogue closed (its draft goes).
        let changes: u64 = self
            .workspace
            .dialogues()
            .values()
            .map(|d| d.composer.changes)
            .sum::<u64>()
            + self.workspace.dialogues().len() as u64;
        if self.recovering.drafts_unchanged(changes)
            || (self.recovering.drafts_never_written() && self.unsent().is_empty())
        {
            return;
        }
        self.recovering.drafts_written(changes);
        let text = serde_json::to_string_pretty(&self.unsent()).unwrap_or_default();
        fx.push(Effect::WriteDrafts { path, text });
    }

    /// The unsent drafts, by dialogue.
    fn unsent(&self) -> Vec<SavedDraft> {
        self.workspace
            .dialogues()
            .values()
            .filter(|d| d.composer.has_draft())
            .map(|d| SavedDraft {
                dialogue: d.name.clone(),
                interface: d.interface,
                draft: d.composer.draft(),
            })
            .collect()
    }

    /// Recovered drafts: each into its dialogue (by name), else the first of its interface;
    /// what was in a composer is kept for Ctrl-Z.
    pub(super) fn drafts_read(&mut self, path: PathBuf, result: Result<Vec<SavedDraft>, String>) {
        let drafts = match result {
            Ok(d) => d,
            Err(e) => {
                self.notify(
                    format!("the drafts could not be read: {e}"),
                    Severity::Error,
                );
                return;
            }
        };
        let mut placed = Vec::new();
        let mut lost = Vec::new();
        for saved in drafts {
            let target = self
                .workspace
                .dialogues()
                .find(|d| d.name == saved.dialogue && d.interface == saved.interface)
                .or_else(|| {
                    self.workspace
                        .dialogues()
                        .find(|d| d.interface == saved.interface)
                });
            match target.and_then(|i| Some((i, self.workspace.dialogue(i)?.name.clone()))) {
                Some((i, name)) => {
                    self.with_composer_of(i, |c, ctx| c.recover(saved.draft, ctx));
                    placed.push(name);
                }
                None => lost.push(saved.dialogue),
            }
        }
        if !lost.is_empty() {
            self.notify(
                format!(
                    "no dialogue to put the drafts of {} in; they stay in {}",
                    lost.join(", "),
                    path.display()
                ),
                Severity::Warning,
            );
        } else if !placed.is_empty() {
            self.notify(
                format!("recovered the unsent drafts of {}", placed.join(", ")),
                Severity::Success,
            );
        }
    }
}
