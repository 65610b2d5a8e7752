//! A first look at a JSON-RPC 2.0 line: its kind, id and method, and where its params or
//! result are, read without building anything. The transports use it to decode the messages
//! of a turn (a `tools/call` and its result) straight into their types; rmcp's general
//! decoder buffers every message whole and tries each kind of message, and each kind of
//! result, in turn, which was the largest single cost of a turn on both sides.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The top level of a JSON-RPC message. Members it does not name are skipped.
#[derive(Deserialize)]
pub struct Probe<'a> {
    #[serde(borrow, default)]
    pub jsonrpc: Option<Cow<'a, str>>,
    /// The id, as written (a number or a string).
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<IgnoredAny>,
}

impl<'a> Probe<'a> {
    /// The line's top level, if it is a JSON object (else the general decoder says why not).
    pub fn read(line: &'a [u8]) -> Option<Probe<'a>> {
        serde_json::from_slice(line).ok()
    }

    fn is_v2(&self) -> bool {
        self.jsonrpc.as_deref() == Some("2.0")
    }

    /// The params and id of a Request for `method` (and nothing a Request cannot have).
    pub fn request(&self, method: &str) -> Option<(&'a RawValue, &'a RawValue)> {
        let ok = self.is_v2()
            && self.method.as_deref() == Some(method)
            && self.result.is_none()
            && self.error.is_none();
        ok.then_some((self.id?, self.params?))
    }

    /// The result and id of a successful Response (and nothing a Response cannot have).
    pub fn response(&self) -> Option<(&'a RawValue, &'a RawValue)> {
        let ok = self.is_v2() && self.method.is_none() && self.error.is_none();
        ok.then_some((self.id?, self.result?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_are_told_apart() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bkn_dac"}}"#;
        let p = Probe::read(call).unwrap();
        let (id, params) = p.request("tools/call").unwrap();
        assert_eq!((id.get(), params.get()), ("7", r#"{"name":"bkn_dac"}"#));
        assert!(p.response().is_none());
        assert!(p.request("tools/list").is_none());
        let result = br#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#;
        let p = Probe::read(result).unwrap();
        assert_eq!(p.response().unwrap().0.get(), r#""a""#);
        // Anything odd is left to the general decoder.
        let both = br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}"#;
        assert!(Probe::read(both).unwrap().response().is_none());
        let v1 = br#"{"jsonrpc":"1.0","id":1,"result":{}}"#;
        assert!(Probe::read(v1).unwrap().response().is_none());
        assert!(Probe::read(b"[1]").is_none());
    }
}
