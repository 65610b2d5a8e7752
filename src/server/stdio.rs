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

use crate::protocol::json;
use crate::protocol::rpc::Probe;
use crate::server::jsonrpc;
use crate::server::mcp::{DirectAnswer, TurnOutcome};
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

/// What answers a turn on the hot path: the tool's name and arguments in, `None` when the
/// name is not the server's tool.
pub type Turns = Box<dyn Fn(&str, Value) -> Option<DirectAnswer> + Send>;

pub struct ServerStdio<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    line: Vec<u8>,
    turns: Option<Turns>,
    /// Whether the client has sent `notifications/initialized`: turns before it go to rmcp.
    initialized: bool,
    /// Whether the session negotiated a protocol version before 2026-07-28 in its
    /// `initialize`: the results written here have that version's shape (no `resultType`),
    /// and later versions (no handshake, a version in every request) are rmcp's.
    legacy: bool,
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
            if let (true, true, true, Some(turns)) = (
                self.initialized,
                self.legacy,
                self.with_rmcp.is_empty(),
                &self.turns,
            ) && let Some(lines) = answer_directly(text, turns)
            {
                if write_line(&self.writer, lines).await.is_err() {
                    return None;
                }
                continue;
            }
            // What the MCP library would take wrongly, or pass over: a 2026-07-28 request of a
            // method that generation removed, an id of the wrong type.
            if let Some(reply) =
                jsonrpc::reply_to_removed(text, None).or_else(|| jsonrpc::reply_to_bad_id(text))
            {
                let bytes = serde_json::to_vec(&reply).unwrap_or_default();
                if write_line(&self.writer, bytes).await.is_err() {
                    return None;
                }
                continue;
            }
            let decoded = match tool_call(text) {
                Some(call) => Ok(call),
                None => json::frame_from_slice::<ClientJsonRpcMessage>(text),
            };
            match decoded {
                Ok(message) => {
                    match &message {
                        ClientJsonRpcMessage::Request(r) => {
                            self.with_rmcp.insert(r.id.clone());
                        }
                        ClientJsonRpcMessage::Notification(n) => match &n.notification {
                            ClientNotification::InitializedNotification(_) => {
                                self.initialized = true;
                            }
                            // A cancelled request may never be answered: it no longer holds
                            // turns back.
                            ClientNotification::CancelledNotification(c) => {
                                if let Some(id) = &c.params.request_id {
                                    self.with_rmcp.remove(id);
                                }
                            }
                            _ => {}
                        },
                        _ => {}
                    }
                    return Some(message);
                }
                Err(e) => {
                    tracing::info!("a line that is not a message this server takes: {e}");
                    if let Some(reply) = jsonrpc::reply_to_unreadable(text) {
                        let bytes = serde_json::to_vec(&reply).unwrap_or_default();
                        if write_line(&self.writer, bytes).await.is_err() {
                            return None;
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.writer.lock().await.flush().await
    }
}

/// The lines that answer a turn (a log message, if the client asked for logs, then the
/// Response), or `None` when `line` is not a `tools/call` of the server's tool that reads
/// cleanly: rmcp then takes it, and gives the same answer or its own error.
fn answer_directly(line: &[u8], turns: &Turns) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: std::borrow::Cow<'a, str>,
        #[serde(borrow, default)]
        arguments: Option<&'a RawValue>,
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<std::collections::HashMap<std::borrow::Cow<'a, str>, serde::de::IgnoredAny>>,
    }
    let probe = Probe::read(line)?;
    let (id, params) = probe.request("tools/call")?;
    let params: Params = serde_json::from_str(params.get()).ok()?;
    // A progress token is all this path knows of `_meta` (it answers at once, so it never
    // reports progress); anything else there, such as a protocol version to check, is rmcp's.
    if let Some(meta) = &params.meta
        && meta.keys().any(|k| k != "progressToken")
    {
        return None;
    }
    // As rmcp does: absent arguments are an empty object; anything but an object is rmcp's
    // to refuse (Invalid params).
    let arguments = match params.arguments {
        Some(raw) => json::from_str::<Value>(raw.get()).ok()?,
        None => Value::Object(Default::default()),
    };
    if !arguments.is_object() {
        return None;
    }
    let answer = turns(&params.name, arguments)?;
    let mut out = Vec::with_capacity(4096);
    if let Some(log) = answer.log {
        let note = ServerJsonRpcMessage::notification(
            ServerNotification::LoggingMessageNotification(rmcp::model::Notification::new(log)),
        );
        serde_json::to_writer(&mut out, &note).ok()?;
        out.push(b'\n');
    }
    write_result(&mut out, id, &answer.outcome).ok()?;
    Some(out)
}

/// A turn's JSON-RPC Response, as rmcp writes a `CallToolResult`: the Response's text is
/// written once, escaped in the text block and as it is in `structuredContent`.
fn write_result(out: &mut Vec<u8>, id: &RawValue, outcome: &TurnOutcome) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
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
    /// 2026-07-28.
    fn through_rmcp(id: RequestId, outcome: TurnOutcome) -> Value {
        let mut result = ServerResult::CallToolResult(outcome.into_result());
        result.strip_result_type_for_legacy_peer();
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
            for outcome in [
                TurnOutcome::Answered {
                    request: json!({}),
                    response: response.clone(),
                },
                TurnOutcome::Rejected("/Mode: Mode must be RQ\n/Kind: unknown".into()),
            ] {
                let mut line = Vec::new();
                write_result(&mut line, &raw, &outcome).unwrap();
                let ours: Value = serde_json::from_slice(&line).unwrap();
                assert_eq!(ours, through_rmcp(id.clone(), outcome));
            }
        }
    }
}
