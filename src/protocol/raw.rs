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
