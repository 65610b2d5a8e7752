//! Server definitions: how to reach an MCP server. They read and write the `mcpServers` shape
//! other MCP tools use (Claude Desktop, VS Code, the MCP Inspector), so users can reuse their
//! files:
//!
//! ```json
//! {"mcpServers": {
//!   "local":  {"command": "my-server", "args": ["--x"], "env": {"K": "V"}, "cwd": "/tmp"},
//!   "remote": {"type": "http", "url": "https://example.org/mcp",
//!              "headers": {"Authorization": "Bearer ${MY_TOKEN}"}},
//!   "dac":    {"command": "bkn-explorer", "args": ["serve", "dac"], "embedded": "dac"}
//! }}
//! ```
//!
//! `${NAME}` in a value is read from the environment when connecting, so files can name secrets
//! without holding them. `embedded` marks this program's own reference servers: they are started
//! from the running executable, whether or not `bkn-explorer` is on the PATH.

use crate::protocol::Interface;
use crate::protocol::document::SyntaxError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: TransportSpec,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportSpec {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio(StdioSpec),
    /// A Streamable HTTP endpoint.
    Http(HttpSpec),
    /// This program's own reference server for an interface, with extra `serve` arguments
    /// (e.g. `--domain FILE`).
    Embedded {
        interface: Interface,
        args: Vec<String>,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpSpec {
    pub url: String,
    pub headers: BTreeMap<String, String>,
    /// A bearer token (sent as `Authorization: Bearer …`).
    pub token: Option<String>,
}

impl ServerSpec {
    /// The reference server of an interface, started from this executable.
    pub fn embedded(interface: Interface) -> ServerSpec {
        ServerSpec {
            name: match interface {
                Interface::Dac => "domain-access".into(),
                Interface::Usr => "user-state".into(),
            },
            transport: TransportSpec::Embedded {
                interface,
                args: Vec::new(),
            },
        }
    }

    /// `--stdio "CMD ARGS"`: split as a POSIX shell would.
    pub fn from_command_line(line: &str) -> Result<ServerSpec, String> {
        let words =
            shlex::split(line).ok_or_else(|| format!("--stdio \"{line}\": unbalanced quotes"))?;
        let (command, args) = words
            .split_first()
            .ok_or_else(|| "--stdio needs a command".to_owned())?;
        let name = std::path::Path::new(command)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| command.clone());
        Ok(ServerSpec {
            name,
            transport: TransportSpec::Stdio(StdioSpec {
                command: command.clone(),
                args: args.to_vec(),
                ..StdioSpec::default()
            }),
        })
    }

    /// `--url URL`.
    pub fn from_url(url: &str) -> Result<ServerSpec, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("--url {url}: expected an http:// or https:// URL"));
        }
        let host = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split(['/', '?']).next())
            .unwrap_or(url);
        Ok(ServerSpec {
            name: host.to_owned(),
            transport: TransportSpec::Http(HttpSpec {
                url: url.to_owned(),
                ..HttpSpec::default()
            }),
        })
    }

    /// Whether the name was made from the command or the URL (`python` for `--stdio "python
    /// srv.py"`, the host for `--url`), rather than chosen: a client had better call the
    /// server by the name it gives itself.
    pub fn name_is_derived(&self) -> bool {
        let derived = match &self.transport {
            TransportSpec::Stdio(s) => std::path::Path::new(&s.command)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| s.command.clone()),
            TransportSpec::Http(h) => h
                .url
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split(['/', '?']).next())
                .unwrap_or(&h.url)
                .to_owned(),
            TransportSpec::Embedded { .. } => return false,
        };
        // make_names_unique adds "-2", "-3" to repeated names.
        let name = match self.name.rsplit_once('-') {
            Some((base, n)) if n.parse::<u32>().is_ok() && base == derived => base,
            _ => self.name.as_str(),
        };
        name == derived
    }

    /// `stdio`, `http` or `embedded`, for people.
    pub fn kind(&self) -> &'static str {
        match self.transport {
            TransportSpec::Stdio(_) => "stdio",
            TransportSpec::Http(_) => "http",
            TransportSpec::Embedded { .. } => "stdio",
        }
    }

    /// Where it is, for people: the command line or the URL.
    pub fn location(&self) -> String {
        match &self.transport {
            TransportSpec::Stdio(s) => std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .map(|w| {
                    shlex::try_quote(w)
                        .map(|q| q.into_owned())
                        .unwrap_or_else(|_| w.to_owned())
                })
                .collect::<Vec<_>>()
                .join(" "),
            TransportSpec::Http(h) => h.url.clone(),
            TransportSpec::Embedded { interface, args } => {
                let mut line = format!("bkn-explorer serve {}", interface.code());
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
        }
    }
}

