//! `bkn-explorer` (and `bkn-explorer tui …`): the explorer. Without servers it starts the
//! reference Domain Access and User State Refinement servers and connects to both.

use super::exit;
use crate::client::connection::ConnectOptions;
use crate::client::defaults::Overrides;
use crate::client::spec::{HttpSpec, ServerSpec, TransportSpec};
use crate::protocol::Interface;
use crate::tui::run::Launch;
use std::path::PathBuf;
use std::time::Duration;

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
    /// Servers from a JSON file in the mcpServers shape.
    #[arg(long, value_name = "FILE")]
    servers: Option<PathBuf>,
    /// Open a session file (its dialogues shown as recorded).
    #[arg(long, value_name = "FILE")]
    session: Option<PathBuf>,
    /// The colour theme: dark, light, high-contrast, or a user theme (default: the one used
    /// last, else dark).
    #[arg(long)]
    theme: Option<String>,
    /// Seconds to wait for each answer (progress extends it).
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    timeout: u64,
    /// The largest message taken from a server, in MiB.
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    max_message_mb: usize,
    /// The MInstance of new Requests (default: what each server publishes).
    #[arg(long, value_name = "ID")]
    m_instance: Option<String>,
    /// The UEnvironment of new Requests.
    #[arg(long, value_name = "ID")]
    u_environment: Option<String>,
    /// The SessionID (the A-User session) of new Requests.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
}

pub fn run(args: Args) -> u8 {
    let mut servers: Vec<ServerSpec> = Vec::new();
    for line in &args.stdio {
        match ServerSpec::from_command_line(line) {
            Ok(s) => servers.push(s),
            Err(e) => return fail(&e),
        }
    }
    for url in &args.url {
        match ServerSpec::from_url(url) {
            Ok(mut s) => {
                if let TransportSpec::Http(HttpSpec { token, .. }) = &mut s.transport {
                    *token = args.token.clone();
                }
                servers.push(s)
            }
            Err(e) => return fail(&e),
        }
    }
    if let Some(path) = &args.servers {
        match super::target::read_servers(path) {
            Ok(list) => servers.extend(list),
            Err(e) => return fail(&e),
        }
    }
    crate::client::spec::make_names_unique(&mut servers);
    if servers.is_empty() && args.session.is_none() {
        servers = vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ];
    }
    let launch = Launch {
        servers,
        session: args.session,
        theme: args.theme,
        connect: ConnectOptions {
            timeout: Duration::from_secs(args.timeout.max(1)),
            max_message_bytes: args.max_message_mb.max(1).saturating_mul(1024 * 1024),
            ..ConnectOptions::default()
        },
        overrides: Overrides {
            m_instance: args.m_instance,
            u_environment: args.u_environment,
            session_id: args.session_id,
            how: "on the command line".into(),
        },
        data_dir: crate::tui::persist::data_dir(),
        config_dir: crate::tui::run::config_dir(),
        sessions_dir: PathBuf::from("sessions"),
    };
    crate::tui::run::run(launch)
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer: {message}");
    exit::FAILURE
}
