//! The BKN-DAC tabs: the Answer as tables and lists, the Feasibility of each step, and the
//! dialogue's commitments as of the selected turn.

use super::{Content, heading};
use crate::client::turn::Reply;
use crate::protocol::dac::{CommitmentState, Overall, PaStatus};
use crate::tui::view::text::{bar, cut, wrap_window};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Lines that say why there is no Response, when there is none.
pub fn no_response<'a>(c: &Content<'a>) -> Option<Vec<Line<'a>>> {
    let t = &c.app.theme;
    match &c.view.turn.reply {
        Reply::Response(_) => None,
        Reply::ToolError(text) => {
            let mut lines = vec![Line::styled(
                "✗ The server rejected the Request (tool error, MCP-BINDING section 2)",
                t.bold(t.colors.tool_error),
            )];
            for l in text.lines() {
                lines.extend(
                    wrap_window(l, c.width.saturating_sub(2), 0, 20)
                        .into_iter()
                        .map(|w| Line::styled(format!("  {w}"), t.fg(t.colors.tool_error))),
                );
            }
            lines.push(Line::styled(
                "Enter on the transcript puts the Request in the composer to fix it.",
                t.muted(),
            ));
            Some(lines)
        }
        Reply::Error(e) => {
            let mut lines = vec![Line::styled(
                format!("✗ No reply ({:?})", e.kind).to_lowercase(),
                t.bold(t.colors.tool_error),
            )];
            // The message is often long (exit status, stderr tail): show all of it.
            lines.extend(
                wrap_window(&e.message, c.width.saturating_sub(2), 0, 20)
                    .into_iter()
                    .map(|w| Line::styled(format!("  {w}"), t.fg(t.colors.tool_error))),
            );
            if e.kind == crate::client::turn::ErrorKind::Gone {
                lines.push(Line::styled(
                    "R continues the dialogue in a new MCP session; n opens a new dialogue.",
                    t.muted(),
                ));
            }
            Some(lines)
        }
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| {
                    s.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| s.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn field(v: &Value, name: &str) -> String {
    v.get(name).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// At most this many commitments are named on the Answer's one-line summary.
const SUMMARY_CAP: usize = 40;

/// The Answer tab. A Response may hold thousands of relations or a text of megabytes, so the
/// lines are made only inside the window on screen; those above it are only counted.
pub fn answer<'a>(c: &Content<'a>) -> super::Shown<'a> {
    if let Some(lines) = no_response(c) {
        return super::window(lines, c);
    }
    let mut w = Window::new(c.skip, c.take);
    answer_into(c, &mut w);
    if w.lines.len() < c.take && c.skip > 0 {
        // Scrolled to or past the end: show the last page, whole.
        let top = super::last_page(c, w.seen);
        let mut last = Window::new(top, c.take);
        answer_into(c, &mut last);
        return super::Shown {
            lines: last.lines,
            top,
        };
    }
    super::Shown {
        lines: w.lines,
        top: c.skip,
    }
}

fn answer_into<'a>(c: &Content<'a>, w: &mut Window<'a>) {
    let t = &c.app.theme;
    let r = c.selected.response.as_ref().expect("a Response");
    let outcome = field(r, "Outcome");
    w.push(|| {
        Line::from(vec![
            Span::styled("Outcome  ", t.muted()),
            Span::styled(outcome.replace('_', " "), t.bold(t.outcome_text(&outcome))),
            Span::styled("    Sources  ", t.muted()),
            Span::raw(strings(r.get("SourcesUsed")).join(", ")),
        ])
    });
    if let Some(f) = r.get("Failure") {
        w.push(|| {
            Line::styled(
                format!(
                    "⚠ Failure: {} ({}){}",
                    field(f, "Service"),
                    field(f, "Nature"),
                    f.get("Request")
                        .and_then(Value::as_str)
                        .map(|q| format!(": {q}"))
                        .unwrap_or_default()
                ),
                t.bold(t.colors.warning),
            )
        });
    }
    let list = |v: Option<&'a Value>| -> &'a [Value] {
        v.and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    };
    // What this turn did to the commitments (the Commitments tab has the whole story),
    // wrapped over as many lines as it takes.
    let statuses = list(r.get("CommitmentStatus"));
    if !statuses.is_empty() {
        let mut spans = vec![Span::styled("Commitments  ", t.muted())];
        for (j, s) in statuses.iter().take(SUMMARY_CAP).enumerate() {
            if j > 0 {
                spans.push(Span::raw(", "));
            }
            let status = field(s, "Status");
            let color = CommitmentState::parse(&status)
                .map(|st| t.commitment(st))
                .unwrap_or(t.colors.error);
            spans.push(Span::raw(format!("{} ", field(s, "CommitmentID"))));
            spans.push(Span::styled(status, t.fg(color)));
        }
        if statuses.len() > SUMMARY_CAP {
            spans.push(Span::styled(
                format!(", +{} more", statuses.len() - SUMMARY_CAP),
                t.muted(),
            ));
        }
        for row in crate::tui::view::text::wrap_line(Line::from(spans), c.width) {
            w.push(|| row);
        }
    }
    let Some(answer) = r.get("Answer") else {
        w.push(|| Line::styled("(no Answer in this Response)", t.muted()));
        return;
    };
    let classes = list(answer.get("ObjectClasses"));
    if !classes.is_empty() {
        w.push(|| heading(c.app, "Object classes"));
        w.push(|| {
            Line::styled(
                format!("  {:<20} {:<22} {}", "Class", "Label", "Confidence"),
                t.muted(),
            )
        });
        for oc in classes {
            if w.full() {
                return;
            }
            w.push(|| {
                let conf_text = oc
                    .get("Confidence")
                    .and_then(Value::as_f64)
                    .map(|v| format!("{} {v:.2}", bar(v, 10)))
                    .unwrap_or_default();
                Line::from(vec![
                    Span::styled(
                        format!("  {:<20} ", cut(&field(oc, "Class"), 20)),
                        t.fg(t.colors.accent),
                    ),
                    Span::raw(format!("{:<22} ", cut(&field(oc, "Label"), 22))),
                    Span::styled(conf_text, t.fg(t.colors.gauge)),
                ])
            });
        }
    }
    let relations = list(answer.get("Relations"));
    if !relations.is_empty() {
        w.push(|| heading(c.app, format!("Relations ({})", relations.len())));
        for rel in relations {
            if w.full() {
                return;
            }
            w.push(|| {
                Line::from(vec![
                    Span::raw(format!("  {} ", field(rel, "Subject"))),
                    Span::styled(field(rel, "Predicate"), t.fg(t.colors.accent)),
                    Span::raw(format!(" {}", field(rel, "Object"))),
                ])
            });
        }
    }
    let affordances = list(answer.get("Affordances"));
    if !affordances.is_empty() {
        w.push(|| heading(c.app, "Affordances"));
        w.push(|| {
            Line::styled(
                format!("  {:<16} {:<16} {}", "Entity", "Class", "Action"),
                t.muted(),
            )
        });
        for a in affordances {
            if w.full() {
                return;
            }
            w.push(|| {
                Line::from(vec![
                    Span::raw(format!(
                        "  {:<16} {:<16} ",
                        cut(&field(a, "EntityID"), 16),
                        cut(&field(a, "Class"), 16)
                    )),
                    Span::styled(field(a, "Action"), t.fg(t.colors.accent)),
                ])
            });
        }
    }
    for (name, key) in [
        ("Constraints", "Constraints"),
        ("Behavioural expectations", "BehaviouralExpectations"),
    ] {
        let items = list(answer.get(key));
        if !items.is_empty() {
            w.push(|| heading(c.app, name));
            for item in items {
                if w.full() {
                    return;
                }
                let text = item
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| item.to_string());
                for (j, l) in wrap_window(&text, c.width.saturating_sub(4), 0, 8)
                    .into_iter()
                    .enumerate()
                {
                    w.push(|| Line::raw(format!("  {} {l}", if j == 0 { "•" } else { " " })));
                }
            }
        }
    }
    if let Some(text) = answer.get("Text").and_then(Value::as_str) {
        w.push(|| heading(c.app, "Text"));
        // Only the part of a long text that the window reaches is wrapped.
        let skip = w.skip.saturating_sub(w.seen);
        let take = (w.skip + w.take).saturating_sub(w.seen.max(w.skip));
        let width = c.width.saturating_sub(2);
        let shown = wrap_window(text, width, skip, take);
        if shown.is_empty() && skip > 0 {
            // Scrolled past the end of the text: count all of it, so the last page shows.
            w.seen += wrap_window(text, width, 0, usize::MAX).len();
        } else {
            w.seen += skip;
            for l in shown {
                w.push(|| Line::raw(format!("  {l}")));
            }
        }
    }
}

