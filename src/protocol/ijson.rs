//! Reading a message for judgement as I-JSON (RFC 7493, MCP-BINDING section 6): what plain
//! JSON allows and I-JSON does not is kept as an `Irregularity` with its JSON pointer, so
//! that the judge reports a non-conformant message where serde_json would silently keep the
//! last of two members of one name, or refuse a number beyond a double as unreadable.
//!
//! The common path costs one pass, as serde_json's own reader does: the value is built by a
//! visitor that notices a member name given twice as it inserts it (the pointer is made only
//! then, from a chain of borrowed path segments). Only a text with a number out of range is
//! read again: such numbers are found by a scan and replaced, in a copy, by a marker string of
//! the same length, which the visitor turns back into the nearest double and reports.

use crate::protocol::json::{MAX_DEPTH, SyntaxError, deeper_than};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// What a message does that I-JSON forbids, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Irregularity {
    /// The JSON pointer of the member or number concerned.
    pub pointer: String,
    pub kind: IrregularKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IrregularKind {
    /// A member name given again in the same object (the later value is the one kept).
    DuplicateMember(String),
    /// A number beyond the range of an IEEE double, as written (read as the largest double
    /// of its sign).
    NumberOutOfRange(String),
}

/// A message read, with what it does that I-JSON forbids.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    pub value: Value,
    pub irregular: Vec<Irregularity>,
}

/// Reads a message at any depth up to `MAX_DEPTH`, keeping its I-JSON irregularities.
pub fn read_message(bytes: &[u8]) -> Result<Read, SyntaxError> {
    match read_within(bytes, None) {
        Err(Failed::Json(e)) if e.to_string().starts_with("number out of range") => {
            let (marked, numbers) = mark_numbers(bytes);
            if numbers.is_empty() {
                return Err(e.into());
            }
            read_within(&marked, Some(&numbers)).map_err(Failed::into_syntax)
        }
        other => other.map_err(Failed::into_syntax),
    }
}

enum Failed {
    Json(serde_json::Error),
    Syntax(SyntaxError),
}

impl Failed {
    fn into_syntax(self) -> SyntaxError {
        match self {
            Failed::Json(e) => e.into(),
            Failed::Syntax(e) => e,
        }
    }
}

/// serde_json's fast path first; a text past its 128 levels again with the limit off and
/// the stack grown (serde_stacker), up to `MAX_DEPTH`.
fn read_within(bytes: &[u8], numbers: Option<&[String]>) -> Result<Read, Failed> {
    match parse(bytes, numbers, false) {
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            if let Some((line, column)) = deeper_than(bytes, MAX_DEPTH) {
                return Err(Failed::Syntax(SyntaxError {
                    line,
                    column,
                    message: format!(
                        "nested more than {MAX_DEPTH} levels deep (objects and arrays); \
                         bkn-explorer reads messages nested up to {MAX_DEPTH} levels"
                    ),
                }));
            }
            parse(bytes, numbers, true).map_err(Failed::Json)
        }
        other => other.map_err(Failed::Json),
    }
}

fn parse(bytes: &[u8], numbers: Option<&[String]>, deep: bool) -> Result<Read, serde_json::Error> {
    let issues = RefCell::new(Vec::new());
    let next_number = std::cell::Cell::new(0usize);
    let seed = Tracked {
        path: &Path::Root,
        issues: &issues,
        numbers,
        next_number: &next_number,
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = if deep {
        de.disable_recursion_limit();
        seed.deserialize(serde_stacker::Deserializer::new(&mut de))?
    } else {
        seed.deserialize(&mut de)?
    };
    de.end()?;
    Ok(Read {
        value,
        irregular: issues.into_inner(),
    })
}

/// Where a value is: a chain of borrowed segments, made into a pointer only when needed.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn pointer(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Key(parent, key) => {
                format!(
                    "{}/{}",
                    parent.pointer(),
                    key.replace('~', "~0").replace('/', "~1")
                )
            }
            Path::Index(parent, i) => format!("{}/{i}", parent.pointer()),
        }
    }
}

/// The marker a number out of range is replaced with: DEL and the sign, in a string, padded
/// with spaces to the number's length (never longer: such a number has at least 5 bytes).
const MARK: char = '\u{7f}';

struct Tracked<'a> {
    path: &'a Path<'a>,
    issues: &'a RefCell<Vec<Irregularity>>,
    /// The numbers replaced by markers, in the order of the text (on the second reading).
    numbers: Option<&'a [String]>,
    next_number: &'a std::cell::Cell<usize>,
}

