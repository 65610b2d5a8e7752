//! A dialogue: Basic Knowledge's side of one MCP session with one interface's tool. It fills
//! the common fields, keeps the TurnIndex, sends, times the turn, and runs the message,
//! exchange and dialogue checks on every Request and Response.

use crate::client::connection::{CallError, ConnectOptions, Connection};
use crate::client::defaults::{Chosen, Overrides};
use crate::client::spec::ServerSpec;
use crate::client::turn::{ErrorKind, Reply, Subject, Turn, TurnError, TurnFinding};
use crate::protocol::conformance::{
    Accepted, Check, DialogueChecker, Finding, check_exchange, check_message_as,
};
use crate::protocol::message::{Fill, fill_request, now_rfc3339, rfc3339};
use crate::protocol::raw::RawJson;
use crate::protocol::{Interface, Mode, Requirement};
use rmcp::model::CallToolResult;
use serde_json::Value;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How to fill a Request before sending it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filling {
    /// Send it exactly as given.
    AsIs,
    /// Add the common fields it lacks (this dialogue's DialogID and next TurnIndex).
    Missing,
    /// Also renew QueryID, QueryTime, DialogID and DataID (keeping TurnIndex): a Request
    /// recorded in another dialogue, sent again in this one.
    Fresh,
}

/// A server without the interface's tool: the connection is handed back (to close it, or to
/// use it for other things).
pub struct NoTool {
    pub connection: Box<Connection>,
    pub message: String,
}

/// What a user can still do with a server that has no BKN tool at all (any other MCP server):
/// the commands that reach it as it is, with the options that name it. A dialogue needs a BKN
/// tool; its tools, a call of any of them and its resources do not.
pub fn no_bkn_tool_advice(
    spec: &ServerSpec,
    summary: &crate::client::connection::ServerSummary,
) -> Vec<String> {
    let server = server_options(spec);
    let mut lines = vec![
        "It is an MCP server without a BKN-DAC or BKN-USR tool, so it holds no BKN dialogue; \
         what it offers can still be used:"
            .to_owned(),
    ];
    lines.push(format!(
        "- its tools and their input schemas: bkn-explorer tools {server}"
    ));
    let tool = summary
        .tools
        .first()
        .map(|t| shlex::try_quote(&t.name).map_or_else(|_| t.name.to_string(), |q| q.into_owned()))
        .unwrap_or_else(|| "TOOL".into());
    lines.push(format!(
        "- a tools/call of any of them: bkn-explorer call {tool} '{{...arguments}}' {server}"
    ));
    if !summary.resources.is_empty() {
        lines.push(format!(
            "- its {} resource{}: bkn-explorer resources {server}, then bkn-explorer read {} {server}",
            summary.resources.len(),
            if summary.resources.len() == 1 { "" } else { "s" },
            shlex::try_quote(&summary.resources[0])
                .map_or_else(|_| summary.resources[0].clone(), |q| q.into_owned())
        ));
    }
    lines
}

/// The command-line options that name a server, as the headless commands take them.
fn server_options(spec: &ServerSpec) -> String {
    use crate::client::spec::TransportSpec;
    let quote = |s: &str| shlex::try_quote(s).map_or_else(|_| s.to_owned(), |q| q.into_owned());
    match &spec.transport {
        TransportSpec::Http(h) => {
            format!("--url {}", quote(&crate::client::spec::shown_url(&h.url)))
        }
        TransportSpec::Embedded { interface, args } if args.is_empty() => {
            format!("--embedded {}", interface.code())
        }
        TransportSpec::Stdio(_) | TransportSpec::Embedded { .. } => {
            format!("--stdio {}", quote(&spec.location()))
        }
    }
}

/// Where a dialogue opened on a new connection starts (`Dialogue::continue_from`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Continuation {
    /// The TurnIndex of its first Request.
    pub first_turn: u64,
    /// The dialogue it goes on with, when there was one.
    pub goes_on: Option<GoesOn>,
    /// The MCP version the dialogue spoke before (recorded, or before a reconnect): the
    /// connection asks for its generation first (`Connection::connect_as_before`).
    pub spoke: Option<String>,
}

impl From<u64> for Continuation {
    fn from(first_turn: u64) -> Self {
        Continuation {
            first_turn,
            goes_on: None,
            spoke: None,
        }
    }
}

/// A dialogue to go on with: its DialogID, and the messages of its turns so far.
#[derive(Clone, Debug, PartialEq)]
pub struct GoesOn {
    pub dialog_id: String,
    pub history: Vec<Value>,
}