/// The lines of a tab that fall inside the window on screen: those before it are counted
/// (their closures never run), and nothing is made past its end.
struct Window<'a> {
    skip: usize,
    take: usize,
    /// Lines counted so far, in the window or before it.
    seen: usize,
    lines: Vec<Line<'a>>,
}

impl<'a> Window<'a> {
    fn new(skip: usize, take: usize) -> Window<'a> {
        Window {
            skip,
            take,
            seen: 0,
            lines: Vec::new(),
        }
    }

    fn push(&mut self, make: impl FnOnce() -> Line<'a>) {
        if self.seen >= self.skip && !self.full() {
            self.lines.push(make());
        }
        self.seen += 1;
    }

    /// Whether the window is filled (later lines need not be counted).
    fn full(&self) -> bool {
        self.lines.len() >= self.take
    }
}

pub fn feasibility<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    if let Some(lines) = no_response(c) {
        return lines;
    }
    let t = &c.app.theme;
    let r = c.selected.response.as_ref().expect("a Response");
    let Some(f) = r.get("Feasibility") else {
        return vec![Line::styled(
            format!(
                "no Feasibility in this Response (Kind {})",
                c.view.summary.kind
            ),
            t.muted(),
        )];
    };
    let steps = f
        .get("Steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let statuses: Vec<Option<PaStatus>> = steps
        .iter()
        .map(|s| {
            s.get("PAStatus")
                .and_then(Value::as_str)
                .and_then(PaStatus::parse)
        })
        .collect();
    let acks = statuses
        .iter()
        .filter(|s| **s == Some(PaStatus::Ack))
        .count();
    let statements: Vec<(u64, String)> = c
        .selected
        .request
        .get("ProcessActions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some((
                        crate::protocol::message::as_index(p.get("Step")?)?,
                        p.get("Statement")?.as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    // The Request's steps the server gave no PA Status for: shown, and counted.
    let answered: Vec<u64> = steps
        .iter()
        .filter_map(|s| s.get("Step").and_then(crate::protocol::message::as_index))
        .collect();
    let missing: Vec<&(u64, String)> = statements
        .iter()
        .filter(|(n, _)| !answered.contains(n))
        .collect();
    let total = steps.len() + missing.len();
    // What the steps themselves say: a server's claim never looks better than that.
    let implied = match (acks, total) {
        (_, 0) => None,
        (a, n) if a == n => Some(Overall::Feasible),
        (0, _) => Some(Overall::Infeasible),
        _ => Some(Overall::PartiallyFeasible),
    };
    let overall = f.get("Overall").and_then(Value::as_str).unwrap_or("?");
    let claimed = Overall::parse(overall);
    let contradicted = matches!((claimed, implied), (Some(c), Some(i)) if c < i);
    let overall_color = match (claimed, implied) {
        (Some(_), Some(i)) if contradicted => t.overall(i),
        (Some(o), _) => t.overall(o),
        // A value no Overall has: shown as it came, in the error colour.
        (None, _) => t.colors.error,
    };
    let mut lines = vec![Line::from(vec![
        Span::styled("Overall  ", t.muted()),
        Span::styled(
            format!(" {} ", overall.replace('_', " ").to_uppercase()),
            t.fg(t.colors.background)
                .bg(overall_color)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "   {acks} of {total} step{} Ack{}",
                if total == 1 { "" } else { "s" },
                match missing.len() {
                    0 => String::new(),
                    n => format!(", {n} not answered"),
                }
            ),
            t.muted(),
        ),
    ])];
    if contradicted && let Some(i) = implied {
        lines.push(Line::styled(
            format!(
                "⚠ the server says {}, but its steps say {}",
                overall.replace('_', " "),
                i.as_str().replace('_', " ")
            ),
            t.bold(t.colors.warning),
        ));
    }
    // Step (4) + gap (2) + Statement + gap (2) + PA Status (10) + gap (2), then Reason.
    const FIXED: usize = 20;
    let statement_width = ((c.width.saturating_sub(FIXED)) * 45 / 100).max(12);
    let reason_width = c.width.saturating_sub(statement_width + FIXED).max(10);
    lines.push(Line::styled(
        format!(
            "{:>4}  {:<statement_width$}  {:<10}  {}",
            "Step", "Statement", "PA Status", "Reason"
        ),
        t.muted(),
    ));
    for (s, status) in steps.iter().zip(&statuses) {
        let step = s.get("Step").and_then(crate::protocol::message::as_index);
        let statement = step
            .and_then(|n| statements.iter().find(|(k, _)| *k == n))
            .map(|(_, st)| st.clone())
            .unwrap_or_default();
        let color = status.map(|s| t.pa_status(s)).unwrap_or(t.colors.error);
        let reason = field(s, "Reason");
        // Both text columns wrap; the row is as tall as the taller of the two.
        let statement_lines = wrap_window(&statement, statement_width, 0, 4);
        let reason_lines = wrap_window(&reason, reason_width, 0, 6);
        let height = statement_lines.len().max(reason_lines.len()).max(1);
        for row in 0..height {
            let number = match (row, step) {
                (0, Some(n)) => n.to_string(),
                _ => String::new(),
            };
            let status_text = if row == 0 {
                field(s, "PAStatus")
            } else {
                String::new()
            };
            lines.push(Line::from(vec![
                Span::raw(format!("{number:>4}  ")),
                Span::raw(format!(
                    "{:<statement_width$}  ",
                    statement_lines
                        .get(row)
                        .map(String::as_str)
                        .unwrap_or_default()
                )),
                Span::styled(format!("{status_text:<10}"), t.bold(color)),
                Span::raw("  "),
                Span::raw(reason_lines.get(row).cloned().unwrap_or_default()),
            ]));
        }
    }
    for (n, statement) in missing {
        for (row, text) in wrap_window(statement, statement_width, 0, 4)
            .iter()
            .enumerate()
        {
            let (number, status, reason) = match row {
                0 => (
                    n.to_string(),
                    "missing",
                    "the server gave no PA Status for this step",
                ),
                _ => (String::new(), "", ""),
            };
            lines.push(Line::from(vec![
                Span::raw(format!("{number:>4}  ")),
                Span::raw(format!("{text:<statement_width$}  ")),
                Span::styled(format!("{status:<10}"), t.bold(t.colors.error)),
                Span::raw("  "),
                Span::styled(reason, t.fg(t.colors.error)),
            ]));
        }
    }
    lines
}

