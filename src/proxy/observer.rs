//! What the proxy sees pass, read as MCP: the BKN tools the server lists, each `tools/call`
//! of one of them and its answer, made into a checked turn (the same checks as every other
//! client: `client::dialogue::request_findings` and `checked_reply`) and written to the
//! journal. Everything else (other methods, notifications, progress, messages that are not
//! JSON) is passed by the proxy untouched and only noted here when it matters.
//!
//! A dialogue is one DialogID of one interface: the agent's first Request with a DialogID
//! opens it, and a Request with another DialogID opens the next. The observer keeps no
//! message after its exchange is written: memory is the pending Requests and each
//! dialogue's checker.

use crate::client::connection::find_bkn_tools;
use crate::client::dialogue::{checked_reply, request_findings};
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError, TurnFinding};
use crate::protocol::Interface;
use crate::protocol::conformance::Accepted;
use crate::protocol::conformance::DialogueChecker;
use crate::protocol::message::rfc3339;
use crate::protocol::raw::RawJson;
use crate::session::journal::Writer;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// From the agent (Basic Knowledge) to the server.
    Agent,
    /// From the server to the agent.
    Server,
}

impl Side {
    /// Who sent a message, as a note says it.
    pub fn who(self) -> &'static str {
        match self {
            Side::Agent => "the agent",
            Side::Server => "the server",
        }
    }
}

enum Pending {
    /// `initialize`: its answer names the MCP version of the session (2025-11-25 and before).
    Initialize,
    ToolsList,
    ResourceRead(String),
    Call(Box<Call>),
}

/// A BKN Request on its way: its place in its dialogue is fixed when it passes, so that the
/// recording keeps the agent's order even when answers come back in another.
struct Call {
    dialogue: usize,
    seq: u64,
    interface: Interface,
    arguments: Value,
    findings: Vec<TurnFinding>,
    accepted: Accepted,
    sent: SystemTime,
    sent_at: Instant,
}

struct Watched {
    id: u64,
    interface: Interface,
    dialog_id: String,
    checker: DialogueChecker,
    /// Requests seen, and the next one to write.
    issued: u64,
    written: u64,
    /// Turns finished before an earlier one (written when it is).
    waiting: BTreeMap<u64, Turn>,
}

/// The recording several observers write to (one per MCP session behind an HTTP proxy):
/// the journal, and the next dialogue id, which is the recording's, not a session's.
#[derive(Clone)]
pub struct Recording(Arc<Mutex<(Option<Writer>, u64)>>);

impl Recording {
    pub fn new(writer: Option<Writer>) -> Recording {
        Recording(Arc::new(Mutex::new((writer, 1))))
    }

    fn with(&self, f: impl FnOnce(&mut Writer)) {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = &mut inner.0 {
            f(w);
        }
    }

    fn next_dialogue(&self) -> u64 {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let id = inner.1;
        inner.1 += 1;
        id
    }

    /// The recording is over, and why.
    pub fn end(&self, why: &str) {
        self.with(|w| w.end(why));
    }

    pub fn note(&self, text: &str) {
        self.with(|w| w.note(text));
    }
}

pub struct Observer {
    server: String,
    journal: Recording,
    tools: BTreeMap<Interface, String>,
    pending: HashMap<String, Pending>,
    dialogues: Vec<Watched>,
    /// The MCP version the session's `initialize` agreed (2025-11-25 and before); a
    /// 2026-07-28 request names its own in `_meta`.
    protocol_version: Option<String>,
    /// Exchanges recorded, and how many had findings.
    pub turns: usize,
    pub turns_with_findings: usize,
}

impl Observer {
    pub fn new(server: &str, journal: Option<Writer>) -> Observer {
        Observer::sharing(server, Recording::new(journal))
    }

    /// An observer of one MCP session, writing to a recording others write to as well.
    pub fn sharing(server: &str, journal: Recording) -> Observer {
        Observer {
            server: server.to_owned(),
            journal,
            tools: BTreeMap::new(),
            pending: HashMap::new(),
            dialogues: Vec::new(),
            protocol_version: None,
            turns: 0,
            turns_with_findings: 0,
        }
    }

