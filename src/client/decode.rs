//! The hot path of a turn on the client's side: the answer to a `tools/call` decoded straight
//! into rmcp's `CallToolResult`. rmcp's general decoder buffers a message whole in serde's
//! `Content` and tries each kind of message and result in turn, which cost more than all the
//! rest of reading a Response. Anything that is not such an answer is left to it.
//!
//! A result made only of text blocks (what a Domain Access or User State Refinement server
//! sends) is read without rmcp's `ContentBlock`, an internally tagged enum that serde buffers
//! whole (the Response's text, escaped, copied once more) before it knows the block's kind.
//! A result with any other kind of block, or with fields this reader does not know, is read
//! by rmcp's `CallToolResult`.

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonRpcResponse, JsonRpcVersion2_0,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Whether a message is a `tools/call` Request (whose answer takes the hot path).
pub fn is_tool_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
    )
}

/// A `tools/call` of `name` with `arguments` (a JSON object, as text), written as both hot
/// paths send it. Its id is a string (`call-N`) so that it can never be one of the numbers rmcp
/// gives its own requests on the same session; the progress token is the id, as rmcp makes it
/// for its requests. `envelope` is what a 2026-07-28 request carries in `_meta` besides
/// (its protocol version, the client's capabilities and identity); none over 2025-11-25.
pub fn tool_call_text(
    id: &str,
    name: &str,
    arguments: &RawValue,
    envelope: Option<&serde_json::Map<String, serde_json::Value>>,
) -> std::io::Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Call<'a> {
        jsonrpc: &'static str,
        id: &'a str,
        method: &'static str,
        params: Params<'a>,
    }
    #[derive(serde::Serialize)]
    struct Params<'a> {
        #[serde(rename = "_meta")]
        meta: Meta<'a>,
        name: &'a str,
        arguments: &'a RawValue,
    }
    #[derive(serde::Serialize)]
    struct Meta<'a> {
        #[serde(rename = "progressToken")]
        progress_token: &'a str,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        envelope: Option<&'a serde_json::Map<String, serde_json::Value>>,
    }
    let mut text = Vec::with_capacity(arguments.get().len() + 160);
    serde_json::to_writer(
        &mut text,
        &Call {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: Params {
                meta: Meta {
                    progress_token: id,
                    envelope,
                },
                name,
                arguments,
            },
        },
    )
    .map_err(std::io::Error::other)?;
    Ok(text)
}

/// The message in `bytes` as rmcp's type, if it is a successful Response whose id `awaited`
/// accepts (the id of a `tools/call` this client sent) and whose result is a tool's result.
/// Read in one pass (two when the result has more than text blocks): a message of another
/// shape fails here and goes to the general decoder.
pub fn tool_result(
    bytes: &[u8],
    awaited: impl FnOnce(&RequestId) -> bool,
) -> Option<ServerJsonRpcMessage> {
    let (id, result) = match serde_json::from_slice::<Answer<TextResult>>(bytes) {
        Ok(answer) if answer.is_response() && answer.result.has_a_known_field() => {
            (answer.id, answer.result.into_result())
        }
        _ => {
            let answer: Answer<CallToolResult> = serde_json::from_slice(bytes).ok()?;
            if !answer.is_response() {
                return None;
            }
            (answer.id, answer.result)
        }
    };
    if !awaited(&id) {
        return None;
    }
    Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}

/// A JSON-RPC message read as a Response with a result of type `R`.
#[derive(serde::Deserialize)]
struct Answer<'a, R> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    result: R,
    // What a Response cannot have: with either, the message is the general decoder's.
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

impl<R> Answer<'_, R> {
    fn is_response(&self) -> bool {
        self.jsonrpc == "2.0" && self.method.is_none() && self.error.is_none()
    }
}

/// A result whose content is text blocks only, with nothing else this reader does not know
/// (rmcp's rules kept: a present `resultType` is "complete", a present
/// `"structuredContent": null` stays distinct from an absent one, one known field at least).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TextResult {
    #[serde(default)]
    result_type: Option<Complete>,
    content: Option<Vec<TextBlock>>,
    #[serde(default, deserialize_with = "present")]
    structured_content: Option<serde_json::Value>,
    is_error: Option<bool>,
    #[serde(rename = "_meta")]
    meta: Option<rmcp::model::MetaObject>,
}

#[derive(serde::Deserialize)]
enum Complete {
    #[serde(rename = "complete")]
    Complete,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TextBlock {
    #[serde(rename = "type")]
    _kind: TextKind,
    text: String,
}

#[derive(serde::Deserialize)]
enum TextKind {
    #[serde(rename = "text")]
    Text,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl TextResult {
    /// As rmcp requires, so that other results are not taken for a tool's.
    fn has_a_known_field(&self) -> bool {
        self.content.is_some() || self.structured_content.is_some() || self.is_error.is_some()
    }

    fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::default();
        result.result_type = self
            .result_type
            .map(|Complete::Complete| rmcp::model::ResultType::COMPLETE);
        result.content = self
            .content
            .unwrap_or_default()
            .into_iter()
            .map(|block| rmcp::model::ContentBlock::text(block.text))
            .collect();
        result.structured_content = self.structured_content;
        result.is_error = self.is_error;
        result.meta = self.meta;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// What rmcp's own reader makes of the same result.
    fn by_rmcp(result: &Value) -> CallToolResult {
        serde_json::from_value(result.clone()).unwrap()
    }

    fn decoded(result: &Value) -> Option<CallToolResult> {
        let line = json!({"jsonrpc": "2.0", "id": "call-1", "result": result}).to_string();
        match tool_result(line.as_bytes(), |id| {
            *id == RequestId::String("call-1".into())
        })? {
            ServerJsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(r),
                ..
            }) => Some(r),
            _ => None,
        }
    }

    #[test]
    fn tool_results_read_here_are_what_rmcp_reads() {
        for result in [
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}, "isError": false}),
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
            json!({"resultType": "complete", "structuredContent": null}),
            json!({"isError": true, "content": [{"type": "text", "text": "no"}], "_meta": {"k": 1}}),
            // Not text blocks only, or something this reader does not know: rmcp's reader.
            json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            json!({"content": [{"type": "text", "text": "a", "annotations": {"priority": 1.0}}]}),
            json!({"content": [], "somethingNew": true}),
        ] {
            assert_eq!(decoded(&result), Some(by_rmcp(&result)), "{result}");
        }
    }

    #[test]
    fn what_is_not_an_awaited_tool_result_is_left_to_rmcp() {
        assert_eq!(
            decoded(&json!({"resultType": "input_required", "content": []})),
            None
        );
        assert_eq!(decoded(&json!({"tools": []})), None);
        let line = br#"{"jsonrpc":"2.0","id":"call-2","result":{"content":[]}}"#;
        assert!(tool_result(line, |id| *id == RequestId::String("call-1".into())).is_none());
        let error = br#"{"jsonrpc":"2.0","id":"call-1","error":{"code":-32602,"message":"no"}}"#;
        assert!(tool_result(error, |_| true).is_none());
    }
}
