//! Text helpers for the panes: JSON coloured by token, text wrapped only as far as the screen
//! needs, short forms of long values.

use crate::tui::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// One line of pretty-printed JSON, coloured by token (keys, strings, numbers, literals,
/// punctuation), cut at `width` characters.
pub fn json_line<'a>(line: &'a str, theme: &Theme, width: usize) -> Line<'a> {
    let mut spans: Vec<Span> = Vec::new();
    let mut i = 0;
    let mut shown = 0usize;
    while i < line.len() {
        let (end, token) = next_json_token(line, i);
        if shown < width {
            let text = first_chars(&line[i..end], width - shown);
            shown += text.chars().count();
            spans.push(Span::styled(text, token.style(theme)));
        }
        i = end;
    }
    Line::from(spans)
}

/// A token of a line of pretty-printed JSON, for its colour.
enum JsonToken {
    Key,
    String,
    Number,
    Null,
    /// `true`, `false` (or any word that starts as they do).
    Literal,
    Space,
    Punctuation,
}

impl JsonToken {
    fn style(&self, theme: &Theme) -> Style {
        let c = &theme.colors;
        match self {
            JsonToken::Key => Style::default().fg(c.json_key),
            JsonToken::String => Style::default().fg(c.json_string),
            JsonToken::Number => Style::default().fg(c.json_number),
            JsonToken::Null => Style::default().fg(c.json_null),
            JsonToken::Literal => Style::default().fg(c.json_bool),
            JsonToken::Space => Style::default(),
            JsonToken::Punctuation => Style::default().fg(c.json_punct),
        }
    }
}

/// The token that starts at byte `start`: where it ends, and what it is (a string followed
/// by `:` is a key).
fn next_json_token(line: &str, start: usize) -> (usize, JsonToken) {
    let bytes = line.as_bytes();
    let mut i = start;
    match bytes[i] {
        b'"' => {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(bytes.len());
            if line[i..].trim_start().starts_with(':') {
                (i, JsonToken::Key)
            } else {
                (i, JsonToken::String)
            }
        }
        b'-' | b'0'..=b'9' => {
            while i < bytes.len()
                && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            (i, JsonToken::Number)
        }
        b't' | b'f' | b'n' => {
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            if &line[start..i] == "null" {
                (i, JsonToken::Null)
            } else {
                (i, JsonToken::Literal)
            }
        }
        b' ' => {
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            (i, JsonToken::Space)
        }
        _ => {
            i += line[i..].chars().next().map(char::len_utf8).unwrap_or(1);
            (i, JsonToken::Punctuation)
        }
    }
}

/// The first `room` characters of a text.
fn first_chars(text: &str, room: usize) -> &str {
    match text.char_indices().nth(room) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// A line cut into rows of `width` characters, each keeping its spans' styles.
/// The line's own style stays on every row.
pub fn wrap_line(line: Line<'_>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let row = Line::default().style(line.style);
    let mut rows: Vec<Line<'static>> = vec![row.clone()];
    let mut count = 0usize;
    for span in line.spans {
        let style = span.style;
        let mut piece = String::new();
        for ch in span.content.chars() {
            if count == width {
                if !piece.is_empty() {
                    rows.last_mut()
                        .expect("a row")
                        .spans
                        .push(Span::styled(std::mem::take(&mut piece), style));
                }
                rows.push(row.clone());
                count = 0;
            }
            piece.push(ch);
            count += 1;
        }
        if !piece.is_empty() {
            rows.last_mut()
                .expect("a row")
                .spans
                .push(Span::styled(piece, style));
        }
    }
    rows
}

/// A line of prose cut into rows of at most `width` characters at its spaces, as
/// `wrap_window` cuts text, each row keeping its spans' styles (a word longer than a row is
/// cut). The spaces where a row ends are dropped. For notices and sentences; JSON keeps
/// `wrap_line`, which cuts anywhere.
pub fn wrap_words(line: Line<'_>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let chars: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    let row_of = |part: &[(char, Style)]| {
        let mut row = Line::default().style(line.style);
        for (ch, style) in part {
            match row.spans.last_mut() {
                Some(last) if last.style == *style => last.content.to_mut().push(*ch),
                _ => row.spans.push(Span::styled(ch.to_string(), *style)),
            }
        }
        row
    };
    let mut rows = Vec::new();
    let mut start = 0;
    loop {
        if chars.len() - start <= width {
            rows.push(row_of(&chars[start..]));
            return rows;
        }
        // The last space that ends a row of at most `width` characters (the space itself
        // may be the row's `width + 1`th character).
        let space = (start + 1..=start + width)
            .rev()
            .find(|&i| chars[i].0 == ' ');
        let mut end = space.unwrap_or(start + width);
        while end > start && chars[end - 1].0 == ' ' {
            end -= 1;
        }
        // Only spaces before the break (an indent): the word is cut instead.
        let (end, next) = match space {
            Some(i) if end > start => (end, i + 1),
            _ => (start + width, start + width),
        };
        rows.push(row_of(&chars[start..end]));
        start = next;
        while start < chars.len() && chars[start].0 == ' ' {
            start += 1;
        }
        if start >= chars.len() {
            return rows;
        }
    }
}

