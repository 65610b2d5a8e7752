//! `bkn-explorer test SCENARIO...`: dialogue tests as code (docs/tests.md). Every scenario is
//! read and checked first (nothing is sent if one has a mistake); then each runs on each
//! server, with a report of every failing expectation, `--junit` for CI, `--compare` to set
//! servers side by side, and `--from-session` to make a scenario from a recording.
//!
//! Exit 0 when every expectation holds (and, with --compare, the servers agree); 1 when one
//! fails or they differ; 2 when a scenario cannot be read or a server cannot be reached.

use super::exit;
use super::target::{self, Targets};
use crate::client::spec::ServerSpec;
use crate::client::turn::Reply;
use crate::scenario::compare::{self, StepDifference};
use crate::scenario::run::{self, Progress, ScenarioRun};
use crate::scenario::{self, Scenario};
use crate::session::Session;
use clap::ValueEnum;
use serde_json::{Value, json};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Scenario files (YAML, or JSON).
    #[arg(required_unless_present = "from_session")]
    scenarios: Vec<PathBuf>,
    /// Make a scenario from a recorded session instead: its expectations are what the server
    /// answered (printed, or written to --output).
    #[arg(long, value_name = "SESSION", conflicts_with_all = ["scenarios", "compare", "junit"])]
    from_session: Option<PathBuf>,
    /// The dialogue of the session to make it from (default: the first).
    #[arg(long, value_name = "N", requires = "from_session")]
    dialogue: Option<usize>,
    /// Where --from-session writes the scenario.
    #[arg(long, short, value_name = "FILE", requires = "from_session")]
    output: Option<PathBuf>,
    /// Let --output (and --junit) replace a file that is there already (without it, an
    /// existing file is never overwritten: it may be someone's work; an earlier JUnit report is).
    #[arg(long)]
    force: bool,
    /// Also compare the servers' answers step by step (two servers or more); a difference
    /// fails the run.
    #[arg(long)]
    compare: bool,
    /// Write a JUnit XML report (one test case per step).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    targets: Targets,
}

pub fn run(args: Args) -> u8 {
    if let Some(session) = &args.from_session {
        if let Some(out) = &args.output
            && let Err(e) = super::overwrite::refuse_existing("--output", out, args.force)
        {
            return fail(&e);
        }
        return from_session(session, args.dialogue.unwrap_or(0), args.output.as_ref());
    }
    if let Some(path) = &args.junit
        && let Err(e) = super::overwrite::refuse_existing_unless_junit("--junit", path, args.force)
    {
        return fail(&e);
    }
    // Every scenario is read before anything is sent.
    let Some(scenarios) = super::read_scenarios(&args.scenarios) else {
        eprintln!("bkn-explorer test: nothing was sent");
        return exit::FAILURE;
    };
    // While the first server starts, the checks its turns need are compiled.
    crate::protocol::schema::warm_up_each_in_background(scenarios.iter().map(|s| s.interface));
    let given = match args.targets.resolve() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if args.compare && given.len() < 2 {
        return fail("--compare needs two servers or more (e.g. --embedded dac --url URL)");
    }
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let results = run_all(&args, &scenarios, &given, &runtime);
    report(&args, &results)
}

/// What the scenarios' runs found.
struct Results {
    runs: Vec<ScenarioRun>,
    /// With --compare, each scenario's differences between the servers.
    differences: Vec<(String, Vec<StepDifference>)>,
    /// A server could not be reached (or a scenario has none to run on).
    unreachable: bool,
}

/// Each scenario run on each of its servers in turn (its progress shown, its run printed as
/// text), and with --compare, the servers' answers set side by side.
fn run_all(
    args: &Args,
    scenarios: &[Scenario],
    given: &[ServerSpec],
    runtime: &tokio::runtime::Runtime,
) -> Results {
    let mut options = args.targets.connect_options();
    // One dialogue at a time, one turn at a time, on this current-thread runtime.
    options.share_cpu = true;
    let overrides = args.targets.overrides();
    let cancel = CancellationToken::new();
    // The JSON report shows every step's Response, and a comparison needs them all.
    let keep = if args.format == Format::Json || args.compare {
        run::Keep::Every
    } else {
        run::Keep::Failing
    };
    let mut results = Results {
        runs: Vec::new(),
        differences: Vec::new(),
        unreachable: false,
    };
    for s in scenarios {
        let servers = match servers_for(s, given) {
            Ok(list) => list,
            Err(e) => {
                eprintln!("bkn-explorer test: {}: {e}", s.path.display());
                results.unreachable = true;
                continue;
            }
        };
        let first = results.runs.len();
        for spec in &servers {
            let mut line = ProgressLine::new(s, spec);
            let run = runtime.block_on(run::run(
                s,
                spec,
                &options,
                &overrides,
                &cancel,
                keep,
                |p| line.show(&p),
            ));
            line.clear();
            results.unreachable |= run.error.is_some();
            if args.format == Format::Text {
                print_run(&run);
            }
            results.runs.push(run);
        }
        if args.compare {
            let these: Vec<&ScenarioRun> = results.runs[first..].iter().collect();
            let found = compare::compare(&these);
            if args.format == Format::Text {
                print_differences(s, &servers, &found);
            }
            results.differences.push((s.name.clone(), found));
        }
    }
    results
}