/// The entry of one server in an `mcpServers` object, as other tools write it.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<PathBuf>,
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
    /// Whatever else other tools put there, kept so that a round trip loses nothing.
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// A mistake in a servers file.
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

/// Reads the servers of an `mcpServers` file (the object may also be the whole file).
pub fn parse_servers(text: &str) -> Result<Vec<ServerSpec>, SpecError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let e = SyntaxError::from(e);
        SpecError {
            at: format!("line {}, column {}", e.line, e.column),
            message: e.message,
        }
    })?;
    let (prefix, servers) = match value.get("mcpServers") {
        Some(servers) => ("/mcpServers", servers.clone()),
        None => ("", value),
    };
    let Value::Object(servers) = servers else {
        return Err(SpecError {
            at: if prefix.is_empty() {
                "/".into()
            } else {
                prefix.into()
            },
            message: "expected an object of servers by name".into(),
        });
    };
    servers
        .into_iter()
        .map(|(name, entry)| {
            let at = format!("{prefix}/{name}");
            let entry: Entry = serde_json::from_value(entry).map_err(|e| SpecError {
                at: at.clone(),
                message: e.to_string(),
            })?;
            spec_of(name, entry).map_err(|message| SpecError { at, message })
        })
        .collect()
}

fn spec_of(name: String, e: Entry) -> Result<ServerSpec, String> {
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
        return Ok(ServerSpec {
            name,
            transport: TransportSpec::Embedded { interface, args },
        });
    }
    let kind = e
        .kind
        .as_deref()
        .unwrap_or(if e.url.is_some() { "http" } else { "stdio" });
    match kind {
        "stdio" => {
            let command = e.command.ok_or("a stdio server needs \"command\"")?;
            Ok(ServerSpec {
                name,
                transport: TransportSpec::Stdio(StdioSpec {
                    command,
                    args: e.args,
                    env: e.env,
                    cwd: e.cwd,
                }),
            })
        }
        "http" | "streamable-http" | "streamableHttp" => {
            let url = e.url.ok_or("an http server needs \"url\"")?;
            Ok(ServerSpec {
                name,
                transport: TransportSpec::Http(HttpSpec {
                    url,
                    headers: e.headers,
                    token: e.bearer_token,
                }),
            })
        }
        "sse" => Err("the legacy SSE transport is not supported; use Streamable HTTP".into()),
        other => Err(format!(
            "unknown server type \"{other}\" (use stdio or http)"
        )),
    }
}

/// Writes servers as an `mcpServers` object. Secrets are never written in clear: a token or a
/// header value that is not already a `${VAR}` reference becomes one, named after the server
/// and header, and the returned list says which variables the reader must set.
pub fn write_servers(servers: &[ServerSpec]) -> (Map<String, Value>, Vec<String>) {
    let mut out = Map::new();
    let mut needed = Vec::new();
    for s in servers {
        let mut e = Entry::default();
        match &s.transport {
            TransportSpec::Stdio(st) => {
                e.command = Some(st.command.clone());
                e.args = st.args.clone();
                e.env = st
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), secret(&s.name, k, v, &mut needed)))
                    .collect();
                e.cwd = st.cwd.clone();
            }
            TransportSpec::Http(h) => {
                e.kind = Some("http".into());
                e.url = Some(h.url.clone());
                e.headers = h
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), secret(&s.name, k, v, &mut needed)))
                    .collect();
                e.bearer_token = h
                    .token
                    .as_ref()
                    .map(|t| secret(&s.name, "TOKEN", t, &mut needed));
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

fn is_reference(value: &str) -> bool {
    value.starts_with("${")
        && value.ends_with('}')
        && value.len() > 3
        && !value[2..value.len() - 1].contains(['$', '{', '}'])
}

/// Replaces every `${NAME}` in `value` with the variable's value from `lookup`.
pub fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("\"{value}\" has an unclosed ${{"))?;
        let name = &after[..end];
        let found =
            lookup(name).ok_or_else(|| format!("${{{name}}} is not set in the environment"))?;
        out.push_str(&found);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The environment of this process, for `expand`.
