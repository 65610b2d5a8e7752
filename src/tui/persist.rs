//! The explorer's dialogues as a session file and back: saving (in a background task, never
//! in the way of the screen), the autosave after every turn, the marker that tells a crashed
//! run from a clean one, opening sessions, and the list of recent files.

use crate::client::spec::TransportSpec;
use crate::protocol::Interface;
use crate::session::{DialogueRecord, Session};
use crate::tui::app::{App, AppEvent, OpenPurpose, ServerState, ServerStatus, Severity};
use crate::tui::dialogue::{DialogueState, Status, TurnView};
use crate::tui::overlay::{Overlay, Picker, PickerItem};
use std::path::{Path, PathBuf};

pub const AUTOSAVE: &str = "autosave.json";
const RUNNING: &str = "running";
const RECENT: &str = "recent.json";

/// Where the explorer keeps its own files: `$BKN_EXPLORER_DATA_DIR`, else the user data
/// directory.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("BKN_EXPLORER_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::data_dir().map(|d| d.join("bkn-explorer")))
}

/// Marks this run as running (removed by `mark_stopped`); returns the autosave of a run that
/// did not stop cleanly, if there is one to recover.
pub fn mark_running(data_dir: &Path) -> Option<PathBuf> {
    let marker = data_dir.join(RUNNING);
    let autosave = data_dir.join(AUTOSAVE);
    let crashed = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .is_some_and(|pid| !alive(pid));
    let _ = std::fs::create_dir_all(data_dir);
    let _ = std::fs::write(&marker, std::process::id().to_string());
    (crashed && autosave.exists()).then_some(autosave)
}

pub fn mark_stopped(data_dir: &Path) {
    let marker = data_dir.join(RUNNING);
    if std::fs::read_to_string(&marker)
        .is_ok_and(|pid| pid.trim() == std::process::id().to_string())
    {
        let _ = std::fs::remove_file(marker);
    }
}

fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        false
    }
}

/// The recent session files, newest first.
pub fn recent(data_dir: Option<&Path>) -> Vec<PathBuf> {
    data_dir
        .and_then(|d| std::fs::read_to_string(d.join(RECENT)).ok())
        .and_then(|t| serde_json::from_str::<Vec<PathBuf>>(&t).ok())
        .unwrap_or_default()
}

fn remember(data_dir: Option<&Path>, path: &Path) {
    let Some(dir) = data_dir else { return };
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut list = recent(Some(dir));
    list.retain(|p| p != &path);
    list.insert(0, path);
    list.truncate(10);
    if let Ok(text) = serde_json::to_string_pretty(&list) {
        let _ = crate::session::atomic::write(&dir.join(RECENT), text.as_bytes());
    }
}

/// The sessions the picker offers: the session directory's files and the recent ones.
pub fn picker_items(sessions_dir: &Path, data_dir: Option<&Path>) -> Vec<PickerItem> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(sessions_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    for r in recent(data_dir) {
        if !paths
            .iter()
            .any(|p| p.canonicalize().ok() == r.canonicalize().ok())
            && r.exists()
        {
            paths.push(r);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let detail = describe(&path);
            PickerItem {
                label: display_path(&path),
                detail,
                path,
            }
        })
        .collect()
}

