//! The BKN-DAC tabs: the Answer as tables and lists, the Feasibility of each step, and the
//! dialogue's commitments as of the selected turn.

use super::{Content, heading};
use crate::client::turn::Reply;
use crate::protocol::dac::{CommitmentState, PaStatus};
use crate::protocol::lenient::dac::{
    AffordanceView, AnswerView, DacRequestView, DacResponseView, ObjectClassView, RelationView,
    Verdict,
};
use crate::protocol::lenient::{Exchange, Field, List};
use crate::tui::dialogue::{CommitmentRow, CommitmentsView, Listed};
use crate::tui::view::text::{bar, cut, wrap_capped, wrap_window};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use strum::IntoEnumIterator;

/// Lines that say why there is no Response, when there is none.
pub fn no_response<'a>(c: &Content<'a>) -> Option<Vec<Line<'a>>> {
    let t = &c.app.theme();
    match &c.view.turn.reply {
        Reply::Response(_) => None,
        Reply::ToolError(text) => {
            let mut lines = vec![Line::styled(
                "✗ The server rejected the Request (tool error, MCP-BINDING section 2)",
                t.bold(t.colors.tool_error),
            )];
            for l in text.lines() {
                lines.extend(
                    wrap_capped(l, c.width.saturating_sub(2), 20)
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
                wrap_capped(&e.message, c.width.saturating_sub(2), 20)
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

/// The BKN-DAC Request and Response of the selected turn, read once when it came.
fn messages<'a>(c: &Content<'a>) -> Option<(&'a DacRequestView, &'a DacResponseView)> {
    match &c.view.exchange {
        Exchange::Dac {
            request,
            response: Some(response),
        } => Some((request, response)),
        _ => None,
    }
}

/// At most this many commitments are named on the Answer's one-line summary.
const SUMMARY_CAP: usize = 40;

/// The Answer tab. A Response may hold thousands of relations or a text of megabytes, so the
/// lines are made only inside the window on screen; those above it are only counted.
pub fn answer<'a>(c: &Content<'a>) -> super::Shown<'a> {
    if let Some(lines) = no_response(c) {
        return super::window(lines, c);
    }
    let Some((_, r)) = messages(c) else {
        return super::window(not_dac(c), c);
    };
    let mut w = Window::new(c.skip, c.take, c.width);
    answer_into(c, r, &mut w);
    if w.lines.len() < c.take && c.skip > 0 {
        // Scrolled to or past the end: show the last page, whole.
        let top = super::last_page(c, w.seen);
        let mut last = Window::new(top, c.take, c.width);
        answer_into(c, r, &mut last);
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

/// A BKN-DAC tab on a turn that is not BKN-DAC (a Request whose Header says otherwise).
fn not_dac<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    vec![Line::styled(
        "not a BKN-DAC turn: the Raw tab shows its messages",
        c.app.theme().muted(),
    )]
}

fn answer_into<'a>(c: &Content<'a>, r: &'a DacResponseView, w: &mut Window<'a>) {
    let t = &c.app.theme();
    w.push_wrapped(
        Line::from(vec![
            Span::styled("Outcome  ", t.muted()),
            super::outcome(c.app, &r.outcome),
            Span::styled("    Sources  ", t.muted()),
            Span::raw(r.sources_used.texts().join(", ")),
        ]),
        c.width,
    );
    match &r.failure {
        Field::Absent => {}
        Field::Known(f) => w.push_wrapped(
            Line::styled(
                format!(
                    "⚠ Failure: {} ({}){}",
                    f.service.str(),
                    f.nature.text(),
                    match &f.request {
                        Field::Absent => String::new(),
                        request => format!(": {}", request.text()),
                    }
                ),
                t.bold(t.colors.warning),
            ),
            c.width,
        ),
        Field::Other(v) => w.push_wrapped(
            Line::from(vec![
                Span::styled("⚠ Failure: ", t.bold(t.colors.warning)),
                super::odd(c.app, v.to_string()),
            ]),
            c.width,
        ),
    }
    commitment_summary(c, r, w);
    match &r.answer {
        Field::Known(answer) => answer_body(c, answer, w),
        Field::Absent => w.push(|| Line::styled("(no Answer in this Response)", t.muted())),
        Field::Other(v) => w.push_wrapped(
            Line::from(vec![
                Span::styled("Answer  ", t.muted()),
                super::odd(c.app, v.to_string()),
            ]),
            c.width,
        ),
    }
}

/// What this turn did to the commitments (the Commitments tab has the whole story), wrapped
/// over as many lines as it takes.
fn commitment_summary<'a>(c: &Content<'a>, r: &'a DacResponseView, w: &mut Window<'a>) {
    let t = &c.app.theme();
    let statuses = r.commitment_status.items();
    let mut spans = vec![Span::styled("Commitments  ", t.muted())];
    if let Some(v) = r.commitment_status.other() {
        spans.push(super::odd(c.app, v.to_string()));
    }
    for (j, s) in statuses.iter().take(SUMMARY_CAP).enumerate() {
        if j > 0 {
            spans.push(Span::raw(", "));
        }
        match s {
            Field::Known(s) => {
                let color = s.status.known().map(|st| t.commitment(*st));
                spans.push(Span::raw(format!("{} ", s.commitment_id.str())));
                spans.push(super::field(
                    c.app,
                    &s.status,
                    t.fg(color.unwrap_or(t.colors.error)),
                ));
            }
            other => spans.push(super::odd(
                c.app,
                other.other().map(|v| v.to_string()).unwrap_or_default(),
            )),
        }
    }
    if statuses.len() > SUMMARY_CAP {
        spans.push(Span::styled(
            format!(", +{} more", statuses.len() - SUMMARY_CAP),
            t.muted(),
        ));
    }
    if spans.len() > 1 {
        for row in crate::tui::view::text::wrap_words(Line::from(spans), c.width) {
            w.push(|| row);
        }
    }
}

