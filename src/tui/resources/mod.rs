//! The Resources overlay: what the server of the dialogue in view publishes (MCP
//! `resources/list`), one read (`resources/read`) shown beside the list, JSON pretty-printed,
//! to copy (OSC 52) or write to a file. One module with its state, keys, mouse and drawing
//! (`view`); update turns what it asks (`Ask`) into effects, and the runner reads on the
//! dialogue's own connection. The list is read again when the server says it changed
//! (`notifications/resources/list_changed`).

pub mod view;

use crate::client::engine::DialogueKey;
use crate::client::resources::{Listed, Read};
use crate::tui::action::{Action, Handled};
use crate::tui::hits::Hits;
use ratatui::crossterm::event::MouseEventKind;
use ratatui::crossterm::event::{KeyEvent, MouseButton, MouseEvent};
use ratatui::layout::Position;

/// Which side of the overlay the arrows move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    List,
    Content,
}

pub struct ResourcesOverlay {
    /// The dialogue whose connection lists and reads.
    pub dialogue: DialogueKey,
    pub server: String,
    /// None while the list is being read.
    pub list: Option<Result<Vec<Listed>, String>>,
    pub selected: usize,
    pub side: Side,
    /// The URI being read, if a read is under way.
    pub reading: Option<String>,
    /// The last resource read (or why it could not be).
    pub shown: Option<Result<Read, (String, String)>>,
    /// The first line of the content shown.
    pub scroll: usize,
}

/// What the overlay asks of the explorer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    Nothing,
    Close,
    /// Read the list again.
    List(DialogueKey),
    Read(DialogueKey, String),
    /// Put this text on the clipboard.
    Copy(String),
    /// Write this text to a file of the data directory.
    Write(String),
    /// A copy or a write with nothing read yet: say so.
    NothingRead,
}

/// Where the overlay's parts were drawn (`Hits::overlay_areas`).
pub const AREA_LIST: usize = 0;
pub const AREA_CONTENT: usize = 1;

impl ResourcesOverlay {
    pub fn new(dialogue: DialogueKey, server: String) -> ResourcesOverlay {
        ResourcesOverlay {
            dialogue,
            server,
            list: None,
            selected: 0,
            side: Side::List,
            reading: None,
            shown: None,
            scroll: 0,
        }
    }

    fn items(&self) -> &[Listed] {
        match &self.list {
            Some(Ok(items)) => items,
            _ => &[],
        }
    }

    /// The list came (or could not): the selection stays on the same URI when it is still
    /// there (a list read again after the server said it changed).
    pub fn listed(&mut self, result: Result<Vec<Listed>, String>) {
        let uri = self.items().get(self.selected).map(|r| r.uri.clone());
        self.list = Some(result);
        let items = self.items();
        self.selected = uri
            .and_then(|u| items.iter().position(|r| r.uri == u))
            .unwrap_or(0)
            .min(items.len().saturating_sub(1));
    }

    /// A read came back.
    pub fn read(&mut self, uri: String, result: Result<Read, String>) {
        if self.reading.as_deref() == Some(uri.as_str()) {
            self.reading = None;
        }
        self.scroll = 0;
        self.shown = Some(result.map_err(|e| (uri, e)));
    }

    /// The text a copy takes: the content shown.
    fn text(&self) -> Option<String> {
        match &self.shown {
            Some(Ok(read)) => Some(read.shown.clone()),
            _ => None,
        }
    }

    fn read_selected(&mut self) -> Ask {
        match self.items().get(self.selected).map(|r| r.uri.clone()) {
            Some(uri) => {
                self.reading = Some(uri.clone());
                Ask::Read(self.dialogue, uri)
            }
            None => Ask::Nothing,
        }
    }

