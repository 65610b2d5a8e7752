//! A server that answers from a recording (`serve --from-session FILE`): for agent developers
//! who want to run their agent against what a real service once said, offline.
//!
//! A Request is matched to a recorded exchange of its interface (`Match`), and the recorded
//! Response comes back with its correlation fields made this Request's: RequestID (the
//! Request's QueryID), DialogID, TurnIndex, MInstance, UEnvironment and SessionID, a new
//! QueryID, QueryTime and DataXMData DataID, so that it stays conformant. A Request that
//! matches nothing gets a conformant `not_answered` Response saying so (and a log line),
//! never a hang. Each MCP session matches on its own: an exchange is used once per session
//! while unused ones match; after that the last match is used again.

use crate::protocol::Interface;
use crate::protocol::dac::{Answer, DacResponse};
use crate::protocol::message::{Common, new_id, now_rfc3339};
use crate::protocol::usr::{Provenance, UsrResponse};
use crate::server::mcp::{Backend, ResourceInfo};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// How a Request finds its recorded exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Match {
    /// The same Kind and content; the fields every message of a dialogue has (MInstance,
    /// SessionID, QueryID, QueryTime, DialogID, TurnIndex, DataXMData …) are not compared
    /// (the default).
    #[default]
    Strict,
    /// The next recorded exchange of the same Kind, whatever it asked.
    Kind,
    /// The next recorded exchange, whatever it was.
    Sequence,
}

/// One recorded exchange, kept as its compact text: a recording of a gigabyte is held as
/// the text of its messages, not as values (several times the text) nor as the session.
#[derive(Clone, Debug)]
pub struct Exchange {
    request: Box<RawValue>,
    response: Box<RawValue>,
}

impl Exchange {
    pub fn new(request: &Value, response: &Value) -> Exchange {
        Exchange {
            request: compact_value(request),
            response: compact_value(response),
        }
    }

    /// From the messages' text as it is in a file (a session's is indented): rewritten
    /// compact, without making values of it.
    pub fn from_text(request: &str, response: &str) -> Exchange {
        Exchange {
            request: compact_text(request),
            response: compact_text(response),
        }
    }

    fn request(&self) -> Value {
        crate::protocol::json::from_str(self.request.get()).unwrap_or(Value::Null)
    }

