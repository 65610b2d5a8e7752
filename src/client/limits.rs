//! The message size limit (`--max-message-mb`): a message over it ends the request it answers
//! at once with an error that names its size and the limit, instead of being dropped and
//! leaving the request to time out. Both transports use these helpers.

use rmcp::model::{ErrorData, RequestId, ServerJsonRpcMessage};

/// The JSON-RPC error code of a response this client made up because the real one was too
/// large. In the implementation-defined server error range, so no server sends it by chance.
pub const TOO_LARGE_CODE: i32 = -32090;

/// A response's body, read only while it stays within `limit` bytes: `Err(read)` as soon as
/// it goes past (what was read so far, over the limit), so that a server answering with
/// gigabytes, or an endless body without a length, never takes the client's memory.
pub async fn body_within(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Result<Vec<u8>, usize>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(Err(body.len() + chunk.len()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Ok(body))
}

/// `8.0 MiB`, `512 KiB`, `120 B`.
pub fn human_size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB {
        format!("{:.1} MiB", b / KIB / KIB)
    } else if b >= KIB {
        format!("{:.0} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

/// The error that replaces an oversized message.
pub fn too_large(id: RequestId, size: usize, limit: usize, exact: bool) -> ServerJsonRpcMessage {
    let size = if exact {
        human_size(size)
    } else {
        format!("more than {}", human_size(size))
    };
    ServerJsonRpcMessage::error(
        ErrorData::new(
            rmcp::model::ErrorCode(TOO_LARGE_CODE),
            format!(
                "the server's message is {size}, over the {} limit (--max-message-mb)",
                human_size(limit)
            ),
            None,
        ),
        Some(id),
    )
}

/// Finds the `"id"` member of a JSON-RPC message from a piece of its text (the beginning, or
/// the end, of a message too large to keep). Only the top level counts: an `"id"` inside
/// `"result"` is skipped by tracking nesting depth.
pub fn find_id(fragment: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(fragment);
    let bytes = text.as_bytes();
    let (mut depth, mut i, mut in_string) = (0i32, 0usize, false);
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                b'"' => {
                    if depth == 1 && text[i..].starts_with("\"id\"") {
                        let rest = text[i + 4..].trim_start().strip_prefix(':')?.trim_start();
                        let mut values = serde_json::Deserializer::from_str(rest)
                            .into_iter::<serde_json::Value>();
                        if let Some(Ok(v)) = values.next() {
                            return serde_json::from_value(v).ok();
                        }
                        return None;
                    }
                    in_string = true;
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_top_level_id() {
        let id =
            find_id(br#"{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"id":99"#).unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), 7);
        let id = find_id(br#"{"result":{"id":3,"x":"\"id\":5"},"id":"abc"}"#).unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), "abc");
        assert!(find_id(br#"{"jsonrpc":"2.0","result":{"#).is_none());
        assert_eq!(human_size(20 * 1024 * 1024 + 100), "20.0 MiB");
    }
}
