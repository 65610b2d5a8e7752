//! `bkn-explorer serve dac|usr`: run a reference server over stdio (default) or HTTP.

use super::exit;
use crate::protocol::dac::Nature;
use crate::server::dac::DomainAccess;
use crate::server::dac::domain::Domain;
use crate::server::dac::sources::FailingSources;
use crate::server::mcp::Backend;
use crate::server::recorded::{Exchange, Match, Recorded};
use crate::server::transport::{self, HttpOptions};
use crate::server::usr::UserStateRefinement;
use crate::server::usr::users::Users;
use clap::ValueEnum;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which server: Domain Access (dac) or User State Refinement (usr). With
    /// --from-session, the recording's interface (needed only when it has both).
    #[arg(value_enum, required_unless_present = "from_session")]
    which: Option<Which>,
    /// Answer from a recording (a session file or a proxy's journal) instead of a model.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["domain", "users", "fail_sources"])]
    from_session: Option<PathBuf>,
    /// How a Request finds its recorded exchange: strict (the same Kind and content, the
    /// fields every message has not compared: MInstance, SessionID, QueryID, QueryTime,
    /// DialogID, TurnIndex, DataXMData …), kind (the next of the same Kind) or sequence (the
    /// next, whatever it asked).
    #[arg(long = "match", value_enum, default_value_t = Match::Strict, requires = "from_session")]
    matching: Match,
    /// Serve Streamable HTTP on [ADDRESS:]PORT (path /mcp) instead of stdio. The address must be
    /// loopback (the default, 127.0.0.1); use --bind for another. Port 0 picks a free one.
    #[arg(long, value_name = "[ADDRESS:]PORT")]
    http: Option<String>,
    /// Listen on this address instead of loopback (e.g. 0.0.0.0); consider --token.
    #[arg(long, value_name = "ADDRESS", requires = "http")]
    bind: Option<IpAddr>,
    /// Accept this Host name too (repeatable), e.g. the machine's name when using --bind.
    #[arg(long = "allowed-host", value_name = "NAME", requires = "http")]
    allowed_hosts: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every HTTP request.
    #[arg(
        long,
        env = "BKN_SERVER_TOKEN",
        requires = "http",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Largest HTTP request body accepted, in MiB.
    #[arg(long, default_value_t = 4, value_name = "MIB")]
    max_body_mb: usize,
    /// Forget a dialogue idle for this long (e.g. 90s, 30m, 500ms; plain numbers are
    /// seconds): an HTTP session (2025-11-25) ends, a dialogue kept by DialogID (2026-07-28)
    /// is dropped, and a later turn of it is refused with a tool error that says so.
    #[arg(
        long,
        alias = "session-idle",
        default_value = "30m",
        value_name = "DURATION",
        value_parser = crate::duration::positive
    )]
    dialogue_idle: Duration,
    /// Hold at most this many dialogues kept by DialogID, and as many HTTP sessions; past
    /// it a new one is refused with an error that says so (the ones held go on).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    max_dialogues: usize,
    /// HTTP: hold at most this many connections (fewer if `ulimit -n` cannot hold them:
    /// said in the log); past it a new one is answered 503 and closed. Every request's head
    /// must come whole within 10 s (a kept-alive connection waiting for its next request
    /// is closed then), and a connection is closed after 2 minutes without traffic.
    #[arg(long, default_value_t = 1024, value_name = "N", requires = "http")]
    max_connections: usize,
    /// Write logs to this file instead of standard error (never to standard output).
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Log level: error, warn, info, debug or trace.
    #[arg(long, default_value = "info")]
    log_level: String,
    /// dac: the domain model to answer from (JSON; see docs/domain.md). Default: the
    /// built-in public square.
    #[arg(long, value_name = "FILE")]
    domain: Option<PathBuf>,
    /// dac: make a knowledge source fail, e.g. rights-registry=transient (repeatable).
    #[arg(long = "fail-source", value_name = "NAME=NATURE", value_parser = parse_failure)]
    fail_sources: Vec<(String, Nature)>,
    /// usr: the Users and cues to refine with (JSON; see docs/refinement.md). Default: the
    /// built-in visitors of the public square.
    #[arg(long, value_name = "FILE")]
    users: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Which {
    Dac,
    Usr,
}

