//! What covers the screen: help, palette, prompt, Open, confirmation, the run's messages, a
//! protocol log entry.

use crate::tui::app::{App, Severity};
use crate::tui::hits::Hits;
use crate::tui::overlay::{DefaultsForm, DefaultsScope, Input, Overlay};
use crate::tui::view::text::{cut, json_line, wrap_line, wrap_window};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
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
pub(crate) fn open_box(
    frame: &mut Frame,
    app: &App,
    r: Rect,
    title: &str,
    hits: &mut Hits,
) -> Rect {
    frame.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(app.theme.border(true))
        .title(Line::styled(title.to_owned(), app.theme.title(true)))
        .style(app.theme.base());
    let inner = block.inner(r);
    frame.render_widget(block, r);
    hits.overlay = Some(r);
    inner
}

/// Every key, by where it applies (from the keymap in use).
pub fn help_lines<'a>(app: &App, width: usize) -> Vec<Line<'a>> {
    const KEYS: usize = 28;
    let t = &app.theme;
    let mut lines = Vec::new();
    for (section, keys) in app.keymap.groups() {
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

/// An input line with its cursor.
pub(crate) fn input_line<'a>(app: &App, input: &Input, prefix: &'a str) -> Line<'a> {
    let t = &app.theme;
    let chars: Vec<char> = input.text.chars().collect();
    let before: String = chars.iter().take(input.cursor).collect();
    let under: String = chars
        .get(input.cursor)
        .map(|c| c.to_string())
        .unwrap_or_else(|| " ".into());
    let after: String = chars.iter().skip(input.cursor + 1).collect();
    Line::from(vec![
        Span::styled(prefix, t.fg(t.colors.accent)),
        Span::raw(before),
        Span::styled(under, Style::default().add_modifier(Modifier::REVERSED)),
        Span::raw(after),
    ])
}

