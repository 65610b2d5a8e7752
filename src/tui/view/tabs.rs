//! The top line: the explorer's name, the dialogue tabs (scrolled so that the one shown is
//! always in view, with how many are hidden on each side), the theme and the help key.

use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::dialogue::{DialogueState, Status};
use crate::tui::hits::Hits;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

const NAME: &str = " bkn-explorer ";

pub fn render(frame: &mut Frame, app: &App, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let c = &t.colors;
    // The theme's name only where there is room for it: tabs come first.
    let help = app.keymap().first_key(&Action::Help);
    let right = if area.width >= 100 {
        format!(" {} │ {help} help ", t.name)
    } else {
        format!(" {help} help ")
    };
    let fixed = NAME.chars().count() + 1 + right.chars().count();
    let free = (area.width as usize).saturating_sub(fixed);
    let shown = app
        .workspace()
        .current()
        .and_then(|c| app.workspace().dialogues().position(c));
    let (labels, start, end) = fit_tabs(app, shown.unwrap_or(0), free);
    let mut spans = vec![
        Span::styled(NAME, t.bold(c.accent)),
        Span::styled("│", t.fg(c.border)),
    ];
    let mut x = area.x + NAME.chars().count() as u16 + 1;
    if start > 0 {
        let more = format!(" ‹{start} ");
        x += more.chars().count() as u16;
        spans.push(Span::styled(more, t.muted()));
    }
    for ((i, label), id) in labels
        .iter()
        .enumerate()
        .zip(app.workspace().dialogues().ids())
        .take(end)
        .skip(start)
    {
        let style = if Some(i) == shown {
            t.fg(c.tab_active_fg)
                .bg(c.tab_active_bg)
                .add_modifier(Modifier::BOLD)
        } else {
            t.fg(c.tab_inactive)
        };
        let w = label.chars().count() as u16;
        hits.tabs.push((Rect::new(x, area.y, w, 1), id));
        spans.push(Span::styled(label.clone(), style));
        x += w;
    }
    if end < labels.len() {
        spans.push(Span::styled(
            format!(" {}› ", labels.len() - end),
            t.muted(),
        ));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let pad = (area.width as usize).saturating_sub(used + right.chars().count());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, t.muted()));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(t.base()), area);
}

/// The tabs' labels and the window of them shown in `free` columns: every tab with names cut
/// to 18 characters; when they do not all fit, names cut shorter (down to 8) before a tab is
/// hidden; only then the window round the shown one, beside its "‹ 3" / "3 ›" markers, with
/// the longest names that show the most tabs.
fn fit_tabs(app: &App, current: usize, free: usize) -> (Vec<String>, usize, usize) {
    let labels_at = |cap: usize| -> Vec<String> {
        app.workspace()
            .dialogues()
            .values()
            .zip(distinct_names(app, cap))
            .enumerate()
            .map(|(i, (d, name))| tab_label(app, i, d, &name, cap))
            .collect()
    };
    let width = |labels: &[String]| labels.iter().map(|l| l.chars().count()).sum::<usize>();
    for cap in (8..=18).rev() {
        let labels = labels_at(cap);
        if width(&labels) <= free {
            let n = labels.len();
            return (labels, 0, n);
        }
    }
    // Room for the tabs, less the "‹ 3" and "3 ›" markers now needed: the longest names
    // that show the most tabs.
    let room = free.saturating_sub(8);
    let mut best = (labels_at(18), 0, 0);
    for cap in (8..=18).rev() {
        let labels = labels_at(cap);
        let (start, end) = tab_window(&labels, current, room);
        if end - start > best.2 - best.1 {
            best = (labels, start, end);
        }
    }
    best
}

/// Each dialogue's name as its tab shows it: what tells it apart from the others. A name no
/// other dialogue has as it is; names equal to another's, with the short DialogID (or `#N`
/// before the dialogue has one); names longer than `cap` that differ only after a long common
/// part, with that part cut (`…` and the rest), so the distinguishing end shows.
fn distinct_names(app: &App, cap: usize) -> Vec<String> {
    let all: Vec<(&str, Option<&str>)> = app
        .workspace()
        .dialogues()
        .values()
        .map(|d| (d.name.as_str(), d.link.dialog_id()))
        .collect();
    all.iter()
        .enumerate()
        .map(|(i, (name, id))| {
            let others = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (n, _))| *n);
            let mut same = false;
            let mut common = 0usize;
            for other in others {
                if other == *name {
                    same = true;
                } else {
                    let shared = name
                        .chars()
                        .zip(other.chars())
                        .take_while(|(a, b)| a == b)
                        .count();
                    common = common.max(shared);
                }
            }
            if same {
                let tag = match id {
                    Some(id) => super::text::short_id(id),
                    None => format!("#{}", i + 1),
                };
                // The tag first: it is what a cut name would lose.
                format!("{tag} {name}")
            } else if common > 6 && name.chars().count() > cap {
                // Cut at the start of the word before the difference, for context
                // (`…live 2` of `127.0.0.1:18080 live 2`).
                let shared: String = name.chars().take(common).collect();
                let from = shared
                    .trim_end()
                    .rfind(' ')
                    .map_or(0, |space| shared[..space + 1].chars().count());
                // As much of the name's end as the cap holds, the difference always in it.
                let len = name.chars().count();
                let from = from.min(len.saturating_sub(cap.saturating_sub(1)));
                if from == 0 {
                    (*name).to_owned()
                } else {
                    format!("…{}", name.chars().skip(from).collect::<String>())
                }
            } else {
                (*name).to_owned()
            }
        })
        .collect()
}

/// A dialogue's tab: its number, its state (recorded, live, failed, a turn in flight) and
/// its name (as `distinct_names` made it) cut to `cap` characters.
fn tab_label(app: &App, i: usize, d: &DialogueState, name: &str, cap: usize) -> String {
    let mark = match d.status {
        Status::Recorded => "◆ ".to_owned(),
        Status::Live => "◉ ".to_owned(),
        Status::Unfollowed(how) => format!("{} ", how.mark()),
        Status::Failed(_) | Status::Closed(_) => "✗ ".to_owned(),
        _ if d.link.pending().is_some() => format!("{} ", app.spinner()),
        _ => String::new(),
    };
    format!(" {} {mark}{} ", i + 1, super::text::cut(name, cap))
}

/// The tabs that fit in `room` (first, past the last): from the first, moved right until
/// the current one fits.
fn tab_window(labels: &[String], current: usize, room: usize) -> (usize, usize) {
    let width = |i: usize| labels[i].chars().count();
    let current = current.min(labels.len().saturating_sub(1));
    let mut start = 0;
    while start < current && (start..=current).map(width).sum::<usize>() > room {
        start += 1;
    }
    let mut end = start;
    let mut used = 0;
    while end < labels.len() && used + width(end) <= room {
        used += width(end);
        end += 1;
    }
    (start, end)
}
