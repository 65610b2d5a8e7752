//! Drawing the certify pane: the progress bar (or the totals), the rules (mark and word,
//! id, section, summary: the verdict is said without colour too), the selected rule's
//! problems and evidence, and the keys (or the path being typed). Returns where the rows
//! went, in `Hits`.

use super::{CertifyPane, Phase};
use crate::certify::{RuleResult, Verdict};
use crate::tui::action::{Action, Context};
use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::view::overlays::open_box;
use crate::tui::view::text::cut;
use crate::tui::view::text::wrap_window;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// A verdict's mark.
fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✓",
        Verdict::Fail => "✗",
        Verdict::Skip => "-",
    }
}

/// A verdict's mark and word, so that it reads without colour.
pub fn label(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "✓ pass",
        Verdict::Fail => "✗ fail",
        Verdict::Skip => "- skip",
    }
}

fn color(app: &App, v: Verdict) -> Color {
    let c = &app.theme().colors;
    match v {
        Verdict::Pass => c.success,
        Verdict::Fail => c.error,
        Verdict::Skip => c.muted,
    }
}

/// Draws the pane when it is shown.
pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let Some(c) = app.certify.as_ref().filter(|c| c.shown) else {
        return;
    };
    // Between the tab line and the status line, the whole width: the rules need it.
    let r = Rect::new(
        area.x,
        area.y + 1.min(area.height),
        area.width,
        area.height.saturating_sub(2),
    );
    let title = format!(" Certify {} ({}) ", c.server_name, c.interface.name());
    let inner = open_box(frame, app, r, &title, hits);
    if inner.height < 6 || inner.width < 20 {
        return;
    }
    let w = inner.width as usize;
    let t = app.theme();
    let mut y = inner.y;
    let line = |frame: &mut Frame, y: u16, l: Line| {
        frame.render_widget(Paragraph::new(l), Rect::new(inner.x, y, inner.width, 1));
    };
    // The progress or the totals.
    line(frame, y, head(app, c, w));
    y += 1;
    // The rules, then the selected one's detail below a rule.
    let bottom = inner.y + inner.height - 1;
    let rows = c.rows();
    let (list_height, detail_height) = split_heights(bottom - y, rows.len());
    let top = c
        .selected
        .saturating_sub(list_height.saturating_sub(1) as usize);
    for (n, &i) in rows.iter().enumerate().skip(top).take(list_height as usize) {
        let Some(result) = c.results.get(i) else {
            continue;
        };
        let mut l = rule_line(app, result, w);
        if n == c.selected {
            l = l.style(t.selected());
        }
        line(frame, y, l);
        hits.overlay_rows
            .push((Rect::new(inner.x, y, inner.width, 1), n));
        y += 1;
    }
    if rows.is_empty() {
        line(frame, y, Line::styled(no_rule_shown(c), t.muted()));
    }
    // The detail.
    let rule_y = inner.y + 1 + list_height;
    line(
        frame,
        rule_y,
        Line::styled("─".repeat(w), t.fg(t.colors.border)),
    );
    let detail = detail_lines(app, c, w);
    // Saving, the line above the path says what Enter does.
    let asking = c.saving.as_ref().map(|s| ask_line(app, s, w));
    let shown = detail_height as usize - usize::from(asking.is_some());
    for (k, l) in detail.into_iter().take(shown).enumerate() {
        line(frame, rule_y + 1 + k as u16, l);
    }
    if let Some(l) = asking {
        line(frame, bottom - 1, l);
    }
    // The keys, the path being typed, or what the pane last said.
    line(frame, bottom, foot(app, c, w));
}

/// The rows of the rules' list and of the detail under it, in `room` (less the line
/// between them): the detail has a third at least, and what the rules shown leave (a filter
/// showing a few rules leaves room for their evidence).
fn split_heights(room: u16, rules: usize) -> (u16, u16) {
    let needed = (rules as u16).max(3);
    let detail_height = (room / 3)
        .max(room.saturating_sub(1 + needed))
        .max(3)
        .min(room.saturating_sub(2));
    (room - detail_height - 1, detail_height)
}

