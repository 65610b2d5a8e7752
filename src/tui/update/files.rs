//! Sessions: the explorer's dialogues as a session (`snapshot`), saving (asked for, automatic,
//! before leaving on a signal), Save-as with a question before overwriting, opening and
//! recovering. What touches a file is an effect; here is only what to do with the results.

use crate::client::spec::TransportSpec;
use crate::protocol::Interface;
use crate::protocol::message::CommonDefaults;
use crate::session::{DialogueRecord, Session};
use crate::tui::app::{App, Paths, ServerStatus, Severity};
use crate::tui::dialogue::{DialogueState, Link, Status};
use crate::tui::effect::Effect;
use crate::tui::event::{OpenPurpose, SavePurpose, SaveWhat};
use crate::tui::ids::{DialogueId, ServerId};
use crate::tui::overlay::{Confirm, ConfirmPurpose, Overlay, PickerItem};
use std::path::{Path, PathBuf};

/// Where Save-as writes what was typed: `~` is the home folder; a bare name goes in the
/// sessions folder when there is one, else in the working folder; a name without an
/// extension gets `.json`. Always a full path, shown before it is written.
pub fn resolve_save_path(typed: &str, paths: &Paths) -> PathBuf {
    let typed = typed.trim();
    let mut path = crate::settings::expand_home(Path::new(typed));
    if path.extension().is_none() {
        path.set_extension("json");
    }
    if path.components().count() == 1 && paths.sessions_dir_exists {
        path = paths.sessions_dir.join(path);
    }
    if path.is_relative() {
        path = paths.cwd.join(path);
    }
    path
}

impl App {
    /// The explorer's servers and dialogues (those with turns) as a session.
    pub fn snapshot(&self) -> Session {
        let mut session = Session {
            name: self.session.name().map(Into::into),
            notes: self.session.notes().map(Into::into),
            defaults: self.session.defaults().clone(),
            ..Default::default()
        };
        for d in self.workspace.dialogues().values() {
            if d.transcript.is_empty() {
                continue;
            }
            let Some(server) = self.workspace.server(d.server) else {
                continue;
            };
            let name = session.add_server(&server.spec);
            let defaults = d
                .defaults
                .as_ref()
                .map(|c| c.values.clone())
                .filter(|v| v != self.session.defaults() && *v != CommonDefaults::default());
            session.dialogues.push(DialogueRecord {
                defaults,
                // The generation the dialogue spoke (its own: another dialogue on the server
                // may speak the other).
                protocol_version: d
                    .link
                    .protocol_version()
                    .map(str::to_owned)
                    .or_else(|| server.summary.as_ref().map(|s| s.protocol_version.clone())),
                ..d.record(name)
            });
        }
        session
    }

    /// Writes the autosave, if the explorer has a data directory.
    pub(super) fn autosave(&mut self, fx: &mut Vec<Effect>) {
        if let Some(path) = &self.config.paths.autosave {
            fx.push(Effect::Save {
                path: path.clone(),
                session: Box::new(self.snapshot()),
                purpose: SavePurpose::Autosave,
                unchanged: None,
            });
        }
    }

    /// Saves to a file: the session's own only if it did not change on disk since it was
    /// opened or saved (`ChangedOnDisk` comes back otherwise).
    pub(super) fn save_explicit(&mut self, path: PathBuf, fx: &mut Vec<Effect>) {
        let unchanged = if self.session.path() == Some(path.as_path()) {
            self.session.stamp().cloned()
        } else {
            None
        };
        self.save_to(path, unchanged, fx);
    }

    fn save_to(
        &mut self,
        path: PathBuf,
        unchanged: Option<crate::tui::event::FileStamp>,
        fx: &mut Vec<Effect>,
    ) {
        self.session.set_saving(true);
        fx.push(Effect::Save {
            path,
            session: Box::new(self.snapshot()),
            purpose: SavePurpose::Explicit,
            unchanged,
        });
    }

