//! The messages of this run, newest last, with how long ago each came.

use super::{OverlayHits, centered, framed, scroll};
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::view::text::wrap_window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, app: &App, area: Rect, scroll: usize) -> OverlayHits {
    let t = app.theme();
    let r = centered(area, 110, area.height.saturating_sub(4));
    let k = |a| super::key_of(app.keymap(), &a);
    let title = format!(
        " Messages of this run ({}) · {} closes · {}{} scroll ",
        app.notices.messages().len(),
        k(Action::Cancel),
        k(Action::Up),
        k(Action::Down)
    );
    let inner = framed(frame, app, r, &title);
    let mut hits = OverlayHits {
        area: Some(r),
        ..OverlayHits::default()
    };
    let mut lines = Vec::new();
    for m in app.notices.messages() {
        let color = t.severity(m.severity);
        let ago = app.now().saturating_duration_since(m.at).as_secs();
        for (j, l) in wrap_window(&m.text, (inner.width as usize).saturating_sub(10), 0, 20)
            .into_iter()
            .enumerate()
        {
            let stamp = if j == 0 {
                format!("{:>6}s ", ago)
            } else {
                " ".repeat(8)
            };
            lines.push(Line::from(vec![
                Span::styled(stamp, t.muted()),
                Span::styled(l, t.fg(color)),
            ]));
        }
    }
    if lines.is_empty() {
        lines.push(Line::styled("no message yet", t.muted()));
    }
    let lines = scroll::page(lines, scroll, inner.height as usize, &mut hits);
    frame.render_widget(Paragraph::new(lines), inner);
    hits
}
