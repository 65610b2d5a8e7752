//! Reading messages from text: one message, a JSON array of messages, or JSON Lines (any
//! sequence of JSON values, one after another). Pure parsing over any `std::io::Read` (a
//! slice of text, a file, standard input); the caller opens the source.
//!
//! The reader streams: it holds one message at a time (plus a block of input), finds where
//! each top-level value ends with a byte scan, and counts lines as it goes, so reading a
//! million messages costs a million times one message, in time and in memory alike.

use crate::protocol::ijson::{self, Irregularity};
use crate::protocol::json::MAX_DEPTH;
use serde_json::Value;
use std::io::Read;

pub use crate::protocol::json::SyntaxError;

/// How the messages were laid out in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One message.
    Single,
    /// A JSON array of messages.
    Array,
    /// Several JSON values one after another (JSON Lines).
    Lines,
}

/// One message and where it starts in the text (1-based line).
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub value: Value,
    pub line: usize,
    /// What the text of the message does that I-JSON forbids (the judge reports it).
    pub irregular: Vec<Irregularity>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub layout: Layout,
    pub messages: Vec<Located>,
}

impl Document {
    pub fn is_sequence(&self) -> bool {
        self.layout != Layout::Single
    }

    pub fn values(&self) -> Vec<Value> {
        self.messages.iter().map(|m| m.value.clone()).collect()
    }

    pub fn into_values(self) -> Vec<Value> {
        self.messages.into_iter().map(|m| m.value).collect()
    }
}

/// Parses text holding messages (all of them, into memory: for a file of any size, use
/// `Reader`).
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let mut reader = Reader::new(text.as_bytes());
    let mut messages = Vec::new();
    for message in &mut reader {
        messages.push(message?);
    }
    if messages.is_empty() {
        return Err(SyntaxError {
            line: 1,
            column: 1,
            message: "no JSON message in the text (it is empty)".into(),
        });
    }
    Ok(Document {
        layout: reader.layout().unwrap_or(Layout::Single),
        messages,
    })
}

/// How much input is read at a time.
const BLOCK: usize = 64 * 1024;

/// Where the scanner is inside the value it is looking for the end of.
#[derive(Clone, Copy, Debug, Default)]
struct Scan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The value is a bare scalar (number, literal), which ends at a delimiter.
    scalar: bool,
}

/// Messages one by one from any source, with the line each starts on.
pub struct Reader<R: Read> {
    source: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already taken (given out, or skipped).
    start: usize,
    /// How far the scan of the current value has gone (an index into `buf`).
    cursor: usize,
    eof: bool,
    /// The line and column (1-based) at `buf[start]`.
    line: usize,
    column: usize,
    /// Inside a top-level array: its messages are the elements.
    in_array: bool,
    array_done: bool,
    /// How many top-level values were seen, to tell one message from JSON Lines.
    top_values: usize,
    /// Whether a message of the array was given out and a comma is due before the next.
    after_element: bool,
    failed: bool,
    first: bool,
}

impl<R: Read> Reader<R> {
    pub fn new(source: R) -> Reader<R> {
        Reader {
            source,
            buf: Vec::with_capacity(BLOCK),
            start: 0,
            cursor: 0,
            eof: false,
            line: 1,
            column: 1,
            in_array: false,
            array_done: false,
            top_values: 0,
            after_element: false,
            failed: false,
            first: true,
        }
    }

    /// The layout, once it is known: an array from its first bracket, one message or JSON
    /// Lines once the second value starts (or the input ends).
    pub fn layout(&self) -> Option<Layout> {
        if self.in_array || self.array_done {
            Some(Layout::Array)
        } else if self.top_values > 1 {
            Some(Layout::Lines)
        } else if self.eof && self.start >= self.buf.len() && self.top_values == 1 {
            Some(Layout::Single)
        } else {
            None
        }
    }