pub struct Dialogue {
    pub connection: Connection,
    pub interface: Interface,
    /// The tool that carries the interface on this server.
    pub tool: String,
    /// The common fields filled into Requests, and where each came from.
    pub defaults: Chosen,
    next_turn: u64,
    checker: DialogueChecker,
    /// The last turn's parsed Request, freed during the next turn's wait rather than at the
    /// end of its own turn: nobody needs to wait for that.
    spent: Vec<Value>,
    /// The last turn's Response as parsed for its checks, for callers that read it too (a
    /// scenario's expectations and captures) instead of parsing it again; freed like `spent`.
    last_response: Option<Value>,
}

impl Dialogue {
    /// A dialogue on a connection; fails when the server has no tool for the interface.
    pub fn open(
        connection: Connection,
        interface: Interface,
        defaults: Chosen,
    ) -> Result<Dialogue, NoTool> {
        let Some(tool) = connection.tool_for(interface).map(str::to_owned) else {
            let tools: Vec<String> = connection
                .summary
                .tools
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            let mut message = format!(
                "{} has no {} tool (no tool's inputSchema has Header {} and none is named {}); its tools: {}",
                connection.shown_name(),
                interface.name(),
                interface.header(),
                interface.tool_name(),
                if tools.is_empty() {
                    "none".into()
                } else {
                    tools.join(", ")
                }
            );
            if connection.summary.bkn_tools.is_empty() {
                for line in no_bkn_tool_advice(&connection.spec, &connection.summary) {
                    message.push('\n');
                    message.push_str(&line);
                }
            }
            return Err(NoTool {
                connection: Box::new(connection),
                message,
            });
        };
        Ok(Dialogue {
            connection,
            interface,
            tool,
            defaults,
            next_turn: 0,
            checker: DialogueChecker::new(),
            spent: Vec::new(),
            last_response: None,
        })
    }

    /// Connects to a server and opens a dialogue with its tool for `interface`; a server
    /// without that tool is disconnected again. The defaults are `base`, replaced by what the
    /// server publishes, replaced by `overrides`. The error says what went wrong.
    pub async fn connect(
        spec: &ServerSpec,
        options: &ConnectOptions,
        interface: Interface,
        base: Chosen,
        overrides: &Overrides,
    ) -> Result<Dialogue, String> {
        Dialogue::connect_as_before(spec, options, interface, base, overrides, None).await
    }

    /// The same for a dialogue that spoke MCP `before` (a recorded one): its generation is
    /// asked for first (`Connection::connect_as_before`).
    pub async fn connect_as_before(
        spec: &ServerSpec,
        options: &ConnectOptions,
        interface: Interface,
        base: Chosen,
        overrides: &Overrides,
        before: Option<&str>,
    ) -> Result<Dialogue, String> {
        let connection = Connection::connect_as_before(spec, options, before)
            .await
            .map_err(|e| e.message)?;
        let defaults = base.choose(connection.summary.published.as_ref(), overrides);
        match Dialogue::open(connection, interface, defaults) {
            Ok(dialogue) => Ok(dialogue),
            Err(no_tool) => {
                no_tool.connection.close().await;
                Err(no_tool.message)
            }
        }
    }

    pub fn dialog_id(&self) -> &str {
        &self.connection.dialog_id
    }

    /// Opens this connection's dialogue where another connection left one off (a reconnect),
    /// and says whether the server's state of it goes on.
    ///
    /// - Over 2026-07-28 to a server that outlives its connections (HTTP), the server keeps
    ///   the dialogue by its DialogID: it goes on under the old one, its rules knowing what
    ///   its turns so far said (`history`: each taken turn's Request, then its Response).
    /// - Over 2026-07-28 to a server started for the connection (stdio: a new process holds
    ///   nothing), it is a new dialogue, which the server takes only from TurnIndex 0.
    /// - Over 2025-11-25 the dialogue was the MCP session: the new session is a new dialogue
    ///   on the server, its TurnIndex going on from `first_turn` (the binding allows gaps).
    pub fn continue_from(&mut self, continuation: &Continuation) -> bool {
        use crate::client::generation::StateHome;
        let stateless = self.connection.state_home() == StateHome::DialogId;
        match &continuation.goes_on {
            Some(goes_on) if stateless && self.connection.outlives_its_connections() => {
                self.start_at(continuation.first_turn);
                self.connection.dialog_id = goes_on.dialog_id.clone();
                for message in &goes_on.history {
                    self.checker.accept(message);
                }
                true
            }
            _ if stateless => false,
            _ => {
                self.start_at(continuation.first_turn);
                false
            }
        }
    }

    /// Numbers this dialogue's turns from `turn` on (a dialogue continued on a new session
    /// goes on from where the old one stopped; gaps are allowed, going back is not).
    pub fn start_at(&mut self, turn: u64) {
        self.next_turn = self.next_turn.max(turn);
    }

