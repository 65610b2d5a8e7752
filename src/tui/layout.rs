//! Where each pane goes on a screen of a given size: a pure function of the state, so that
//! update (a page's length, how many raw JSON lines are in view) and view agree without
//! either telling the other.

use crate::tui::action::Pane;
use crate::tui::app::App;
use crate::tui::composer::Mode;
use ratatui::layout::{Constraint, Layout, Rect};

/// The areas of the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    pub tabs: Rect,
    /// The sidebar, or on narrow screens a one-line server picker.
    pub sidebar: Rect,
    pub narrow: bool,
    pub transcript: Rect,
    pub detail: Rect,
    pub composer: Rect,
    /// The composer shows one line (narrow screens, when it has not the focus).
    pub composer_collapsed: bool,
    pub log: Option<Rect>,
    pub status: Rect,
}

/// Rows of the composer besides its fields: the borders, the footer, and room for an error
/// caret under a statement.
const COMPOSER_CHROME: u16 = 4;

/// The transcript's least height (its header and a row in borders) and the detail's (the
/// Feasibility verdict, the step headings and a step row, in borders).
const UPPER_MIN: u16 = 5 + 6;

pub fn areas(app: &App, area: Rect) -> Areas {
    let narrow = area.width < 100 || area.height < 30;
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    let (body, log) = if app.screen().log_shown() {
        let log_height = (body.height * 3 / 10).max(5);
        let [b, l] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(log_height)]).areas(body);
        (b, Some(l))
    } else {
        (body, None)
    };
    let (sidebar, main) = if narrow {
        let [s, m] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        (s, m)
    } else {
        let width = (area.width / 4).clamp(24, 36);
        let [s, m] =
            Layout::horizontal([Constraint::Length(width), Constraint::Min(0)]).areas(body);
        (s, m)
    };
    let wanted = app
        .current_dialogue()
        .map(|d| {
            let c = &d.composer;
            let rows: u16 = match c.mode {
                Mode::Raw => 14,
                Mode::Form => {
                    c.fields.iter().map(|f| f.height()).sum::<u16>()
                        + (c.rows() - c.fields.len()) as u16
                }
            };
            rows + COMPOSER_CHROME
        })
        .unwrap_or(COMPOSER_CHROME);
    let focused = app.focus() == Pane::Composer;
    // The composer opens up when it has the focus; otherwise the transcript and the detail
    // get the room, and the composer shows its first rows.
    // On a small screen it takes at most half, so that the answer to what it sent shows
    // (its rows scroll to keep the active one in view).
    let composer_height = match (focused, narrow) {
        (true, false) => wanted.min(main.height * 3 / 5).max(5),
        (true, true) => wanted.min(main.height / 2).max(5),
        (false, true) => 3,
        (false, false) => wanted.min(8).min(main.height / 3).max(3),
    };
    // The detail keeps room for the verdict, its headings and a first step row (issue 29:
    // after a take-over the composer opened up and the Feasibility tab showed its headings
    // only); the composer gives way, its rows scroll to the active one.
    let composer_height = match focused {
        true => composer_height
            .min(main.height.saturating_sub(UPPER_MIN))
            .max(5),
        false => composer_height,
    };
    let [upper, composer] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(composer_height)]).areas(main);
    // The transcript takes what its rows need, up to 40%; the detail gets the rest.
    let turns = app.current_dialogue().map_or(0, |d| d.transcript.len()) as u16;
    let transcript_height = (turns + 4).clamp(5, (upper.height * 2 / 5).max(5));
    let [transcript, detail] =
        Layout::vertical([Constraint::Length(transcript_height), Constraint::Min(0)]).areas(upper);
    Areas {
        tabs,
        sidebar,
        narrow,
        transcript,
        detail,
        composer,
        composer_collapsed: narrow && !focused,
        log,
        status,
    }
}

impl Areas {
    /// Rows of turns the transcript shows (inside its border, under its header).
    pub fn transcript_rows(&self) -> usize {
        self.transcript.height.saturating_sub(3) as usize
    }

    /// Lines the detail shows.
    pub fn detail_lines(&self) -> usize {
        self.detail.height.saturating_sub(2) as usize
    }

    /// Lines of raw JSON the composer shows.
    pub fn raw_lines(&self) -> usize {
        self.composer.height.saturating_sub(3) as usize
    }

    /// Entries the log shows.
    pub fn log_lines(&self) -> usize {
        self.log.map_or(0, |l| l.height.saturating_sub(2) as usize)
    }
}