/// Wraps `text` at `width` columns and returns lines `skip..skip + take` of the result,
/// reading only as much of the text as those lines need (a megabyte of text costs what is on
/// screen).
pub fn wrap_window(text: &str, width: usize, skip: usize, take: usize) -> Vec<String> {
    if take == 0 {
        // Nothing asked for: not even the first paragraph is looked for (finding its end
        // would scan the whole text).
        return Vec::new();
    }
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line_no = 0usize;
    for paragraph in text.split('\n') {
        let mut current = String::new();
        let mut count = 0usize;
        let emit = |s: String, line_no: &mut usize, out: &mut Vec<String>| {
            if *line_no >= skip && out.len() < take {
                out.push(s);
            }
            *line_no += 1;
        };
        for word in paragraph.split(' ') {
            let len = word.chars().count();
            if count > 0 && count + 1 + len > width {
                emit(std::mem::take(&mut current), &mut line_no, &mut out);
                count = 0;
            }
            if len > width {
                // A word longer than the line is cut.
                for ch in word.chars() {
                    if count == width {
                        emit(std::mem::take(&mut current), &mut line_no, &mut out);
                        count = 0;
                    }
                    current.push(ch);
                    count += 1;
                }
            } else {
                if count > 0 {
                    current.push(' ');
                    count += 1;
                }
                current.push_str(word);
                count += len;
            }
            if out.len() >= take {
                return out;
            }
        }
        emit(current, &mut line_no, &mut out);
        if out.len() >= take {
            break;
        }
    }
    out
}

/// Wraps `text` at `width` columns into at most `max` lines; when there is more, the last
/// line ends in `…` (a long text is shortened visibly, never silently).
pub fn wrap_capped(text: &str, width: usize, max: usize) -> Vec<String> {
    let mut lines = wrap_window(text, width, 0, max.saturating_add(1));
    if lines.len() > max {
        lines.truncate(max);
        if let Some(last) = lines.last_mut() {
            let keep = width.max(1) - 1;
            if last.chars().count() > keep {
                *last = last.chars().take(keep).collect();
            }
            last.push('…');
        }
    }
    lines
}

/// A bar for a value in 0..1 over `cells` cells: the filled part and the empty part (drawn
/// with different characters, so the bar reads without colour too).
pub fn bar_parts(value: f64, cells: usize) -> (String, String) {
    let filled = ((value.clamp(0.0, 1.0) * cells as f64).round() as usize).min(cells);
    ("█".repeat(filled), "░".repeat(cells - filled))
}

pub fn bar(value: f64, cells: usize) -> String {
    let (filled, empty) = bar_parts(value, cells);
    filled + &empty
}

/// The first `n` characters, with an ellipsis when cut.
pub fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(n.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// `3f2a…c1`: an ID short enough for a title.
pub fn short_id(id: &str) -> String {
    if id.chars().count() <= 10 {
        id.to_owned()
    } else {
        let head: String = id.chars().take(4).collect();
        let tail: String = id
            .chars()
            .rev()
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{head}…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Notices wrap at spaces, as the rest of the text does: at 80x24 the Commitments tab's
    /// reconnect notice was cut inside "it".
    #[test]
    fn prose_wraps_at_word_boundaries_keeping_styles() {
        let text = |rows: &[Line]| -> Vec<String> {
            rows.iter()
                .map(|r| r.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        let notice = "a new MCP session began at TurnIndex 3: the server keeps nothing from \
                      before it";
        let rows = wrap_words(Line::raw(notice), 76);
        assert_eq!(
            text(&rows),
            [
                "a new MCP session began at TurnIndex 3: the server keeps nothing from before",
                "it"
            ]
        );
        let red = Style::default().fg(ratatui::style::Color::Red);
        let line = Line::from(vec![Span::styled("✗ ", red), Span::raw("one two three")]);
        let rows = wrap_words(line, 8);
        assert_eq!(text(&rows), ["✗ one", "two", "three"]);
        assert_eq!(rows[0].spans[0].style, red);
        // A word longer than a row is cut; an indent is kept on the first row.
        assert_eq!(
            text(&wrap_words(Line::raw("    abcdefghij"), 6)),
            ["    ab", "cdefgh", "ij"]
        );
        assert_eq!(text(&wrap_words(Line::raw("short"), 80)), ["short"]);
    }

    #[test]
    fn wrapping_reads_only_what_is_shown() {
        let text = "one two three four five six seven";
        assert_eq!(
            wrap_window(text, 9, 0, 10),
            ["one two", "three", "four five", "six seven"]
        );
        assert_eq!(wrap_window(text, 9, 2, 1), ["four five"]);
        assert!(wrap_window(text, 9, 0, 0).is_empty());
        let big = "x".repeat(1_000_000);
        assert_eq!(wrap_window(&big, 100, 0, 3), vec!["x".repeat(100); 3]);
        assert_eq!(wrap_capped(text, 9, 2), ["one two", "three…"]);
        assert_eq!(wrap_capped(text, 5, 2), ["one", "two…"]);
        assert_eq!(
            wrap_capped(text, 9, 4),
            ["one two", "three", "four five", "six seven"]
        );
        assert_eq!(short_id("3b781c2c-6d2c-4753-9102-6b3319e92744"), "3b78…44");
    }
}
