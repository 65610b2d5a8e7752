//! The explorer's state, and nothing else: no engine, no channel, no task, no file, no clock.
//! `update` changes it in answer to events and says what to do as effects; `view` draws it;
//! the runner (`run`) does the effects and brings back events.

use crate::client::connection::ServerSummary;
use crate::client::defaults::{Chosen, Origin, Overrides};
use crate::client::engine::DialogueKey;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use crate::protocol::message::CommonDefaults;
use crate::protocol::resources::Vocabulary;
use crate::tui::action::{Keymap, Pane};
use crate::tui::dialogue::DialogueState;
use crate::tui::effect::Effect;
use crate::tui::event::OpenPurpose;
use crate::tui::ids::{DialogueId, ServerId, Table};
use crate::tui::log::LogState;
use crate::tui::overlay::{Confirm, ConfirmPurpose, Overlay};
use crate::tui::theme::Theme;
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::time::Instant;

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
    /// The name shown: the one the server gives in `initialize` once it is known (made
    /// distinct from the others'), else the spec's.
    pub name: String,
    pub status: ServerStatus,
    pub summary: Option<ServerSummary>,
    pub vocabulary: Vocabulary,
    /// The interface its new dialogues use.
    pub interface: Interface,
    pub expanded: bool,
    /// Defaults the user set for this server's dialogues.
    pub overrides: Overrides,
    /// Where its OAuth sign-in stands, once it has asked for one.
    pub sign_in: Option<crate::client::oauth::SignInNotice>,
    /// The command its definition runs, when it came from a session file and the user has
    /// not said yet that it may be started: a file someone sent can name any command.
    pub needs_consent: Option<String>,
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
    /// A scenario step's expectations, and which failed.
    Expect,
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
            DetailTab::Expect => "Expect",
        }
    }

    /// The tabs of a dialogue of an interface (with Replay when it was replayed, and Expect
    /// first when it runs a scenario).
    pub fn for_interface(interface: Interface, replayed: bool, scenario: bool) -> Vec<DetailTab> {
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
        if scenario {
            tabs.insert(0, DetailTab::Expect);
        }
        tabs
    }
}

pub use crate::tui::notices::{MESSAGES, NOTICE_TIME, Notice, Notices, Severity};

/// The session the explorer's dialogues belong to.
#[derive(Default)]
pub struct SessionInfo {
    pub path: Option<PathBuf>,
    pub name: Option<String>,
    pub notes: Option<String>,
    /// Turns since the last save.
    pub unsaved: usize,
    pub saving: bool,
    /// The file as it was opened or last saved: Ctrl-S does not write over a change made on
    /// disk since (it asks).
    pub stamp: Option<crate::tui::event::FileStamp>,
}

/// Where the explorer keeps and looks for files (read at start, not looked up later).
#[derive(Clone, Debug, Default)]
pub struct Paths {
    /// The autosave, the recovery marker, copied JSON.
    pub data_dir: Option<PathBuf>,
    /// This run's own autosave (in the data directory, named by the process id).
    pub autosave: Option<PathBuf>,
    /// This run's drafts' autosave (the same).
    pub drafts: Option<PathBuf>,
    /// Where Open lists sessions, and where a bare name is saved when it exists.
    pub sessions_dir: PathBuf,
    pub sessions_dir_exists: bool,
    /// Whether the working folder has a `scenarios/` folder (where tests go by default).
    pub scenarios_dir_exists: bool,
    /// The working directory, to show full paths.
    pub cwd: PathBuf,
}

/// A proxy's recording followed as it grows.
#[derive(Clone, Debug, Default)]
pub struct Live {
    pub path: PathBuf,
    /// The recording's dialogue ids and the keys of their tabs.
    pub dialogues: Vec<(u64, DialogueKey)>,
    /// Its servers.
    pub servers: Vec<ServerId>,
}

impl Live {
    /// The tab of a recorded dialogue, once it has one.
    pub fn key_of(&self, dialogue: u64) -> Option<DialogueKey> {
        self.dialogues
            .iter()
            .find(|(id, _)| *id == dialogue)
            .map(|(_, k)| *k)
    }
}