    /// One line (one JSON-RPC message, or a batch) that passed.
    pub fn line(&mut self, side: Side, line: &[u8], at: Instant, now: SystemTime) {
        // At any depth a carried message may have (MCP-BINDING section 6), not serde_json's 128.
        let Ok(value) = crate::protocol::json::frame_from_slice::<Value>(line) else {
            if side == Side::Server && !line.iter().all(u8::is_ascii_whitespace) {
                let shown: String = String::from_utf8_lossy(line).chars().take(120).collect();
                self.note(&format!(
                    "the server wrote a line that is not JSON (passed on as it was): {shown}"
                ));
            }
            return;
        };
        match value {
            Value::Array(batch) => {
                for message in batch {
                    self.message(side, message, at, now);
                }
            }
            message => self.message(side, message, at, now),
        }
    }

    /// A line too long to check (over the size limit): passed on, not checked.
    pub fn oversized(&mut self, side: Side, bytes: usize) {
        self.note(&format!(
            "{} sent a message of {bytes} bytes, over the limit (--max-message-mb): passed on \
             unchecked and not recorded",
            side.who()
        ));
    }

    pub fn note(&mut self, text: &str) {
        self.journal.note(text);
    }

    fn message(&mut self, side: Side, message: Value, at: Instant, now: SystemTime) {
        match side {
            Side::Agent => self.agent_message(&message, at, now),
            Side::Server => self.server_message(&message, at, now),
        }
    }

