//! The servers' stdio transport: newline-delimited JSON-RPC on stdin and stdout. Written here
//! rather than taken from rmcp so that a line that is not a message it can take is answered
//! with a JSON-RPC error (`server::jsonrpc`) instead of being passed over in silence, and so
//! that messages nested deeper than serde_json's default limit are read (MCP-BINDING
//! section 6).

use crate::protocol::json;
use crate::protocol::rpc::Probe;
use crate::server::jsonrpc;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

pub struct ServerStdio<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> ServerStdio<R, W> {
    pub fn new(reader: R, writer: W) -> Self {
        ServerStdio {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::with_capacity(4096),
        }
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
            if let Some(call) = tool_call(text) {
                return Some(call);
            }
            match json::from_slice::<ClientJsonRpcMessage>(text) {
                Ok(message) => return Some(message),
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
