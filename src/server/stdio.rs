//! The servers' stdio transport: newline-delimited JSON-RPC on stdin and stdout. Written here
//! rather than taken from rmcp so that a line that is not a message it can take is answered
//! with a JSON-RPC error (`server::jsonrpc`) instead of being passed over in silence, and so
//! that messages nested deeper than serde_json's default limit are read (MCP-BINDING
//! section 6).
//!
//! Once the session is initialised, a turn (a `tools/call` of the server's tool) is answered
//! here, without rmcp: rmcp would spawn a task for the request and another for its answer,
//! enter a tracing span, turn the Response into text through `Display` and write it out
//! again from a `Value`, which cost about a fifth of the server's CPU per turn. The Response is
//! written once, as text, and that text is both the text block and `structuredContent`.
//! Everything else (the handshake, lists, resources, another tool's name, odd messages)
//! goes to rmcp.

use crate::protocol::ijson::{self, Irregularity};
use crate::protocol::json;
use crate::protocol::rpc::Probe;
use crate::server::jsonrpc;
use crate::server::mcp::{DirectAnswer, Place, TurnOutcome};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::transport::Transport;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// What answers a turn on the hot path: the tool's name, its arguments, where its dialogue
/// lives, and what I-JSON forbids that the arguments' text does (each a finding); `None`
/// when the name is not the server's tool.
pub type Turns =
    Box<dyn Fn(&str, Value, Place, &[Irregularity]) -> Option<DirectAnswer> + Send + Sync>;

