//! Locust's workers against `load`, in one run, against the same server with the same
//! concurrency (issue 30): the shipped dac-kiosk scenario played by 8 dialogues, 200 times
//! each (8,000 turns), against `serve dac --http`:
//!
//! - `bkn-explorer load -c 8 -r 200`: turns per second, and its CPU;
//! - the exported Locust project, `locust --headless --processes 2 -u 8 --iterations 200`
//!   (a master and two workers): turns per second (Locust's count over the run's wall time),
//!   the CPU of Locust's processes together, and what each worker says it spent per turn
//!   (the note at the end of its recording);
//!
//! in alternating rounds, twice each. Locust is installed by tests/peers/locust/install.sh
//! (the pinned version, into a cache outside the repository); without it the bench says why
//! and stops. `cargo bench --bench locust` prints a table; docs/performance.md keeps the figures.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_bkn-explorer");
const USERS: usize = 8;
const ITERATIONS: usize = 200;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// CPU seconds of the children this process has waited for.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(usage.ru_utime) + s(usage.ru_stime)
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
    let mut server = Command::new(BIN)
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
        "locust: dac-kiosk.yaml, {USERS} dialogues x {ITERATIONS} times (5 turns each) against serve dac --http\n"
    );
    for round in 0..2 {
        load(&scenario, &url);
        locust(&bin, dir.path(), &scenario, &url, round);
    }
    let _ = server.kill();
    let _ = server.wait();
}

fn load(scenario: &Path, url: &str) {
    let out = Command::new(BIN)
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
    let r: Value = serde_json::from_slice(&out.stdout).expect("load's JSON");
    let turns = r["turns"].as_f64().unwrap_or(0.0);
    let cpu = r["client_cpu_s"].as_f64().unwrap_or(0.0);
    println!(
        "{:<46} {:>7.0} turns/s, p99 {:>6.2} ms; client CPU {:.2} s ({:.0} us a turn)",
        "load -c 8 (one process)",
        r["turns_per_s"].as_f64().unwrap_or(0.0),
        r["p99_ms"].as_f64().unwrap_or(0.0),
        cpu,
        cpu / turns.max(1.0) * 1e6
    );
}

fn locust(bin: &Path, dir: &Path, scenario: &Path, url: &str, round: usize) {
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
    let cpu0 = children_cpu();
    let started = Instant::now();
    let status = Command::new(bin.join("locust"))
        .current_dir(&project)
        .args([
            "--headless",
            "--processes",
            "2",
            "--csv",
            "stats",
            "--only-summary",
        ])
        .args(["-u", &USERS.to_string(), "-r", "100"])
        .args(["--iterations", &ITERATIONS.to_string()])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("locust runs");
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    let out = Command::new(BIN)
        .args(["load", "--report"])
        .arg(&project)
        .args(["--format", "json"])
        .output()
        .expect("the report runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the report's JSON");
    let turns = r["locust_turns"].as_f64().unwrap_or(0.0);
    // Each worker's own figure: "worker NAME: N turns, C s of CPU (U us a turn)".
    let per_worker: Vec<String> = r["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .filter_map(|n| n.split_once(" s of CPU (").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once(" us a turn)").map(|(us, _)| us.to_owned()))
        .collect();
    println!(
        "{:<46} {:>7.0} turns/s, p99 {:>6.2} ms; Locust CPU {:.2} s ({:.0} us a turn); each worker: {} us a turn{}",
        "locust --processes 2 -u 8 (master + 2 workers)",
        r["turns_per_s"].as_f64().unwrap_or(0.0),
        r["p99_ms"].as_f64().unwrap_or(0.0),
        cpu,
        cpu / turns.max(1.0) * 1e6,
        per_worker.join(", "),
        if status.success() && r["turns"] == r["locust_turns"] {
            String::new()
        } else {
            format!(" (exit {status}; recorded {} of {turns})", r["turns"])
        }
    );
    println!(
        "{:<46} {:>7.0} turns/s over the run's wall time ({wall:.2} s, Locust's start included)",
        "",
        turns / wall
    );
}
