//! The tabs every dialogue has: Findings, Raw, Replay.

use super::{Content, heading};
use crate::client::turn::{Reply, Subject};
use crate::tui::dialogue::Selected;
use crate::tui::search::Search;
use crate::tui::theme::Theme;
use crate::tui::view::text::{cut, json_line, wrap_line, wrap_words};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub fn findings<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let mut lines = verdicts(c);
    lines.extend(asked(c));
    lines
}

/// What the server asked while it worked on the Request, and what it was given.
fn asked<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    use crate::client::answers::AnsweredBy;
    let t = &c.app.theme();
    let asked = &c.view.turn.asked;
    if asked.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::raw(""), heading(c.app, "What the server asked")];
    for a in asked {
        let named = a
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let by = match a.by {
            AnsweredBy::Person => "answered by you",
            AnsweredBy::File => "answered from --answers",
            AnsweredBy::Recording => "answered as the recording did",
            AnsweredBy::Nobody => "not answered",
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{}{named}", a.method), t.fg(t.colors.json_key)),
            Span::styled(format!(" · {by}"), t.muted()),
        ]));
        let given = match (&a.answer, &a.refusal) {
            (Some(answer), _) => answer.to_string(),
            (None, Some(why)) => why.clone(),
            (None, None) => String::new(),
        };
        for text in [&a.message, &given] {
            for l in crate::tui::view::text::wrap_capped(text, c.width.saturating_sub(4), 6) {
                lines.push(Line::raw(format!("    {l}")));
            }
        }
    }
    lines
}

fn verdicts<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let findings = &c.view.turn.findings;
    if findings.is_empty() {
        let (verdict, note) = match c.view.turn.reply {
            Reply::Response(_) => ("✓ the Request and the Response conform: no finding", None),
            Reply::ToolError(_) => (
                "✓ the Request conforms: no finding",
                Some("(the server rejected it all the same; see the Answer tab)"),
            ),
            Reply::Error(_) => (
                "✓ the Request conforms: no finding",
                Some("(no Response came, so there was none to check)"),
            ),
        };
        let mut lines = vec![Line::styled(verdict, t.fg(t.colors.conforms))];
        lines.extend(note.map(|n| Line::styled(n, t.muted())));
        return lines;
    }
    let mut lines = vec![heading(
        c.app,
        format!(
            "{} finding{}",
            findings.len(),
            if findings.len() == 1 { "" } else { "s" }
        ),
    )];
    for f in findings {
        let on = match f.on {
            Subject::Request => "request ",
            Subject::Response => "response",
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{on}  "), t.muted()),
            Span::styled(
                f.finding.display_pointer().to_owned(),
                t.fg(t.colors.json_key),
            ),
            Span::raw("  "),
            Span::styled(format!("{}", f.finding.requirement), t.fg(t.colors.finding)),
            Span::styled(format!(" · {}", f.finding.check), t.muted()),
        ]));
        for l in
            crate::tui::view::text::wrap_capped(&f.finding.message, c.width.saturating_sub(4), 6)
        {
            lines.push(Line::raw(format!("    {l}")));
        }
    }
    lines
}

/// The Request and the reply as pretty JSON, long lines wrapped; only the rows in view are
/// made (a row's height comes from the line widths the selection measured once).
pub fn raw<'a>(c: &Content<'a>) -> super::Shown<'a> {
    let doc = RawDocument::of(c);
    let total: usize = (0..doc.lines()).map(|i| doc.rows_of(i)).sum();
    let top = super::last_page(c, total);
    let mut out = Vec::with_capacity(c.take);
    let mut row = 0;
    for i in 0..doc.lines() {
        let h = doc.rows_of(i);
        if row + h > top {
            let skip_in = top.saturating_sub(row);
            out.extend(doc.rows(i).into_iter().skip(skip_in));
            if out.len() >= c.take {
                break;
            }
        }
        row += h;
    }
    out.truncate(c.take);
    super::Shown { lines: out, top }
}