/// What the explorer is started with.
pub struct Options {
    pub servers: Vec<ServerSpec>,
    pub session: Option<PathBuf>,
    pub theme: Theme,
    /// Why the theme asked for could not be used, if it could not.
    pub theme_warning: Option<String>,
    /// Every theme there is (built in and the user's).
    pub themes: Vec<String>,
    pub keymap: Keymap,
    pub paths: Paths,
    /// The autosaves of earlier runs that left unsaved turns, to offer to recover.
    pub recover: Vec<crate::tui::persist::Recovery>,
    /// Defaults the user set on the command line.
    pub overrides: Overrides,
    /// Inside tmux, where OSC 52 reaches the clipboard only with set-clipboard on.
    pub in_tmux: bool,
    /// Servers found in servers files (the project's, the configuration's), to add.
    pub found: Vec<ServerSpec>,
    /// Follow a proxy's recording from the start: this file, or (None) the newest in the
    /// data directory's recordings/.
    pub watch: Option<Option<PathBuf>>,
    /// The bearer token of the command line (`--token`, `BKN_TOKEN`): for the --url servers,
    /// and for the HTTP servers of a recording followed (a take-over reaches them).
    pub token: Option<String>,
}

pub struct App {
    pub servers: Table<ServerId, ServerState>,
    pub dialogues: Table<DialogueId, DialogueState>,
    /// The dialogue tab shown.
    pub current: Option<DialogueId>,
    pub focus: Pane,
    pub sidebar_selected: usize,
    pub show_log: bool,
    pub log: LogState,
    pub overlay: Option<Overlay>,
    /// A search in the Raw tab or the log (`tui::search`).
    pub search: Option<crate::tui::search::Search>,
    pub theme: Theme,
    pub themes: Vec<String>,
    pub keymap: Keymap,
    /// The status line's notice and the run's messages.
    pub notices: Notices,
    pub session: SessionInfo,
    /// The common fields of new Requests before what servers publish.
    pub defaults: CommonDefaults,
    pub overrides: Overrides,
    pub paths: Paths,
    pub in_tmux: bool,
    /// Counts ticks, for the spinner.
    pub ticks: u64,
    /// The time of the event being handled (update takes it from the runner).
    pub now: Instant,
    pub size: Rect,
    next_key: DialogueKey,
    /// A signal came: leaving once the autosave is written.
    pub leaving: bool,
    /// Servers found in servers files, that "add server" offers.
    pub found: Vec<ServerSpec>,
    /// The recording being followed, and which of its dialogues is which tab.
    pub live: Option<Live>,
    /// What servers asked that waits for the person (shown one at a time, when no other
    /// overlay is open).
    pub asked: std::collections::VecDeque<crate::tui::event::AskView>,
    /// What is kept against a crash: earlier runs' autosaves to offer, drafts to put back.
    pub recovering: crate::tui::recovery::Recovering,
    /// The command line's bearer token (`Options::token`).
    pub token: Option<String>,
    /// What to do once the save under way is written (Ctrl-O's "save first" opens then).
    pub after_save: Option<crate::tui::action::Action>,
    /// The last certify run and its pane (`tui::certify`).
    pub certify: Option<crate::tui::certify::CertifyPane>,
}

impl App {
    /// A new explorer, and what to do first: open a dialogue on each server, read the
    /// session asked for.
    pub fn new(options: Options, now: Instant) -> (App, Vec<Effect>) {
        let mut app = App {
            servers: Table::default(),
            dialogues: Table::default(),
            current: None,
            focus: Pane::Composer,
            sidebar_selected: 0,
            show_log: false,
            log: LogState::default(),
            overlay: None,
            search: None,
            theme: options.theme,
            themes: options.themes,
            keymap: options.keymap,
            notices: Notices::default(),
            session: SessionInfo::default(),
            defaults: CommonDefaults::default(),
            overrides: options.overrides,
            paths: options.paths,
            in_tmux: options.in_tmux,
            ticks: 0,
            now,
            size: Rect::new(0, 0, 120, 40),
            next_key: 1,
            leaving: false,
            found: options.found,
            live: None,
            asked: Default::default(),
            recovering: crate::tui::recovery::Recovering::new(options.recover),
            token: options.token,
            after_save: None,
            certify: None,
        };
        let mut effects = Vec::new();
        if let Some(w) = options.theme_warning {
            app.notify(w, Severity::Warning);
        }
        let mut first = None;
        for spec in options.servers {
            let interface = match &spec.transport {
                crate::client::spec::TransportSpec::Embedded { interface, .. } => *interface,
                _ => Interface::Dac,
            };
            let server = app.add_server(spec, interface);
            if let Some(dialogue) = app.open_dialogue(server, interface, &mut effects) {
                first.get_or_insert(dialogue);
            }
        }
        // Start on the first server's dialogue, not the last one opened.
        app.current = first;
        if let Some(path) = options.session {
            effects.push(Effect::ReadSession {
                path,
                purpose: OpenPurpose::Open,
            });
        }
        if let Some(path) = options.watch {
            effects.push(Effect::Watch { path });
        }
        app.offer_recovery();
        (app, effects)
    }