fn parse_failure(s: &str) -> Result<(String, Nature), String> {
    let (name, nature) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not NAME=transient or NAME=permanent"))?;
    let nature = Nature::parse(nature)
        .ok_or_else(|| format!("'{nature}' is not a failure nature: use transient or permanent"))?;
    Ok((name.to_owned(), nature))
}

pub fn run(args: Args) -> u8 {
    if let Err(e) = init_logging(&args) {
        eprintln!("bkn-explorer serve: {e}");
        return exit::FAILURE;
    }
    // One thread: over stdio one session is served, so that reading a Request, answering it
    // and writing the Response never hand over between threads (each hand-over is a wake-up
    // through the kernel). Over HTTP this thread only accepts connections; they are served
    // on a single-threaded runtime per core (`server::per_core`).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bkn-explorer serve: cannot start the runtime: {e}");
            return exit::FAILURE;
        }
    };
    // The checks and the tool's schemas are made on another core while the domain is read
    // and the client says hello.
    if let Some(path) = &args.from_session {
        let result = match recorded(path, args.which, args.matching) {
            Ok(backend) => {
                crate::protocol::schema::warm_up_in_background(backend.interface());
                runtime.block_on(serve(Arc::new(backend), &args))
            }
            Err(e) => Err(e),
        };
        return match result {
            Ok(()) => exit::OK,
            Err(e) => {
                eprintln!("bkn-explorer serve: {e:#}");
                exit::FAILURE
            }
        };
    }
    let which = args.which.unwrap_or(Which::Dac);
    crate::protocol::schema::warm_up_in_background(match which {
        Which::Dac => crate::protocol::Interface::Dac,
        Which::Usr => crate::protocol::Interface::Usr,
    });
    let result = match which {
        Which::Dac => match domain_access(&args) {
            Ok(backend) => runtime.block_on(serve(Arc::new(backend), &args)),
            Err(e) => Err(e),
        },
        Which::Usr => match user_state_refinement(&args) {
            Ok(backend) => runtime.block_on(serve(Arc::new(backend), &args)),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("bkn-explorer serve: {e:#}");
            exit::FAILURE
        }
    }
}

