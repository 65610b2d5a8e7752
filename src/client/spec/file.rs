//! Servers files in the shapes MCP tools write, read and written:
//!
//! - `{"mcpServers": {NAME: ENTRY}}`: Claude Desktop, Cursor, Claude Code's `.mcp.json`, the
//!   MCP Inspector;
//! - `{"servers": {NAME: ENTRY}, "inputs": [...]}`: VS Code's `.vscode/mcp.json`, and the same
//!   under `"mcp"` in its `settings.json`;
//! - `{NAME: ENTRY}`: the object of servers alone (what session files hold).
//!
//! An entry is `{"command", "args", "env", "envFile", "cwd"}` for a stdio server, or
//! `{"type": "http" | "sse", "url", "headers"}` for a remote one; `type: "stdio"` may be said.
//! `bearerToken` and `embedded` are this program's own. Anything else is kept, so that a round
//! trip loses nothing.

use super::{HttpSpec, Input, OAuthSpec, Origin, ServerSpec, StdioSpec, TransportSpec, vars};
use crate::protocol::Interface;
use crate::protocol::document::SyntaxError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The entry of one server, as other tools write it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    /// VS Code: a file of `NAME=value` lines added to `env`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    env_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    /// bkn-explorer's own: a bearer token (usually `${VAR}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bearer_token: Option<String>,
    /// bkn-explorer's own: this program's reference server of an interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    embedded: Option<Interface>,
    /// How to sign in to an HTTP server that asks for OAuth (Claude Code's `oauth` object,
    /// with `clientId` and `callbackPort`, and bkn-explorer's `clientSecret`, `scopes`,
    /// `clientMetadataUrl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oauth: Option<OAuthEntry>,
    /// bkn-explorer's own: the MCP generation to speak with it (auto, 2026-07-28, 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol: Option<crate::client::generation::ProtocolChoice>,
    /// Whatever else other tools put there, kept so that a round trip loses nothing.
    #[serde(flatten)]
    other: Map<String, Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OAuthEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_metadata_url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    callback_port: Option<u16>,
}

/// A mistake in a servers file: where (a JSON pointer, or the line and column of a syntax
/// error) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub at: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for SpecError {}

/// Reads the servers of a file's text, in any of the shapes above.
pub fn parse_servers(text: &str) -> Result<Vec<ServerSpec>, SpecError> {
    parse_servers_from(text, None)
}

/// Reads a servers file; its servers remember it (their `${workspaceFolder}` and inputs).
pub fn read_servers_file(path: &Path) -> Result<Vec<ServerSpec>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    parse_servers_from(&text, Some(absolute)).map_err(|e| format!("{}: {e}", path.display()))
}

/// The folder a servers file belongs to: the one holding `.vscode/`, `.cursor/` or
/// `.claude/` for files in those, else the file's own.
pub fn workspace_of(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    let in_tool_folder = parent
        .file_name()
        .is_some_and(|n| n == ".vscode" || n == ".cursor" || n == ".claude");
    if in_tool_folder {
        parent.parent().unwrap_or(parent).to_owned()
    } else {
        parent.to_owned()
    }
}

fn parse_servers_from(text: &str, file: Option<PathBuf>) -> Result<Vec<ServerSpec>, SpecError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let e = SyntaxError::from(e);
        SpecError {
            at: format!("line {}, column {}", e.line, e.column),
            message: e.message,
        }
    })?;
    let Value::Object(root) = &value else {
        return Err(SpecError {
            at: "/".into(),
            message: "expected an object (\"mcpServers\", \"servers\", or servers by name)".into(),
        });
    };
    let (prefix, servers, inputs) = shape_of(&value, root);
    let Value::Object(servers) = servers else {
        return Err(SpecError {
            at: prefix.into(),
            message: "expected an object of servers by name".into(),
        });
    };
    let inputs = match inputs {
        Some((at, v)) => read_inputs(at, v)?,
        None => Vec::new(),
    };
    let origin = file.map(|file| {
        Arc::new(Origin {
            workspace: workspace_of(&file),
            file,
            inputs,
        })
    });
    servers
        .iter()
        .map(|(name, entry)| {
            let at = format!("{prefix}/{}", escape_pointer(name));
            let entry: Entry = serde_json::from_value(entry.clone()).map_err(|e| SpecError {
                at: at.clone(),
                message: e.to_string(),
            })?;
            let mut spec = spec_of(name.clone(), entry).map_err(|message| SpecError {
                at: at.clone(),
                message,
            })?;
            spec.origin = origin.clone();
            Ok(spec)
        })
        .collect()
}