    /// Overwrites the session's file although it changed on disk (the user said so).
    pub(super) fn save_over_change(&mut self, path: PathBuf, fx: &mut Vec<Effect>) {
        self.save_to(path, None, fx);
    }

    /// Ctrl-S found the session's file changed on disk: nothing was written; the user says
    /// what to do.
    pub(super) fn changed_on_disk(&mut self, path: PathBuf) {
        self.session.set_saving(false);
        self.session.after_save(None);
        self.overlay = Some(Overlay::Confirm(Confirm {
            title: "The file changed on disk".into(),
            message: format!(
                "{} changed since it was opened or last saved (another program wrote it). \
                 Nothing was written. o overwrites it with this session, s saves this session \
                 as another file, n leaves it as it is",
                path.display()
            ),
            purpose: ConfirmPurpose::SaveOverChanged(path),
        }));
    }

    /// Sets the unsaved turns aside in a new file of the data directory (Open lists it),
    /// then opens another session (`Saved` with `SetAside`).
    pub(super) fn set_aside(&mut self, fx: &mut Vec<Effect>) {
        let Some(dir) = self.config.paths.data_dir.clone() else {
            self.notify(
                "no data directory to set the turns aside in: save them (s) instead",
                Severity::Error,
            );
            return;
        };
        fx.push(Effect::Save {
            path: dir.join("set-aside"),
            session: Box::new(self.snapshot()),
            purpose: SavePurpose::SetAside,
            unchanged: None,
        });
    }

    /// The line under Save-as's input: the full path it will write.
    pub(super) fn save_as_note(&self, typed: &str) -> String {
        if typed.trim().is_empty() {
            return "type a name or a path".into();
        }
        format!(
            "→ {}",
            resolve_save_path(typed, &self.config.paths).display()
        )
    }

    /// Save-as found out about its target: a file there is overwritten only when the user
    /// says so, and a folder that does not exist is not made.
    pub(super) fn save_target(
        &mut self,
        path: PathBuf,
        exists: bool,
        folder_exists: bool,
        what: SaveWhat,
        fx: &mut Vec<Effect>,
    ) {
        if !folder_exists {
            let said = format!(
                "not saved: that folder does not exist (make it, or choose another path): {}",
                path.parent().unwrap_or(Path::new("")).display()
            );
            if let Some(prompt) = self.write_prompt_of(&path) {
                prompt.note = said.clone();
            }
            self.notify(said, Severity::Error);
            return;
        }
        let own = what == SaveWhat::Session && self.session.path() == Some(path.as_path());
        if exists && !own {
            let purpose = ConfirmPurpose::Overwrite(path.clone(), what.clone());
            // Enter pressed twice in a write's prompt asks once.
            if matches!(&self.overlay, Some(Overlay::Confirm(c)) if c.purpose == purpose) {
                return;
            }
            // Over a write's prompt, which is back if the answer is no.
            self.open_over(Overlay::Confirm(Confirm {
                title: "The file exists".into(),
                message: format!(
                    "{} exists. Overwrite it? {} overwrites, {} keeps it as it is",
                    path.display(),
                    self.question_key(crate::tui::action::Action::Yes),
                    self.question_key(crate::tui::action::Action::No),
                ),
                purpose,
            }));
            return;
        }
        self.write_target(path, what, fx);
    }

    /// The first key of an answer to a question (keys.toml's `question` place).
    fn question_key(&self, action: crate::tui::action::Action) -> String {
        let keys = self
            .config
            .keymap
            .keys_in(&action, crate::tui::action::Context::Question);
        keys.split(" / ").next().unwrap_or("?").to_owned()
    }

    /// Writes what Save-as was for, once its target is settled.
    pub(super) fn write_target(&mut self, path: PathBuf, what: SaveWhat, fx: &mut Vec<Effect>) {
        match what {
            SaveWhat::Session => self.save_explicit(path, fx),
            SaveWhat::Scenario(key) => self.write_scenario(path, key, fx),
            SaveWhat::Json(text) => fx.push(Effect::WriteJson { path, text }),
        }
    }

