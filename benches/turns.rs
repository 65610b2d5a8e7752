//! What a turn costs, measured the way users run the program, in one run, side by side:
//!
//! - the floor: two processes passing a 2 KB line back and forth over pipes (this bench
//!   re-executed as the echoing helper), on whatever CPUs the scheduler gives them;
//! - a bare turn: rmcp's own client calling `bkn-explorer serve dac` (no check, no record);
//! - the explorer's turn: `bkn-explorer dialogue` as a process against its embedded Domain
//!   Access over stdio (client and server CPU together, every check on), at 2,000 and at
//!   20,000 turns (a cost that grew with the dialogue would show here);
//! - the official MCP Python SDK's client doing the same turns, when Python with the `mcp`
//!   package is there (`BKN_PYTHON`, else `python3`);
//! - `dialogue --url` against `serve dac --http`: turns per second, and the CPU of each side;
//! - `send` as a one-shot process (what scripts run), and `--version` for scale;
//! - `validate` of 40,000 messages as JSON Lines;
//! - `proxy`: an agent's exchange through `bkn-explorer proxy -- serve dac` (recording and
//!   not) against the same agent talking to `serve dac` directly, in alternating rounds:
//!   median and p99 of each, and what the proxy adds.
//!
//! `cargo bench --bench turns` prints a table; docs/performance.md keeps the figures.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_bkn-explorer");

fn main() {
    // Re-executed as the pipe helper: echo every line back.
    if std::env::args().any(|a| a == "--echo-helper") {
        let stdin = std::io::stdin();
        let mut out = std::io::stdout().lock();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
        return;
    }
    // `cargo bench` passes `--bench`; a filter (like criterion's) is not supported here.
    let dir = tempfile::tempdir().expect("a temporary folder");
    // `BKN_TURNS=proxy cargo bench --bench turns`: the proxy's rows alone.
    if std::env::var("BKN_TURNS").as_deref() == Ok("proxy") {
        proxy_overhead(dir.path(), 2_000);
        http_proxy_overhead(dir.path(), 2_000);
        return;
    }
    // `BKN_TURNS=load cargo bench --bench turns`: the load rows alone; `BKN_TURNS=test`, the
    // rows of `test` against `dialogue`.
    match std::env::var("BKN_TURNS").as_deref() {
        Ok("load") => return load_over_http(dir.path()),
        Ok("generations") => return generations(dir.path(), 3),
        // `BKN_TURNS=send`: `send` against `--version` alone; `BKN_BASELINE=PATH` alternates
        // each round with another build (the one before a change) in the same run.
        Ok("send") => return send_over_start(dir.path(), 3),
        Ok("test") => {
            test_over_dialogue(dir.path(), 20);
            return test_over_dialogue(dir.path(), 2_000);
        }
        _ => {}
    }
    println!("turns: what one turn costs (CPU of client and server together)\n");
    pipe_floor(false);
    pipe_floor(true);
    bare_turns(2_000);
    let requests_1 = requests(dir.path(), 1);
    let requests_2k = requests(dir.path(), 2_000);
    let requests_20k = requests(dir.path(), 20_000);
    // What a run costs besides its turns (start, connect, close), to take out of each figure.
    let (fixed_wall, fixed_cpu) = explorer_run(&requests_1, 1);
    println!(
        "{:<58} wall {:>8.1} ms   cpu {:>8.1} ms",
        "bkn-explorer dialogue, 1 turn (start, connect, close)",
        fixed_wall * 1e3,
        fixed_cpu * 1e3
    );
    let mut per_turn = Vec::new();
    for (path, n) in [(&requests_2k, 2_000), (&requests_20k, 20_000)] {
        let (wall, cpu) = explorer_run(path, n);
        let turns = (n - 1) as f64;
        let cpu_per = (cpu - fixed_cpu) / turns * 1e6;
        row(
            &format!("bkn-explorer dialogue, {n} turns (stdio), each"),
            (wall - fixed_wall) / turns * 1e6,
            cpu_per,
        );
        per_turn.push(cpu_per);
    }
    println!(
        "{:<58} {:>8.2}x",
        "  CPU of a turn at 20,000 turns over at 2,000",
        per_turn[1] / per_turn[0]
    );
    // The same server named on the command line: not placed on the client's CPU.
    let named = format!("{BIN} serve dac");
    let server = ["--stdio", named.as_str()];
    let (fixed_wall, fixed_cpu) = explorer_run_with(&requests_1, 1, &server);
    let (wall, cpu) = explorer_run_with(&requests_2k, 2_000, &server);
    row(
        "  the same, 2,000 turns, server named (--stdio), each",
        (wall - fixed_wall) / 1_999.0 * 1e6,
        (cpu - fixed_cpu) / 1_999.0 * 1e6,
    );
    python_sdk(2_000);
    http_turns(&requests_2k, 2_000);
    one_shot();
    validate(dir.path());
    test_over_dialogue(dir.path(), 20);
    test_over_dialogue(dir.path(), 2_000);
    load_over_http(dir.path());
    proxy_overhead(dir.path(), 2_000);
    http_proxy_overhead(dir.path(), 2_000);
    generations(dir.path(), 3);
}

