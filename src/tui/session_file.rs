//! The session the explorer's dialogues belong to, as a file: where it is, its name and
//! notes, the common defaults it carries, how many turns were taken since it was last saved,
//! whether a save is under way and what waits for it (Ctrl-O's "save first", a signal's
//! leaving), and the file as it was last read or written (Ctrl-S does not write over a
//! change made on disk since). A sub-state of `App` with private fields.

use crate::protocol::message::CommonDefaults;
use crate::tui::action::Action;
use crate::tui::event::FileStamp;
use std::path::{Path, PathBuf};

#[derive(Default)]
pub struct SessionFile {
    path: Option<PathBuf>,
    name: Option<String>,
    notes: Option<String>,
    /// The common fields of new Requests before what servers publish.
    defaults: CommonDefaults,
    /// Turns since the last save.
    unsaved: usize,
    saving: bool,
    stamp: Option<FileStamp>,
    /// What to do once the save under way is written (Ctrl-O's "save first" opens then).
    after_save: Option<Action>,
    /// A signal came: leaving once the autosave is written.
    leaving: bool,
}

impl SessionFile {
    /// The file the session was read from or saved to, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub fn notes(&self) -> Option<&str> {
        self.notes.as_deref()
    }

    pub fn defaults(&self) -> &CommonDefaults {
        &self.defaults
    }

    /// Turns taken since the last save.
    pub fn unsaved(&self) -> usize {
        self.unsaved
    }

    /// A turn was taken (it is in the next save).
    pub fn turn_taken(&mut self) {
        self.unsaved += 1;
    }

    /// Turns that are in no later save any more (their dialogue was closed).
    pub fn turns_dropped(&mut self, n: usize) {
        self.unsaved = self.unsaved.saturating_sub(n);
    }

    /// Every turn is in a file now (saved, or set aside).
    pub fn all_saved(&mut self) {
        self.unsaved = 0;
    }

    /// Whether a save is under way.
    pub fn saving(&self) -> bool {
        self.saving
    }

    pub fn set_saving(&mut self, saving: bool) {
        self.saving = saving;
    }

    /// The file as it was last read or written.
    pub fn stamp(&self) -> Option<&FileStamp> {
        self.stamp.as_ref()
    }

    pub fn set_stamp(&mut self, stamp: Option<FileStamp>) {
        self.stamp = stamp;
    }

    /// The session was saved to `path` (its stamp as written): it is this file now, named
    /// after it unless it has a name, nothing unsaved.
    pub fn saved(&mut self, path: PathBuf, stamp: Option<FileStamp>) {
        self.unsaved = 0;
        self.stamp = stamp;
        if self.name.is_none() {
            self.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        self.path = Some(path);
    }

    /// The session is now the one of the file at `path` (a session opened: its name, notes
    /// and defaults; nothing unsaved).
    pub fn opened(
        &mut self,
        name: Option<String>,
        notes: Option<String>,
        defaults: CommonDefaults,
    ) {
        self.name = name;
        self.notes = notes;
        self.defaults = defaults;
        self.unsaved = 0;
    }

    /// The file the session belongs to (None: a session of no file yet).
    pub fn set_path(&mut self, path: Option<PathBuf>) {
        self.path = path;
    }

    /// A recovered session: no file of its own, named "recovered", its `turns` unsaved.
    pub fn recovered(&mut self, turns: usize) {
        self.path = None;
        self.stamp = None;
        self.name = Some("recovered".into());
        self.unsaved = turns;
    }

    /// Once the save under way is written, `action` follows.
    pub fn after_save(&mut self, action: Option<Action>) {
        self.after_save = action;
    }

    /// What waits for the save (taken: it runs once).
    pub fn take_after_save(&mut self) -> Option<Action> {
        self.after_save.take()
    }

    /// What waits for the save, to look at.
    pub fn waiting_for_save(&self) -> Option<&Action> {
        self.after_save.as_ref()
    }

    /// Whether the explorer leaves once the autosave is written (a signal came).
    pub fn leaving(&self) -> bool {
        self.leaving
    }

    pub fn leave_after_save(&mut self) {
        self.leaving = true;
    }
}