/// A rule's row: its verdict (mark and word), its id, its section when there is room, its
/// summary.
fn rule_line<'a>(app: &App, result: &RuleResult, w: usize) -> Line<'a> {
    let t = app.theme();
    let wide = w >= 100;
    let id_width = if wide { 32 } else { 27 };
    let mut spans = vec![
        Span::styled(
            format!("{} ", label(result.verdict)),
            t.bold(color(app, result.verdict)),
        ),
        Span::raw(format!("{:<id_width$} ", cut(result.rule.name, id_width))),
    ];
    let mut used = 7 + id_width + 1;
    if wide {
        spans.push(Span::styled(
            format!("{:<20} ", cut(result.rule.section, 20)),
            t.muted(),
        ));
        used += 21;
    }
    spans.push(Span::raw(cut(&result.summary, w.saturating_sub(used))));
    Line::from(spans)
}

/// Why no rule is listed: none has the verdict the filter asks for, none finished yet, or
/// none ran.
fn no_rule_shown(c: &CertifyPane) -> String {
    match (&c.phase, c.filter) {
        (Phase::Unreachable(_), _) => String::new(),
        (_, Some(v)) if !c.results.is_empty() => {
            format!("no rule has the verdict {v} (f shows the others)")
        }
        _ if c.running() => "the rules show here as they finish".into(),
        _ => "no rule ran".into(),
    }
}

fn head(app: &App, c: &CertifyPane, w: usize) -> Line<'static> {
    let t = app.theme();
    let done = c.results.len();
    match &c.phase {
        Phase::Learning => Line::from(vec![
            Span::styled(format!("{} ", app.spinner()), t.fg(t.colors.accent)),
            Span::raw(format!(
                "learning what {} publishes… ({} stops)",
                c.server_name,
                app.keymap()
                    .keys_in(
                        &crate::tui::action::Action::Cancel,
                        crate::tui::action::Context::Certify
                    )
                    .split(" / ")
                    .next()
                    .unwrap_or("?")
            )),
        ]),
        Phase::Running | Phase::Cancelling => {
            let total = c.total.unwrap_or(0).max(1);
            let counts = format!(" {done}/{total} ");
            let doing = match (&c.phase, c.current) {
                (Phase::Cancelling, _) => "stopping after the rule under way…".to_owned(),
                (_, Some((_, rule))) => format!("{} {}", app.spinner(), rule.name),
                _ => String::new(),
            };
            let bar = (w / 3).clamp(10, 40);
            let filled = (bar * done / total).min(bar);
            Line::from(vec![
                Span::styled("█".repeat(filled), t.fg(t.colors.gauge)),
                Span::styled("░".repeat(bar - filled), t.fg(t.colors.gauge_bg)),
                Span::styled(counts, t.bold(t.colors.accent)),
                Span::raw(cut(&doing, w.saturating_sub(bar + 12))),
            ])
        }
        Phase::Done | Phase::Cancelled => {
            let mut spans = Vec::new();
            for v in [Verdict::Pass, Verdict::Fail, Verdict::Skip] {
                let word = match v {
                    Verdict::Pass => "passed",
                    Verdict::Fail => "failed",
                    Verdict::Skip => "skipped",
                };
                spans.push(Span::styled(
                    format!("{} {} {word}", mark(v), c.count(v)),
                    t.bold(color(app, v)),
                ));
                spans.push(Span::raw("  "));
            }
            let seconds = c.report.as_ref().map_or(0.0, |r| r.seconds);
            let mut tail = format!("{done} rules, {seconds:.1} s");
            if c.phase == Phase::Cancelled {
                tail.push_str(" (stopped: the rules after were not run)");
            }
            if let Some(r) = &c.report
                && !r.protocol.is_empty()
            {
                tail.push_str(&format!(", MCP {}", r.protocol));
            }
            spans.push(Span::styled(tail, t.muted()));
            Line::from(spans)
        }
        Phase::Unreachable(_) => Line::styled(
            "no report: the server could not be certified (why below; r tries again)",
            t.bold(t.colors.error),
        ),
    }
}