    /// A key, and the action the key map gives it in overlays (so that keys.toml reaches
    /// them); `max` is the last page of the content the frame showed.
    pub fn key(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        max: Option<usize>,
    ) -> (Handled, Ask) {
        // A scroll stops at the last page the frame showed, so that going back up moves at
        // once.
        if let Some(max) = max {
            self.scroll = self.scroll.min(max);
        }
        let n = self.items().len();
        let list = self.side == Side::List;
        let ask = match action {
            Some(Action::Cancel | Action::Close) => Ask::Close,
            Some(
                Action::Complete
                | Action::FocusPrev
                | Action::NextDetailTab
                | Action::PrevDetailTab,
            ) => {
                self.side = if list { Side::Content } else { Side::List };
                Ask::Nothing
            }
            Some(Action::Select) => {
                self.side = Side::List;
                self.read_selected()
            }
            Some(Action::CopyJson) => self.text().map_or(Ask::NothingRead, Ask::Copy),
            Some(Action::Down) if list => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
                Ask::Nothing
            }
            Some(Action::Up) if list => {
                self.selected = self.selected.saturating_sub(1);
                Ask::Nothing
            }
            Some(Action::Top) if list => {
                self.selected = 0;
                Ask::Nothing
            }
            Some(Action::Bottom) if list => {
                self.selected = n.saturating_sub(1);
                Ask::Nothing
            }
            // The content scrolls as every box does (PgUp/PgDn from the list too).
            Some(
                a @ (Action::Down
                | Action::Up
                | Action::Top
                | Action::Bottom
                | Action::PageDown
                | Action::PageUp),
            ) => {
                crate::tui::overlay::scroll::keys(&mut self.scroll, Some(&a), max);
                Ask::Nothing
            }
            Some(Action::Reload) => {
                self.list = None;
                Ask::List(self.dialogue)
            }
            Some(Action::WriteJson) => self.text().map_or(Ask::NothingRead, Ask::Write),
            _ => return (crate::tui::overlay::leaves(key), Ask::Nothing),
        };
        (Handled::Consumed, ask)
    }

    /// A click on a row selects and reads it; the wheel scrolls what is under the pointer.
    pub fn mouse(&mut self, mouse: &MouseEvent, hits: &Hits) -> Ask {
        let at = Position::new(mouse.column, mouse.row);
        let area = Hits::find(&hits.overlay_areas, at);
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(row) = Hits::find(&hits.overlay_rows, at) {
                    self.selected = row;
                    self.side = Side::List;
                    return self.read_selected();
                }
                if area == Some(AREA_CONTENT) {
                    self.side = Side::Content;
                }
                Ask::Nothing
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let down = mouse.kind == MouseEventKind::ScrollDown;
                if area == Some(AREA_LIST) {
                    let n = self.items().len();
                    self.selected = if down {
                        (self.selected + 3).min(n.saturating_sub(1))
                    } else {
                        self.selected.saturating_sub(3)
                    };
                } else {
                    self.scroll = if down {
                        self.scroll + 3
                    } else {
                        self.scroll.saturating_sub(3)
                    };
                }
                Ask::Nothing
            }
            _ => Ask::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyCode;

    fn listed(uri: &str) -> Listed {
        Listed {
            uri: uri.into(),
            name: uri.into(),
            title: None,
            description: None,
            mime_type: Some("application/json".into()),
        }
    }

    /// A key as the overlay gets it: with the action the default key map gives it.
    fn press(o: &mut ResourcesOverlay, code: KeyCode) -> (Handled, Ask) {
        let key = KeyEvent::new(code, ratatui::crossterm::event::KeyModifiers::NONE);
        let action = crate::tui::action::Keymap::default()
            .action_in(&key, crate::tui::action::Context::Overlay);
        o.key(&key, action, None)
    }

    #[test]
    fn enter_reads_the_selected_resource_and_y_copies_it() {
        let mut o = ResourcesOverlay::new(7, "domain-access".into());
        assert_eq!(press(&mut o, KeyCode::Enter).1, Ask::Nothing, "no list yet");
        o.listed(Ok(vec![
            listed("dac://domain"),
            listed("dac://spaces/Square"),
        ]));
        press(&mut o, KeyCode::Down);
        assert_eq!(
            press(&mut o, KeyCode::Enter).1,
            Ask::Read(7, "dac://spaces/Square".into())
        );
        assert_eq!(o.reading.as_deref(), Some("dac://spaces/Square"));
        assert_eq!(
            press(&mut o, KeyCode::Char('y')).1,
            Ask::NothingRead,
            "nothing read"
        );
        o.read(
            "dac://spaces/Square".into(),
            Ok(Read {
                uri: "dac://spaces/Square".into(),
                mime_type: None,
                shown: "{}\n".into(),
                json: true,
            }),
        );
        assert_eq!(o.reading, None);
        assert_eq!(
            press(&mut o, KeyCode::Char('y')).1,
            Ask::Copy("{}\n".into())
        );
        // A list read again keeps the selection on its URI.
        o.listed(Ok(vec![
            listed("dac://a"),
            listed("dac://domain"),
            listed("dac://spaces/Square"),
        ]));
        assert_eq!(o.selected, 2);
        assert_eq!(press(&mut o, KeyCode::Char('r')).1, Ask::List(7));
        assert_eq!(press(&mut o, KeyCode::Esc).1, Ask::Close);
    }
}
