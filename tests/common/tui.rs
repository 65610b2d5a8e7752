//! Shared by the TUI tests: an `App` built as `tui::run` builds it (but on a test runtime and
//! without a terminal), keys fed to it as crossterm events, frames drawn on ratatui's
//! `TestBackend`, and the screen turned into text (and its styles into a legend) for
//! snapshots.

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::tui::app::{App, Options, Paths};
use bkn_explorer::tui::event::Event as AppEvent;
use bkn_explorer::tui::run::Runner;
use bkn_explorer::tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::style::{Color, Modifier};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The repository's root (for `sessions/` and the test fixtures).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The explorer's options for a test: the given servers and theme, no user data directory
/// (nothing is autosaved outside the test), the repository's `sessions/`.
pub fn options(servers: Vec<ServerSpec>, theme: &str) -> Options {
    let mut options = bkn_explorer::tui::testing::options(servers);
    options.theme = Theme::built_in(theme).expect("a built-in theme");
    options.themes = Theme::names(None);
    options.paths = Paths {
        data_dir: None,
        autosave: None,
        drafts: None,
        sessions_dir: root().join("sessions"),
        sessions_dir_exists: true,
        scenarios_dir_exists: true,
        cwd: root(),
    };
    options
}

/// How the tests connect: the built binary for the embedded servers, a generous timeout.
pub fn connect() -> ConnectOptions {
    ConnectOptions {
        timeout: Duration::from_secs(20),
        embedded_program: Some(PathBuf::from(super::bin())),
        ..ConnectOptions::default()
    }
}

/// The explorer as `tui::run` runs it, without a terminal: the runner (engine, tasks, files)
/// and the channel its events arrive on. Every event is followed by a frame on a
/// `TestBackend`, as the real loop draws after each batch, so that clicks find what was
/// drawn.
pub struct Harness {
    pub runner: Runner,
    pub events: mpsc::UnboundedReceiver<AppEvent>,
    pub width: u16,
    pub height: u16,
}

impl Harness {
    /// Must run inside a Tokio runtime: the explorer spawns its engine's tasks.
    pub fn new(options: Options) -> Harness {
        Harness::with(options, connect(), None)
    }

    /// With where user themes and settings are (a test's temporary folder).
    pub fn with(options: Options, connect: ConnectOptions, config_dir: Option<PathBuf>) -> Harness {
        let (tx, events) = mpsc::unbounded_channel();
        let theme_dir = config_dir.as_ref().map(|d| d.join("themes"));
        let runner = Runner::new(options, connect, theme_dir, config_dir, tx);
        let mut h = Harness {
            runner,
            events,
            width: 120,
            height: 40,
        };
        h.resize(120, 40);
        h
    }

    pub fn app(&self) -> &App {
        &self.runner.app
    }

    /// Draws a frame (as the loop does after an event); returns it.
    pub fn draw(&mut self) -> Buffer {
        let mut terminal =
            Terminal::new(TestBackend::new(self.width, self.height)).expect("a test terminal");
        terminal
            .draw(|f| self.runner.draw(f))
            .expect("a frame draws");
        terminal.backend().buffer().clone()
    }

    /// The screen as text.
    pub fn screen(&mut self) -> String {
        text(&self.draw())
    }

    /// Handles an event and draws.
    pub fn event(&mut self, event: AppEvent) {
        self.runner.handle(event);
        self.draw();
    }

    /// Does an action as its key would, and draws.
    pub fn act(&mut self, action: bkn_explorer::tui::action::Action) {
        self.runner.act(action);
        self.draw();
    }

    pub fn resize(&mut self, width: u16, height: u16) {
        self.width = width;
        self.height = height;
        self.event(AppEvent::Input(Event::Resize(width, height)));
    }

    pub fn key(&mut self, code: KeyCode) {
        self.key_with(code, KeyModifiers::NONE);
    }

    pub fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.event(AppEvent::Input(Event::Key(KeyEvent::new(code, modifiers))));
    }

    pub fn keys(&mut self, codes: &[KeyCode]) {
        for c in codes {
            self.key(*c);
        }
    }

    /// A left click at a cell.
    pub fn click(&mut self, column: u16, row: u16) {
        self.event(AppEvent::Input(Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        })));
    }

    /// Types text key by key (newlines as Enter), as a user would.
    pub fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            match ch {
                '\n' => {
                    // A list of completions takes Enter: close it first, as a user would.
                    if self
                        .runner
                        .app
                        .current_dialogue()
                        .is_some_and(|d| d.composer.completion.is_some())
                    {
                        self.key(KeyCode::Esc);
                    }
                    self.key(KeyCode::Enter)
                }
                c => self.key(KeyCode::Char(c)),
            }
        }
    }

    /// Handles the events that arrive until `done` holds; panics with what the screen shows
    /// if that takes longer than `within`.
    pub async fn until(&mut self, within: Duration, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + within;
        while !done(&self.runner.app) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.recv()).await {
                Ok(Some(event)) => self.event(event),
                Ok(None) => panic!("the explorer's event channel closed while waiting for {what}"),
                Err(_) => panic!(
                    "waited {within:?} for {what}; the screen shows:\n{}",
                    self.screen()
                ),
            }
        }
    }

    /// Shows a session as if it had been opened (Ctrl-O).
    pub fn show_session(&mut self, mut session: bkn_explorer::session::Session) {
        // As the runner reads a file: judged by today's rules.
        session.recheck();
        self.event(AppEvent::SessionRead {
            stamp: None,
            path: PathBuf::from("test-session.json"),
            purpose: bkn_explorer::tui::event::OpenPurpose::Open,
            result: Ok(session),
        });
    }

    /// Handles events until the runner has ended every session it was closing (as the
    /// explorer waits before it leaves).
    pub async fn until_closed(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        while self.runner.closing() {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.recv()).await {
                Ok(Some(event)) => self.event(event),
                _ => panic!("sessions were still being closed after {within:?}"),
            }
        }
    }

    /// Handles whatever has already arrived.
    pub fn drain(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.event(event);
        }
    }
}