    /// The TurnIndex the next filled Request gets.
    pub fn next_turn(&self) -> u64 {
        self.next_turn
    }

    /// The Request that would be sent for `fields`.
    pub fn prepare(&self, fields: Value, filling: Filling) -> Value {
        let fill = match filling {
            Filling::AsIs => return fields,
            Filling::Missing => Fill::Missing,
            Filling::Fresh => Fill::Fresh,
        };
        match fields {
            Value::Object(mut object) => {
                fill_request(
                    &mut object,
                    self.interface,
                    self.dialog_id(),
                    self.next_turn,
                    &self.defaults.values,
                    fill,
                );
                Value::Object(object)
            }
            other => other,
        }
    }

    /// Sends a Request (already prepared) and returns the turn. Never fails: whatever goes
    /// wrong is in the turn.
    pub async fn send(&mut self, request: Value, cancel: &CancellationToken) -> Turn {
        let sent_at = time::OffsetDateTime::now_utc();
        let request_raw = RawJson::from_value(&request);
        if !request.is_object() {
            return Turn {
                request: request_raw,
                reply: Reply::Error(TurnError {
                    kind: ErrorKind::NotSent,
                    message: "a Request is a JSON object; this one was not sent".into(),
                }),
                findings: request_findings(&self.checker, self.interface, &request),
                sent: rfc3339(sent_at),
                received: None,
                latency_ms: 0.0,
                new_session: false,
                asked: Vec::new(),
            };
        }
        let started = Instant::now();
        let Overlapped {
            result,
            mut findings,
            accepted,
            sent,
        } = self
            .call_checking_meanwhile(&request, &request_raw, cancel, sent_at)
            .await;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let received = Some(now_rfc3339());
        let reply = self.settle(&request, result, &mut findings, accepted);
        // Something came back, unless the turn timed out, was cancelled or lost its connection.
        let answered = match &reply {
            Reply::Error(e) => matches!(e.kind, ErrorKind::Protocol | ErrorKind::TooLarge),
            _ => true,
        };
        self.spent.push(request);
        Turn {
            request: request_raw,
            reply,
            findings,
            sent,
            received: received.filter(|_| answered),
            latency_ms: (latency_ms * 1000.0).round() / 1000.0,
            new_session: false,
            asked: self.connection.take_asked(),
        }
    }

    /// The call, with the Request's checks and its record made while the server works on
    /// it: the call is polled once (and rmcp's task given a turn to write it), so that the
    /// Request is on its way before they take their time, overlapping with the server's work
    /// instead of adding to the turn.
    async fn call_checking_meanwhile(
        &mut self,
        request: &Value,
        request_raw: &RawJson,
        cancel: &CancellationToken,
        sent_at: time::OffsetDateTime,
    ) -> Overlapped {
        let writes_at_once = self.connection.writes_on_first_poll();
        let mut call = std::pin::pin!(self.connection.call_turn(
            &self.tool,
            request,
            request_raw.raw(),
            cancel
        ));
        let mut early =
            std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
        if early.is_pending() && !writes_at_once {
            tokio::task::yield_now().await;
            early = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
        }
        let findings = request_findings(&self.checker, self.interface, request);
        // Recorded now, while the server works, and taken back by `settle` if the server did
        // not take the Request.
        let accepted = self.checker.accept_undoably(request);
        let sent = rfc3339(sent_at);
        self.spent.clear();
        self.last_response = None;
        let result = match early {
            std::task::Poll::Ready(result) => result,
            std::task::Poll::Pending => call.await,
        };
        Overlapped {
            result,
            findings,
            accepted,
            sent,
        }
    }

    /// The call's result as the turn's reply, its Response checked; the Request's record
    /// taken back when the server did not take it, and the next TurnIndex moved on.
    fn settle(
        &mut self,
        request: &Value,
        result: Result<CallToolResult, CallError>,
        findings: &mut Vec<TurnFinding>,
        accepted: Accepted,
    ) -> Reply {
        let requested_turn = request
            .get("TurnIndex")
            .and_then(crate::protocol::message::as_index);
        let reply = match result {
            Ok(result) => {
                let (reply, response) =
                    checked_reply(&mut self.checker, self.interface, request, result, findings);
                self.last_response = response;
                reply
            }
            Err(e) => Reply::Error(TurnError::from(&e)),
        };
        if !matches!(reply, Reply::Response(_)) {
            self.checker.undo(accepted);
        }
        // The next TurnIndex follows the last Request the server may have taken: not one it
        // rejected, but one that timed out may have been taken (gaps are allowed).
        if !matches!(reply, Reply::ToolError(_))
            && let Some(t) = requested_turn
        {
            self.next_turn = self.next_turn.max(t + 1);
        }
        reply
    }

