//! The options every command that talks to a server shares: which server, and how patiently.

use crate::client::connection::ConnectOptions;
use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::Dialogue;
use crate::client::event::EventSink;
use crate::client::spec::{self, HttpSpec, ServerSpec, TransportSpec};
use crate::protocol::Interface;
use crate::settings::Settings;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::runtime::Runtime;

/// What `--servers` alone stands for: the files found in the usual places.
pub const FOUND: &str = "<found>";

/// Whether `--servers` was given without a file.
pub fn is_found(path: &Path) -> bool {
    path.as_os_str() == FOUND
}

/// How to sign in to an HTTP server that wants OAuth (MCP authorization). Sign-ins are kept
/// in the data directory, `oauth/`, readable by the user alone.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "OAuth (for --url servers that ask for it)")]
pub struct OAuthArgs {
    /// A client ID registered with the authorization server (default: dynamic client
    /// registration, or --client-metadata-url).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The secret of --client-id, if it has one (or set BKN_CLIENT_SECRET).
    #[arg(
        long,
        env = "BKN_CLIENT_SECRET",
        hide_env_values = true,
        requires = "client_id"
    )]
    pub client_secret: Option<String>,
    /// The HTTPS URL of this client's Client ID Metadata Document, used as the client ID by
    /// authorization servers that accept one.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// A scope to ask for (repeatable; default: what the server names).
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// The loopback port for the sign-in's redirect (default: any free port).
    #[arg(long, value_name = "PORT")]
    pub callback_port: Option<u16>,
    /// Never ask anyone to sign in (CI): use and refresh kept sign-ins only.
    #[arg(long)]
    pub no_sign_in: bool,
}

