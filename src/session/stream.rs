//! Reading a session file turn by turn, without holding the session: what `validate` does with
//! a session of any size. Each turn's messages are parsed when the turn is reached and
//! dropped after the callback, so memory is one turn plus what the callback keeps.

use crate::protocol::Interface;
use crate::protocol::json::{self, SyntaxError};
use crate::session::{FORMAT, FORMAT_PREFIX};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::io::Read;

/// One turn of a session, as read.
pub struct StreamedTurn {
    /// The dialogue's position in the session, and the turn's in the dialogue.
    pub dialogue: usize,
    pub turn: usize,
    /// The dialogue's interface, when the file names it before its turns (as this program
    /// writes it).
    pub interface: Option<Interface>,
    pub request: Value,
    pub reply: StreamedReply,
    /// The first turn of a new MCP session of the dialogue.
    pub new_session: bool,
    /// The dialogue's server and DialogID when its server kept it by DialogID (read from
    /// the dialogue's fields before its turns, as this program writes them).
    pub kept_as: Option<super::check::ServerDialogue>,
    /// Milliseconds from sending the Request to its reply (or to giving up).
    pub latency_ms: f64,
    /// The scenario step it was sent for, when the recording says (Locust's workers).
    pub step: Option<super::journal::StepRef>,
    /// The findings on how the Response travelled (MCP-BINDING section 1) that the recording
    /// kept: the messages alone cannot show them again.
    pub binding: Vec<crate::protocol::conformance::Finding>,
}

pub enum StreamedReply {
    Response(Value),
    ToolError(String),
    /// No reply (timeout, lost connection …).
    Nothing,
}

/// Why the file could not be read through.
#[derive(Debug)]
pub enum StreamError {
    NotSession(String),
    Syntax(SyntaxError),
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::NotSession(m) => f.write_str(m),
            StreamError::Syntax(e) => write!(f, "not a readable session: {e}"),
        }
    }
}

/// Whether text that starts like this is a session file (as this program writes them:
/// `format` first).
pub fn looks_like_session(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(512)]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    let Some(rest) = text.strip_prefix('{') else {
        return false;
    };
    let rest = rest.trim_start();
    let Some(rest) = rest.strip_prefix("\"format\"") else {
        return false;
    };
    rest.trim_start()
        .strip_prefix(':')
        .is_some_and(|r| r.trim_start().starts_with(&format!("\"{FORMAT_PREFIX}")))
}

/// Calls `each` for every turn of every dialogue of the session in `source`. Returns the
/// session's servers as its file defines them (what `validate` tells of the commands a file
/// would start; a definition this program cannot read is left out).
pub fn for_each_turn<R: Read>(
    source: R,
    each: &mut dyn FnMut(StreamedTurn),
) -> Result<Vec<crate::client::spec::ServerSpec>, StreamError> {
    let mut de = serde_json::Deserializer::from_reader(source);
    let mut format: Option<String> = None;
    let mut servers: Option<serde_json::Map<String, serde_json::Value>> = None;
    let seed = FileSeed {
        each,
        format: &mut format,
        servers: &mut servers,
    };
    seed.deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| StreamError::Syntax(e.into()))?;
    let servers = servers
        .and_then(|s| {
            crate::client::spec::parse_servers(&serde_json::Value::Object(s).to_string()).ok()
        })
        .unwrap_or_default();
    match format.as_deref() {
        Some(FORMAT) => Ok(servers),
        Some(other) => Err(StreamError::NotSession(format!(
            "/format is \"{other}\"; this program reads \"{FORMAT}\""
        ))),
        None => Err(StreamError::NotSession(format!(
            "not a bkn-explorer session: it has no \"format\": \"{FORMAT}\""
        ))),
    }
}

struct FileSeed<'a, 'f> {
    each: &'a mut dyn FnMut(StreamedTurn),
    format: &'f mut Option<String>,
    servers: &'f mut Option<serde_json::Map<String, serde_json::Value>>,
}