pub fn commitments<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    use crate::tui::dialogue::Listed;
    let t = &c.app.theme;
    let view = c.dialogue.commitments_at(c.selected.index);
    let turn_label = |row: usize| {
        c.dialogue
            .turns
            .get(row)
            .and_then(|v| v.summary.turn_index)
            .map(|n| format!("TurnIndex {n}"))
            .unwrap_or_else(|| format!("row {row}"))
    };
    let here = turn_label(c.selected.index);
    let mut lines = Vec::new();
    // What this turn's own Response said, before the table (wrapped: never cut).
    let mut note = |text: String, style| {
        lines.extend(super::super::text::wrap_line(
            Line::styled(text, style),
            c.width,
        ));
    };
    match &view.selected {
        Listed::LeftOut if !view.rows.is_empty() => note(
            format!(
                "⚠ this Response leaves CommitmentStatus out; shown: what {} said",
                view.from
                    .map(|f| format!("the Response of {}", turn_label(f)))
                    .unwrap_or_else(|| "no Response".into())
            ),
            t.fg(t.colors.warning),
        ),
        Listed::NoResponse => note(
            "no Response in this turn: nothing was said of the commitments".into(),
            t.muted(),
        ),
        Listed::Statuses(_) if !view.missing.is_empty() => note(
            format!(
                "⚠ this Response does not list {} (the dialogue has {})",
                view.missing.join(", "),
                if view.missing.len() == 1 {
                    "it"
                } else {
                    "them"
                }
            ),
            t.fg(t.colors.warning),
        ),
        _ => {}
    }
    if view.session_start > 0 {
        note(
            format!(
                "a new MCP session began at {}: the server keeps nothing from before it",
                turn_label(view.session_start)
            ),
            t.muted(),
        );
    }
    if view.rows.is_empty() {
        lines.push(Line::styled(
            format!("no commitment in this dialogue as of {here}"),
            t.muted(),
        ));
        return lines;
    }
    let count = |s: CommitmentState| view.rows.iter().filter(|r| r.state == Some(s)).count();
    let n = view.rows.len();
    lines.push(Line::from(vec![
        Span::raw(format!(
            "{n} commitment{} as of {here}:  ",
            if n == 1 { "" } else { "s" }
        )),
        Span::styled(
            format!("{} retained", count(CommitmentState::Retained)),
            t.fg(t.commitment(CommitmentState::Retained)),
        ),
        Span::raw(" · "),
        Span::styled(
            format!("{} released", count(CommitmentState::Released)),
            t.fg(t.commitment(CommitmentState::Released)),
        ),
        Span::raw(" · "),
        Span::styled(
            format!("{} conflicting", count(CommitmentState::Conflicting)),
            t.fg(t.commitment(CommitmentState::Conflicting)),
        ),
    ]));
    lines.push(Line::styled(
        format!(
            "{:<8} {:<12} {:>6}  {}",
            "ID", "Status", "Since", "Statement"
        ),
        t.muted(),
    ));
    for r in &view.rows {
        let (label, style) = match r.state {
            Some(CommitmentState::Conflicting) => (
                "CONFLICTING",
                t.bold(t.commitment(CommitmentState::Conflicting)),
            ),
            Some(CommitmentState::Retained) => {
                ("retained", t.fg(t.commitment(CommitmentState::Retained)))
            }
            Some(CommitmentState::Released) => {
                ("released", t.fg(t.commitment(CommitmentState::Released)))
            }
            None => ("not listed", t.fg(t.colors.warning)),
        };
        let since = c
            .dialogue
            .turns
            .get(r.since)
            .and_then(|v| v.summary.turn_index)
            .map(|n| format!("t{n}"))
            .unwrap_or_default();
        let statement_style = if r.state == Some(CommitmentState::Released) {
            t.muted().add_modifier(Modifier::CROSSED_OUT)
        } else {
            t.fg(t.colors.foreground)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<8} ", cut(&r.id, 8)), t.fg(t.colors.accent)),
            Span::styled(format!("{label:<12} "), style),
            Span::styled(format!("{since:>6}  "), t.muted()),
            Span::styled(r.statement.clone().unwrap_or_default(), statement_style),
        ]));
        if let (Some(CommitmentState::Conflicting), Some(reason)) = (r.state, &r.reason) {
            // The arrow marks where the reason starts; its continuation lines align under it.
            for (j, l) in wrap_window(reason, c.width.saturating_sub(32), 0, 4)
                .into_iter()
                .enumerate()
            {
                let mark = if j == 0 { "↳ " } else { "  " };
                lines.push(Line::styled(
                    format!("{:30}{mark}{l}", ""),
                    t.fg(t.commitment(CommitmentState::Conflicting)),
                ));
            }
        }
    }
    lines
}
