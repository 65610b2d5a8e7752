//! `bkn-explorer load SCENARIO --concurrency N --repeat M`: N dialogues at once, each going M
//! times through the scenario, against one server (stdio: N server processes; HTTP: N
//! sessions). A live progress line on standard error; the figures at the end (`--format
//! json` for scripts), with the CPU the load client used beside them.
//!
//! `--export locust` writes the scenarios as a Locust project instead (its workers play them
//! on many machines); `--report DIR` sums up such a run (`scenario::locust`).
//!
//! Exit 0 when every turn was answered and conformed; 1 when some did not or expectations
//! failed; 2 when the scenario cannot be read or no dialogue could be opened.

use super::exit;
use super::target::{self, Targets};
use crate::client::spec::ServerSpec;
use crate::scenario;
use clap::ValueEnum;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What `--export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Export {
    /// A Locust project: locustfile.py, what it imports, requirements.txt.
    Locust,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The scenario to run (YAML or JSON); several with --export.
    #[arg(required_unless_present = "report")]
    scenarios: Vec<PathBuf>,
    /// Write the scenarios as a project for this load tool instead of running them: Locust
    /// (each user plays a scenario's dialogue; --url is its default --host).
    #[arg(long, value_enum, conflicts_with = "report")]
    export: Option<Export>,
    /// Where --export writes the project [default: locust].
    #[arg(long, short, value_name = "DIR", requires = "export")]
    output: Option<PathBuf>,
    /// Let --export replace the files of an earlier export.
    #[arg(long, requires = "export")]
    force: bool,
    /// Sum up a Locust run of exported scenarios: DIR/recordings/ and the CSV files of
    /// `locust --csv DIR/stats`, judged and merged.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Dialogues at once.
    #[arg(long, short, default_value_t = 8)]
    concurrency: usize,
    /// Times each dialogue goes through the scenario.
    #[arg(long, short, default_value_t = 10)]
    repeat: usize,
    /// Each time through the scenario in a new MCP session (for scenarios whose answers
    /// depend on the dialogue's history); by default a dialogue goes on.
    #[arg(long)]
    fresh: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    targets: Targets,
}

pub fn run(args: Args) -> u8 {
    if let Some(dir) = &args.report {
        return report(dir, args.format);
    }
    let Some(mut scenarios) = super::read_scenarios(&args.scenarios) else {
        return exit::FAILURE;
    };
    if args.export.is_some() {
        return export(&args, &scenarios);
    }
    if scenarios.len() > 1 {
        return fail("load runs one scenario (several go to --export locust)");
    }
    let scenario = scenarios.remove(0);
    let spec = match args.targets.resolve() {
        Ok(list) if list.len() > 1 => {
            return fail("load runs against one server; name one");
        }
        Ok(mut list) if list.len() == 1 => list.remove(0),
        Ok(_) => match target::own_server(&scenario) {
            Ok(s) => s,
            Err(e) => return fail(&e),
        },
        Err(e) => return fail(&e),
    };
    let runtime = match load_runtime() {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let report = runtime.block_on(load(&args, scenario, spec));
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        Format::Text => print_text(&report),
    }
    if report.turns == 0 {
        exit::FAILURE
    } else if report.errors + report.timeouts + report.nonconformant + report.expectations_failed
        > 0
        || !report.not_opened.is_empty()
    {
        exit::NONCONFORMANT
    } else {
        exit::OK
    }
}

/// Many dialogues at once, on half the cores: the servers under load need the rest (they
/// run on the same machine in most runs, and N stdio servers always do). More workers than
/// that only wake each other: on 2 vCPUs, one worker made 7,900-9,600 turns/s over HTTP with
/// a third less CPU, where two made 6,200-6,700.
fn load_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let workers = std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1));
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
}

/// The scenario run by many dialogues at once on `spec`, its progress shown, until done or
/// Ctrl-C.
async fn load(
    args: &Args,
    scenario: scenario::Scenario,
    spec: ServerSpec,
) -> scenario::load::LoadReport {
    let done = Arc::new(AtomicU64::new(0));
    let total = (args.concurrency.max(1) * args.repeat * scenario.steps.len()) as u64;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let watcher = {
        let done = done.clone();
        tokio::spawn(async move { progress(&done, total).await })
    };
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let report = scenario::load::run(
        Arc::new(scenario),
        spec,
        args.targets.connect_options(),
        args.targets.overrides(),
        args.concurrency,
        args.repeat,
        args.fresh,
        done,
        cancel,
    )
    .await;
    watcher.abort();
    report
}

/// `--export locust`: the project, or every reason it cannot be made, before anything is
/// written.
fn export(args: &Args, scenarios: &[scenario::Scenario]) -> u8 {
    let servers = match export_servers(args, scenarios) {
        Ok(servers) => servers,
        Err(e) => return fail(&e),
    };
    let (url, headers) = match locust_target(&servers, scenarios) {
        Ok(target) => target,
        Err(errors) => return nothing_written(errors),
    };
    let options = scenario::locust::Export {
        url,
        headers,
        protocol: args.targets.protocol.unwrap_or_default(),
        fresh: args.fresh,
        timeout_s: args.targets.connect_options().timeout.as_secs_f64(),
        overrides: args.targets.overrides(),
    };
    let files = match scenario::locust::project(scenarios, &options) {
        Ok(files) => files,
        Err(errors) => return nothing_written(errors),
    };
    let dir = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("locust"));
    match scenario::locust::write(&dir, &files, args.force) {
        Ok(written) => {
            println!(
                "wrote a Locust project for {} scenario{} against {} ({}):",
                scenarios.len(),
                if scenarios.len() == 1 { "" } else { "s" },
                options.url,
                scenario::locust::made_by()
            );
            for p in written {
                println!("  {}", p.display());
            }
            println!(
                "run it: cd {} && pip install -r requirements.txt && locust --headless --processes 2 -u {} -r {} --iterations {} --csv stats",
                dir.display(),
                args.concurrency,
                args.concurrency,
                args.repeat
            );
            println!("then:   bkn-explorer load --report {}", dir.display());
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

/// The export's server: the one named, else the scenarios' own (each with whose it is).
fn export_servers(
    args: &Args,
    scenarios: &[scenario::Scenario],
) -> Result<Vec<(String, ServerSpec)>, String> {
    let named = args.targets.resolve()?;
    if named.len() > 1 {
        return Err("--export makes a project for one server; name one".into());
    }
    match named.into_iter().next() {
        Some(spec) => Ok(vec![("the server named".to_owned(), spec)]),
        None => scenarios
            .iter()
            .map(|s| Ok((s.path.display().to_string(), target::own_server(s)?)))
            .collect(),
    }
}

/// Headers as (name, value).
type Headers = Vec<(String, String)>;

/// The URL Locust's workers reach (the same for every scenario: they speak Streamable HTTP
/// only) and its headers but a token; or every reason there is none.
fn locust_target(
    servers: &[(String, ServerSpec)],
    scenarios: &[scenario::Scenario],
) -> Result<(String, Headers), Vec<String>> {
    use crate::client::spec::TransportSpec;
    let mut errors = Vec::new();
    let mut url: Option<String> = None;
    let mut headers = Vec::new();
    for (i, (whose, spec)) in servers.iter().enumerate() {
        let interface = scenarios
            .get(i)
            .or(scenarios.first())
            .map_or("dac", |s| s.interface.code());
        match &spec.transport {
            TransportSpec::Http(http) => {
                if url.as_ref().is_some_and(|u| *u != http.url) {
                    errors.push(format!(
                        "{whose}: its server {} is not the others' ({}): name one with --url",
                        http.url,
                        url.as_deref().unwrap_or_default()
                    ));
                }
                url.get_or_insert(http.url.clone());
                headers = http
                    .headers
                    .iter()
                    .filter(|(name, _)| !name.eq_ignore_ascii_case("authorization"))
                    .map(|(n, v)| (n.clone(), v.clone()))
                    .collect();
            }
            _ => errors.push(format!(
                "{whose}: its server ({}, {}) is not one Locust can drive: Locust's workers speak MCP over Streamable HTTP only; name an HTTP server with --url (e.g. bkn-explorer serve {} --http 8080)",
                spec.kind(),
                spec.location(),
                interface
            )),
        }
    }
    match url.filter(|_| errors.is_empty()) {
        Some(url) => Ok((url, headers)),
        None => Err(errors),
    }
}

/// Why the export wrote nothing.
fn nothing_written(errors: Vec<String>) -> u8 {
    for e in errors {
        eprintln!("bkn-explorer load: {e}");
    }
    eprintln!("bkn-explorer load: nothing was written");
    exit::FAILURE
}

/// `--report DIR`: Locust's statistics and the recordings, judged and merged.
fn report(dir: &std::path::Path, format: Format) -> u8 {
    let report = match scenario::locust::report::read(dir) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        Format::Text => print!("{}", scenario::locust::report::text(&report)),
    }
    if !report.unreadable.is_empty() {
        exit::FAILURE
    } else if report.passed() {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer load: {message}");
    exit::FAILURE
}

/// The live line: turns done, and the rate over the last second.
async fn progress(done: &AtomicU64, total: u64) {
    let tty = std::io::stderr().is_terminal();
    let every = if tty {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(5)
    };
    let started = Instant::now();
    loop {
        tokio::time::sleep(every).await;
        let n = done.load(Ordering::Relaxed);
        let rate = n as f64 / started.elapsed().as_secs_f64().max(1e-9);
        let text = format!("load: {n} of {total} turns, {rate:.0} turns/s");
        let mut err = std::io::stderr().lock();
        if tty {
            let _ = write!(err, "\r\x1b[2K{text}");
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }
}

fn print_text(r: &scenario::load::LoadReport) {
    println!(
        "load: {} on {}, {} dialogue{} × {} time{} through it",
        r.scenario,
        r.server,
        r.concurrency,
        if r.concurrency == 1 { "" } else { "s" },
        r.repeat,
        if r.repeat == 1 { "" } else { "s" }
    );
    println!(
        "  {} turns in {:.2} s: {:.0} turns/s",
        r.turns, r.seconds, r.turns_per_s
    );
    println!(
        "  {:<28} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "latency (ms)", "p50", "p90", "p99", "max", "turns"
    );
    println!(
        "  {:<28} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8}",
        "all", r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms, r.turns
    );
    for (kind, l) in &r.per_kind {
        println!(
            "  {:<28} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8}",
            kind, l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms, l.turns
        );
    }
    println!(
        "  errors {}, timeouts {}, nonconformant {}, expectations failed {}",
        r.errors, r.timeouts, r.nonconformant, r.expectations_failed
    );
    for why in &r.not_opened {
        println!("  a dialogue could not be opened: {why}");
    }
    let share = if r.seconds > 0.0 {
        r.client_cpu_s / r.seconds * 100.0
    } else {
        0.0
    };
    println!(
        "  CPU: the load client {:.2} s ({share:.0}% of one core){}",
        r.client_cpu_s,
        if r.servers_cpu_s > 0.0 {
            format!(", the servers it started {:.2} s", r.servers_cpu_s)
        } else {
            String::new()
        }
    );
}
