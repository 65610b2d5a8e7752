//! Drawing: a pure function of the explorer's state. Each pane has its own module; none does
//! I/O, and each draws only what fits on screen, so a frame costs the same for a dialogue of
//! ten turns or ten thousand. Where things were drawn is written to `App::layout` for the
//! mouse.

mod composer;
mod detail;
mod log;
mod overlays;
mod sidebar;
mod status;
mod tabs;
mod text;
mod transcript;

use crate::tui::action::Pane;
use crate::tui::app::{App, Layout as Hits};
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::widgets::{Block, BorderType, Borders};

/// The areas of the screen.
pub struct Areas {
    pub tabs: Rect,
    /// The sidebar, or on narrow screens a one-line server picker.
    pub sidebar: Rect,
    pub narrow: bool,
    pub transcript: Rect,
    pub detail: Rect,
    pub composer: Rect,
    pub log: Option<Rect>,
    pub status: Rect,
}

pub fn areas(app: &App, area: Rect) -> Areas {
    let narrow = area.width < 100 || area.height < 30;
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    let (body, log) = if app.show_log {
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
    let composer_rows = app
        .current_dialogue()
        .map(|d| {
            let rows: u16 = match d.composer.mode {
                crate::tui::composer::Mode::Raw => 14,
                crate::tui::composer::Mode::Form => {
                    d.composer
                        .fields
                        .iter()
                        .map(|f| {
                            if f.multiline {
                                f.editor.lines().len().clamp(2, 5) as u16
                            } else {
                                1
                            }
                        })
                        .sum::<u16>()
                        + d.composer.rows() as u16
                        - d.composer.fields.len() as u16
                }
            };
            // Borders, the footer, and room for a completion or an error caret.
            rows + 5
        })
        .unwrap_or(5);
    // The composer opens up when it has the focus; otherwise the transcript and the
    // detail get the room, and the composer shows its first rows.
    let composer_height = match (app.focus == Pane::Composer, narrow) {
        (true, _) => composer_rows.min(main.height / 2).max(5),
        (false, true) => 3,
        (false, false) => composer_rows.min(8).min(main.height / 3).max(3),
    };
    let [upper, composer] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(composer_height)]).areas(main);
    // The transcript takes what its rows need, up to 40%; the detail gets the rest.
    let turns = app.current_dialogue().map_or(0, |d| d.turns.len()) as u16;
    let transcript_height = (turns + 4).clamp(5, (upper.height * 2 / 5).max(5));
    let [transcript, detail] = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(transcript_height), Constraint::Min(0)])
        .areas(upper);
    Areas {
        tabs,
        sidebar,
        narrow,
        transcript,
        detail,
        composer,
        log,
        status,
    }
}

/// Draws the whole screen.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    frame.render_widget(Block::default().style(app.theme.base()), area);
    let a = areas(app, area);
    let mut hits = Hits {
        sidebar: a.sidebar,
        transcript: a.transcript,
        detail: a.detail,
        composer: a.composer,
        log: a.log.unwrap_or_default(),
        ..Hits::default()
    };
    tabs::render(frame, app, a.tabs, &mut hits);
    if a.narrow {
        sidebar::render_line(frame, app, a.sidebar);
    } else {
        sidebar::render(frame, app, a.sidebar, &mut hits);
    }
    transcript::render(frame, app, a.transcript, &mut hits);
    detail::render(frame, app, a.detail, &mut hits);
    composer::render(
        frame,
        app,
        a.composer,
        a.narrow && app.focus != Pane::Composer,
        &mut hits,
    );
    if let Some(l) = a.log {
        log::render(frame, app, l);
    }
    status::render(frame, app, a.status);
    overlays::render(frame, app, area);
    *app.layout.borrow_mut() = hits;
}

/// A bordered block with a title, its colours saying whether its pane has the focus (and its
/// border: thick when focused, so that the focus shows without colour too).
fn pane_block<'a>(
    app: &App,
    title: impl Into<ratatui::text::Line<'a>>,
    focused: bool,
) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(app.theme.border(focused))
        .title(title.into().style(app.theme.title(focused)))
}
