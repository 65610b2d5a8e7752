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
//!
//! Every dialogue it opens, it closes in the recording (a `closed` line saying what the end
//! is, `journal::Closing`): when its MCP session or connection ends, when the proxy stops,
//! and, where the server forgets an idle dialogue (one kept by DialogID over 2026-07-28, an
//! HTTP session), after no exchange for the idle expiry (`expire`). A watcher never shows a
//! dialogue live that the recording no longer follows.

use crate::client::connection::find_bkn_tools;
use crate::client::dialogue::{checked_reply, request_findings};
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError, TurnFinding};
use crate::protocol::Interface;
use crate::protocol::conformance::Accepted;
use crate::protocol::conformance::DialogueChecker;
use crate::protocol::message::rfc3339;
use crate::protocol::raw::RawJson;
use crate::session::journal::{Closing, Writer};
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

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
    /// The recording's id of its dialogue.
    dialogue: u64,
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
    /// When its last Request passed or its last answer came: the start of its idleness.
    last: Instant,
    /// Its server forgets it after an idle expiry: kept by DialogID (2026-07-28), or in an
    /// HTTP session.
    expires: bool,
}

impl Watched {
    /// No Request of it is waiting for its answer.
    fn quiet(&self) -> bool {
        self.issued == self.written
    }
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

