//! Locust's workers against `load`, in one run, against the same server with the same
//! concurrency (issue 30): the shipped dac-kiosk scenario played by 8 dialogues, 200 times
//! each (8,000 turns), against `serve dac --http`:
//!
//! - `bkn-explorer load -c 8 -r 200`: turns per second, and its CPU per turn;
//! - the exported Locust project, `locust --headless --processes 2 -u 8 --iterations 200`
//!   (a master and two workers): turns per second (Locust's count over the run's wall time),
//!   the CPU of Locust's processes together, and what each worker says it spent per turn
//!   (the note at the end of its recording);
//! - the floor, what Locust itself costs a turn here: a bare FastHttpUser
//!   (benches/locust_floor.py) POSTing the same tools/call bodies with the same headers and
//!   reading each answer, nothing judged or recorded, with as many workers and users for as
//!   long as the Locust round before it took; then the same through the geventhttpclient
//!   client beneath Locust's session, as the runner sends its turns;
//!
//! each with the server's CPU per turn over the same run (from /proc), in alternating rounds,
//! twice each. Locust is installed by tests/peers/locust/install.sh (the pinned version, into a
//! cache outside the repository); without it the bench says why and stops. `cargo bench
//! --bench locust` prints a table; docs/performance.md keeps the figures.
//!
//! `BKN_BENCH_BIN=/path/to/release/bkn-explorer` serves and runs `load` with that binary (a
//! release build made elsewhere), while this build exports the project (its runner) and reads
//! the report: `BKN_BENCH_BIN=… cargo test --bench locust` measures a release server and
//! `load` without a release build of this tree.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_bkn-explorer");
const USERS: usize = 8;
const ITERATIONS: usize = 200;
const WORKERS: usize = 2;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary that serves and runs `load`: BKN_BENCH_BIN, else this build's.
fn runner() -> String {
    std::env::var("BKN_BENCH_BIN").unwrap_or_else(|_| BIN.to_owned())
}

/// CPU seconds of the children this process has waited for.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(usage.ru_utime) + s(usage.ru_stime)
}

/// CPU seconds a running process has used so far (Linux's /proc; 0 elsewhere).
fn process_cpu(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // After the command's name in parentheses: state is field 3, utime 14, stime 15.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11) + ticks(12)) / hz
}

/// One contender's figures in a round.
struct Figures {
    turns: f64,
    turns_per_s: f64,
    p99_ms: f64,
    /// CPU per turn of the client: `load`'s process, or each Locust worker.
    client_us: Vec<f64>,
    /// CPU per turn of all of Locust's processes, its master included.
    all_us: Option<f64>,
    server_us: f64,
}