/// Where the servers are in a file, and its inputs if it declares any.
fn shape_of<'v>(
    whole: &'v Value,
    root: &'v Map<String, Value>,
) -> (&'static str, &'v Value, Option<(&'static str, &'v Value)>) {
    if let Some(servers) = root.get("mcpServers") {
        return (
            "/mcpServers",
            servers,
            root.get("inputs").map(|i| ("/inputs", i)),
        );
    }
    // VS Code's settings.json keeps the same under "mcp".
    if let Some(Value::Object(mcp)) = root.get("mcp")
        && let Some(servers) = mcp.get("servers")
    {
        return (
            "/mcp/servers",
            servers,
            mcp.get("inputs").map(|i| ("/mcp/inputs", i)),
        );
    }
    // VS Code's mcp.json: "servers" holding entries (objects). A server that happens to be
    // called "servers" in an object of servers holds strings and arrays instead.
    if let Some(servers @ Value::Object(entries)) = root.get("servers")
        && entries.values().all(Value::is_object)
    {
        return (
            "/servers",
            servers,
            root.get("inputs").map(|i| ("/inputs", i)),
        );
    }
    ("", whole, None)
}

fn read_inputs(at: &str, value: &Value) -> Result<Vec<Input>, SpecError> {
    let Value::Array(items) = value else {
        return Err(SpecError {
            at: at.into(),
            message: "expected a list of inputs".into(),
        });
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let here = format!("{at}/{i}");
            let id = item
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| SpecError {
                    at: here.clone(),
                    message: "an input needs an \"id\"".into(),
                })?;
            let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_owned);
            Ok(Input {
                id: id.to_owned(),
                description: text("description"),
                password: item.get("password").and_then(Value::as_bool) == Some(true),
                default: text("default"),
            })
        })
        .collect()
}

/// `~1` for `/` and `~0` for `~`, as JSON pointers write them.
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn spec_of(name: String, e: Entry) -> Result<ServerSpec, String> {
    let protocol = e.protocol;
    let mut spec = transport_of(name, e)?;
    spec.protocol = protocol;
    Ok(spec)
}

fn transport_of(name: String, e: Entry) -> Result<ServerSpec, String> {
    if let Some(interface) = e.embedded {
        // The command and args are there for other tools; the interface and the arguments
        // after `serve <interface>` are what this program runs.
        let args = match e.args.as_slice() {
            [serve, which, rest @ ..]
                if serve == "serve" && Interface::from_code(which) == Some(interface) =>
            {
                rest.to_vec()
            }
            _ => Vec::new(),
        };
        return Ok(ServerSpec::new(
            name,
            TransportSpec::Embedded { interface, args },
        ));
    }
    let kind = match e.kind.as_deref() {
        Some(k) => k,
        None if e.url.is_some() => "http",
        None if e.command.is_some() => "stdio",
        None => return Err("a server needs \"command\" (stdio) or \"url\" (http)".into()),
    };
    match kind {
        "stdio" => {
            let command = e
                .command
                .filter(|c| !c.trim().is_empty())
                .ok_or("a stdio server needs \"command\"")?;
            Ok(ServerSpec::new(
                name,
                TransportSpec::Stdio(StdioSpec {
                    command,
                    args: e.args,
                    env: e.env,
                    env_file: e.env_file,
                    cwd: e.cwd,
                }),
            ))
        }
        "http" | "streamable-http" | "streamableHttp" | "sse" => {
            let url = e
                .url
                .ok_or_else(|| format!("a {kind} server needs \"url\""))?;
            Ok(ServerSpec::new(
                name,
                TransportSpec::Http(HttpSpec {
                    url,
                    headers: e.headers,
                    token: e.bearer_token,
                    legacy_sse: kind == "sse",
                    oauth: e.oauth.map(|o| OAuthSpec {
                        client_id: o.client_id,
                        client_secret: o.client_secret,
                        client_metadata_url: o.client_metadata_url,
                        scopes: o.scopes,
                        callback_port: o.callback_port,
                    }),
                }),
            ))
        }
        other => Err(format!(
            "unknown server type \"{other}\" (stdio, http or sse)"
        )),
    }
}

