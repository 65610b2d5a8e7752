//! The screen the explorer draws on, and the moment: which pane has the focus, whether the
//! log is shown, the terminal's size, the ticks (for the spinner and the drafts' autosave)
//! and the time of the event being handled (update takes it from the runner; it has no
//! clock). A sub-state of `App` with private fields.

use crate::tui::action::Pane;
use ratatui::layout::Rect;
use std::time::Instant;

#[derive(Debug)]
pub struct Screen {
    focus: Pane,
    /// At start, until the person acts outside a question: the composer gets the focus
    /// once the dialogue in view is open (NAV before).
    edit_once_open: bool,
    show_log: bool,
    size: Rect,
    /// Counts ticks, for the spinner.
    ticks: u64,
    /// The time of the event being handled.
    now: Instant,
}

impl Screen {
    /// The screen at start: the composer has the focus, the log is hidden, 120x40 until
    /// the terminal says its size.
    pub fn new(now: Instant) -> Screen {
        Screen {
            focus: Pane::Composer,
            edit_once_open: false,
            show_log: false,
            size: Rect::new(0, 0, 120, 40),
            ticks: 0,
            now,
        }
    }

    /// The pane that has the focus.
    pub fn focus(&self) -> Pane {
        self.focus
    }

    /// Moves the focus (to the log: shows the log).
    pub fn set_focus(&mut self, pane: Pane) {
        if pane == Pane::Log {
            self.show_log = true;
        }
        self.focus = pane;
    }

    /// Whether the log pane is shown.
    pub fn log_shown(&self) -> bool {
        self.show_log
    }

    /// Shows or hides the log; hidden with the focus in it, the focus goes to the transcript.
    pub fn show_log(&mut self, shown: bool) {
        self.show_log = shown;
        if !shown && self.focus == Pane::Log {
            self.focus = Pane::Transcript;
        }
    }

    /// The terminal's size.
    pub fn size(&self) -> Rect {
        self.size
    }

    /// The terminal was resized.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.size = Rect::new(0, 0, width, height);
    }

    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// A tick went by.
    pub fn tick(&mut self) {
        self.ticks += 1;
    }

    /// Counts ticks from `ticks` (0 makes the next look at the drafts at once).
    pub fn set_ticks(&mut self, ticks: u64) {
        self.ticks = ticks;
    }

    /// Whether the composer is entered once the dialogue in view opens (at start, until the
    /// person acts).
    pub fn edit_once_open(&self) -> bool {
        self.edit_once_open
    }

    pub fn set_edit_once_open(&mut self, wanted: bool) {
        self.edit_once_open = wanted;
    }

    /// The time of the event being handled.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// An event that happened `at` is being handled.
    pub fn set_now(&mut self, at: Instant) {
        self.now = at;
    }

    /// The spinner's frame.
    pub fn spinner(&self) -> &'static str {
        const FRAMES: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
        FRAMES[(self.ticks % 8) as usize]
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
}
