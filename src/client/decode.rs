//! The hot path of a turn on the client's side: the answer to a `tools/call` decoded straight
//! into rmcp's `CallToolResult`. rmcp's general decoder buffers a message whole in serde's
//! `Content` and tries each kind of message and result in turn, which cost more than all the
//! rest of reading a Response. Anything that is not such an answer is left to it.

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonRpcResponse, JsonRpcVersion2_0,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::de::IgnoredAny;
use std::borrow::Cow;

/// Whether a message is a `tools/call` Request (whose answer takes the hot path).
pub fn is_tool_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
    )
}

/// The message in `bytes` as rmcp's type, if it is a successful Response whose id `awaited`
/// accepts (the id of a `tools/call` this client sent) and whose result is a tool's result.
/// Read in one pass: a message of another shape fails here and goes to the general decoder.
pub fn tool_result(
    bytes: &[u8],
    awaited: impl FnOnce(&RequestId) -> bool,
) -> Option<ServerJsonRpcMessage> {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        jsonrpc: Cow<'a, str>,
        id: RequestId,
        result: CallToolResult,
        // What a Response cannot have: with either, the message is the general decoder's.
        #[serde(default)]
        method: Option<IgnoredAny>,
        #[serde(default)]
        error: Option<IgnoredAny>,
    }
    let answer: Answer = serde_json::from_slice(bytes).ok()?;
    let ok = answer.jsonrpc == "2.0" && answer.method.is_none() && answer.error.is_none();
    if !ok || !awaited(&answer.id) {
        return None;
    }
    Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id: answer.id,
        result: ServerResult::CallToolResult(answer.result),
    }))
}
