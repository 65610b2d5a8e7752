//! Search in the Raw tab (the turn's JSON) and in the protocol log: `/` opens a line to type
//! (the one line editor), every match is shown in reverse video and the current one also bold
//! and underlined (both show without colour), `n` / `N` go to the next and previous match,
//! and "3/7" says where. Finding is pure: the lines searched come from the state.

use crate::tui::action::Pane;
use crate::tui::overlay::Input;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

pub struct Search {
    /// Where it searches: the detail's Raw tab, or the log.
    pub pane: Pane,
    pub input: Input,
    /// The line has the keys (typing); else n / N move and Esc ends it.
    pub editing: bool,
    /// The match gone to last, an index into the matches.
    pub current: usize,
    /// In the log: the entries that matched when the search last moved (a frame does not
    /// read thousands of entries again; n / N find new ones).
    pub found: Vec<usize>,
}

impl Search {
    pub fn new(pane: Pane) -> Search {
        Search {
            pane,
            input: Input::default(),
            editing: true,
            current: 0,
            found: Vec::new(),
        }
    }

    pub fn query(&self) -> &str {
        self.input.text()
    }

    /// "3/7", "no match", or nothing before anything is typed.
    pub fn count(&self, matches: usize) -> String {
        match (self.query().is_empty(), matches) {
            (true, _) => String::new(),
            (false, 0) => "no match".into(),
            (false, n) => format!("{}/{n}", self.current.min(n - 1) + 1),
        }
    }

    /// The next (or previous) match, round the end.
    pub fn step(&mut self, forward: bool, matches: usize) {
        if matches == 0 {
            self.current = 0;
        } else if forward {
            self.current = (self.current + 1) % matches;
        } else {
            self.current = (self.current + matches - 1) % matches;
        }
    }
}

/// Where `query` occurs in each line, ignoring case: (line, character column), in order.
pub fn find<'a>(lines: impl IntoIterator<Item = &'a str>, query: &str) -> Vec<(usize, usize)> {
    if query.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        for column in columns(line, query) {
            out.push((i, column));
        }
    }
    out
}

/// The character columns where `query` starts in `line`, ignoring case (matches do not
/// overlap).
pub fn columns(line: &str, query: &str) -> Vec<usize> {
    let lower = |s: &str| -> Vec<char> { s.chars().flat_map(char::to_lowercase).collect() };
    // Lower-casing can change the number of characters (rare letters): then columns are
    // those of the lower-cased line, close enough to mark, never out of the line.
    let (hay, needle) = (lower(line), lower(query));
    let mut out = Vec::new();
    if needle.is_empty() || needle.len() > hay.len() {
        return out;
    }
    let mut at = 0;
    while at + needle.len() <= hay.len() {
        if hay[at..at + needle.len()] == needle[..] {
            out.push(at);
            at += needle.len();
        } else {
            at += 1;
        }
    }
    out
}

/// A drawn line with the matches of `query` marked: reverse video, and the one starting at
/// `current` (a column) also bold and underlined.
pub fn highlight<'a>(line: Line<'a>, query: &str, current: Option<usize>) -> Line<'a> {
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let starts = columns(&text, query);
    if starts.is_empty() {
        return line;
    }
    let n = query.chars().count();
    let style_at = |col: usize| -> Option<Style> {
        starts.iter().find(|&&s| col >= s && col < s + n).map(|&s| {
            let mark = Style::default().add_modifier(Modifier::REVERSED);
            if Some(s) == current {
                mark.add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
            } else {
                mark
            }
        })
    };
    let mut spans: Vec<Span<'a>> = Vec::new();
    let mut col = 0;
    for span in line.spans {
        // Cut the span where a match starts or ends; each piece keeps the span's style, a
        // match's piece gets the mark on top.
        let mut piece = String::new();
        let mut piece_mark: Option<Option<Style>> = None;
        for c in span.content.chars() {
            let mark = style_at(col);
            if piece_mark.is_some_and(|m| m != mark) {
                let m = piece_mark.take().flatten();
                let style = m.map_or(span.style, |m| span.style.patch(m));
                spans.push(Span::styled(std::mem::take(&mut piece), style));
            }
            piece_mark = Some(mark);
            piece.push(c);
            col += 1;
        }
        if !piece.is_empty() {
            let m = piece_mark.flatten();
            let style = m.map_or(span.style, |m| span.style.patch(m));
            spans.push(Span::styled(piece, style));
        }
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_match_ignoring_case() {
        let lines = ["\"Kind\": \"ack\"", "no", "ACK ack"];
        assert_eq!(find(lines, "ack"), [(0, 9), (2, 0), (2, 4)]);
        assert!(find(lines, "").is_empty());
    }

    #[test]
    fn the_count_goes_round() {
        let mut s = Search::new(Pane::Log);
        assert_eq!(s.count(3), "");
        s.input = Input::new("x");
        assert_eq!(s.count(0), "no match");
        s.step(false, 3);
        assert_eq!(s.count(3), "3/3");
        s.step(true, 3);
        assert_eq!(s.count(3), "1/3");
    }

    #[test]
    fn matches_are_marked_across_spans_and_the_current_one_more() {
        let line = Line::from(vec![Span::raw("\"Ki"), Span::raw("nd\": kind")]);
        let marked = highlight(line, "kind", Some(8));
        let pieces: Vec<(String, bool, bool)> = marked
            .spans
            .iter()
            .map(|s| {
                (
                    s.content.to_string(),
                    s.style.add_modifier.contains(Modifier::REVERSED),
                    s.style.add_modifier.contains(Modifier::UNDERLINED),
                )
            })
            .collect();
        assert_eq!(
            pieces,
            [
                ("\"".into(), false, false),
                ("Ki".into(), true, false),
                ("nd".into(), true, false),
                ("\": ".into(), false, false),
                ("kind".into(), true, true),
            ]
        );
    }
}