/// An element of a list that is not the object the data type has: its JSON, marked.
fn odd_item<'a, T>(c: &Content<'a>, item: &Field<T>, w: &mut Window<'a>) {
    if let Some(v) = item.other() {
        w.push(|| Line::from(vec![Span::raw("  "), super::odd(c.app, v.to_string())]));
    }
}

/// A list member that is not an array: its JSON, marked, under the list's heading.
fn odd_list<'a, T>(c: &Content<'a>, name: &str, list: &List<T>, w: &mut Window<'a>) {
    if let Some(v) = list.other() {
        w.push(|| heading(c.app, name.to_owned()));
        w.push(|| Line::from(vec![Span::raw("  "), super::odd(c.app, v.to_string())]));
    }
}

/// The Answer's parts in order; each part stops once the window is full, and so does the
/// body (the parts after it are neither made nor counted: a long Text would otherwise be
/// scanned on every frame to find lines that are never shown).
fn answer_body<'a>(c: &Content<'a>, answer: &'a AnswerView, w: &mut Window<'a>) {
    object_classes(c, &answer.object_classes, w);
    if w.full() {
        return;
    }
    relations(c, &answer.relations, w);
    if w.full() {
        return;
    }
    affordances(c, &answer.affordances, w);
    for (name, items) in [
        ("Constraints", &answer.constraints),
        ("Behavioural expectations", &answer.behavioural_expectations),
    ] {
        if w.full() {
            return;
        }
        odd_list(c, name, items, w);
        if items.items().is_empty() {
            continue;
        }
        w.push(|| heading(c.app, name));
        for item in items.items() {
            if w.full() {
                return;
            }
            for (j, l) in wrap_capped(&item.text(), c.width.saturating_sub(4), 8)
                .into_iter()
                .enumerate()
            {
                w.push(|| Line::raw(format!("  {} {l}", if j == 0 { "•" } else { " " })));
            }
        }
    }
    if w.full() {
        return;
    }
    if !answer.text.is_absent() {
        answer_text(c, &answer.text.str(), w);
    }
    if w.full() {
        return;
    }
    for line in super::members(c.app, "Other members of the Answer", &answer.other, c.width) {
        w.push(|| line);
    }
}

