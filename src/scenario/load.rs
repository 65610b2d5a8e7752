//! Load: N dialogues at once (stdio: N server processes; HTTP: N sessions), each going M
//! times through a scenario, every turn checked as always. What comes out: turns per second,
//! latency percentiles per Kind (hdrhistogram), errors, timeouts, Responses that do not
//! conform and expectations that failed, and the CPU the load client itself used, so that
//! the client is seen not to be what was measured.

use crate::client::connection::ConnectOptions;
use crate::client::defaults::{Chosen, Overrides};
use crate::client::dialogue::{Dialogue, Filling};
use crate::client::spec::{ServerSpec, TransportSpec};
use crate::client::turn::{ErrorKind, Reply, Turn};
use crate::scenario::expect::{self, Expectation};
use crate::scenario::run::fill_captures;
use crate::scenario::{Scenario, Step};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Latencies, in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub turns: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    /// The percentiles of the latencies a histogram holds (in microseconds).
    pub fn of(h: &Histogram<u64>) -> Latency {
        Latency {
            turns: h.len(),
            p50_ms: h.value_at_quantile(0.5) as f64 / 1000.0,
            p90_ms: h.value_at_quantile(0.9) as f64 / 1000.0,
            p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
            max_ms: h.max() as f64 / 1000.0,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub scenario: String,
    pub server: String,
    pub concurrency: usize,
    pub repeat: usize,
    pub turns: u64,
    pub seconds: f64,
    pub turns_per_s: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub per_kind: BTreeMap<String, Latency>,
    pub errors: u64,
    pub timeouts: u64,
    pub nonconformant: u64,
    pub expectations_failed: u64,
    /// Dialogues that could not be opened, and why (the first few).
    pub not_opened: Vec<String>,
    /// CPU seconds of the load client itself, and of the server processes it started (stdio).
    pub client_cpu_s: f64,
    pub servers_cpu_s: f64,
}

/// What one dialogue's task gathered.
#[derive(Default)]
struct Tally {
    histograms: HashMap<String, Histogram<u64>>,
    errors: u64,
    timeouts: u64,
    nonconformant: u64,
    expectations_failed: u64,
    not_opened: Option<String>,
}

impl Tally {
    /// One turn of `step`: its latency by Kind, and whether it failed, was nonconformant
    /// where conformance was expected, or missed an expectation.
    fn count(&mut self, step: &Step, turn: &Turn, response: Option<&Value>) {
        let kind = turn.head().kind.as_str().to_owned();
        let micros = (turn.latency_ms * 1000.0).round().max(1.0) as u64;
        let _ = self
            .histograms
            .entry(kind)
            .or_insert_with(histogram)
            .record(micros);
        match &turn.reply {
            Reply::Error(e) if e.kind == ErrorKind::Timeout => self.timeouts += 1,
            Reply::Error(_) => self.errors += 1,
            _ => {}
        }
        let wants_conformance = step
            .expect
            .iter()
            .any(|e| matches!(e, Expectation::Conforms));
        if wants_conformance && !turn.findings.is_empty() {
            self.nonconformant += 1;
        }
        if !expect::judge(&step.expect, turn, response).is_empty() {
            self.expectations_failed += 1;
        }
    }
}

/// A histogram of turn latencies.
pub(crate) fn histogram() -> Histogram<u64> {
    // Microseconds from 1 µs to an hour, three significant figures.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// Runs the load; `done` counts turns as they finish (for a progress line).
#[allow(clippy::too_many_arguments)]
pub async fn run(
    scenario: Arc<Scenario>,
    spec: ServerSpec,
    options: ConnectOptions,
    overrides: Overrides,
    concurrency: usize,
    repeat: usize,
    fresh: bool,
    done: Arc<AtomicU64>,
    cancel: CancellationToken,
) -> LoadReport {
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let overrides = scenario.defaults.then(&overrides);
    // The sessions share one HTTP client (they run on this one runtime): a client made for
    // each session read the system's root certificates each time, and with `fresh` that
    // was half of the load client's CPU.
    let mut options = options;
    if matches!(spec.transport, TransportSpec::Http(_)) && options.http_client.is_none() {
        options.http_client = crate::client::connection::http_client(options.timeout).ok();
    }
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (scenario, spec, options, overrides, done, cancel) = (
            scenario.clone(),
            spec.clone(),
            options.clone(),
            overrides.clone(),
            done.clone(),
            cancel.clone(),
        );
        tasks.push(tokio::spawn(async move {
            one_dialogue(
                &scenario, &spec, &options, &overrides, repeat, fresh, &done, &cancel,
            )
            .await
        }));
    }
    let mut report = LoadReport::empty(&scenario.name, &spec.name, concurrency, repeat);
    let (all, per_kind) = add_up(tasks, &mut report).await;
    report.seconds = started.elapsed().as_secs_f64();
    report.turns = all.len();
    report.turns_per_s = report.turns as f64 / report.seconds.max(1e-9);
    report.latencies(&all, &per_kind);
    let (own, children) = cpu_seconds();
    report.client_cpu_s = own - cpu0.0;
    report.servers_cpu_s = children - cpu0.1;
    report
}

/// The dialogues' tallies as each ends: their counts into `report`; their latencies, all
/// together and by Kind, returned.
async fn add_up(
    tasks: Vec<tokio::task::JoinHandle<Tally>>,
    report: &mut LoadReport,
) -> (Histogram<u64>, HashMap<String, Histogram<u64>>) {
    let mut all = histogram();
    let mut per_kind: HashMap<String, Histogram<u64>> = HashMap::new();
    for task in tasks {
        let Ok(tally) = task.await else { continue };
        for (kind, h) in tally.histograms {
            let _ = all.add(&h);
            let entry = per_kind.entry(kind).or_insert_with(histogram);
            let _ = entry.add(&h);
        }
        report.errors += tally.errors;
        report.timeouts += tally.timeouts;
        report.nonconformant += tally.nonconformant;
        report.expectations_failed += tally.expectations_failed;
        if let Some(why) = tally.not_opened
            && report.not_opened.len() < 5
        {
            report.not_opened.push(why);
        }
    }
    (all, per_kind)
}

impl LoadReport {
    /// A report of a load not run yet: nothing counted.
    fn empty(scenario: &str, server: &str, concurrency: usize, repeat: usize) -> LoadReport {
        LoadReport {
            scenario: scenario.to_owned(),
            server: server.to_owned(),
            concurrency,
            repeat,
            turns: 0,
            seconds: 0.0,
            turns_per_s: 0.0,
            p50_ms: 0.0,
            p90_ms: 0.0,
            p99_ms: 0.0,
            max_ms: 0.0,
            per_kind: BTreeMap::new(),
            errors: 0,
            timeouts: 0,
            nonconformant: 0,
            expectations_failed: 0,
            not_opened: Vec::new(),
            client_cpu_s: 0.0,
            servers_cpu_s: 0.0,
        }
    }

    /// The percentiles of the turns' latencies, overall and by Kind.
    fn latencies(&mut self, all: &Histogram<u64>, per_kind: &HashMap<String, Histogram<u64>>) {
        let overall = Latency::of(all);
        (self.p50_ms, self.p90_ms, self.p99_ms, self.max_ms) = (
            overall.p50_ms,
            overall.p90_ms,
            overall.p99_ms,
            overall.max_ms,
        );
        self.per_kind = per_kind
            .iter()
            .map(|(k, h)| (k.clone(), Latency::of(h)))
            .collect();
    }
}

/// One of the N dialogues: the scenario `repeat` times, in the same dialogue (or, `fresh`,
/// each time in a new MCP session, for scenarios whose answers depend on the dialogue's
/// history).
#[allow(clippy::too_many_arguments)]
async fn one_dialogue(
    scenario: &Scenario,
    spec: &ServerSpec,
    options: &ConnectOptions,
    overrides: &Overrides,
    repeat: usize,
    fresh: bool,
    done: &AtomicU64,
    cancel: &CancellationToken,
) -> Tally {
    let mut tally = Tally::default();
    let connect = || {
        Dialogue::connect(
            spec,
            options,
            scenario.interface,
            Chosen::built_in(),
            overrides,
        )
    };
    let mut dialogue = match connect().await {
        Ok(d) => d,
        Err(e) => {
            tally.not_opened = Some(e);
            return tally;
        }
    };
    'repeats: for round in 0..repeat {
        if fresh && round > 0 {
            match connect().await {
                Ok(d) => std::mem::replace(&mut dialogue, d).close().await,
                Err(e) => {
                    tally.not_opened = Some(e);
                    break;
                }
            }
        }
        let mut captured: HashMap<String, Value> = HashMap::new();
        for step in &scenario.steps {
            if cancel.is_cancelled() {
                break 'repeats;
            }
            let fields = Value::Object(fill_captures(&step.request, &captured));
            let filling = if step.as_is {
                Filling::AsIs
            } else {
                Filling::Missing
            };
            let request = dialogue.prepare(fields, filling);
            let turn = dialogue.send(request, cancel).await;
            done.fetch_add(1, Ordering::Relaxed);
            tally.count(step, &turn, dialogue.last_response());
            super::run::capture(&step.capture, dialogue.last_response(), &mut captured);
            if matches!(&turn.reply, Reply::Error(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Transport))
            {
                break 'repeats;
            }
        }
    }
    dialogue.close().await;
    tally
}

/// CPU seconds used so far by this process, and by the children it has waited for (the
/// stdio servers it started), from /proc/self/stat (zero where there is none).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<f64> = after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    let get = |i: usize| fields.get(i).copied().unwrap_or(0.0) / 100.0;
    // utime, stime, cutime, cstime are fields 14-17: indices 11-14 after the ")".
    (get(11) + get(12), get(13) + get(14))
}
