//! `x-mcp-header` (SEP-2243, MCP 2026-07-28): a tool's input schema may name, on a property,
//! an HTTP header that carries that argument's value, so that middle boxes can route a
//! `tools/call` without reading its body. The client
//! - mirrors each annotated argument into `Mcp-Param-{Name}` on a `tools/call` over HTTP: a
//!   string as it is, a number or a boolean as its JSON text, `=?base64?…?=` around a value
//!   a header cannot carry as it is (non-ASCII, control characters, leading or trailing space
//!   or tab, a value that already looks wrapped); nothing for a null or absent argument;
//! - hides a tool whose annotations are invalid (empty, not an HTTP token, given twice
//!   regardless of case, on a property that is not a string, integer or boolean, or off the
//!   `properties` chain from the root), with the reason, for the user to see.
//!
//! rmcp's Streamable HTTP client does the same for the requests it sends (its
//! `transport/common/mcp_headers.rs`, crate-private): these are its rules, written again for
//! the turns that go past rmcp (`http_turn.rs`) and for saying why a tool is hidden (rmcp
//! drops such a tool from the list without a word).

use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use serde_json::{Map, Value};

const KEY: &str = "x-mcp-header";
const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// One annotated argument: where it is in the arguments, and the header's name part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub path: Vec<String>,
    pub header: String,
}

/// A tool's valid annotations (none for most tools), or why they are invalid.
pub fn annotations(input_schema: &Map<String, Value>) -> Result<Vec<Annotation>, String> {
    if input_schema.contains_key(KEY) {
        return Err(format!(
            "{KEY} must annotate a property, not the schema root"
        ));
    }
    if off_chain(input_schema, true) {
        return Err(format!(
            "{KEY} must sit on a property reached from the root through `properties` alone"
        ));
    }
    let mut found = Vec::new();
    collect(input_schema.get("properties"), &mut Vec::new(), &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for a in &found {
        if !seen.insert(a.header.to_ascii_lowercase()) {
            return Err(format!(
                "property `{}`: {KEY} `{}` is given twice (names are compared regardless of case)",
                a.path.join("."),
                a.header
            ));
        }
    }
    Ok(found)
}

fn collect(
    properties: Option<&Value>,
    path: &mut Vec<String>,
    found: &mut Vec<Annotation>,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = properties else {
        return Ok(());
    };
    for (name, schema) in properties {
        path.push(name.clone());
        if let Some(header) = schema.get(KEY) {
            let at = path.join(".");
            let Value::String(header) = header else {
                return Err(format!("property `{at}`: {KEY} must be a string"));
            };
            if header.is_empty() {
                return Err(format!("property `{at}`: {KEY} must not be empty"));
            }
            if !header.chars().all(is_tchar) {
                return Err(format!(
                    "property `{at}`: {KEY} `{}` is not an HTTP header name (letters, digits \
                     and !#$%&'*+-.^_`|~ only)",
                    header.escape_debug()
                ));
            }
            match schema.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(format!(
                        "property `{at}`: {KEY} needs a property of type string, integer or \
                         boolean, not {}",
                        other.map_or("one without a type".to_owned(), |t| format!("type {t}"))
                    ));
                }
            }
            found.push(Annotation {
                path: path.clone(),
                header: header.clone(),
            });
        }
        collect(schema.get("properties"), path, found)?;
        path.pop();
    }
    Ok(())
}

/// RFC 9110 token characters.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Whether `schema` holds an annotation anywhere but on a `properties` chain from the root
/// (`on_chain`: `schema` is the root or such a property).
fn off_chain(schema: &Map<String, Value>, on_chain: bool) -> bool {
    schema.iter().any(|(key, value)| match key.as_str() {
        KEY => !on_chain,
        "properties" => map_off_chain(value, on_chain),
        "$defs" | "definitions" | "dependencies" | "dependentSchemas" | "patternProperties" => {
            map_off_chain(value, false)
        }
        // Instance data or property names, not schemas.
        "default" | "const" | "enum" | "examples" | "dependentRequired" => false,
        _ => sub_off_chain(value, false),
    })
}

fn map_off_chain(map: &Value, on_chain: bool) -> bool {
    map.as_object()
        .is_some_and(|m| m.values().any(|s| sub_off_chain(s, on_chain)))
}

fn sub_off_chain(value: &Value, on_chain: bool) -> bool {
    match value {
        Value::Object(schema) => off_chain(schema, on_chain),
        Value::Array(items) => items.iter().any(|i| sub_off_chain(i, false)),
        _ => false,
    }
}

