//! The detail of the selected turn, in tabs. Each tab makes the lines of its content and only
//! the lines in view are drawn (Raw and long texts make only those).

mod dac;
mod general;
mod usr;

use crate::tui::action::Pane;
use crate::tui::app::{App, DetailTab};
use crate::tui::dialogue::{DialogueState, Selected, TurnView};
use crate::tui::hits::Hits;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// What a tab draws from.
pub struct Content<'a> {
    pub app: &'a App,
    pub dialogue: &'a DialogueState,
    pub view: &'a TurnView,
    pub selected: &'a Selected,
    pub width: usize,
    /// The first line asked for and how many fit.
    pub skip: usize,
    pub take: usize,
}

/// The lines a tab shows, and the first of them: less than the scroll asked for when that
/// is past the end (the last page shows whole).
pub struct Shown<'a> {
    pub lines: Vec<Line<'a>>,
    pub top: usize,
}

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let focused = app.focus() == Pane::Detail;
    let shown = app.shown_detail_tab();
    let mut block = super::pane_block(app, tab_titles(app, area, hits), focused);
    // A search in the Raw tab: its line under the pane.
    let search = app
        .search
        .as_ref()
        .filter(|s| s.pane == Pane::Detail && shown == DetailTab::Raw);
    if let Some(s) = search {
        let found = app
            .current_dialogue()
            .and_then(|d| d.transcript.selection())
            .map_or(0, |sel| {
                crate::tui::update::raw_matches(sel, s.query()).len()
            });
        block = block.title_bottom(super::search_line(app, s, found));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    hits.detail_height = inner.height as usize;
    let Some(d) = app.current_dialogue() else {
        return;
    };
    let (Some(selected), Some(view)) = (d.transcript.selection(), d.transcript.selected_turn())
    else {
        no_turn(frame, app, d, inner);
        return;
    };
    let content = Content {
        app,
        dialogue: d,
        view,
        selected,
        width: inner.width as usize,
        skip: d.transcript.detail_scroll,
        take: inner.height as usize,
    };
    let shown_lines = tab_lines(shown, &content);
    hits.detail_top = Some((d.key, shown_lines.top));
    frame.render_widget(Paragraph::new(shown_lines.lines).style(t.base()), inner);
}

/// The tabs on the pane's top border, the shown one marked; each tab's place is a hit.
fn tab_titles<'a>(app: &App, area: Rect, hits: &mut Hits) -> Line<'a> {
    let t = app.theme();
    let shown = app.shown_detail_tab();
    let mut title: Vec<Span> = vec![Span::raw(" ")];
    let mut x = area.x + 2;
    for (i, tab) in app.detail_tabs().into_iter().enumerate() {
        if i > 0 {
            title.push(Span::styled(" │ ", t.fg(t.colors.border)));
            x += 3;
        }
        // The shown tab is marked in text as well as in colour, for monochrome terminals.
        let label = if tab == shown {
            format!("▸{}", tab.title())
        } else {
            tab.title().to_owned()
        };
        let style = if tab == shown {
            t.bold(t.colors.accent).add_modifier(Modifier::UNDERLINED)
        } else {
            t.fg(t.colors.tab_inactive)
        };
        hits.detail_tabs
            .push((Rect::new(x, area.y, label.chars().count() as u16, 1), tab));
        x += label.chars().count() as u16;
        title.push(Span::styled(label, style));
    }
    title.push(Span::raw(" "));
    Line::from(title)
}

/// The lines in view of the shown tab.
fn tab_lines<'a>(tab: DetailTab, content: &Content<'a>) -> Shown<'a> {
    match tab {
        DetailTab::Answer => dac::answer(content),
        DetailTab::Feasibility => window(dac::feasibility(content), content),
        DetailTab::Commitments => window(dac::commitments(content), content),
        DetailTab::UserState => window(usr::user_state(content), content),
        DetailTab::Findings => window(general::findings(content), content),
        DetailTab::Raw => general::raw(content),
        DetailTab::Replay => window(general::replay(content), content),
        DetailTab::Expect => window(general::expect(content), content),
    }
}