impl OAuthArgs {
    pub fn options(&self) -> crate::client::oauth::OAuthOptions {
        use crate::client::oauth::{OAuthOptions, SignInMode};
        OAuthOptions {
            data_dir: Settings::current().0.data_dir(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            client_metadata_url: self.client_metadata_url.clone(),
            scopes: self.scopes.clone(),
            callback_port: self.callback_port,
            sign_in: if self.no_sign_in {
                SignInMode::Never
            } else {
                SignInMode::Interactive
            },
            someone_watches: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServerArgs {
    /// Start this command line as a stdio MCP server, e.g. --stdio "my-server --verbose".
    #[arg(long, value_name = "\"CMD ARGS\"", conflicts_with_all = ["url", "server", "embedded"])]
    pub stdio: Option<String>,
    /// Connect to this Streamable HTTP endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "embedded"])]
    pub url: Option<String>,
    /// An HTTP header for --url, "Name: value" (repeatable; ${VAR} is read from the
    /// environment).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// A bearer token for --url (or set BKN_TOKEN).
    #[arg(long, env = "BKN_TOKEN", hide_env_values = true, requires = "url")]
    pub token: Option<String>,
    /// A server by name from --servers FILE, else from the files found (see --servers).
    #[arg(long, value_name = "NAME", conflicts_with = "embedded")]
    pub server: Option<String>,
    /// A servers file (mcpServers, VS Code's servers, .mcp.json); alone, the files found:
    /// ./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json, then the configuration's
    /// servers.json and config.toml's servers.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = FOUND)]
    pub servers: Option<PathBuf>,
    /// This program's own reference server: dac or usr. The default when no server is named
    /// (tools then describes both; call uses the one whose tool it calls).
    #[arg(long, value_name = "dac|usr", value_parser = super::validate::parse_interface)]
    pub embedded: Option<Interface>,
    /// How long to wait for the handshake and for each answer (progress extends it), e.g.
    /// 30s, 2m, 500ms; plain numbers are seconds [default: config.toml's timeout, else 30s].
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::positive)]
    pub timeout: Option<Duration>,
    /// The largest message taken from a server, in MiB.
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    pub max_message_mb: usize,
    /// The MCP generation to speak: auto (the newest both sides speak: server/discover, else
    /// initialize), 2026-07-28 (stateless) or 2025-11-25 (sessions) [default: the server's
    /// "protocol" in its servers file, else config.toml's protocol, else auto].
    #[arg(long, value_name = "auto|2026-07-28|2025-11-25")]
    pub protocol: Option<crate::client::generation::ProtocolChoice>,
    /// Answers for what a server may ask (an elicitation, a sampling; over 2026-07-28 an
    /// input_required result): a JSON object keyed by the input request's name or the method
    /// (elicitation/create, sampling/createMessage), each value the result to give. Without,
    /// such a request is refused with an error that names what was asked.
    #[arg(long, value_name = "FILE", value_parser = crate::client::answers::Answers::from_arg)]
    pub answers: Option<std::sync::Arc<crate::client::answers::Answers>>,
    /// The MInstance of Requests that do not give one (default: what the server publishes in
    /// dac://domain or usr://users, else the reference domain's).
    #[arg(long, value_name = "ID")]
    pub m_instance: Option<String>,
    /// The UEnvironment of Requests that do not give one.
    #[arg(long, value_name = "ID")]
    pub u_environment: Option<String>,
    /// The SessionID (the A-User session) of Requests that do not give one.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

impl ServerArgs {
    /// The server named on the command line; without one, the reference server of
    /// `default` if it is known.
    pub fn resolve(&self, default: Option<Interface>) -> Result<ServerSpec, String> {
        if let Some(line) = &self.stdio {
            return ServerSpec::from_command_line(line);
        }
        if let Some(url) = &self.url {
            let mut spec = ServerSpec::from_url(url)?;
            if let TransportSpec::Http(HttpSpec { headers, token, .. }) = &mut spec.transport {
                for h in &self.headers {
                    let (name, value) = h
                        .split_once(':')
                        .ok_or_else(|| format!("--header \"{h}\": expected \"Name: value\""))?;
                    headers.insert(name.trim().to_owned(), value.trim().to_owned());
                }
                *token = self.token.clone();
            }
            return Ok(spec);
        }
        if let Some(name) = &self.server {
            return named_server(self.servers.as_deref(), name);
        }
        if let Some(path) = &self.servers {
            if is_found(path) {
                return Err("--servers without a file needs --server NAME (which of them?)".into());
            }
            // A file of one server means it; of several, the user says which.
            let servers = read_servers(path)?;
            return match servers.as_slice() {
                [one] => Ok(one.clone()),
                [] => Err(format!("{}: no servers in it", path.display())),
                many => Err(format!(
                    "{} has {} servers: say which with --server NAME ({})",
                    path.display(),
                    many.len(),
                    many.iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
        }
        match self.embedded.or(default) {
            Some(interface) => Ok(ServerSpec::embedded(interface)),
            None => Err("name a server: --stdio \"CMD\", --url URL, --server NAME --servers FILE, or --embedded dac|usr".into()),
        }
    }

    /// Whether the command line names a server (else the reference ones are meant).
    pub fn names_a_server(&self) -> bool {
        self.stdio.is_some()
            || self.url.is_some()
            || self.server.is_some()
            || self.servers.is_some()
            || self.embedded.is_some()
    }

    /// `--servers [FILE]` alone (no --server, no other server): every server of the file, or
    /// of the files found when none is given (for the commands that take them all, `tools`).
    pub fn every_server_of_the_file(&self) -> Option<Result<Vec<ServerSpec>, String>> {
        let path = self.servers.as_ref()?;
        if self.server.is_some()
            || self.stdio.is_some()
            || self.url.is_some()
            || self.embedded.is_some()
        {
            return None;
        }
        Some(every_server_of(path))
    }

    /// The defaults the user set on the command line.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            m_instance: self.m_instance.clone(),
            u_environment: self.u_environment.clone(),
            session_id: self.session_id.clone(),
            how: "on the command line".into(),
        }
    }

    pub fn connect_options(&self, events: EventSink) -> ConnectOptions {
        ConnectOptions {
            timeout: Settings::current().0.timeout_or(self.timeout),
            max_message_bytes: self.max_message_mb.max(1).saturating_mul(1024 * 1024),
            events,
            embedded_program: None,
            subscribe_logs: false,
            oauth: self.oauth.options(),
            in_process: None,
            share_cpu: false,
            http_client: None,
            protocol: self.protocol,
            protocol_default: Settings::current().0.protocol(),
            answers: self.answers.clone(),
            ask: None,
            task_notes: Some(stderr_task_notes()),
        }
    }

    /// The runtime of a headless command that holds one dialogue, and that dialogue with the
    /// server these options name.
    pub fn open_dialogue(&self, interface: Interface) -> Result<(Runtime, Dialogue), String> {
        self.open(interface, None)
    }

    /// The same for a one-shot command (`send`): the reference server, when it is the one
    /// meant, runs inside this process (one start, one compilation of the schemas).
    pub fn open_one_shot(&self, interface: Interface) -> Result<(Runtime, Dialogue), String> {
        self.open(interface, Some(super::serve::in_process()))
    }

    fn open(
        &self,
        interface: Interface,
        in_process: Option<crate::client::connection::InProcess>,
    ) -> Result<(Runtime, Dialogue), String> {
        let spec = self.resolve(Some(interface))?;
        // While the server starts, the checks it will need are compiled.
        crate::protocol::schema::warm_up_in_background(interface);
        let runtime = runtime()?;
        let mut options = self.connect_options(EventSink::none());
        options.in_process = in_process;
        // One dialogue, one turn at a time, on this current-thread runtime.
        options.share_cpu = true;
        let dialogue = runtime.block_on(Dialogue::connect(
            &spec,
            &options,
            interface,
            Chosen::built_in(),
            &self.overrides(),
        ))?;
        Ok((runtime, dialogue))
    }
}

/// A headless command's notes of the tasks it waits for (SEP-2663), on standard error as
/// each changes: the task, its status and its message.
pub fn stderr_task_notes() -> crate::client::task::TaskNotes {
    crate::client::task::TaskNotes(std::sync::Arc::new(|note| eprintln!("note: {note}")))
}

pub fn read_servers(path: &Path) -> Result<Vec<ServerSpec>, String> {
    spec::read_servers_file(&crate::settings::expand_home(path))
}

/// The servers of the files found without being named: the project's (`.mcp.json`,
/// `.vscode/mcp.json`, `.cursor/mcp.json`), the configuration's `servers.json`, and the file
/// config.toml names; with the mistakes of those that cannot be read.
/// Every server of a servers file, or of the files found (`--servers` without a file).
fn every_server_of(path: &Path) -> Result<Vec<ServerSpec>, String> {
    if !is_found(path) {
        return read_servers(path);
    }
    let settings = Settings::current().0;
    let (found, problems) = discovered_servers(&settings);
    if found.is_empty() {
        let mut message = format!("no servers found in {}", discovery_places(&settings));
        for p in problems {
            message.push_str(&format!("; {p}"));
        }
        Err(message)
    } else {
        Ok(found)
    }
}

pub fn discovered_servers(settings: &Settings) -> (Vec<ServerSpec>, Vec<String>) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let config = crate::settings::config_dir();
    let (mut servers, mut problems) = spec::discover::servers(&cwd, config.as_deref());
    if let Some(file) = settings.servers_file() {
        match read_servers(&file) {
            Ok(list) => {
                for s in list {
                    if !servers.iter().any(|t| t.name == s.name) {
                        servers.push(s);
                    }
                }
            }
            Err(e) => problems.push(format!("{e} (config.toml's servers)")),
        }
    }
    (servers, problems)
}

/// Where servers files are looked for, for messages.
pub fn discovery_places(settings: &Settings) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let config = crate::settings::config_dir();
    let mut places: Vec<String> = spec::discover::candidates(&cwd, config.as_deref())
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if let Some(f) = settings.servers_file() {
        places.push(f.display().to_string());
    }
    places.join(", ")
}

/// `--server NAME`: from the file named, else from those found.
fn named_server(file: Option<&Path>, name: &str) -> Result<ServerSpec, String> {
    let (servers, problems, place) = match file.filter(|f| !is_found(f)) {
        Some(path) => (read_servers(path)?, Vec::new(), path.display().to_string()),
        None => {
            let settings = Settings::current().0;
            let (found, problems) = discovered_servers(&settings);
            (found, problems, discovery_places(&settings))
        }
    };
    servers
        .iter()
        .find(|s| s.name == name)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
            let mut message = if names.is_empty() {
                format!("no server named {name}: no servers in {place}")
            } else {
                format!(
                    "no server named {name} in {place} (there are: {})",
                    names.join(", ")
                )
            };
            for p in problems {
                message.push_str(&format!("; {p}"));
            }
            message
        })
}