    pub(super) fn saved(
        &mut self,
        path: PathBuf,
        purpose: SavePurpose,
        result: Result<(), String>,
        stamp: Option<crate::tui::event::FileStamp>,
        fx: &mut Vec<Effect>,
    ) {
        match purpose {
            SavePurpose::SetAside => match result {
                Ok(()) => {
                    self.session.all_saved();
                    self.workspace.dialogues_mut().for_each(|d| d.unsaved = 0);
                    self.notify(
                        format!(
                            "the unsaved turns are set aside in {} (Open lists it)",
                            path.display()
                        ),
                        Severity::Success,
                    );
                    self.act(crate::tui::action::Action::Open, fx);
                }
                Err(e) => self.notify(format!("{e}; nothing was opened"), Severity::Error),
            },
            SavePurpose::Autosave => {
                if let Err(e) = result {
                    self.notify(format!("autosave failed: {e}"), Severity::Warning);
                }
            }
            SavePurpose::BeforeLeaving => {
                // Whether or not it worked, leave: the marker stays for the next start.
                fx.push(Effect::Quit {
                    clean: false,
                    kept: self.kept(),
                });
            }
            SavePurpose::Explicit => {
                self.session.set_saving(false);
                let then = self.session.take_after_save();
                match result {
                    Ok(()) => {
                        self.workspace.dialogues_mut().for_each(|d| d.unsaved = 0);
                        self.notify(format!("saved {}", path.display()), Severity::Success);
                        self.session.saved(path, stamp);
                        if let Some(action) = then {
                            self.act(action, fx);
                        }
                    }
                    Err(e) => self.notify(e, Severity::Error),
                }
            }
        }
    }

    /// Shows a session that was read, in place of the current dialogues. A file that cannot
    /// be read is reported and left as it is (and never becomes the file Ctrl-S writes).
    pub(super) fn session_read(
        &mut self,
        path: PathBuf,
        purpose: OpenPurpose,
        result: Result<Session, String>,
        fx: &mut Vec<Effect>,
    ) {
        let session = match result {
            Ok(s) => s,
            Err(message) => {
                match &mut self.overlay {
                    Some(Overlay::Open(o)) => {
                        o.opening = None;
                        o.error = Some(message);
                    }
                    _ => self.notify(
                        message.lines().next().unwrap_or_default().to_owned(),
                        Severity::Error,
                    ),
                }
                return;
            }
        };
        if matches!(self.overlay, Some(Overlay::Open(_))) {
            self.close_overlay();
        }
        self.load_session(session, fx);
        match purpose {
            OpenPurpose::Open => {
                self.notify(
                    format!(
                        "opened {} (recorded dialogues: r replays, R continues in a new session)",
                        path.display()
                    ),
                    Severity::Info,
                );
                self.session.set_path(Some(path));
            }
            OpenPurpose::Recover => {
                // Not saved anywhere but in the file it was recovered from.
                for d in self.workspace.dialogues_mut() {
                    d.unsaved = d.transcript.len();
                }
                let turns = self
                    .workspace
                    .dialogues()
                    .values()
                    .map(|d| d.transcript.len())
                    .sum();
                self.session.recovered(turns);
                self.notify(
                    format!(
                        "recovered the autosaved session ({}); {} saves it under a name",
                        path.display(),
                        self.config
                            .keymap
                            .first_key(&crate::tui::action::Action::Save)
                    ),
                    Severity::Success,
                );
                if let Some(path) = self.recovering.drafts_to_restore() {
                    fx.push(Effect::ReadDrafts { path });
                }
            }
        }
    }

    /// The Open overlay's list arrived.
    pub(super) fn picker_items(&mut self, items: Vec<PickerItem>) {
        if let Some(Overlay::Open(o)) = &mut self.overlay {
            o.items = items;
            o.loading = false;
            o.selected = 0;
        }
    }

