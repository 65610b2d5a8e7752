//! What covers the screen: help, palette, prompt, session picker, confirmation.

use crate::tui::app::App;
use crate::tui::overlay::Overlay;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height.saturating_sub(2));
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Clears `r` and draws a framed box with a title over it; returns the inside.
fn open_box(frame: &mut Frame, app: &App, r: Rect, title: &str) -> Rect {
    frame.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(app.theme.border(true))
        .title(Line::styled(title, app.theme.title(true)))
        .style(app.theme.base());
    let inner = block.inner(r);
    frame.render_widget(block, r);
    inner
}

/// Every key, by where it applies (from `action::key_groups`, as the README's table is).
pub fn help_lines<'a>(app: &App) -> Vec<Line<'a>> {
    let t = &app.theme;
    let mut lines = Vec::new();
    for (section, keys) in crate::tui::action::key_groups() {
        lines.push(Line::styled(section, t.bold(t.colors.title_focused)));
        for (k, what) in keys {
            lines.push(Line::from(vec![
                Span::styled(format!("  {k:<20}"), t.fg(t.colors.key_hint)),
                Span::raw(what),
            ]));
        }
    }
    lines
}

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let Some(overlay) = &app.overlay else { return };
    let t = &app.theme;
    match overlay {
        Overlay::Help { scroll } => {
            let r = centered(area, 84, area.height.saturating_sub(4));
            let inner = open_box(frame, app, r, " Keys · Esc closes · ↑↓ scroll ");
            let lines = help_lines(app);
            let skip = (*scroll).min(lines.len().saturating_sub(inner.height as usize));
            frame.render_widget(Paragraph::new(lines).scroll((skip as u16, 0)), inner);
        }
        Overlay::Palette(p) => {
            let r = Rect::new(
                area.x + area.width.saturating_sub(70) / 2,
                area.y + 2,
                70.min(area.width),
                16.min(area.height.saturating_sub(3)),
            );
            let inner = open_box(frame, app, r, " Command palette · Enter runs · Esc closes ");
            let mut lines = vec![Line::from(vec![
                Span::styled("› ", t.fg(t.colors.accent)),
                Span::raw(p.query.clone()),
                Span::styled("▏", t.fg(t.colors.accent)),
            ])];
            let room = inner.height.saturating_sub(1) as usize;
            let start = p.selected.saturating_sub(room.saturating_sub(1));
            for (k, &i) in p.matches.iter().enumerate().skip(start).take(room) {
                let (_, title, keys) = &p.entries[i];
                let width = inner.width as usize;
                let line = Line::from(vec![
                    Span::raw(format!(
                        " {:<w$}",
                        cut(title, width.saturating_sub(keys.len() + 3)),
                        w = width.saturating_sub(keys.len() + 3)
                    )),
                    Span::styled(format!("{keys} "), t.fg(t.colors.key_hint)),
                ]);
                lines.push(if k == p.selected {
                    line.style(t.selected())
                } else {
                    line
                });
            }
            if p.matches.is_empty() {
                lines.push(Line::styled(" no action matches", t.muted()));
            }
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Prompt(p) => {
            let r = centered(area, 76, 5);
            let inner = open_box(frame, app, r, " Enter to confirm · Esc to cancel ");
            let lines = vec![
                Line::styled(cut(&p.title, inner.width as usize), t.muted()),
                Line::from(vec![
                    Span::raw(p.input.clone()),
                    Span::styled("▏", t.fg(t.colors.accent)),
                ]),
            ];
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Picker(p) => {
            let r = centered(area, 90, 18);
            let inner = open_box(frame, app, r, " Open a session · Enter opens · Esc closes ");
            let mut lines = Vec::new();
            if let Some(e) = &p.error {
                lines.push(Line::styled(
                    cut(e.lines().next().unwrap_or_default(), inner.width as usize),
                    t.fg(t.colors.error),
                ));
                lines.push(Line::styled("(the file was not changed)", t.muted()));
            }
            if let Some(path) = &p.opening {
                lines.push(Line::styled(
                    format!(
                        "{} opening {}…",
                        app.spinner(),
                        crate::tui::persist::display_path(path)
                    ),
                    t.fg(t.colors.accent),
                ));
            }
            if p.loading {
                lines.push(Line::styled(
                    format!("{} reading the sessions folder…", app.spinner()),
                    t.muted(),
                ));
            } else if p.items.is_empty() {
                lines.push(Line::styled(
                    "no session files in the sessions folder and no recent ones",
                    t.muted(),
                ));
            }
            let width = inner.width as usize;
            for (i, item) in p.items.iter().enumerate() {
                let line = Line::from(vec![
                    Span::raw(format!(
                        " {:<w$}",
                        cut(&item.label, width / 2),
                        w = width / 2
                    )),
                    Span::styled(cut(&item.detail, width / 2 - 2), t.muted()),
                ]);
                lines.push(if i == p.selected {
                    line.style(t.selected())
                } else {
                    line
                });
            }
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Confirm(c) => {
            let r = centered(area, 70, 6);
            let inner = open_box(frame, app, r, " y yes · n no ");
            let lines = vec![
                Line::styled(c.title.clone(), t.bold(t.colors.warning)),
                Line::raw(c.message.clone()),
            ];
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
        }
    }
}