/// A runtime for a headless command: one thread is plenty, and starts fastest.
pub fn runtime() -> Result<Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &std::path::Path) -> Result<String, String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }
}

/// Servers given on the command line of a command that may run against several at once
/// (`test`, `load`): each option may be repeated.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Targets {
    /// Start this command line as a stdio MCP server (repeatable).
    #[arg(long, value_name = "\"CMD ARGS\"")]
    pub stdio: Vec<String>,
    /// A Streamable HTTP endpoint (repeatable).
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,
    /// An HTTP header for the --url servers, "Name: value" (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// A bearer token for the --url servers (or set BKN_TOKEN).
    #[arg(long, env = "BKN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A server by name from --servers FILE, else from the files found (repeatable).
    #[arg(long = "server", value_name = "NAME")]
    pub server: Vec<String>,
    /// A servers file (mcpServers, VS Code's servers, .mcp.json); alone, the files found.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = FOUND)]
    pub servers: Option<PathBuf>,
    /// This program's own reference server, dac or usr (repeatable).
    #[arg(long, value_name = "dac|usr", value_parser = super::validate::parse_interface)]
    pub embedded: Vec<Interface>,
    /// How long to wait for the handshake and for each answer, e.g. 30s, 2m, 500ms; plain
    /// numbers are seconds [default: config.toml's timeout, else 30s].
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::positive)]
    pub timeout: Option<Duration>,
    /// The largest message taken from a server, in MiB.
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    pub max_message_mb: usize,
    /// The MCP generation to speak: auto, 2026-07-28 or 2025-11-25 (see `send --help`).
    #[arg(long, value_name = "auto|2026-07-28|2025-11-25")]
    pub protocol: Option<crate::client::generation::ProtocolChoice>,
    /// Answers for what a server may ask (an elicitation, a sampling; over 2026-07-28 an
    /// input_required result): a JSON object keyed by the input request's name or the method
    /// (elicitation/create, sampling/createMessage), each value the result to give. Without,
    /// such a request is refused with an error that names what was asked.
    #[arg(long, value_name = "FILE", value_parser = crate::client::answers::Answers::from_arg)]
    pub answers: Option<std::sync::Arc<crate::client::answers::Answers>>,
    /// The MInstance of Requests (over the scenario's and what the server publishes).
    #[arg(long, value_name = "ID")]
    pub m_instance: Option<String>,
    /// The UEnvironment of Requests.
    #[arg(long, value_name = "ID")]
    pub u_environment: Option<String>,
    /// The SessionID of Requests.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    #[command(flatten)]
    pub oauth: OAuthArgs,
}