fn object_classes<'a>(c: &Content<'a>, classes: &'a List<ObjectClassView>, w: &mut Window<'a>) {
    let t = &c.app.theme();
    odd_list(c, "Object classes", classes, w);
    if classes.items().is_empty() {
        return;
    }
    w.push(|| heading(c.app, "Object classes"));
    w.push(|| {
        Line::styled(
            format!("  {:<20} {:<22} {}", "Class", "Label", "Confidence"),
            t.muted(),
        )
    });
    for oc in classes.items() {
        if w.full() {
            return;
        }
        let Field::Known(oc) = oc else {
            odd_item(c, oc, w);
            continue;
        };
        w.push(|| {
            let confidence = match &oc.confidence {
                Field::Known(v) => Span::styled(
                    format!("{} {:.2}", bar(v.get(), 10), v.get()),
                    t.fg(t.colors.gauge),
                ),
                Field::Absent => Span::raw(""),
                Field::Other(v) => super::odd(c.app, v.to_string()),
            };
            Line::from(vec![
                Span::styled(
                    format!("  {:<20} ", cut(&oc.class.str(), 20)),
                    t.fg(t.colors.accent),
                ),
                Span::raw(format!("{:<22} ", cut(&oc.label.str(), 22))),
                confidence,
            ])
        });
    }
}

fn relations<'a>(c: &Content<'a>, relations: &'a List<RelationView>, w: &mut Window<'a>) {
    let t = &c.app.theme();
    odd_list(c, "Relations", relations, w);
    let items = relations.items();
    if items.is_empty() {
        return;
    }
    w.push(|| heading(c.app, format!("Relations ({})", items.len())));
    for rel in items {
        if w.full() {
            return;
        }
        let Field::Known(rel) = rel else {
            odd_item(c, rel, w);
            continue;
        };
        w.push(|| {
            Line::from(vec![
                Span::raw(format!("  {} ", rel.subject.str())),
                Span::styled(rel.predicate.str().into_owned(), t.fg(t.colors.accent)),
                Span::raw(format!(" {}", rel.object.str())),
            ])
        });
    }
}

fn affordances<'a>(c: &Content<'a>, affordances: &'a List<AffordanceView>, w: &mut Window<'a>) {
    let t = &c.app.theme();
    odd_list(c, "Affordances", affordances, w);
    if affordances.items().is_empty() {
        return;
    }
    w.push(|| heading(c.app, "Affordances"));
    w.push(|| {
        Line::styled(
            format!("  {:<16} {:<16} {}", "Entity", "Class", "Action"),
            t.muted(),
        )
    });
    for a in affordances.items() {
        if w.full() {
            return;
        }
        let Field::Known(a) = a else {
            odd_item(c, a, w);
            continue;
        };
        w.push(|| {
            Line::from(vec![
                Span::raw(format!(
                    "  {:<16} {:<16} ",
                    cut(&a.entity_id.str(), 16),
                    cut(&a.class.str(), 16)
                )),
                Span::styled(a.action.str().into_owned(), t.fg(t.colors.accent)),
            ])
        });
    }
}

/// The Answer's Text: only the part of a long text that the window reaches is wrapped.
fn answer_text<'a>(c: &Content<'a>, text: &str, w: &mut Window<'a>) {
    w.push(|| heading(c.app, "Text"));
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

/// The lines of a tab that fall inside the window on screen: those before it are counted
/// (their closures never run), and nothing is made past its end.
struct Window<'a> {
    skip: usize,
    take: usize,
    /// Lines counted so far, in the window or before it.
    seen: usize,
    lines: Vec<Line<'a>>,
    /// The pane's width, for lines that wrap.
    width: usize,
}