/// "Domain Access tour: 1 dialogue, 10 turns": only the name and the counts are taken (the
/// messages are skipped over, not parsed), so a long list of big sessions stays quick.
fn describe(path: &Path) -> String {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Head {
        format: Option<String>,
        name: Option<String>,
        #[serde(default)]
        dialogues: Vec<DialogueHead>,
    }
    #[derive(serde::Deserialize)]
    struct DialogueHead {
        #[serde(default)]
        turns: Vec<IgnoredAny>,
    }
    let head = std::fs::File::open(path)
        .map_err(|e| e.to_string())
        .and_then(|f| {
            serde_json::from_reader::<_, Head>(std::io::BufReader::new(f))
                .map_err(|e| e.to_string())
        });
    match head {
        Ok(h)
            if h.format
                .as_deref()
                .is_some_and(|f| f.starts_with("bkn-explorer-session/")) =>
        {
            let turns: usize = h.dialogues.iter().map(|d| d.turns.len()).sum();
            let name = h.name.map(|n| format!("{n}: ")).unwrap_or_default();
            format!(
                "{name}{} dialogue{}, {turns} turn{}",
                h.dialogues.len(),
                if h.dialogues.len() == 1 { "" } else { "s" },
                if turns == 1 { "" } else { "s" }
            )
        }
        Ok(_) => "not a bkn-explorer session (no format)".to_owned(),
        Err(e) => format!("cannot be read: {}", e.lines().next().unwrap_or_default()),
    }
}