    /// An agent's request, kept until its answer where the answer will be recorded; a
    /// cancellation ends its Request's exchange.
    fn agent_message(&mut self, message: &Value, at: Instant, now: SystemTime) {
        let id = message.get("id").map(|id| id.to_string());
        let (Some(id), Some(method)) = (id, message.get("method").and_then(Value::as_str)) else {
            // A notification: a cancellation ends its Request's exchange.
            if message.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
                && let Some(request) = message.pointer("/params/requestId")
            {
                self.cancelled(&request.to_string(), at, now);
            }
            return;
        };
        match method {
            "initialize" => {
                self.pending.insert(id, Pending::Initialize);
            }
            "tools/list" => {
                self.pending.insert(id, Pending::ToolsList);
            }
            "resources/read" => {
                if let Some(uri) = message.pointer("/params/uri").and_then(Value::as_str) {
                    self.pending
                        .insert(id, Pending::ResourceRead(uri.to_owned()));
                }
            }
            "tools/call" => {
                let name = message.pointer("/params/name").and_then(Value::as_str);
                let arguments = message
                    .pointer("/params/arguments")
                    .cloned()
                    .unwrap_or(Value::Null);
                if let Some(interface) = self.interface_of(name, &arguments) {
                    // A 2026-07-28 request says its version; else the session's.
                    let version = message
                        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| self.protocol_version.clone());
                    let call = self.call(interface, arguments, version, at, now);
                    self.pending.insert(id, Pending::Call(Box::new(call)));
                }
            }
            _ => {}
        }
    }

    /// The server's answer to a request kept: the session's version, its tools, a JSON
    /// resource, or a turn's reply.
    fn server_message(&mut self, message: &Value, at: Instant, now: SystemTime) {
        let id = message.get("id").map(|id| id.to_string());
        let Some(pending) = id.and_then(|id| self.pending.remove(&id)) else {
            return;
        };
        match pending {
            Pending::Initialize => {
                self.protocol_version = message
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            Pending::ToolsList => self.tools_listed(message),
            Pending::ResourceRead(uri) => {
                // A resource of JSON text is kept (what a server made from the recording
                // gives back).
                let json = message
                    .pointer("/result/contents/0/text")
                    .and_then(Value::as_str)
                    .and_then(|t| crate::protocol::json::from_str::<Value>(t).ok());
                if let Some(json) = json {
                    self.journal.with(|j| j.resource(&uri, &json));
                }
            }
            Pending::Call(call) => self.exchange(*call, call_reply(message), at, now),
        }
    }

    /// The tool of a `tools/call`: a BKN tool the server listed, else one named or headed as
    /// one (an agent that did not list the tools first).
    fn interface_of(&self, name: Option<&str>, arguments: &Value) -> Option<Interface> {
        let name = name?;
        if let Some((interface, _)) = self.tools.iter().find(|(_, n)| n.as_str() == name) {
            return Some(*interface);
        }
        Interface::from_tool_name(name).or_else(|| {
            arguments
                .get("Header")
                .and_then(Value::as_str)
                .and_then(Interface::from_header)
        })
    }

    fn tools_listed(&mut self, message: &Value) {
        if let Some(list) = message.pointer("/result/tools") {
            self.journal.with(|j| j.tools(list));
        }
        let tools: Vec<Tool> = message
            .pointer("/result/tools")
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .unwrap_or_default();
        self.tools = find_bkn_tools(&tools);
        let findings = crate::client::connection::tool_findings(&tools, &self.tools);
        for f in findings {
            self.note(&format!("tools/list: {}", f.message));
        }
    }

    fn cancelled(&mut self, id: &str, at: Instant, now: SystemTime) {
        if let Some(Pending::Call(call)) = self.pending.remove(id) {
            let reply = Err(TurnError {
                kind: ErrorKind::Cancelled,
                message: "the agent cancelled the Request".into(),
            });
            self.exchange(*call, reply, at, now);
        }
    }

    /// Requests still waiting when the proxy ends: recorded without a reply.
    pub fn finish(&mut self, why: &str, at: Instant, now: SystemTime) {
        self.unanswered(why, at, now);
        self.journal.end(why);
    }

    /// This MCP session is over (the proxy goes on): its Requests still waiting are
    /// recorded without a reply, and its dialogues are closed.
    pub fn session_ended(&mut self, why: &str, at: Instant, now: SystemTime) {
        self.unanswered(why, at, now);
        for d in &self.dialogues {
            let id = d.id;
            self.journal.with(|j| j.closed(id, why));
        }
        self.note(why);
    }

    fn unanswered(&mut self, why: &str, at: Instant, now: SystemTime) {
        let ids: Vec<String> = self.pending.keys().cloned().collect();
        for id in ids {
            if let Some(Pending::Call(call)) = self.pending.remove(&id) {
                let reply = Err(TurnError {
                    kind: ErrorKind::Gone,
                    message: format!("no answer before {why}"),
                });
                self.exchange(*call, reply, at, now);
            }
        }
    }

    /// A BKN Request passing: its dialogue (opened by its first Request), its place there,
    /// and its checks, made in the order the agent sent.
    fn call(
        &mut self,
        interface: Interface,
        arguments: Value,
        protocol_version: Option<String>,
        at: Instant,
        now: SystemTime,
    ) -> Call {
        let dialog_id = arguments
            .get("DialogID")
            .and_then(Value::as_str)
            .unwrap_or("(none)")
            .to_owned();
        let index = match self
            .dialogues
            .iter()
            .position(|d| d.interface == interface && d.dialog_id == dialog_id)
        {
            Some(i) => i,
            None => {
                let id = self.journal.next_dialogue();
                let server = self.server.clone();
                self.journal.with(|j| {
                    j.dialogue_in(
                        id,
                        &server,
                        interface,
                        &dialog_id,
                        protocol_version.as_deref(),
                    )
                });
                self.dialogues.push(Watched {
                    id,
                    interface,
                    dialog_id,
                    checker: DialogueChecker::new(),
                    issued: 0,
                    written: 0,
                    waiting: BTreeMap::new(),
                });
                self.dialogues.len() - 1
            }
        };
        let d = &mut self.dialogues[index];
        let findings = request_findings(&d.checker, interface, &arguments);
        let accepted = d.checker.accept_undoably(&arguments);
        let seq = d.issued;
        d.issued += 1;
        Call {
            dialogue: index,
            seq,
            interface,
            arguments,
            findings,
            accepted,
            sent: now,
            sent_at: at,
        }
    }

    /// A Request's answer (or the lack of one): the turn, written in the agent's order.
    fn exchange(
        &mut self,
        call: Call,
        result: Result<CallToolResult, TurnError>,
        at: Instant,
        now: SystemTime,
    ) {
        let Call {
            dialogue,
            seq,
            interface,
            arguments,
            mut findings,
            accepted,
            sent,
            sent_at,
        } = call;
        let d = &mut self.dialogues[dialogue];
        let answered = result.is_ok();
        let reply = match result {
            Ok(result) => {
                checked_reply(&mut d.checker, interface, &arguments, result, &mut findings).0
            }
            Err(e) => Reply::Error(e),
        };
        if !matches!(reply, Reply::Response(_)) {
            d.checker.undo(accepted);
        }
        let latency = at.saturating_duration_since(sent_at).as_secs_f64() * 1000.0;
        let turn = Turn {
            request: RawJson::from_value(&arguments),
            reply,
            findings,
            sent: rfc3339(time::OffsetDateTime::from(sent)),
            received: answered.then(|| rfc3339(time::OffsetDateTime::from(now))),
            latency_ms: (latency * 1000.0).round() / 1000.0,
            new_session: false,
            asked: Vec::new(),
        };
        self.turns += 1;
        if !turn.findings.is_empty() {
            self.turns_with_findings += 1;
        }
        d.waiting.insert(seq, turn);
        while let Some(turn) = d.waiting.remove(&d.written) {
            d.written += 1;
            let id = d.id;
            self.journal.with(|j| j.turn(id, &turn));
        }
    }
}