impl<'a> Window<'a> {
    fn new(skip: usize, take: usize, width: usize) -> Window<'a> {
        Window {
            skip,
            take,
            seen: 0,
            lines: Vec::new(),
            width,
        }
    }

    /// A line made only when in view; one wider than the pane shows as the rows it wraps to
    /// (counted as one line for the scroll: its closure does not run out of view).
    fn push(&mut self, make: impl FnOnce() -> Line<'a>) {
        if self.seen >= self.skip && !self.full() {
            self.lines.extend(super::wrapped(vec![make()], self.width));
        }
        self.seen += 1;
    }

    /// A line that may be wider than the pane, as the rows it wraps to (made even before the
    /// window, to count its rows: for short header lines only).
    fn push_wrapped(&mut self, line: Line<'a>, width: usize) {
        for row in super::wrapped(vec![line], width) {
            self.push(|| row);
        }
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
    let t = &c.app.theme();
    let Some((request, r)) = messages(c) else {
        return not_dac(c);
    };
    let (Some(verdict), Field::Known(f)) = (&c.view.verdict, &r.feasibility) else {
        let why = match r.feasibility.other() {
            Some(v) => format!("Feasibility is not an object: {v}"),
            None => format!(
                "no Feasibility in this Response (Kind {})",
                c.view.summary.kind
            ),
        };
        return vec![Line::styled(why, t.muted())];
    };
    let mut lines = verdict_lines(c, verdict);
    // Step (4) + gap (2) + Statement + gap (2) + PA Status (10) + gap (2), then Reason.
    const FIXED: usize = 20;
    let statement_width = ((c.width.saturating_sub(FIXED)) * 45 / 100).max(12);
    let reason_width = c.width.saturating_sub(statement_width + FIXED).max(10);
    let columns = Columns {
        statement: statement_width,
        reason: reason_width,
    };
    lines.push(Line::styled(
        format!(
            "{:>4}  {:<statement_width$}  {:<10}  {}",
            "Step", "Statement", "PA Status", "Reason"
        ),
        t.muted(),
    ));
    if let Some(v) = f.steps.other() {
        lines.push(Line::from(vec![
            Span::styled("Steps  ", t.muted()),
            super::odd(c.app, v.to_string()),
        ]));
    }
    let statement_of = |n: Option<u64>| -> String {
        n.and_then(|n| request.statements().find(|(k, _)| *k == Some(n)))
            .map(|(_, st)| st.str().into_owned())
            .unwrap_or_default()
    };
    for step in f.steps.items() {
        let row = match step {
            Field::Known(s) => StepRow {
                number: s.step.text().into_owned(),
                statement: statement_of(s.step.index()),
                status: &s.pa_status,
                reason: s.reason.str().into_owned(),
            },
            other => StepRow {
                number: String::new(),
                statement: String::new(),
                status: &Field::Absent,
                reason: format!(
                    "not a step: {}?",
                    other.other().map(|v| v.to_string()).unwrap_or_default()
                ),
            },
        };
        lines.extend(step_lines(c, &row, &columns));
    }
    for n in &verdict.unanswered {
        lines.extend(missing_lines(c, *n, &statement_of(Some(*n)), &columns));
    }
    lines.extend(super::members(
        c.app,
        "Other members of the Feasibility",
        &f.other,
        c.width,
    ));
    lines
}

/// The Overall badge and the counts, and a warning when the server's claim is better than
/// what its own steps say.
fn verdict_lines<'a>(c: &Content<'a>, verdict: &Verdict) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let overall_color = match (verdict.claimed.known(), verdict.implied) {
        (Some(_), Some(i)) if verdict.contradicted() => t.overall(i),
        (Some(o), _) => t.overall(*o),
        // A value no Overall has (or none): shown as it came, in the error colour.
        (None, _) => t.colors.error,
    };
    let claimed = match &verdict.claimed {
        Field::Absent => "no Overall".to_owned(),
        Field::Known(o) => o.as_str().replace('_', " "),
        other => format!("{}?", other.text()),
    };
    let total = verdict.total;
    let mut lines = vec![Line::from(vec![
        Span::styled("Overall  ", t.muted()),
        Span::styled(
            format!(" {} ", claimed.to_uppercase()),
            t.fg(t.colors.background)
                .bg(overall_color)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                "   {} of {total} step{} Ack{}",
                verdict.acks,
                if total == 1 { "" } else { "s" },
                match verdict.unanswered.len() {
                    0 => String::new(),
                    n => format!(", {n} not answered"),
                }
            ),
            t.muted(),
        ),
    ])];
    if verdict.contradicted()
        && let Some(i) = verdict.implied
    {
        lines.push(Line::styled(
            format!(
                "⚠ the server says {claimed}, but its steps say {}",
                i.as_str().replace('_', " ")
            ),
            t.bold(t.colors.warning),
        ));
    }
    lines
}

