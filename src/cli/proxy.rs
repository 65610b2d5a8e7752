//! `bkn-explorer proxy [--record FILE] -- CMD ARGS…` (stdio) and `proxy --http [ADDR:]PORT
//! --upstream URL` (Streamable HTTP): stand in for the server between an agent and the real
//! one, passing everything unchanged and recording the BKN dialogues.
//! The agent's configuration names `bkn-explorer proxy -- my-server --flag` where it named
//! `my-server --flag`.

use crate::client::spec::ServerSpec;
use crate::proxy::observer::{Observer, Recording};
use crate::session::journal::Writer;
use crate::settings::Settings;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to record the dialogues (a session journal; default: the data directory's
    /// recordings/, named with the date and time). An existing file is never written over.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Do not record (check only).
    #[arg(long, conflicts_with = "record")]
    no_record: bool,
    /// The recording's name (default: the server's command).
    #[arg(long)]
    name: Option<String>,
    /// Messages longer than this (MiB) pass on unchecked, and the recording says so.
    #[arg(long, default_value_t = 64, value_name = "MIB", value_parser = super::at_least_one())]
    max_message_mb: usize,
    /// With --http: refuse request bodies longer than this (MiB; 413), as the reference
    /// servers do by default. Bodies pass on as they come, never held whole.
    #[arg(long, default_value_t = 4, value_name = "MIB", requires = "http", value_parser = super::at_least_one())]
    max_body_mb: usize,
    /// Proxy Streamable HTTP instead of stdio: listen on [ADDRESS:]PORT (loopback unless an
    /// address is given; path /mcp) and pass everything to --upstream.
    #[arg(
        long,
        value_name = "[ADDRESS:]PORT",
        requires = "upstream",
        conflicts_with = "command"
    )]
    http: Option<String>,
    /// Close a dialogue in the recording as idle after no exchange for this long (e.g. 90s,
    /// 30m; plain numbers are seconds): one kept by DialogID (2026-07-28) or in an HTTP
    /// session, which the server forgets after its own idle expiry. The default is the
    /// reference servers' (`serve --dialogue-idle`); set the server's own where it differs.
    #[arg(
        long,
        default_value = "30m",
        value_name = "DURATION",
        value_parser = crate::duration::positive
    )]
    dialogue_idle: std::time::Duration,
    /// The real server's MCP endpoint (with --http).
    #[arg(long, value_name = "URL", requires = "http")]
    upstream: Option<String>,
    /// With --http: ask the agent for this bearer token (taken off before the request goes on).
    #[arg(
        long,
        env = "BKN_PROXY_TOKEN",
        hide_env_values = true,
        requires = "http"
    )]
    token: Option<String>,
    /// The real server's command line (stdio).
    #[arg(last = true, required_unless_present = "http", value_name = "CMD ARGS")]
    command: Vec<String>,
}

pub fn run(args: Args) -> u8 {
    let line = match &args.upstream {
        Some(url) => crate::client::spec::shown_url(url),
        None => shlex::try_join(args.command.iter().map(String::as_str))
            .unwrap_or_else(|_| args.command.join(" ")),
    };
    let server = match &args.upstream {
        Some(url) => ServerSpec::from_url(url),
        None => ServerSpec::from_command_line(&line),
    };
    let server = match server {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let journal = journal(&args, &line, &server);
    let record_path = journal.as_ref().map(|w| w.path().to_owned());
    let recording = Recording::new(journal);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(crate::protocol::json::DEEP_STACK)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let limit = args.max_message_mb.max(1).saturating_mul(1024 * 1024);
    if let (Some(listen), Some(upstream)) = (&args.http, &args.upstream) {
        let address = match super::serve::http_address(listen, None) {
            Ok(a) => a,
            Err(e) => return fail(format!("{e:#}")),
        };
        let settings = crate::proxy::http::Settings {
            listen: address,
            upstream: upstream.clone(),
            token: args.token.clone(),
            recording,
            record: record_path,
            limit,
            max_body: args.max_body_mb.max(1).saturating_mul(1024 * 1024),
            dialogue_idle: args.dialogue_idle,
        };
        return proxy_http(runtime, settings);
    }
    let observer = Observer::sharing(&server.name, recording);
    let settings = crate::proxy::stdio::Settings {
        limit,
        idle: args.dialogue_idle,
        stop: stop_signal(),
    };
    let code = runtime.block_on(crate::proxy::stdio::run(&args.command, observer, settings));
    // Standard input may still be read by a blocking thread: do not wait for it.
    runtime.shutdown_background();
    code
}

fn fail(why: impl std::fmt::Display) -> u8 {
    eprintln!("bkn-explorer proxy: {why}");
    super::exit::FAILURE
}

/// Where the traffic is recorded (--record, else the data directory's recordings). Recording
/// is a help, never a condition: without it the traffic still passes, and that is said.
fn journal(args: &Args, line: &str, server: &ServerSpec) -> Option<Writer> {
    if args.no_record {
        return None;
    }
    let Some(path) = args.record.clone().or_else(default_record) else {
        eprintln!(
            "bkn-explorer proxy: no data directory to record in (set BKN_EXPLORER_DATA_DIR or \
             give --record); the traffic passes unrecorded"
        );
        return None;
    };
    match Writer::create(&path, Some(args.name.as_deref().unwrap_or(line)), server) {
        Ok(w) => Some(w),
        Err(e) => {
            eprintln!("bkn-explorer proxy: {e}; the traffic passes unrecorded");
            None
        }
    }
}

/// The HTTP proxy, until a signal ends it.
fn proxy_http(runtime: tokio::runtime::Runtime, settings: crate::proxy::http::Settings) -> u8 {
    let upstream_shown = crate::client::spec::shown_url(&settings.upstream);
    let result = runtime.block_on(crate::proxy::http::run(
        settings,
        |bound| {
            // The one line a script (or a test) waits for.
            eprintln!(
                "bkn-explorer: proxy listening on http://{bound}/mcp, passing to {upstream_shown}"
            );
        },
        stop_signal(),
    ));
    runtime.shutdown_background();
    match result {
        Ok(()) => super::exit::OK,
        Err(e) => fail(e),
    }
}

/// The signal that stops the proxy, by name: SIGTERM, SIGINT (Ctrl-C) or SIGHUP (its
/// terminal closed). Each is caught, so that the recording is ended (a watcher then knows its
/// dialogues are no longer followed); only SIGKILL cuts it, which the recording's lock says.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hangup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
                _ = hangup.recv() => "SIGHUP",
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    "SIGINT"
}

/// `<data dir>/recordings/proxy-2026-12-01T02-03-04-12345.jsonl`.
fn default_record() -> Option<PathBuf> {
    let dir = Settings::current().0.data_dir()?.join("recordings");
    std::fs::create_dir_all(&dir).ok()?;
    let now = time::OffsetDateTime::now_utc();
    let stamp = format!(
        "{:04}-{:02}-{:02}T{:02}-{:02}-{:02}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    );
    Some(dir.join(format!("proxy-{stamp}-{}.jsonl", std::process::id())))
}
