//! The transcript: one row per turn (TurnIndex, Kind, Outcome, what it was about, latency,
//! conformance), only the rows on screen drawn, and the pending turn with its spinner and
//! elapsed time.

use crate::client::turn::{Reply, Shown};
use crate::tui::action::{Action, Pane};
use crate::tui::app::App;
use crate::tui::dialogue::{DialogueState, Status};
use crate::tui::hits::Hits;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

/// The pane's title, cut to fit its border.
pub fn title<'a>(app: &App, d: &DialogueState, width: usize) -> Line<'a> {
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
        Status::Live => ("◉ live", t.colors.connected),
        Status::Failed(_) => ("failed", t.colors.failed),
        Status::Closed(_) => ("closed", t.colors.failed),
    };
    let index = app
        .dialogues
        .values()
        .position(|o| o.key == d.key)
        .map(|i| i + 1)
        .unwrap_or(0);
    // The name gives way first, then the role: the state always shows.
    let room = width.saturating_sub(state.len() + 6);
    let len = |s: &str| s.chars().count();
    let prefix = format!(" Dialogue {index} · ");
    let mut rest = format!(" · {role} · {id}");
    if len(&prefix) + len(&rest) + 12 > room {
        rest = format!(" · {id}");
    }
    let name_room = room.saturating_sub(len(&prefix) + len(&rest)).max(4);
    let head = format!("{prefix}{}{rest}", cut(&d.name, name_room));
    Line::from(vec![
        Span::raw(cut(&head, room)),
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
        let hint = Line::styled(
            format!(
                "no dialogue open: {} opens one",
                app.keymap.first_key(&Action::NewDialogue)
            ),
            t.muted(),
        );
        frame.render_widget(Paragraph::new(hint), inner);
        return;
    };
    let block = super::pane_block(app, title(app, d, area.width as usize), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if let Status::Failed(e) | Status::Closed(e) = &d.status
        && d.turns.is_empty()
    {
        // A server reached that has no BKN tool: reconnecting changes nothing, and the error
        // already says what can be done with it (its tools, a call, its resources).
        let no_bkn_tool = app
            .servers
            .get(d.server)
            .and_then(|s| s.summary.as_ref())
            .is_some_and(|s| s.bkn_tools.is_empty());
        let mut lines: Vec<Line> = e
            .lines()
            .enumerate()
            .map(|(n, l)| {
                // The first line is the failure; the lines after it, what to do.
                Line::styled(
                    l.to_owned(),
                    if n == 0 {
                        t.fg(c.error)
                    } else {
                        t.fg(c.foreground)
                    },
                )
            })
            .collect();
        if !no_bkn_tool {
            lines.push(Line::styled(
                format!(
                    "{} reconnects; {} opens another dialogue",
                    app.keymap.first_key(&Action::Reconnect),
                    app.keymap.first_key(&Action::NewDialogue)
                ),
                t.muted(),
            ));
        }
        frame.render_widget(
            Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    let header_height = 1u16;
    let pending_rows = u16::from(d.pending.is_some());
    let body = inner.height.saturating_sub(header_height + pending_rows) as usize;
    // The window of rows on screen: the scroll, moved so the selected row shows.
    let mut top = d.scroll.min(d.turns.len().saturating_sub(body.max(1)));
    if let Some(s) = d.selected {
        if s < top {
            top = s;
        } else if body > 0 && s >= top + body {
            top = s + 1 - body;
        }
    }
    hits.transcript_rows = Rect::new(inner.x, inner.y + header_height, inner.width, body as u16);
    hits.transcript_top = top;
    // The longest Kind, behavioural_expectations, is 24 characters; narrower panes cut it.
    let (kind_width, outcome_width, check_width): (u16, u16, u16) = match inner.width {
        110.. => (24, 20, 16),
        80..110 => (18, 18, 11),
        _ => (12, 14, 9),
    };
    let about_width = inner
        .width
        .saturating_sub(7 + kind_width + outcome_width + 8 + check_width + 5)
        as usize;
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
            } else if view.new_session() {
                "⟲"
            } else {
                " "
            };
            let outcome = view.outcome_label();
            let outcome_color = match (&view.turn.reply, &view.summary.outcome) {
                (Reply::Response(_), Some(Shown::Known(o))) => t.outcome(*o),
                (Reply::Response(_), _) => c.error,
                _ => c.tool_error,
            };
            let overall = match &view.summary.overall {
                Some(Shown::Known(o)) => format!(" · {}", o.as_str().replace('_', " ")),
                Some(Shown::Other(o)) => format!(" · {o}?"),
                None => String::new(),
            };
            let check = match view.turn.findings.len() {
                0 if matches!(view.turn.reply, Reply::ToolError(_)) => {
                    Span::styled("rejected", t.fg(c.tool_error))
                }
                0 if matches!(view.turn.reply, Reply::Error(_)) => {
                    Span::styled("no reply", t.fg(c.tool_error))
                }
                0 => Span::styled("ok", t.fg(c.conforms)),
                1 => Span::styled("1 finding", t.fg(c.finding)),
                n => Span::styled(format!("{n} findings"), t.fg(c.finding)),
            };
            // A scenario step: its verdict first.
            let check = match &view.expect {
                Some(e) if e.not_run.is_some() => Span::styled("✗ not run", t.fg(c.error)),
                Some(e) if !e.failures.is_empty() => {
                    Span::styled(format!("✗ {} expect", e.failures.len()), t.fg(c.error))
                }
                Some(_) => Span::styled(format!("✓ {}", check.content), check.style),
                None => check,
            };
            let replay = match &view.replay {
                Some(r) if r.differences.is_empty() => Span::styled(" =", t.fg(c.success)),
                Some(r) => Span::styled(format!(" ≠{}", r.differences.len()), t.fg(c.warning)),
                None => Span::raw(""),
            };
            let row = Row::new(vec![
                Cell::from(Line::from(vec![
                    Span::styled(marker, t.fg(c.accent)),
                    Span::raw(format!("{turn_index:>5}")),
                ])),
                Cell::from(cut(view.summary.kind.as_str(), kind_width as usize)),
                Cell::from(Line::from(vec![
                    Span::styled(cut(&outcome, outcome_width as usize), t.fg(outcome_color)),
                    Span::styled(
                        cut(
                            &overall,
                            (outcome_width as usize).saturating_sub(outcome.chars().count()),
                        ),
                        t.muted(),
                    ),
                ])),
                Cell::from(Line::styled(
                    cut(&view.summary.about, about_width),
                    t.muted(),
                )),
                Cell::from(Line::from(format!("{:.1}", view.turn.latency_ms)).right_aligned()),
                Cell::from(Line::from(vec![check, replay])),
            ]);
            if Some(i) == d.selected {
                row.style(if focused {
                    t.selected()
                } else {
                    Style::default().bg(c.selection_bg).fg(c.selection_fg)
                })
            } else {
                row
            }
        })
        .collect();
    let widths = [
        Constraint::Length(6),
        Constraint::Length(kind_width),
        Constraint::Length(outcome_width),
        Constraint::Min(4),
        Constraint::Length(7),
        Constraint::Length(check_width),
    ];
    let header = Row::new(vec![
        "  Turn", "Kind", "Outcome", "About", "     ms", "Check",
    ])
    .style(t.muted());
    let table_area = Rect::new(
        inner.x,
        inner.y,
        inner.width,
        inner.height.saturating_sub(pending_rows),
    );
    if d.turns.is_empty() && d.pending.is_none() {
        let hint = match d.status {
            Status::Connecting => "connecting…".to_owned(),
            Status::Recorded => "a recorded dialogue with no turns".to_owned(),
            Status::Live => "watching: its turns appear as they pass the proxy".to_owned(),
            _ => format!(
                "no turns yet: compose a Request below and press {}",
                app.keymap.first_key(&Action::Send)
            ),
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
            .and_then(crate::protocol::message::as_index)
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
        // Last, so that a long status message does not push the key off the line.
        if let Some(task) = &p.task {
            text.push_str(&format!(" · {task}"));
        }
        let y = inner.y + inner.height.saturating_sub(1);
        frame.render_widget(
            Paragraph::new(Line::styled(text, t.fg(c.accent))),
            Rect::new(inner.x + 1, y, inner.width.saturating_sub(1), 1),
        );
    }
}
