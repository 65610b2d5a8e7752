//! Shared by the TUI tests: an `App` built as `tui::run` builds it (but on a test runtime and
//! without a terminal), keys fed to it as crossterm events, frames drawn on ratatui's
//! `TestBackend`, and the screen turned into text (and its styles into a legend) for
//! snapshots.

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::protocol::message::CommonDefaults;
use bkn_explorer::tui::app::{App, AppEvent, Options};
use bkn_explorer::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The repository's root (for `sessions/` and the test fixtures).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The explorer's options for a test: the given servers, the built binary for the embedded
/// ones, no user data directory (nothing is autosaved outside the test).
pub fn options(servers: Vec<ServerSpec>, theme: &str) -> Options {
    Options {
        servers,
        session: None,
        theme: theme.to_owned(),
        theme_dir: None,
        data_dir: None,
        // Relative, as the explorer has it (tests run in the package root).
        sessions_dir: PathBuf::from("sessions"),
        defaults: CommonDefaults::default(),
        connect: ConnectOptions {
            timeout: Duration::from_secs(20),
            embedded_program: Some(PathBuf::from(super::bin())),
            ..ConnectOptions::default()
        },
    }
}

/// An explorer and the channel its events (engine, saves) arrive on.
pub struct Harness {
    pub app: App,
    pub events: mpsc::UnboundedReceiver<AppEvent>,
}

impl Harness {
    /// Must run inside a Tokio runtime: the explorer spawns its engine's tasks.
    pub fn new(options: Options) -> Harness {
        let (tx, events) = mpsc::unbounded_channel();
        let mut app = App::new(options, tx);
        app.size = Rect::new(0, 0, 120, 40);
        Harness { app, events }
    }

    pub fn key(&mut self, code: KeyCode) {
        self.key_with(code, KeyModifiers::NONE);
    }

    pub fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.app
            .handle(AppEvent::Input(Event::Key(KeyEvent::new(code, modifiers))));
    }

    pub fn keys(&mut self, codes: &[KeyCode]) {
        for c in codes {
            self.key(*c);
        }
    }

    /// Types text key by key (newlines as Enter), as a user would.
    pub fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            match ch {
                '\n' => self.key(KeyCode::Enter),
                c => self.key(KeyCode::Char(c)),
            }
        }
    }

    /// Handles the events that arrive until `done` holds (drawing nothing); panics with what
    /// the screen shows if that takes longer than `within`.
    pub async fn until(&mut self, within: Duration, what: &str, done: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + within;
        while !done(&self.app) {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.events.recv()).await {
                Ok(Some(event)) => self.app.handle(event),
                Ok(None) => panic!("the explorer's event channel closed while waiting for {what}"),
                Err(_) => panic!(
                    "waited {within:?} for {what}; the screen shows:\n{}",
                    text(&render(&self.app, 120, 40))
                ),
            }
        }
    }

    /// Handles whatever has already arrived.
    pub fn drain(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.app.handle(event);
        }
    }
}

/// One frame of the explorer at a size.
pub fn render(app: &App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|f| view::render(f, app))
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