/// The Raw tab's document: the Request's heading and lines, a blank line, the reply's
/// heading and lines; each line wrapped to rows of `width`, a search's matches marked.
struct RawDocument<'a> {
    s: &'a Selected,
    t: &'a Theme,
    width: usize,
    request_title: String,
    reply_title: String,
    /// A tool error or no reply: text, not JSON.
    plain_reply: bool,
    search: Option<&'a Search>,
    /// The current match: (line, column).
    current: Option<(usize, usize)>,
}

impl<'a> RawDocument<'a> {
    fn of(c: &Content<'a>) -> RawDocument<'a> {
        let s = c.selected;
        let reply_title = match &c.view.turn.reply {
            Reply::Response(r) => format!("Response ({} bytes) · y copies", r.len()),
            Reply::ToolError(_) => "Tool error (isError)".into(),
            Reply::Error(_) => "No reply".into(),
        };
        // A search's matches are marked, the current one more (`tui::search`).
        let search = c
            .app
            .search
            .as_ref()
            .filter(|q| q.pane == crate::tui::action::Pane::Detail && !q.query().is_empty());
        let current = search.and_then(|q| {
            let found = crate::tui::update::raw_matches(s, q.query());
            found
                .get(q.current.min(found.len().saturating_sub(1)))
                .copied()
        });
        RawDocument {
            s,
            t: c.app.theme(),
            width: c.width.max(1),
            request_title: format!("Request ({} bytes) · Y copies", c.view.turn.request.len()),
            reply_title,
            plain_reply: !matches!(c.view.turn.reply, Reply::Response(_)),
            search,
            current,
        }
    }

    fn lines(&self) -> usize {
        self.s.request_lines.len() + self.s.response_lines.len() + 3
    }

    /// A line's width in characters (headings and the blank line count one).
    fn chars(&self, i: usize) -> usize {
        let req = self.s.request_lines.len();
        if i == 0 || i == req + 1 || i == req + 2 {
            1
        } else if i <= req {
            self.s.request_widths[i - 1]
        } else {
            self.s.response_widths[i - req - 3]
        }
    }

    fn rows_of(&self, i: usize) -> usize {
        self.chars(i).div_ceil(self.width).max(1)
    }

    /// A line, made into its rows.
    fn rows(&self, i: usize) -> Vec<Line<'a>> {
        let (t, s, req) = (self.t, self.s, self.s.request_lines.len());
        if i == 0 {
            vec![Line::styled(
                self.request_title.clone(),
                t.bold(t.colors.title_focused),
            )]
        } else if i <= req {
            wrap_line(
                self.mark(json_line(&s.request_lines[i - 1], t, usize::MAX), i),
                self.width,
            )
        } else if i == req + 1 {
            vec![Line::raw("")]
        } else if i == req + 2 {
            vec![Line::styled(
                self.reply_title.clone(),
                t.bold(t.colors.title_focused),
            )]
        } else if self.plain_reply {
            let line = Line::styled(
                s.response_lines[i - req - 3].clone(),
                t.fg(t.colors.tool_error),
            );
            wrap_line(self.mark(line, i), self.width)
        } else {
            wrap_line(
                self.mark(json_line(&s.response_lines[i - req - 3], t, usize::MAX), i),
                self.width,
            )
        }
    }

    /// The search's matches in a line marked, the current one more.
    fn mark<'l>(&self, line: Line<'l>, i: usize) -> Line<'l> {
        match self.search {
            Some(q) => crate::tui::search::highlight(
                line,
                q.query(),
                self.current.filter(|(l, _)| *l == i).map(|(_, col)| col),
            ),
            None => line,
        }
    }
}

