//! The skeleton of a session file: the whole file as a JSON value, except that each turn's
//! `request` and `response` are left out (replaced by `{}`). The session schema allows any JSON
//! there, so the skeleton is enough to validate the file and report each mistake by its JSON
//! pointer, without building the messages' trees (four times their text in memory).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Where in a session file a value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Root,
    Dialogues,
    Dialogue,
    Turns,
    Turn,
    Elsewhere,
}

impl At {
    fn member(self, key: &str) -> At {
        match (self, key) {
            (At::Root, "dialogues") => At::Dialogues,
            (At::Dialogue, "turns") => At::Turns,
            _ => At::Elsewhere,
        }
    }

    fn item(self) -> At {
        match self {
            At::Dialogues => At::Dialogue,
            At::Turns => At::Turn,
            _ => At::Elsewhere,
        }
    }
}

/// Parses the skeleton of a session file's text.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Skeleton(At::Root).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Parses the skeleton of one turn's text (its messages left out).
pub fn parse_turn(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Skeleton(At::Turn).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct Skeleton(At);

impl<'de> DeserializeSeed<'de> for Skeleton {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skeleton {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Skeleton(self.0.item()))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if self.0 == At::Turn && (key == "request" || key == "response") {
                map.next_value::<IgnoredAny>()?;
                Value::Object(Map::new())
            } else {
                map.next_value_seed(Skeleton(self.0.member(&key)))?
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn messages_are_left_out_and_the_rest_kept() {
        let text = r#"{"format": "f", "dialogues": [{"turns": [{"request": {"Big": [1, 2, 3]}, "response": 7, "sent": "t"}], "x": {"request": 1}}]}"#;
        let v = super::parse(text).unwrap();
        assert_eq!(
            v["dialogues"][0]["turns"][0]["request"],
            serde_json::json!({})
        );
        assert_eq!(
            v["dialogues"][0]["turns"][0]["response"],
            serde_json::json!({})
        );
        assert_eq!(v["dialogues"][0]["turns"][0]["sent"], "t");
        assert_eq!(
            v["dialogues"][0]["x"]["request"], 1,
            "only turns' messages are left out"
        );
        assert!(super::parse("{\"a\": 1} x").is_err());
    }
}
