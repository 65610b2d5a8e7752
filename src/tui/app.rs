//! The explorer's state. Everything the screen shows is here; `update.rs` changes it in answer
//! to events, `view/` draws it, and all I/O happens in tasks that report back as events.

use crate::client::connection::ServerSummary;
use crate::client::defaults::{Chosen, Overrides};
use crate::client::engine::{DialogueKey, Engine, EngineEvent, Vocabulary};
use crate::client::spec::ServerSpec;
use crate::client::turn::Turn;
use crate::protocol::Interface;
use crate::protocol::message::CommonDefaults;
use crate::session::diff::Difference;
use crate::session::replay::ReplayedDialogue;
use crate::tui::action::Pane;
use crate::tui::composer;
use crate::tui::dialogue::DialogueState;
use crate::tui::log::LogState;
use crate::tui::overlay::Overlay;
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Everything that happens to the explorer.
pub enum AppEvent {
    Input(ratatui::crossterm::event::Event),
    Engine(Box<EngineEvent>),
    Replay(ReplayEvent),
    /// A save (explicit or automatic) finished.
    Saved {
        path: PathBuf,
        automatic: bool,
        result: Result<(), String>,
    },
    /// The session picker's list, read off the UI thread.
    PickerItems(Vec<crate::tui::overlay::PickerItem>),
    /// A session file was read (or could not be), off the UI thread.
    SessionRead {
        path: PathBuf,
        purpose: OpenPurpose,
        result: Result<crate::session::Session, String>,
    },
    /// Time passes (spinners, elapsed times, notices that fade).
    Tick,
    /// SIGTERM or the like: leave cleanly.
    Terminate,
}

/// Why a session file is being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenPurpose {
    /// The user opens it (the picker, `--session`): it becomes the file Ctrl-S writes.
    Open,
    /// The autosave of a run that did not end cleanly: recovered, then saved under a name.
    Recover,
}

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

#[derive(Clone, Debug, PartialEq)]
pub enum ServerStatus {
    Connecting,
    Connected,
    Failed(String),
    /// From a session file; not connected.
    Recorded,
}

pub struct ServerState {
    pub spec: ServerSpec,
    pub status: ServerStatus,
    pub summary: Option<ServerSummary>,
    pub vocabulary: Vocabulary,
    /// The interface its new dialogues use.
    pub interface: Interface,
    pub expanded: bool,
}

/// The detail tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetailTab {
    Answer,
    Feasibility,
    Commitments,
    UserState,
    Findings,
    Raw,
    Replay,
}

impl DetailTab {
    pub fn title(self) -> &'static str {
        match self {
            DetailTab::Answer => "Answer",
            DetailTab::Feasibility => "Feasibility",
            DetailTab::Commitments => "Commitments",
            DetailTab::UserState => "User State",
            DetailTab::Findings => "Findings",
            DetailTab::Raw => "Raw",
            DetailTab::Replay => "Replay",
        }
    }

    /// The tabs of a dialogue of an interface.
    pub fn for_interface(interface: Interface, replayed: bool) -> Vec<DetailTab> {
        let mut tabs = match interface {
            Interface::Dac => vec![
                DetailTab::Answer,
                DetailTab::Feasibility,
                DetailTab::Commitments,
                DetailTab::Findings,
                DetailTab::Raw,
            ],
            Interface::Usr => vec![DetailTab::UserState, DetailTab::Findings, DetailTab::Raw],
        };
        if replayed {
            tabs.push(DetailTab::Replay);
        }
        tabs
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Success,
    Warning,
    Error,
}

/// A message on the status line that fades.
pub struct Notice {
    pub text: String,
    pub severity: Severity,
    pub until: Instant,
}

/// The session the explorer's dialogues belong to.
#[derive(Default)]
pub struct SessionInfo {
    pub path: Option<PathBuf>,
    pub name: Option<String>,
    pub notes: Option<String>,
    /// Turns since the last save.
    pub unsaved: usize,
    pub saving: bool,
}

/// Where things were drawn last, so that a mouse click finds what is under it.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub sidebar: Rect,
    pub sidebar_rows: Vec<(Rect, usize)>,
    pub tabs: Vec<(Rect, usize)>,
    pub transcript: Rect,
    /// The transcript's first data row.
    pub transcript_rows: Rect,
    pub detail: Rect,
    pub detail_tabs: Vec<(Rect, DetailTab)>,
    /// The first line of the detail shown, and whose (the scroll asked for, or the last
    /// page's when that is past the end).
    pub detail_scroll: Option<(DialogueKey, usize)>,
    pub composer: Rect,
    pub composer_rows: Vec<(Rect, usize)>,
    pub log: Rect,
}

