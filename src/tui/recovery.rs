//! What the explorer keeps so that nothing typed or sent is lost to a crash: the autosaves
//! of earlier runs still to offer back (one question at a time), the drafts to put back once
//! a recovered session is read, and what the drafts' autosave last had. A sub-state of `App`
//! with private fields; the files themselves are the runner's (`persist.rs`).

use crate::tui::persist::Recovery;
use std::collections::VecDeque;
use std::path::PathBuf;

#[derive(Debug, Default)]
pub struct Recovering {
    /// Autosaves of earlier runs still to offer, in the order found.
    offers: VecDeque<Recovery>,
    /// The drafts to put back once the recovered session is read.
    drafts_to_restore: Option<PathBuf>,
    /// The composers' changes the drafts' autosave last had (None: never written).
    drafts_written: Option<u64>,
}

impl Recovering {
    pub fn new(offers: Vec<Recovery>) -> Recovering {
        Recovering {
            offers: offers.into(),
            ..Recovering::default()
        }
    }

    /// The next autosave to offer, taken from those waiting.
    pub fn next_offer(&mut self) -> Option<Recovery> {
        self.offers.pop_front()
    }

    pub fn has_offers(&self) -> bool {
        !self.offers.is_empty()
    }

    /// One was recovered: the others are not read over it (they are told, to open later).
    pub fn take_other_offers(&mut self) -> Vec<Recovery> {
        self.offers.drain(..).collect()
    }

    /// Drafts to put back once the session being recovered is read.
    pub fn restore_drafts_later(&mut self, drafts: Option<PathBuf>) {
        self.drafts_to_restore = drafts;
    }

    /// The session was read: the drafts to put back now, if any.
    pub fn drafts_to_restore(&mut self) -> Option<PathBuf> {
        self.drafts_to_restore.take()
    }

    /// Whether the drafts' autosave holds the composers at `changes` (every edit and every
    /// dialogue counts) already.
    pub fn drafts_unchanged(&self, changes: u64) -> bool {
        self.drafts_written == Some(changes)
    }

    /// Whether the drafts' autosave was never written (nothing to write before a first draft).
    pub fn drafts_never_written(&self) -> bool {
        self.drafts_written.is_none()
    }

    /// The drafts' autosave is being written with the composers at `changes`.
    pub fn drafts_written(&mut self, changes: u64) {
        self.drafts_written = Some(changes);
    }

    /// The next look writes the drafts whatever it finds (a signal: the last chance).
    pub fn write_drafts_again(&mut self) {
        self.drafts_written = None;
    }
}
