//! The hot path of a turn on the client's side: the answer to a `tools/call` decoded straight
//! into rmcp's `CallToolResult`. rmcp's general decoder buffers a message whole in serde's
//! `Content` and tries each kind of message and result in turn, which cost more than all the
//! rest of reading a Response. Anything that is not such an answer is left to it.

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonRpcResponse, JsonRpcVersion2_0,
    RequestId, ServerJsonRpcMessage, ServerResult,
};

/// Whether a message is a `tools/call` Request (whose answer takes the hot path).
pub fn is_tool_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
    )
}

/// The message in `bytes` as rmcp's type, if it is a successful Response whose id `awaited`
/// accepts (the id of a `tools/call` this client sent) and whose result is a tool's result.
pub fn tool_result(
    bytes: &[u8],
    awaited: impl FnOnce(&RequestId) -> bool,
) -> Option<ServerJsonRpcMessage> {
    let probe = crate::protocol::rpc::Probe::read(bytes)?;
    let (id, result) = probe.response()?;
    let id: RequestId = serde_json::from_str(id.get()).ok()?;
    if !awaited(&id) {
        return None;
    }
    let result: CallToolResult = serde_json::from_str(result.get()).ok()?;
    Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}