/// The widths of the Feasibility table's two text columns.
struct Columns {
    statement: usize,
    reason: usize,
}

/// A row of the Feasibility table, as the server gave it.
struct StepRow<'s> {
    number: String,
    statement: String,
    status: &'s Field<PaStatus>,
    reason: String,
}

/// A step's row: both text columns wrap, and the row is as tall as the taller of the two.
fn step_lines<'a>(c: &Content<'a>, row: &StepRow, columns: &Columns) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let statement_width = columns.statement;
    let color = row
        .status
        .known()
        .map(|s| t.pa_status(*s))
        .unwrap_or(t.colors.error);
    let status = match row.status {
        Field::Known(s) => s.as_str().to_owned(),
        Field::Absent => "(none)".to_owned(),
        other => format!("{}?", other.text()),
    };
    let statement_lines = wrap_capped(&row.statement, statement_width, 4);
    let reason_lines = wrap_capped(&row.reason, columns.reason, 6);
    let height = statement_lines.len().max(reason_lines.len()).max(1);
    (0..height)
        .map(|i| {
            let (number, status) = match i {
                0 => (row.number.as_str(), status.as_str()),
                _ => ("", ""),
            };
            Line::from(vec![
                Span::raw(format!("{number:>4}  ")),
                Span::raw(format!(
                    "{:<statement_width$}  ",
                    statement_lines
                        .get(i)
                        .map(String::as_str)
                        .unwrap_or_default()
                )),
                Span::styled(format!("{status:<10}"), t.bold(color)),
                Span::raw("  "),
                Span::raw(reason_lines.get(i).cloned().unwrap_or_default()),
            ])
        })
        .collect()
}

/// A step of the Request the server gave no PA Status for: both columns wrap, as a step's.
fn missing_lines<'a>(c: &Content<'a>, n: u64, statement: &str, columns: &Columns) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let statement_width = columns.statement;
    let statement_lines = wrap_capped(statement, statement_width, 4);
    let reason_lines = wrap_capped(
        "the server gave no PA Status for this step",
        columns.reason,
        6,
    );
    let height = statement_lines.len().max(reason_lines.len()).max(1);
    (0..height)
        .map(|row| {
            let (number, status) = match row {
                0 => (n.to_string(), "missing"),
                _ => (String::new(), ""),
            };
            let text = statement_lines.get(row).map(String::as_str).unwrap_or("");
            Line::from(vec![
                Span::raw(format!("{number:>4}  ")),
                Span::raw(format!("{text:<statement_width$}  ")),
                Span::styled(format!("{status:<10}"), t.bold(t.colors.error)),
                Span::raw("  "),
                Span::styled(
                    reason_lines.get(row).cloned().unwrap_or_default(),
                    t.fg(t.colors.error),
                ),
            ])
        })
        .collect()
}

pub fn commitments<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let view = c.dialogue.transcript.commitments_at(c.selected.index);
    let mut lines = commitment_notes(c, &view);
    if view.rows.is_empty() {
        lines.push(Line::styled(
            format!(
                "no commitment in this dialogue as of {}",
                turn_label(c, c.selected.index)
            ),
            t.muted(),
        ));
        return lines;
    }
    lines.push(commitment_counts(c, &view));
    lines.push(Line::styled(
        format!(
            "{:<8} {:<12} {:>6}  {}",
            "ID", "Status", "Since", "Statement"
        ),
        t.muted(),
    ));
    for r in &view.rows {
        lines.push(commitment_row(c, r));
    }
    if view
        .rows
        .iter()
        .any(|r| r.state == Field::Known(CommitmentState::Conflicting))
    {
        lines.extend(server_words(c, view.from));
    }
    lines
}