/// A scenario step: what it expected, each with ✓ or ✗, and for each failure what came.
pub fn expect<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let Some(check) = &c.view.expect else {
        let running = c.dialogue.runs.testing();
        let text = if running {
            "the scenario is running…"
        } else {
            "not a step of a scenario: this turn was not part of the test"
        };
        return vec![Line::styled(text, t.muted())];
    };
    let width = c.width.max(1);
    let mut lines = vec![heading(c.app, check.step.clone())];
    if let Some(why) = &check.not_run {
        lines.extend(wrap_words(
            Line::styled(format!("✗ not run: {why}"), t.fg(t.colors.error)),
            width,
        ));
        return lines;
    }
    if check.attempts > 1 {
        lines.push(Line::styled(
            format!("sent {} times (retry)", check.attempts),
            t.muted(),
        ));
    }
    for e in &check.expectations {
        let failure = check.failures.iter().find(|f| &f.expectation == e);
        let (mark, color) = match failure {
            None => ("✓", t.colors.success),
            Some(_) => ("✗", t.colors.error),
        };
        lines.extend(wrap_words(
            Line::from(vec![
                Span::styled(format!("{mark} "), t.fg(color)),
                Span::raw(e.clone()),
            ]),
            width,
        ));
        if let Some(f) = failure {
            if let Some(p) = &f.pointer {
                lines.push(Line::styled(format!("    at {p}"), t.muted()));
            }
            lines.extend(wrap_words(
                Line::styled(
                    format!("    expected {}", f.expected),
                    t.fg(t.colors.diff_recorded),
                ),
                width,
            ));
            lines.extend(wrap_words(
                Line::styled(
                    format!("    got      {}", f.actual),
                    t.fg(t.colors.diff_replayed),
                ),
                width,
            ));
        }
    }
    lines
}

/// The replay of this turn: the differences, then recorded and replayed side by side.
pub fn replay<'a>(c: &Content<'a>) -> Vec<Line<'a>> {
    let t = &c.app.theme();
    let Some(r) = &c.view.replay else {
        let running = c.dialogue.runs.replaying();
        let text = if running {
            "replaying… this turn has not come back yet"
        } else {
            "not replayed: r replays the dialogue in a fresh session"
        };
        return vec![Line::styled(text, t.muted())];
    };
    let mut lines = Vec::new();
    if r.differences.is_empty() {
        lines.push(Line::styled(
            "= the replayed reply is the same (identifiers and times aside)",
            t.fg(t.colors.success),
        ));
    } else {
        lines.push(heading(
            c.app,
            format!(
                "≠ {} difference{} (identifiers and times aside)",
                r.differences.len(),
                if r.differences.len() == 1 { "" } else { "s" }
            ),
        ));
        for d in &r.differences {
            lines.push(Line::styled(
                format!("  {}", cut(&d.to_string(), c.width.saturating_sub(2))),
                t.fg(t.colors.warning),
            ));
        }
    }
    lines.push(Line::raw(""));
    if c.selected.side_by_side.is_empty() {
        let replayed = match &r.turn.reply {
            Reply::ToolError(text) => Some(format!(
                "replayed: tool error: {}",
                text.lines().next().unwrap_or_default()
            )),
            Reply::Error(e) => Some(format!("replayed: {}", e.message)),
            Reply::Response(_) => None,
        };
        lines.extend(replayed.map(|r| Line::styled(r, t.fg(t.colors.tool_error))));
        return lines;
    }
    let half = c.width.saturating_sub(3) / 2;
    lines.push(Line::from(vec![
        Span::styled(
            format!("{:<half$}", "recorded"),
            t.bold(t.colors.diff_recorded),
        ),
        Span::styled(" │ ", t.fg(t.colors.border)),
        Span::styled("replayed", t.bold(t.colors.diff_replayed)),
    ]));
    for row in &c.selected.side_by_side {
        let bg = if row.differs {
            Style::default().bg(t.colors.diff_bg)
        } else {
            Style::default()
        };
        let left = cut(row.recorded.as_deref().unwrap_or(""), half);
        let right = cut(row.replayed.as_deref().unwrap_or(""), half);
        let (lc, rc) = if row.differs {
            (t.colors.diff_recorded, t.colors.diff_replayed)
        } else {
            (t.colors.foreground, t.colors.foreground)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{left:<half$}"), bg.fg(lc)),
            Span::styled(" │ ", t.fg(t.colors.border)),
            Span::styled(right, bg.fg(rc)),
        ]));
    }
    lines
}