impl<'a> Tracked<'a> {
    fn at<'b>(&self, path: &'b Path<'b>) -> Tracked<'b>
    where
        'a: 'b,
    {
        Tracked {
            path,
            issues: self.issues,
            numbers: self.numbers,
            next_number: self.next_number,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Tracked<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tracked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        if let Some(numbers) = self.numbers
            && let Some(sign) = v.strip_prefix(MARK)
            && (sign == "+" || sign == "-")
        {
            let n = self.next_number.get();
            self.next_number.set(n + 1);
            if let Some(text) = numbers.get(n) {
                self.issues.borrow_mut().push(Irregularity {
                    pointer: self.path.pointer(),
                    kind: IrregularKind::NumberOutOfRange(text.clone()),
                });
                let max = if sign == "-" { f64::MIN } else { f64::MAX };
                return Ok(Number::from_f64(max).map_or(Value::Null, Value::Number));
            }
        }
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        if self.numbers.is_some() && v.starts_with(MARK) {
            return self.visit_str(&v);
        }
        Ok(Value::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let path = Path::Index(self.path, items.len());
            match seq.next_element_seed(self.at(&path))? {
                Some(v) => items.push(v),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = {
                let path = Path::Key(self.path, &key);
                access.next_value_seed(self.at(&path))?
            };
            match map.entry(key) {
                serde_json::map::Entry::Occupied(mut given) => {
                    let path = Path::Key(self.path, given.key());
                    self.issues.borrow_mut().push(Irregularity {
                        pointer: path.pointer(),
                        kind: IrregularKind::DuplicateMember(given.key().clone()),
                    });
                    given.insert(value);
                }
                serde_json::map::Entry::Vacant(new) => {
                    new.insert(value);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

/// A copy of the text with every number beyond a double replaced by a marker of the same
/// length, and those numbers in order. A text that already holds the marker character (raw
/// or escaped) is left as it is: its numbers cannot be told from its strings, so it stays
/// unreadable rather than misreported.
fn mark_numbers(bytes: &[u8]) -> (Vec<u8>, Vec<String>) {
    let lower = String::from_utf8_lossy(bytes).to_ascii_lowercase();
    if bytes.contains(&0x7f) || lower.contains("\\u007f") {
        return (bytes.to_vec(), Vec::new());
    }
    let mut out = bytes.to_vec();
    let mut numbers = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let text = String::from_utf8_lossy(&bytes[start..i]).into_owned();
            let len = i - start;
            if text.parse::<f64>().is_ok_and(|n| n.is_infinite()) && len >= 5 {
                let sign = if text.starts_with('-') { '-' } else { '+' };
                let marker = format!("\"{MARK}{sign}\"");
                let mut replaced = marker.into_bytes();
                replaced.resize(len, b' ');
                out[start..i].copy_from_slice(&replaced);
                numbers.push(text);
            }
            continue;
        }
        i += 1;
    }
    (out, numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_given_twice_is_kept_with_its_pointer() {
        let r = read_message(br#"{"a": 1, "b": {"c/d": 1, "c/d": 2}, "a": 3}"#).unwrap();
        assert_eq!(r.value["a"], 3, "the later value, as serde_json keeps it");
        let found: Vec<&str> = r.irregular.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(found, ["/b/c~1d", "/a"]);
        assert_eq!(
            r.irregular[1].kind,
            IrregularKind::DuplicateMember("a".into())
        );
        // In an array, and deeper than serde_json's own limit.
        let deep = format!(
            "{}{{\"x\": 1, \"x\": 2}}{}",
            "[".repeat(300),
            "]".repeat(300)
        );
        let r = read_message(deep.as_bytes()).unwrap();
        assert_eq!(r.irregular[0].pointer, format!("{}/x", "/0".repeat(300)));
        assert!(
            read_message(br#"{"a": 1, "b": 1}"#)
                .unwrap()
                .irregular
                .is_empty()
        );
    }

    #[test]
    fn a_number_beyond_a_double_is_read_and_reported() {
        let text = br#"{"TurnIndex": 1e400, "s": "1e400", "n": [1, -2.5E999], "after": {"x" : 1}}"#;
        let r = read_message(text).unwrap();
        let found: Vec<(&str, &IrregularKind)> = r
            .irregular
            .iter()
            .map(|i| (i.pointer.as_str(), &i.kind))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "/TurnIndex",
                    &IrregularKind::NumberOutOfRange("1e400".into())
                ),
                ("/n/1", &IrregularKind::NumberOutOfRange("-2.5E999".into())),
            ]
        );
        assert_eq!(r.value["TurnIndex"].as_f64(), Some(f64::MAX));
        assert_eq!(r.value["n"][1].as_f64(), Some(f64::MIN));
        assert_eq!(r.value["s"], "1e400", "a string is not a number");
        // Syntax errors keep their place: the marker has the number's length.
        let e = read_message(br#"{"a": 1e400, "b": }"#).unwrap_err();
        assert_eq!((e.line, e.column), (1, 19), "{e}");
        // Tiny numbers are zero, as in every double reader: not out of range.
        assert!(
            read_message(br#"{"a": 1e-400}"#)
                .unwrap()
                .irregular
                .is_empty()
        );
        // Too deep is an error with its place, number or not.
        let deep = format!(
            "{}1e400{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let e = read_message(deep.as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column), (1, MAX_DEPTH + 1), "{e}");
    }
}