/// The data type gives no reason per commitment: the Answer text of the Response the
/// statuses come from may say why, in the server's own words. It is shown whole, as free
/// text, and never read for meaning (any server may write anything there).
fn server_words<'a>(c: &Content<'a>, from: Option<usize>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let text = from
        .and_then(|row| c.dialogue.transcript.turn(row))
        .and_then(|v| match &v.exchange {
            Exchange::Dac {
                response: Some(r), ..
            } => r.answer.known().map(|a| a.text.str().into_owned()),
            _ => None,
        })
        .filter(|text| !text.is_empty());
    let Some(text) = text else {
        return Vec::new();
    };
    let mut lines = vec![Line::styled(
        format!(
            "the server's Answer text ({}):",
            turn_label(c, from.unwrap_or_default())
        ),
        t.muted(),
    )];
    lines.extend(
        wrap_capped(&text, c.width.saturating_sub(2), 8)
            .into_iter()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines
}

/// "TurnIndex 3" for a transcript row (its position when it has none).
fn turn_label(c: &Content, row: usize) -> String {
    c.dialogue
        .transcript
        .turns()
        .get(row)
        .and_then(|v| v.summary.turn_index)
        .map(|n| format!("TurnIndex {n}"))
        .unwrap_or_else(|| format!("row {row}"))
}

/// What this turn's own Response said, before the table (wrapped: never cut).
fn commitment_notes<'a>(c: &Content<'a>, view: &CommitmentsView) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let mut lines = Vec::new();
    let mut note = |text: String, style| {
        lines.extend(super::super::text::wrap_words(
            Line::styled(text, style),
            c.width,
        ));
    };
    match &view.selected {
        Listed::LeftOut if !view.rows.is_empty() => note(
            format!(
                "⚠ this Response leaves CommitmentStatus out; shown: what {} said",
                view.from
                    .map(|f| format!("the Response of {}", turn_label(c, f)))
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
                turn_label(c, view.session_start)
            ),
            t.muted(),
        );
    }
    lines
}

/// "3 commitments as of TurnIndex 2:  1 retained · 1 released · 1 conflicting".
fn commitment_counts<'a>(c: &Content<'a>, view: &CommitmentsView) -> Line<'a> {
    let t = &c.app.theme();
    let count = |s: CommitmentState| {
        view.rows
            .iter()
            .filter(|r| r.state == Field::Known(s))
            .count()
    };
    let n = view.rows.len();
    let mut spans = vec![Span::raw(format!(
        "{n} commitment{} as of {}:  ",
        if n == 1 { "" } else { "s" },
        turn_label(c, c.selected.index)
    ))];
    for (j, state) in CommitmentState::iter().enumerate() {
        if j > 0 {
            spans.push(Span::raw(" · "));
        }
        spans.push(Span::styled(
            format!("{} {state}", count(state)),
            t.fg(t.commitment(state)),
        ));
    }
    let odd = view
        .rows
        .iter()
        .filter(|r| r.state.other().is_some())
        .count();
    if odd > 0 {
        spans.push(Span::raw(" · "));
        spans.push(super::odd(c.app, format!("{odd} of another status")));
    }
    Line::from(spans)
}

fn commitment_row<'a>(c: &Content<'a>, r: &CommitmentRow) -> Line<'a> {
    let t = &c.app.theme();
    let (label, style) = match &r.state {
        Field::Known(CommitmentState::Conflicting) => (
            "CONFLICTING".to_owned(),
            t.bold(t.commitment(CommitmentState::Conflicting)),
        ),
        Field::Known(s) => (s.as_str().to_owned(), t.fg(t.commitment(*s))),
        Field::Absent => ("not listed".to_owned(), t.fg(t.colors.warning)),
        other => (format!("{}?", other.text()), t.fg(t.colors.error)),
    };
    let since = c
        .dialogue
        .transcript
        .turns()
        .get(r.since)
        .and_then(|v| v.summary.turn_index)
        .map(|n| format!("t{n}"))
        .unwrap_or_default();
    let statement_style = if r.state == Field::Known(CommitmentState::Released) {
        t.muted().add_modifier(Modifier::CROSSED_OUT)
    } else {
        t.fg(t.colors.foreground)
    };
    Line::from(vec![
        Span::styled(format!("{:<8} ", cut(&r.id, 8)), t.fg(t.colors.accent)),
        Span::styled(format!("{label:<12} "), style),
        Span::styled(format!("{since:>6}  "), t.muted()),
        Span::styled(r.statement.clone().unwrap_or_default(), statement_style),
    ])
}
