//! What covers the screen: each overlay draws itself (`tui::overlay`); this puts where it drew
//! into the frame's hits, and lends the box and the input line to the other boxes (a server's
//! question, the certify pane's prompts).

use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::overlay::Input;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub(crate) use crate::tui::overlay::centered;

/// Clears `r` and draws a framed box with a title over it; returns the inside.
pub(crate) fn open_box(
    frame: &mut Frame,
    app: &App,
    r: Rect,
    title: &str,
    hits: &mut Hits,
) -> Rect {
    hits.overlay = Some(r);
    crate::tui::overlay::framed(frame, app, r, title)
}

/// An input line with its cursor.
pub(crate) fn input_line<'a>(app: &App, input: &Input, prefix: &'a str) -> Line<'a> {
    let t = app.theme();
    input.line(Span::styled(prefix, t.fg(t.colors.accent)), None)
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let Some(overlay) = &app.overlay else { return };
    // Those it was opened over, under it as they were (their hits are not the frame's:
    // the one shown takes every key and click).
    for under in &app.beneath {
        under.render(frame, app, area);
    }
    let drawn = overlay.render(frame, app, area);
    hits.overlay = drawn.area;
    hits.overlay_rows = drawn.rows;
    hits.overlay_scroll_max = drawn.scroll_max;
    hits.overlay_areas = drawn.areas;
}
