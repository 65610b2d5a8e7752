//! The keys, by where they apply (from the key map in use, `keys.toml` included).

use super::{OverlayHits, centered, framed, scroll};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::view::text::wrap_window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Every key, by where it applies (from the keymap in use).
pub fn help_lines<'a>(app: &App, width: usize) -> Vec<Line<'a>> {
    const KEYS: usize = 28;
    let t = app.theme();
    let mut lines = Vec::new();
    for (section, keys) in app.keymap().groups() {
        lines.push(Line::styled(section, t.bold(t.colors.title_focused)));
        for (k, what) in keys {
            // What a key does wraps under itself, never cut.
            let room = width.saturating_sub(KEYS).max(16);
            for (j, part) in wrap_window(&what, room, 0, 8).into_iter().enumerate() {
                let key = if j == 0 {
                    format!("  {k:<26}")
                } else {
                    " ".repeat(KEYS)
                };
                lines.push(Line::from(vec![
                    Span::styled(key, t.fg(t.colors.key_hint)),
                    Span::raw(part),
                ]));
            }
        }
    }
    lines
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, scroll: usize) -> OverlayHits {
    let r = centered(area, 96, area.height.saturating_sub(4));
    let k = |a| super::key_of(app.keymap(), &a);
    let title = format!(
        " Keys · {} closes · {}{} scroll ",
        k(Action::Cancel),
        k(Action::Up),
        k(Action::Down)
    );
    let inner = framed(frame, app, r, &title);
    let mut hits = OverlayHits {
        area: Some(r),
        ..OverlayHits::default()
    };
    let lines = scroll::page(
        help_lines(app, inner.width as usize),
        scroll,
        inner.height as usize,
        &mut hits,
    );
    frame.render_widget(Paragraph::new(lines), inner);
    hits
}
