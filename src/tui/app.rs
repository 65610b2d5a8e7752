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
use crate::tui::config::Config;
use crate::tui::dialogue::DialogueState;
use crate::tui::effect::Effect;
use crate::tui::event::OpenPurpose;
use crate::tui::ids::{DialogueId, ServerId};
use crate::tui::log::LogState;
use crate::tui::overlay::{Confirm, ConfirmPurpose, Overlay};
use crate::tui::screen::Screen;
use crate::tui::session_file::SessionFile;
use crate::tui::sidebar::Sidebar;
use crate::tui::theme::Theme;
use crate::tui::workspace::Workspace;
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

/// A proxy's recording followed as it grows: which of its dialogues is which tab, and its
/// servers. Changed as the recording's lines come (its start, a dialogue's), read through
/// its accessors.
#[derive(Clone, Debug, Default)]
pub struct Live {
    path: PathBuf,
    /// The recording's dialogue ids and the keys of their tabs.
    dialogues: Vec<(u64, DialogueKey)>,
    /// Its servers.
    servers: Vec<ServerId>,
}

impl Live {
    /// Following the recording at `path`, from its start.
    pub fn new(path: PathBuf) -> Live {
        Live {
            path,
            ..Live::default()
        }
    }

    /// The recording followed.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The tab of a recorded dialogue, once it has one.
    pub fn key_of(&self, dialogue: u64) -> Option<DialogueKey> {
        self.dialogues
            .iter()
            .find(|(id, _)| *id == dialogue)
            .map(|(_, k)| *k)
    }

    /// The tabs of the recording's dialogues.
    pub fn keys(&self) -> impl Iterator<Item = DialogueKey> + '_ {
        self.dialogues.iter().map(|(_, k)| *k)
    }

    /// The recording's servers, in its order.
    pub fn servers(&self) -> &[ServerId] {
        &self.servers
    }

    /// The recording began: these are its servers in the sidebar.
    pub fn started_on(&mut self, servers: Vec<ServerId>) {
        self.servers = servers;
    }

    /// A dialogue of the recording began, shown in the tab of `key`.
    pub fn dialogue_began(&mut self, dialogue: u64, key: DialogueKey) {
        self.dialogues.push((dialogue, key));
    }
}

