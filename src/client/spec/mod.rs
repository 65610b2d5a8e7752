//! Server definitions: how to reach an MCP server, read from and written to the files other
//! MCP tools keep them in (`file`), with `${…}` variables read when connecting (`vars`), and
//! found in the usual places (`discover`).
//!
//! `embedded` marks this program's own reference servers: they are started from the running
//! executable, whether or not `bkn-explorer` is on the PATH.

pub mod discover;
pub mod file;
pub mod vars;

pub use file::{SpecError, parse_servers, read_servers_file, secret_variable, write_servers};

use crate::protocol::Interface;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: TransportSpec,
    /// The file it was read from, if any: what `${workspaceFolder}` and `${input:…}` mean.
    pub origin: Option<Arc<Origin>>,
    /// Values the user gave for `${input:ID}`, by ID (never written to a file).
    pub answers: BTreeMap<String, String>,
    /// The MCP generation its entry asks for (`"protocol"`), if it names one.
    pub protocol: Option<crate::client::generation::ProtocolChoice>,
}

/// A servers file, as its servers' variables need it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// The file, absolute.
    pub file: PathBuf,
    /// `${workspaceFolder}`.
    pub workspace: PathBuf,
    /// The inputs it declares (VS Code's `inputs`).
    pub inputs: Vec<Input>,
}

/// An input a servers file declares: a value the user is asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    pub id: String,
    pub description: Option<String>,
    pub password: bool,
    pub default: Option<String>,
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
    /// A file of `NAME=value` lines added to `env` (VS Code's `envFile`).
    pub env_file: Option<String>,
    /// The working directory (variables allowed).
    pub cwd: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpSpec {
    pub url: String,
    pub headers: BTreeMap<String, String>,
    /// A bearer token (sent as `Authorization: Bearer …`).
    pub token: Option<String>,
    /// The file said `type: "sse"`: the legacy HTTP+SSE transport. The connection is tried as
    /// Streamable HTTP (servers often offer both); when that fails, the reason says so.
    pub legacy_sse: bool,
    /// How to sign in if it asks for OAuth (from the servers file; the command line's options
    /// fill what this leaves out).
    pub oauth: Option<OAuthSpec>,
}

/// A server's own OAuth client settings (values may use `${VAR}`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OAuthSpec {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub client_metadata_url: Option<String>,
    pub scopes: Vec<String>,
    pub callback_port: Option<u16>,
}

impl ServerSpec {
    /// A server of no file, with nothing given yet.
    pub fn new(name: impl Into<String>, transport: TransportSpec) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            transport,
            origin: None,
            answers: BTreeMap::new(),
            protocol: None,
        }
    }

    /// What `${…}` in this server's definition is read against.
    pub fn scope<'a>(&'a self, env: &'a dyn Fn(&str) -> Option<String>) -> vars::Scope<'a> {
        vars::Scope {
            server: &self.name,
            origin: self.origin.as_deref(),
            env,
            answers: &self.answers,
        }
    }

    /// The reference server of an interface, started from this executable.
    pub fn embedded(interface: Interface) -> ServerSpec {
        ServerSpec::new(
            match interface {
                Interface::Dac => "domain-access",
                Interface::Usr => "user-state",
            },
            TransportSpec::Embedded {
                interface,
                args: Vec::new(),
            },
        )
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
        Ok(ServerSpec::new(
            name,
            TransportSpec::Stdio(StdioSpec {
                command: command.clone(),
                args: args.to_vec(),
                ..StdioSpec::default()
            }),
        ))
    }

    /// `--url URL`.
    pub fn from_url(url: &str) -> Result<ServerSpec, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("--url {url}: expected an http:// or https:// URL"));
        }
        Ok(ServerSpec::new(
            host_of(url),
            TransportSpec::Http(HttpSpec {
                url: url.to_owned(),
                ..HttpSpec::default()
            }),
        ))
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
            TransportSpec::Http(h) => host_of(&h.url).to_owned(),
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

    /// The command line this server's definition would run on this machine, with the
    /// environment and folder it sets, when it runs one: a stdio command, or this program's
    /// own server with arguments (they may name files to read or write). None for an HTTP
    /// server and for a reference server without arguments, which run nothing from the
    /// definition. What a file names is run only with the user's consent.
    pub fn command_it_runs(&self) -> Option<String> {
        match &self.transport {
            TransportSpec::Http(_) => None,
            TransportSpec::Embedded { args, .. } if args.is_empty() => None,
            TransportSpec::Embedded { .. } => Some(self.location()),
            TransportSpec::Stdio(s) => {
                let mut line = String::new();
                if let Some(cwd) = &s.cwd {
                    line.push_str(&format!("(in {cwd}) "));
                }
                for (k, v) in &s.env {
                    line.push_str(&format!("{k}={} ", shlex::try_quote(v).unwrap_or_default()));
                }
                if let Some(file) = &s.env_file {
                    line.push_str(&format!("(env file {file}) "));
                }
                line.push_str(&self.location());
                Some(line)
            }
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

/// The host and port of a URL, the name a server reached by it is given: never the user and
/// password before them.
fn host_of(url: &str) -> &str {
    let authority = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', '?']).next())
        .unwrap_or(url);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

/// A URL as it may be shown or recorded: a password in it (`http://user:PW@host/…`) is never
/// written out, whatever else is.
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_owned(),
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
