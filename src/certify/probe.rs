//! One rule's work: the dialogues it opens (each on a fresh connection), every turn they
//! exchange kept as evidence, and what it checked and found.

use crate::certify::Evidence;
use crate::certify::learn::Learnt;
use crate::client::connection::{ConnectOptions, Connection};
use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::{Dialogue, Filling};
use crate::client::generation::ProtocolChoice;
use crate::client::spec::ServerSpec;
use crate::client::turn::{ErrorKind, Reply, Subject, Turn};
use crate::protocol::Interface;
use crate::protocol::conformance::Check;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// What every rule shares: the server, how to reach it, and what was learnt.
pub struct Ctx {
    pub spec: ServerSpec,
    pub options: ConnectOptions,
    pub overrides: Overrides,
    pub interface: Interface,
    pub learnt: Learnt,
    pub cancel: CancellationToken,
}

impl Ctx {
    /// A fresh connection and a dialogue on it, in the generation the run speaks.
    pub async fn dialogue(&self, label: &str) -> Result<Dlg, String> {
        self.dialogue_in(label, self.options.protocol).await
    }

    /// The same, pinned to a generation (`None`: as the run's options say).
    pub async fn dialogue_in(
        &self,
        label: &str,
        protocol: Option<ProtocolChoice>,
    ) -> Result<Dlg, String> {
        let mut options = self.options.clone();
        options.protocol = protocol;
        let d = Dialogue::connect(
            &self.spec,
            &options,
            self.interface,
            Chosen::built_in(),
            &self.overrides,
        )
        .await
        .map_err(|e| format!("dialogue {label} could not be opened: {e}"))?;
        Ok(Dlg {
            d,
            label: label.to_owned(),
        })
    }

    /// A connection alone (no dialogue), for a rule that speaks JSON-RPC itself.
    pub async fn connection(&self) -> Result<Connection, String> {
        Connection::connect(&self.spec, &self.options)
            .await
            .map_err(|e| e.message)
    }
}

/// A dialogue a rule opened.
pub struct Dlg {
    pub d: Dialogue,
    pub label: String,
}

/// One turn's outcome, with the Response parsed.
pub struct Sent {
    pub turn: Turn,
    pub response: Option<Value>,
    /// The TurnIndex the Request carried.
    pub index: Option<u64>,
}

impl Sent {
    pub fn is_response(&self) -> bool {
        self.response.is_some()
    }

    pub fn tool_error(&self) -> Option<&str> {
        match &self.turn.reply {
            Reply::ToolError(t) => Some(t),
            _ => None,
        }
    }

    /// Why nothing usable came back, if so.
    pub fn no_reply(&self) -> Option<String> {
        match &self.turn.reply {
            Reply::Error(e) => Some(e.message.clone()),
            _ => None,
        }
    }

