//! The transcript: one row per turn (TurnIndex, Kind, Outcome, latency, conformance), only the
//! rows on screen drawn, and the pending turn with its spinner and elapsed time.

use crate::client::turn::Reply;
use crate::tui::action::Pane;
use crate::tui::app::{App, Layout as Hits};
use crate::tui::dialogue::{DialogueState, Status};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

pub fn title<'a>(app: &App, d: &DialogueState) -> Line<'a> {
    let t = &app.theme;
    let role = d.interface.server_role();
    // The DialogID is known once the dialogue is open (or was recorded).
    let id = d
        .dialog_id
        .as_deref()
        .map(|id| format!("{} · ", super::text::short_id(id)))
        .unwrap_or_default();
    let (state, color) = match &d.status {
        Status::Open => ("open", t.colors.connected),
        Status::Connecting => ("connecting", t.colors.connecting),
        Status::Recorded => ("recorded", t.colors.recorded),
        Status::Failed(_) => ("failed", t.colors.failed),
        Status::Closed(_) => ("closed", t.colors.failed),
    };
    let index = app
        .dialogues
        .iter()
        .position(|o| o.key == d.key)
        .map(|i| i + 1)
        .unwrap_or(0);
    Line::from(vec![
        Span::raw(format!(" Dialogue {index} · {} · {role} · {id}", d.name)),
        Span::styled(state, t.fg(color)),
        Span::raw(" "),
    ])
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = &app.theme;
    let c = &t.colors;
    let focused = app.focus == Pane::Transcript;
    let Some(d) = app.current_dialogue() else {
        let block = super::pane_block(app, " Transcript ", focused);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let hint = Line::styled("no dialogue open: select a server and press n", t.muted());
        frame.render_widget(Paragraph::new(hint), inner);
        return;
    };
    let block = super::pane_block(app, title(app, d), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if let Status::Failed(e) | Status::Closed(e) = &d.status
        && d.turns.is_empty()
    {
        let lines = vec![
            Line::styled(e.clone(), t.fg(c.error)),
            Line::styled("R reconnects; n opens another dialogue", t.muted()),
        ];
        frame.render_widget(
            Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    let header_height = 1u16;
    let pending_rows = u16::from(d.pending.is_some());
    let body = inner.height.saturating_sub(header_height + pending_rows) as usize;
    hits.transcript_rows = Rect::new(inner.x, inner.y + header_height, inner.width, body as u16);
    // The window of rows on screen: the scroll, moved so the selected row shows.
    let mut top = d.scroll.min(d.turns.len().saturating_sub(body.max(1)));
    if let Some(s) = d.selected {
        if s < top {
            top = s;
        } else if body > 0 && s >= top + body {
            top = s + 1 - body;
        }
    }
    // The longest Kind, behavioural_expectations, is 24 characters; narrow screens cut it.
    let narrow = inner.width < 90;
    let kind_width: u16 = if narrow { 16 } else { 24 };
    let rows: Vec<Row> = d.turns[top..(top + body).min(d.turns.len())]
        .iter()
        .enumerate()
        .map(|(offset, view)| {
            let i = top + offset;
            let turn_index = view
                .summary
                .turn_index
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into());
            let marker = if Some(i) == d.selected {
                "›"
            } else if view.new_session {
                "⟲"
            } else {
                " "
            };
            let outcome = view.outcome_label();
            let outcome_color = match &view.turn.reply {
                Reply::Response(_) => {
                    t.outcome(view.summary.outcome.as_deref().unwrap_or_default())
                }
                _ => c.tool_error,
            };
            let overall = view
                .summary
                .overall
                .as_deref()
                .map(|o| format!(" · {}", o.replace('_', " ")))
                .unwrap_or_default();
            let check = match view.turn.findings.len() {
                0 if matches!(view.turn.reply, Reply::ToolError(_)) => {
                    Span::styled("request rejected", t.fg(c.tool_error))
                }
                0 if matches!(view.turn.reply, Reply::Error(_)) => {
                    Span::styled("no reply", t.fg(c.tool_error))
                }
                0 => Span::styled("ok", t.fg(c.conforms)),
                1 => Span::styled("1 finding", t.fg(c.finding)),
                n => Span::styled(format!("{n} findings"), t.fg(c.finding)),
            };
            let replay = match &view.replay {
                Some(r) if r.differences.is_empty() => Span::styled(" = replay", t.fg(c.success)),
                Some(r) => {
                    Span::styled(format!(" ≠ {} diff", r.differences.len()), t.fg(c.warning))
                }
                None => Span::raw(""),
            };
            let row = Row::new(vec![
                Cell::from(Line::from(vec![
                    Span::styled(marker, t.fg(c.accent)),
                    Span::raw(format!("{turn_index:>5}")),
                ])),
                Cell::from(super::text::cut(&view.summary.kind, kind_width as usize)),
                Cell::from(Line::from(vec![
                    Span::styled(outcome, t.fg(outcome_color)),
                    Span::styled(overall, t.muted()),
                ])),
                Cell::from(Line::from(format!("{:.1}", view.turn.latency_ms)).right_aligned()),
                Cell::from(Line::from(vec![check, replay])),
            ]);
            if Some(i) == d.selected {
                row.style(if focused {
                    t.selected()
                } else {
                    Style::default().bg(c.selection_bg)
                })
            } else {
                row
            }
        })
        .collect();
    let widths = [
        Constraint::Length(7),
        Constraint::Length(kind_width),
        Constraint::Min(12),
        Constraint::Length(8),
        Constraint::Length(if narrow { 12 } else { 18 }),
    ];
    let header = Row::new(vec!["  Turn", "Kind", "Outcome", "ms", "Check"]).style(t.muted());
    let table_area = Rect::new(
        inner.x,
        inner.y,
        inner.width,
        inner.height.saturating_sub(pending_rows),
    );
    if d.turns.is_empty() && d.pending.is_none() {
        let hint = match d.status {
            Status::Connecting => "connecting…",
            Status::Recorded => "a recorded dialogue with no turns",
            _ => "no turns yet: compose a Request below and press F5",
        };
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths).header(header),
            table_area,
        );
        frame.render_widget(
            Paragraph::new(Line::styled(hint, t.muted())),
            Rect::new(inner.x + 2, inner.y + 1, inner.width.saturating_sub(2), 1),
        );
    } else {
        frame.render_widget(
            Table::new(rows, widths)
                .header(header)
                .style(t.base())
                .column_spacing(1),
            table_area,
        );
    }
    if let Some(p) = &d.pending {
        let elapsed = app.now.saturating_duration_since(p.started).as_secs_f64();
        let turn = p
            .request
            .as_ref()
            .and_then(|r| r.get("TurnIndex"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(d.next_turn);
        let mut text = format!("{} turn {turn} pending {elapsed:.1} s", app.spinner());
        if let Some((done, total)) = p.progress {
            text.push_str(&match total {
                Some(total) => format!(" · progress {done}/{total}"),
                None => format!(" · progress {done}"),
            });
        }
        text.push_str(if p.cancelling {
            " · cancelling…"
        } else {
            " · Esc cancels"
        });
        let y = inner.y + inner.height.saturating_sub(1);
        frame.render_widget(
            Paragraph::new(Line::styled(text, t.fg(c.accent))),
            Rect::new(inner.x + 1, y, inner.width.saturating_sub(1), 1),
        );
    }
}