/// The selected rule: its id, section and title, its problems, and its evidence.
fn detail_lines(app: &App, c: &CertifyPane, w: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    if let Phase::Unreachable(why) = &c.phase {
        // The whole reason (the tools the server serves, say), wrapped.
        return wrap_window(why, w, 0, 12)
            .into_iter()
            .map(|l| Line::styled(l, t.fg(t.colors.error)))
            .collect();
    }
    let Some(r) = c.selected_result() else {
        return c
            .learnt
            .iter()
            .map(|l| Line::styled(cut(l, w), t.muted()))
            .collect();
    };
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!("{} ", label(r.verdict)),
            t.bold(color(app, r.verdict)),
        ),
        Span::styled(r.rule.name.to_owned(), t.bold(t.colors.foreground)),
        Span::styled(format!("  {}  ", r.rule.section), t.muted()),
        Span::raw(r.rule.title.to_owned()),
    ])];
    let style: Style = t.fg(color(app, r.verdict));
    // What was found is never cut: it wraps (the evidence below may be).
    let said: Vec<String> = if r.problems.is_empty() {
        vec![r.summary.clone()]
    } else {
        r.problems.iter().map(|p| format!("• {p}")).collect()
    };
    for text in said {
        for part in wrap_window(&text, w, 0, 6) {
            out.push(Line::styled(part, style));
        }
    }
    let evidence = crate::certify::report::evidence_lines(r);
    if !evidence.is_empty() {
        let turns = r
            .evidence
            .iter()
            .filter(|e| matches!(e, crate::certify::Evidence::Turn { .. }))
            .count();
        let open = if turns > 0 {
            format!(
                "evidence ({turns} turn{}; {} opens it as dialogues):",
                if turns == 1 { "" } else { "s" },
                app.keymap().keys_in(&Action::Select, Context::Certify)
            )
        } else {
            "evidence (what went over the wire):".into()
        };
        out.push(Line::styled(open, t.muted()));
        for l in evidence {
            out.push(Line::raw(cut(&format!("  {l}"), w)));
        }
    }
    out
}

fn foot(app: &App, c: &CertifyPane, w: usize) -> Line<'static> {
    let t = app.theme();
    if let Some(s) = &c.saving {
        return Line::from(vec![
            Span::styled(
                format!("save the {} report as: ", s.format.name()),
                t.bold(t.colors.accent),
            ),
            Span::styled(
                format!("{}▏", s.input.text()),
                t.fg(t.colors.foreground).bg(t.colors.input_bg),
            ),
        ]);
    }
    if let Some((text, severity)) = &c.note {
        return Line::styled(cut(text, w), t.fg(t.severity(*severity)));
    }
    let key = |a: Action| app.keymap().keys_in(&a, Context::Certify);
    let filter = match c.filter {
        None => "every rule".to_owned(),
        Some(v) => format!("only {v}"),
    };
    let stop = if c.running() { "stop" } else { "close" };
    let mut hints = vec![
        (key(Action::Select), "evidence".to_owned()),
        (key(Action::CertifyFilter), format!("filter ({filter})")),
        (key(Action::Cancel), stop.to_owned()),
    ];
    if c.running() {
        hints.push((key(Action::CertifyHide), "hide (the run goes on)".into()));
    }
    if !c.running() {
        hints.push((key(Action::CertifyAgain), "run again".into()));
        hints.push((key(Action::CertifySaveJson), "save JSON".into()));
        hints.push((key(Action::CertifySaveMarkdown), "save Markdown".into()));
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (k, what) in hints {
        let k = k.split(" / ").next().unwrap_or_default().to_owned();
        let n = k.chars().count() + what.chars().count() + 3;
        if used + n > w {
            break;
        }
        used += n;
        spans.push(Span::styled(k, t.bold(t.colors.key_hint)));
        spans.push(Span::styled(format!(" {what}  "), t.muted()));
    }
    Line::from(spans)
}

/// What Enter does with the path typed: save, or write over the file that is there (the
/// pane's select and cancel keys, keys.toml's).
fn ask_line(app: &App, s: &super::Saving, w: usize) -> Line<'static> {
    let t = app.theme();
    let key = |a: crate::tui::action::Action| {
        let keys = app
            .keymap()
            .keys_in(&a, crate::tui::action::Context::Certify);
        keys.split(" / ").next().unwrap_or_default().to_owned()
    };
    let (enter, esc) = (
        key(crate::tui::action::Action::Select),
        key(crate::tui::action::Action::Cancel),
    );
    match &s.exists {
        Some(p) => Line::styled(
            cut(
                &format!(
                    "{} is there: {enter} writes over it, {esc} keeps it",
                    p.display()
                ),
                w,
            ),
            t.bold(t.colors.warning),
        ),
        None => Line::styled(
            format!("{enter} saves (a relative path is in the working folder), {esc} does not"),
            t.muted(),
        ),
    }
}