/// The person's gestures (`tui::testing::Drive`) on the runner: clicks land where its last
/// frame drew things.
impl bkn_explorer::tui::testing::Drive for Harness {
    fn app(&self) -> &App {
        &self.runner.app
    }

    fn hits(&self) -> &bkn_explorer::tui::hits::Hits {
        &self.runner.hits
    }

    fn input(&mut self, input: Event) {
        self.event(AppEvent::Input(input));
    }

    fn redraw(&mut self) {
        Harness::draw(self);
    }
}

/// One frame of the explorer at a size (without keeping where things went).
pub fn render(app: &App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|f| {
            bkn_explorer::tui::view::render(f, app);
        })
        .expect("a frame draws");
    terminal.backend().buffer().clone()
}

/// The characters of a frame, one line per row, trailing blanks dropped.
pub fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buffer[(x, y)].symbol();
            // A wide character covers the next cell too.
            skip = unicode_width(symbol).saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn unicode_width(s: &str) -> usize {
    use unicode_width::UnicodeWidthStr;
    s.width().max(1)
}

/// The styles of a frame: a letter per cell (same grid as `text`) and a legend saying what
/// each letter is (foreground, background, modifiers). Letters are given in order of first
/// appearance, so the same layout in another theme gives the same grid and another legend.
pub fn styles(buffer: &Buffer) -> String {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let area = buffer.area;
    let mut seen: HashMap<(Color, Color, Modifier), usize> = HashMap::new();
    let mut order: Vec<(Color, Color, Modifier)> = Vec::new();
    let mut grid = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            let cell = &buffer[(x, y)];
            let key = (cell.fg, cell.bg, cell.modifier);
            let n = *seen.entry(key).or_insert_with(|| {
                order.push(key);
                order.len() - 1
            });
            grid.push(LETTERS.get(n).map(|b| *b as char).unwrap_or('?'));
        }
        grid.push('\n');
    }
    let mut legend = String::new();
    for (n, (fg, bg, modifier)) in order.iter().enumerate() {
        let letter = LETTERS.get(n).map(|b| *b as char).unwrap_or('?');
        legend.push_str(&format!("{letter}: fg {fg} · bg {bg}"));
        if !modifier.is_empty() {
            legend.push_str(&format!(" · {modifier:?}"));
        }
        legend.push('\n');
    }
    format!("{grid}\n{legend}")
}

/// Replaces what changes from run to run (UUIDs, RFC 3339 times) with placeholders of the
/// same width, so that layouts still line up.
pub fn normalize(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if let Some(n) = uuid_at(&chars[i..]) {
            out.extend(std::iter::repeat_n('x', 8));
            out.push_str("-xxxx-xxxx-xxxx-");
            out.extend(std::iter::repeat_n('x', 12));
            i += n;
        } else if let Some(n) = time_at(&chars[i..]) {
            out.extend(std::iter::repeat_n('T', n));
            i += n;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn uuid_at(c: &[char]) -> Option<usize> {
    if c.len() < 36 {
        return None;
    }
    for (i, ch) in c[..36].iter().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => *ch == '-',
            _ => ch.is_ascii_hexdigit(),
        };
        if !ok {
            return None;
        }
    }
    Some(36)
}

/// `2026-11-29T23:31:55.98Z` and the like: a date, `T`, a time, any fraction, `Z`.
fn time_at(c: &[char]) -> Option<usize> {
    let pattern = "dddd-dd-ddTdd:dd:dd";
    if c.len() < pattern.len() {
        return None;
    }
    for (p, ch) in pattern.chars().zip(c) {
        let ok = if p == 'd' {
            ch.is_ascii_digit()
        } else {
            p == *ch
        };
        if !ok {
            return None;
        }
    }
    let mut n = pattern.len();
    if c.get(n) == Some(&'.') {
        n += 1;
        while c.get(n).is_some_and(char::is_ascii_digit) {
            n += 1;
        }
    }
    if c.get(n) == Some(&'Z') {
        n += 1;
    }
    Some(n)
}