    /// Asks about the next autosave of an earlier run, if there is one and nothing else is
    /// being asked.
    pub fn offer_recovery(&mut self) {
        if self.overlay.is_some() {
            return;
        }
        let Some(r) = self.recovering.next_offer() else {
            return;
        };
        let (title, why) = match &r.ending {
            crate::tui::persist::Ending::Unclean => (
                "bkn-explorer did not close cleanly last time".to_owned(),
                "It left turns that were not saved.".to_owned(),
            ),
            crate::tui::persist::Ending::Signal(signal) => (
                "Unsaved turns of an earlier run".to_owned(),
                format!(
                    "An earlier run was ended by {signal}{} with turns not saved; it kept them.",
                    if *signal == crate::tui::event::Signal::Hup {
                        " (its terminal closed)"
                    } else {
                        ""
                    }
                ),
            ),
        };
        let what = match (&r.path, &r.drafts) {
            (Some(session), Some(drafts)) => format!(
                "the session it autosaved ({}) and its unsent drafts ({})",
                session.display(),
                drafts.display()
            ),
            (Some(session), None) => format!("the session it autosaved ({})", session.display()),
            (None, Some(drafts)) => format!("its unsent drafts ({})", drafts.display()),
            (None, None) => return,
        };
        self.overlay = Some(Overlay::Confirm(Confirm {
            title,
            message: format!("{why} Recover {what}? y recovers, n starts afresh (the files stay)"),
            purpose: ConfirmPurpose::Recover(r),
        }));
    }

    /// A new key for a dialogue (engine dialogues are named by it).
    pub fn new_key(&mut self) -> DialogueKey {
        let key = self.next_key;
        self.next_key += 1;
        key
    }

    pub fn add_server(&mut self, spec: ServerSpec, interface: Interface) -> ServerId {
        let name = spec.name.clone();
        self.servers.push(ServerState {
            spec,
            name,
            status: ServerStatus::Connecting,
            summary: None,
            vocabulary: Vocabulary::default(),
            interface,
            expanded: true,
            overrides: Overrides::default(),
            sign_in: None,
            needs_consent: None,
        })
    }

    /// The defaults a new dialogue on a server starts from, and the user's overrides
    /// (the command line's, then the server's).
    pub fn defaults_for(&self, server: ServerId) -> (Chosen, Overrides) {
        let (base, overrides) = self.defaults_for_nothing();
        match self.servers.get(server) {
            Some(s) => (base, overrides.then(&s.overrides)),
            None => (base, overrides),
        }
    }

    /// The same for a dialogue that is there: its own overrides come last.
    pub fn defaults_of_dialogue(&self, id: DialogueId) -> (Chosen, Overrides) {
        let Some(d) = self.dialogues.get(id) else {
            return self.defaults_for_nothing();
        };
        let (base, overrides) = self.defaults_for(d.server);
        (base, overrides.then(&d.overrides))
    }

    /// The defaults before any server's: a dialogue that is gone has these.
    fn defaults_for_nothing(&self) -> (Chosen, Overrides) {
        let base = if self.defaults == CommonDefaults::default() {
            Chosen::built_in()
        } else {
            Chosen::from_base(self.defaults.clone(), Origin::Session)
        };
        (base, self.overrides.clone())
    }

    /// Opens a new dialogue (a new MCP session) on a server, in a new tab, and shows it.
    /// None when the server is gone.
    pub fn open_dialogue(
        &mut self,
        server: ServerId,
        interface: Interface,
        effects: &mut Vec<Effect>,
    ) -> Option<DialogueId> {
        self.open_dialogue_as(server, interface, None, effects)
    }

    /// The same, asking first for the MCP generation of `spoke` (the version a dialogue it
    /// goes on with spoke: a take-over).
    pub fn open_dialogue_as(
        &mut self,
        server: ServerId,
        interface: Interface,
        spoke: Option<String>,
        effects: &mut Vec<Effect>,
    ) -> Option<DialogueId> {
        let state = self.servers.get_mut(server)?;
        if state.status != ServerStatus::Connected {
            state.status = ServerStatus::Connecting;
        }
        let spec = state.spec.clone();
        let n = self
            .dialogues
            .values()
            .filter(|d| d.server == server)
            .count()
            + 1;
        let name = format!("{} #{n}", state.name);
        let key = self.new_key();
        let mut d = DialogueState::new(key, name, server, interface);
        d.composer
            .set_kind(crate::protocol::dac::Kind::SemanticGrounding);
        let (base, overrides) = self.defaults_for(server);
        effects.push(Effect::Open {
            key,
            spec,
            interface,
            base,
            overrides,
            first_turn: 0,
            goes_on: None,
            spoke,
        });
        let id = self.dialogues.push(d);
        self.show_dialogue(id);
        Some(id)
    }