/// The two MCP generations side by side (issue 26), `rounds` times, alternated within each
/// round so that a change of the machine's load falls on both:
/// - `dialogue` of 20,000 turns over stdio (its embedded server; the CPU of both, less a
///   1-turn run's) and `dialogue --url` of 20,000 turns against one `serve dac --http` (the
///   client's CPU and the server's), pinned to 2025-11-25 and to 2026-07-28;
/// - `load`, 8 dialogues x 1,000 turns against the same server, in each generation;
/// - `send` (one Request, the embedded server, auto and pinned to 2025-11-25) against
///   `--version`, the program's bare start: 30 runs of each, medians, and their ratio.
fn generations(dir: &Path, rounds: usize) {
    const GENERATIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];
    println!("\nthe MCP generations side by side ({rounds} rounds, alternated)\n");
    let one = requests(dir, 1);
    let many = requests(dir, 20_000);
    let n = 20_000.0;
    let scenario = dir.join("load-generations.yaml");
    std::fs::write(
        &scenario,
        "steps:\n  - request: {Kind: constraints, EntityIDs: [Kiosk#3], Space: {SpaceID: Space:Square}}\n    expect: {outcome: answered}\n",
    )
    .unwrap();
    let (mut server, url) = http_server();
    // Per generation: stdio CPU a turn, HTTP client and server CPU a turn (µs).
    let mut stdio = [Vec::new(), Vec::new()];
    let mut http = [Vec::new(), Vec::new()];
    for round in 1..=rounds {
        for (g, generation) in GENERATIONS.iter().enumerate() {
            let pin = ["--protocol", generation];
            let (_, fixed) = explorer_run_with(&one, 1, &pin);
            let (wall, cpu) = explorer_run_with(&many, 20_000, &pin);
            let per = (cpu - fixed) / (n - 1.0) * 1e6;
            stdio[g].push(per);
            println!(
                "round {round} {generation} stdio  dialogue, 20,000 turns: {:>6.0} turns/s, cpu {per:>6.1} µs a turn (client + server)",
                n / wall
            );
            let server_cpu0 = process_cpu(server.id());
            let cpu0 = children_cpu();
            let started = Instant::now();
            let out = Command::new(BIN)
                .arg("dialogue")
                .arg(&many)
                .args(["--url", &url, "--protocol", generation])
                .stderr(Stdio::null())
                .output()
                .expect("dialogue runs");
            let wall = started.elapsed().as_secs_f64();
            let client = (children_cpu() - cpu0) / n * 1e6;
            let served = (process_cpu(server.id()) - server_cpu0) / n * 1e6;
            assert!(out.status.success(), "dialogue --url failed");
            http[g].push((client, served));
            println!(
                "round {round} {generation} HTTP   dialogue --url, 20,000 turns: {:>6.0} turns/s, cpu {client:>6.1} µs client + {served:>6.1} µs server = {:>6.1} µs a turn",
                n / wall,
                client + served
            );
            let server_cpu0 = process_cpu(server.id());
            let out = Command::new(BIN)
                .arg("load")
                .arg(&scenario)
                .args(["--concurrency", "8", "--repeat", "1000", "--url", &url])
                .args(["--protocol", generation, "--format", "json"])
                .stderr(Stdio::null())
                .output()
                .unwrap();
            let served = process_cpu(server.id()) - server_cpu0;
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            println!(
                "round {round} {generation} load   8 x 1,000 turns over HTTP: {:>6.0} turns/s, p99 {:.2} ms, client cpu {:.2} s, server cpu {served:.2} s",
                report["turns_per_s"].as_f64().unwrap_or(f64::NAN),
                report["p99_ms"].as_f64().unwrap_or(f64::NAN),
                report["client_cpu_s"].as_f64().unwrap_or(f64::NAN),
            );
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.2}-{hi:.2}")
    };
    let stdio_ratio: Vec<f64> = (0..rounds).map(|r| stdio[1][r] / stdio[0][r]).collect();
    let http_ratio: Vec<f64> = (0..rounds)
        .map(|r| (http[1][r].0 + http[1][r].1) / (http[0][r].0 + http[0][r].1))
        .collect();
    println!(
        "a 2026-07-28 turn's CPU over a 2025-11-25 turn's, each round: stdio {}x, HTTP {}x",
        range(&stdio_ratio),
        range(&http_ratio)
    );
    send_over_start(dir, rounds);
}

