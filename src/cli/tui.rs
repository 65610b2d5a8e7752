//! `bkn-explorer` (and `bkn-explorer tui …`): the explorer. Without servers it starts the
//! reference Domain Access and User State Refinement servers and connects to both.

use super::exit;
use super::target;
use crate::client::connection::ConnectOptions;
use crate::client::defaults::Overrides;
use crate::client::spec::{HttpSpec, ServerSpec, TransportSpec};
use crate::protocol::Interface;
use crate::tui::run::Launch;
use std::path::PathBuf;
use std::time::Duration;

/// What `--watch` alone stands for: the newest recording (clap takes no empty path).
const NEWEST: &str = "<newest>";

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Connect to a stdio MCP server started with this command line (repeatable).
    #[arg(long, value_name = "\"CMD ARGS\"")]
    stdio: Vec<String>,
    /// Connect to a Streamable HTTP endpoint (repeatable).
    #[arg(long, value_name = "URL")]
    url: Vec<String>,
    /// A bearer token for the --url servers (or set BKN_TOKEN).
    #[arg(long, env = "BKN_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Servers from a file (mcpServers, VS Code's servers, .mcp.json); alone, every server of
    /// ./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json and the configuration's servers.json.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = target::FOUND)]
    servers: Option<PathBuf>,
    /// Open a session file (its dialogues shown as recorded).
    #[arg(long, value_name = "FILE")]
    session: Option<PathBuf>,
    /// Watch a proxy's recording live: its file, or an HTTP proxy's address
    /// (http://127.0.0.1:PORT); alone, the newest recording in the data directory's
    /// recordings/. Its dialogues appear as read-only tabs marked live, turn by turn; `O`
    /// takes one over.
    #[arg(long, value_name = "FILE|URL", num_args = 0..=1, default_missing_value = NEWEST)]
    watch: Option<PathBuf>,
    /// The colour theme: dark, light, high-contrast, or a user theme (default: the one used
    /// last, else dark).
    #[arg(long)]
    theme: Option<String>,
    /// How long to wait for each answer (progress extends it), e.g. 30s, 2m, 500ms; plain
    /// numbers are seconds [default: config.toml's timeout, else 30s].
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::positive)]
    timeout: Option<Duration>,
    /// The largest message taken from a server, in MiB.
    #[arg(long, default_value_t = 64, value_name = "MIB", value_parser = super::at_least_one())]
    max_message_mb: usize,
    /// The MCP generation to speak: auto (the newest both sides speak), 2026-07-28 or
    /// 2025-11-25 [default: a server's "protocol" in its servers file, else config.toml's,
    /// else auto].
    #[arg(long, value_name = "auto|2026-07-28|2025-11-25")]
    protocol: Option<crate::client::generation::ProtocolChoice>,
    /// The MInstance of new Requests (default: what each server publishes).
    #[arg(long, value_name = "ID")]
    m_instance: Option<String>,
    /// The UEnvironment of new Requests.
    #[arg(long, value_name = "ID")]
    u_environment: Option<String>,
    /// The SessionID (the A-User session) of new Requests.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    #[command(flatten)]
    oauth: target::OAuthArgs,
}

pub fn run(args: Args) -> u8 {
    // A session that is not there is a bad argument, said before the screen starts (it would
    // otherwise open an empty explorer with no server).
    if let Some(path) = &args.session
        && !path.is_file()
    {
        let why = if path.exists() {
            "is not a file"
        } else {
            "does not exist"
        };
        return fail(&format!("--session {}: {why}", path.display()));
    }
    let (settings, mut problems) = crate::settings::Settings::current();
    let mut servers = match named_servers(&args, &settings, &mut problems) {
        Ok(servers) => servers,
        Err(e) => return fail(&e),
    };
    let names_a_server = !servers.is_empty();
    // What "add server" offers: the servers files found (their mistakes are said then).
    let (found, _) = target::discovered_servers(&settings);
    // No server named and no session: the settings' servers file, else the reference servers.
    if !names_a_server
        && args.session.is_none()
        && let Some(file) = settings.servers_file()
    {
        match target::read_servers(&file) {
            Ok(list) => servers.extend(list),
            Err(e) => problems.push(format!("{e} (config.toml's servers)")),
        }
    }
    crate::client::spec::make_names_unique(&mut servers);
    if servers.is_empty() && args.session.is_none() && args.watch.is_none() {
        servers = vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ];
    }
    let launch = Launch {
        servers,
        session: args.session,
        // `--watch` alone: the newest recording.
        watch: args.watch.map(|p| (p.as_os_str() != NEWEST).then_some(p)),
        token: args.token.clone(),
        theme: args.theme,
        connect: ConnectOptions {
            timeout: settings.timeout_or(args.timeout),
            max_message_bytes: args.max_message_mb.max(1).saturating_mul(1024 * 1024),
            // The person at the explorer sees the URL when no browser opens.
            oauth: crate::client::oauth::OAuthOptions {
                someone_watches: true,
                ..args.oauth.options()
            },
            protocol: args.protocol,
            protocol_default: settings.protocol(),
            ..ConnectOptions::default()
        },
        overrides: Overrides {
            m_instance: args.m_instance,
            u_environment: args.u_environment,
            session_id: args.session_id,
            how: "on the command line".into(),
        },
        data_dir: settings.data_dir(),
        config_dir: crate::settings::config_dir(),
        problems,
        sessions_dir: PathBuf::from("sessions"),
        found,
    };
    crate::tui::run::run(launch)
}

/// The servers the command line names: `--stdio`, `--url` (with `--token`), and those of
/// `--servers` (a file, or the files found when it has none; their mistakes go to
/// `problems`). An error is one that cannot be read.
fn named_servers(
    args: &Args,
    settings: &crate::settings::Settings,
    problems: &mut Vec<String>,
) -> Result<Vec<ServerSpec>, String> {
    let mut servers: Vec<ServerSpec> = Vec::new();
    for line in &args.stdio {
        servers.push(ServerSpec::from_command_line(line)?);
    }
    for url in &args.url {
        let mut s = ServerSpec::from_url(url)?;
        if let TransportSpec::Http(HttpSpec { token, .. }) = &mut s.transport {
            *token = args.token.clone();
        }
        servers.push(s);
    }
    match &args.servers {
        Some(path) if target::is_found(path) => {
            let (found, mistakes) = target::discovered_servers(settings);
            if found.is_empty() && mistakes.is_empty() {
                return Err(format!(
                    "--servers without a file found none in {}",
                    target::discovery_places(settings)
                ));
            }
            servers.extend(found);
            problems.extend(mistakes);
        }
        Some(path) => servers.extend(target::read_servers(path)?),
        None => {}
    }
    Ok(servers)
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer: {message}");
    exit::FAILURE
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// `--watch` alone is the newest recording (the README's word), with or without `tui`.
    #[test]
    fn watch_alone_is_the_newest_recording() {
        for argv in [
            &["bkn-explorer", "--watch"][..],
            &["bkn-explorer", "tui", "--watch"][..],
        ] {
            let cli = crate::cli::Cli::try_parse_from(argv).expect("--watch alone parses");
            let args = match cli.command {
                Some(crate::cli::Command::Tui(a)) => a,
                _ => cli.explorer,
            };
            assert_eq!(
                args.watch.as_deref(),
                Some(std::path::Path::new(super::NEWEST))
            );
        }
    }
}
