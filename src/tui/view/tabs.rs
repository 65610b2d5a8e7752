//! The top line: the explorer's name, the dialogue tabs (scrolled so that the one shown is
//! always in view, with how many are hidden on each side), the theme and the help key.

use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::dialogue::{DialogueState, Status};
use crate::tui::hits::Hits;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

const NAME: &str = " bkn-explorer ";

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let c = &t.colors;
    let labels: Vec<String> = app
        .workspace()
        .dialogues()
        .values()
        .enumerate()
        .map(|(i, d)| tab_label(app, i, d))
        .collect();
    // The theme's name only where there is room for it: tabs come first.
    let help = app.keymap().first_key(&Action::Help);
    let right = if area.width >= 100 {
        format!(" {} │ {help} help ", t.name)
    } else {
        format!(" {help} help ")
    };
    let fixed = NAME.chars().count() + 1 + right.chars().count();
    // Room for the tabs, less the "‹ 3" and "3 ›" markers that may be needed.
    let room = (area.width as usize).saturating_sub(fixed + 8);
    let shown = app
        .workspace()
        .current()
        .and_then(|c| app.workspace().dialogues().position(c));
    let (start, end) = tab_window(&labels, shown.unwrap_or(0), room);
    let mut spans = vec![
        Span::styled(NAME, t.bold(c.accent)),
        Span::styled("│", t.fg(c.border)),
    ];
    let mut x = area.x + NAME.chars().count() as u16 + 1;
    if start > 0 {
        let more = format!(" ‹{start} ");
        x += more.chars().count() as u16;
        spans.push(Span::styled(more, t.muted()));
    }
    for ((i, label), id) in labels
        .iter()
        .enumerate()
        .zip(app.workspace().dialogues().ids())
        .take(end)
        .skip(start)
    {
        let style = if Some(i) == shown {
            t.fg(c.tab_active_fg)
                .bg(c.tab_active_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            t.fg(c.tab_inactive)
        };
        let w = label.chars().count() as u16;
        hits.tabs.push((Rect::new(x, area.y, w, 1), id));
        spans.push(Span::styled(label.clone(), style));
        x += w;
    }
    if end < labels.len() {
        spans.push(Span::styled(
            format!(" {}› ", labels.len() - end),
            t.muted(),
        ));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let pad = (area.width as usize).saturating_sub(used + right.chars().count());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, t.muted()));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.base()), area);
}

/// A dialogue's tab: its number, its state (recorded, live, failed, a turn in flight) and
/// its name.
fn tab_label(app: &App, i: usize, d: &DialogueState) -> String {
    let mark = match d.status {
        Status::Recorded => "◆ ".to_owned(),
        Status::Live => "◉ ".to_owned(),
        Status::Failed(_) | Status::Closed(_) => "✗ ".to_owned(),
        _ if d.link.pending.is_some() => format!("{} ", app.spinner()),
        _ => String::new(),
    };
    format!(" {} {mark}{} ", i + 1, super::text::cut(&d.name, 18))
}

/// The tabs that fit in `room` (first, past the last): from the first, moved right until
/// the current one fits.
fn tab_window(labels: &[String], current: usize, room: usize) -> (usize, usize) {
    let width = |i: usize| labels[i].chars().count();
    let current = current.min(labels.len().saturating_sub(1));
    let mut start = 0;
    while start < current && (start..=current).map(width).sum::<usize>() > room {
        start += 1;
    }
    let mut end = start;
    let mut used = 0;
    while end < labels.len() && used + width(end) <= room {
        used += width(end);
        end += 1;
    }
    (start, end)
}
