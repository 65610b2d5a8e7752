//! How the Resources overlay is drawn: the list on the left (the selected row marked `›` and
//! in reverse video, so that it shows without colour), the resource read on the right (JSON
//! coloured, only the lines that fit), the keys at the bottom.

use super::{AREA_CONTENT, AREA_LIST, ResourcesOverlay, Side};
use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::view::overlays::{centered, open_box};
use crate::tui::view::text::{cut, json_line, wrap_line};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

pub fn render(frame: &mut Frame, app: &App, o: &ResourcesOverlay, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let r = centered(
        area,
        area.width.saturating_sub(4).min(150),
        area.height.saturating_sub(2),
    );
    let title = format!(" Resources · {} ", o.server);
    let inner = open_box(frame, app, r, &title, hits);
    if inner.height < 3 || inner.width < 20 {
        return;
    }
    let keys = Rect::new(inner.x, inner.y + inner.height - 1, inner.width, 1);
    let body = Rect::new(inner.x, inner.y, inner.width, inner.height - 1);
    let list_width = (body.width * 2 / 5).clamp(16, 52).min(body.width / 2);
    let list = Rect::new(body.x, body.y, list_width, body.height);
    let content = Rect::new(
        body.x + list_width,
        body.y,
        body.width - list_width,
        body.height,
    );
    hits.overlay_areas.push((list, AREA_LIST));
    hits.overlay_areas.push((content, AREA_CONTENT));
    render_list(frame, app, o, list, hits);
    render_content(frame, app, o, content, hits);
    use crate::tui::action::Action as A;
    let hint = crate::tui::overlay::key_hint(
        app.keymap(),
        &[
            (&[A::Select], "read"),
            (&[A::Complete], "list/content"),
            (&[A::Up, A::Down], "move"),
            (&[A::CopyJson], "copy"),
            (&[A::WriteJson], "write to a file"),
            (&[A::Reload], "reload"),
            (&[A::Cancel], "close"),
        ],
    );
    frame.render_widget(
        Paragraph::new(Line::styled(
            cut(&hint, keys.width as usize),
            t.fg(t.colors.key_hint),
        )),
        keys,
    );
}

fn side_block<'a>(app: &App, title: String, focused: bool) -> Block<'a> {
    let title = if focused {
        format!("▶{title}")
    } else {
        title
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            ratatui::widgets::BorderType::Thick
        } else {
            ratatui::widgets::BorderType::Plain
        })
        .border_style(app.theme().border(focused))
        .title(Line::styled(title, app.theme().title(focused)))
}

fn render_list(frame: &mut Frame, app: &App, o: &ResourcesOverlay, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let count = match &o.list {
        Some(Ok(items)) => format!(" {} ", items.len()),
        _ => " ".into(),
    };
    let block = side_block(app, format!(" List{count}"), o.side == Side::List);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let items = match &o.list {
        None => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    format!("{} reading the list…", app.spinner()),
                    t.muted(),
                )),
                inner,
            );
            return;
        }
        Some(Err(e)) => {
            let lines: Vec<Line> =
                crate::tui::view::text::wrap_window(e, width, 0, inner.height as usize)
                    .into_iter()
                    .map(|l| Line::styled(l, t.fg(t.colors.error)))
                    .collect();
            frame.render_widget(Paragraph::new(lines), inner);
            return;
        }
        Some(Ok(items)) if items.is_empty() => {
            frame.render_widget(
                Paragraph::new(Line::styled("the server lists no resources", t.muted())),
                inner,
            );
            return;
        }
        Some(Ok(items)) => items,
    };
    // Two lines a resource: its URI, then its name or title (muted).
    let rows = (inner.height as usize / 2).max(1);
    let top = o.selected.saturating_sub(rows - 1);
    let mut y = inner.y;
    for (i, item) in items.iter().enumerate().skip(top).take(rows) {
        let selected = i == o.selected;
        let mark = if selected { "› " } else { "  " };
        let style = if selected { t.selected() } else { t.base() };
        let uri = Line::from(vec![Span::styled(
            format!(
                "{mark}{:<w$}",
                cut(&item.uri, width.saturating_sub(2)),
                w = width - 2
            ),
            style,
        )]);
        let about = item.title.as_deref().unwrap_or(&item.name).to_owned();
        let mime = item.mime_type.as_deref().unwrap_or("");
        let about = Line::styled(cut(&format!("  {about}  {mime}"), width), t.muted());
        let r = Rect::new(inner.x, y, inner.width, 2.min(inner.y + inner.height - y));
        hits.overlay_rows.push((r, i));
        frame.render_widget(Paragraph::new(vec![uri, about]), r);
        y += 2;
        if y >= inner.y + inner.height {
            break;
        }
    }
}

fn render_content(frame: &mut Frame, app: &App, o: &ResourcesOverlay, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let title = match (&o.reading, &o.shown) {
        (Some(uri), _) => format!(" {} reading {uri} ", app.spinner()),
        (None, Some(Ok(read))) => format!(
            " {} · {}{} ",
            read.uri,
            read.mime_type.as_deref().unwrap_or("no MIME type"),
            if read.json { " · JSON" } else { "" }
        ),
        (None, Some(Err((uri, _)))) => format!(" {uri} "),
        (None, None) => " Content ".into(),
    };
    let block = side_block(app, title, o.side == Side::Content);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let height = inner.height as usize;
    let lines: Vec<Line> = match &o.shown {
        None => vec![Line::styled(
            format!(
                "{} (or a click) reads the selected resource",
                crate::tui::overlay::key_of(app.keymap(), &crate::tui::action::Action::Select)
            ),
            t.muted(),
        )],
        Some(Err((_, e))) => crate::tui::view::text::wrap_window(e, width, 0, height)
            .into_iter()
            .map(|l| Line::styled(l, t.fg(t.colors.error)))
            .collect(),
        Some(Ok(read)) => {
            let total = read.shown.lines().count();
            let max = total.saturating_sub(height);
            hits.overlay_scroll_max = Some(max);
            let top = o.scroll.min(max);
            // Long lines wrap (a description, a long string): only those from the top down
            // to the height are wrapped, whatever the size of the resource.
            let mut shown = Vec::new();
            for l in read.shown.lines().skip(top) {
                let line = if read.json {
                    json_line(l, t, usize::MAX)
                } else {
                    Line::raw(l)
                };
                for row in wrap_line(line, width) {
                    if shown.len() == height {
                        break;
                    }
                    shown.push(row);
                }
                if shown.len() == height {
                    break;
                }
            }
            shown
        }
    };
    frame.render_widget(Paragraph::new(lines), inner);
}
