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
use crate::client::turn::{ErrorKind, Reply, Turn, TurnError};
use crate::protocol::Interface;
use crate::protocol::conformance::DialogueChecker;
use crate::protocol::message::rfc3339;
use crate::protocol::raw::RawJson;
use crate::session::journal::Writer;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::time::{Instant, SystemTime};

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// From the agent (Basic Knowledge) to the server.
    Agent,
    /// From the server to the agent.
    Server,
}

enum Pending {
    ToolsList,
    Call {
        interface: Interface,
        arguments: Value,
        sent: SystemTime,
        sent_at: Instant,
    },
}

struct Watched {
    id: u64,
    interface: Interface,
    dialog_id: String,
    checker: DialogueChecker,
}

pub struct Observer {
    server: String,
    journal: Option<Writer>,
    tools: BTreeMap<Interface, String>,
    pending: HashMap<String, Pending>,
    dialogues: Vec<Watched>,
    /// Exchanges recorded, and how many had findings.
    pub turns: usize,
    pub turns_with_findings: usize,
}

impl Observer {
    pub fn new(server: &str, journal: Option<Writer>) -> Observer {
        Observer {
            server: server.to_owned(),
            journal,
            tools: BTreeMap::new(),
            pending: HashMap::new(),
            dialogues: Vec::new(),
            turns: 0,
            turns_with_findings: 0,
        }
    }

    /// One line (one JSON-RPC message, or a batch) that passed.
    pub fn line(&mut self, side: Side, line: &[u8], at: Instant, now: SystemTime) {
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
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
        let who = match side {
            Side::Agent => "the agent",
            Side::Server => "the server",
        };
        self.note(&format!(
            "{who} sent a message of {bytes} bytes, over the limit: passed on unchecked"
        ));
    }

    pub fn note(&mut self, text: &str) {
        if let Some(j) = &mut self.journal {
            j.note(text);
        }
    }

    fn message(&mut self, side: Side, message: Value, at: Instant, now: SystemTime) {
        let id = message.get("id").map(|id| id.to_string());
        match side {
            Side::Agent => {
                let (Some(id), Some(method)) = (id, message.get("method").and_then(Value::as_str))
                else {
                    // A notification: a cancellation ends its Request's exchange.
                    if message.get("method").and_then(Value::as_str)
                        == Some("notifications/cancelled")
                        && let Some(request) = message.pointer("/params/requestId")
                    {
                        self.cancelled(&request.to_string(), at, now);
                    }
                    return;
                };
                match method {
                    "tools/list" => {
                        self.pending.insert(id, Pending::ToolsList);
                    }
                    "tools/call" => {
                        let name = message.pointer("/params/name").and_then(Value::as_str);
                        let arguments = message
                            .pointer("/params/arguments")
                            .cloned()
                            .unwrap_or(Value::Null);
                        if let Some(interface) = self.interface_of(name, &arguments) {
                            self.pending.insert(
                                id,
                                Pending::Call {
                                    interface,
                                    arguments,
                                    sent: now,
                                    sent_at: at,
                                },
                            );
                        }
                    }
                    _ => {}
                }
            }
            Side::Server => {
                let Some(pending) = id.and_then(|id| self.pending.remove(&id)) else {
                    return;
                };
                match pending {
                    Pending::ToolsList => self.tools_listed(&message),
                    Pending::Call {
                        interface,
                        arguments,
                        sent,
                        sent_at,
                    } => {
                        let reply = match (message.get("result"), message.get("error")) {
                            (Some(result), _) => serde_json::from_value::<CallToolResult>(
                                result.clone(),
                            )
                            .map_err(|e| TurnError {
                                kind: ErrorKind::Protocol,
                                message: format!("the result is not a tool result: {e}"),
                            }),
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
                        };
                        self.exchange(interface, arguments, reply, sent, sent_at, at, now);
                    }
                }
            }
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
        if let Some(Pending::Call {
            interface,
            arguments,
            sent,
            sent_at,
        }) = self.pending.remove(id)
        {
            let reply = Err(TurnError {
                kind: ErrorKind::Cancelled,
                message: "the agent cancelled the Request".into(),
            });
            self.exchange(interface, arguments, reply, sent, sent_at, at, now);
        }
    }

    /// Requests still waiting when the proxy ends: recorded without a reply.
    pub fn finish(&mut self, why: &str, at: Instant, now: SystemTime) {
        let ids: Vec<String> = self.pending.keys().cloned().collect();
        for id in ids {
            if let Some(Pending::Call {
                interface,
                arguments,
                sent,
                sent_at,
            }) = self.pending.remove(&id)
            {
                let reply = Err(TurnError {
                    kind: ErrorKind::Gone,
                    message: format!("no answer before {why}"),
                });
                self.exchange(interface, arguments, reply, sent, sent_at, at, now);
            }
        }
        self.note(why);
    }

    #[allow(clippy::too_many_arguments)]
    fn exchange(
        &mut self,
        interface: Interface,
        arguments: Value,
        result: Result<CallToolResult, TurnError>,
        sent: SystemTime,
        sent_at: Instant,
        at: Instant,
        now: SystemTime,
    ) {
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
                let id = self.dialogues.len() as u64 + 1;
                if let Some(j) = &mut self.journal {
                    j.dialogue(id, &self.server, interface, &dialog_id);
                }
                self.dialogues.push(Watched {
                    id,
                    interface,
                    dialog_id,
                    checker: DialogueChecker::new(),
                });
                self.dialogues.len() - 1
            }
        };
        let d = &mut self.dialogues[index];
        let mut findings = request_findings(&d.checker, interface, &arguments);
        let accepted = d.checker.accept_undoably(&arguments);
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
        };
        self.turns += 1;
        if !turn.findings.is_empty() {
            self.turns_with_findings += 1;
        }
        let id = d.id;
        if let Some(j) = &mut self.journal {
            j.turn(id, &turn);
        }
    }
}
