//! A JSON message kept as its text. A parsed `serde_json::Value` takes about four times the
//! memory of the text, and a session may hold tens of thousands of messages of which only the
//! one on screen needs to be parsed; so turns keep their messages as text and parse on demand.

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

#[derive(Clone, Debug)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The compact text of a value.
    pub fn from_value(value: &Value) -> RawJson {
        // Written straight into a RawValue: text serde_json writes is not parsed again.
        RawJson(
            serde_json::value::to_raw_value(value)
                .unwrap_or_else(|_| RawValue::from_string("null".into()).expect("JSON")),
        )
    }

    /// The value. The text was JSON when it was made, so this does not fail; should it ever,
    /// the value is null rather than a panic.
    pub fn value(&self) -> Value {
        crate::protocol::json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The value, with each number that the value would not hold as written (an integer
    /// beyond 64 bits, more digits than a double keeps, 1e999) replaced by what `keep` makes
    /// of its text: a writer that must give the number back exactly (a scenario made from a
    /// recording) keeps the text. The rest is `value`'s.
    pub fn value_keeping_numbers(&self, keep: &mut dyn FnMut(&str) -> Value) -> Value {
        // The I-JSON reader reads a number beyond a double too (as the largest of its sign).
        let Ok(read) = crate::protocol::ijson::read_message(self.text().as_bytes()) else {
            return self.value();
        };
        let mut value = read.value;
        let texts = number_texts(self.text());
        let mut numbers = Vec::new();
        numbers_of(&mut value, &mut numbers);
        // A member given twice holds one value for two texts: then the texts cannot be told
        // apart, and the value stays as read.
        if numbers.len() == texts.len() {
            for (number, text) in numbers.into_iter().zip(texts) {
                let written = serde_json::to_string(number).unwrap_or_default();
                if decimal(&written).is_none() || decimal(&written) != decimal(text) {
                    *number = keep(text);
                }
            }
        }
        value
    }

    /// The message as a raw JSON value, to write into other JSON verbatim.
    pub fn raw(&self) -> &RawValue {
        &self.0
    }

    /// The text as it came (with the layout it had in a file).
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The size of the text in bytes.
    pub fn len(&self) -> usize {
        self.0.get().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.get().is_empty()
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> RawJson {
        RawJson::from_value(&value)
    }
}

/// The texts of the numbers of a JSON text, in the order they are written.
fn number_texts(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
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
        } else if b == b'"' {
            in_string = true;
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            out.push(&text[start..i]);
        } else {
            i += 1;
        }
    }
    out
}

/// The decimal number a JSON number's text denotes, whatever its spelling (`1e300`, `1E+300`
/// and `1000e297` are one): its sign, its significant digits and the power of ten of the
/// last. None for an exponent beyond 64 bits.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let mut exponent = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some((false, String::new(), 0));
    }
    exponent = exponent.checked_add(i64::try_from(significant.len() - trimmed.len()).ok()?)?;
    Some((negative, trimmed.to_owned(), exponent))
}

/// The numbers of a value, in the order a writer writes them.
fn numbers_of<'a>(value: &'a mut Value, out: &mut Vec<&'a mut Value>) {
    match value {
        Value::Number(_) => out.push(value),
        Value::Array(items) => items.iter_mut().for_each(|v| numbers_of(v, out)),
        Value::Object(map) => map.values_mut().for_each(|v| numbers_of(v, out)),
        _ => {}
    }
}

/// Two messages are equal when their values are, whatever their layout.
impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.0.get() == other.0.get() || self.value() == other.value()
    }
}

/// Written through the serializer (not verbatim), so that a pretty-printed file indents the
/// message to its place like the rest, and the same message always writes the same bytes.
impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // At any depth a message may have (MCP-BINDING section 6: below 1,000 levels):
        // serde_json's reader would stop at 128, so its limit is off and the stack is grown
        // on the heap as the transcoding goes down (the text was JSON read within the limit).
        let mut source = serde_json::Deserializer::from_str(self.0.get());
        source.disable_recursion_limit();
        serde_transcode::transcode(serde_stacker::Deserializer::new(&mut source), serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        // Well-formed text can still hold what no JSON value can (a number like 1e999):
        // such a message could be neither shown nor written back, so it is refused here.
        crate::protocol::json::from_str::<Readable>(raw.get())
            .map_err(|e| serde::de::Error::custom(format!("a message that cannot be read: {e}")))?;
        Ok(RawJson(raw))
    }
}

/// Reads JSON through every value, as parsing it would, keeping nothing: what it refuses
/// (numbers out of range) a `Value` could not hold.
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ReadableVisitor)
    }
}

struct ReadableVisitor;

impl<'de> serde::de::Visitor<'de> for ReadableVisitor {
    type Value = Readable;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Readable, E> {
        if v.is_finite() {
            Ok(Readable)
        } else {
            Err(E::custom("a number out of range"))
        }
    }
    fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_unit<E>(self) -> Result<Readable, E> {
        Ok(Readable)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
        while seq.next_element::<Readable>()?.is_some() {}
        Ok(Readable)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, Readable>()?
            .is_some()
        {}
        Ok(Readable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_a_value_does_not_hold_as_written_are_given_as_their_text() {
        let raw = RawJson(
            RawValue::from_string(
                r#"{"a": 18446744073709551616123, "b": [1, 2.5, 0.10000000000000000000000000001],
                   "s": "3.14159265358979323846", "c": {"d": -1e999, "e": 1E+300, "f": 7.0}}"#
                    .into(),
            )
            .unwrap(),
        );
        let mut kept = Vec::new();
        let value = raw.value_keeping_numbers(&mut |text| {
            kept.push(text.to_owned());
            Value::String(format!("<{text}>"))
        });
        assert_eq!(
            kept,
            [
                "18446744073709551616123",
                "0.10000000000000000000000000001",
                "-1e999"
            ]
        );
        assert_eq!(
            value,
            json!({"a": "<18446744073709551616123>", "b": [1, 2.5, "<0.10000000000000000000000000001>"],
                   "s": "3.14159265358979323846", "c": {"d": "<-1e999>", "e": 1e300, "f": 7.0}})
        );
        // A member given twice: the texts cannot be matched to the values; nothing is replaced.
        let twice = RawJson(RawValue::from_string(r#"{"a": 1, "a": 2.50}"#.into()).unwrap());
        assert_eq!(
            twice.value_keeping_numbers(&mut |_| Value::Null),
            json!({"a": 2.5})
        );
    }

    #[test]
    fn a_message_no_value_can_hold_is_refused() {
        let e = serde_json::from_str::<RawJson>(r#"{"n": 1e999}"#).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(serde_json::from_str::<RawJson>(r#"{"n": 1e300, "s": "1e999"}"#).is_ok());
    }

    #[test]
    fn pretty_in_a_pretty_file_and_equal_whatever_the_layout() {
        let raw = RawJson::from_value(&json!({"B": [1, 2.5], "A": "x"}));
        assert_eq!(raw.text(), r#"{"B":[1,2.5],"A":"x"}"#);
        let wrapped = serde_json::to_string_pretty(&json!({"m": 1})).unwrap();
        assert!(wrapped.contains('\n'));
        let text = serde_json::to_string_pretty(&vec![raw.clone()]).unwrap();
        assert_eq!(
            text,
            "[\n  {\n    \"B\": [\n      1,\n      2.5\n    ],\n    \"A\": \"x\"\n  }\n]"
        );
        let back: Vec<RawJson> = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0], raw, "equal although laid out differently");
        assert_eq!(back[0].value()["A"], "x");
    }
}