    fn response(&self) -> Value {
        crate::protocol::json::from_str(self.response.get()).unwrap_or(Value::Null)
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

fn compact_value(v: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).unwrap_or_else(|_| null())
}

fn compact_text(text: &str) -> Box<RawValue> {
    let mut out = Vec::with_capacity(text.len());
    let mut from = serde_json::Deserializer::from_str(text);
    from.disable_recursion_limit();
    let mut to = serde_json::Serializer::new(&mut out);
    if serde_transcode::transcode(&mut from, &mut to).is_err() {
        return null();
    }
    String::from_utf8(out)
        .ok()
        .and_then(|t| RawValue::from_string(t).ok())
        .unwrap_or_else(null)
}

/// A hash of a value that does not depend on the order of its members (two Requests equal as
/// values hash alike): the index of `Match::Strict`, checked against the value on a hit.
fn hash_of(v: &Value) -> u64 {
    fn feed(v: &Value, h: &mut impl Hasher) {
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Number(n) => (2u8, n.to_string()).hash(h),
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(items) => {
                (4u8, items.len()).hash(h);
                items.iter().for_each(|i| feed(i, h));
            }
            Value::Object(map) => {
                (5u8, map.len()).hash(h);
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for k in keys {
                    k.hash(h);
                    feed(&map[k], h);
                }
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(v, &mut h);
    h.finish()
}

pub struct Recorded {
    interface: Interface,
    exchanges: Vec<Exchange>,
    /// The exchanges by the hash of their Request as matched (`Match::Strict`), in order.
    by_key: HashMap<u64, Vec<usize>>,
    /// The exchanges by their Request's Kind (`Match::Kind`), in order.
    by_kind: HashMap<String, Vec<usize>>,
    mode: Match,
    /// What the recording's Requests named, published so that clients fill theirs alike.
    m_instance: Option<String>,
    u_environment: Option<String>,
    source: String,
    /// The name the recorded server gave its tool, when the recording says.
    tool: Option<String>,
    /// The resources the recorded server gave (URI and JSON), when the recording has them.
    resources: Vec<(String, Value)>,
}

/// One MCP session's use of the recording.
#[derive(Default)]
pub struct Replaying {
    used: Vec<bool>,
    /// The next exchange for `Match::Sequence`.
    next: usize,
    /// The last CommitmentStatus given (a not_answered Response repeats it: the
    /// commitments are as they were).
    commitments: Option<Value>,
}

/// What a Request asks, without what is the same in every message of a dialogue: the
/// properties both modes have (the schemas' Table 1: Header, MInstance … QueryID,
/// QueryTime, DialogID, TurnIndex, DataXMData), but its Kind. Another client's Requests, with
/// their own session and metadata, then find the recorded question they repeat.
fn key(interface: Interface, request: &Value) -> Value {
    let mut key = request.clone();
    if let Some(o) = key.as_object_mut() {
        for p in crate::protocol::schema::properties(interface, crate::protocol::Mode::Request) {
            if p.common && p.name != "Kind" {
                o.remove(&p.name);
            }
        }
    }
    key
}

impl Recorded {
    /// `source` names the recording in descriptions and logs.
    pub fn new(
        interface: Interface,
        exchanges: Vec<Exchange>,
        mode: Match,
        source: &str,
    ) -> Recorded {
        let mut recorded = Recorded {
            interface,
            exchanges: Vec::new(),
            by_key: HashMap::new(),
            by_kind: HashMap::new(),
            m_instance: None,
            u_environment: None,
            mode,
            source: source.to_owned(),
            tool: None,
            resources: Vec::new(),
        };
        for e in exchanges {
            recorded.push(e);
        }
        recorded
    }

    /// One more exchange, indexed (each Request is read once, here).
    fn push(&mut self, exchange: Exchange) {
        let at = self.exchanges.len();
        let request = exchange.request();
        let first = |field: &str, slot: &mut Option<String>| {
            if slot.is_none() {
                *slot = request
                    .get(field)
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
        };
        first("MInstance", &mut self.m_instance);
        first("UEnvironment", &mut self.u_environment);
        if let Some(kind) = request.get("Kind").and_then(Value::as_str) {
            self.by_kind.entry(kind.to_owned()).or_default().push(at);
        }
        self.by_key
            .entry(hash_of(&key(self.interface, &request)))
            .or_default()
            .push(at);
        self.exchanges.push(exchange);
    }

    /// What the recording says the server offered: its tool's name and its resources (a
    /// proxy's journal has them), served as they were.
    pub fn offering(mut self, tool: Option<String>, resources: Vec<(String, Value)>) -> Recorded {
        self.tool = tool;
        self.resources = resources;
        self
    }

    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }

    fn find(&self, state: &mut Replaying, request: &Value) -> Option<usize> {
        state.used.resize(self.exchanges.len(), false);
        let none: &[usize] = &[];
        let chosen = match self.mode {
            Match::Sequence => {
                let i = state.next;
                state.next += 1;
                return (i < self.exchanges.len()).then_some(i);
            }
            Match::Kind => {
                let kind = request.get("Kind").and_then(Value::as_str).unwrap_or("");
                let candidates = self.by_kind.get(kind).map_or(none, Vec::as_slice);
                let unused = candidates.iter().copied().find(|&i| !state.used[i]);
                unused.or(candidates.last().copied())?
            }
            Match::Strict => {
                let wanted = key(self.interface, request);
                let candidates = self
                    .by_key
                    .get(&hash_of(&wanted))
                    .map_or(none, Vec::as_slice);
                // A hash says where to look; the value says whether it is the question (only
                // the one chosen is read).
                let same = |i: &usize| key(self.interface, &self.exchanges[*i].request()) == wanted;
                let unused = candidates
                    .iter()
                    .filter(|&&i| !state.used[i])
                    .find(|i| same(i))
                    .copied();
                match unused {
                    Some(i) => i,
                    None => candidates.iter().rev().find(|i| same(i)).copied()?,
                }
            }
        };
        state.used[chosen] = true;
        Some(chosen)
    }

    /// The recorded Response made this Request's.
    fn answer_with(&self, recorded: &Value, request: &Value) -> Value {
        let mut response = recorded.clone();
        if let Some(o) = response.as_object_mut() {
            for (to, from) in [
                ("RequestID", "QueryID"),
                ("DialogID", "DialogID"),
                ("TurnIndex", "TurnIndex"),
                ("MInstance", "MInstance"),
                ("UEnvironment", "UEnvironment"),
                ("SessionID", "SessionID"),
            ] {
                if let Some(v) = request.get(from) {
                    o.insert(to.into(), v.clone());
                }
            }
            o.insert("QueryID".into(), json!(new_id()));
            o.insert("QueryTime".into(), json!(now_rfc3339()));
            if let Some(meta) = o.get_mut("DataXMData").and_then(Value::as_object_mut) {
                meta.insert("DataID".into(), json!(new_id()));
            }
        }
        response
    }

    fn unmatched(&self, state: &Replaying, request: &Value) -> Value {
        let why = format!(
            "Nothing in the recording {} answers this {} Request (matching: {:?}).",
            self.source,
            request.get("Kind").and_then(Value::as_str).unwrap_or("?"),
            self.mode
        );
        let Ok(common) = serde_json::from_value::<Common>(request.clone()) else {
            return Value::Null;
        };
        match self.interface {
            Interface::Dac => {
                let mut r = DacResponse::answering(
                    &common,
                    crate::protocol::message::Outcome::NotAnswered,
                    self.aim_id(),
                );
                r.answer = Some(Answer {
                    text: Some(why),
                    ..Answer::default()
                });
                let mut value = serde_json::to_value(r).unwrap_or_default();
                value["CommitmentStatus"] = state.commitments.clone().unwrap_or_else(|| json!([]));
                value
            }
            Interface::Usr => {
                let mut r = UsrResponse::answering(
                    &common,
                    crate::protocol::message::Outcome::NotAnswered,
                    self.aim_id(),
                );
                r.provenance = Some(Provenance {
                    sources: vec![],
                    method: "recorded".into(),
                    evidence: Some(vec![why]),
                });
                serde_json::to_value(r).unwrap_or_default()
            }
        }
    }
}

impl Backend for Recorded {
    type Dialogue = Replaying;

    fn interface(&self) -> Interface {
        self.interface
    }

    fn tool_name(&self) -> String {
        self.tool
            .clone()
            .unwrap_or_else(|| self.interface.tool_name().to_owned())
    }

    fn aim_id(&self) -> &str {
        "RECORDING"
    }

    fn describe(&self) -> String {
        format!(
            "Answers from the recording {} ({} exchanges of {}), matched {:?}; a Request it has \
             no answer for is answered not_answered.",
            self.source,
            self.exchanges.len(),
            self.interface.name(),
            self.mode
        )
    }

    fn answer(&self, state: &mut Replaying, request: &Value) -> Value {
        let response = match self.find(state, request) {
            Some(i) => self.answer_with(&self.exchanges[i].response(), request),
            None => {
                let turn = request.get("TurnIndex").cloned().unwrap_or_default();
                let kind = request.get("Kind").and_then(|k| k.as_str()).unwrap_or("?");
                tracing::warn!(%turn, kind, "no recorded exchange matches: answered not_answered");
                self.unmatched(state, request)
            }
        };
        if let Some(c) = response.get("CommitmentStatus") {
            state.commitments = Some(c.clone());
        }
        response
    }

    fn resources(&self) -> Vec<ResourceInfo> {
        if !self.resources.is_empty() {
            return self
                .resources
                .iter()
                .map(|(uri, _)| ResourceInfo {
                    uri: uri.clone(),
                    name: uri.rsplit('/').next().unwrap_or(uri).to_owned(),
                    description: format!("as the recorded server gave it ({})", self.source),
                })
                .collect();
        }
        let (uri, name) = match self.interface {
            Interface::Dac => (crate::protocol::resources::DAC_DOMAIN, "domain"),
            Interface::Usr => (crate::protocol::resources::USR_USERS, "users"),
        };
        vec![ResourceInfo {
            uri: uri.into(),
            name: name.into(),
            description: format!(
                "The M-Instance the recording's Requests named ({})",
                self.m_instance.as_deref().unwrap_or("none")
            ),
        }]
    }

    fn read(&self, uri: &str) -> Option<Value> {
        if !self.resources.is_empty() {
            return self
                .resources
                .iter()
                .find(|(u, _)| u == uri)
                .map(|(_, v)| v.clone());
        }
        let mut out = serde_json::Map::new();
        if let Some(m) = &self.m_instance {
            out.insert("MInstance".into(), json!(m));
        }
        if let Some(u) = &self.u_environment {
            out.insert("UEnvironment".into(), json!(u));
        }
        match (self.interface, uri) {
            (Interface::Dac, crate::protocol::resources::DAC_DOMAIN) => Some(Value::Object(out)),
            (Interface::Usr, crate::protocol::resources::USR_USERS) => {
                out.insert("Users".into(), json!([]));
                Some(Value::Object(out))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(kind: &str, what: &str, outcome: &str) -> Exchange {
        Exchange::new(
            &json!({"Kind": kind, "Question": what, "QueryID": "old", "SessionID": "s"}),
            &json!({"Outcome": outcome, "QueryID": "r", "RequestID": "old", "DataXMData": {"DataID": "d"}}),
        )
    }

    fn recorded(mode: Match) -> Recorded {
        Recorded::new(
            Interface::Dac,
            vec![
                exchange("semantic_grounding", "a", "one"),
                exchange("semantic_grounding", "b", "two"),
                exchange("constraints", "c", "three"),
                exchange("semantic_grounding", "a", "four"),
            ],
            mode,
            "test",
        )
    }

    fn ask(r: &Recorded, s: &mut Replaying, kind: &str, what: &str) -> Option<usize> {
        r.find(
            s,
            &json!({"Kind": kind, "Question": what, "QueryID": "new", "SessionID": "other"}),
        )
    }

    #[test]
    fn each_way_of_matching_finds_its_exchange() {
        let strict = recorded(Match::Strict);
        let mut s = Replaying::default();
        // The same question twice: the recording's two answers in order, then the last again.
        assert_eq!(ask(&strict, &mut s, "semantic_grounding", "a"), Some(0));
        assert_eq!(ask(&strict, &mut s, "semantic_grounding", "a"), Some(3));
        assert_eq!(ask(&strict, &mut s, "semantic_grounding", "a"), Some(3));
        assert_eq!(ask(&strict, &mut s, "semantic_grounding", "z"), None);

        let kind = recorded(Match::Kind);
        let mut s = Replaying::default();
        assert_eq!(ask(&kind, &mut s, "semantic_grounding", "z"), Some(0));
        assert_eq!(ask(&kind, &mut s, "semantic_grounding", "z"), Some(1));
        assert_eq!(ask(&kind, &mut s, "constraints", "z"), Some(2));
        assert_eq!(ask(&kind, &mut s, "feasibility", "z"), None);

        let sequence = recorded(Match::Sequence);
        let mut s = Replaying::default();
        let got: Vec<_> = (0..5)
            .map(|_| ask(&sequence, &mut s, "constraints", "z"))
            .collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(3), None]);
    }

    #[test]
    fn the_recorded_response_is_made_the_new_requests() {
        let r = recorded(Match::Strict);
        let request = json!({"QueryID": "q2", "DialogID": "D2", "TurnIndex": 5, "SessionID": "S2"});
        let out = r.answer_with(&r.exchanges[0].response(), &request);
        assert_eq!(out["RequestID"], "q2");
        assert_eq!(out["DialogID"], "D2");
        assert_eq!(out["TurnIndex"], 5);
        assert_eq!(out["SessionID"], "S2");
        assert_ne!(out["QueryID"], "r");
        assert_ne!(out["DataXMData"]["DataID"], "d");
        assert_eq!(out["Outcome"], "one");
    }
}
