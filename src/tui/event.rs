//! What happens to the explorer: everything `App::handle` is given. The runner turns the
//! terminal's input, time, signals and the results of the effects it carried out into these;
//! update never asks for anything itself.

use crate::client::engine::{DialogueKey, EngineEvent};
use crate::client::turn::Turn;
use crate::session::Session;
use crate::session::diff::Difference;
use crate::session::replay::ReplayedDialogue;
use crate::tui::overlay::PickerItem;
use crate::tui::theme::Theme;
use std::path::PathBuf;

pub enum Event {
    /// A server asked for something only the person can give (an elicitation, a sampling).
    Asked(AskView),
    /// A key, the mouse, a paste, a resize.
    Input(ratatui::crossterm::event::Event),
    /// Time passes (spinners, elapsed times, notices that fade).
    Tick,
    Engine(Box<EngineEvent>),
    Replay(ReplayEvent),
    /// A save finished (`stamp`: the file as written, for the next save's check).
    Saved {
        path: PathBuf,
        purpose: SavePurpose,
        result: Result<(), String>,
        stamp: Option<FileStamp>,
    },
    /// A save to the session's own file was not made: the file changed on disk since it was
    /// opened or last saved (another explorer, an editor, a replay --update).
    ChangedOnDisk {
        path: PathBuf,
    },
    /// Whether a file Save-as is about to write exists (and its folder does).
    SaveTarget {
        path: PathBuf,
        exists: bool,
        folder_exists: bool,
        what: SaveWhat,
    },
    /// A file other than a session was written (a scenario made from a dialogue).
    FileWritten {
        path: PathBuf,
        what: &'static str,
        result: Result<(), String>,
    },
    /// What a scenario run reports.
    Scenario(ScenarioEvent),
    /// A followed recording (a proxy's journal) grew, or cannot be followed.
    Watch(WatchEvent),
    /// A session file was read (or could not be).
    SessionRead {
        path: PathBuf,
        purpose: OpenPurpose,
        result: Result<Session, String>,
        /// The file as it was read.
        stamp: Option<FileStamp>,
    },
    /// A drafts' autosave was read (or could not be).
    DraftsRead {
        path: PathBuf,
        result: Result<Vec<crate::tui::persist::SavedDraft>, String>,
    },
    /// The session files the Open overlay offers.
    PickerItems(Vec<PickerItem>),
    /// The servers of the servers files found, and the files that could not be read.
    ServersFound {
        servers: Vec<crate::client::spec::ServerSpec>,
        problems: Vec<String>,
    },
    /// The paths that complete what was typed in the Open overlay.
    PathCompletions {
        typed: String,
        paths: Vec<String>,
    },
    /// A user theme was read.
    ThemeLoaded {
        name: String,
        result: Result<Theme, String>,
    },
    /// JSON the user asked to copy was written to a file.
    CopyWritten {
        path: PathBuf,
        result: Result<(), String>,
    },
    /// What a certify run reports as it goes, and what came of writing its report.
    Certify(crate::tui::certify::CertifyEvent),
    /// SIGTERM or SIGHUP (the terminal closed): leave as a quit with unsaved work would,
    /// keeping the autosave for the next start.
    Signal(Signal),
}

/// A signal that ends the run. The terminal going away without one (its input ends, drawing
/// fails) ends it as SIGHUP does.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, strum::Display, strum::EnumString, strum::IntoStaticStr,
)]
pub enum Signal {
    #[strum(serialize = "SIGTERM")]
    Term,
    #[strum(serialize = "SIGHUP")]
    Hup,
    #[strum(serialize = "SIGINT")]
    Int,
}

impl Signal {
    /// The exit code a shell gives a process it ended (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Hup => 129,
            Signal::Int => 130,
            Signal::Term => 143,
        }
    }
}

/// What tells a file changed on disk: its length and modification time, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    /// The file's stamp now; None when it is not there (or cannot be read).
    pub fn of(path: &std::path::Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// Why a session is saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SavePurpose {
    /// Ctrl-S or Save-as: it becomes the session's file.
    Explicit,
    /// After every turn, to the data directory.
    Autosave,
    /// A signal came: the autosave, then leave (the recovery marker stays).
    BeforeLeaving,
    /// Opening another session, the unsaved turns are set aside: the runner names a new file
    /// in the folder given (`set-aside-<time>.json`), which Open lists.
    SetAside,
}

/// What Save-as writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveWhat {
    /// The session.
    Session,
    /// A dialogue, as a test (a scenario).
    Scenario(DialogueKey),
    /// The JSON in view (`W`), as it was when asked for.
    Json(String),
}

/// A scenario run in the explorer, as it goes: each step becomes a turn of its dialogue.
pub enum ScenarioEvent {
    /// The file was read and checked (or could not be).
    Loaded {
        dialogue: DialogueKey,
        result: Result<ScenarioInfo, String>,
    },
    Opened {
        dialogue: DialogueKey,
        dialog_id: String,
    },
    Step {
        dialogue: DialogueKey,
        step: Box<crate::scenario::run::StepRun>,
        /// What the step expects, in words.
        expectations: Vec<String>,
    },
    Done {
        dialogue: DialogueKey,
        /// Why the dialogue could not be opened, if it could not.
        error: Option<String>,
    },
}

/// A scenario as the explorer shows it.
#[derive(Clone, Debug)]
pub struct ScenarioInfo {
    pub name: String,
    pub steps: usize,
}

/// What following a recording reports.
#[derive(Debug)]
pub enum WatchEvent {
    /// Following `path` from its start.
    Started(PathBuf),
    /// A whole new line of it.
    Line(Box<crate::session::journal::Line>),
    /// It cannot be followed (any more), and why.
    Failed(String),
    /// Its writer is gone without writing its end (killed, or its proxy no longer
    /// answering), and how that was told: everything it wrote has been read.
    WriterGone(String),
}

/// Why a session file is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenPurpose {
    /// The user opens it (the Open overlay, `--session`): it becomes the file Ctrl-S writes.
    Open,
    /// The autosave of a run that did not end cleanly: recovered, then saved under a name.
    Recover,
}

/// What a replay reports: each turn sent again and how its answer differs, then the end.
pub enum ReplayEvent {
    Turn {
        dialogue: DialogueKey,
        index: usize,
        turn: Turn,
        differences: Vec<Difference>,
    },
    Done {
        dialogue: DialogueKey,
        result: Result<ReplayedDialogue, String>,
    },
}

/// A question a server asked, as the explorer shows it (the runner keeps where its answer
/// goes, under `id`).
#[derive(Clone, Debug, PartialEq)]
pub struct AskView {
    pub id: u64,
    pub connection: u64,
    /// `elicitation/create` or `sampling/createMessage`.
    pub method: &'static str,
    /// The input request's name (2026-07-28).
    pub name: Option<String>,
    pub message: String,
    /// What is asked: a form, a page to open, a reply.
    pub asking: crate::client::answers::Asking,
}