    /// What the runner found to complete a path typed (in the Open overlay, as it is typed;
    /// in a prompt, after Tab).
    pub(super) fn path_completions(
        &mut self,
        typed: String,
        paths: Vec<String>,
        fx: &mut Vec<Effect>,
    ) {
        let outcome = match &mut self.overlay {
            Some(Overlay::Open(o)) => {
                o.completed(&typed, paths);
                None
            }
            Some(Overlay::Prompt(p)) => p.completed(&typed, paths),
            _ => None,
        };
        if let Some(outcome) = outcome {
            self.overlay_outcome(outcome, fx);
        }
    }

    /// Shows a session's dialogues, marked as recorded; its servers replace the sidebar's.
    pub(crate) fn load_session(&mut self, session: Session, fx: &mut Vec<Effect>) {
        self.close_connections(fx);
        self.workspace.clear();
        self.sidebar.reset();
        for spec in &session.servers {
            let interface = match &spec.transport {
                TransportSpec::Embedded { interface, .. } => *interface,
                _ => session
                    .dialogues
                    .iter()
                    .find(|d| d.server == spec.name)
                    .map(|d| d.interface)
                    .unwrap_or(Interface::Dac),
            };
            let added = self.add_server(spec.clone(), interface);
            if let Some(s) = self.workspace.server_mut(added) {
                s.status = ServerStatus::Recorded;
                // A session file never starts a command without the user's consent.
                s.needs_consent = spec.command_it_runs();
            }
        }
        // Its name, notes and defaults (the recorded dialogues start from those), all saved.
        self.session.opened(
            session.name.clone(),
            session.notes.clone(),
            session.defaults.clone(),
        );
        for (i, record) in session.dialogues.into_iter().enumerate() {
            // A file's dialogues name servers of the file (it is checked when read).
            let Some(server) = self
                .workspace
                .servers()
                .find(|s| s.spec.name == record.server)
                .or(self.workspace.servers().first_id())
            else {
                continue;
            };
            let name = format!("{} #{}", record.server, i + 1);
            self.add_recorded_dialogue(server, record, &name);
        }
        let first = self.workspace.dialogues().first_id();
        self.workspace.set_current(first);
        self.screen.set_focus(crate::tui::action::Pane::Transcript);
    }

    /// Adds a recorded dialogue (read-only, as a session file's) on a server, its last turn
    /// selected and its Request in the composer. `name` when the record has none.
    pub(crate) fn add_recorded_dialogue(
        &mut self,
        server: ServerId,
        record: DialogueRecord,
        name: &str,
    ) -> DialogueId {
        let key = self.workspace.new_key();
        let name = record.name.clone().unwrap_or_else(|| name.to_owned());
        let mut d = DialogueState::new(key, name, server, record.interface);
        d.status = Status::Recorded;
        d.link = Link::recorded(record.dialog_id.clone(), record.protocol_version.clone());
        d.notes = record.notes.clone();
        if let Some(values) = &record.defaults {
            d.defaults = Some(crate::client::defaults::Chosen::from_base(
                values.clone(),
                crate::client::defaults::Origin::Session,
            ));
        }
        d.load_turns(record.turns);
        if let Some(last) = d
            .transcript
            .turns()
            .iter()
            .filter_map(|t| t.summary.turn_index)
            .max()
        {
            d.link.saw_turn_index(last);
        }
        let last = d.transcript.len().checked_sub(1);
        d.transcript.select(last);
        d.transcript.focus = Some(crate::tui::action::Pane::Transcript);
        let request = d.transcript.last().map(|t| t.turn.request_value());
        let id = self.workspace.add_dialogue(d);
        if let Some(request) = request {
            self.with_composer_of(id, |c, ctx| c.load(&request, ctx));
        }
        id
    }
}
