//! The explorer driven as the runner and the person drive it, for tests and benches: started
//! from `Options`, changed only by events (a key, a click where the last frame drew
//! something, a server's answer, a file read), read through the state's accessors, its
//! effects returned and not carried out. The unit tests of `update` and the integration
//! tests (`tests/tui_*.rs`) share it; [`Drive`] gives the same person's gestures (focus a
//! pane, show a dialogue, select a turn, open a detail tab) to anything that handles events
//! and keeps its last frame's hits, the integration tests' runner harness too.
//!
//! Public but hidden from the docs rather than behind a feature: integration tests and
//! benches link the library as it is built for everyone, so a feature would have to be
//! turned on by a dev-dependency of the crate on itself; and this module reaches the state
//! only through what the runner uses (`App::new`, `App::handle`, `view::render`, the
//! read-only accessors), so it opens no door into `App` that was closed.

use crate::client::connection::{DialogIdOrigin, ServerSummary};
use crate::client::defaults::Chosen;
use crate::client::engine::{DialogueKey, EngineEvent};
use crate::client::spec::ServerSpec;
use crate::client::turn::Turn;
use crate::protocol::Interface;
use crate::protocol::resources::Vocabulary;
use crate::session::Session;
use crate::tui::action::{Action, Pane};
use crate::tui::app::{App, DetailTab, Options, Paths, ServerState};
use crate::tui::dialogue::DialogueState;
use crate::tui::effect::Effect;
use crate::tui::event::{Event, OpenPurpose};
use crate::tui::hits::Hits;
use crate::tui::ids::DialogueId;
use crate::tui::theme::Theme;
use ratatui::crossterm::event::{
    Event as Input, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Options for a test: the servers given, the dark theme, the default keys, and paths that
/// name places no test writes to (effects are not carried out).
pub fn options(servers: Vec<ServerSpec>) -> Options {
    Options {
        servers,
        session: None,
        theme: Theme::dark(),
        problems: Vec::new(),
        themes: vec!["dark".into(), "light".into(), "high-contrast".into()],
        keymap: Default::default(),
        paths: Paths {
            data_dir: Some(PathBuf::from("/data")),
            autosave: Some(PathBuf::from("/data/autosave-7.json")),
            drafts: Some(PathBuf::from("/data/drafts-7.json")),
            sessions_dir: PathBuf::from("/work/sessions"),
            sessions_dir_exists: true,
            scenarios_dir_exists: false,
            cwd: PathBuf::from("/work"),
        },
        recover: Vec::new(),
        last_run: None,
        overrides: Default::default(),
        in_tmux: false,
        found: Vec::new(),
        watch: None,
        token: None,
    }
}

/// A key press as the terminal reports it.
pub fn key_event(code: KeyCode, modifiers: KeyModifiers) -> Input {
    Input::Key(KeyEvent::new(code, modifiers))
}

/// A left click at a cell.
pub fn click_event(x: u16, y: u16) -> Input {
    Input::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

/// The person's gestures on a frame: each is keys (the default ones) and clicks on what the
/// last frame drew, never a field set. For anything that handles events and keeps its last
/// frame's hits.
pub trait Drive {
    fn app(&self) -> &App;
    /// Where the last frame drew things.
    fn hits(&self) -> &Hits;
    /// Handles the terminal's input (a key, a click, a resize) as the runner would.
    fn input(&mut self, input: Input);
    /// Draws a frame, keeping where things went.
    fn redraw(&mut self);

    /// Gives a pane the focus as the person would: a click on its frame (the log shown
    /// first with `L`, from outside the composer).
    fn focus(&mut self, pane: Pane) {
        if pane == Pane::Log && !self.app().screen().log_shown() {
            self.focus(Pane::Transcript);
            self.input(key_event(KeyCode::Char('L'), KeyModifiers::NONE));
        }
        self.redraw();
        let (frame, _) = *self
            .hits()
            .panes
            .iter()
            .find(|(_, p)| *p == pane)
            .unwrap_or_else(|| panic!("{pane:?} is drawn"));
        self.input(click_event(frame.x, frame.y));
        assert_eq!(self.app().focus(), pane, "a click on its frame focuses it");
    }

    /// Shows a dialogue by a click on its tab.
    fn show_dialogue(&mut self, id: DialogueId) {
        self.redraw();
        let (tab, _) = *self
            .hits()
            .tabs
            .iter()
            .find(|(_, d)| *d == id)
            .expect("its tab is drawn");
        self.input(click_event(tab.x, tab.y));
        assert_eq!(self.app().workspace().current(), Some(id));
    }

    /// Shows the dialogue `n`th in the tab bar's order.
    fn show_nth(&mut self, n: usize) {
        let id = self
            .app()
            .workspace()
            .dialogues()
            .id_at(n)
            .unwrap_or_else(|| panic!("no dialogue {n}"));
        self.show_dialogue(id);
    }

    /// Selects a turn of the dialogue in view with the keys, from the first row down (the
    /// focus goes to the transcript; its window follows the selection as it moves).
    fn select_turn(&mut self, turn: usize) {
        self.focus(Pane::Transcript);
        self.input(key_event(KeyCode::Home, KeyModifiers::NONE));
        for _ in 0..turn {
            self.input(key_event(KeyCode::Down, KeyModifiers::NONE));
        }
        let selected = self
            .app()
            .current_dialogue()
            .and_then(|d| d.transcript.selected());
        assert_eq!(selected, Some(turn), "turn {turn} selected");
    }

    /// Shows a detail tab of the dialogue in view, by a click on it (the focus goes to the
    /// detail).
    fn detail_tab(&mut self, tab: DetailTab) {
        self.redraw();
        let (at, _) = *self
            .hits()
            .detail_tabs
            .iter()
            .find(|(_, t)| *t == tab)
            .unwrap_or_else(|| panic!("the {tab:?} tab is drawn"));
        self.input(click_event(at.x, at.y));
        assert_eq!(self.app().shown_detail_tab(), tab);
    }

    /// Types `text` into the prompt that is open, in place of what it held (End, then
    /// Backspace over every character).
    fn retype_prompt(&mut self, text: &str) {
        let Some(crate::tui::overlay::Overlay::Prompt(p)) = self.app().overlay() else {
            panic!("a prompt is open")
        };
        let n = p.input.text().chars().count();
        self.input(key_event(KeyCode::End, KeyModifiers::NONE));
        for _ in 0..n {
            self.input(key_event(KeyCode::Backspace, KeyModifiers::NONE));
        }
        for c in text.chars() {
            self.input(key_event(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    /// Clicks a row of the composer (0: the Kind; then each field).
    fn click_composer_row(&mut self, row: usize) {
        self.redraw();
        let (at, _) = *self
            .hits()
            .composer_rows
            .iter()
            .find(|(_, r)| *r == row)
            .unwrap_or_else(|| panic!("composer row {row} is drawn"));
        self.input(click_event(at.x, at.y));
    }
}

/// The explorer started from `Options` and driven through events, as the runner and the
/// person would drive it: a test changes nothing but by an event and checks what the person
/// sees (the state through its accessors) and gets (the effects). Time is the fixture's
/// own: each event comes 10 ms after the one before (`advance` moves it on).
pub struct Fixture {
    pub(crate) app: App,
    pub(crate) now: Instant,
    pub(crate) hits: Hits,
    /// Draws a frame after each event, as the runner's loop does; else only when asked
    /// (`draw`), so that a test can click on a frame that is out of date.
    each_frame: bool,
}

impl Fixture {
    /// Started on `servers` with the usual options (`options`).
    pub fn new(servers: Vec<ServerSpec>) -> (Fixture, Vec<Effect>) {
        Fixture::start(options(servers))
    }

    /// Started with `options`.
    pub fn start(options: Options) -> (Fixture, Vec<Effect>) {
        let now = Instant::now();
        let (app, fx) = App::new(options, now);
        (
            Fixture {
                app,
                now,
                hits: Hits::default(),
                each_frame: false,
            },
            fx,
        )
    }

    /// Draws a frame after each event from now on, as the runner does (what a snapshot
    /// shows depends on it: the scroll is clamped to what the last frame showed).
    pub fn framed(mut self) -> Fixture {
        self.each_frame = true;
        self.draw();
        self
    }

    /// Both reference servers, their dialogues open.
    pub fn reference() -> Fixture {
        Fixture::reference_with(|_| {})
    }

    /// The same, the DAC server publishing `vocabulary` (what completion and the checks
    /// know).
    pub fn reference_publishing(vocabulary: Vocabulary) -> Fixture {
        let (mut t, _) = Fixture::new(vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ]);
        t.opened_with(1, vocabulary);
        t.opened(2);
        t
    }

    /// The same, started with options changed by `change`.
    pub fn reference_with(change: impl FnOnce(&mut Options)) -> Fixture {
        let mut options = options(vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ]);
        change(&mut options);
        let (mut t, fx) = Fixture::start(options);
        assert_eq!(fx.len(), 2, "one Open per server: {fx:?}");
        for key in [1, 2] {
            t.opened(key);
        }
        t
    }

    pub fn app(&self) -> &App {
        &self.app
    }

    /// Where the last frame drew things.
    pub fn hits(&self) -> &Hits {
        &self.hits
    }

    /// Lets time pass before the next event (a notice fades, a turn waits).
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
    }

    /// Handles an event, 10 ms after the one before.
    pub fn event(&mut self, event: Event) -> Vec<Effect> {
        self.now += Duration::from_millis(10);
        let fx = self.app.handle(event, self.now, &self.hits);
        if self.each_frame {
            self.draw();
        }
        fx
    }

    /// Does an action as its key would (the palette's way in).
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.app.act(action, &mut fx);
        if self.each_frame {
            self.draw();
        }
        fx
    }

    /// The dialogue the engine knows by `key` opens on its server (named `bkn-dac` or
    /// `bkn-usr`, publishing nothing).
    pub fn opened(&mut self, key: DialogueKey) -> Vec<Effect> {
        self.opened_with(key, Vocabulary::default())
    }

    /// The same, on a server that publishes `vocabulary` (its server reads it).
    pub fn opened_with(&mut self, key: DialogueKey, vocabulary: Vocabulary) -> Vec<Effect> {
        let d = self
            .app
            .workspace()
            .dialogue_by_key(key)
            .expect("the dialogue");
        let (interface, next_turn) = (d.interface, d.link.next_turn());
        let summary = ServerSummary {
            name: format!("bkn-{}", interface.code()),
            ..Default::default()
        };
        self.event(Event::Engine(Box::new(EngineEvent::Opened {
            dialogue: key,
            connection: key,
            dialog_id: format!("dialog-{key}"),
            origin: DialogIdOrigin::Client,
            tool: interface.tool_name().into(),
            summary: Box::new(summary),
            vocabulary: Box::new(vocabulary),
            defaults: Box::new(Chosen::built_in()),
            continued: false,
            next_turn,
        })))
    }

    pub fn key(&mut self, code: KeyCode) -> Vec<Effect> {
        self.key_with(code, KeyModifiers::NONE)
    }

    pub fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Effect> {
        self.event(Event::Input(key_event(code, modifiers)))
    }

    /// Types text key by key.
    pub fn type_text(&mut self, text: &str) -> Vec<Effect> {
        let mut all = Vec::new();
        for c in text.chars() {
            all.extend(self.key(KeyCode::Char(c)));
        }
        all
    }

    /// A turn arrives on a dialogue.
    pub fn finished(&mut self, key: DialogueKey, turn: Turn) -> Vec<Effect> {
        let next = turn.turn_index().map_or(0, |t| t + 1);
        self.event(Event::Engine(Box::new(EngineEvent::TurnFinished {
            dialogue: key,
            turn,
            next_turn: next,
        })))
    }

    /// The dialogue in view.
    pub fn current(&self) -> &DialogueState {
        self.app.current_dialogue().expect("a dialogue in view")
    }

    /// Draws a frame at the terminal's size, as the runner does after each event: the next
    /// clicks find what it drew.
    pub fn draw(&mut self) {
        let size = self.app.screen().size();
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(size.width, size.height))
                .expect("a test terminal");
        let mut hits = Hits::default();
        terminal
            .draw(|f| hits = crate::tui::view::render(f, &self.app))
            .expect("a frame draws");
        self.hits = hits;
    }

    /// A left click at a place of the screen.
    pub fn click(&mut self, x: u16, y: u16) -> Vec<Effect> {
        self.event(Event::Input(click_event(x, y)))
    }

    /// Shows the dialogue the engine knows by `key`, by a click on its tab.
    pub fn show(&mut self, key: DialogueKey) {
        let id = self.dialogue(key);
        self.show_dialogue(id);
    }

    /// A line of the protocol log comes from a connection.
    pub fn logged(&mut self, entry: crate::client::event::LogEntry) -> Vec<Effect> {
        self.event(Event::Engine(Box::new(EngineEvent::Client(
            crate::client::event::Event::Log(entry),
        ))))
    }

    /// An action chosen in the palette (`:`) by its title (from outside the composer).
    pub fn palette(&mut self, title: &str) -> Vec<Effect> {
        if self.app.focus() == Pane::Composer {
            self.key(KeyCode::Esc);
        }
        self.key(KeyCode::Char(':'));
        self.type_text(title);
        self.key(KeyCode::Enter)
    }

    /// The server of dialogue `key` listed its resources (JSON ones, by URI).
    pub fn resources_listed(&mut self, key: DialogueKey, uris: &[&str]) -> Vec<Effect> {
        let listed = uris
            .iter()
            .map(|uri| crate::client::resources::Listed {
                uri: (*uri).into(),
                name: (*uri).into(),
                title: None,
                description: None,
                mime_type: Some("application/json".into()),
            })
            .collect();
        self.event(Event::Engine(Box::new(EngineEvent::ResourcesListed {
            dialogue: key,
            result: Ok(listed),
        })))
    }

    /// A key with the focus on the sidebar (where servers are added and removed).
    pub fn in_sidebar(&mut self, code: KeyCode) -> Vec<Effect> {
        self.focus(Pane::Sidebar);
        self.key(code)
    }

    /// The server of the dialogue the engine knows by `key`.
    pub fn server_of(&self, key: DialogueKey) -> &ServerState {
        let d = self
            .app
            .workspace()
            .dialogue_by_key(key)
            .expect("the dialogue");
        self.app.workspace().server(d.server).expect("its server")
    }

    /// The dialogue the engine knows by `key`.
    pub fn dialogue(&self, key: DialogueKey) -> DialogueId {
        self.app
            .workspace()
            .dialogue_of_key(key)
            .expect("the dialogue")
    }

    /// The terminal is resized.
    pub fn resize(&mut self, width: u16, height: u16) -> Vec<Effect> {
        self.event(Event::Input(Input::Resize(width, height)))
    }

    /// The runner found servers in servers files.
    pub fn servers_found(&mut self, servers: Vec<ServerSpec>) -> Vec<Effect> {
        self.event(Event::ServersFound {
            servers,
            problems: Vec::new(),
        })
    }

    /// A session file was read (Ctrl-O, or the command line's).
    pub fn session_read(&mut self, path: &str, session: Session) -> Vec<Effect> {
        self.event(Event::SessionRead {
            path: PathBuf::from(path),
            purpose: OpenPurpose::Open,
            result: Ok(session),
            stamp: None,
        })
    }
}

impl Drive for Fixture {
    fn app(&self) -> &App {
        &self.app
    }

    fn hits(&self) -> &Hits {
        &self.hits
    }

    fn input(&mut self, input: Input) {
        self.event(Event::Input(input));
    }

    fn redraw(&mut self) {
        self.draw();
    }
}
