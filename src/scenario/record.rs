//! From what you did to a test: a scenario made from a recorded dialogue, whose expectations
//! are what the server answered (the fields that always change left out), its Requests cut
//! to what matters, and the IDs the server made up captured for the steps that use them. It
//! passes against the server it was recorded from, and is meant to be edited.

use crate::client::spec::{ServerSpec, TransportSpec};
use crate::client::turn::{Reply, Turn};
use crate::session::DialogueRecord;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Fields of a Request the client fills (the scenario leaves them to it).
const FILLED: [&str; 7] = [
    "Header",
    "Mode",
    "QueryID",
    "QueryTime",
    "DialogID",
    "TurnIndex",
    "DataXMData",
];
/// Common fields, said once in `defaults`.
const COMMON: [&str; 3] = ["MInstance", "UEnvironment", "SessionID"];
// Fields of a Response that are not expectations: they change from run to run, or copy the
// Request.
use crate::protocol::message::COMMON_FIELDS as VOLATILE;

#[derive(Serialize)]
struct Out {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<BTreeMap<&'static str, String>>,
    interface: &'static str,
    #[serde(skip_serializing_if = "Map::is_empty")]
    defaults: Map<String, Value>,
    steps: Vec<OutStep>,
}

#[derive(Serialize)]
struct OutStep {
    name: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    new_session: bool,
    request: Map<String, Value>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    capture: Map<String, Value>,
    expect: Map<String, Value>,
}

/// The scenario, as YAML, of the dialogue `record` of a session whose servers are `servers`;
/// `source` says where it came from (written at the top).
pub fn scenario_yaml(record: &DialogueRecord, server: Option<&ServerSpec>, source: &str) -> String {
    let mut scenario = Recorder::default();
    for turn in &record.turns {
        scenario.push(turn);
    }
    scenario.yaml(record, server, source)
}

/// A scenario made one turn at a time (`test --from-session` reads a recording of any size
/// turn by turn): what it keeps is its steps, and the identifiers said so far.
#[derive(Default)]
pub struct Recorder {
    defaults: Map<String, Value>,
    steps: Vec<OutStep>,
    /// Identifier-like strings the server said, each with the first step and pointer it came
    /// at, and its order (captures are made in the order the server said them). A map, not
    /// a list searched per turn: a recording of 80,000 turns took minutes that way.
    said_by_server: HashMap<String, (usize, usize, String)>,
    /// Identifier-like strings the client said (only those can matter: a capture is of an
    /// identifier the client had not said).
    said_by_client: HashSet<String>,
    /// The numbers recorded that a JSON value of this program does not hold as written (an
    /// integer beyond 64 bits, more digits than a double keeps): each stands in the steps as
    /// a placeholder string, and is written back as its recorded text in the YAML.
    exact: ExactNumbers,
}

/// Numbers kept as their text through the scenario's values (`RawJson::value_keeping_numbers`).
#[derive(Default)]
struct ExactNumbers {
    /// Makes the placeholders unlike any text a recording holds.
    nonce: String,
    texts: Vec<String>,
}

impl ExactNumbers {
    fn placeholder(&self, i: usize) -> String {
        // Letters and digits only: YAML writes it plain; `N1E` is no part of `N10E`.
        format!("BKNEXACT{}N{i}E", self.nonce)
    }

    fn keep(&mut self, text: &str) -> Value {
        if self.nonce.is_empty() {
            self.nonce = uuid::Uuid::new_v4().simple().to_string();
        }
        self.texts.push(text.to_owned());
        Value::String(self.placeholder(self.texts.len() - 1))
    }

    /// The YAML with each placeholder replaced by its number's text, written as a number.
    fn write_back(&self, mut yaml: String) -> String {
        for (i, text) in self.texts.iter().enumerate().rev() {
            let p = self.placeholder(i);
            for form in [format!("'{p}'"), format!("\"{p}\""), p] {
                yaml = yaml.replace(&form, text);
            }
        }
        yaml
    }
}

impl Recorder {
    /// The next recorded turn.
    pub fn push(&mut self, turn: &Turn) {
        let i = self.steps.len();
        let recorded = turn
            .request
            .value_keeping_numbers(&mut |text| self.exact.keep(text));
        if i == 0 {
            for key in COMMON {
                if let Some(v) = recorded.get(key) {
                    self.defaults.insert(key.to_owned(), v.clone());
                }
            }
        }
        let mut request = Map::new();
        if let Value::Object(fields) = &recorded {
            for (k, v) in fields {
                let common_same = COMMON.contains(&k.as_str()) && self.defaults.get(k) == Some(v);
                if !FILLED.contains(&k.as_str()) && !common_same {
                    request.insert(k.clone(), v.clone());
                }
            }
        }
        // An ID the server made up earlier and the client had not said: captured where it
        // came, and used by name here.
        let mut mentioned: Vec<(usize, usize, String, String)> = Vec::new();
        strings(&Value::Object(request.clone()), "", &mut |_, s| {
            if let Some((order, step, pointer)) = self.said_by_server.get(s)
                && !self.said_by_client.contains(s)
                && !mentioned.iter().any(|m| m.3 == s)
            {
                mentioned.push((*order, *step, pointer.clone(), s.to_owned()));
            }
        });
        mentioned.sort();
        for (_, step, pointer, text) in mentioned {
            let name = format!("id{}", self.steps[step].capture.len() + 1 + step * 100);
            self.steps[step]
                .capture
                .insert(name.clone(), Value::String(pointer));
            request = replace(&Value::Object(request), &text, &format!("{{{{{name}}}}}"))
                .as_object()
                .cloned()
                .unwrap_or_default();
        }
        strings(&recorded, "", &mut |_, s| {
            if looks_like_id(s) {
                self.said_by_client.insert(s.to_owned());
            }
        });
        let expect = expectations(turn, &mut self.exact);
        if let Some(response) = turn.response() {
            strings(&response, "", &mut |p, s| {
                let volatile = VOLATILE
                    .iter()
                    .any(|v| p == format!("/{v}") || p.starts_with(&format!("/{v}/")));
                if !volatile && looks_like_id(s) && !self.said_by_client.contains(s) {
                    let order = self.said_by_server.len();
                    self.said_by_server
                        .entry(s.to_owned())
                        .or_insert_with(|| (order, i, p.to_owned()));
                }
            });
        }
        let kind = recorded
            .get("Kind")
            .and_then(Value::as_str)
            .unwrap_or("feedback");
        // Named by its TurnIndex, as the explorer's transcript numbers turns (else by place).
        let number = recorded
            .get("TurnIndex")
            .and_then(crate::protocol::message::as_index)
            .unwrap_or(i as u64);
        self.steps.push(OutStep {
            name: format!("turn {number} ({kind})"),
            new_session: turn.new_session,
            request,
            capture: Map::new(),
            expect,
        });
    }

