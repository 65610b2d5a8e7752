//! One protocol log entry, whole: when, on which connection, its size, and its JSON pretty
//! (or its text as it came when it is not JSON). `y` copies it.

use super::{OverlayHits, centered, framed, scroll};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::view::text::{json_line, wrap_line, wrap_window};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(
    frame: &mut Frame,
    app: &App,
    area: Rect,
    entry: usize,
    scroll: usize,
) -> OverlayHits {
    let t = app.theme();
    let r = centered(
        area,
        area.width.saturating_sub(6),
        area.height.saturating_sub(4),
    );
    let copy = app.keymap().keys_in(
        &crate::tui::action::Action::CopyJson,
        crate::tui::action::Context::Overlay,
    );
    let inner = framed(
        frame,
        app,
        r,
        &format!(
            " Log entry · {copy} copies · {}{} scroll · {} closes ",
            super::key_of(app.keymap(), &Action::Up),
            super::key_of(app.keymap(), &Action::Down),
            super::key_of(app.keymap(), &Action::Cancel),
        ),
    );
    let mut hits = OverlayHits {
        area: Some(r),
        ..OverlayHits::default()
    };
    let width = inner.width as usize;
    let mut lines = Vec::new();
    match app.log.visible(entry) {
        Some(e) => {
            let at = time::OffsetDateTime::from(e.at);
            lines.push(Line::styled(
                format!(
                    "{:02}:{:02}:{:02}.{:03} · connection #{} · {} · {} bytes{}",
                    at.hour(),
                    at.minute(),
                    at.second(),
                    at.millisecond(),
                    e.connection,
                    e.kind.label(),
                    e.size,
                    if e.truncated() {
                        " (the log keeps the first 64 KiB)"
                    } else {
                        ""
                    }
                ),
                t.muted(),
            ));
            match crate::protocol::json::from_str::<serde_json::Value>(&e.text) {
                Ok(v) => {
                    let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
                    for l in pretty.lines() {
                        lines.extend(wrap_line(json_line(l, t, usize::MAX), width));
                    }
                }
                Err(_) => {
                    for l in wrap_window(&e.text, width, 0, usize::MAX) {
                        lines.push(Line::raw(l));
                    }
                }
            }
        }
        None => lines.push(Line::styled("the entry is no longer in the log", t.muted())),
    }
    let lines = scroll::page(lines, scroll, inner.height as usize, &mut hits);
    frame.render_widget(Paragraph::new(lines), inner);
    hits
}