pub fn from_environment(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_common_shape() {
        let servers = parse_servers(
            r#"{"mcpServers": {
                "local": {"command": "srv", "args": ["-v"], "env": {"K": "V"}},
                "remote": {"type": "http", "url": "http://h:1/mcp", "headers": {"X": "${T}"}},
                "plain": {"url": "http://h:2/mcp"},
                "dac": {"command": "bkn-explorer", "args": ["serve", "dac", "--domain", "d.json"], "embedded": "dac"}
            }}"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 4);
        let dac = servers.iter().find(|s| s.name == "dac").unwrap();
        assert_eq!(
            dac.transport,
            TransportSpec::Embedded {
                interface: Interface::Dac,
                args: vec!["--domain".into(), "d.json".into()]
            }
        );
        assert!(matches!(
            servers
                .iter()
                .find(|s| s.name == "plain")
                .unwrap()
                .transport,
            TransportSpec::Http(_)
        ));
    }

    #[test]
    fn mistakes_say_where() {
        let e = parse_servers(r#"{"mcpServers": {"x": {"type": "http"}}}"#).unwrap_err();
        assert_eq!(e.at, "/mcpServers/x");
        assert!(e.message.contains("url"));
        let e = parse_servers("{\"mcpServers\": [").unwrap_err();
        assert!(e.at.starts_with("line 1"));
        let e = parse_servers(r#"{"mcpServers": {"x": {"type": "sse", "url": "u"}}}"#).unwrap_err();
        assert!(e.message.contains("SSE"));
    }

    #[test]
    fn secrets_become_references() {
        let servers = vec![ServerSpec {
            name: "lab server".into(),
            transport: TransportSpec::Http(HttpSpec {
                url: "http://h/mcp".into(),
                headers: BTreeMap::from([
                    ("X-Api-Key".into(), "s3cret".into()),
                    ("X-Ref".into(), "${KEEP}".into()),
                ]),
                token: Some("tok".into()),
            }),
        }];
        let (out, needed) = write_servers(&servers);
        let text = serde_json::to_string(&out).unwrap();
        assert!(
            !text.contains("s3cret") && !text.contains("\"tok\""),
            "{text}"
        );
        assert!(text.contains("${BKN_LAB_SERVER_X_API_KEY}") && text.contains("${KEEP}"));
        assert_eq!(needed, ["BKN_LAB_SERVER_X_API_KEY", "BKN_LAB_SERVER_TOKEN"]);
        // And they read back as the same servers (with the references).
        let back = parse_servers(&serde_json::json!({"mcpServers": out}).to_string()).unwrap();
        assert_eq!(back[0].name, "lab server");
    }

    #[test]
    fn expansion() {
        let lookup = |n: &str| (n == "T").then(|| "abc".to_owned());
        assert_eq!(expand("Bearer ${T}", &lookup).unwrap(), "Bearer abc");
        assert!(expand("${NOPE}", &lookup).unwrap_err().contains("NOPE"));
        assert_eq!(
            ServerSpec::from_command_line("'my srv' --a \"b c\"")
                .unwrap()
                .location(),
            "'my srv' --a 'b c'"
        );
    }
}

/// Gives servers that share a name (two `--stdio` lines of the same program) distinct ones,
/// "name", "name-2", "name-3", so that tabs, the sidebar and session files tell them apart.
pub fn make_names_unique(specs: &mut [ServerSpec]) {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for spec in specs.iter_mut() {
        let mut name = spec.name.clone();
        let mut n = 2;
        while seen.contains(&name) {
            name = format!("{}-{n}", spec.name);
            n += 1;
        }
        seen.insert(name.clone());
        spec.name = name;
    }
}

#[cfg(test)]
mod unique_name_tests {
    use super::*;

    #[test]
    fn repeated_names_get_numbers() {
        let mut specs = vec![
            ServerSpec::from_command_line("srv --a").unwrap(),
            ServerSpec::from_command_line("srv --b").unwrap(),
            ServerSpec::from_command_line("other").unwrap(),
            ServerSpec::from_command_line("srv --c").unwrap(),
        ];
        make_names_unique(&mut specs);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["srv", "srv-2", "other", "srv-3"]);
    }
}