    /// Shows a dialogue, keeping the focus of the one that was shown with it; but never
    /// into the composer from outside it (switching dialogues in NAV leaves letters commands:
    /// only the user's own keys enter EDIT).
    pub fn show_dialogue(&mut self, id: DialogueId) {
        if let Some(old) = self.current.and_then(|i| self.dialogues.get_mut(i)) {
            old.transcript.focus = Some(self.focus);
        }
        if let Some(d) = self.dialogues.get(id) {
            self.current = Some(id);
            if matches!(self.focus, Pane::Transcript | Pane::Detail | Pane::Composer)
                && let Some(focus) = d.transcript.focus
                && (focus != Pane::Composer || self.focus == Pane::Composer)
            {
                self.focus = focus;
            }
        }
    }

    /// The dialogue the engine knows by `key`.
    pub fn dialogue_of_key(&self, key: DialogueKey) -> Option<DialogueId> {
        self.dialogues.find(|d| d.key == key)
    }

    /// The dialogue the engine knows by `key`, itself.
    pub fn dialogue_by_key(&self, key: DialogueKey) -> Option<&DialogueState> {
        self.dialogues.values().find(|d| d.key == key)
    }

    pub fn dialogue_by_key_mut(&mut self, key: DialogueKey) -> Option<&mut DialogueState> {
        self.dialogues.values_mut().find(|d| d.key == key)
    }

    pub fn current_dialogue(&self) -> Option<&DialogueState> {
        self.current.and_then(|i| self.dialogues.get(i))
    }

    pub fn current_dialogue_mut(&mut self) -> Option<&mut DialogueState> {
        self.current.and_then(|i| self.dialogues.get_mut(i))
    }

    /// Tells the person something (the time is the event's).
    pub fn notify(&mut self, text: impl Into<String>, severity: Severity) {
        self.notices.push(text.into(), severity, self.now);
    }

    /// The rows of the sidebar: each server, then its dialogues.
    pub fn sidebar_rows(&self) -> Vec<SidebarRow> {
        let mut rows = Vec::new();
        for (s, server) in self.servers.iter() {
            rows.push(SidebarRow::Server(s));
            if server.expanded {
                for (d, dialogue) in self.dialogues.iter() {
                    if dialogue.server == s {
                        rows.push(SidebarRow::Dialogue(d));
                    }
                }
            }
        }
        rows
    }

    /// The server new dialogues open on: the one of the dialogue in view; without one, the
    /// server the sidebar points at.
    pub fn server_in_view(&self) -> Option<ServerId> {
        if let Some(d) = self.current_dialogue() {
            return Some(d.server);
        }
        match self.sidebar_rows().get(self.sidebar_selected) {
            Some(SidebarRow::Server(s)) => Some(*s),
            Some(SidebarRow::Dialogue(d)) => self.dialogues.get(*d).map(|d| d.server),
            None => self.servers.first_id(),
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
            Some(d) => DetailTab::for_interface(
                d.interface,
                d.runs.replay.is_some(),
                d.runs.scenario.is_some(),
            ),
            None => vec![DetailTab::Answer],
        }
    }

    /// The detail tab shown: the dialogue's own, if it has it, else its first.
    pub fn shown_detail_tab(&self) -> DetailTab {
        let tabs = self.detail_tabs();
        match self.current_dialogue() {
            Some(d) if tabs.contains(&d.transcript.detail_tab) => d.transcript.detail_tab,
            _ => tabs[0],
        }
    }

    /// Whether typing goes to a text input (the composer, the log's filter): then only the
    /// bindings that apply anywhere are actions.
    pub fn typing(&self) -> bool {
        self.focus == Pane::Composer && self.current.is_some()
            || (self.focus == Pane::Log && self.log.editing_filter)
            || self.search.as_ref().is_some_and(|s| s.editing)
    }

    /// The spinner's frame.
    pub fn spinner(&self) -> &'static str {
        const FRAMES: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
        FRAMES[(self.ticks % 8) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidebarRow {
    Server(ServerId),
    Dialogue(DialogueId),
}