    /// What came back, in a few words: "a Response", "a tool error: ...", "no answer: ...".
    pub fn what(&self) -> String {
        match &self.turn.reply {
            Reply::Response(_) => "a Response".into(),
            Reply::ToolError(t) => format!(
                "a tool error ({})",
                t.lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(160)
                    .collect::<String>()
            ),
            Reply::Error(e) => format!("no Response ({})", e.message),
        }
    }

    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.response.as_ref()?.pointer(pointer)
    }

    /// The Response's PA Status of each Step, in the order listed.
    pub fn statuses(&self) -> Vec<(u64, String)> {
        self.get("/Feasibility/Steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| {
                Some((
                    s.get("Step").and_then(crate::protocol::message::as_index)?,
                    s.get("PAStatus")?.as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    /// The PA Status of Step `step`.
    pub fn status_of(&self, step: u64) -> Option<String> {
        self.statuses()
            .into_iter()
            .find(|(s, _)| *s == step)
            .map(|(_, st)| st)
    }

    /// CommitmentID -> Status, as listed.
    pub fn commitments(&self) -> Vec<(String, String)> {
        self.get("/CommitmentStatus")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| {
                Some((
                    c.get("CommitmentID")?.as_str()?.to_owned(),
                    c.get("Status")?.as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    pub fn commitment(&self, id: &str) -> Option<String> {
        self.commitments()
            .into_iter()
            .find(|(c, _)| c == id)
            .map(|(_, s)| s)
    }
}

impl Dlg {
    /// Sends `fields` with the common fields it lacks filled in (this dialogue's DialogID
    /// and next TurnIndex). A turn without an answer (the server gone, hung, or answering
    /// nonsense) is a problem of the rule.
    pub async fn send(&mut self, p: &mut Probe, fields: Value) -> Sent {
        let request = self.d.prepare(fields, Filling::Missing);
        self.send_prepared(p, request, true).await
    }

    /// Sends a Request as given (already filled), noting a missing answer or not.
    pub async fn send_prepared(&mut self, p: &mut Probe, request: Value, note: bool) -> Sent {
        let label = self.label.clone();
        self.send_labelled(p, request, note, &label).await
    }

    /// Sends a Request (already filled) of another dialogue over this one's connection (a
    /// second dialogue kept by DialogID): its evidence goes under `label`.
    pub async fn send_as(&mut self, p: &mut Probe, request: Value, label: &str) -> Sent {
        self.send_labelled(p, request, true, label).await
    }

    async fn send_labelled(
        &mut self,
        p: &mut Probe,
        request: Value,
        note: bool,
        label: &str,
    ) -> Sent {
        let dialog_id = request
            .get("DialogID")
            .and_then(Value::as_str)
            .unwrap_or(self.d.dialog_id())
            .to_owned();
        let index = request
            .get("TurnIndex")
            .and_then(crate::protocol::message::as_index);
        let turn = self.d.send(request, &p.cancel).await;
        let response = match &turn.reply {
            Reply::Response(r) => Some(r.value()),
            _ => None,
        };
        if note && let Reply::Error(e) = &turn.reply {
            let what = match e.kind {
                ErrorKind::Timeout => "no answer in time (the server hung?)",
                ErrorKind::Gone => "the connection was lost (the server crashed?)",
                _ => "no usable answer",
            };
            p.fail(format!(
                "dialogue {label} turn {}: {what}: {}",
                index.map_or("?".into(), |i| i.to_string()),
                e.message
            ));
        }
        p.evidence.push(Evidence::Turn {
            dialogue: label.to_owned(),
            dialog_id,
            protocol: self.d.connection.summary.protocol_version.clone(),
            turn: Box::new(turn.clone()),
        });
        Sent {
            turn,
            response,
            index,
        }
    }

    /// The Request `fields` would be sent as, filled at `turn` (not sent).
    pub fn filled_at(&self, fields: Value, turn: u64) -> Value {
        let mut v = self.d.prepare(fields, Filling::Missing);
        v["TurnIndex"] = json!(turn);
        v
    }

    pub async fn close(self) {
        self.d.close().await;
    }
}

/// What a rule checked and found.
pub struct Probe {
    pub evidence: Vec<Evidence>,
    pub problems: Vec<String>,
    pub checked: usize,
    pub skip: Option<String>,
    pub cancel: CancellationToken,
}

impl Probe {
    pub fn new(cancel: CancellationToken) -> Probe {
        Probe {
            evidence: Vec::new(),
            problems: Vec::new(),
            checked: 0,
            skip: None,
            cancel,
        }
    }

    /// One check: `ok`, else the problem.
    pub fn check(&mut self, ok: bool, problem: impl FnOnce() -> String) -> bool {
        self.checked += 1;
        if !ok {
            self.problems.push(problem());
        }
        ok
    }

    pub fn fail(&mut self, problem: impl Into<String>) {
        self.checked += 1;
        self.problems.push(problem.into());
    }

    /// The rule cannot be checked here, and why.
    pub fn skip(&mut self, why: impl Into<String>) {
        if self.skip.is_none() {
            self.skip = Some(why.into());
        }
    }

    /// Opens a dialogue, or fails the rule with why it could not be.
    pub async fn open(&mut self, ctx: &Ctx, label: &str) -> Option<Dlg> {
        match ctx.dialogue(label).await {
            Ok(d) => Some(d),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    /// The judge's findings of `checks` on a turn, each a problem; counts as one check.
    pub fn judged(&mut self, sent: &Sent, checks: &[Check]) {
        self.checked += 1;
        for f in &sent.turn.findings {
            if f.on == Subject::Response && checks.contains(&f.finding.check) {
                self.problems.push(format!(
                    "turn {}: {}",
                    sent.index.map_or("?".into(), |i| i.to_string()),
                    f.finding
                ));
            }
        }
    }

    /// A turn that should have been answered with a Response.
    pub fn answered(&mut self, sent: &Sent, what: &str) -> bool {
        if sent.no_reply().is_some() {
            // Already a problem (`Dlg::send`).
            return false;
        }
        self.check(sent.is_response(), || {
            format!(
                "{what} (turn {}) got {}, not a Response",
                sent.index.map_or("?".into(), |i| i.to_string()),
                sent.what()
            )
        })
    }

    /// A turn that should have been refused with a tool error.
    pub fn refused(&mut self, sent: &Sent, what: &str) -> bool {
        if sent.no_reply().is_some() {
            return false;
        }
        self.check(sent.tool_error().is_some(), || {
            format!(
                "{what} (turn {}) got {}, not a tool error",
                sent.index.map_or("?".into(), |i| i.to_string()),
                sent.what()
            )
        })
    }
}

/// A JSON object from a `json!` literal's map.
pub fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A Response with what changes from run to run taken out (identifiers, times, and the
/// DataID), to compare two answers.
pub fn stable(response: &Value) -> Value {
    let mut v = response.clone();
    if let Some(o) = v.as_object_mut() {
        for k in [
            "QueryID",
            "QueryTime",
            "RequestID",
            "DialogID",
            "SessionID",
            "TurnIndex",
        ] {
            o.remove(k);
        }
        if let Some(d) = o.get_mut("DataXMData").and_then(Value::as_object_mut) {
            d.remove("DataID");
            d.remove("Time");
        }
    }
    v
}