/// What the explorer is started with.
pub struct Options {
    pub servers: Vec<ServerSpec>,
    pub session: Option<PathBuf>,
    pub theme: Theme,
    /// What the files read at start got wrong (config.toml, the theme, keys.toml, a servers
    /// file), each mistake one message with its place.
    pub problems: Vec<String>,
    /// Every theme there is (built in and the user's).
    pub themes: Vec<String>,
    pub keymap: Keymap,
    pub paths: Paths,
    /// The autosaves of earlier runs that left unsaved turns, to offer to recover.
    pub recover: Vec<crate::tui::persist::Recovery>,
    /// The copy a run that quit with unsaved turns left (told at start, listed by Open).
    pub last_run: Option<crate::tui::persist::LastRun>,
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

/// The explorer's state: a handful of sub-states, each owning its fields and its rules
/// (docs/architecture.md has a paragraph on each).
pub struct App {
    /// The servers and their dialogue tabs, and the tab in view.
    pub(super) workspace: Workspace,
    /// The sidebar's selection and folded servers.
    pub(super) sidebar: Sidebar,
    /// The focus, the log shown or not, the size, the ticks and the event's time.
    pub(super) screen: Screen,
    /// The session's file: where, its defaults, unsaved turns, saves under way.
    pub(super) session: SessionFile,
    /// What the explorer was started with: theme, keys, paths, overrides, token.
    pub(super) config: Config,
    pub(super) log: LogState,
    pub(super) overlay: Option<Overlay>,
    /// The overlays a prompt or a question opened over (the Resources overlay under the
    /// path its `W` asks for, that prompt under the question before overwriting): each comes
    /// back as it was when the one over it closes (`close_overlay`).
    pub(super) beneath: Vec<Overlay>,
    /// A search in the Raw tab or the log (`tui::search`).
    pub(super) search: Option<crate::tui::search::Search>,
    /// The status line's notice and the run's messages.
    pub(super) notices: Notices,
    /// What is kept against a crash: earlier runs' autosaves to offer, drafts to put back.
    pub(super) recovering: crate::tui::recovery::Recovering,
    /// What servers asked that waits for the person (shown one at a time, when no other
    /// overlay is open).
    pub(super) asked: std::collections::VecDeque<crate::tui::event::AskView>,
    /// The recording being followed, and which of its dialogues is which tab.
    pub(super) live: Option<Live>,
    /// The last certify run and its pane (`tui::certify`).
    pub(super) certify: Option<crate::tui::certify::CertifyPane>,
}

impl App {
    /// A new explorer, and what to do first: open a dialogue on each server, read the
    /// session asked for.
    pub fn new(options: Options, now: Instant) -> (App, Vec<Effect>) {
        let mut app = App {
            workspace: Workspace::new(options.found),
            sidebar: Sidebar::default(),
            screen: Screen::new(now),
            session: SessionFile::default(),
            config: Config {
                theme: options.theme,
                themes: options.themes,
                keymap: options.keymap,
                paths: options.paths,
                overrides: options.overrides,
                in_tmux: options.in_tmux,
                token: options.token,
                last_run: options.last_run.clone(),
            },
            log: LogState::default(),
            overlay: None,
            beneath: Vec::new(),
            search: None,
            notices: Notices::default(),
            recovering: crate::tui::recovery::Recovering::new(options.recover),
            asked: Default::default(),
            live: None,
            certify: None,
        };
        let mut effects = Vec::new();
        for problem in options.problems {
            app.notify(problem, Severity::Warning);
        }
        if let Some(last) = options.last_run {
            let open = app
                .config
                .keymap
                .first_key(&crate::tui::action::Action::Open);
            app.notify(
                format!(
                    "{} unsaved turn{} of the last run {} in {}: {open} to open",
                    last.unsaved,
                    if last.unsaved == 1 { "" } else { "s" },
                    if last.unsaved == 1 { "is" } else { "are" },
                    crate::tui::persist::display_path(&last.path)
                ),
                Severity::Info,
            );
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
        // Start on the first server's dialogue, not the last one opened (until it fails:
        // `settle_view`).
        app.workspace.set_current(first);
        app.workspace.set_chosen_at_start(true);
        // NAV until the dialogue in view is open (`edit_once_open_at_start`): letters typed
        // before are commands, never text in a composer that cannot send.
        app.screen.set_focus(Pane::Sidebar);
        app.screen.set_edit_once_open(true);
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

    // ---- what the view, the runner and the tests read (the state changes only through
    // `handle`, in `update`) ----

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn sidebar(&self) -> &Sidebar {
        &self.sidebar
    }

    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    pub fn session(&self) -> &SessionFile {
        &self.session
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn theme(&self) -> &Theme {
        &self.config.theme
    }

    pub fn keymap(&self) -> &Keymap {
        &self.config.keymap
    }

    pub fn log(&self) -> &LogState {
        &self.log
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    /// The overlays under the one shown, the lowest first (drawn under it).
    pub fn overlays_beneath(&self) -> &[Overlay] {
        &self.beneath
    }

    /// Opens `overlay` over the one shown, which comes back when it closes.
    pub(super) fn open_over(&mut self, overlay: Overlay) {
        if let Some(under) = self.overlay.replace(overlay) {
            self.beneath.push(under);
        }
    }

    /// Closes the overlay shown: the one it was opened over, if any, shows again.
    pub(super) fn close_overlay(&mut self) {
        self.overlay = self.beneath.pop();
    }

    pub fn search(&self) -> Option<&crate::tui::search::Search> {
        self.search.as_ref()
    }

    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    pub fn certify(&self) -> Option<&crate::tui::certify::CertifyPane> {
        self.certify.as_ref()
    }

    /// The pane that has the focus.
    pub fn focus(&self) -> Pane {
        self.screen.focus()
    }

    /// The time of the event being handled.
    pub fn now(&self) -> Instant {
        self.screen.now()
    }

    /// Whether the explorer leaves once the autosave is written (a signal came).
    pub fn leaving(&self) -> bool {
        self.session.leaving()
    }

    /// Asks about the next autosave of an earlier run, if there is one and nothing else is
    /// being asked.
    pub(crate) fn offer_recovery(&mut self) {
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

    pub(crate) fn add_server(&mut self, spec: ServerSpec, interface: Interface) -> ServerId {
        self.workspace.add_server(spec, interface)
    }

    /// The defaults a new dialogue on a server starts from, and the user's overrides
    /// (the command line's, then the server's).
    pub fn defaults_for(&self, server: ServerId) -> (Chosen, Overrides) {
        let (base, overrides) = self.defaults_for_nothing();
        match self.workspace.server(server) {
            Some(s) => (base, overrides.then(&s.overrides)),
            None => (base, overrides),
        }
    }

    /// The same for a dialogue that is there: its own overrides come last.
    pub fn defaults_of_dialogue(&self, id: DialogueId) -> (Chosen, Overrides) {
        let Some(d) = self.workspace.dialogue(id) else {
            return self.defaults_for_nothing();
        };
        let (base, overrides) = self.defaults_for(d.server);
        (base, overrides.then(&d.overrides))
    }

    /// The defaults before any server's: a dialogue that is gone has these.
    fn defaults_for_nothing(&self) -> (Chosen, Overrides) {
        let defaults = self.session.defaults();
        let base = if *defaults == CommonDefaults::default() {
            Chosen::built_in()
        } else {
            Chosen::from_base(defaults.clone(), Origin::Session)
        };
        (base, self.config.overrides.clone())
    }

    /// Opens a new dialogue (a new MCP session) on a server, in a new tab, and shows it.
    /// None when the server is gone.
    pub(crate) fn open_dialogue(
        &mut self,
        server: ServerId,
        interface: Interface,
        effects: &mut Vec<Effect>,
    ) -> Option<DialogueId> {
        self.open_dialogue_as(server, interface, None, effects)
    }

    /// The same, asking first for the MCP generation of `spoke` (the version a dialogue it
    /// goes on with spoke: a take-over).
    pub(crate) fn open_dialogue_as(
        &mut self,
        server: ServerId,
        interface: Interface,
        spoke: Option<String>,
        effects: &mut Vec<Effect>,
    ) -> Option<DialogueId> {
        let n = self.workspace.dialogues_of(server).count() + 1;
        let key = self.workspace.new_key();
        let state = self.workspace.server_mut(server)?;
        if state.status != ServerStatus::Connected {
            state.status = ServerStatus::Connecting;
        }
        let spec = state.spec.clone();
        let name = format!("{} #{n}", state.name);
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
        let id = self.workspace.add_dialogue(d);
        self.show_dialogue(id);
        Some(id)
    }

    /// Shows a dialogue, keeping the focus of the one that was shown with it; but never
    /// into the composer from outside it (switching dialogues in NAV leaves letters commands:
    /// only the user's own keys enter EDIT).
    pub(crate) fn show_dialogue(&mut self, id: DialogueId) {
        let focus = self.screen.focus();
        if let Some(old) = self.workspace.current_dialogue_mut() {
            old.transcript.focus = Some(focus);
        }
        if let Some(d) = self.workspace.dialogue(id) {
            let kept = d.transcript.focus;
            self.workspace.set_current(Some(id));
            if matches!(focus, Pane::Transcript | Pane::Detail | Pane::Composer)
                && let Some(kept) = kept
                && (kept != Pane::Composer || focus == Pane::Composer)
            {
                self.screen.set_focus(kept);
            }
        }
    }

    pub fn current_dialogue(&self) -> Option<&DialogueState> {
        self.workspace.current_dialogue()
    }

    pub(crate) fn current_dialogue_mut(&mut self) -> Option<&mut DialogueState> {
        self.workspace.current_dialogue_mut()
    }

    /// Tells the person something (the time is the event's).
    pub(crate) fn notify(&mut self, text: impl Into<String>, severity: Severity) {
        self.notices.push(text.into(), severity, self.screen.now());
    }

    /// The rows of the sidebar: each server, then its dialogues.
    pub fn sidebar_rows(&self) -> Vec<SidebarRow> {
        self.sidebar.rows(&self.workspace)
    }

    /// The server new dialogues open on: the one of the dialogue in view; without one, the
    /// server the sidebar points at.
    pub fn server_in_view(&self) -> Option<ServerId> {
        if let Some(d) = self.current_dialogue() {
            return Some(d.server);
        }
        match self.sidebar.selected_row(&self.workspace) {
            Some(SidebarRow::Server(s)) => Some(s),
            Some(SidebarRow::Dialogue(d)) => self.workspace.dialogue(d).map(|d| d.server),
            None => self.workspace.servers().first_id(),
        }
    }

    /// The detail tabs of the current dialogue.
    pub fn detail_tabs(&self) -> Vec<DetailTab> {
        match self.current_dialogue() {
            Some(d) => DetailTab::for_interface(
                d.interface,
                d.runs.replay().is_some(),
                d.runs.scenario().is_some(),
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
        let focus = self.screen.focus();
        focus == Pane::Composer && self.workspace.current().is_some()
            || (focus == Pane::Log && self.log.editing_filter)
            || self.search.as_ref().is_some_and(|s| s.editing)
    }

    /// The spinner's frame.
    pub fn spinner(&self) -> &'static str {
        self.screen.spinner()
    }
}

pub use crate::tui::sidebar::SidebarRow;