/// No turn to show: a dialogue that failed before its first turn shows the whole failure
/// and what to do (the transcript above has room for its first lines only); otherwise what
/// it waits for.
fn no_turn(frame: &mut Frame, app: &App, d: &DialogueState, inner: Rect) {
    let t = app.theme();
    if let crate::tui::dialogue::Status::Failed(e) = &d.status
        && d.transcript.is_empty()
    {
        let lines = super::transcript::failure_lines(app, d, e);
        frame.render_widget(
            Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false }),
            inner,
        );
        return;
    }
    let hint = if d.link.pending().is_some() {
        "waiting for the reply…"
    } else {
        "no turn selected"
    };
    frame.render_widget(Paragraph::new(Line::styled(hint, t.muted())), inner);
}

/// The lines in view of a tab that made all its lines.
/// A line wider than the pane wraps: no content is ever cut without a mark.
pub(super) fn window<'a>(lines: Vec<Line<'a>>, c: &Content) -> Shown<'a> {
    let lines = wrapped(lines, c.width);
    let top = last_page(c, lines.len());
    Shown {
        lines: lines.into_iter().skip(top).take(c.take).collect(),
        top,
    }
}

/// Each line wider than `width` as the rows it wraps to; the others as they are.
pub(super) fn wrapped(lines: Vec<Line<'_>>, width: usize) -> Vec<Line<'_>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width.max(1) {
            out.push(line);
        } else {
            out.extend(super::text::wrap_words(line, width));
        }
    }
    out
}

/// The first line to show of `total`: the one asked for, or the last page's when that is
/// past the end.
pub(super) fn last_page(c: &Content, total: usize) -> usize {
    c.skip.min(total.saturating_sub(c.take.max(1)))
}

/// A value as it came where the data type has another type or no such value: its text and
/// a `?` (so that it reads as unknown without colour), in the error colour.
fn odd<'a>(app: &App, text: impl Into<String>) -> Span<'a> {
    Span::styled(
        format!("{}?", text.into()),
        app.theme().fg(app.theme().colors.error),
    )
}

/// A member's value as a span: known, in `style`; another, as it came (`odd`); absent, empty.
fn field<'a, T: std::fmt::Display>(
    app: &App,
    value: &crate::protocol::lenient::Field<T>,
    style: ratatui::style::Style,
) -> Span<'a> {
    use crate::protocol::lenient::Field;
    match value {
        Field::Absent => Span::raw(""),
        Field::Known(v) => Span::styled(v.to_string(), style),
        Field::Other(_) => odd(app, value.text()),
    }
}

/// An Outcome as the transcript and the tabs show it: known in its colour, another marked.
fn outcome<'a>(
    app: &App,
    outcome: &crate::protocol::lenient::Field<crate::protocol::message::Outcome>,
) -> Span<'a> {
    use crate::protocol::lenient::Field;
    let t = app.theme();
    match outcome {
        Field::Known(o) => Span::styled(o.as_str().replace('_', " "), t.bold(t.outcome(*o))),
        Field::Absent => Span::styled("(no Outcome)", t.bold(t.colors.error)),
        Field::Other(_) => odd(app, outcome.text()),
    }
}

/// Members a message has that its data type does not name (or, in an open object, that this
/// program does not know), each as its JSON: shown, never dropped.
fn members<'a>(
    app: &App,
    title: &str,
    other: &serde_json::Map<String, serde_json::Value>,
    width: usize,
) -> Vec<Line<'a>> {
    if other.is_empty() {
        return Vec::new();
    }
    let t = app.theme();
    let mut lines = vec![heading(app, title)];
    for (key, value) in other {
        lines.extend(super::text::wrap_line(
            Line::from(vec![
                Span::styled(format!("  {key}  "), t.fg(t.colors.json_key)),
                Span::raw(value.to_string()),
            ]),
            width,
        ));
    }
    lines
}

/// A bold heading line.
fn heading<'a>(app: &App, text: impl Into<String>) -> Line<'a> {
    Line::styled(
        text.into(),
        app.theme().bold(app.theme().colors.title_focused),
    )
}