/// The server of a recording: its exchanges of one interface, in the order they happened.
/// The file is read turn by turn (`session::walk`): what is kept is each answered exchange's
/// compact text, for both interfaces until the file says which one is served.
fn recorded(
    path: &std::path::Path,
    which: Option<Which>,
    matching: Match,
) -> anyhow::Result<Recorded> {
    use crate::protocol::Interface;
    let wanted = which.map(|w| match w {
        Which::Dac => Interface::Dac,
        Which::Usr => Interface::Usr,
    });
    let read = Recording::read(path, wanted)?;
    if !read.notes.is_empty() {
        tracing::info!("the recording's notes: {}", read.notes.join("\n"));
    }
    let interface = served_interface(path, wanted, &read.interfaces)?;
    let exchanges = match interface {
        Interface::Dac => read.dac,
        Interface::Usr => read.usr,
    };
    if exchanges.is_empty() {
        anyhow::bail!(
            "{} has no answered {} exchange to answer from",
            path.display(),
            interface.name()
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tracing::info!(exchanges = exchanges.len(), "answering from {name}");
    // A proxy's journal says what the server offered: its tool's name and its resources.
    let tools: Vec<rmcp::model::Tool> = read
        .offered
        .tools
        .iter()
        .filter_map(|t| serde_json::from_value(t.clone()).ok())
        .collect();
    let tool = crate::client::connection::find_bkn_tools(&tools).remove(&interface);
    Ok(Recorded::new(interface, exchanges, matching, &name).offering(tool, read.offered.resources))
}

/// What a recording holds for a server made from it.
struct Recording {
    /// Each dialogue's interface, in order.
    interfaces: Vec<crate::protocol::Interface>,
    /// The answered exchanges of each interface (of the one wanted only, when it is known).
    dac: Vec<Exchange>,
    usr: Vec<Exchange>,
    /// The tools and resources a proxy's journal says the server offered.
    offered: crate::session::journal::Offered,
    /// The session's notes and the journal's.
    notes: Vec<String>,
}

impl Recording {
    fn read(
        path: &std::path::Path,
        wanted: Option<crate::protocol::Interface>,
    ) -> anyhow::Result<Recording> {
        use crate::client::turn::Reply;
        use crate::protocol::Interface;
        use crate::session::walk::{self, Item};
        let mut interfaces: Vec<Interface> = Vec::new();
        let (mut dac, mut usr) = (Vec::new(), Vec::new());
        let mut offered = crate::session::journal::Offered::default();
        let mut session_notes = None;
        let notes = walk::walk(path, &mut |item| {
            match item {
                Item::Start(s) => session_notes = s.notes,
                Item::Dialogue(_, d) => interfaces.push(d.interface),
                Item::Turn { dialogue, turn } => {
                    let interface = interfaces[dialogue];
                    if let Reply::Response(r) = &turn.reply
                        && wanted.is_none_or(|w| w == interface)
                    {
                        let exchange = Exchange::from_text(turn.request.text(), r.text());
                        match interface {
                            Interface::Dac => dac.push(exchange),
                            Interface::Usr => usr.push(exchange),
                        }
                    }
                }
                Item::Tools(t) => offered.tools = t,
                Item::Resource(uri, contents) => {
                    offered.resources.retain(|(u, _)| *u != uri);
                    offered.resources.push((uri, contents));
                }
            }
            std::ops::ControlFlow::Continue(())
        })
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(Recording {
            interfaces,
            dac,
            usr,
            offered,
            notes: session_notes.into_iter().chain(notes).collect(),
        })
    }
}

/// The interface served: the one asked for, else the recording's only one.
fn served_interface(
    path: &std::path::Path,
    wanted: Option<crate::protocol::Interface>,
    interfaces: &[crate::protocol::Interface],
) -> anyhow::Result<crate::protocol::Interface> {
    use crate::protocol::Interface;
    let present: Vec<Interface> = [Interface::Dac, Interface::Usr]
        .into_iter()
        .filter(|i| interfaces.contains(i))
        .collect();
    Ok(match (wanted, present.as_slice()) {
        (Some(w), _) => w,
        (None, [one]) => *one,
        (None, []) => anyhow::bail!("{} has no dialogue to answer from", path.display()),
        (None, _) => anyhow::bail!(
            "{} has dialogues of both interfaces: say which to serve (serve dac|usr --from-session FILE)",
            path.display()
        ),
    })
}

fn domain_access(args: &Args) -> anyhow::Result<DomainAccess> {
    if args.users.is_some() {
        anyhow::bail!("--users is an option of serve usr");
    }
    let domain = match &args.domain {
        None => Domain::default_domain(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("cannot read the domain file {}: {e}", path.display())
            })?;
            Domain::parse(&text, &path.display().to_string())?
        }
    };
    let mut failing = FailingSources::new();
    for (name, nature) in &args.fail_sources {
        if !domain.file.sources.iter().any(|s| &s.name == name) {
            let names: Vec<&str> = domain
                .file
                .sources
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            anyhow::bail!(
                "--fail-source {name}: the domain has no such source (it has {})",
                names.join(", ")
            );
        }
        failing.insert(name.clone(), *nature);
    }
    Ok(DomainAccess::new(domain, failing))
}

fn user_state_refinement(args: &Args) -> anyhow::Result<UserStateRefinement> {
    if args.domain.is_some() || !args.fail_sources.is_empty() {
        anyhow::bail!("--domain and --fail-source are options of serve dac");
    }
    let users = match &args.users {
        None => Users::default_users(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                anyhow::anyhow!("cannot read the users file {}: {e}", path.display())
            })?;
            Users::parse(&text, &path.display().to_string())?
        }
    };
    Ok(UserStateRefinement::new(users))
}