/// A scrolling text box: the lines from `scroll` (at most the last page), and how far it can
/// scroll.
fn scrolled<'a>(
    lines: Vec<Line<'a>>,
    scroll: usize,
    height: usize,
    hits: &mut Hits,
) -> Vec<Line<'a>> {
    let max = lines.len().saturating_sub(height);
    hits.overlay_scroll_max = Some(max);
    lines
        .into_iter()
        .skip(scroll.min(max))
        .take(height)
        .collect()
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let Some(overlay) = &app.overlay else { return };
    let t = &app.theme;
    match overlay {
        Overlay::Help { scroll } => {
            let r = centered(area, 96, area.height.saturating_sub(4));
            let inner = open_box(frame, app, r, " Keys · Esc closes · ↑↓ scroll ", hits);
            let lines = scrolled(
                help_lines(app, inner.width as usize),
                *scroll,
                inner.height as usize,
                hits,
            );
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Messages { scroll } => {
            let r = centered(area, 110, area.height.saturating_sub(4));
            let title = format!(
                " Messages of this run ({}) · Esc closes · ↑↓ scroll ",
                app.messages.len()
            );
            let inner = open_box(frame, app, r, &title, hits);
            let mut lines = Vec::new();
            for m in &app.messages {
                let color = match m.severity {
                    Severity::Info => t.colors.info,
                    Severity::Success => t.colors.success,
                    Severity::Warning => t.colors.warning,
                    Severity::Error => t.colors.error,
                };
                let ago = app.now.saturating_duration_since(m.at).as_secs();
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
            let lines = scrolled(lines, *scroll, inner.height as usize, hits);
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Ask(ask) => crate::tui::ask::view::render(frame, app, ask, area, hits),
        Overlay::Resources(r) => crate::tui::resources::view::render(frame, app, r, area, hits),
        Overlay::Export(e) => crate::tui::export::view::render(frame, app, e, area, hits),
        Overlay::Defaults(form) => {
            let r = centered(area, 96, 14);
            let inner = open_box(
                frame,
                app,
                r,
                " Defaults of new Requests · Tab next · Enter applies · Esc cancels ",
                hits,
            );
            let mut lines = vec![
                Line::styled(
                    "Empty: what the server publishes (else the built-in). Now:",
                    t.muted(),
                ),
                Line::raw(""),
            ];
            for (i, name) in DefaultsForm::FIELDS.iter().enumerate() {
                let active = form.row == i;
                let label = Span::styled(
                    format!("{name:<14}"),
                    if active {
                        t.bold(t.colors.accent)
                    } else {
                        t.muted()
                    },
                );
                let mut spans = vec![label];
                if active {
                    spans.extend(input_line(app, &form.inputs[i], "").spans);
                } else {
                    spans.push(Span::raw(form.inputs[i].text.clone()));
                }
                lines.push(Line::from(spans));
                let (value, origin) = &form.now[i];
                lines.push(Line::styled(
                    cut(
                        &format!("{:14}now {value} ({origin})", ""),
                        inner.width as usize,
                    ),
                    t.muted(),
                ));
            }
            lines.push(Line::raw(""));
            let active = form.row == 3;
            let choice = |on: bool, text: String| {
                Span::styled(
                    if on {
                        format!("[ {text} ]")
                    } else {
                        format!("  {text}  ")
                    },
                    if on {
                        t.bold(t.colors.accent)
                    } else {
                        t.muted()
                    },
                )
            };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{:<14}", "Apply to"),
                    if active {
                        t.bold(t.colors.accent)
                    } else {
                        t.muted()
                    },
                ),
                choice(
                    form.scope == DefaultsScope::Dialogue,
                    "this dialogue".into(),
                ),
                choice(
                    form.scope == DefaultsScope::Server,
                    format!("every dialogue of {}", form.server),
                ),
                Span::styled(if active { "  ← →" } else { "" }, t.fg(t.colors.key_hint)),
            ]));
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::LogEntry { entry, scroll } => {
            let r = centered(
                area,
                area.width.saturating_sub(6),
                area.height.saturating_sub(4),
            );
            let inner = open_box(
                frame,
                app,
                r,
                " Log entry · y copies · ↑↓ scroll · Esc closes ",
                hits,
            );
            let width = inner.width as usize;
            let mut lines = Vec::new();
            match app.log.visible(*entry) {
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
            let lines = scrolled(lines, *scroll, inner.height as usize, hits);
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Palette(p) => {
            let r = Rect::new(
                area.x + area.width.saturating_sub(76) / 2,
                area.y + 2,
                76.min(area.width),
                18.min(area.height.saturating_sub(3)),
            );
            let inner = open_box(
                frame,
                app,
                r,
                " Command palette · Enter runs · Esc closes ",
                hits,
            );
            let mut lines = vec![input_line(app, &p.query, "› ")];
            let room = inner.height.saturating_sub(1) as usize;
            let start = p.selected.saturating_sub(room.saturating_sub(1));
            for (k, &i) in p.matches.iter().enumerate().skip(start).take(room) {
                let (_, title, keys) = &p.entries[i];
                let width = inner.width as usize;
                hits.overlay_rows.push((
                    Rect::new(inner.x, inner.y + 1 + (k - start) as u16, inner.width, 1),
                    k,
                ));
                // A space always between the title and its keys: a title as long as its room
                // ran into them ("… in viewn" at 80 columns).
                let room = width.saturating_sub(keys.chars().count() + 4);
                let line = Line::from(vec![
                    Span::raw(format!(" {:<room$} ", cut(title, room))),
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
            let notes: Vec<&str> = p.note.lines().collect();
            let r = centered(area, 90, 5 + notes.len().max(1) as u16);
            let inner = open_box(frame, app, r, " Enter confirms · Esc cancels ", hits);
            let width = inner.width as usize;
            let shown;
            let input = if p.secret {
                shown = super::super::overlay::Input {
                    text: "•".repeat(p.input.text.chars().count()),
                    cursor: p.input.cursor,
                };
                &shown
            } else {
                &p.input
            };
            let mut lines = vec![
                Line::styled(cut(&p.title, width), t.muted()),
                input_line(app, input, ""),
            ];
            lines.extend(
                notes
                    .iter()
                    .map(|n| Line::styled(cut(n, width), t.fg(t.colors.info))),
            );
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Open(o) => {
            let r = centered(area, 96, area.height.saturating_sub(6).min(24));
            let inner = open_box(
                frame,
                app,
                r,
                " Open a session · type a path (Tab completes) or pick one · Enter opens ",
                hits,
            );
            let width = inner.width as usize;
            let mut lines = vec![input_line(app, &o.input, "path › ")];
            if let Some(e) = &o.error {
                lines.push(Line::styled(
                    cut(e.lines().next().unwrap_or_default(), width),
                    t.fg(t.colors.error),
                ));
                lines.push(Line::styled("(the file was not changed)", t.muted()));
            }
            if let Some(path) = &o.opening {
                lines.push(Line::styled(
                    format!("{} opening {}…", app.spinner(), path.display()),
                    t.fg(t.colors.accent),
                ));
            }
            let top = inner.y + lines.len() as u16;
            if o.input.text.is_empty() {
                if o.loading {
                    lines.push(Line::styled(
                        format!("{} reading the sessions folder…", app.spinner()),
                        t.muted(),
                    ));
                } else if o.items.is_empty() {
                    lines.push(Line::styled(
                        format!(
                            "no session files in {} and no recent ones: type a path",
                            app.paths.sessions_dir.display()
                        ),
                        t.muted(),
                    ));
                }
                for (i, item) in o.items.iter().enumerate() {
                    hits.overlay_rows
                        .push((Rect::new(inner.x, top + i as u16, inner.width, 1), i));
                    let line = Line::from(vec![
                        Span::raw(format!(
                            " {:<w$}",
                            cut(&item.label, width / 2),
                            w = width / 2
                        )),
                        Span::styled(cut(&item.detail, width / 2 - 2), t.muted()),
                    ]);
                    lines.push(if i == o.selected {
                        line.style(t.selected())
                    } else {
                        line
                    });
                }
            } else {
                if o.completions.is_empty() {
                    lines.push(Line::styled(
                        "no JSON file or folder starts so (Enter opens the path as typed)",
                        t.muted(),
                    ));
                }
                for (i, c) in o.completions.iter().enumerate() {
                    hits.overlay_rows
                        .push((Rect::new(inner.x, top + i as u16, inner.width, 1), i));
                    let line = Line::raw(format!(" {}", cut(c, width.saturating_sub(1))));
                    lines.push(if i == o.selected {
                        line.style(t.selected())
                    } else {
                        line
                    });
                }
            }
            frame.render_widget(Paragraph::new(lines), inner);
        }
        Overlay::Confirm(c) => {
            let r = centered(area, 78, 7);
            let keys = c.purpose.keys_shown();
            let inner = open_box(frame, app, r, &keys, hits);
            let lines = vec![
                Line::styled(c.title.clone(), t.bold(t.colors.warning)),
                Line::raw(c.message.clone()),
            ];
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
        }
    }
}
