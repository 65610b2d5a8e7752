//! The protocol log pane: JSON-RPC traffic both ways, server logs and progress, stderr and
//! the client's notes, filterable; only the entries on screen are drawn.

use crate::client::event::{LogEntry, LogKind};
use crate::tui::action::{Action, Context, Pane};
use crate::tui::app::App;
use crate::tui::search::Search;
use crate::tui::view::text::cut;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use time::OffsetDateTime;

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut crate::tui::hits::Hits) {
    let t = app.theme();
    let focused = app.focus() == Pane::Log;
    let log = &app.log;
    // The keys in use (keys.toml's): the log's place, and the global select and copy.
    let k = |a: Action, c: Context| {
        let keys = app.keymap().keys_in(&a, c);
        keys.split(" / ").next().unwrap_or("?").to_owned()
    };
    let in_log = Context::Pane(Pane::Log);
    let foot = format!(
        " {} opens · {} search · {} filter · {} follow · {} clear · {} copy ",
        k(Action::Select, Context::Global),
        k(Action::Search, in_log),
        k(Action::FilterLog, in_log),
        k(Action::ToggleFollowLog, in_log),
        k(Action::ClearLog, in_log),
        k(Action::CopyJson, Context::Global),
    );
    let block = super::pane_block(app, title(app), focused)
        .title_bottom(Line::styled(foot, t.muted()).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // A search: its line at the bottom, the matches marked in the rows.
    let search = app.search.as_ref().filter(|s| s.pane == Pane::Log);
    let found: &[usize] = search.map_or(&[], |s| &s.found);
    let height = bottom_lines(frame, app, inner, search) as usize;
    let current = search.and_then(|s| found.get(s.current.min(found.len().saturating_sub(1))));
    let n = log.visible_len();
    let selected = log.selected.unwrap_or(n.saturating_sub(1));
    let top = (selected + 1)
        .saturating_sub(height)
        .min(n.saturating_sub(height.min(n)));
    for (row, i) in (top..(top + height).min(n)).enumerate() {
        hits.log_rows
            .push((Rect::new(inner.x, inner.y + row as u16, inner.width, 1), i));
    }
    let lines: Vec<Line> = (top..(top + height).min(n))
        .filter_map(|i| log.visible(i).map(|e| (i, e)))
        .map(|(i, e)| {
            let found_here = search.map(|s| (s, current == Some(&i)));
            let line = entry_line(app, e, inner.width as usize, found_here);
            if focused && i == selected {
                line.style(t.selected())
            } else {
                line
            }
        })
        .collect();
    if lines.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("nothing logged yet", t.muted())),
            inner,
        );
    } else {
        frame.render_widget(Paragraph::new(lines).style(t.base()), inner);
    }
}

/// "Protocol log (shown of all) · filter … · following".
fn title(app: &App) -> String {
    let log = &app.log;
    let filter = if log.filter.is_empty() {
        String::new()
    } else {
        format!(" · filter \"{}\"", log.filter)
    };
    let follow = if log.follow { " · following" } else { "" };
    format!(
        " Protocol log ({} of {}){filter}{follow} ",
        log.visible_len(),
        log.total()
    )
}

/// The filter being typed and the search, each on a line at the bottom. Returns the rows
/// left above them for the entries.
fn bottom_lines(frame: &mut Frame, app: &App, inner: Rect, search: Option<&Search>) -> u16 {
    let mut height = inner.height;
    if app.log.editing_filter {
        height = height.saturating_sub(1);
        let line = app.log.filter_input.line(
            Span::styled("filter: ", app.theme().fg(app.theme().colors.key_hint)),
            None,
        );
        frame.render_widget(
            Paragraph::new(line),
            Rect::new(inner.x, inner.y + height, inner.width, 1),
        );
    }
    if let Some(s) = search {
        height = height.saturating_sub(1);
        frame.render_widget(
            Paragraph::new(super::search_line(app, s, s.found.len())),
            Rect::new(inner.x, inner.y + height, inner.width, 1),
        );
    }
    height
}

/// An entry's row: when, on which connection, what kind, its first line (the search's
/// matches marked, the current one when `here`), and its size when it was cut.
fn entry_line<'a>(
    app: &App,
    e: &LogEntry,
    width: usize,
    search: Option<(&Search, bool)>,
) -> Line<'a> {
    let t = app.theme();
    let c = &t.colors;
    let color = match e.kind {
        LogKind::Sent => c.log_sent,
        LogKind::Received => c.log_received,
        LogKind::ServerLog => c.log_server,
        LogKind::Progress => c.log_progress,
        LogKind::Stderr => c.log_stderr,
        LogKind::Client => c.log_client,
    };
    let at = OffsetDateTime::from(e.at);
    let stamp = format!(
        "{:02}:{:02}:{:02}.{:03} ",
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    );
    let size = if e.truncated() {
        format!(" [{} bytes, cut]", e.size)
    } else {
        String::new()
    };
    let first = e.text.lines().next().unwrap_or_default();
    let room = width.saturating_sub(stamp.len() + 14 + size.len());
    let mut text = Line::from(Span::styled(cut(first, room), t.fg(c.foreground)));
    if let Some((s, here)) = search {
        let at = crate::tui::search::columns(first, s.query())
            .first()
            .copied();
        text = crate::tui::search::highlight(text, s.query(), at.filter(|_| here));
    }
    let mut spans = vec![
        Span::styled(stamp, t.muted()),
        Span::styled(format!("#{:<3}", e.connection), t.muted()),
        Span::styled(format!("{:<9}", e.kind.label()), t.bold(color)),
    ];
    spans.extend(text.spans);
    spans.push(Span::styled(size, t.muted()));
    Line::from(spans)
}