/// The JUnit file (written whatever happened, so that CI shows it), the summary (a line of
/// text, or the JSON report), and the exit code.
fn report(args: &Args, results: &Results) -> u8 {
    let Results {
        runs,
        differences,
        unreachable,
    } = results;
    if let Some(path) = &args.junit
        && let Err(e) =
            crate::session::atomic::write(path, scenario::junit::report(runs).as_bytes())
    {
        eprintln!("bkn-explorer test: cannot write {}: {e}", path.display());
    }
    let failed_steps: usize = runs.iter().map(ScenarioRun::failed_steps).sum();
    let differing: usize = differences.iter().map(|(_, d)| d.len()).sum();
    let passed = runs.iter().all(ScenarioRun::passed) && differing == 0;
    match args.format {
        Format::Json => print_json(runs, differences, passed),
        Format::Text => {
            let ok = runs.iter().filter(|r| r.passed()).count();
            let mut line = format!(
                "{ok} of {} run{} passed",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" }
            );
            if failed_steps > 0 {
                line.push_str(&format!(
                    "; {failed_steps} step{} failed",
                    plural(failed_steps)
                ));
            }
            if args.compare {
                line.push_str(&format!(
                    "; {differing} difference{} between servers",
                    plural(differing)
                ));
            }
            println!("{line}");
        }
    }
    if *unreachable {
        exit::FAILURE
    } else if passed {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer test: {message}");
    exit::FAILURE
}

/// The servers a scenario runs on: the command line's, else its own, else the reference
/// server of its interface.
fn servers_for(s: &Scenario, given: &[ServerSpec]) -> Result<Vec<ServerSpec>, String> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    Ok(vec![target::own_server(s)?])
}

/// A progress line on standard error for runs that take a while: redrawn in place on a
/// terminal, a line every few seconds otherwise (CI logs).
struct ProgressLine {
    started: Instant,
    last: Instant,
    total: usize,
    what: String,
    tty: bool,
    drawn: bool,
}