fn main() {
    let out = Command::new(root().join("tests/peers/locust/install.sh"))
        .output()
        .expect("install.sh runs");
    if !out.status.success() {
        println!(
            "locust: no Locust here ({}); nothing measured",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return;
    }
    let bin = PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default(),
    );
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut server = Command::new(runner())
        .args([
            "serve",
            "dac",
            "--http",
            "127.0.0.1:0",
            "--log-level",
            "warn",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let url = {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(server.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("the server says where it listens")
                .unwrap();
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        url
    };
    let scenario = root().join("scenarios/dac-kiosk.yaml");
    println!(
        "locust: dac-kiosk.yaml, {USERS} dialogues x {ITERATIONS} times (5 turns each) against serve dac --http ({})\n",
        runner()
    );
    let mut overheads = Vec::new();
    for round in 0..2 {
        let server_cpu = || process_cpu(server.id());
        let l = load(&scenario, &url, &server_cpu);
        show("load -c 8 (one process)", &l, "client");
        let project = export(dir.path(), &scenario, &url, round);
        let (ours, wall) = locust(&bin, &project, &server_cpu);
        show(
            &format!("locust --processes {WORKERS} -u {USERS} (ours)"),
            &ours,
            "each worker",
        );
        let floor_session = floor(&bin, &project, wall, &server_cpu, false);
        show(
            &format!("bare FastHttpUser, {WORKERS} workers (floor)"),
            &floor_session,
            "each worker",
        );
        let floor = floor(&bin, &project, wall, &server_cpu, true);
        show(
            "bare, its client beneath the session",
            &floor,
            "each worker",
        );
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        overheads.push((
            mean(&ours.client_us) - mean(&floor_session.client_us),
            mean(&ours.client_us) - mean(&floor.client_us),
            mean(&ours.client_us) / mean(&l.client_us).max(1e-9),
            mean(&ours.client_us) / ours.server_us.max(1e-9),
        ));
        println!();
    }
    for (i, (over_session, over, vs_load, vs_server)) in overheads.iter().enumerate() {
        println!(
            "round {}: a worker spends {over_session:+.0} us a turn against a bare FastHttpUser, {over:+.0} us against the bare client beneath it; {vs_load:.1}x load's CPU a turn; {vs_server:.1}x the server's",
            i + 1
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

fn show(what: &str, f: &Figures, client: &str) {
    let clients: Vec<String> = f.client_us.iter().map(|u| format!("{u:.0}")).collect();
    let all = f
        .all_us
        .map(|u| format!(", all processes {u:.0}"))
        .unwrap_or_default();
    println!(
        "{what:<42} {:>6.0} turns/s ({:>5} turns, p99 {:>5.1} ms); CPU a turn: {client} {} us{all}; server {:.0} us",
        f.turns_per_s,
        f.turns,
        f.p99_ms,
        clients.join(", "),
        f.server_us
    );
}

fn load(scenario: &Path, url: &str, server_cpu: &dyn Fn() -> f64) -> Figures {
    let before = server_cpu();
    let out = Command::new(runner())
        .arg("load")
        .arg(scenario)
        .args([
            "--url",
            url,
            "-c",
            &USERS.to_string(),
            "-r",
            &ITERATIONS.to_string(),
        ])
        .args(["--format", "json"])
        .output()
        .expect("load runs");
    let server = server_cpu() - before;
    let r: Value = serde_json::from_slice(&out.stdout).expect("load's JSON");
    let turns = r["turns"].as_f64().unwrap_or(0.0);
    let cpu = r["client_cpu_s"].as_f64().unwrap_or(0.0);
    Figures {
        turns,
        turns_per_s: r["turns_per_s"].as_f64().unwrap_or(0.0),
        p99_ms: r["p99_ms"].as_f64().unwrap_or(0.0),
        client_us: vec![cpu / turns.max(1.0) * 1e6],
        all_us: None,
        server_us: server / turns.max(1.0) * 1e6,
    }
}

/// The scenario exported by this build (its runner), the floor's locustfile beside it.
fn export(dir: &Path, scenario: &Path, url: &str, round: usize) -> PathBuf {
    let project = dir.join(format!("project-{round}"));
    let status = Command::new(BIN)
        .arg("load")
        .arg(scenario)
        .args(["--export", "locust", "--url", url, "-o"])
        .arg(&project)
        .stdout(Stdio::null())
        .status()
        .expect("the export runs");
    assert!(status.success(), "the export");
    std::fs::copy(
        root().join("benches/locust_floor.py"),
        project.join("locust_floor.py"),
    )
    .expect("the floor's locustfile is copied");
    project
}

fn locust_command(bin: &Path, project: &Path) -> Command {
    let mut command = Command::new(bin.join("locust"));
    command
        .current_dir(project)
        .args(["--headless", "--processes", &WORKERS.to_string()])
        .args(["--csv", "stats", "--only-summary"])
        .args(["-u", &USERS.to_string(), "-r", "100"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::null());
    command
}

/// Our exported project: its figures, and the run's wall time.
fn locust(bin: &Path, project: &Path, server_cpu: &dyn Fn() -> f64) -> (Figures, f64) {
    let cpu0 = children_cpu();
    let server0 = server_cpu();
    let started = Instant::now();
    let status = locust_command(bin, project)
        .args(["--iterations", &ITERATIONS.to_string()])
        .stderr(Stdio::null())
        .status()
        .expect("locust runs");
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    let server = server_cpu() - server0;
    let out = Command::new(BIN)
        .args(["load", "--report"])
        .arg(project)
        .args(["--format", "json"])
        .output()
        .expect("the report runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the report's JSON");
    let turns = r["locust_turns"].as_f64().unwrap_or(0.0);
    if !(status.success() && r["turns"] == r["locust_turns"]) {
        println!(
            "  (locust exited {status}; recorded {} of {turns} turns)",
            r["turns"]
        );
    }
    // Each worker's own figure: "worker NAME: N turns, C s of CPU (U us a turn)".
    let client_us = r["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .filter_map(|n| per_turn(n, " s of CPU ("))
        .collect();
    (
        Figures {
            turns,
            turns_per_s: r["turns_per_s"].as_f64().unwrap_or(0.0),
            p99_ms: r["p99_ms"].as_f64().unwrap_or(0.0),
            client_us,
            all_us: Some(cpu / turns.max(1.0) * 1e6),
            server_us: server / turns.max(1.0) * 1e6,
        },
        wall,
    )
}

/// "… (U us a turn)" after `after`: U.
fn per_turn(line: &str, after: &str) -> Option<f64> {
    let (_, rest) = line.split_once(after)?;
    rest.split_once(" us a turn)")?.0.trim().parse().ok()
}

/// The bare FastHttpUser, as many workers and users, for `seconds` (Locust's start included,
/// as in the round it is set beside).
/// `beneath`: through the client beneath Locust's session, as the runner sends its turns.
fn floor(
    bin: &Path,
    project: &Path,
    seconds: f64,
    server_cpu: &dyn Fn() -> f64,
    beneath: bool,
) -> Figures {
    let _ = std::fs::remove_file(project.join("stats_stats.csv"));
    let cpu0 = children_cpu();
    let server0 = server_cpu();
    let out = locust_command(bin, project)
        .args(["-f", "locust_floor.py"])
        .args(["--run-time", &format!("{}s", seconds.ceil().max(5.0))])
        .env("BKN_FLOOR", if beneath { "client" } else { "session" })
        .stderr(Stdio::piped())
        .output()
        .expect("locust runs the floor");
    let cpu = children_cpu() - cpu0;
    let server = server_cpu() - server0;
    // Each worker: "floor: N turns, C s of CPU (U us a turn)"; the master's has 0 turns.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let client_us = stderr
        .lines()
        .filter(|l| l.starts_with("floor: ") && !l.starts_with("floor: 0 turns"))
        .filter_map(|l| per_turn(l, " s of CPU ("))
        .collect();
    let csv = std::fs::read_to_string(project.join("stats_stats.csv")).unwrap_or_default();
    let aggregated: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with(",Aggregated,"))
        .map(|l| l.split(',').collect())
        .unwrap_or_default();
    let field = |i: usize| {
        aggregated
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Type,Name,Request Count,Failure Count,…,Requests/s (the tenth),…,99% (the nineteenth)
    let (turns, rate) = (field(2), field(9));
    if field(3) > 0.0 || !out.status.success() {
        println!(
            "  (the floor: locust exited {}; {} of {turns} requests failed)",
            out.status,
            field(3)
        );
    }
    Figures {
        turns,
        turns_per_s: rate,
        p99_ms: field(18),
        client_us,
        all_us: Some(cpu / turns.max(1.0) * 1e6),
        server_us: server / turns.max(1.0) * 1e6,
    }
}
