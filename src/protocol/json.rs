//! Reading JSON that comes from outside (files, servers, clients) at any depth a conformant
//! message may have: MCP-BINDING section 6 lets open objects (`DataXMData`,
//! `RefinedUserState`) nest, and a conformant message is never refused for its depth below
//! `MAX_DEPTH` levels. serde_json stops at 128 to protect the stack; here the common case
//! still takes that fast path, and only a message that hits the limit is read again with the
//! limit off and the stack grown on the heap as needed (serde_stacker). Deeper than
//! `MAX_DEPTH` is a clear error with its place, never a stack overflow.

use serde::de::DeserializeOwned;
use std::fmt;

/// The deepest nesting read (objects and arrays, the message itself at level 1).
pub const MAX_DEPTH: usize = 1000;

/// The stack of a thread that handles messages (servers' and the proxy's runtime threads,
/// the explorer's): a message nested up to `MAX_DEPTH` levels is built, checked, cloned,
/// written and dropped by recursive code, which a 2 MiB thread stack does not hold in a debug
/// build (a 999-level Request overflowed it). Only the pages used are ever committed.
pub const DEEP_STACK: usize = 32 << 20;

/// The levels JSON-RPC puts around a message: `params.arguments` of a `tools/call`,
/// `result.structuredContent` of its answer. A frame is read `MAX_DEPTH` plus these deep, so
/// that the message it carries may itself nest up to `MAX_DEPTH` levels.
pub const RPC_ENVELOPE: usize = 2;

/// Where and why a text is not JSON (or not JSON this program reads).
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

fn hit_the_limit(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// Parses a value from text, at any depth up to `MAX_DEPTH`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, SyntaxError> {
    from_slice(text.as_bytes())
}

/// Parses a value from bytes, at any depth up to `MAX_DEPTH`.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, SyntaxError> {
    within(bytes, MAX_DEPTH)
}

/// Parses a JSON-RPC frame whose message may nest up to `MAX_DEPTH` levels (the frame itself
/// `RPC_ENVELOPE` more).
pub fn frame_from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, SyntaxError> {
    within(bytes, MAX_DEPTH + RPC_ENVELOPE)
}

fn within<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, SyntaxError> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(e) if hit_the_limit(&e) => deep(bytes, limit),
        Err(e) => Err(e.into()),
    }
}

/// The slow path, for a text nested deeper than serde_json's own limit.
fn deep<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, SyntaxError> {
    if let Some((line, column)) = deeper_than(bytes, limit) {
        return Err(SyntaxError {
            line,
            column,
            message: format!(
                "nested more than {MAX_DEPTH} levels deep (objects and arrays); bkn-explorer \
                 reads messages nested up to {MAX_DEPTH} levels"
            ),
        });
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(value)
}

/// How deep rmcp's reader goes (serde_json's default limit of 128 levels), less the JSON-RPC
/// envelope (`params.arguments` and `result.structuredContent` are two levels down): a
/// message deeper than this is read by our own code on both sides, not by rmcp.
pub const RMCP_DEPTH: usize = 120;

/// Where the nesting of a text first goes past `MAX_DEPTH`, as a 1-based line and column.
/// Strings are skipped, so brackets inside them do not count.
pub fn too_deep(bytes: &[u8]) -> Option<(usize, usize)> {
    deeper_than(bytes, MAX_DEPTH)
}

/// Where the nesting of a text first goes past `limit`, as a 1-based line and column: one
/// pass over the text, stopping at the first bracket past the limit.
pub fn deeper_than(bytes: &[u8], limit: usize) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut line_start) = (0usize, 1usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                b'\n' => {
                    line += 1;
                    line_start = i + 1;
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    if depth > limit {
                        return Some((line, i - line_start + 1));
                    }
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b'\n' => {
                    line += 1;
                    line_start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// The strings of a JSON array (its other items passed over); none when it is not an array.
pub fn strings(value: Option<&serde_json::Value>) -> Vec<String> {
    value
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn nested(levels: usize) -> String {
        let mut text = String::new();
        for _ in 0..levels {
            text.push_str("{\"a\":");
        }
        text.push('1');
        for _ in 0..levels {
            text.push('}');
        }
        text
    }

    #[test]
    fn deep_values_are_read_up_to_the_limit() {
        let v: Value = from_str(&nested(MAX_DEPTH)).unwrap();
        assert!(v.pointer(&"/a".repeat(MAX_DEPTH)).is_some());
        let e = from_str::<Value>(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!((e.line, e.column), (1, 5 * MAX_DEPTH + 1));
        assert!(e.message.contains("1000 levels"), "{e}");
        // Far deeper: still an error, never a stack overflow.
        assert!(from_str::<Value>(&nested(100_000)).is_err());
        // Brackets inside strings do not nest.
        let text = format!("{{\"s\": \"{}\"}}", "[".repeat(2000));
        assert!(from_str::<Value>(&text).is_ok());
    }
}