/// What the explorer is started with.
pub struct Options {
    pub servers: Vec<ServerSpec>,
    pub session: Option<PathBuf>,
    pub theme: String,
    /// Where user themes are looked for.
    pub theme_dir: Option<PathBuf>,
    /// Where the autosave and the crash markers go.
    pub data_dir: Option<PathBuf>,
    /// Where the session picker looks.
    pub sessions_dir: PathBuf,
    pub defaults: CommonDefaults,
    pub connect: crate::client::connection::ConnectOptions,
}

pub struct App {
    pub servers: Vec<ServerState>,
    pub dialogues: Vec<DialogueState>,
    /// The dialogue tab shown.
    pub current: Option<usize>,
    pub focus: Pane,
    pub sidebar_selected: usize,
    pub detail_tab: DetailTab,
    pub show_log: bool,
    pub log: LogState,
    pub overlay: Option<Overlay>,
    pub theme: Theme,
    pub notice: Option<Notice>,
    pub session: SessionInfo,
    pub defaults: CommonDefaults,
    pub quit: bool,
    /// Text to put on the clipboard (written as OSC 52 after the next frame).
    pub clipboard: Option<String>,
    /// Counts ticks, for the spinner.
    pub ticks: u64,
    pub now: Instant,
    pub size: Rect,
    pub layout: RefCell<Layout>,
    pub engine: Engine,
    pub events: mpsc::UnboundedSender<AppEvent>,
    pub theme_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub sessions_dir: PathBuf,
    pub replays: Vec<(DialogueKey, CancellationToken)>,
}

/// How long a notice stays.
pub const NOTICE_TIME: Duration = Duration::from_secs(6);

impl App {
    /// A new explorer; `engine_events` feed `events` from a task `tui::run` starts.
    pub fn new(options: Options, events: mpsc::UnboundedSender<AppEvent>) -> App {
        let (engine_tx, mut engine_rx) = mpsc::unbounded_channel();
        let forward = events.clone();
        tokio::spawn(async move {
            while let Some(e) = engine_rx.recv().await {
                if forward.send(AppEvent::Engine(Box::new(e))).is_err() {
                    break;
                }
            }
        });
        let (theme, warning) = Theme::load_or_default(&options.theme, options.theme_dir.as_deref());
        let mut app = App {
            servers: Vec::new(),
            dialogues: Vec::new(),
            current: None,
            focus: Pane::Composer,
            sidebar_selected: 0,
            detail_tab: DetailTab::Answer,
            show_log: false,
            log: LogState::default(),
            overlay: None,
            theme,
            notice: None,
            session: SessionInfo::default(),
            defaults: options.defaults.clone(),
            quit: false,
            clipboard: None,
            ticks: 0,
            now: Instant::now(),
            size: Rect::new(0, 0, 120, 40),
            layout: RefCell::new(Layout::default()),
            engine: Engine::new(engine_tx, options.connect.clone()),
            events,
            theme_dir: options.theme_dir.clone(),
            data_dir: options.data_dir.clone(),
            sessions_dir: options.sessions_dir.clone(),
            replays: Vec::new(),
        };
        if let Some(w) = warning {
            app.notify(w, Severity::Warning);
        }
        let mut first = None;
        for spec in options.servers {
            let interface = match &spec.transport {
                crate::client::spec::TransportSpec::Embedded { interface, .. } => *interface,
                _ => Interface::Dac,
            };
            let server = app.add_server(spec, interface);
            let dialogue = app.open_dialogue(server, interface);
            first.get_or_insert(dialogue);
        }
        // Start on the first server's dialogue, not the last one opened.
        app.current = first;
        if let Some(path) = &options.session {
            app.open_session(path.clone(), OpenPurpose::Open);
        }
        if !app.dialogues.is_empty() && app.current.is_none() {
            app.current = Some(0);
        }
        app
    }

    pub fn add_server(&mut self, spec: ServerSpec, interface: Interface) -> usize {
        self.servers.push(ServerState {
            spec,
            status: ServerStatus::Connecting,
            summary: None,
            vocabulary: Vocabulary::default(),
            interface,
            expanded: true,
        });
        self.servers.len() - 1
    }

    /// Opens a new dialogue (a new MCP session) on a server, in a new tab.
    pub fn open_dialogue(&mut self, server: usize, interface: Interface) -> usize {
        let key = self.engine.new_key();
        let n = self.dialogues.iter().filter(|d| d.server == server).count() + 1;
        let name = format!("{} #{n}", self.servers[server].spec.name);
        let mut d = DialogueState::new(key, name, server, interface);
        if let Some(state) = self.servers.get_mut(server)
            && state.status != ServerStatus::Connected
        {
            state.status = ServerStatus::Connecting;
        }
        d.composer
            .set_kind(crate::protocol::dac::Kind::SemanticGrounding);
        self.engine.open(
            key,
            self.servers[server].spec.clone(),
            interface,
            Chosen::built_in(),
            Overrides::default(),
            0,
        );
        self.dialogues.push(d);
        let index = self.dialogues.len() - 1;
        self.current = Some(index);
        index
    }