/// A path as a person wants to read it: relative to the working directory when under it,
/// with `~` for the home directory otherwise.
pub fn display_path(path: &Path) -> String {
    if let Ok(cwd) = std::env::current_dir()
        && let Ok(rest) = path.strip_prefix(&cwd)
    {
        return rest.display().to_string();
    }
    if let Some(home) = dirs::home_dir()
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

impl App {
    /// The explorer's servers and dialogues (those with turns) as a session.
    pub fn snapshot(&self) -> Session {
        let mut session = Session {
            name: self.session.name.clone(),
            notes: self.session.notes.clone(),
            defaults: self.defaults.clone(),
            ..Default::default()
        };
        for d in &self.dialogues {
            if d.turns.is_empty() {
                continue;
            }
            let Some(server) = self.servers.get(d.server) else {
                continue;
            };
            let name = session.add_server(&server.spec);
            session.dialogues.push(DialogueRecord {
                name: Some(d.name.clone()),
                server: name,
                interface: d.interface,
                dialog_id: d.dialog_id.clone().unwrap_or_default(),
                notes: d.notes.clone(),
                defaults: None,
                turns: d.turns.iter().map(|t| t.turn.clone()).collect(),
            });
        }
        session
    }

    /// Saves the session in a background task; `Saved` follows.
    pub fn save_to(&mut self, path: PathBuf, automatic: bool) {
        let session = self.snapshot();
        if !automatic {
            self.session.saving = true;
        }
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            let result = session
                .save(&path)
                .map_err(|e| format!("cannot save {}: {e}", path.display()));
            let _ = events.send(AppEvent::Saved {
                path,
                automatic,
                result,
            });
        });
    }

    /// Writes the autosave, if the explorer has a data directory.
    pub fn autosave(&mut self) {
        if let Some(dir) = self.data_dir.clone() {
            self.save_to(dir.join(AUTOSAVE), true);
        }
    }

    pub fn saved(&mut self, path: PathBuf, automatic: bool, result: Result<(), String>) {
        if automatic {
            if let Err(e) = result {
                self.notify(format!("autosave failed: {e}"), Severity::Warning);
            }
            return;
        }
        self.session.saving = false;
        match result {
            Ok(()) => {
                self.session.unsaved = 0;
                remember(self.data_dir.as_deref(), &path);
                self.notify(format!("saved {}", path.display()), Severity::Success);
                self.session.path = Some(path);
            }
            Err(e) => self.notify(e, Severity::Error),
        }
    }

    /// Reads a session file in the background; `session_read` shows it when it arrives.
    pub fn open_session(&mut self, path: PathBuf, purpose: OpenPurpose) {
        let events = self.events.clone();
        tokio::task::spawn_blocking(move || {
            let result = Session::load(&path).map_err(|e| format!("{}: {e}", display_path(&path)));
            let _ = events.send(AppEvent::SessionRead {
                path,
                purpose,
                result,
            });
        });
    }

    /// Shows a session that was read, in place of the current dialogues. A file that cannot
    /// be read is reported and left as it is (and never becomes the file Ctrl-S writes).
    pub fn session_read(
        &mut self,
        path: PathBuf,
        purpose: OpenPurpose,
        result: Result<Session, String>,
    ) {
        let session = match result {
            Ok(s) => s,
            Err(message) => {
                match &mut self.overlay {
                    Some(Overlay::Picker(p)) => {
                        p.opening = None;
                        p.error = Some(message);
                    }
                    _ => self.notify(
                        message.lines().next().unwrap_or_default().to_owned(),
                        Severity::Error,
                    ),
                }
                return;
            }
        };
        if matches!(self.overlay, Some(Overlay::Picker(_))) {
            self.overlay = None;
        }
        self.load_session(session);
        match purpose {
            OpenPurpose::Open => {
                remember(self.data_dir.as_deref(), &path);
                self.notify(
                    format!(
                        "opened {} (recorded dialogues: r replays, R continues in a new session)",
                        display_path(&path)
                    ),
                    Severity::Info,
                );
                self.session.path = Some(path);
            }
            OpenPurpose::Recover => {
                self.session.path = None;
                self.session.name = Some("recovered".into());
                self.notify(
                    "recovered the autosaved session; Ctrl-S saves it under a name",
                    Severity::Success,
                );
            }
        }
    }

    /// Opens the session picker and reads its list in the background.
    pub fn open_picker(&mut self) {
        self.overlay = Some(Overlay::Picker(Picker {
            items: Vec::new(),
            loading: true,
            opening: None,
            selected: 0,
            error: None,
        }));
        let (dir, data, events) = (
            self.sessions_dir.clone(),
            self.data_dir.clone(),
            self.events.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let _ = events.send(AppEvent::PickerItems(picker_items(&dir, data.as_deref())));
        });
    }

    /// The picker's list arrived.
    pub fn picker_items_read(&mut self, items: Vec<PickerItem>) {
        if let Some(Overlay::Picker(p)) = &mut self.overlay {
            p.items = items;
            p.loading = false;
            p.selected = 0;
        }
    }

    /// Shows a session's dialogues, marked as recorded; its servers join the sidebar.
    pub fn load_session(&mut self, session: Session) {
        for d in std::mem::take(&mut self.dialogues) {
            self.engine.close(d.key);
        }
        self.servers.clear();
        self.current = None;
        self.sidebar_selected = 0;
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
            self.servers.push(ServerState {
                spec: spec.clone(),
                status: ServerStatus::Recorded,
                summary: None,
                vocabulary: Default::default(),
                interface,
                expanded: true,
            });
        }
        for (i, record) in session.dialogues.iter().enumerate() {
            let server = self
                .servers
                .iter()
                .position(|s| s.spec.name == record.server)
                .unwrap_or(0);
            let key = self.engine.new_key();
            let name = record
                .name
                .clone()
                .unwrap_or_else(|| format!("{} #{}", record.server, i + 1));
            let mut d = DialogueState::new(key, name, server, record.interface);
            d.status = Status::Recorded;
            d.dialog_id = Some(record.dialog_id.clone());
            d.notes = record.notes.clone();
            d.turns = record.turns.iter().cloned().map(TurnView::new).collect();
            d.next_turn = d
                .turns
                .iter()
                .filter_map(|t| t.summary.turn_index)
                .max()
                .map(|t| t + 1)
                .unwrap_or(0);
            let last = d.turns.len().checked_sub(1);
            d.select(last);
            if let Some(t) = d.turns.last() {
                let request = t.turn.request_value();
                let defaults = session.defaults.clone();
                let vocabulary = Default::default();
                let ctx = crate::tui::composer::Context {
                    vocabulary: &vocabulary,
                    commitments: Vec::new(),
                    dialog_id: "",
                    next_turn: d.next_turn,
                    defaults: &defaults,
                };
                d.composer.load(&request, &ctx);
            }
            self.dialogues.push(d);
        }
        self.defaults = session.defaults.clone();
        self.session.name = session.name.clone();
        self.session.notes = session.notes.clone();
        self.session.unsaved = 0;
        self.current = (!self.dialogues.is_empty()).then_some(0);
    }
}