impl ProgressLine {
    fn new(s: &Scenario, spec: &ServerSpec) -> ProgressLine {
        ProgressLine {
            started: Instant::now(),
            last: Instant::now(),
            total: s.steps.len(),
            what: format!("{} on {}", s.name, spec.name),
            tty: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    fn show(&mut self, p: &Progress) {
        let Progress::Step(step) = p else { return };
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(5)
        };
        if self.started.elapsed() < Duration::from_secs(1) || self.last.elapsed() < every {
            return;
        }
        self.last = Instant::now();
        let text = format!("{}: step {} of {}", self.what, step.index + 1, self.total);
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{text}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

fn print_run(run: &ScenarioRun) {
    let passed = run.steps.iter().filter(|s| s.passed()).count();
    let mark = if run.passed() { "✓" } else { "✗" };
    let protocol = run
        .protocol
        .as_deref()
        .map(|p| format!(" (MCP {p})"))
        .unwrap_or_default();
    println!(
        "{mark} {} ({}) on {}{protocol}: {passed} of {} steps passed ({:.2} s)",
        run.scenario,
        run.file,
        run.server,
        run.steps.len(),
        run.seconds
    );
    if let Some(e) = &run.error {
        println!("    {e}");
    }
    for step in run.steps.iter().filter(|s| !s.passed()) {
        let latency = if step.not_run.is_none() {
            format!(" ({:.1} ms)", step.latency_ms)
        } else {
            String::new()
        };
        let attempts = if step.attempts > 1 {
            format!(", {} attempts", step.attempts)
        } else {
            String::new()
        };
        // A step's name is its own, or "step N (kind)" when the file gave none: the number
        // is then said once.
        let number = format!("step {}", step.index + 1);
        let label = if step.name.starts_with(&number) {
            step.name.clone()
        } else {
            format!("{number}: {}", step.name)
        };
        println!("  ✗ {label}{latency}{attempts}");
        if let Some(why) = &step.not_run {
            println!("      not run: {why}");
        }
        for f in &step.failures {
            println!("      {f}");
        }
        if let Some(turn) = &step.turn {
            let text = match &turn.reply {
                Reply::Response(r) => format!("Response: {}", r.text()),
                Reply::ToolError(t) => {
                    format!("tool error: {}", t.lines().next().unwrap_or_default())
                }
                Reply::Error(e) => format!("no reply: {}", e.message),
            };
            let cut: String = text.chars().take(400).collect();
            let more = if text.chars().count() > 400 {
                "…"
            } else {
                ""
            };
            println!("      {cut}{more}");
        }
    }
}

fn print_differences(s: &Scenario, servers: &[ServerSpec], found: &[StepDifference]) {
    let first = servers.first().map(|s| s.name.as_str()).unwrap_or_default();
    if found.is_empty() {
        println!("  the servers agree on every step of {}", s.name);
        return;
    }
    for d in found {
        println!(
            "  ≠ {} {}: {} differs from {first}",
            d.step + 1,
            d.name,
            d.server
        );
        for line in &d.differences {
            println!("      {line}");
        }
    }
}

fn print_json(runs: &[ScenarioRun], differences: &[(String, Vec<StepDifference>)], passed: bool) {
    let runs: Vec<Value> = runs
        .iter()
        .map(|r| {
            json!({
                "scenario": r.scenario,
                "file": r.file,
                "server": r.server,
                "protocol": r.protocol,
                "passed": r.passed(),
                "error": r.error.as_ref().map(ToString::to_string),
                "seconds": r.seconds,
                "steps": r.steps.iter().map(|s| json!({
                    "index": s.index,
                    "name": s.name,
                    "passed": s.passed(),
                    "attempts": s.attempts,
                    "notRun": s.not_run,
                    "latencyMs": s.not_run.is_none().then_some(s.latency_ms),
                    "failures": s.failures,
                    "response": s.turn.as_ref().and_then(|t| t.response()),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let differences: Vec<Value> = differences
        .iter()
        .map(|(scenario, d)| json!({"scenario": scenario, "steps": d}))
        .collect();
    let out = json!({"passed": passed, "runs": runs, "differences": differences});
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}

/// `--from-session`: a scenario made from a recorded dialogue. The file is read turn by turn
/// (`session::walk`) and only the dialogue asked for is kept, as the scenario's steps.
fn from_session(path: &Path, dialogue: usize, output: Option<&PathBuf>) -> u8 {
    use crate::session::walk::{self, Item};
    use std::ops::ControlFlow;
    let mut session: Option<Session> = None;
    let mut record = None;
    let mut dialogues = 0;
    let mut scenario = scenario::record::Recorder::default();
    let walked = walk::walk(path, &mut |item| {
        match item {
            Item::Start(s) => session = Some(s),
            Item::Dialogue(i, d) => {
                dialogues = i + 1;
                if i == dialogue {
                    record = Some(d);
                } else if i > dialogue {
                    return ControlFlow::Break(());
                }
            }
            Item::Turn { dialogue: i, turn } if i == dialogue => scenario.push(&turn),
            _ => {}
        }
        ControlFlow::Continue(())
    });
    if let Err(e) = walked {
        return fail(&format!("{}: {e}", path.display()));
    }
    let (Some(session), Some(record)) = (session, record) else {
        return fail(&format!(
            "{} has {} dialogue{}; there is no dialogue {dialogue}",
            path.display(),
            dialogues,
            plural(dialogues)
        ));
    };
    let source = format!("{} (dialogue {dialogue})", path.display());
    let yaml = scenario.yaml(&record, session.server_of(&record), &source);
    match output {
        None => {
            print!("{yaml}");
            exit::OK
        }
        Some(out) => match crate::session::atomic::write(out, yaml.as_bytes()) {
            Ok(()) => {
                eprintln!("wrote {}", out.display());
                exit::OK
            }
            Err(e) => fail(&format!("cannot write {}: {e}", out.display())),
        },
    }
}