/// A `tools/call`'s answer as a turn's reply: the tool's result, or why it is not one.
fn call_reply(message: &Value) -> Result<CallToolResult, TurnError> {
    match (message.get("result"), message.get("error")) {
        (Some(result), _) => {
            serde_json::from_value::<CallToolResult>(result.clone()).map_err(|e| TurnError {
                kind: ErrorKind::Protocol,
                message: format!("the result is not a tool result: {e}"),
            })
        }
        (None, Some(error)) => Err(TurnError {
            kind: ErrorKind::Protocol,
            message: format!(
                "the server answered with a JSON-RPC error: {}",
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
            ),
        }),
        (None, None) => Err(TurnError {
            kind: ErrorKind::Protocol,
            message: "the answer has neither result nor error".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::spec::ServerSpec;
    use serde_json::json;

    fn call(id: u64, turn: u64) -> Vec<u8> {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"bkn_dac","arguments":
            {"Header":"PGM-KDA-V1.0","DialogID":"D","TurnIndex":turn,"QueryID":format!("q{turn}"),"Kind":"constraints"}}})
        .to_string()
        .into_bytes()
    }

    fn answer(id: u64) -> Vec<u8> {
        json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"no"}],"isError":true}})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn answers_that_come_back_out_of_order_are_recorded_in_the_agents_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let server = ServerSpec::from_command_line("da").unwrap();
        let journal = Writer::create(&path, None, &server).unwrap();
        let mut o = Observer::new(&server.name, Some(journal));
        let (at, now) = (Instant::now(), SystemTime::now());
        for line in [call(1, 0), call(2, 1), call(3, 2)] {
            o.line(Side::Agent, &line, at, now);
        }
        for id in [3, 1, 2] {
            o.line(Side::Server, &answer(id), at, now);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let session = crate::session::Session::parse(&text).unwrap();
        let turns: Vec<Option<u64>> = session.dialogues[0]
            .turns
            .iter()
            .map(|t| t.turn_index())
            .collect();
        assert_eq!(turns, [Some(0), Some(1), Some(2)]);
        assert_eq!(o.turns, 3);
    }

    #[test]
    fn requests_without_an_answer_are_recorded_when_the_proxy_ends() {
        let server = ServerSpec::from_command_line("da").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut o = Observer::new(
            &server.name,
            Some(Writer::create(&path, None, &server).unwrap()),
        );
        o.line(Side::Agent, &call(1, 0), Instant::now(), SystemTime::now());
        o.finish(
            "the server closed its output",
            Instant::now(),
            SystemTime::now(),
        );
        let session =
            crate::session::Session::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let turn = &session.dialogues[0].turns[0];
        assert!(
            matches!(&turn.reply, Reply::Error(e) if e.kind == ErrorKind::Gone),
            "{:?}",
            turn.reply
        );
        assert_eq!(
            session.notes.as_deref(),
            Some("the server closed its output")
        );
    }
}