    /// The scenario of dialogue `record` (its name, notes and interface; its turns are the
    /// ones pushed), as YAML.
    pub fn yaml(
        self,
        record: &DialogueRecord,
        server: Option<&ServerSpec>,
        source: &str,
    ) -> String {
        let out = Out {
            name: record
                .name
                .clone()
                .unwrap_or_else(|| format!("dialogue {}", record.dialog_id)),
            description: record.notes.clone(),
            server: server.and_then(server_of),
            interface: record.interface.code(),
            defaults: self.defaults,
            steps: self.steps,
        };
        let exact = self.exact;
        let yaml = exact.write_back(serde_saphyr::to_string(&out).unwrap_or_default());
        format!(
            "# A scenario made by bkn-explorer from {source}: its expectations are what the server\n\
             # answered then. Edit it: keep what matters, loosen what may change (docs/tests.md).\n{yaml}"
        )
    }
}

fn server_of(spec: &ServerSpec) -> Option<BTreeMap<&'static str, String>> {
    let (key, value) = match &spec.transport {
        TransportSpec::Embedded { interface, args } if args.is_empty() => {
            ("embedded", interface.code().to_owned())
        }
        TransportSpec::Embedded { .. } | TransportSpec::Stdio(_) => ("stdio", spec.location()),
        TransportSpec::Http(h) => ("url", h.url.clone()),
    };
    Some(BTreeMap::from([(key, value)]))
}

/// What the recorded turn says its answer was.
fn expectations(turn: &Turn, exact: &mut ExactNumbers) -> Map<String, Value> {
    let mut expect = Map::new();
    let findings: Vec<Value> = turn
        .findings
        .iter()
        .map(|f| Value::String(f.finding.check.as_str().to_owned()))
        .collect();
    if !findings.is_empty() {
        expect.insert("findings".into(), Value::Array(findings));
    }
    match &turn.reply {
        Reply::ToolError(_) => {
            expect.insert("tool_error".into(), Value::Bool(true));
        }
        Reply::Error(_) => {}
        Reply::Response(raw) => {
            let response = raw.value_keeping_numbers(&mut |text| exact.keep(text));
            if let Some(o) = response.get("Outcome") {
                expect.insert("outcome".into(), o.clone());
            }
            let mut values = Map::new();
            if let Value::Object(fields) = &response {
                for (k, v) in fields {
                    if VOLATILE.contains(&k.as_str()) || k == "Outcome" {
                        continue;
                    }
                    values.insert(format!("/{k}"), as_expected(v));
                }
            }
            if !values.is_empty() {
                expect.insert("values".into(), Value::Object(values));
            }
        }
    }
    expect
}

/// A value to compare with, written so that it cannot be read as a matcher.
fn as_expected(v: &Value) -> Value {
    match v {
        Value::Object(map)
            if !map.is_empty()
                && map.keys().all(|k| {
                    [
                        "equals", "one_of", "matches", "between", "min", "max", "present",
                    ]
                    .contains(&k.as_str())
                }) =>
        {
            let mut wrapped = Map::new();
            wrapped.insert("equals".into(), v.clone());
            Value::Object(wrapped)
        }
        other => other.clone(),
    }
}

/// An identifier a server might make up: a UUID, or a word with `#` or `:` in it.
fn looks_like_id(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok()
        || (s.len() >= 3
            && !s.contains(' ')
            && (s.contains('#') || s.contains(':'))
            && s.chars()
                .all(|c| c.is_alphanumeric() || "#:._-".contains(c)))
}

/// Every string of a value, with its pointer.
fn strings(v: &Value, at: &str, each: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => each(at, s),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, &format!("{at}/{i}"), each);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let k = k.replace('~', "~0").replace('/', "~1");
                strings(item, &format!("{at}/{k}"), each);
            }
        }
        _ => {}
    }
}

fn replace(v: &Value, text: &str, with: &str) -> Value {
    match v {
        Value::String(s) if s == text => Value::String(with.to_owned()),
        Value::Array(items) => Value::Array(items.iter().map(|i| replace(i, text, with)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), replace(i, text, with)))
                .collect(),
        ),
        other => other.clone(),
    }
}