pub struct ServerStdio<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    line: Vec<u8>,
    turns: Option<Turns>,
    /// Whether the client has sent `notifications/initialized`: turns before it go to rmcp.
    initialized: bool,
    /// Whether the session negotiated a protocol version before 2026-07-28 in its
    /// `initialize`: the results written here have that version's shape (no `resultType`).
    legacy: bool,
    /// Whether rmcp has taken a request of 2026-07-28 (no handshake: its version in `_meta`),
    /// which starts its lifecycle: from then on a 2026-07-28 turn with the whole envelope is
    /// answered here too, its dialogue kept by DialogID.
    stateless: bool,
    /// The requests handed to rmcp and not answered yet. While there are any, turns go to
    /// rmcp too: it handles requests in the order they came, and a turn answered here must
    /// not overtake them (a `logging/setLevel`, or an earlier turn, changes what it gets).
    with_rmcp: HashSet<RequestId>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> ServerStdio<R, W> {
    pub fn new(reader: R, writer: W) -> Self {
        ServerStdio {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::with_capacity(4096),
            turns: None,
            initialized: false,
            legacy: false,
            stateless: false,
            with_rmcp: HashSet::new(),
        }
    }

    /// Turns are answered by `turns` on the hot path.
    pub fn answering(mut self, turns: Turns) -> Self {
        self.turns = Some(turns);
        self
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    mut bytes: Vec<u8>,
) -> io::Result<()> {
    bytes.push(b'\n');
    let mut w = writer.lock().await;
    w.write_all(&bytes).await?;
    w.flush().await
}

impl<R, W> Transport<RoleServer> for ServerStdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        if let ServerJsonRpcMessage::Response(r) = &item {
            self.with_rmcp.remove(&r.id);
            if let rmcp::model::ServerResult::InitializeResult(init) = &r.result {
                self.legacy = init.protocol_version.as_str()
                    < rmcp::model::ProtocolVersion::V_2026_07_28.as_str();
            }
        } else if let ServerJsonRpcMessage::Error(e) = &item
            && let Some(id) = &e.id
        {
            self.with_rmcp.remove(id);
        }
        let bytes = serde_json::to_vec(&item);
        let writer = self.writer.clone();
        async move { write_line(&writer, bytes.map_err(io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            self.line.clear();
            match self.reader.read_until(b'\n', &mut self.line).await {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("reading stdin failed: {e}");
                    return None;
                }
            }
            let text = self.line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let session = self.initialized && self.legacy;
            let direct = (session || self.stateless) && self.with_rmcp.is_empty();
            let turns = self.turns.as_ref().filter(|_| direct);
            match answered_here(&self.writer, turns, session, text).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(_) => return None,
            }
            let decoded = match tool_call(text) {
                Some(call) => Ok(call),
                None => json::frame_from_slice::<ClientJsonRpcMessage>(text),
            };
            match decoded {
                Ok(message) => {
                    self.note(&message);
                    return Some(message);
                }
                Err(e) => {
                    let answered =
                        answer_unreadable(&self.writer, self.turns.as_ref(), text, e.to_string());
                    if answered.await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.writer.lock().await.flush().await
    }
}

impl<R, W> ServerStdio<R, W> {
    /// A message going to rmcp: its request is awaited (turns wait behind it), and what it
    /// says of the session is kept (2026-07-28, initialized, a request cancelled).
    fn note(&mut self, message: &ClientJsonRpcMessage) {
        match message {
            ClientJsonRpcMessage::Request(r) => {
                self.with_rmcp.insert(r.id.clone());
                use rmcp::model::GetMeta;
                if r.request
                    .get_meta()
                    .protocol_version()
                    .is_some_and(|v| crate::client::generation::is_stateless(v.as_str()))
                {
                    self.stateless = true;
                }
            }
            ClientJsonRpcMessage::Notification(n) => match &n.notification {
                ClientNotification::InitializedNotification(_) => {
                    self.initialized = true;
                }
                // A cancelled request may never be answered: it no longer holds turns back.
                ClientNotification::CancelledNotification(c) => {
                    if let Some(id) = &c.params.request_id {
                        self.with_rmcp.remove(id);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

/// A line answered without the MCP library: a turn, where `turns` are given (only when
/// nothing is with rmcp, so the answers keep their order; `session`: of the 2025-11-25
/// session), or a request it would take wrongly or pass over (a 2026-07-28 request of a
/// method that generation removed, an id of the wrong type). Whether it was; an error when
/// the answer could not be written.
async fn answered_here<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    turns: Option<&Turns>,
    session: bool,
    text: &[u8],
) -> io::Result<bool> {
    if let Some(turns) = turns
        && let Some(lines) = answer_directly(
            text,
            turns,
            session,
            crate::server::dialogues::Principal::of(None),
        )
    {
        write_line(writer, lines).await?;
        return Ok(true);
    }
    if let Some(reply) =
        jsonrpc::reply_to_removed(text, None).or_else(|| jsonrpc::reply_to_bad_id(text))
    {
        let bytes = serde_json::to_vec(&reply).unwrap_or_default();
        write_line(writer, bytes).await?;
        return Ok(true);
    }
    Ok(false)
}

/// A line the MCP library cannot read (`why`): JSON by RFC 8259 it cannot take (a number
/// beyond a double) is still a turn, judged with what I-JSON forbids; anything else gets
/// the JSON-RPC error it deserves. An error when the answer could not be written.
async fn answer_unreadable<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    turns: Option<&Turns>,
    text: &[u8],
    why: String,
) -> io::Result<()> {
    if let Some(turns) = turns
        && let Some(lines) = answer_irregular(text, turns)
    {
        return write_line(writer, lines).await;
    }
    tracing::info!("a line that is not a message this server takes: {why}");
    if let Some(reply) = jsonrpc::reply_to_unreadable(text) {
        let bytes = serde_json::to_vec(&reply).unwrap_or_default();
        write_line(writer, bytes).await?;
    }
    Ok(())
}

/// The lines that answer a turn (a log message, if the client asked for logs, then the
/// Response), or `None` when `line` is not a `tools/call` of the server's tool that reads
/// cleanly: rmcp then takes it, and gives the same answer or its own error. `session`: the
/// turn is of the 2025-11-25 session; otherwise it must be a whole 2026-07-28 request.
pub(crate) fn answer_directly(
    line: &[u8],
    turns: &Turns,
    session: bool,
    principal: crate::server::dialogues::Principal,
) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: std::borrow::Cow<'a, str>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<std::collections::HashMap<std::borrow::Cow<'a, str>, &'a RawValue>>,
    }
    let probe = Probe::read(line)?;
    let (id, params) = probe.request("tools/call")?;
    // An id that is neither a string nor a number is -32600 (`jsonrpc::reply_to_bad_id`),
    // never a turn whose answer echoes it.
    if !jsonrpc::is_string_or_number(id) {
        return None;
    }
    let params: Params = serde_json::from_str(params.get()).ok()?;
    let meta = params.meta.unwrap_or_default();
    // A progress token is all this path knows of a session's `_meta` (it answers at once, so
    // it never reports progress); a 2026-07-28 request's envelope is read here too. Anything
    // else there (a version to refuse, a key this path does not know) is rmcp's.
    let place = if session {
        if meta.keys().any(|k| k != "progressToken") {
            return None;
        }
        Place::Session
    } else {
        stateless_place(&meta, principal)?
    };
    // As rmcp does: absent arguments are an empty object; anything but an object is rmcp's
    // to refuse (Invalid params). Read as I-JSON: a member given twice, a number beyond a
    // double, are findings of the Request (MCP-BINDING section 6), never taken silently.
    let (arguments, irregular) = match params.arguments {
        Some(raw) => {
            let read = ijson::read_message(raw.get().as_bytes()).ok()?;
            (read.value, read.irregular)
        }
        None => (Value::Object(Default::default()), Vec::new()),
    };
    if !arguments.is_object() {
        return None;
    }
    let answer = turns(&params.name, arguments, place, &irregular)?;
    let mut out = Vec::with_capacity(4096);
    if let Some(log) = answer.log {
        let note = ServerJsonRpcMessage::notification(
            ServerNotification::LoggingMessageNotification(rmcp::model::Notification::new(log)),
        );
        serde_json::to_writer(&mut out, &note).ok()?;
        out.push(b'\n');
    }
    write_result(&mut out, id, &answer.outcome, !session).ok()?;
    Some(out)
}

/// A `tools/call` whose arguments do what I-JSON forbids (a number beyond a double, which the
/// MCP library cannot read; a member given twice, which it reads silently): answered with its
/// findings as a tool error (such a Request is never conformant, so it changes no
/// dialogue), in the shape of its generation.
pub(crate) fn answer_irregular(line: &[u8], turns: &Turns) -> Option<Vec<u8>> {
    let read = ijson::read_message(line).ok()?;
    let message = &read.value;
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let id = message
        .get("id")
        .filter(|i| i.is_string() || i.is_number())?;
    let name = message.pointer("/params/name")?.as_str()?;
    let arguments = message.pointer("/params/arguments")?.clone();
    if !arguments.is_object() {
        return None;
    }
    let stateless = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .is_some_and(crate::client::generation::is_stateless);
    let irregular: Vec<Irregularity> = read
        .irregular
        .iter()
        .filter_map(|i| {
            let pointer = i.pointer.strip_prefix("/params/arguments")?;
            Some(Irregularity {
                pointer: pointer.to_owned(),
                kind: i.kind.clone(),
            })
        })
        .collect();
    if irregular.is_empty() {
        return None;
    }
    // Never conformant, so refused whatever dialogue it names, which it does not change: the
    // handler's own session is as good a place to judge it as any.
    let answer = turns(name, arguments, Place::Session, &irregular)?;
    let id = RawValue::from_string(id.to_string()).ok()?;
    let mut out = Vec::with_capacity(1024);
    write_result(&mut out, &id, &answer.outcome, stateless).ok()?;
    Some(out)
}

/// Where a 2026-07-28 turn's dialogue lives, from its `_meta`: only for the whole envelope
/// (this version, the client's capabilities, nothing this path does not know); None leaves
/// the request to rmcp, which answers or refuses it as the version says.
fn stateless_place(
    meta: &std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue>,
    principal: crate::server::dialogues::Principal,
) -> Option<Place> {
    const KNOWN: [&str; 5] = [
        "progressToken",
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/logLevel",
    ];
    if meta.keys().any(|k| !KNOWN.contains(&k.as_ref())) {
        return None;
    }
    let version = meta.get("io.modelcontextprotocol/protocolVersion")?;
    if version.get() != "\"2026-07-28\"" {
        return None;
    }
    if !meta
        .get("io.modelcontextprotocol/clientCapabilities")?
        .get()
        .trim_start()
        .starts_with('{')
    {
        return None;
    }
    let log_level = match meta.get("io.modelcontextprotocol/logLevel") {
        None => None,
        Some(level) => Some(serde_json::from_str(level.get()).ok()?),
    };
    Some(Place::Keyed {
        principal,
        log_level,
    })
}

/// A turn's JSON-RPC Response, as rmcp writes a `CallToolResult`: the Response's text is
/// written once, escaped in the text block and as it is in `structuredContent`. A
/// 2026-07-28 result says it is complete (`resultType`), as rmcp writes it for that version.
fn write_result(
    out: &mut Vec<u8>,
    id: &RawValue,
    outcome: &TurnOutcome,
    stateless: bool,
) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":{"#);
    if stateless {
        out.extend_from_slice(br#""resultType":"complete","#);
    }
    out.extend_from_slice(br#""content":[{"type":"text","text":"#);
    match outcome {
        TurnOutcome::Answered { response, .. } => {
            let text = serde_json::to_string(response)?;
            serde_json::to_writer(&mut *out, &text)?;
            out.extend_from_slice(br#"}],"structuredContent":"#);
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(br#","isError":false}}"#);
        }
        TurnOutcome::Rejected(violations) => {
            serde_json::to_writer(&mut *out, violations)?;
            out.extend_from_slice(br#"}],"isError":true}}"#);
        }
    }
    Ok(())
}

/// A `tools/call` Request (a turn), decoded straight into rmcp's types; anything else, or
/// anything odd about it, is left to rmcp's general decoder (which gives the same message for
/// what this takes).
fn tool_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcRequest};
    let probe = Probe::read(line)?;
    let (id, params) = probe.request("tools/call")?;
    let id: RequestId = serde_json::from_str(id.get()).ok()?;
    let mut params: CallToolRequestParams = serde_json::from_str(params.get()).ok()?;
    // As rmcp's decoder does: the params' `_meta` (the progress token) goes to the request's
    // extensions.
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, ServerResult};
    use serde_json::json;

    /// What rmcp would write for the same turn, to a client of a protocol version before
    /// 2026-07-28 (`stateless` false: `resultType` taken off), or of 2026-07-28.
    fn through_rmcp(id: RequestId, outcome: TurnOutcome, stateless: bool) -> Value {
        let mut result = ServerResult::CallToolResult(outcome.into_result());
        if !stateless {
            result.strip_result_type_for_legacy_peer();
        }
        let message = ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result,
        });
        serde_json::to_value(message).unwrap()
    }

    #[test]
    fn a_turn_answered_here_is_what_rmcp_writes() {
        let response =
            json!({"Header": "PGM-KDA-V1.0", "Text": "quotes \" and \\ and\nlines", "N": [1, 2.5]});
        for (id_text, id) in [
            ("7", RequestId::Number(7)),
            (r#""call-3""#, RequestId::String("call-3".into())),
        ] {
            let raw = RawValue::from_string(id_text.to_owned()).unwrap();
            for stateless in [false, true] {
                for outcome in [
                    TurnOutcome::Answered {
                        request: json!({}),
                        response: response.clone(),
                    },
                    TurnOutcome::Rejected("/Mode: Mode must be RQ\n/Kind: unknown".into()),
                ] {
                    let mut line = Vec::new();
                    write_result(&mut line, &raw, &outcome, stateless).unwrap();
                    let ours: Value = serde_json::from_slice(&line).unwrap();
                    assert_eq!(ours, through_rmcp(id.clone(), outcome, stateless));
                }
            }
        }
    }
}