/// Writes servers as an object of servers by name. Secrets are never written in clear: a
/// token, a header or an environment value that is not already a `${VAR}` reference becomes
/// one, named after the server and the key, and the returned list says which variables the
/// reader must set. Places (`${workspaceFolder}`, `${userHome}`) are written out, so that the
/// file finds the server from anywhere.
pub fn write_servers(servers: &[ServerSpec]) -> (Map<String, Value>, Vec<String>) {
    let mut out = Map::new();
    let mut needed = Vec::new();
    for s in servers {
        let place = |v: &str| vars::fix_places(v, s.origin.as_deref());
        let mut e = Entry {
            protocol: s.protocol,
            ..Entry::default()
        };
        match &s.transport {
            TransportSpec::Stdio(st) => {
                e.command = Some(place(&st.command));
                e.args = st.args.iter().map(|a| place(a)).collect();
                e.env = st
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), secret(&s.name, k, v, &mut needed)))
                    .collect();
                e.env_file = st.env_file.as_deref().map(place);
                e.cwd = st.cwd.as_deref().map(place);
            }
            TransportSpec::Http(h) => {
                e.kind = Some(if h.legacy_sse { "sse" } else { "http" }.into());
                e.url = Some(url_without_password(&s.name, &place(&h.url), &mut needed));
                e.headers = h
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), secret(&s.name, k, v, &mut needed)))
                    .collect();
                e.bearer_token = h
                    .token
                    .as_ref()
                    .map(|t| secret(&s.name, "TOKEN", t, &mut needed));
                e.oauth = h.oauth.as_ref().map(|o| OAuthEntry {
                    client_id: o.client_id.clone(),
                    client_secret: o
                        .client_secret
                        .as_ref()
                        .map(|c| secret(&s.name, "CLIENT_SECRET", c, &mut needed)),
                    client_metadata_url: o.client_metadata_url.clone(),
                    scopes: o.scopes.clone(),
                    callback_port: o.callback_port,
                });
            }
            TransportSpec::Embedded { interface, args } => {
                e.command = Some("bkn-explorer".into());
                e.args = ["serve", interface.code()]
                    .iter()
                    .map(|s| s.to_string())
                    .chain(args.iter().cloned())
                    .collect();
                e.embedded = Some(*interface);
            }
        }
        out.insert(s.name.clone(), serde_json::to_value(e).unwrap_or_default());
    }
    (out, needed)
}

/// A URL with its password (`http://user:PW@host/…`) made a `${VAR}` reference, as every
/// other secret is; the variable joins `needed`.
fn url_without_password(server: &str, url: &str, needed: &mut Vec<String>) -> String {
    let userinfo = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|authority| authority.rsplit_once('@'))
        .map(|(userinfo, _)| userinfo);
    if userinfo.is_none_or(is_reference) {
        return url.to_owned();
    }
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let variable = secret_variable(server, "URL_PASSWORD");
            // `${` is not allowed by the URL parser in a password: the reference is put in
            // place of a marker.
            if parsed.set_password(Some("BKNPASSWORDMARKER")).is_err() {
                return url.to_owned();
            }
            needed.push(variable.clone());
            parsed
                .to_string()
                .replacen("BKNPASSWORDMARKER", &format!("${{{variable}}}"), 1)
        }
        _ => url.to_owned(),
    }
}

/// The environment variable a secret is saved as: `BKN_<SERVER>_<KEY>` in upper case.
pub fn secret_variable(server: &str, key: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("BKN_{}_{}", clean(server), clean(key))
}

fn secret(server: &str, key: &str, value: &str, needed: &mut Vec<String>) -> String {
    if is_reference(value) {
        return value.to_owned();
    }
    let var = secret_variable(server, key);
    needed.push(var.clone());
    format!("${{{var}}}")
}

