//! The Export overlay: the turn selected (or the draft) as command lines that reach the same
//! server (`lines`: `bkn-explorer send`, and `curl` for an HTTP server), each to copy (OSC 52)
//! or write to a file. One module with its state, keys, mouse and drawing (`view`).

pub mod lines;
pub mod view;

use crate::tui::action::Handled;
use crate::tui::hits::Hits;
use lines::Block;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Position;

pub struct ExportOverlay {
    /// What is exported, in words ("turn 3", "the draft").
    pub what: String,
    pub blocks: Vec<Block>,
    pub selected: usize,
    /// The first line shown.
    pub scroll: usize,
}

/// What the overlay asks of the explorer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    Nothing,
    Close,
    Copy(String),
    Write(String),
}

impl ExportOverlay {
    pub fn new(what: String, blocks: Vec<Block>) -> ExportOverlay {
        ExportOverlay {
            what,
            blocks,
            selected: 0,
            scroll: 0,
        }
    }

    fn chosen(&self) -> Option<String> {
        self.blocks.get(self.selected).map(|b| b.text.clone())
    }

    pub fn key(&mut self, key: &KeyEvent, max: Option<usize>) -> (Handled, Ask) {
        // A scroll stops at the last page the frame showed, so that going back up moves at
        // once.
        if let Some(max) = max {
            self.scroll = self.scroll.min(max);
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) || matches!(key.code, KeyCode::F(_)) {
            return (Handled::Ignored, Ask::Nothing);
        }
        let n = self.blocks.len();
        let ask = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Ask::Close,
            KeyCode::Tab | KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1) % n.max(1);
                Ask::Nothing
            }
            KeyCode::BackTab | KeyCode::Up | KeyCode::Char('k') => {
                self.selected = (self.selected + n.max(1) - 1) % n.max(1);
                Ask::Nothing
            }
            KeyCode::Char(c @ '1'..='9') => {
                let i = c as usize - '1' as usize;
                if i < n {
                    self.selected = i;
                }
                Ask::Nothing
            }
            KeyCode::Char('y') | KeyCode::Enter => self.chosen().map_or(Ask::Nothing, Ask::Copy),
            KeyCode::Char('W') => self.chosen().map_or(Ask::Nothing, Ask::Write),
            KeyCode::PageDown => {
                self.scroll += 10;
                Ask::Nothing
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                Ask::Nothing
            }
            _ => Ask::Nothing,
        };
        (Handled::Consumed, ask)
    }

    /// A click on a block chooses it; the wheel scrolls.
    pub fn mouse(&mut self, mouse: &MouseEvent, hits: &Hits) -> Ask {
        let at = Position::new(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(i) = Hits::find(&hits.overlay_rows, at) {
                    self.selected = i;
                }
            }
            MouseEventKind::ScrollDown => self.scroll += 3,
            MouseEventKind::ScrollUp => self.scroll = self.scroll.saturating_sub(3),
            _ => {}
        }
        Ask::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tab_chooses_a_block_and_y_copies_it() {
        let block = |t: &str| Block {
            title: t.into(),
            text: format!("{t} line"),
            notes: Vec::new(),
        };
        let mut o = ExportOverlay::new("turn 0".into(), vec![block("send"), block("curl")]);
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(
            o.key(&key(KeyCode::Char('y')), None).1,
            Ask::Copy("send line".into())
        );
        o.key(&key(KeyCode::Tab), None);
        assert_eq!(
            o.key(&key(KeyCode::Char('y')), None).1,
            Ask::Copy("curl line".into())
        );
        assert_eq!(
            o.key(&key(KeyCode::Char('W')), None).1,
            Ask::Write("curl line".into())
        );
        o.key(&key(KeyCode::Tab), None);
        assert_eq!(o.selected, 0);
        assert_eq!(o.key(&key(KeyCode::Esc), None).1, Ask::Close);
    }
}
