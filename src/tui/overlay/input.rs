//! The one-line editor of every prompt, the palette, the Open overlay, the defaults form, a
//! server's questions and the log's filter: a `ratatui_textarea::TextArea` kept to one line,
//! with one set of keys (readline's, as the composer's fields mostly have them):
//!
//! - ← → Home End, Ctrl-B Ctrl-F Ctrl-A Ctrl-E: move; Alt-B Alt-F, Ctrl-← Ctrl-→: by word
//! - Backspace Delete Ctrl-H Ctrl-D: a character; Ctrl-W Alt-Backspace / Alt-D: a word
//! - Ctrl-U: to the start of the line; Ctrl-K: to its end; Ctrl-Y: back what they cut
//!
//! A paste is one line: its line ends (CR, CRLF or LF, as terminals send them) become spaces
//! and trailing ones are dropped, so nothing pasted is lost and nothing breaks the line.

use crate::tui::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui_textarea::{CursorMove, TextArea};

#[derive(Clone, Debug)]
pub struct Input {
    area: TextArea<'static>,
}

impl Default for Input {
    fn default() -> Self {
        Input::new("")
    }
}

impl PartialEq for Input {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text() && self.cursor() == other.cursor()
    }
}

impl Eq for Input {}

impl Input {
    /// An editor holding `text` (one line of it), the cursor at its end.
    pub fn new(text: &str) -> Input {
        let mut area = TextArea::new(vec![one_line(text)]);
        area.move_cursor(CursorMove::End);
        Input { area }
    }

    pub fn text(&self) -> &str {
        self.area.lines().first().map_or("", String::as_str)
    }

    /// The cursor, in characters.
    pub fn cursor(&self) -> usize {
        self.area.cursor().1
    }

    /// Edits for a key, with its action in the key map's `edit` place (`Keymap::edit`):
    /// whether the text changed, or `None` when the key is not the editor's (Enter, Tab, Esc,
    /// ↑ ↓, function keys and other Ctrl keys are left to the overlay). A character is always
    /// typed, whatever keys.toml binds it to.
    pub fn key(&mut self, key: &KeyEvent, edit: Option<&Action>) -> Option<bool> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let a = &mut self.area;
        let before = a.lines()[0].clone();
        if let KeyCode::Char(c) = key.code
            && !ctrl
            && !alt
        {
            a.insert_char(c);
            return Some(self.text() != before);
        }
        match edit? {
            Action::LineStart => a.move_cursor(CursorMove::Head),
            Action::LineEnd => a.move_cursor(CursorMove::End),
            Action::CursorLeft => a.move_cursor(CursorMove::Back),
            Action::CursorRight => a.move_cursor(CursorMove::Forward),
            Action::WordLeft => a.move_cursor(CursorMove::WordBack),
            Action::WordRight => a.move_cursor(CursorMove::WordForward),
            Action::DeleteBack => {
                a.delete_char();
            }
            Action::DeleteForward => {
                a.delete_next_char();
            }
            Action::DeleteWordBack => {
                a.delete_word();
            }
            Action::DeleteWordForward => {
                a.delete_next_word();
            }
            Action::DeleteToStart => {
                a.delete_line_by_head();
            }
            Action::DeleteToEnd => {
                a.delete_line_by_end();
            }
            Action::PutBack => {
                // What the cuts took, kept to one line.
                let yank = one_line(&a.yank_text());
                a.insert_str(yank);
            }
            _ => return None,
        }
        Some(self.text() != before)
    }

    /// Inserts pasted (or completed) text at the cursor, as one line.
    pub fn insert_str(&mut self, s: &str) -> bool {
        let s = one_line(s);
        !s.is_empty() && self.area.insert_str(s)
    }

    /// Replaces the whole text (the cursor at its end).
    pub fn set(&mut self, text: &str) {
        *self = Input::new(text);
    }

    /// The line with its cursor, after `prefix`; `mask` shows every character as it (a
    /// secret). The cursor is reverse video: it shows without colour.
    pub fn line<'a>(&self, prefix: Span<'a>, mask: Option<char>) -> Line<'a> {
        let chars: Vec<char> = match mask {
            Some(m) => self.text().chars().map(|_| m).collect(),
            None => self.text().chars().collect(),
        };
        let cursor = self.cursor().min(chars.len());
        let before: String = chars[..cursor].iter().collect();
        let under: String = chars
            .get(cursor)
            .map(|c| c.to_string())
            .unwrap_or_else(|| " ".into());
        let after: String = chars.iter().skip(cursor + 1).collect();
        Line::from(vec![
            prefix,
            Span::raw(before),
            Span::styled(under, Style::default().add_modifier(Modifier::REVERSED)),
            Span::raw(after),
        ])
    }
}

/// Text as one line: line ends (CRLF, CR, LF) become spaces, trailing ones go.
pub fn one_line(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.trim_end_matches('\n');
    text.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(input: &mut Input, code: KeyCode, modifiers: KeyModifiers) -> Option<bool> {
        let key = KeyEvent::new(code, modifiers);
        let edit = crate::tui::action::Keymap::default().edit(&key);
        input.key(&key, edit.as_ref())
    }

    fn typed(text: &str) -> Input {
        let mut i = Input::default();
        for c in text.chars() {
            press(&mut i, KeyCode::Char(c), KeyModifiers::NONE);
        }
        i
    }

    #[test]
    fn readline_keys_move_and_cut() {
        let ctrl = KeyModifiers::CONTROL;
        let mut i = typed("open the session");
        assert_eq!(i.cursor(), 16);
        press(&mut i, KeyCode::Char('w'), ctrl);
        assert_eq!(i.text(), "open the ");
        press(&mut i, KeyCode::Char('a'), ctrl);
        assert_eq!(i.cursor(), 0);
        press(&mut i, KeyCode::Char('f'), KeyModifiers::ALT);
        assert!(i.cursor() > 0 && i.cursor() <= 5, "{}", i.cursor());
        press(&mut i, KeyCode::Char('e'), ctrl);
        assert_eq!(i.cursor(), 9);
        press(&mut i, KeyCode::Left, KeyModifiers::NONE);
        press(&mut i, KeyCode::Char('u'), ctrl);
        assert_eq!((i.text(), i.cursor()), (" ", 0));
        press(&mut i, KeyCode::Char('y'), ctrl);
        assert_eq!(i.text(), "open the ");
        assert_eq!(press(&mut i, KeyCode::Enter, KeyModifiers::NONE), None);
        assert_eq!(press(&mut i, KeyCode::Tab, KeyModifiers::NONE), None);
        assert_eq!(press(&mut i, KeyCode::Char('p'), ctrl), None);
        assert_eq!(
            press(&mut i, KeyCode::Right, KeyModifiers::NONE),
            Some(false)
        );
    }

    #[test]
    fn a_paste_is_one_line_whatever_its_line_ends() {
        for pasted in ["a\rb\r", "a\r\nb\r\n", "a\nb\n"] {
            let mut i = Input::new("> ");
            i.insert_str(pasted);
            assert_eq!(i.text(), "> a b", "{pasted:?}");
            assert_eq!(i.cursor(), 5);
        }
    }

    #[test]
    fn multibyte_text_keeps_its_cursor_in_characters() {
        let mut i = Input::new("çé");
        press(&mut i, KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!((i.text(), i.cursor()), ("ç", 1));
    }
}