/// `send` (one Request, its embedded server in-process; auto, and pinned to 2025-11-25)
/// against `--version`, the program's bare start, `rounds` times alternated: the medians of
/// 30 runs of each (wall), the CPU a run (user + system, from the kernel, over the same
/// runs) and their ratios; the target is at most 2.7x. With `BKN_BASELINE=PATH`, the same
/// rows for that build in each round, alternated with this one (side by side in one run).
fn send_over_start(dir: &Path, rounds: usize) {
    let request = dir.join("one-request.json");
    std::fs::write(
        &request,
        r#"{"Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{"SpaceID":"Space:Square"}}"#,
    )
    .unwrap();
    let baseline = std::env::var("BKN_BASELINE").ok();
    let mut builds = vec![("this build", BIN.to_owned())];
    if let Some(other) = baseline {
        builds.push(("baseline", other));
    }
    const RUNS: usize = 30;
    // Median wall ms of RUNS runs, and the CPU ms a run.
    let measure = |bin: &str, args: &[&str]| -> (f64, f64) {
        let cpu0 = children_cpu();
        let wall = median_ms(RUNS, || {
            let s = Command::new(bin)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(s.success(), "{bin} {args:?} failed");
        });
        (wall, (children_cpu() - cpu0) * 1000.0 / RUNS as f64)
    };
    let request = request.display().to_string();
    let mut ratios: Vec<Vec<(f64, f64)>> = vec![Vec::new(); builds.len()];
    println!(
        "\nsend (one Request, the embedded server) against --version ({rounds} rounds, alternated)\n"
    );
    for round in 1..=rounds {
        for (b, (name, bin)) in builds.iter().enumerate() {
            let (auto, auto_cpu) = measure(bin, &["send", &request]);
            let (version, version_cpu) = measure(bin, &["--version"]);
            let (pinned, _) = measure(bin, &["send", &request, "--protocol", "2025-11-25"]);
            ratios[b].push((auto / version, auto_cpu / version_cpu));
            println!(
                "round {round} {name}: send {auto:.2} ms (auto, cpu {auto_cpu:.2} ms), {pinned:.2} ms (2025-11-25); --version {version:.2} ms (cpu {version_cpu:.2} ms); send / --version {:.2}x wall, {:.2}x cpu",
                auto / version,
                auto_cpu / version_cpu
            );
        }
    }
    let range = |v: Vec<f64>| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.2}-{hi:.2}")
    };
    for (b, (name, _)) in builds.iter().enumerate() {
        println!(
            "{name}: send over the bare start, each round: {}x wall, {}x cpu (target: at most 2.7x)",
            range(ratios[b].iter().map(|r| r.0).collect()),
            range(ratios[b].iter().map(|r| r.1).collect())
        );
    }
}