impl<'de> DeserializeSeed<'de> for FileSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => *self.format = Some(map.next_value()?),
                // Small beside the dialogues, and what the user is to be told of.
                "servers" => *self.servers = Some(map.next_value()?),
                "dialogues" => map.next_value_seed(DialoguesSeed { each: self.each })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct DialoguesSeed<'a> {
    each: &'a mut dyn FnMut(StreamedTurn),
}

impl<'de> DeserializeSeed<'de> for DialoguesSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for DialoguesSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of dialogues")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(DialogueSeed {
                each: &mut *self.each,
                index,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }
}

struct DialogueSeed<'a> {
    each: &'a mut dyn FnMut(StreamedTurn),
    index: usize,
}

impl<'de> DeserializeSeed<'de> for DialogueSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DialogueSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a dialogue object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut interface = None;
        let (mut server, mut dialog_id, mut version) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "interface" => interface = Some(map.next_value::<Interface>()?),
                "server" => server = Some(map.next_value::<String>()?),
                "dialogId" => dialog_id = Some(map.next_value::<String>()?),
                "protocolVersion" => version = Some(map.next_value::<String>()?),
                "turns" => map.next_value_seed(TurnsSeed {
                    each: &mut *self.each,
                    dialogue: self.index,
                    interface,
                    kept_as: server.as_deref().zip(dialog_id.as_deref()).and_then(
                        |(server, dialog_id)| {
                            super::check::server_dialogue(server, dialog_id, version.as_deref())
                        },
                    ),
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct TurnsSeed<'a> {
    each: &'a mut dyn FnMut(StreamedTurn),
    dialogue: usize,
    interface: Option<Interface>,
    kept_as: Option<super::check::ServerDialogue>,
}

impl<'de> DeserializeSeed<'de> for TurnsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

/// A turn as written, its messages still text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTurn {
    request: Box<RawValue>,
    #[serde(default)]
    response: Option<Box<RawValue>>,
    #[serde(default)]
    tool_error: Option<String>,
    #[serde(default)]
    new_session: bool,
    #[serde(default)]
    latency_ms: f64,
}

impl<'de> Visitor<'de> for TurnsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of turns")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let mut turn = 0;
        while let Some(raw) = seq.next_element::<RawTurn>()? {
            let parse = |raw: &RawValue, what: &str| {
                json::from_str::<Value>(raw.get()).map_err(|e| {
                    A::Error::custom(format!(
                        "/dialogues/{}/turns/{turn}/{what}: {}",
                        self.dialogue, e.message
                    ))
                })
            };
            let request = parse(&raw.request, "request")?;
            let reply = match (&raw.response, raw.tool_error) {
                (Some(r), _) => StreamedReply::Response(parse(r, "response")?),
                (None, Some(text)) => StreamedReply::ToolError(text),
                (None, None) => StreamedReply::Nothing,
            };
            (self.each)(StreamedTurn {
                dialogue: self.dialogue,
                turn,
                interface: self.interface,
                request,
                reply,
                new_session: raw.new_session,
                kept_as: self.kept_as.clone(),
                latency_ms: raw.latency_ms,
                step: None,
                binding: Vec::new(),
            });
            turn += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_and_walks_a_session() {
        let text = r#"{"format": "bkn-explorer-session/1", "servers": {}, "dialogues": [
            {"server": "s", "interface": "dac", "dialogId": "d", "turns": [
                {"request": {"a": 1}, "response": {"b": 2}, "sent": "t", "latencyMs": 1},
                {"request": {"a": 3}, "toolError": "no", "sent": "t", "latencyMs": 1, "newSession": true}]}]}"#;
        assert!(looks_like_session(text.as_bytes()));
        assert!(!looks_like_session(b"{\"Header\": 1}"));
        let mut seen = Vec::new();
        for_each_turn(text.as_bytes(), &mut |t| {
            seen.push((t.dialogue, t.turn, t.interface, t.request, t.new_session))
        })
        .unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].3["a"], 3);
        assert!(seen[1].4 && seen[0].2 == Some(Interface::Dac));
        let e = for_each_turn(&b"{\"dialogues\": []}"[..], &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("no \"format\""));
    }
}
