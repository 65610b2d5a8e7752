//! The top line: the explorer's name, the dialogue tabs, the theme and the help key.

use crate::tui::app::{App, Layout as Hits};
use crate::tui::dialogue::Status;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = &app.theme;
    let c = &t.colors;
    let mut spans = vec![
        Span::styled(" bkn-explorer ", t.bold(c.accent)),
        Span::styled("│", t.fg(c.border)),
    ];
    let mut x = area.x + 15;
    let right = format!(" {} │ ? help ", t.name);
    let room = area.width.saturating_sub(right.chars().count() as u16 + 16);
    for (i, d) in app.dialogues.iter().enumerate() {
        let mark = match d.status {
            Status::Recorded => "◆ ",
            Status::Failed(_) | Status::Closed(_) => "✗ ",
            _ if d.pending.is_some() => app.spinner(),
            _ => "",
        };
        let mark = if d.pending.is_some() && !mark.ends_with(' ') {
            format!("{mark} ")
        } else {
            mark.to_owned()
        };
        let label = format!(" {} {}{} ", i + 1, mark, super::text::cut(&d.name, 18));
        let width = label.chars().count() as u16;
        if x + width > area.x + room {
            spans.push(Span::styled(
                format!(" +{} ", app.dialogues.len() - i),
                t.muted(),
            ));
            break;
        }
        let style = if Some(i) == app.current {
            t.fg(c.tab_active_fg)
                .bg(c.tab_active_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            t.fg(c.tab_inactive)
        };
        hits.tabs.push((Rect::new(x, area.y, width, 1), i));
        spans.push(Span::styled(label, style));
        x += width;
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let pad = (area.width as usize).saturating_sub(used + right.chars().count());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, t.muted()));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.base()), area);
}
