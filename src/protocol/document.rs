//! Reading messages from text: one message, a JSON array of messages, or JSON Lines (any
//! sequence of JSON values, one after another). Pure text parsing; the caller reads the file.

use serde_json::Value;
use std::fmt;

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
}

/// Where and why the text is not JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for SyntaxError {}

impl From<serde_json::Error> for SyntaxError {
    fn from(e: serde_json::Error) -> Self {
        // serde_json's message ends with " at line L column C"; the position is kept apart.
        let text = e.to_string();
        let message = match text.rfind(" at line ") {
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        SyntaxError {
            line: e.line(),
            column: e.column(),
            message,
        }
    }
}

/// Parses text holding messages.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut messages = Vec::new();
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(value)) => {
                let skipped = text[start..]
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .map(char::len_utf8)
                    .sum::<usize>();
                let line = 1 + text[..start + skipped].matches('\n').count();
                messages.push(Located { value, line });
            }
            Some(Err(e)) => return Err(e.into()),
        }
    }
    match messages.len() {
        0 => Err(SyntaxError {
            line: 1,
            column: 1,
            message: "no JSON message in the text (it is empty)".into(),
        }),
        1 => {
            let only = messages.pop().expect("one message");
            match only.value {
                Value::Array(items) => Ok(Document {
                    layout: Layout::Array,
                    messages: items
                        .into_iter()
                        .map(|value| Located {
                            value,
                            line: only.line,
                        })
                        .collect(),
                }),
                value => Ok(Document {
                    layout: Layout::Single,
                    messages: vec![Located {
                        value,
                        line: only.line,
                    }],
                }),
            }
        }
        _ => Ok(Document {
            layout: Layout::Lines,
            messages,
        }),
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
        let lines = parse("{\"a\":1}\n\n{\"a\":2}\n{\"a\":3}\n").unwrap();
        assert_eq!(lines.layout, Layout::Lines);
        let found: Vec<usize> = lines.messages.iter().map(|m| m.line).collect();
        assert_eq!(found, [1, 3, 4]);
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = parse("{\"a\":1}\n{\"a\": }\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7));
        assert!(!e.message.contains(" at line"));
        assert!(parse("   ").is_err());
    }
}