/// The `Mcp-Param-*` headers of a call with `arguments`: (name, value), in annotation order.
pub fn headers(
    annotations: &[Annotation],
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    annotations
        .iter()
        .filter_map(|a| {
            let (first, rest) = a.path.split_first()?;
            let value = rest
                .iter()
                .try_fold(arguments.get(first)?, |v, key| v.get(key))?;
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                // Null: the header is left out; objects and arrays are not annotated.
                _ => return None,
            };
            Some((format!("Mcp-Param-{}", a.header), encode(&text)))
        })
        .collect()
}

/// A value as a header carries it: as it is, or wrapped in Base64.
pub fn encode(value: &str) -> String {
    let edge = |b: Option<&u8>| matches!(b, Some(b' ' | b'\t'));
    let wrap = edge(value.as_bytes().first())
        || edge(value.as_bytes().last())
        || value.chars().any(|c| !(' '..='~').contains(&c))
        || (value.starts_with(PREFIX) && value.ends_with(SUFFIX));
    if wrap {
        format!("{PREFIX}{}{SUFFIX}", BASE64_STANDARD.encode(value))
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(properties: Value) -> Map<String, Value> {
        match json!({"type": "object", "properties": properties}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn annotated_arguments_become_headers_encoded_as_the_scenario_wants() {
        let s = schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "debug": {"type": "boolean", "x-mcp-header": "Debug"},
            "empty": {"type": "string", "x-mcp-header": "Empty"},
            "wide": {"type": "string", "x-mcp-header": "Wide"},
            "padded": {"type": "string", "x-mcp-header": "Padded"},
            "inner": {"type": "string", "x-mcp-header": "Inner"},
            "crlf": {"type": "string", "x-mcp-header": "CrLf"},
            "gone": {"type": "boolean", "x-mcp-header": "Gone"},
            "query": {"type": "string"}
        }));
        let a = annotations(&s).unwrap();
        let args = json!({"region": "us-west1", "priority": 42, "debug": true, "empty": "",
            "wide": "Hello, 世界", "padded": " x", "inner": "us west 1", "crlf": "a\r\nb",
            "gone": null, "query": "SELECT 1"});
        let h: std::collections::HashMap<_, _> =
            headers(&a, args.as_object().unwrap()).into_iter().collect();
        assert_eq!(h["Mcp-Param-Region"], "us-west1");
        assert_eq!(h["Mcp-Param-Priority"], "42");
        assert_eq!(h["Mcp-Param-Debug"], "true");
        assert_eq!(h["Mcp-Param-Empty"], "");
        assert_eq!(h["Mcp-Param-Wide"], "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(h["Mcp-Param-Padded"], "=?base64?IHg=?=");
        assert_eq!(h["Mcp-Param-Inner"], "us west 1");
        assert_eq!(h["Mcp-Param-CrLf"], "=?base64?YQ0KYg==?=");
        assert!(!h.contains_key("Mcp-Param-Gone"), "null is left out");
        assert_eq!(h.len(), 8, "unannotated arguments are not mirrored: {h:?}");
    }

    #[test]
    fn invalid_annotations_say_why() {
        for (properties, words) in [
            (
                json!({"v": {"type": "string", "x-mcp-header": ""}}),
                "must not be empty",
            ),
            (
                json!({"v": {"type": "object", "x-mcp-header": "V"}}),
                "not type object",
            ),
            (
                json!({"v": {"type": "array", "x-mcp-header": "V"}}),
                "not type array",
            ),
            (
                json!({"v": {"type": "null", "x-mcp-header": "V"}}),
                "not type null",
            ),
            (
                json!({"a": {"type": "string", "x-mcp-header": "MyField"},
                       "b": {"type": "string", "x-mcp-header": "myfield"}}),
                "given twice",
            ),
            (
                json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
                "not an HTTP header name",
            ),
            (
                json!({"v": {"type": "string", "x-mcp-header": "A:B"}}),
                "not an HTTP header name",
            ),
            (
                json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
                "not an HTTP header name",
            ),
            (
                json!({"v": {"type": "string", "x-mcp-header": "A\t1"}}),
                "not an HTTP header name",
            ),
            (
                json!({"v": {"anyOf": [{"type": "string", "x-mcp-header": "V"}]}}),
                "through `properties` alone",
            ),
        ] {
            let why = annotations(&schema(properties.clone())).unwrap_err();
            assert!(why.contains(words), "{properties}: {why}");
        }
        assert_eq!(
            annotations(&schema(json!({"v": {"type": "string"}}))),
            Ok(vec![])
        );
    }
}