    /// Whether it writes anywhere (`--no-record` does not).
    pub fn records(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).0.is_some()
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
    /// Its MCP session is an HTTP one, which the server ends after its idle expiry (a stdio
    /// connection's lasts as long as the connection).
    http_session: bool,
    /// When a message last passed (None before the first).
    last_seen: Option<Instant>,
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
            http_session: false,
            last_seen: None,
            turns: 0,
            turns_with_findings: 0,
        }
    }

    /// Whether a dialogue it opened is still open.
    pub fn has_dialogues(&self) -> bool {
        !self.dialogues.is_empty()
    }

    /// An observer of an HTTP MCP session (the server ends it after its idle expiry).
    pub fn of_http_session(mut self) -> Observer {
        self.http_session = true;
        self
    }

    /// One line (one JSON-RPC message, or a batch) that passed.
    pub fn line(&mut self, side: Side, line: &[u8], at: Instant, now: SystemTime) {
        self.last_seen = Some(self.last_seen.map_or(at, |l| l.max(at)));
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

    /// The proxy ends (its only MCP session or connection with it, `how`): the Requests
    /// still waiting are recorded without a reply, every dialogue is closed, and the
    /// recording ends.
    pub fn finish(&mut self, how: Closing, why: &str, at: Instant, now: SystemTime) {
        self.session_ended(how, why, at, now);
        self.journal.end(why);
    }

    /// This MCP session (or what the proxy follows of it) is over, `how`; the proxy may go
    /// on. Its Requests still waiting are recorded without a reply, and its dialogues are
    /// closed.
    pub fn session_ended(&mut self, how: Closing, why: &str, at: Instant, now: SystemTime) {
        self.unanswered(why, at, now);
        for d in std::mem::take(&mut self.dialogues) {
            self.journal.with(|j| j.closed(d.id, how, why));
        }
    }

    /// Closes, as idle, each dialogue its server forgets after an idle expiry that has had
    /// no exchange for `idle` at `at` (a Request waiting for its answer keeps it open). A
    /// later Request of one opens a new recorded dialogue. Returns whether the observer
    /// itself has been idle as long with nothing left open (the HTTP proxy then drops it).
    pub fn expire(&mut self, idle: Duration, at: Instant) -> bool {
        let mut kept = Vec::with_capacity(self.dialogues.len());
        for d in std::mem::take(&mut self.dialogues) {
            if d.expires && d.quiet() && at.saturating_duration_since(d.last) >= idle {
                let why = format!(
                    "no exchange for {}: past the idle expiry (the proxy's --dialogue-idle, the \
                     reference servers' default), the server may no longer hold it",
                    crate::duration::show(idle)
                );
                self.journal.with(|j| j.closed(d.id, Closing::Idle, &why));
            } else {
                kept.push(d);
            }
        }
        self.dialogues = kept;
        self.dialogues.is_empty()
            && self
                .last_seen
                .is_none_or(|l| at.saturating_duration_since(l) >= idle)
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
        let expires = self.http_session
            || protocol_version
                .as_deref()
                .is_some_and(crate::client::generation::is_stateless);
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
                    last: at,
                    expires,
                });
                self.dialogues.len() - 1
            }
        };
        let d = &mut self.dialogues[index];
        d.last = d.last.max(at);
        let findings = request_findings(&d.checker, interface, &arguments);
        let accepted = d.checker.accept_undoably(&arguments);
        let seq = d.issued;
        d.issued += 1;
        Call {
            dialogue: d.id,
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
        // Its dialogue is open while a Request of it waits (neither expiry nor an end
        // closes one before its Requests are written).
        let Some(d) = self.dialogues.iter_mut().find(|d| d.id == dialogue) else {
            return;
        };
        d.last = d.last.max(at);
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
            Closing::Ended,
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

    fn call_in(id: u64, dialog: &str, turn: u64, protocol: Option<&str>) -> Vec<u8> {
        let mut params = json!({"name":"bkn_dac","arguments":
            {"Header":"PGM-KDA-V1.0","DialogID":dialog,"TurnIndex":turn,"QueryID":format!("q{turn}"),"Kind":"constraints"}});
        if let Some(p) = protocol {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": p});
        }
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params})
            .to_string()
            .into_bytes()
    }

    /// Idleness is measured on the times the messages passed (no clock read here): a
    /// dialogue kept by DialogID is closed as idle once `idle` has gone by since its last
    /// exchange, never while a Request of it waits, and a stdio 2025-11-25 one (its state
    /// lives as long as the connection) is not.
    #[test]
    fn a_dialogue_kept_by_dialog_id_is_closed_as_idle_after_the_expiry_and_not_before() {
        use crate::session::journal::{Line, read_line};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let server = ServerSpec::from_command_line("da").unwrap();
        let mut o = Observer::new(
            &server.name,
            Some(Writer::create(&path, None, &server).unwrap()),
        );
        let idle = Duration::from_secs(60);
        let t0 = Instant::now();
        let now = SystemTime::now();
        o.line(
            Side::Agent,
            &call_in(1, "A", 0, Some("2026-07-28")),
            t0,
            now,
        );
        o.line(Side::Agent, &call_in(2, "S", 0, None), t0, now);
        o.line(Side::Server, &answer(2), t0, now);
        // A's Request waits for its answer: open however long.
        assert!(!o.expire(idle, t0 + idle * 3));
        o.line(Side::Server, &answer(1), t0 + idle * 3, now);
        assert!(!o.expire(idle, t0 + idle * 3 + idle / 2), "not idle yet");
        assert!(
            !o.expire(idle, t0 + idle * 4),
            "S stays: its state lives with the connection"
        );
        let closed: Vec<(u64, Option<Closing>)> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .enumerate()
            .filter_map(|(i, l)| match read_line(i + 1, l.as_bytes()).unwrap() {
                Line::Closed {
                    dialogue, cause, ..
                } => Some((dialogue, cause)),
                _ => None,
            })
            .collect();
        assert_eq!(closed, [(1, Some(Closing::Idle))]);
        // A again: a new recorded dialogue (the server may have forgotten the first).
        o.line(
            Side::Agent,
            &call_in(3, "A", 1, Some("2026-07-28")),
            t0 + idle * 5,
            now,
        );
        o.finish(
            Closing::Ended,
            "the agent closed its side",
            t0 + idle * 5,
            now,
        );
        let session =
            crate::session::Session::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(session.dialogues.len(), 3);
        assert_eq!(session.dialogues[2].dialog_id, "A");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.matches("\"closed\"").count(),
            3,
            "every dialogue closed: {text}"
        );
    }
}