/// The latency of each exchange of `dialogue --url` (what it reports), in microseconds.
fn dialogue_latencies(requests: &Path, url: &str) -> Vec<f64> {
    let out = Command::new(BIN)
        .arg("dialogue")
        .arg(requests)
        .args(["--url", url])
        .stderr(Stdio::null())
        .output()
        .expect("dialogue runs");
    assert!(out.status.success(), "dialogue failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["latencyMs"].as_f64())
        .map(|ms| ms * 1000.0)
        .collect()
}

/// What the HTTP proxy adds: `dialogue --url` against `serve dac --http` directly and
/// through `proxy --http` (recording), alternately, 4 rounds of `turns`.
fn http_proxy_overhead(dir: &Path, turns: usize) {
    let requests = requests(dir, turns);
    let (mut server, upstream) = http_server();
    let record = dir.join("bench-http.jsonl");
    let (mut proxy, via) = listening(&[
        "proxy",
        "--http",
        "127.0.0.1:0",
        "--upstream",
        &upstream,
        "--record",
        record.to_str().unwrap(),
    ]);
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        direct.extend(dialogue_latencies(&requests, &upstream));
        proxied.extend(dialogue_latencies(&requests, &via));
    }
    let _ = proxy.kill();
    let _ = server.kill();
    let d = show("dialogue --url exchange, direct (HTTP)", &mut direct);
    let p = show(
        "dialogue --url exchange through proxy --http, recording",
        &mut proxied,
    );
    println!(
        "{:<58} median +{:.0} µs, p99 +{:.0} µs",
        "  what the HTTP proxy adds",
        p.0 - d.0,
        p.1 - d.1
    );
}

/// One agent's exchanges (raw JSON-RPC over stdio, one at a time) with `command`: the
/// latency of each, in microseconds.
fn agent_exchanges(command: &[&str], turns: u64) -> Vec<f64> {
    let mut child = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut exchange = |message: &Value, input: &mut std::process::ChildStdin| {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        line.clear();
        output.read_line(&mut line).unwrap();
    };
    exchange(
        &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}),
        &mut input,
    );
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let dialog = uuid::Uuid::new_v4().to_string();
    let mut out = Vec::with_capacity(turns as usize);
    for turn in 0..turns {
        let message = json!({"jsonrpc":"2.0","id":turn + 1,"method":"tools/call",
                             "params":{"name":"bkn_dac","arguments":request(turn, &dialog)}});
        let started = Instant::now();
        exchange(&message, &mut input);
        out.push(started.elapsed().as_secs_f64() * 1e6);
    }
    drop(input);
    let _ = child.wait();
    out
}

/// Prints the median and p99 of `v` (sorted here) and returns them.
fn show(what: &str, v: &mut [f64]) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let (median, p99) = (percentile(v, 0.5), percentile(v, 0.99));
    println!("{what:<58} median {median:>7.0} µs   p99 {p99:>7.0} µs");
    (median, p99)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// What the proxy adds to an exchange: the same agent, alternately direct and through the
/// proxy (without and with recording), 4 rounds of `turns` each.
fn proxy_overhead(dir: &Path, turns: u64) {
    let record = |round: usize| dir.join(format!("bench-{round}.jsonl"));
    let mut direct = Vec::new();
    let mut proxied = Vec::new();
    let mut recorded = Vec::new();
    for round in 0..4 {
        direct.extend(agent_exchanges(
            &[BIN, "serve", "dac", "--log-level", "error"],
            turns,
        ));
        proxied.extend(agent_exchanges(
            &[
                BIN,
                "proxy",
                "--no-record",
                "--",
                BIN,
                "serve",
                "dac",
                "--log-level",
                "error",
            ],
            turns,
        ));
        let path = record(round);
        recorded.extend(agent_exchanges(
            &[
                BIN,
                "proxy",
                "--record",
                path.to_str().unwrap(),
                "--",
                BIN,
                "serve",
                "dac",
                "--log-level",
                "error",
            ],
            turns,
        ));
    }
    let d = show("agent exchange, direct (stdio)", &mut direct);
    let p = show("agent exchange through proxy, not recording", &mut proxied);
    let r = show("agent exchange through proxy, recording", &mut recorded);
    println!(
        "{:<58} median +{:.0} µs, p99 +{:.0} µs (recording: +{:.0} / +{:.0} µs)",
        "  what the proxy adds",
        p.0 - d.0,
        p.1 - d.1,
        r.0 - d.0,
        r.1 - d.1
    );
}