/// A value that takes its secret from a variable (`${VAR}`, `Bearer ${input:pat}`): the
/// file then holds the reference, not the secret. A value without one is taken for a secret.
fn is_reference(value: &str) -> bool {
    value
        .find("${")
        .is_some_and(|start| value[start..].contains('}'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_password_in_a_url_is_never_written_in_clear() {
        let mut spec = ServerSpec::from_url("http://ana:s3cret@h:1/mcp").unwrap();
        spec.name = "lab".into();
        let (out, needed) = write_servers(&[spec]);
        let url = out["lab"]["url"].as_str().unwrap();
        assert!(!url.contains("s3cret"), "{url}");
        assert_eq!(url, "http://ana:${BKN_LAB_URL_PASSWORD}@h:1/mcp");
        assert_eq!(needed, ["BKN_LAB_URL_PASSWORD"]);
        // Read back, the reference stays a reference.
        let again = one(&serde_json::json!({"mcpServers": out}).to_string());
        let (out, needed) = write_servers(&[again]);
        assert_eq!(out["lab"]["url"], url);
        assert!(needed.is_empty());
    }

    #[test]
    fn a_server_keeps_its_protocol() {
        let s = one(r#"{"mcpServers": {"a": {"url": "http://h/mcp", "protocol": "2026-07-28"}}}"#);
        assert_eq!(
            s.protocol,
            Some(crate::client::generation::ProtocolChoice::Stateless)
        );
        let (out, _) = write_servers(&[s]);
        assert_eq!(out["a"]["protocol"], "2026-07-28");
        let bad =
            parse_servers(r#"{"mcpServers": {"a": {"url": "http://h/mcp", "protocol": "1999"}}}"#);
        assert!(format!("{:?}", bad.unwrap_err()).contains("auto, 2026-07-28 or 2025-11-25"));
    }

    fn one(text: &str) -> ServerSpec {
        let mut all = parse_servers(text).unwrap();
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    #[test]
    fn claude_desktop_and_cursor() {
        let servers = parse_servers(
            r#"{"mcpServers": {
                "local": {"command": "srv", "args": ["-v"], "env": {"K": "V"}, "cwd": "/tmp"},
                "remote": {"url": "http://h:1/mcp", "headers": {"X": "${T}"}},
                "dac": {"command": "bkn-explorer", "args": ["serve", "dac", "--domain", "d.json"], "embedded": "dac"}
            }}"#,
        )
        .unwrap();
        let by = |n: &str| servers.iter().find(|s| s.name == n).unwrap().clone();
        let TransportSpec::Stdio(local) = by("local").transport else {
            panic!()
        };
        assert_eq!(
            (local.command.as_str(), local.cwd.as_deref()),
            ("srv", Some("/tmp"))
        );
        assert!(matches!(by("remote").transport, TransportSpec::Http(_)));
        assert_eq!(
            by("dac").transport,
            TransportSpec::Embedded {
                interface: Interface::Dac,
                args: vec!["--domain".into(), "d.json".into()]
            }
        );
    }

    #[test]
    fn claude_code_mcp_json_with_types() {
        let servers = parse_servers(
            r#"{"mcpServers": {
                "a": {"type": "stdio", "command": "npx", "args": ["-y", "srv"]},
                "b": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${API_KEY:-none}"}},
                "c": {"type": "sse", "url": "https://h/sse"}
            }}"#,
        )
        .unwrap();
        let TransportSpec::Http(c) = &servers[2].transport else {
            panic!()
        };
        assert!(c.legacy_sse);
        let TransportSpec::Http(b) = &servers[1].transport else {
            panic!()
        };
        assert!(!b.legacy_sse && b.headers["Authorization"].contains("API_KEY"));
    }

    #[test]
    fn a_servers_own_oauth_client_is_read_and_written_with_its_secret_as_a_reference() {
        let servers = parse_servers(
            r#"{"mcpServers": {"remote": {"type": "http", "url": "https://h/mcp",
                "oauth": {"clientId": "abc", "clientSecret": "s3cret", "callbackPort": 8765,
                          "scopes": ["dac", "offline_access"]}}}}"#,
        )
        .unwrap();
        let TransportSpec::Http(h) = &servers[0].transport else {
            panic!()
        };
        let oauth = h.oauth.as_ref().unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("abc"));
        assert_eq!(oauth.callback_port, Some(8765));
        assert_eq!(oauth.scopes, ["dac", "offline_access"]);
        let (written, needed) = write_servers(&servers);
        assert_eq!(
            written["remote"]["oauth"]["clientSecret"],
            "${BKN_REMOTE_CLIENT_SECRET}"
        );
        assert_eq!(written["remote"]["oauth"]["clientId"], "abc");
        assert_eq!(needed, ["BKN_REMOTE_CLIENT_SECRET"]);
    }

    #[test]
    fn vs_code_servers_and_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".vscode").join("mcp.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{
              "inputs": [{"type": "promptString", "id": "pat", "description": "GitHub token", "password": true}],
              "servers": {
                "gh": {"type": "http", "url": "https://api/mcp", "headers": {"Authorization": "Bearer ${input:pat}"}},
                "local": {"type": "stdio", "command": "${workspaceFolder}/srv", "envFile": "${workspaceFolder}/.env"}
              }
            }"#,
        )
        .unwrap();
        let servers = read_servers_file(&file).unwrap();
        assert_eq!(
            servers.len(),
            2,
            "no server called \"servers\" or \"inputs\""
        );
        let origin = servers[0].origin.as_ref().unwrap();
        assert_eq!(origin.workspace, std::path::absolute(dir.path()).unwrap());
        assert_eq!(origin.inputs[0].id, "pat");
        assert!(origin.inputs[0].password);
        // Written to a session, the place is written out and the input stays a reference.
        let (out, needed) = write_servers(&servers);
        let text = serde_json::to_string(&out).unwrap();
        assert!(
            text.contains(&format!("{}/srv", origin.workspace.display())),
            "{text}"
        );
        assert!(text.contains("${input:pat}"), "{text}");
        assert!(needed.is_empty());
        // VS Code's settings.json keeps the same under "mcp".
        let s = one(r#"{"mcp": {"servers": {"x": {"command": "srv"}}}}"#);
        assert_eq!(s.name, "x");
    }

    #[test]
    fn a_server_named_servers_in_a_plain_object() {
        let s = one(r#"{"servers": {"command": "srv", "args": ["a"]}}"#);
        assert_eq!(s.name, "servers");
    }

    #[test]
    fn each_mistake_says_where_and_what() {
        let cases = [
            (
                r#"{"mcpServers": {"x": {"type": "http"}}}"#,
                "/mcpServers/x: a http server needs \"url\"",
            ),
            (
                r#"{"servers": {"x": {"type": "stdio"}}}"#,
                "/servers/x: a stdio server needs \"command\"",
            ),
            (
                r#"{"mcpServers": {"x": {}}}"#,
                "/mcpServers/x: a server needs \"command\" (stdio) or \"url\" (http)",
            ),
            (
                r#"{"mcpServers": {"a/b": {"type": "ws", "url": "u"}}}"#,
                "/mcpServers/a~1b: unknown server type \"ws\" (stdio, http or sse)",
            ),
            (
                r#"{"mcpServers": {"x": {"command": "srv", "args": "-v"}}}"#,
                "/mcpServers/x: invalid type: string \"-v\", expected a sequence",
            ),
            (
                r#"{"mcpServers": []}"#,
                "/mcpServers: expected an object of servers by name",
            ),
            (
                r#"{"servers": {"x": {"command": "s"}}, "inputs": [{"type": "promptString"}]}"#,
                "/inputs/0: an input needs an \"id\"",
            ),
            ("[1]", "/: expected an object"),
            ("{\"mcpServers\": [", "line 1, column 16: "),
        ];
        for (text, expected) in cases {
            let e = parse_servers(text).unwrap_err().to_string();
            assert!(
                e.starts_with(expected),
                "{text}\n  said: {e}\n  want: {expected}"
            );
        }
    }

    #[test]
    fn secrets_become_references() {
        let servers = vec![ServerSpec::new(
            "lab server",
            TransportSpec::Http(HttpSpec {
                url: "http://h/mcp".into(),
                headers: BTreeMap::from([
                    ("X-Api-Key".into(), "s3cret".into()),
                    ("X-Ref".into(), "${KEEP:-x}".into()),
                ]),
                token: Some("tok".into()),
                ..Default::default()
            }),
        )];
        let (out, needed) = write_servers(&servers);
        let text = serde_json::to_string(&out).unwrap();
        assert!(
            !text.contains("s3cret") && !text.contains("\"tok\""),
            "{text}"
        );
        assert!(text.contains("${BKN_LAB_SERVER_X_API_KEY}") && text.contains("${KEEP:-x}"));
        assert_eq!(needed, ["BKN_LAB_SERVER_X_API_KEY", "BKN_LAB_SERVER_TOKEN"]);
        let back = parse_servers(&serde_json::json!({"mcpServers": out}).to_string()).unwrap();
        assert_eq!(back[0].name, "lab server");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// No text is a panic: any bytes, and JSON of the right outline with any values.
        #[test]
        fn no_file_panics(text in ".{0,200}") {
            let _ = parse_servers(&text);
        }

        #[test]
        fn no_entry_panics(
            wrapper in prop::sample::select(vec!["mcpServers", "servers", "none"]),
            kind in prop::option::of(prop::sample::select(vec!["stdio", "http", "sse", "x", ""])),
            command in prop::option::of(".{0,12}"),
            url in prop::option::of(".{0,12}"),
            args in prop::collection::vec(".{0,6}", 0..3),
            value in ".{0,20}",
        ) {
            let mut entry = serde_json::json!({"args": args, "env": {"K": value.clone()}});
            if let Some(k) = kind { entry["type"] = k.into(); }
            if let Some(c) = command { entry["command"] = c.into(); }
            if let Some(u) = url { entry["url"] = u.into(); }
            let file = if wrapper == "none" {
                serde_json::json!({"s": entry})
            } else {
                serde_json::json!({wrapper: {"s": entry}})
            };
            if let Ok(servers) = parse_servers(&file.to_string()) {
                let env = |_: &str| None;
                for s in &servers {
                    let _ = s.scope(&env).expand(&value);
                }
                let _ = write_servers(&servers);
            }
        }
    }
}