    /// The last turn's Response as a value (parsed once, for its checks), if it had one.
    pub fn last_response(&self) -> Option<&Value> {
        self.last_response.as_ref()
    }

    /// Ends the dialogue and its MCP session.
    pub async fn close(self) {
        self.connection.close().await;
    }
}

/// What a call gives with what was made while the server worked on it.
struct Overlapped {
    result: Result<CallToolResult, CallError>,
    /// The Request's findings.
    findings: Vec<TurnFinding>,
    /// The Request's record in the dialogue's checks, to take back if it was not taken.
    accepted: Accepted,
    /// When it was sent (RFC 3339).
    sent: String,
}

/// The message and dialogue checks of a Request about to go (the dialogue's state is not
/// changed: see `DialogueChecker::accept_undoably`).
pub fn request_findings(
    checker: &DialogueChecker,
    interface: Interface,
    request: &Value,
) -> Vec<TurnFinding> {
    let on = |finding: Finding| TurnFinding {
        on: Subject::Request,
        finding,
    };
    let mut findings: Vec<TurnFinding> =
        check_message_as(request, Some(interface), Some(Mode::Request))
            .findings
            .into_iter()
            .map(on)
            .collect();
    findings.extend(checker.check(request).into_iter().map(on));
    findings
}

/// What a tool result says as a turn's reply, with its checks added to `findings`: the
/// binding (structuredContent and its text block), the message, the exchange with `request`,
/// and the dialogue (whose state takes the Response). Returns the Response too, when there
/// is one. Every client of BKN tools uses this: the dialogue here, and the proxy.
pub fn checked_reply(
    checker: &mut DialogueChecker,
    interface: Interface,
    request: &Value,
    result: CallToolResult,
    findings: &mut Vec<TurnFinding>,
) -> (Reply, Option<Value>) {
    let on = |finding: Finding| TurnFinding {
        on: Subject::Response,
        finding,
    };
    if result.is_error == Some(true) {
        return (Reply::ToolError(text_of(&result)), None);
    }
    let (response, binding) = response_of(result);
    findings.extend(binding.into_iter().map(on));
    match response {
        Some((response, raw)) => {
            findings.extend(
                check_message_as(&response, Some(interface), Some(Mode::Response))
                    .findings
                    .into_iter()
                    .map(on),
            );
            findings.extend(check_exchange(request, &response).into_iter().map(on));
            findings.extend(checker.check(&response).into_iter().map(on));
            checker.accept(&response);
            (Reply::Response(raw), Some(response))
        }
        None => (
            Reply::Error(TurnError {
                kind: ErrorKind::Protocol,
                message: "the result has neither structuredContent nor a text block with JSON"
                    .into(),
            }),
            None,
        ),
    }
}

/// The text blocks of a tool result, joined (a tool error's message).
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the binding findings of a result say (MCP-BINDING section 1); Locust's workers say
/// the same (`scenario::locust`).
pub const TEXT_BLOCK_DIFFERS: &str =
    "the text content block does not carry the same JSON as structuredContent";
pub const NO_STRUCTURED_CONTENT: &str =
    "the result has no structuredContent; the Response was read from its text block";

/// The Response of a successful result (its value, and its text for the turn record), and
/// what breaks MCP-BINDING section 1 in how it came.
fn response_of(result: CallToolResult) -> (Option<(Value, RawJson)>, Vec<Finding>) {
    let mut findings = Vec::new();
    // One text block (the usual case) is read in place; several are joined.
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let joined;
    let text: &str = match texts.as_slice() {
        [one] => one,
        _ => {
            joined = texts.join("\n");
            &joined
        }
    };
    match result.structured_content {
        Some(structured) => {
            // The usual case is cheap: the text block is structuredContent written compactly,
            // which one comparison of strings settles; anything else is parsed and compared.
            let compact = RawJson::from_value(&structured);
            let same = compact.text() == text
                || crate::protocol::json::from_str::<Value>(text).ok().as_ref()
                    == Some(&structured);
            if !same {
                findings.push(Finding::new(
                    "",
                    Requirement::Binding,
                    Check::TextBlock,
                    TEXT_BLOCK_DIFFERS,
                ));
            }
            (Some((structured, compact)), findings)
        }
        None => {
            findings.push(Finding::new(
                "",
                Requirement::Binding,
                Check::StructuredContent,
                NO_STRUCTURED_CONTENT,
            ));
            // At any depth a Response may have (MCP-BINDING section 6), not serde_json's 128.
            let response = crate::protocol::json::from_str::<Value>(text)
                .ok()
                .map(|v| {
                    let raw = RawJson::from_value(&v);
                    (v, raw)
                });
            (response, findings)
        }
    }
}
