//! Where render drew things: returned by `view::render` as a value, kept by the runner, and
//! given to update with the next event so that a mouse click finds what is under it and
//! scrolling continues from what is on screen. Nothing in the state is written by render.

use crate::client::engine::DialogueKey;
use crate::tui::action::Pane;
use crate::tui::app::{DetailTab, SidebarRow};
use crate::tui::ids::DialogueId;
use ratatui::layout::{Position, Rect};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hits {
    pub panes: Vec<(Rect, Pane)>,
    /// The dialogue tabs of the top line.
    pub tabs: Vec<(Rect, DialogueId)>,
    /// The sidebar's rows, by what they show.
    pub sidebar_rows: Vec<(Rect, SidebarRow)>,
    /// The transcript's data rows, and the turn on the first of them.
    pub transcript_rows: Rect,
    pub transcript_top: usize,
    pub detail_tabs: Vec<(Rect, DetailTab)>,
    /// The first line of the detail shown, and whose: less than the scroll asked for when
    /// that is past the end (the last page shows).
    pub detail_top: Option<(DialogueKey, usize)>,
    /// How many lines the detail pane shows (a page).
    pub detail_height: usize,
    /// The composer's rows (form fields by row index).
    pub composer_rows: Vec<(Rect, usize)>,
    /// The items of an open completion list.
    pub completion_items: Vec<(Rect, usize)>,
    /// The protocol log's rows, by entry (an index into the visible entries).
    pub log_rows: Vec<(Rect, usize)>,
    /// The overlay's box, when one is open (a click outside closes it).
    pub overlay: Option<Rect>,
    /// An overlay's list rows (palette entries, sessions), by item.
    pub overlay_rows: Vec<(Rect, usize)>,
    /// The parts of an overlay, by the overlay's own numbers (the Resources overlay's list
    /// and content: where the wheel scrolls).
    pub overlay_areas: Vec<(Rect, usize)>,
    /// How far a scrolling overlay (help, messages, a log entry) can scroll: its last page.
    pub overlay_scroll_max: Option<usize>,
}

impl Hits {
    pub fn pane_at(&self, at: Position) -> Option<Pane> {
        self.panes
            .iter()
            .find(|(r, _)| r.contains(at))
            .map(|(_, p)| *p)
    }

    pub fn find<T: Copy>(list: &[(Rect, T)], at: Position) -> Option<T> {
        list.iter().find(|(r, _)| r.contains(at)).map(|(_, t)| *t)
    }
}
