//! Drawing: a pure function of the explorer's state, which returns where it drew things
//! (`Hits`) for the next event. Each pane has its own module; none does I/O, and each draws
//! only what fits on screen, so a frame costs the same for a dialogue of ten turns or ten
//! thousand.

mod composer;
mod detail;
mod log;
pub(crate) mod overlays;
mod sidebar;
mod status;
mod tabs;
pub(crate) mod text;
mod transcript;

use crate::tui::action::Pane;
use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::layout;
use ratatui::Frame;
use ratatui::widgets::{Block, BorderType, Borders};

pub use crate::tui::overlay::help_lines;

/// Draws the whole screen; returns where things went.
pub fn render(frame: &mut Frame, app: &App) -> Hits {
    let area = frame.area();
    frame.render_widget(Block::default().style(app.theme().base()), area);
    let a = layout::areas(app, area);
    let mut hits = Hits::default();
    hits.panes.push((a.sidebar, Pane::Sidebar));
    hits.panes.push((a.transcript, Pane::Transcript));
    hits.panes.push((a.detail, Pane::Detail));
    hits.panes.push((a.composer, Pane::Composer));
    if let Some(l) = a.log {
        hits.panes.push((l, Pane::Log));
    }
    tabs::render(frame, app, a.tabs, &mut hits);
    if a.narrow {
        sidebar::render_line(frame, app, a.sidebar);
    } else {
        sidebar::render(frame, app, a.sidebar, &mut hits);
    }
    transcript::render(frame, app, a.transcript, &mut hits);
    detail::render(frame, app, a.detail, &mut hits);
    composer::render(frame, app, a.composer, a.composer_collapsed, &mut hits);
    if let Some(l) = a.log {
        log::render(frame, app, l, &mut hits);
    }
    status::render(frame, app, a.status);
    // Under the overlays: a question or the palette can open over it.
    crate::tui::certify::view::render(frame, app, area, &mut hits);
    overlays::render(frame, app, area, &mut hits);
    hits
}

/// A bordered block with a title, its colours saying whether its pane has the focus (and, so
/// that the focus shows without colour too, its border: thick when focused, and a ▶ before
/// its title).
/// A search's line: what is typed (with its cursor while it is typed), where the current match
/// is ("3/7"), and the keys.
fn search_line<'a>(
    app: &App,
    s: &crate::tui::search::Search,
    matches: usize,
) -> ratatui::text::Line<'a> {
    use ratatui::text::Span;
    let t = app.theme();
    let prompt = Span::styled("/", t.fg(t.colors.key_hint));
    let mut line = if s.editing {
        s.input.line(prompt, None)
    } else {
        ratatui::text::Line::from(vec![prompt, Span::raw(s.query().to_owned())])
    };
    let count = s.count(matches);
    if !count.is_empty() {
        line.spans
            .push(Span::styled(format!("  {count}"), t.bold(t.colors.accent)));
    }
    // The keys in use: the line's own while it is typed, the search place's after.
    use crate::tui::action::{Action, Context};
    let k = |a: Action, c: Context| {
        let keys = app.keymap().keys_in(&a, c);
        keys.split(" / ").next().unwrap_or("?").to_owned()
    };
    let keys = if s.editing {
        format!(
            "  {} keeps · {} ends",
            k(Action::Select, Context::Overlay),
            k(Action::Cancel, Context::Overlay)
        )
    } else {
        format!(
            "  {} next · {} previous · {} ends",
            k(Action::SearchNext, Context::Search),
            k(Action::SearchPrev, Context::Search),
            k(Action::Cancel, Context::Search)
        )
    };
    line.spans.push(Span::styled(keys, t.muted()));
    line
}

fn pane_block<'a>(
    app: &App,
    title: impl Into<ratatui::text::Line<'a>>,
    focused: bool,
) -> Block<'a> {
    let mut title = title.into();
    if focused {
        title.spans.insert(0, ratatui::text::Span::raw("▶"));
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(app.theme().border(focused))
        .title(title.style(app.theme().title(focused)))
}