/// `test` against `dialogue` with the same Requests: what judging expectations adds.
fn test_over_dialogue(dir: &Path, n: usize) {
    let scenario = dir.join(format!("steps-{n}.yaml"));
    let mut text = String::from("server: {embedded: dac}\nsteps:\n");
    for _ in 0..n {
        text.push_str(
            "  - request: {Kind: constraints, EntityIDs: [Kiosk#3], Space: {SpaceID: Space:Square}}\n    expect:\n      outcome: answered\n      values: {/Answer/Constraints: {present: true}}\n",
        );
    }
    std::fs::write(&scenario, &text).unwrap();
    // The same scenario as JSON (read by serde_json rather than the YAML parser).
    let as_json = dir.join(format!("steps-{n}.json"));
    let value: Value = serde_saphyr::from_str(&text).unwrap();
    std::fs::write(&as_json, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let requests = requests(dir, n);
    let time = |args: &[&std::ffi::OsStr]| {
        let started = Instant::now();
        let s = Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(s.success());
        started.elapsed().as_secs_f64()
    };
    // The better of five each, alternated, on a shared machine.
    let (mut t, mut j, mut d) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..5 {
        t = t.min(time(&["test".as_ref(), scenario.as_os_str()]));
        j = j.min(time(&["test".as_ref(), as_json.as_os_str()]));
        d = d.min(time(&["dialogue".as_ref(), requests.as_os_str()]));
    }
    println!(
        "{:<58} dialogue {:>6.1} ms; test: YAML {:>6.1} ms ({:+.1}%), JSON {:>6.1} ms ({:+.1}%)",
        format!("test against dialogue, {n} steps with expectations"),
        d * 1e3,
        t * 1e3,
        (t / d - 1.0) * 100.0,
        j * 1e3,
        (j / d - 1.0) * 100.0
    );
}

/// `load` with 8 HTTP sessions against the reference Domain Access, alternated with the
/// floor of any load client on this machine: the same turns from a bare client
/// (`bare_http_load`). Both against the same server, twice each.
fn load_over_http(dir: &Path) {
    let scenario = dir.join("load.yaml");
    std::fs::write(
        &scenario,
        "steps:\n  - request: {Kind: constraints, EntityIDs: [Kiosk#3], Space: {SpaceID: Space:Square}}\n    expect: {outcome: answered}\n",
    )
    .unwrap();
    let (mut server, url) = http_server();
    for _ in 0..2 {
        let server_cpu0 = process_cpu(server.id());
        let out = Command::new(BIN)
            .arg("load")
            .arg(&scenario)
            .args([
                "--concurrency",
                "8",
                "--repeat",
                "1000",
                "--url",
                &url,
                "--format",
                "json",
            ])
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let server_cpu = process_cpu(server.id()) - server_cpu0;
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let client = report["client_cpu_s"].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:<58} {:>8.0} turns/s, p99 {:.2} ms; load client {:.0}% of the run's CPU ({:.2} s of {:.2} s with the server)",
            "load, 8 HTTP sessions x 1,000 turns",
            report["turns_per_s"].as_f64().unwrap_or(f64::NAN),
            report["p99_ms"].as_f64().unwrap_or(f64::NAN),
            client / (client + server_cpu) * 100.0,
            client,
            client + server_cpu,
        );
        let server_cpu0 = process_cpu(server.id());
        let (turns_per_s, client) = bare_http_load(&url, 8, 1_000);
        let server_cpu = process_cpu(server.id()) - server_cpu0;
        println!(
            "{:<58} {:>8.0} turns/s; bare client {:.0}% of the run's CPU ({:.2} s of {:.2} s with the server)",
            "  the floor: a bare HTTP/1.1 client, the same turns",
            turns_per_s,
            client / (client + server_cpu) * 100.0,
            client,
            client + server_cpu,
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// The least any load client can do per turn: `sessions` threads, each with one kept-alive
/// connection on blocking sockets (no runtime, no HTTP library), writing each Request as it
/// goes, reading the answer to the end of its stream and parsing it once; no checks, no
/// records. Its turns/s and the CPU seconds this process spent.
fn bare_http_load(url: &str, sessions: usize, turns: u64) -> (f64, f64) {
    let cpu0 = process_cpu(std::process::id());
    let started = Instant::now();
    let threads: Vec<_> = (0..sessions)
        .map(|_| {
            let url = url.to_owned();
            std::thread::spawn(move || bare_http_session(&url, turns))
        })
        .collect();
    for t in threads {
        t.join().expect("a bare session");
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = process_cpu(std::process::id()) - cpu0;
    ((sessions as u64 * turns) as f64 / seconds, cpu)
}

fn bare_http_session(url: &str, turns: u64) {
    let authority = url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .expect("an http:// URL");
    let path = &url[url.find(authority).unwrap() + authority.len()..];
    let mut stream = std::net::TcpStream::connect(authority).expect("the server");
    stream.set_nodelay(true).unwrap();
    let mut buffer = vec![0u8; 1 << 20];
    let (session, _) = bare_post(
        &mut stream,
        &mut buffer,
        authority,
        path,
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bare","version":"0"}}}"#,
    );
    bare_post(
        &mut stream,
        &mut buffer,
        authority,
        path,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    for turn in 0..turns {
        let call = json!({"jsonrpc": "2.0", "id": turn + 1, "method": "tools/call",
            "params": {"name": "bkn_dac", "arguments": request(turn, &session)}});
        let (_, body) = bare_post(
            &mut stream,
            &mut buffer,
            authority,
            path,
            Some(&session),
            &call.to_string(),
        );
        let data = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find(|d| !d.trim().is_empty())
            .expect("an answer");
        let answer: Value = serde_json::from_str(data).expect("JSON");
        assert!(answer.get("result").is_some(), "{data}");
    }
}

/// One POST and its whole answer (Content-Length or chunked, ended by the last chunk): the
/// answer's Mcp-Session-Id and body.
fn bare_post(
    stream: &mut std::net::TcpStream,
    buffer: &mut [u8],
    authority: &str,
    path: &str,
    session: Option<&str>,
    body: &str,
) -> (String, String) {
    let mut text = format!(
        "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        text.push_str(&format!(
            "mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n"
        ));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).expect("written");
    let mut got = 0;
    loop {
        let n = stream.read(&mut buffer[got..]).expect("read");
        assert!(n > 0, "the server closed the connection");
        got += n;
        let Some(end) = buffer[..got].windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let lowered = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
        let rest = &buffer[end + 4..got];
        let whole = if lowered.contains("transfer-encoding: chunked") {
            rest.ends_with(b"0\r\n\r\n")
        } else {
            let length = lowered
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |l| l.trim().parse().unwrap_or(0));
            rest.len() >= length
        };
        if whole {
            // The header's name in any case, its value as sent.
            let head = String::from_utf8_lossy(&buffer[..end]);
            let session = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, value)| value.trim().to_owned())
                .unwrap_or_default();
            return (session, String::from_utf8_lossy(rest).into_owned());
        }
    }
}

