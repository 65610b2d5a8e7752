//! The Export overlay: the turn selected (or the draft) as command lines that reach the same
//! server (`lines`: `bkn-explorer send`, and `curl` for an HTTP server), each to copy (OSC 52)
//! or write to a file. One module with its state, keys, mouse and drawing (`view`).

pub mod lines;
pub mod view;

use crate::tui::action::{Action, Handled};
use crate::tui::hits::Hits;
use lines::Block;
use ratatui::crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
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

    /// A key, and the action the key map gives it in overlays (so that keys.toml reaches
    /// them); `max` is the last page the frame showed.
    pub fn key(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        max: Option<usize>,
    ) -> (Handled, Ask) {
        if let Some(max) = max {
            self.scroll = self.scroll.min(max);
        }
        let n = self.blocks.len().max(1);
        let ask = match action {
            Some(Action::Cancel | Action::Close) => Ask::Close,
            Some(Action::Complete | Action::Down | Action::NextDetailTab) => {
                self.selected = (self.selected + 1) % n;
                Ask::Nothing
            }
            Some(Action::FocusPrev | Action::Up | Action::PrevDetailTab) => {
                self.selected = (self.selected + n - 1) % n;
                Ask::Nothing
            }
            Some(Action::Select | Action::CopyJson) => {
                self.chosen().map_or(Ask::Nothing, Ask::Copy)
            }
            Some(a @ (Action::Top | Action::Bottom | Action::PageDown | Action::PageUp)) => {
                crate::tui::overlay::scroll::keys(&mut self.scroll, Some(&a), max);
                Ask::Nothing
            }
            Some(Action::WriteJson) => self.chosen().map_or(Ask::Nothing, Ask::Write),
            // A command line by what it is (1 send, 2 curl; a stdio server has no curl).
            Some(a @ (Action::ExportSend | Action::ExportCurl)) => {
                if let Some(i) = self.blocks.iter().position(|b| b.format.action() == a) {
                    self.selected = i;
                }
                Ask::Nothing
            }
            _ => return (crate::tui::overlay::leaves(key), Ask::Nothing),
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
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn tab_chooses_a_block_and_y_copies_it() {
        let block = |t: &str| Block {
            format: if t == "send" {
                lines::Format::Send
            } else {
                lines::Format::Curl
            },
            title: t.into(),
            text: format!("{t} line"),
            notes: Vec::new(),
        };
        let mut o = ExportOverlay::new("turn 0".into(), vec![block("send"), block("curl")]);
        let press = |o: &mut ExportOverlay, code| {
            let key = KeyEvent::new(code, KeyModifiers::NONE);
            let action = crate::tui::action::Keymap::default()
                .action_in(&key, crate::tui::action::Context::Overlay);
            o.key(&key, action, None)
        };
        assert_eq!(
            press(&mut o, KeyCode::Char('y')).1,
            Ask::Copy("send line".into())
        );
        press(&mut o, KeyCode::Tab);
        assert_eq!(
            press(&mut o, KeyCode::Char('y')).1,
            Ask::Copy("curl line".into())
        );
        assert_eq!(
            press(&mut o, KeyCode::Char('W')).1,
            Ask::Write("curl line".into())
        );
        press(&mut o, KeyCode::Tab);
        assert_eq!(o.selected, 0);
        // 2 is curl, 1 send (by what they are, keys.toml's export-curl and export-send).
        press(&mut o, KeyCode::Char('2'));
        assert_eq!(o.selected, 1);
        press(&mut o, KeyCode::Char('1'));
        assert_eq!(o.selected, 0);
        assert_eq!(press(&mut o, KeyCode::Esc).1, Ask::Close);
        // keys.toml chooses them by other keys; the digits are then nothing.
        let (map, problems) = crate::tui::keys_file::apply(
            "[overlay]\nexport-send = \"Alt-s\"\nexport-curl = \"Alt-c\"\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        let with = |o: &mut ExportOverlay, code, modifiers| {
            let key = KeyEvent::new(code, modifiers);
            let action = map.action_in(&key, crate::tui::action::Context::Overlay);
            o.key(&key, action, None)
        };
        with(&mut o, KeyCode::Char('c'), KeyModifiers::ALT);
        assert_eq!(o.selected, 1);
        assert_eq!(
            with(&mut o, KeyCode::Char('1'), KeyModifiers::NONE).1,
            Ask::Nothing
        );
        assert_eq!(o.selected, 1);
        with(&mut o, KeyCode::Char('s'), KeyModifiers::ALT);
        assert_eq!(o.selected, 0);
        // A stdio server's export has no curl line: 2 stays on send.
        let mut o = ExportOverlay::new("turn 0".into(), vec![block("send")]);
        press(&mut o, KeyCode::Char('2'));
        assert_eq!(o.selected, 0);
    }
}