    /// Reads another block; false at the end of the input.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        // Drop what was taken, so the buffer holds one message and a block at most.
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.cursor -= self.start;
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + BLOCK, 0);
        let n = loop {
            match self.source.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(len + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Moves `start` over `n` bytes, keeping the line and column.
    fn take(&mut self, n: usize) {
        for &b in &self.buf[self.start..self.start + n] {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                // Columns count characters (a UTF-8 continuation byte is not one).
                self.column += 1;
            }
        }
        self.start += n;
        self.cursor = self.cursor.max(self.start);
    }

    /// The next byte that is not whitespace (reading more as needed), without taking it.
    fn peek(&mut self) -> Result<Option<u8>, SyntaxError> {
        loop {
            while self.start < self.buf.len() {
                let b = self.buf[self.start];
                if self.first {
                    // A byte-order mark before the first value is not part of the text.
                    self.first = false;
                    if self.buf[self.start..].starts_with("\u{feff}".as_bytes()) {
                        self.start += 3;
                        continue;
                    }
                }
                if b.is_ascii_whitespace() {
                    self.take(1);
                } else {
                    return Ok(Some(b));
                }
            }
            if !self
                .fill()
                .map_err(|e| self.error(format!("cannot read: {e}")))?
            {
                return Ok(None);
            }
        }
    }

    fn error(&self, message: String) -> SyntaxError {
        SyntaxError {
            line: self.line,
            column: self.column,
            message,
        }
    }

    /// The bytes of the value that starts at `start`, once its end is found (more input is
    /// read as needed).
    fn value_end(&mut self) -> Result<usize, SyntaxError> {
        let mut scan = Scan {
            scalar: !matches!(self.buf[self.start], b'{' | b'[' | b'"'),
            ..Scan::default()
        };
        self.cursor = self.start;
        loop {
            while self.cursor < self.buf.len() {
                let b = self.buf[self.cursor];
                if scan.scalar {
                    if b.is_ascii_whitespace()
                        || matches!(b, b',' | b']' | b'}' | b'[' | b'{' | b'"')
                    {
                        return Ok(self.cursor);
                    }
                } else if scan.in_string {
                    if scan.escaped {
                        scan.escaped = false;
                    } else if b == b'\\' {
                        scan.escaped = true;
                    } else if b == b'"' {
                        scan.in_string = false;
                        if scan.depth == 0 {
                            return Ok(self.cursor + 1);
                        }
                    }
                } else {
                    match b {
                        b'"' => scan.in_string = true,
                        b'{' | b'[' => {
                            scan.depth += 1;
                            if scan.depth > MAX_DEPTH {
                                return Err(self.error_at(
                                    self.cursor,
                                    format!(
                                        "nested more than {MAX_DEPTH} levels deep (objects and \
                                         arrays); bkn-explorer reads messages nested up to \
                                         {MAX_DEPTH} levels"
                                    ),
                                ));
                            }
                        }
                        b'}' | b']' => {
                            scan.depth = scan.depth.saturating_sub(1);
                            if scan.depth == 0 {
                                return Ok(self.cursor + 1);
                            }
                        }
                        _ => {}
                    }
                }
                self.cursor += 1;
            }
            if !self
                .fill()
                .map_err(|e| self.error(format!("cannot read: {e}")))?
            {
                // The input ended inside the value: parsing it says what is wrong.
                return Ok(self.buf.len());
            }
        }
    }

    /// A position inside the current value, as a line and column.
    fn error_at(&self, at: usize, message: String) -> SyntaxError {
        let (mut line, mut column) = (self.line, self.column);
        for &b in &self.buf[self.start..at] {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                column += 1;
            }
        }
        SyntaxError {
            line,
            column,
            message,
        }
    }

    /// Parses the value that starts at `start` and takes it.
    fn next_value(&mut self) -> Result<Located, SyntaxError> {
        let end = self.value_end()?;
        let (line, column) = (self.line, self.column);
        let read = ijson::read_message(&self.buf[self.start..end]).map_err(|e| {
            // Positions in the value, moved to where it is in the text.
            SyntaxError {
                column: if e.line <= 1 {
                    e.column + column - 1
                } else {
                    e.column
                },
                line: e.line.max(1) + line - 1,
                message: e.message,
            }
        })?;
        self.take(end - self.start);
        Ok(Located {
            value: read.value,
            line,
            irregular: read.irregular,
        })
    }

    fn next_message(&mut self) -> Result<Option<Located>, SyntaxError> {
        if self.in_array {
            let Some(b) = self.peek()? else {
                return Err(self.error("the text ends inside the array of messages".into()));
            };
            if b == b']' {
                self.take(1);
                self.in_array = false;
                self.array_done = true;
                return match self.peek()? {
                    None => Ok(None),
                    Some(_) => Err(self.error(
                        "more text after the array of messages; a file holds one message, an \
                         array of them, or JSON Lines"
                            .into(),
                    )),
                };
            }
            if self.after_element {
                if b != b',' {
                    return Err(self.error(format!(
                        "expected , or ] after a message of the array, found {}",
                        char::from(b)
                    )));
                }
                self.take(1);
                if self.peek()?.is_none() {
                    return Err(self.error("the text ends inside the array of messages".into()));
                }
            }
            let message = self.next_value()?;
            self.after_element = true;
            return Ok(Some(message));
        }
        let Some(b) = self.peek()? else {
            return Ok(None);
        };
        if self.top_values == 0 && b == b'[' {
            self.top_values = 1;
            self.in_array = true;
            self.take(1);
            return self.next_message();
        }
        self.top_values += 1;
        self.next_value().map(Some)
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Located, SyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_message() {
            Ok(Some(m)) => Some(Ok(m)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_array_and_lines() {
        assert_eq!(parse("{\n \"a\": 1\n}\n").unwrap().layout, Layout::Single);
        let array = parse("[{}, {}]").unwrap();
        assert_eq!((array.layout, array.messages.len()), (Layout::Array, 2));
        assert_eq!(parse("[]").unwrap_err().line, 1);
        let lines = parse("{\"a\":1}\n\n{\"a\":2}\n{\"a\":3}\n").unwrap();
        assert_eq!(lines.layout, Layout::Lines);
        let found: Vec<usize> = lines.messages.iter().map(|m| m.line).collect();
        assert_eq!(found, [1, 3, 4]);
        // Pretty-printed messages one after another, strings holding brackets.
        let text = "{\n \"s\": \"}{\"\n}\n[1]\n\"x\" 7 true";
        let d = parse(text).unwrap();
        assert_eq!(d.layout, Layout::Lines);
        let lines: Vec<usize> = d.messages.iter().map(|m| m.line).collect();
        assert_eq!(lines, [1, 4, 5, 5, 5]);
        assert_eq!(d.messages[3].value, 7);
        assert_eq!(parse("\u{feff}{}").unwrap().layout, Layout::Single);
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = parse("{\"a\":1}\n{\"a\": }\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7));
        assert!(!e.message.contains(" at line"));
        assert!(parse("   ").is_err());
        let e = parse("[{}, {} {}]").unwrap_err();
        assert_eq!((e.line, e.column), (1, 9), "{e}");
        let e = parse("[{}]\n{}").unwrap_err();
        assert!(e.message.contains("after the array"), "{e}");
        let e = parse("{\"a\": [1, 2").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 5), "]".repeat(MAX_DEPTH + 5));
        let e = parse(&format!("{{}}\n{deep}")).unwrap_err();
        assert_eq!((e.line, e.column), (2, MAX_DEPTH + 1), "{e}");
    }

    #[test]
    fn reads_across_blocks() {
        // Messages larger than a block, split anywhere.
        let big = format!("{{\"t\": \"{}\"}}", "x".repeat(BLOCK * 2 + 17));
        let text = format!("{big}\n{big}\n{{\"end\": true}}");
        let d = parse(&text).unwrap();
        assert_eq!(d.messages.len(), 3);
        assert_eq!(d.messages[2].line, 3);
    }
}
