//! Running the explorer in a terminal: the terminal set up and always restored (on quit, on
//! SIGTERM, on a panic, which also leaves a report), input, ticks and signals turned into
//! events, and the loop that drains the events before each frame.

use crate::tui::app::{App, AppEvent, Options, ServerStatus};
use crate::tui::dialogue::Status;
use crate::tui::overlay::{Confirm, ConfirmPurpose, Overlay};
use crate::tui::persist;
use crate::tui::view;
use base64::Engine as _;
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use std::io::{Write, stdout};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

static ENHANCED_KEYS: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back as it was. Safe to call more than once, and from a panic.
pub fn restore_terminal() {
    let mut out = stdout();
    if ENHANCED_KEYS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
    let _ = terminal::disable_raw_mode();
}

/// On a panic: the terminal first, then a report file with the backtrace and where the
/// autosave is, then a short message (the backtrace is in the report, not on the screen).
fn install_panic_hook(data_dir: Option<PathBuf>) {
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        let backtrace = std::backtrace::Backtrace::force_capture();
        let autosave = data_dir.as_ref().map(|d| d.join(persist::AUTOSAVE));
        let report = format!(
            "bkn-explorer {} crashed.\n\n{info}\n\nThe open session was autosaved after its last turn to {}; \
             the explorer offers to recover it at the next start.\n\nBacktrace:\n{backtrace}\n",
            env!("CARGO_PKG_VERSION"),
            autosave
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(no data directory)".into()),
        );
        let written = data_dir.as_ref().and_then(|dir| {
            let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
            let path = dir.join(format!("crash-{stamp}.txt"));
            std::fs::create_dir_all(dir).ok()?;
            std::fs::write(&path, &report).ok()?;
            Some(path)
        });
        eprintln!(
            "bkn-explorer crashed: {info}\n{}{}",
            written
                .map(|p| format!("a report with the backtrace is in {}\n", p.display()))
                .unwrap_or_default(),
            autosave
                .map(|p| format!("the session's autosave is {}\n", p.display()))
                .unwrap_or_default()
        );
    }));
}

/// Runs the explorer until the user quits; returns the exit code.
pub fn run(options: Options) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bkn-explorer: cannot start the runtime: {e}");
            return 2;
        }
    };
    let code = runtime.block_on(run_async(options));
    // Child servers are ended with their connections; do not wait for stragglers.
    runtime.shutdown_timeout(Duration::from_secs(2));
    code
}

async fn run_async(options: Options) -> u8 {
    let data_dir = options.data_dir.clone();
    install_panic_hook(data_dir.clone());
    if let Err(e) = terminal::enable_raw_mode() {
        eprintln!(
            "bkn-explorer: this is not a terminal ({e}); the headless commands (send, dialogue, replay, …) work without one"
        );
        return 2;
    }
    let mut out = stdout();
    let _ = execute!(
        out,
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    );
    if terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        ENHANCED_KEYS.store(true, Ordering::SeqCst);
    }
    let mut terminal = match Terminal::new(CrosstermBackend::new(stdout())) {
        Ok(t) => t,
        Err(e) => {
            restore_terminal();
            eprintln!("bkn-explorer: cannot use the terminal: {e}");
            return 2;
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    spawn_input(tx.clone());
    spawn_ticks(tx.clone());
    spawn_signals(tx.clone());

    let recover = data_dir.as_deref().and_then(persist::mark_running);
    let mut app = App::new(options, tx);
    if let Ok(size) = terminal.size() {
        app.size = ratatui::layout::Rect::new(0, 0, size.width, size.height);
    }
    if let Some(path) = recover {
        app.overlay = Some(Overlay::Confirm(Confirm {
            title: "bkn-explorer did not close cleanly last time".into(),
            message: format!(
                "Recover the session it autosaved ({})? y recovers, n starts afresh",
                path.display()
            ),
            purpose: ConfirmPurpose::Recover(path),
        }));
    }
    // A test hook (docs/reliability.md): panic after the first frame, to check that the
    // terminal is restored and a crash report written.
    let panic_for_test = std::env::var_os("BKN_EXPLORER_TEST_PANIC").is_some();
    let mut dirty = true;
    loop {
        if dirty {
            if let Err(e) = terminal.draw(|f| view::render(f, &app)) {
                restore_terminal();
                eprintln!("bkn-explorer: cannot draw: {e}");
                return 2;
            }
            if let Some(text) = app.clipboard.take() {
                // OSC 52: the terminal puts the text on the system clipboard (also over SSH).
                let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                let _ = write!(stdout(), "\x1b]52;c;{encoded}\x07");
                let _ = stdout().flush();
            }
            dirty = false;
            if panic_for_test {
                panic!("BKN_EXPLORER_TEST_PANIC is set: panicking after the first frame, as asked");
            }
        }
        let Some(event) = rx.recv().await else { break };
        dirty |= matters(&app, &event);
        app.handle(event);
        // Draw once for everything that is already waiting.
        while let Ok(event) = rx.try_recv() {
            dirty |= matters(&app, &event);
            app.handle(event);
        }
        if app.quit {
            break;
        }
    }
    if let Some(dir) = &data_dir {
        persist::mark_stopped(dir);
    }
    restore_terminal();
    0
}

/// Whether an event can change the screen (a tick only when something moves).
fn matters(app: &App, event: &AppEvent) -> bool {
    match event {
        AppEvent::Tick => {
            app.notice.is_some()
                || app
                    .dialogues
                    .iter()
                    .any(|d| d.pending.is_some() || d.status == Status::Connecting)
                || app
                    .servers
                    .iter()
                    .any(|s| s.status == ServerStatus::Connecting)
        }
        _ => true,
    }
}

fn spawn_input(tx: mpsc::UnboundedSender<AppEvent>) {
    tokio::spawn(async move {
        let mut events = EventStream::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(e) => {
                    if tx.send(AppEvent::Input(e)).is_err() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    });
}

fn spawn_ticks(tx: mpsc::UnboundedSender<AppEvent>) {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_millis(100));
        loop {
            interval.tick().await;
            if tx.send(AppEvent::Tick).is_err() {
                break;
            }
        }
    });
}

fn spawn_signals(tx: mpsc::UnboundedSender<AppEvent>) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        let _ = tx.send(AppEvent::Terminate);
    });
}