/// The reference Domain Access over HTTP on an ephemeral port, and its URL (read from its
/// log; the rest of the log is drained so that it never blocks).
fn http_server() -> (std::process::Child, String) {
    listening(&[
        "serve",
        "dac",
        "--http",
        "127.0.0.1:0",
        "--log-level",
        "warn",
    ])
}

/// Starts this program with `args` and waits for the line that names the URL it listens on.
fn listening(args: &[&str]) -> (std::process::Child, String) {
    let mut server = Command::new(BIN)
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the HTTP server");
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("the HTTP server did not start");
        }
        if let Some(at) = line.find("http://") {
            break line[at..]
                .split([',', ' ', '\n'])
                .next()
                .unwrap()
                .to_owned();
        }
    };
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = stderr.read_to_end(&mut sink);
    });
    (server, url)
}

fn row(what: &str, wall_us: f64, cpu_us: f64) {
    println!("{what:<58} wall {wall_us:>8.1} µs   cpu {cpu_us:>8.1} µs");
}

/// CPU seconds of this process's waited-for children so far.
fn children_cpu() -> f64 {
    // Fields 16 and 17 of /proc/self/stat: cutime and cstime, in clock ticks (100 a second
    // on Linux); the runs below are long enough for that resolution.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the ")" field 3 (state) is at index 0: cutime (16) is at 13, cstime (17) at 14.
    (tick(13) + tick(14)) / 100.0
}

/// CPU seconds a running process has used (from /proc/PID/stat).
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime (14) and stime (15) are at 11 and 12 after the ")".
    (tick(11) + tick(12)) / 100.0
}

