//! What update asks the runner to do: every piece of I/O, every task, every connection. Update
//! returns these and never does any of it itself, so that it stays a pure function of the
//! state and the event (tested without a terminal, a server or a file).

use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::Filling;
use crate::client::engine::DialogueKey;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use crate::session::Session;
use crate::tui::event::{OpenPurpose, SavePurpose, SaveWhat};
use serde_json::Value;
use std::path::PathBuf;

// A handful of effects come of an event, each moved once to the runner: their size does not
// matter, and boxing the Open variant's parts would only make update harder to read.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Effect {
    /// Open a dialogue (a new MCP session) on a server; `Opened` or `Failed` follows.
    Open {
        key: DialogueKey,
        spec: ServerSpec,
        interface: Interface,
        base: Chosen,
        overrides: Overrides,
        first_turn: u64,
        /// A reconnect's dialogue, to go on with where the server keeps it (2026-07-28).
        goes_on: Option<crate::client::dialogue::GoesOn>,
        /// The MCP version the dialogue spoke before (a reconnect, a take-over of a recorded
        /// one): its generation is asked for first.
        spoke: Option<String>,
    },
    /// Send a Request on a dialogue; `TurnStarted` then `TurnFinished` follow.
    Send {
        key: DialogueKey,
        request: Value,
        filling: Filling,
    },
    /// Fill a dialogue's next Requests with these common fields (the user overrode them).
    SetDefaults {
        key: DialogueKey,
        defaults: Chosen,
    },
    /// Cancel the turn in flight (the server is told).
    Cancel {
        key: DialogueKey,
    },
    /// End a dialogue's MCP session.
    Close {
        key: DialogueKey,
    },
    /// Replay a dialogue (the session holds just it) in a fresh one.
    Replay {
        key: DialogueKey,
        session: Box<Session>,
    },
    StopReplay {
        key: DialogueKey,
    },
    /// Write a session file (atomically); `Saved` follows. With `unchanged`, only if the
    /// file is still as that stamp says (else `ChangedOnDisk` follows, and nothing is written).
    Save {
        path: PathBuf,
        session: Box<Session>,
        purpose: SavePurpose,
        unchanged: Option<crate::tui::event::FileStamp>,
    },
    /// Run a scenario file on a server, in the dialogue `key` (its steps come back as
    /// `Event::Scenario`).
    RunScenario {
        key: DialogueKey,
        path: PathBuf,
        spec: ServerSpec,
    },
    StopScenario {
        key: DialogueKey,
    },
    /// Write a text file (atomically); `FileWritten` follows.
    WriteFile {
        path: PathBuf,
        text: String,
        what: &'static str,
    },
    /// Find out whether a file exists before Save-as writes it; `SaveTarget` follows.
    CheckSaveTarget {
        path: PathBuf,
        what: SaveWhat,
    },
    /// Write the unsent drafts (atomically) to this run's drafts' autosave; only a failure
    /// comes back (`FileWritten`).
    WriteDrafts {
        path: PathBuf,
        text: String,
    },
    /// Read a drafts' autosave; `DraftsRead` follows.
    ReadDrafts {
        path: PathBuf,
    },
    /// Read a session file; `SessionRead` follows.
    ReadSession {
        path: PathBuf,
        purpose: OpenPurpose,
    },
    /// List the session files to offer; `PickerItems` follows.
    ListSessions,
    /// Follow a proxy's recording as it grows (None: the newest in the data directory's
    /// recordings/); `Watch` events follow.
    Watch {
        path: Option<PathBuf>,
    },
    /// Read the servers files found in the project and the configuration; `ServersFound`
    /// follows.
    FindServers,
    /// The paths that complete `typed` (folders, and files ending in one of `extensions`, any
    /// file when there is none); `PathCompletions` follows.
    CompletePath {
        typed: String,
        extensions: &'static [&'static str],
    },
    /// Read a user theme; `ThemeLoaded` follows.
    LoadTheme {
        name: String,
    },
    /// Remember the theme for the next run.
    RememberTheme {
        name: String,
    },
    /// Put text on the terminal's clipboard (OSC 52).
    Clipboard {
        text: String,
    },
    /// Write JSON to the file the user chose (`W`); `CopyWritten` follows.
    WriteJson {
        path: PathBuf,
        text: String,
    },
    /// Leave. `clean`: the run ended as the user asked, nothing to recover next time;
    /// otherwise (a signal) the recovery marker stays so the next start offers the autosave.
    /// `kept`: what a clean end leaves as the last run's copy (nothing: the copy an earlier
    /// run left stays as it is).
    Quit {
        clean: bool,
        kept: crate::tui::persist::Kept,
    },
    /// Read again what a dialogue's server offers (it said its tools or resources changed).
    Refresh {
        key: DialogueKey,
    },
    /// List the resources of a dialogue's server; `EngineEvent::ResourcesListed` follows.
    ListResources {
        key: DialogueKey,
    },
    /// Read a resource of a dialogue's server; `EngineEvent::ResourceRead` follows.
    ReadResource {
        key: DialogueKey,
        uri: String,
    },
    /// Certify a server, stop a run, write a report (`tui::certify`); `Event::Certify`
    /// follows.
    Certify(crate::tui::certify::CertifyEffect),
    /// What the person answered a server's question (`Event::Asked`).
    Answer {
        id: u64,
        reply: crate::client::answers::Reply,
    },
}