    pub fn dialogue_index(&self, key: DialogueKey) -> Option<usize> {
        self.dialogues.iter().position(|d| d.key == key)
    }

    pub fn current_dialogue(&self) -> Option<&DialogueState> {
        self.current.and_then(|i| self.dialogues.get(i))
    }

    pub fn current_dialogue_mut(&mut self) -> Option<&mut DialogueState> {
        self.current.and_then(|i| self.dialogues.get_mut(i))
    }

    pub fn notify(&mut self, text: impl Into<String>, severity: Severity) {
        self.notice = Some(Notice {
            text: text.into(),
            severity,
            until: Instant::now() + NOTICE_TIME,
        });
    }

    /// The rows of the sidebar: each server, then its dialogues.
    pub fn sidebar_rows(&self) -> Vec<SidebarRow> {
        let mut rows = Vec::new();
        for (s, server) in self.servers.iter().enumerate() {
            rows.push(SidebarRow::Server(s));
            if server.expanded {
                for (d, dialogue) in self.dialogues.iter().enumerate() {
                    if dialogue.server == s {
                        rows.push(SidebarRow::Dialogue(d));
                    }
                }
            }
        }
        rows
    }

    /// The server the sidebar points at (its row, or the row of one of its dialogues).
    pub fn selected_server(&self) -> Option<usize> {
        match self.sidebar_rows().get(self.sidebar_selected) {
            Some(SidebarRow::Server(s)) => Some(*s),
            Some(SidebarRow::Dialogue(d)) => self.dialogues.get(*d).map(|d| d.server),
            None => self.current_dialogue().map(|d| d.server),
        }
    }

    /// The panes in focus order.
    pub fn panes(&self) -> Vec<Pane> {
        let mut panes = vec![
            Pane::Sidebar,
            Pane::Transcript,
            Pane::Detail,
            Pane::Composer,
        ];
        if self.show_log {
            panes.push(Pane::Log);
        }
        panes
    }

    /// The detail tabs of the current dialogue.
    pub fn detail_tabs(&self) -> Vec<DetailTab> {
        match self.current_dialogue() {
            Some(d) => DetailTab::for_interface(d.interface, d.replay.is_some()),
            None => vec![DetailTab::Answer],
        }
    }

    /// The detail tab shown: the chosen one if the dialogue has it, else its first.
    pub fn shown_detail_tab(&self) -> DetailTab {
        let tabs = self.detail_tabs();
        if tabs.contains(&self.detail_tab) {
            self.detail_tab
        } else {
            tabs[0]
        }
    }

    /// What the composer of a dialogue needs (a copy, so the composer can be borrowed apart).
    pub fn compose_context(&self, dialogue: usize) -> (Vocabulary, Vec<String>, String, u64) {
        let d = &self.dialogues[dialogue];
        let vocabulary = self
            .servers
            .get(d.server)
            .map(|s| s.vocabulary.clone())
            .unwrap_or_default();
        (
            vocabulary,
            d.commitment_ids(),
            d.dialog_id.clone().unwrap_or_default(),
            d.next_turn,
        )
    }

    /// Runs `f` on a dialogue's composer with its context.
    pub fn with_composer<R>(
        &mut self,
        dialogue: usize,
        f: impl FnOnce(&mut composer::Composer, &composer::Context) -> R,
    ) -> R {
        let (vocabulary, commitments, dialog_id, next_turn) = self.compose_context(dialogue);
        let defaults = self.defaults.clone();
        let ctx = composer::Context {
            vocabulary: &vocabulary,
            commitments,
            dialog_id: &dialog_id,
            next_turn,
            defaults: &defaults,
        };
        f(&mut self.dialogues[dialogue].composer, &ctx)
    }

    /// Whether a text field has the focus (then only `Anywhere` keys are actions).
    pub fn typing(&self) -> bool {
        self.focus == Pane::Composer
            && self.current_dialogue().is_some_and(|d| {
                d.composer.mode == composer::Mode::Raw || d.composer.focused_field().is_some()
            })
            || (self.focus == Pane::Log && self.log.editing_filter)
    }

    /// The spinner's frame.
    pub fn spinner(&self) -> &'static str {
        const FRAMES: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
        FRAMES[(self.ticks % 8) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidebarRow {
    Server(usize),
    Dialogue(usize),
}