/// The pipe floor with both processes where the scheduler puts them, or both on the CPU this
/// thread is on (as `dialogue` places itself and the reference server it starts).
fn pipe_floor(one_cpu: bool) {
    const ROUNDS: usize = 20_000;
    let me = std::env::current_exe().expect("this bench's path");
    let cpu0 = children_cpu();
    let mut child = Command::new(me)
        .arg("--echo-helper")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the echo helper");
    let shared = one_cpu
        .then(|| bkn_explorer::client::affinity::SharedCpu::with(child.id()).ok())
        .flatten();
    let mut to = child.stdin.take().unwrap();
    let mut from = BufReader::new(child.stdout.take().unwrap());
    let line = format!("{}\n", "x".repeat(2047));
    let mut back = String::new();
    let started = Instant::now();
    let self0 = process_cpu(std::process::id());
    for _ in 0..ROUNDS {
        to.write_all(line.as_bytes()).unwrap();
        to.flush().unwrap();
        back.clear();
        from.read_line(&mut back).unwrap();
    }
    let wall = started.elapsed().as_secs_f64();
    let own = process_cpu(std::process::id()) - self0;
    drop(to);
    child.wait().unwrap();
    let cpu = own + children_cpu() - cpu0;
    let what = match (one_cpu, &shared) {
        (false, _) => "pipe floor: a 2 KB line there and back (two processes)",
        (true, Some(_)) => "the same, both processes on one CPU",
        (true, None) => "the same, both on one CPU (could not be placed: as above)",
    };
    drop(shared);
    row(what, wall / ROUNDS as f64 * 1e6, cpu / ROUNDS as f64 * 1e6);
}

fn request(turn: u64, dialog: &str) -> Value {
    json!({
        "Header": "PGM-KDA-V1.0", "Mode": "RQ", "MInstance": "MI:PublicSquare",
        "UEnvironment": "UE:Square", "SessionID": "AUS:1",
        "QueryID": uuid::Uuid::new_v4().to_string(),
        "QueryTime": "2026-11-30T00:00:00.000Z", "DialogID": dialog, "TurnIndex": turn,
        "DataXMData": {"DataID": uuid::Uuid::new_v4().to_string(), "Source": [{"AIMID": "PGM-BKN"}]},
        "Kind": "constraints", "EntityIDs": ["Kiosk#3"], "Space": {"SpaceID": "Space:Square"}
    })
}

/// rmcp's client, nothing else: the Requests made beforehand, the results not looked at.
fn bare_turns(turns: u64) {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dialog = uuid::Uuid::new_v4().to_string();
    let prepared: Vec<_> = (0..turns)
        .map(|t| request(t, &dialog).as_object().unwrap().clone())
        .collect();
    let cpu0 = children_cpu();
    let self0 = process_cpu(std::process::id());
    let (wall, pid) = runtime.block_on(async {
        let cmd = tokio::process::Command::new(BIN).configure(|c| {
            c.args(["serve", "dac"]);
        });
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = transport.id();
        let client = ().serve(transport).await.unwrap();
        let started = Instant::now();
        for arguments in prepared {
            let result = client
                .call_tool(CallToolRequestParams::new("bkn_dac").with_arguments(arguments))
                .await
                .unwrap();
            assert_ne!(result.is_error, Some(true));
        }
        let wall = started.elapsed().as_secs_f64();
        let _ = client.cancel().await;
        (wall, pid)
    });
    let _ = pid;
    let cpu = process_cpu(std::process::id()) - self0 + children_cpu() - cpu0;
    row(
        &format!("bare rmcp client, {turns} turns (stdio)"),
        wall / turns as f64 * 1e6,
        cpu / turns as f64 * 1e6,
    );
}

fn requests(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join(format!("requests-{n}.jsonl"));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..n {
        writeln!(
            file,
            r#"{{"Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{{"SpaceID":"Space:Square"}}}}"#
        )
        .unwrap();
    }
    path
}

/// `bkn-explorer dialogue` as a process: its wall and CPU seconds (its server's included).
fn explorer_run(requests: &Path, turns: usize) -> (f64, f64) {
    explorer_run_with(requests, turns, &[])
}

