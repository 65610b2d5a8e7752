//! The transcript: one row per turn (TurnIndex, Kind, Outcome, what it was about, latency,
//! conformance), only the rows on screen drawn, and the pending turn with its spinner and
//! elapsed time.

use crate::client::turn::Reply;
use crate::protocol::lenient::Field;
use crate::protocol::lenient::dac::StatusName;
use crate::tui::action::{Action, Pane};
use crate::tui::app::App;
use crate::tui::dialogue::{DialogueState, Pending, Status, TurnView};
use crate::tui::hits::Hits;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

/// The pane's title, cut to fit its border.
/// What the server is, as far as is known: its role once it answered (or was recorded);
/// until then what was asked for, its command line or URL (a server that never started
/// is no "Domain Access").
fn role(app: &App, d: &DialogueState) -> String {
    let unknown =
        matches!(d.status, Status::Connecting | Status::Failed(_)) && d.link.dialog_id().is_none();
    match app.workspace().server(d.server) {
        Some(s) if unknown && s.summary.is_none() => match &s.spec.transport {
            crate::client::spec::TransportSpec::Http(h) => crate::client::spec::shown_url(&h.url),
            _ => s.spec.location(),
        },
        _ => d.interface.server_role().to_owned(),
    }
}

pub fn title<'a>(app: &App, d: &DialogueState, width: usize) -> Line<'a> {
    let t = app.theme();
    let role = role(app, d);
    // The DialogID is known once the dialogue is open (or was recorded).
    let id = d
        .link
        .dialog_id()
        .map(|id| format!("{} · ", super::text::short_id(id)))
        .unwrap_or_default();
    let (state, color) = match &d.status {
        Status::Open => ("open", t.colors.connected),
        Status::Connecting => ("connecting", t.colors.connecting),
        Status::Recorded => ("recorded", t.colors.recorded),
        Status::Live => ("◉ live", t.colors.connected),
        Status::Unfollowed(how) => (how.said(), t.colors.recorded),
        Status::Failed(_) => ("failed", t.colors.failed),
        Status::Closed(_) => ("closed", t.colors.failed),
    };
    let index = app
        .workspace()
        .dialogues()
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
    let t = app.theme();
    let focused = app.focus() == Pane::Transcript;
    let Some(d) = app.current_dialogue() else {
        no_dialogue(frame, app, area, focused);
        return;
    };
    let block = super::pane_block(app, title(app, d, area.width as usize), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if let Status::Failed(e) | Status::Closed(e) = &d.status
        && d.transcript.is_empty()
    {
        failed(frame, app, d, e, inner);
        return;
    }
    let header_height = 1u16;
    let pending_rows = u16::from(d.link.pending().is_some());
    let body = inner.height.saturating_sub(header_height + pending_rows) as usize;
    let top = first_row(d, body);
    hits.transcript_rows = Rect::new(inner.x, inner.y + header_height, inner.width, body as u16);
    hits.transcript_top = top;
    let columns = Columns::for_width(inner.width);
    let rows: Vec<Row> = d
        .transcript
        .turns()
        .iter()
        .skip(top)
        .take(body)
        .enumerate()
        .map(|(offset, view)| {
            let selected = Some(top + offset) == d.transcript.selected();
            let row = row(app, view, selected, &columns);
            match selected {
                true if focused => row.style(t.selected()),
                true => row.style(
                    Style::default()
                        .bg(t.colors.selection_bg)
                        .fg(t.colors.selection_fg),
                ),
                false => row,
            }
        })
        .collect();
    let table_area = Rect::new(
        inner.x,
        inner.y,
        inner.width,
        inner.height.saturating_sub(pending_rows),
    );
    table(frame, app, d, rows, &columns, table_area);
    if let Some(p) = d.link.pending() {
        let y = inner.y + inner.height.saturating_sub(1);
        frame.render_widget(
            Paragraph::new(Line::styled(pending_text(app, d, p), t.fg(t.colors.accent))),
            Rect::new(inner.x + 1, y, inner.width.saturating_sub(1), 1),
        );
    }
}

/// The table of turns (or, with none yet, its header and a hint).
fn table(
    frame: &mut Frame,
    app: &App,
    d: &DialogueState,
    rows: Vec<Row>,
    columns: &Columns,
    area: Rect,
) {
    let t = app.theme();
    let widths = [
        Constraint::Length(6),
        Constraint::Length(columns.kind),
        Constraint::Length(columns.outcome),
        Constraint::Min(4),
        Constraint::Length(7),
        Constraint::Length(columns.check),
    ];
    let header = Row::new(vec![
        "  Turn", "Kind", "Outcome", "About", "     ms", "Check",
    ])
    .style(t.muted());
    if d.transcript.is_empty() && d.link.pending().is_none() {
        frame.render_widget(Table::new(Vec::<Row>::new(), widths).header(header), area);
        // Under the header, inside the pane, and whole: a pane too small for the hint shows
        // none (it was drawn past the pane into the composer, cut to a fragment).
        let hint = no_turns_hint(app, d);
        let room = area.width.saturating_sub(2);
        if area.height >= 2 && hint.chars().count() <= room as usize {
            frame.render_widget(
                Paragraph::new(Line::styled(hint, t.muted())),
                Rect::new(area.x + 2, area.y + 1, room, 1),
            );
        }
    } else {
        frame.render_widget(
            Table::new(rows, widths)
                .header(header)
                .style(t.base())
                .column_spacing(1),
            area,
        );
    }
}

/// The first row on screen of `body` rows: the scroll, moved so the selected row shows.
fn first_row(d: &DialogueState, body: usize) -> usize {
    let mut top = d
        .transcript
        .scroll
        .min(d.transcript.len().saturating_sub(body.max(1)));
    if let Some(s) = d.transcript.selected() {
        if s < top {
            top = s;
        } else if body > 0 && s >= top + body {
            top = s + 1 - body;
        }
    }
    top
}

fn no_dialogue(frame: &mut Frame, app: &App, area: Rect, focused: bool) {
    let block = super::pane_block(app, " Transcript ", focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let hint = Line::styled(app.no_dialogue_hint(), app.theme().muted());
    frame.render_widget(Paragraph::new(hint), inner);
}

/// A dialogue that failed (or closed) before any turn: why, and what to do.
/// A dialogue that failed: the failure, the lines after it (what to do), and the keys that
/// go on from it.
fn failed(frame: &mut Frame, app: &App, d: &DialogueState, error: &str, inner: Rect) {
    frame.render_widget(
        Paragraph::new(failure_lines(app, d, error)).wrap(ratatui::widgets::Wrap { trim: false }),
        inner,
    );
}

/// A dialogue's failure, whole (its first line in the error colour), and what to do: the
/// transcript shows its first lines, the detail pane below all of them.
pub(super) fn failure_lines<'a>(app: &App, d: &DialogueState, error: &str) -> Vec<Line<'a>> {
    let t = app.theme();
    // A server reached that has no BKN tool: reconnecting changes nothing; the error
    // already says what can be done with it (its tools, a call, its resources), and the
    // last line where a BKN dialogue can be had instead.
    let no_bkn_tool = app
        .workspace()
        .server(d.server)
        .and_then(|s| s.summary.as_ref())
        .is_some_and(|s| s.bkn_tools.is_empty());
    let mut lines: Vec<Line> = error
        .lines()
        .enumerate()
        .map(|(n, l)| {
            let colour = if n == 0 {
                t.colors.error
            } else {
                t.colors.foreground
            };
            Line::styled(l.to_owned(), t.fg(colour))
        })
        .collect();
    if no_bkn_tool {
        // The other way on: a server that has a BKN tool, added or already there.
        let others = app.workspace().dialogues().len() > 1;
        lines.push(Line::styled(
            format!(
                "For a BKN dialogue, use another server: {} in the servers pane (or {} \"Add server\") adds one{}",
                app.keymap().first_key(&Action::AddServer),
                app.keymap().first_key(&Action::Palette),
                if others {
                    format!(
                        "; {} shows the next dialogue",
                        app.keymap().first_key(&Action::NextDialogue)
                    )
                } else {
                    String::new()
                }
            ),
            t.muted(),
        ));
    } else {
        lines.push(Line::styled(
            format!(
                "{} reconnects; {} opens another dialogue",
                app.keymap().first_key(&Action::Reconnect),
                app.keymap().first_key(&Action::NewDialogue)
            ),
            t.muted(),
        ));
    }
    lines
}

fn no_turns_hint(app: &App, d: &DialogueState) -> String {
    match d.status {
        Status::Connecting => "connecting…".to_owned(),
        Status::Recorded => "a recorded dialogue with no turns".to_owned(),
        Status::Live => "watching: its turns appear as they pass the proxy".to_owned(),
        Status::Unfollowed(how) => format!("{}: no turn was recorded", how.said()),
        _ => format!(
            "no turns yet: compose a Request below and press {}",
            app.keymap().first_key(&Action::Send)
        ),
    }
}

/// The widths of the columns that do not stretch. The longest Kind,
/// behavioural_expectations, is 24 characters; narrower panes cut it.
struct Columns {
    kind: u16,
    outcome: u16,
    check: u16,
    about: usize,
}

impl Columns {
    fn for_width(width: u16) -> Columns {
        let (kind, outcome, check): (u16, u16, u16) = match width {
            110.. => (24, 20, 16),
            80..110 => (18, 18, 11),
            _ => (12, 14, 9),
        };
        Columns {
            kind,
            outcome,
            check,
            about: width.saturating_sub(7 + kind + outcome + 8 + check + 5) as usize,
        }
    }
}

/// One turn's row: TurnIndex, Kind, Outcome (and Overall), About, latency, Check.
fn row<'a>(app: &App, view: &TurnView, selected: bool, columns: &Columns) -> Row<'a> {
    let t = app.theme();
    let c = &t.colors;
    let turn_index = view
        .summary
        .turn_index
        .map(|n| n.to_string())
        .unwrap_or_else(|| "-".into());
    let marker = if selected {
        "›"
    } else if view.new_session() {
        "⟲"
    } else {
        " "
    };
    let outcome = view.outcome_label();
    let outcome_color = match (&view.turn.reply, view.exchange.outcome()) {
        (Reply::Response(_), Some(Field::Known(o))) => t.outcome(*o),
        (Reply::Response(_), _) => c.error,
        _ => c.tool_error,
    };
    let (overall, overall_style) = overall_label(app, view);
    let outcome_width = columns.outcome as usize;
    Row::new(vec![
        Cell::from(Line::from(vec![
            Span::styled(marker, t.fg(c.accent)),
            Span::raw(format!("{turn_index:>5}")),
        ])),
        Cell::from(cut(view.summary.kind.as_str(), columns.kind as usize)),
        Cell::from(Line::from(vec![
            Span::styled(cut(&outcome, outcome_width), t.fg(outcome_color)),
            Span::styled(
                cut(
                    &overall,
                    outcome_width.saturating_sub(outcome.chars().count()),
                ),
                overall_style,
            ),
        ])),
        Cell::from(about(app, view, columns.about)),
        Cell::from(Line::from(format!("{:.1}", view.turn.latency_ms)).right_aligned()),
        Cell::from(check(app, view)),
    ])
}

/// The Check column: the findings (or why there was nothing to check), a scenario step's
/// verdict first, and a replay's.
fn check<'a>(app: &App, view: &TurnView) -> Line<'a> {
    let t = app.theme();
    let c = &t.colors;
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
    Line::from(vec![check, replay])
}

/// The pending turn's line: its spinner, elapsed time, progress, and how to cancel it.
fn pending_text(app: &App, d: &DialogueState, p: &Pending) -> String {
    let elapsed = app.now().saturating_duration_since(p.started).as_secs_f64();
    let turn = p
        .request
        .as_ref()
        .and_then(|r| r.get("TurnIndex"))
        .and_then(crate::protocol::message::as_index)
        .unwrap_or(d.link.next_turn());
    let mut text = format!("{} turn {turn} pending {elapsed:.1} s", app.spinner());
    if let Some((done, total)) = p.progress {
        text.push_str(&match total {
            Some(total) => format!(" · progress {done}/{total}"),
            None => format!(" · progress {done}"),
        });
    }
    if p.cancelling {
        text.push_str(" · cancelling…");
    } else {
        text.push_str(&format!(
            " · {} cancels",
            app.keymap().first_key(&crate::tui::action::Action::Cancel)
        ));
    }
    // Last, so that a long status message does not push the key off the line.
    if let Some(task) = &p.task {
        text.push_str(&format!(" · {task}"));
    }
    text
}

/// The Overall after the Outcome: " · feasible". A claim its own steps contradict is marked
/// "⚠" (in the warning colour too), so that it never reads as plainly feasible.
fn overall_label(app: &App, view: &TurnView) -> (String, Style) {
    let t = app.theme();
    let Some(verdict) = &view.verdict else {
        return (String::new(), t.muted());
    };
    let claimed = match &verdict.claimed {
        Field::Absent => return (String::new(), t.muted()),
        Field::Known(o) => o.as_str().replace('_', " "),
        other => format!("{}?", other.text()),
    };
    if verdict.contradicted() {
        (format!(" · ⚠ {claimed}"), t.bold(t.colors.warning))
    } else {
        (format!(" · {claimed}"), t.muted())
    }
}

/// What a turn is about; for a feasibility Response, its steps counted by PA Status, each
/// count in its status's colour, as many as fit, then how many more ("+2").
fn about<'a>(app: &App, view: &TurnView, width: usize) -> Line<'a> {
    let t = app.theme();
    let Some(verdict) = &view.verdict else {
        return Line::styled(cut(&view.summary.about, width), t.muted());
    };
    let mut parts: Vec<(String, Style)> = verdict
        .counts
        .iter()
        .map(|(name, n)| {
            let color = match name {
                StatusName::Known(s) => t.pa_status(*s),
                _ => t.colors.error,
            };
            (format!("{n} {name}"), t.fg(color))
        })
        .collect();
    if !verdict.unanswered.is_empty() {
        parts.push((
            format!("{} not answered", verdict.unanswered.len()),
            t.fg(t.colors.error),
        ));
    }
    if parts.is_empty() {
        return Line::styled(cut(&verdict.counts_text(), width), t.muted());
    }
    let len = |s: &str| s.chars().count();
    let mut spans = Vec::new();
    let mut used = 0;
    for (j, (text, style)) in parts.iter().enumerate() {
        let rest = parts.len() - j - 1;
        let more = if rest > 0 {
            len(&format!(" +{rest}"))
        } else {
            0
        };
        let sep = if j > 0 { 3 } else { 0 };
        if used + sep + len(text) + more > width {
            let left = parts.len() - j;
            let tail = if j == 0 {
                cut(text, width)
            } else {
                format!(" +{left}")
            };
            spans.push(Span::styled(
                cut(&tail, width.saturating_sub(used)),
                t.muted(),
            ));
            break;
        }
        if j > 0 {
            spans.push(Span::styled(" · ", t.muted()));
        }
        spans.push(Span::styled(text.clone(), *style));
        used += sep + len(text);
    }
    Line::from(spans)
}