async fn serve<B: Backend>(backend: Arc<B>, args: &Args) -> anyhow::Result<()> {
    let Some(http) = &args.http else {
        tracing::info!(interface = %backend.interface(), "serving MCP on stdio");
        return transport::serve_stdio(backend, dialogue_limits(args)).await;
    };
    let options = HttpOptions {
        addr: http_address(http, args.bind)?,
        allowed_hosts: args.allowed_hosts.clone(),
        token: args.token.clone(),
        max_body_bytes: args.max_body_mb.max(1) * 1024 * 1024,
        dialogues: dialogue_limits(args),
        bounds: crate::server::per_core::Bounds {
            max_connections: args.max_connections.max(1),
            ..Default::default()
        },
    };
    let interface = backend.interface();
    let server = transport::serve_http(backend, options).await?;
    // The one line a script (or a test) waits for; standard output stays untouched.
    eprintln!(
        "bkn-explorer: {} ({}) listening on {}",
        interface.server_role(),
        interface.name(),
        server.url()
    );
    let stop = server.shutdown_token();
    tokio::spawn(async move {
        shutdown_signal().await;
        stop.cancel();
    });
    server.wait().await?;
    Ok(())
}

fn dialogue_limits(args: &Args) -> crate::server::dialogues::DialogueLimits {
    crate::server::dialogues::DialogueLimits {
        idle: args.dialogue_idle,
        max: args.max_dialogues.max(1),
    }
}

pub(super) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// `PORT` or `ADDRESS:PORT`; the address must be loopback unless --bind replaces it.
pub(super) fn http_address(spec: &str, bind: Option<IpAddr>) -> anyhow::Result<SocketAddr> {
    let (ip, port) = match spec.parse::<u16>() {
        Ok(port) => (IpAddr::from([127, 0, 0, 1]), port),
        Err(_) => {
            let addr: SocketAddr = spec.parse().map_err(|_| {
                anyhow::anyhow!("--http {spec}: expected PORT or ADDRESS:PORT, e.g. 127.0.0.1:8080")
            })?;
            (addr.ip(), addr.port())
        }
    };
    match bind {
        Some(bind) => Ok(SocketAddr::new(bind, port)),
        None if ip.is_loopback() => Ok(SocketAddr::new(ip, port)),
        None => anyhow::bail!(
            "--http {spec}: {ip} is not a loopback address; to serve beyond this machine say --bind {ip} (and consider --token)"
        ),
    }
}

fn init_logging(args: &Args) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(&args.log_level)
        .map_err(|e| anyhow::anyhow!("--log-level {}: {e}", args.log_level))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match &args.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("cannot open the log file {}: {e}", path.display()))?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).with_ansi(false).init(),
    }
    Ok(())
}

/// The reference servers run inside the client's process (`ConnectOptions::in_process`), over
/// an in-process pipe: what `send` uses, so that a one-shot command starts one program and
/// compiles the schemas once.
pub(super) fn in_process() -> crate::client::connection::InProcess {
    crate::client::connection::InProcess(Arc::new(|interface| {
        // Room for the largest reference Response several times over: neither side waits on
        // the other while writing one message.
        let (client_end, server_end) = tokio::io::duplex(1024 * 1024);
        let (reads, writes) = tokio::io::split(server_end);
        let serving = match interface {
            crate::protocol::Interface::Dac => {
                let backend = DomainAccess::new(Domain::default_domain(), FailingSources::new());
                tokio::spawn(transport::serve_lines(
                    Arc::new(backend),
                    reads,
                    writes,
                    Default::default(),
                ))
            }
            crate::protocol::Interface::Usr => {
                let backend = UserStateRefinement::new(Users::default_users());
                tokio::spawn(transport::serve_lines(
                    Arc::new(backend),
                    reads,
                    writes,
                    Default::default(),
                ))
            }
        };
        // The session ends when the client closes its end; a failure is the client's to
        // see (the pipe closes), and is logged for whoever reads the log.
        tokio::spawn(async move {
            if let Ok(Err(e)) = serving.await {
                tracing::warn!("the in-process reference server ended: {e:#}");
            }
        });
        let (client_reads, client_writes) = tokio::io::split(client_end);
        Ok((
            Box::new(client_reads) as crate::client::stdio::ServerOutput,
            Box::new(client_writes) as crate::client::stdio::ServerInput,
        ))
    }))
}