impl Targets {
    /// The servers named, in the order: --stdio, --url, --server, --embedded.
    pub fn resolve(&self) -> Result<Vec<ServerSpec>, String> {
        let mut out = Vec::new();
        // `--servers [FILE]` without --server: every server of the file, or of the files
        // found (it was ignored, and the scenario ran on its own server without a word).
        if self.server.is_empty()
            && let Some(path) = &self.servers
        {
            out.extend(every_server_of(path)?);
        }
        for line in &self.stdio {
            out.push(ServerSpec::from_command_line(line)?);
        }
        for url in &self.url {
            let args = ServerArgs {
                url: Some(url.clone()),
                headers: self.headers.clone(),
                token: self.token.clone(),
                ..ServerArgs::default()
            };
            out.push(args.resolve(None)?);
        }
        for name in &self.server {
            out.push(named_server(self.servers.as_deref(), name)?);
        }
        for i in &self.embedded {
            out.push(ServerSpec::embedded(*i));
        }
        spec::make_names_unique(&mut out);
        Ok(out)
    }

    pub fn overrides(&self) -> Overrides {
        Overrides {
            m_instance: self.m_instance.clone(),
            u_environment: self.u_environment.clone(),
            session_id: self.session_id.clone(),
            how: "on the command line".into(),
        }
    }

    pub fn connect_options(&self) -> ConnectOptions {
        ConnectOptions {
            timeout: Settings::current().0.timeout_or(self.timeout),
            max_message_bytes: self.max_message_mb.max(1).saturating_mul(1024 * 1024),
            events: EventSink::none(),
            embedded_program: None,
            subscribe_logs: false,
            oauth: self.oauth.options(),
            in_process: None,
            share_cpu: false,
            http_client: None,
            protocol: self.protocol,
            protocol_default: Settings::current().0.protocol(),
            answers: self.answers.clone(),
            // `test` and `load` show their own progress, one line a scenario or a run.
            ask: None,
            task_notes: None,
        }
    }
}

/// The server a scenario runs on when the command line names none: the one it names, else
/// the reference server of its interface.
pub fn own_server(s: &crate::scenario::Scenario) -> Result<ServerSpec, String> {
    match &s.server {
        Some(choice) => scenario_server(choice),
        None => Ok(ServerSpec::embedded(s.interface)),
    }
}

/// The server a scenario names for itself, when the command line names none.
pub fn scenario_server(choice: &crate::scenario::ServerChoice) -> Result<ServerSpec, String> {
    use crate::scenario::ServerChoice;
    match choice {
        ServerChoice::Embedded(i) => Ok(ServerSpec::embedded(*i)),
        ServerChoice::Stdio(line) => ServerSpec::from_command_line(line),
        ServerChoice::Url(url) => ServerSpec::from_url(url),
        ServerChoice::Named { name, servers } => read_servers(servers)?
            .into_iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| format!("{} has no server named {name}", servers.display())),
    }
}
