//! What a server answers to input that is not a JSON-RPC message it can take (MCP-BINDING
//! section 2, as JSON-RPC 2.0 says): text that is not JSON gets `-32700` with `id: null`, JSON
//! that is not a request `-32600`, a request whose params cannot be read (a `tools/call`
//! whose arguments are not an object) `-32602`. A server never goes silent: the client is not
//! left to wait for its timeout. Both transports (stdio and HTTP) use this.

use crate::protocol::json;
use serde_json::{Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;
pub const METHOD_NOT_FOUND: i64 = -32601;

/// The error reply for a message that could not be read as a JSON-RPC message, or `None`
/// when there is no one to answer (a malformed notification or response: JSON-RPC sends no
/// reply to those).
pub fn reply_to_unreadable(bytes: &[u8]) -> Option<Value> {
    let value: Value = match json::frame_from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Some(error(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: the message is not JSON ({e})"),
            ));
        }
    };
    let Value::Object(message) = &value else {
        let what = if value.is_array() {
            "a batch (an array); MCP sends one message at a time"
        } else {
            "not an object"
        };
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: the message is {what}"),
        ));
    };
    // An id that is there but neither a string nor a number (an object, an array, a
    // boolean, null) makes the message an invalid request: -32600 with id null, never a
    // notification passed over in silence.
    if message
        .get("id")
        .is_some_and(|id| !(id.is_string() || id.is_number()))
    {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid Request: \"id\" must be a string or a number".into(),
        ));
    }
    let id = message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned();
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: \"jsonrpc\" must be \"2.0\"".into(),
        ));
    }
    match (message.get("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            let detail = invalid_params(method, message.get("params"));
            Some(error(
                id,
                INVALID_PARAMS,
                format!("Invalid params of {method}: {detail}"),
            ))
        }
        (Some(Value::String(_)), None) => None, // a notification: never answered
        (Some(_), id) => Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: \"method\" must be a string".into(),
        )),
        (None, _) if message.contains_key("result") || message.contains_key("error") => None,
        (None, id) => Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "Invalid Request: a request has a \"method\"".into(),
        )),
    }
}

/// The reply to a message whose `id` is there but is neither a string nor a number, which
/// the MCP library would take or pass over: -32600 with id null (JSON-RPC 2.0).
pub fn reply_to_bad_id(bytes: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let head: Head = serde_json::from_slice(bytes).ok()?;
    if is_string_or_number(head.id?) {
        return None;
    }
    Some(error(
        Value::Null,
        INVALID_REQUEST,
        "Invalid Request: \"id\" must be a string or a number".into(),
    ))
}

/// Whether a request's raw `id` is a string or a number, the two JSON-RPC 2.0 allows.
pub fn is_string_or_number(id: &serde_json::value::RawValue) -> bool {
    let id = id.get().trim_start();
    id.starts_with('"') || id.starts_with('-') || id.starts_with(|c: char| c.is_ascii_digit())
}

/// The methods MCP 2026-07-28 removed: a request of that generation naming one is answered
/// -32601 (over HTTP with status 404), as an unknown method is.
pub const REMOVED_IN_2026: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The -32601 reply to a 2026-07-28 request of a method that generation removed, or None.
/// `header_version` is the `MCP-Protocol-Version` header, over HTTP.
pub fn reply_to_removed(bytes: &[u8], header_version: Option<&str>) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        id: Option<Value>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<Meta<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<std::borrow::Cow<'a, str>>,
    }
    let head: Head = serde_json::from_slice(bytes).ok()?;
    let method = head.method?;
    if !REMOVED_IN_2026.contains(&method.as_ref()) {
        return None;
    }
    let meta_version = head
        .params
        .and_then(|p| p.meta)
        .and_then(|m| m.version)
        .map(|v| v.into_owned());
    let version = header_version.map(str::to_owned).or(meta_version)?;
    if version.as_str() < "2026-07-28" {
        return None;
    }
    let id = head.id.filter(|i| i.is_string() || i.is_number())?;
    Some(error(
        id,
        METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} is not a method of MCP {version} (removed in 2026-07-28)"
        ),
    ))
}

/// The request methods of MCP (2025-11-25) that a client sends a server. A request that names
/// one but that the MCP library could not read has params of the wrong shape (`-32602`), not
/// an unknown method.
pub const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// Why the params of a standard method cannot be read, in words.
pub fn invalid_params(method: &str, params: Option<&Value>) -> String {
    match (method, params) {
        (_, Some(p)) if !p.is_object() => "params must be an object".into(),
        ("tools/call", Some(p)) => match (p.get("name"), p.get("arguments")) {
            (None, _) => "a tools/call names its tool (\"name\")".into(),
            (Some(n), _) if !n.is_string() => "the tool's \"name\" must be a string".into(),
            (_, Some(a)) if !a.is_object() && !a.is_null() => {
                "the tool's \"arguments\" must be a JSON object (MCP-BINDING section 1: the \
                 Request itself)"
                    .into()
            }
            _ => "they do not have the shape the method takes".into(),
        },
        _ => "they do not have the shape the method takes".into(),
    }
}

/// A JSON-RPC 2.0 error response.
pub fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_bad_input_gets_its_error() {
        let code =
            |text: &str| reply_to_unreadable(text.as_bytes()).map(|v| v["error"]["code"].clone());
        assert_eq!(code("{not json"), Some(json!(PARSE_ERROR)));
        assert_eq!(
            reply_to_unreadable(b"{not json").unwrap()["id"],
            Value::Null
        );
        assert_eq!(code("[1, 2]"), Some(json!(INVALID_REQUEST)));
        assert_eq!(
            code(r#"{"jsonrpc": "2.0", "id": 3}"#),
            Some(json!(INVALID_REQUEST))
        );
        assert_eq!(
            code(r#"{"jsonrpc": "1.0", "id": 3, "method": "x"}"#),
            Some(json!(INVALID_REQUEST))
        );
        let r = reply_to_unreadable(
            br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bkn_dac", "arguments": [1]}}"#,
        )
        .unwrap();
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(7), json!(INVALID_PARAMS))
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("JSON object")
        );
        assert_eq!(
            code(r#"{"jsonrpc": "2.0", "method": "notifications/x", "params": 5}"#),
            None
        );
    }
}
