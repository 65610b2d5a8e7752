//! What the boxes that only scroll share (help, the run's messages, a log entry): their keys,
//! the wheel, and the page of lines they draw.

use super::{Outcome, OverlayHits};
use crate::tui::action::{Action, Handled};
use ratatui::text::Line;

/// Lines a page key moves.
const PAGE: usize = 10;

/// A scroll key moves; any other key closes the box. `max` is the last page the frame
/// showed: a scroll stops there, so that going back up moves at once.
pub fn keys(scroll: &mut usize, action: Option<&Action>, max: Option<usize>) -> (Handled, Outcome) {
    match action {
        Some(Action::Down) => *scroll += 1,
        Some(Action::Up) => *scroll = scroll.saturating_sub(1),
        Some(Action::PageDown) => *scroll += PAGE,
        Some(Action::PageUp) => *scroll = scroll.saturating_sub(PAGE),
        Some(Action::Top) => *scroll = 0,
        Some(Action::Bottom) => *scroll = usize::MAX / 2,
        _ => return (Handled::Consumed, Outcome::Close),
    }
    if let Some(max) = max {
        *scroll = (*scroll).min(max);
    }
    (Handled::Consumed, Outcome::Stay)
}

pub fn wheel(scroll: &mut usize, down: bool) {
    *scroll = if down {
        *scroll + 3
    } else {
        scroll.saturating_sub(3)
    };
}

/// The lines from `scroll` (at most the last page), and how far the box can scroll.
pub fn page<'a>(
    lines: Vec<Line<'a>>,
    scroll: usize,
    height: usize,
    hits: &mut OverlayHits,
) -> Vec<Line<'a>> {
    let max = lines.len().saturating_sub(height);
    hits.scroll_max = Some(max);
    lines
        .into_iter()
        .skip(scroll.min(max))
        .take(height)
        .collect()
}