/// The same with server options (`--stdio "… serve dac"`: the same server, named, so that
/// the two processes are not placed on one CPU).
fn explorer_run_with(requests: &Path, turns: usize, server: &[&str]) -> (f64, f64) {
    let cpu0 = children_cpu();
    let started = Instant::now();
    let out = Command::new(BIN)
        .arg("dialogue")
        .arg(requests)
        .args(server)
        .stderr(Stdio::null())
        .output()
        .expect("dialogue runs");
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu0;
    assert!(out.status.success(), "dialogue failed");
    let lines = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(lines, turns);
    (wall, cpu)
}

fn python_sdk(turns: usize) {
    let python = std::env::var("BKN_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_mcp = Command::new(&python)
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_mcp {
        println!(
            "{:<58} (skipped: no `mcp` package for {python}; set BKN_PYTHON)",
            "MCP Python SDK client"
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/python_sdk_client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(turns.to_string())
        .args(["--", BIN, "serve", "dac", "--log-level", "warn"])
        .stderr(Stdio::null())
        .output()
        .expect("python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<f64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if f.len() == 4 {
        row(
            &format!("MCP Python SDK client, {turns} turns (stdio)"),
            f[1] / f[0] * 1e6,
            (f[2] + f[3]) / f[0] * 1e6,
        );
    } else {
        println!("MCP Python SDK client: unexpected output {text:?}");
    }
}

fn http_turns(requests: &Path, turns: usize) {
    let (mut server, url) = http_server();
    let server_cpu0 = process_cpu(server.id());
    let cpu0 = children_cpu();
    let started = Instant::now();
    let out = Command::new(BIN)
        .arg("dialogue")
        .arg(requests)
        .args(["--url", &url])
        .stderr(Stdio::null())
        .output()
        .expect("dialogue runs");
    let wall = started.elapsed().as_secs_f64();
    let client_cpu = children_cpu() - cpu0;
    let server_cpu = process_cpu(server.id()) - server_cpu0;
    assert!(out.status.success());
    let _ = server.kill();
    let _ = server.wait();
    row(
        &format!("bkn-explorer dialogue --url, {turns} turns (HTTP)"),
        wall / turns as f64 * 1e6,
        (client_cpu + server_cpu) / turns as f64 * 1e6,
    );
    println!(
        "{:<58} {:>8.0} turns/s (client cpu {:.0} µs, server cpu {:.0} µs a turn)",
        "",
        turns as f64 / wall,
        client_cpu / turns as f64 * 1e6,
        server_cpu / turns as f64 * 1e6
    );
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn one_shot() {
    let request = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        request.path(),
        r#"{"Kind":"constraints","EntityIDs":["Kiosk#3"],"Space":{"SpaceID":"Space:Square"}}"#,
    )
    .unwrap();
    let send = median_ms(30, || {
        let s = Command::new(BIN)
            .arg("send")
            .arg(request.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(s.success());
    });
    let version = median_ms(30, || {
        Command::new(BIN)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .unwrap();
    });
    println!(
        "{:<58} wall {send:>8.1} ms (median of 30)",
        "bkn-explorer send, one Request, the reference server in-process"
    );
    println!(
        "{:<58} wall {version:>8.1} ms",
        "bkn-explorer --version (starting the program)"
    );
}

fn validate(dir: &Path) {
    // 20,000 exchanges of a real dialogue, as JSON Lines: `dialogue` writes them.
    let session = dir.join("s.json");
    let requests = requests(dir, 20_000);
    let status = Command::new(BIN)
        .arg("dialogue")
        .arg(&requests)
        .arg("--save")
        .arg(&session)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let messages = dir.join("m.jsonl");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&messages).unwrap());
    for t in s["dialogues"][0]["turns"].as_array().unwrap() {
        writeln!(out, "{}", t["request"]).unwrap();
        writeln!(out, "{}", t["response"]).unwrap();
    }
    drop(out);
    for (what, path) in [("JSON Lines", &messages), ("a session file", &session)] {
        let started = Instant::now();
        let s = Command::new(BIN)
            .arg("validate")
            .arg(path)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(s.success());
        println!(
            "{:<58} wall {:>8.0} ms",
            format!("bkn-explorer validate, 40,000 messages, {what}"),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    let _ = Duration::ZERO;
}
