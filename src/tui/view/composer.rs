//! The composer: the form (a row per field, the Kind first for BKN-DAC) or the raw JSON, the
//! completions at the cursor, and a line that says what the live check found.

use crate::protocol::Interface;
use crate::tui::action::Pane;
use crate::tui::app::{App, Layout as Hits};
use crate::tui::composer::{Composer, Mode};
use crate::tui::dialogue::DialogueState;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

const LABEL: u16 = 12;

fn check_line<'a>(app: &App, c: &Composer, width: usize) -> Line<'a> {
    let t = &app.theme;
    if let Some(m) = &c.message {
        return Line::styled(cut(m, width), t.fg(t.colors.warning));
    }
    let ch = &c.checked;
    if let Some(e) = &ch.syntax {
        return Line::styled(cut(&format!("JSON: {e}"), width), t.fg(t.colors.error));
    }
    if let Some((field, e)) = &ch.field_error {
        return Line::styled(cut(&format!("{field}: {e}"), width), t.fg(t.colors.error));
    }
    if let Some((line, e)) = ch.statements.first() {
        return Line::styled(
            cut(&format!("Steps line {}: {e}", line + 1), width),
            t.fg(t.colors.error),
        );
    }
    match ch.findings.as_slice() {
        [] => Line::styled("schema: ok", t.fg(t.colors.conforms)),
        [f, rest @ ..] => {
            let more = if rest.is_empty() {
                String::new()
            } else {
                format!(" (+{} more)", rest.len())
            };
            Line::styled(
                cut(
                    &format!(
                        "{} finding{}: {f}{more}",
                        rest.len() + 1,
                        if rest.is_empty() { "" } else { "s" }
                    ),
                    width,
                ),
                t.fg(t.colors.finding),
            )
        }
    }
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, collapsed: bool, hits: &mut Hits) {
    let t = &app.theme;
    let focused = app.focus == Pane::Composer;
    let Some(d) = app.current_dialogue() else {
        let block = super::pane_block(app, " Compose ", focused);
        frame.render_widget(block, area);
        return;
    };
    let c = &d.composer;
    let what = match d.interface {
        Interface::Dac => format!("{} · {}", d.interface.name(), c.kind.as_str()),
        Interface::Usr => format!("{} · feedback", d.interface.name()),
    };
    let right = format!(
        " next turn {} · {} send ",
        d.next_turn,
        crate::tui::action::keys_of(&crate::tui::action::Action::Send)
            .split(" / ")
            .next()
            .unwrap_or("F5")
    );
    let block = super::pane_block(app, format!(" Compose · {what} "), focused)
        .title_top(Line::styled(right, t.fg(t.colors.key_hint)).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if collapsed {
        let line = Line::from(
            [
                check_line(app, c, inner.width as usize / 2).spans,
                vec![Span::styled("   c edits · F5 sends", t.muted())],
            ]
            .concat(),
        );
        frame.render_widget(Paragraph::new(line), inner);
        return;
    }
    let footer = Rect::new(
        inner.x,
        inner.y + inner.height.saturating_sub(1),
        inner.width,
        1,
    );
    let body = Rect::new(
        inner.x,
        inner.y,
        inner.width,
        inner.height.saturating_sub(1),
    );
    match c.mode {
        Mode::Raw => {
            let mut editor = c.raw.clone();
            editor.set_style(t.fg(t.colors.foreground).bg(t.colors.input_bg));
            editor.set_cursor_line_style(Style::default());
            if !focused {
                editor.set_cursor_style(Style::default().bg(t.colors.input_bg));
            }
            frame.render_widget(&editor, body);
        }
        Mode::Form => form(frame, app, d, body, focused, hits),
    }
    let mode = match c.mode {
        Mode::Form => vec![
            Span::styled("[ Form ]", t.bold(t.colors.accent)),
            Span::styled("  Raw JSON", t.muted()),
        ],
        Mode::Raw => vec![
            Span::styled("  Form  ", t.muted()),
            Span::styled("[ Raw JSON ]", t.bold(t.colors.accent)),
        ],
    };
    let mut spans = mode;
    spans.push(Span::styled(" F2   ", t.fg(t.colors.key_hint)));
    spans.extend(check_line(app, c, (inner.width as usize).saturating_sub(28)).spans);
    frame.render_widget(Paragraph::new(Line::from(spans)), footer);
}

fn form(
    frame: &mut Frame,
    app: &App,
    d: &DialogueState,
    area: Rect,
    focused: bool,
    hits: &mut Hits,
) {
    let t = &app.theme;
    let c = &d.composer;
    let mut y = area.y;
    let bottom = area.y + area.height;
    let label = |text: &str, active: bool| -> Span<'static> {
        let style = if active {
            t.bold(t.colors.accent)
        } else {
            t.muted()
        };
        Span::styled(
            format!(
                "{:<width$}",
                cut(text, LABEL as usize - 1),
                width = LABEL as usize
            ),
            style,
        )
    };
    // Rows scroll so that the active one (and a line under it for hints) is in view.
    let heights: Vec<u16> = (d.interface == Interface::Dac)
        .then_some(1)
        .into_iter()
        .chain(c.fields.iter().map(|f| {
            if f.multiline {
                (f.editor.lines().len() as u16).clamp(2, 5)
            } else {
                1
            }
        }))
        .collect();
    let mut first = 0usize;
    while focused
        && first < c.row
        && heights[first..=c.row.min(heights.len().saturating_sub(1))]
            .iter()
            .sum::<u16>()
            + 1
            > area.height
    {
        first += 1;
    }
    let mut row = 0usize;
    if d.interface == Interface::Dac && first == 0 {
        let active = focused && c.row == 0;
        let line = Line::from(vec![
            label("Kind", active),
            Span::styled("< ", t.fg(t.colors.key_hint)),
            Span::styled(c.kind.as_str(), t.bold(t.colors.foreground)),
            Span::styled(" >", t.fg(t.colors.key_hint)),
            Span::styled(if active { "   ← → change" } else { "" }, t.muted()),
        ]);
        let r = Rect::new(area.x, y, area.width, 1);
        hits.composer_rows.push((r, 0));
        frame.render_widget(Paragraph::new(line), r);
        y += 1;
    }
    if d.interface == Interface::Dac {
        row = 1;
    }
    for (i, f) in c.fields.iter().enumerate() {
        if row + i < first {
            continue;
        }
        if y >= bottom {
            break;
        }
        let active = focused && c.row == row + i;
        let lines = f.editor.lines();
        let height = if f.multiline {
            (lines.len() as u16).clamp(2, 5)
        } else {
            1
        };
        let height = height.min(bottom - y);
        let r = Rect::new(area.x, y, area.width, height);
        hits.composer_rows.push((r, row + i));
        frame.render_widget(
            Paragraph::new(Line::from(label(&f.label, active))),
            Rect::new(r.x, r.y, LABEL, 1),
        );
        let is_steps = f.completes == crate::tui::composer::Completes::Statements;
        let gutter = if is_steps { 2 } else { 0 };
        if is_steps {
            let marks: Vec<Line> = (0..height as usize)
                .map(|k| {
                    let bad = c.checked.statements.iter().any(|(l, _)| *l == k);
                    let empty = lines.get(k).is_none_or(|l| l.trim().is_empty());
                    match (empty, bad) {
                        (true, _) => Line::raw(" "),
                        (false, true) => Line::styled("✗", t.fg(t.colors.error)),
                        (false, false) => Line::styled("✓", t.fg(t.colors.success)),
                    }
                })
                .collect();
            frame.render_widget(
                Paragraph::new(marks),
                Rect::new(r.x + LABEL, r.y, 1, height),
            );
        }
        let field_area = Rect::new(
            r.x + LABEL + gutter,
            r.y,
            r.width.saturating_sub(LABEL + gutter),
            height,
        );
        if active {
            let mut editor = f.editor.clone();
            editor.set_style(t.fg(t.colors.foreground).bg(t.colors.input_bg));
            editor.set_cursor_line_style(Style::default());
            frame.render_widget(&editor, field_area);
        } else if lines.iter().all(|l| l.is_empty()) {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    cut(&f.help, field_area.width as usize),
                    t.muted(),
                )),
                field_area,
            );
        } else {
            let shown: Vec<Line> = lines
                .iter()
                .take(height as usize)
                .map(|l| Line::raw(cut(l, field_area.width as usize)))
                .collect();
            frame.render_widget(Paragraph::new(shown), field_area);
        }
        y += height;
        // Under a statement that does not parse, a caret at the fault and what was expected.
        if active
            && is_steps
            && y < bottom
            && let Some((_, e)) = c
                .checked
                .statements
                .iter()
                .find(|(line, _)| *line == f.editor.cursor().0)
        {
            let indent = (LABEL + gutter) as usize + e.position;
            let caret = format!(
                "{:indent$}{} {}",
                "",
                "^".repeat(e.length.max(1)),
                e.message
            );
            frame.render_widget(
                Paragraph::new(Line::styled(
                    cut(&caret, area.width as usize),
                    t.fg(t.colors.error),
                )),
                Rect::new(area.x, y, area.width, 1),
            );
            y += 1;
        }
        if active
            && let Some(comp) = &c.completion
            && y < bottom
        {
            let mut spans = vec![
                Span::styled(
                    format!("{:width$}", "", width = LABEL as usize),
                    Style::default(),
                ),
                Span::styled("↳ ", t.muted()),
            ];
            for (k, item) in comp.items.iter().enumerate() {
                let style = if k == 0 {
                    t.bold(t.colors.completion)
                } else {
                    t.fg(t.colors.completion)
                };
                spans.push(Span::styled(item.clone(), style));
                spans.push(Span::raw("  "));
            }
            spans.push(Span::styled("Tab accepts the first", t.muted()));
            frame.render_widget(
                Paragraph::new(Line::from(spans)),
                Rect::new(area.x, y, area.width, 1),
            );
            y += 1;
        }
    }
    if !c.extra.is_empty() && y < bottom {
        let keys: Vec<&str> = c.extra.keys().map(String::as_str).collect();
        let line = Line::styled(
            format!(
                "{:width$}also sent: {} (F2 shows them)",
                "",
                keys.join(", "),
                width = LABEL as usize
            ),
            t.muted(),
        );
        frame.render_widget(Paragraph::new(line), Rect::new(area.x, y, area.width, 1));
    }
}
