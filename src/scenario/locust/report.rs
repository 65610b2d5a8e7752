//! `bkn-explorer load --report DIR`: one summary of a Locust run of exported scenarios, from
//! what Locust wrote with `--csv DIR/stats` (each step's requests, failures and times; the
//! failed expectations with their reasons) and what the workers recorded in `DIR/recordings/`
//! (every exchange, judged here against the specification as `validate` judges it, streamed:
//! memory holds one line and one dialogue's state per file).

use crate::protocol::Interface;
use crate::protocol::conformance::Check;
use crate::session::check::Verdicts;
use crate::session::journal::{self, Conformance};
use crate::session::stream::StreamedReply;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Latencies, in milliseconds: as `load` reports them.
pub use crate::scenario::load::Latency;
use crate::scenario::load::histogram;

/// A row of Locust's statistics (`stats_stats.csv`).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The request's type: a Kind for a step, MCP for the worker's own requests.
    pub kind: String,
    pub name: String,
    pub requests: u64,
    pub failures: u64,
    pub median_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub per_s: f64,
}

/// A failure Locust counted (`stats_failures.csv`): a failed expectation, or a request the
/// server did not answer, with its reason.
#[derive(Clone, Debug, Serialize)]
pub struct Failed {
    pub kind: String,
    pub name: String,
    pub reason: String,
    pub occurrences: u64,
}

/// A step's expectation on findings that the recordings show did not hold (`findings: […]`,
/// `conforms: false`: judged here, with this program's checks).
#[derive(Clone, Debug, Serialize)]
pub struct FindingsFailed {
    pub scenario: String,
    pub step: String,
    pub expected: String,
    pub got: String,
    pub occurrences: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub dir: String,
    /// The recordings read, and the exchanges they hold.
    pub recordings: usize,
    pub turns: u64,
    /// The steps' requests Locust counted (every type but MCP): the same as `turns` when
    /// every exchange was recorded.
    pub locust_turns: u64,
    /// Locust's rate over the steps' requests.
    pub turns_per_s: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// From the recordings: every turn's latency, by Kind.
    pub per_kind: BTreeMap<String, Latency>,
    /// Locust's statistics per step, and of the workers' own MCP requests.
    pub steps: Vec<Row>,
    pub mcp: Vec<Row>,
    /// Locust's failures of the steps: failed expectations and unanswered turns, with reasons.
    pub failed: Vec<Failed>,
    pub failed_expectations: u64,
    /// Failures of the workers' own requests (the handshake, what the server publishes).
    pub mcp_failed: Vec<Failed>,
    /// Turns without a reply (the server did not answer, or could not be reached).
    pub errors: u64,
    /// Turns of steps that expect conformance whose messages did not conform, and the
    /// findings on them by rule.
    pub nonconformant: u64,
    pub by_rule: BTreeMap<String, u64>,
    pub findings_failed: Vec<FindingsFailed>,
    /// What the workers said at the end (their turns and CPU), and what could not be read.
    pub notes: Vec<String>,
    pub unreadable: Vec<String>,
}

impl Report {
    /// Whether everything held: every turn answered, conformant where asked, every
    /// expectation met, every recording read, and the recordings holding what Locust counted.
    pub fn passed(&self) -> bool {
        self.failed.is_empty()
            && self.mcp_failed.is_empty()
            && self.errors == 0
            && self.nonconformant == 0
            && self.findings_failed.is_empty()
            && self.unreadable.is_empty()
            && self.turns == self.locust_turns
    }
}

/// Reads DIR's Locust statistics and recordings. An error when neither is there.
pub fn read(dir: &Path) -> Result<Report, String> {
    let stats = dir.join("stats_stats.csv");
    let failures = dir.join("stats_failures.csv");
    let recordings = dir.join("recordings");
    if !stats.exists() && !recordings.is_dir() {
        return Err(format!(
            "{} has neither Locust's statistics (stats_stats.csv: run locust with --csv {}/stats) nor recordings/",
            dir.display(),
            dir.display()
        ));
    }
    let mut report = Report {
        dir: dir.display().to_string(),
        recordings: 0,
        turns: 0,
        locust_turns: 0,
        turns_per_s: 0.0,
        p50_ms: 0.0,
        p90_ms: 0.0,
        p99_ms: 0.0,
        max_ms: 0.0,
        per_kind: BTreeMap::new(),
        steps: Vec::new(),
        mcp: Vec::new(),
        failed: Vec::new(),
        failed_expectations: 0,
        mcp_failed: Vec::new(),
        errors: 0,
        nonconformant: 0,
        by_rule: BTreeMap::new(),
        findings_failed: Vec::new(),
        notes: Vec::new(),
        unreadable: Vec::new(),
    };
    if stats.exists() {
        for row in read_stats(&stats)? {
            if row.kind.is_empty() && row.name == "Aggregated" {
                continue;
            }
            if row.kind == "MCP" {
                report.mcp.push(row);
            } else {
                report.locust_turns += row.requests;
                report.turns_per_s += row.per_s;
                report.steps.push(row);
            }
        }
    } else {
        report
            .unreadable
            .push(format!("{}: not there", stats.display()));
    }
    if failures.exists() {
        for f in read_failures(&failures)? {
            if f.kind == "MCP" {
                report.mcp_failed.push(f);
            } else {
                report.failed_expectations += f.occurrences;
                report.failed.push(f);
            }
        }
    }
    read_recordings(&recordings, &mut report);
    Ok(report)
}

fn csv_reader(path: &Path) -> Result<csv::Reader<std::fs::File>, String> {
    csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A column's index by its header, or an error naming the file and the column.
fn column(headers: &csv::StringRecord, name: &str, path: &Path) -> Result<usize, String> {
    headers.iter().position(|h| h == name).ok_or_else(|| {
        format!(
            "{}: no column {name:?} (is it Locust's --csv output?)",
            path.display()
        )
    })
}

fn read_stats(path: &Path) -> Result<Vec<Row>, String> {
    let mut reader = csv_reader(path)?;
    let headers = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let at = |name| column(&headers, name, path);
    let (kind, name, requests, failures, median, p95, p99, per_s) = (
        at("Type")?,
        at("Name")?,
        at("Request Count")?,
        at("Failure Count")?,
        at("50%")?,
        at("95%")?,
        at("99%")?,
        at("Requests/s")?,
    );
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
        let get = |i: usize| record.get(i).unwrap_or_default();
        let number = |i: usize| get(i).parse::<f64>().ok();
        let count = |i: usize| {
            get(i).parse::<u64>().map_err(|_| {
                format!(
                    "{}: line {}: {:?} is not a count",
                    path.display(),
                    line + 2,
                    get(i)
                )
            })
        };
        rows.push(Row {
            kind: get(kind).to_owned(),
            name: get(name).to_owned(),
            requests: count(requests)?,
            failures: count(failures)?,
            median_ms: number(median),
            p95_ms: number(p95),
            p99_ms: number(p99),
            per_s: number(per_s).unwrap_or(0.0),
        });
    }
    Ok(rows)
}

fn read_failures(path: &Path) -> Result<Vec<Failed>, String> {
    let mut reader = csv_reader(path)?;
    let headers = reader
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let at = |name| column(&headers, name, path);
    let (kind, name, error, occurrences) =
        (at("Method")?, at("Name")?, at("Error")?, at("Occurrences")?);
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("{}: {e}", path.display()))?;
        let get = |i: usize| record.get(i).unwrap_or_default().to_owned();
        out.push(Failed {
            kind: get(kind),
            name: get(name),
            reason: unwrap_reason(&get(error)),
            occurrences: get(occurrences).parse().unwrap_or(0),
        });
    }
    Ok(out)
}

/// A failure's reason as the worker said it (Locust keeps a CatchResponseError's wrapper).
fn unwrap_reason(error: &str) -> String {
    error
        .strip_prefix("CatchResponseError(")
        .and_then(|e| e.strip_suffix(')'))
        .unwrap_or(error)
        .to_owned()
}

/// The recordings' files, in name order.
fn recording_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Every recording judged: each turn's latency by Kind, and its findings against what its
/// step expects.
fn read_recordings(dir: &Path, report: &mut Report) {
    let mut tally = Tally::new();
    for path in recording_files(dir) {
        report.recordings += 1;
        read_recording(&path, report, &mut tally);
    }
    tally.into_report(report);
}

/// One recording's turns, each judged as the dialogues it holds interleave; what cannot be
/// read of it is said in `unreadable`.
fn read_recording(path: &Path, report: &mut Report, tally: &mut Tally) {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            report
                .unreadable
                .push(format!("{}: cannot read: {e}", path.display()));
            return;
        }
    };
    let verdicts = std::cell::RefCell::new(Verdicts::interleaved(None));
    let mut each = |t: crate::session::stream::StreamedTurn| {
        tally.turn(report, &mut verdicts.borrow_mut(), t);
    };
    let source = std::io::BufReader::with_capacity(256 * 1024, file);
    let mut closed = |d: usize| verdicts.borrow_mut().close(d);
    let read = journal::for_each_turn(source, &mut each, &mut closed);
    match read {
        Ok(reading) => {
            report.notes.extend(reading.notes);
            for d in reading.damaged {
                report.unreadable.push(format!("{}: {d}", path.display()));
            }
        }
        Err(e) => report.unreadable.push(format!("{}: {e}", path.display())),
    }
}

/// What the recordings add up to as they are read: latencies, overall and by Kind, and the
/// steps whose findings differ from what they expect (with how often).
struct Tally {
    all: Histogram<u64>,
    per_kind: BTreeMap<String, Histogram<u64>>,
    /// (scenario, step, expected, got) -> occurrences.
    findings_failed: BTreeMap<(String, String, String, String), u64>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            all: histogram(),
            per_kind: BTreeMap::new(),
            findings_failed: BTreeMap::new(),
        }
    }

    /// One turn: its latency, its reply, and its findings judged against its step's.
    fn turn(
        &mut self,
        report: &mut Report,
        verdicts: &mut Verdicts,
        t: crate::session::stream::StreamedTurn,
    ) {
        report.turns += 1;
        let kind = kind_of(&t);
        let micros = (t.latency_ms * 1000.0).round().max(1.0) as u64;
        let _ = self.all.record(micros);
        let _ = self
            .per_kind
            .entry(kind)
            .or_insert_with(histogram)
            .record(micros);
        if matches!(t.reply, StreamedReply::Nothing) {
            report.errors += 1;
        }
        let found = verdicts.streamed(&t);
        let checks: Vec<Check> = found
            .request
            .iter()
            .chain(&found.response)
            .chain(&t.binding)
            .map(|f| f.check)
            .collect();
        let expected = t
            .step
            .as_ref()
            .map_or(Conformance::Conforms, |s| s.conformance.clone());
        if let (Some((want, got)), Some(step)) =
            (findings_missed(&expected, &checks, report), &t.step)
        {
            *self
                .findings_failed
                .entry((step.scenario.clone(), step.name.clone(), want, got))
                .or_default() += 1;
        }
    }

    /// The latencies' percentiles and the failed findings, into the report.
    fn into_report(self, report: &mut Report) {
        let overall = Latency::of(&self.all);
        (report.p50_ms, report.p90_ms, report.p99_ms, report.max_ms) = (
            overall.p50_ms,
            overall.p90_ms,
            overall.p99_ms,
            overall.max_ms,
        );
        report.per_kind = self
            .per_kind
            .iter()
            .map(|(k, h)| (k.clone(), Latency::of(h)))
            .collect();
        report.findings_failed = self
            .findings_failed
            .into_iter()
            .map(
                |((scenario, step, expected, got), occurrences)| FindingsFailed {
                    scenario,
                    step,
                    expected,
                    got,
                    occurrences,
                },
            )
            .collect();
    }
}

/// A turn's findings (`checks`) against what its step expects: (expected, got) where they
/// differ. A turn expected to conform that does not counts as nonconformant, by rule.
fn findings_missed(
    expected: &Conformance,
    checks: &[Check],
    report: &mut Report,
) -> Option<(String, String)> {
    let names: Vec<&str> = checks.iter().map(|c| c.as_str()).collect();
    match expected {
        Conformance::Conforms => {
            if !checks.is_empty() {
                report.nonconformant += 1;
                for c in checks {
                    *report.by_rule.entry(c.as_str().to_owned()).or_default() += 1;
                }
            }
            None
        }
        Conformance::NotConforming => checks
            .is_empty()
            .then(|| ("a finding".to_owned(), "none".to_owned())),
        Conformance::Findings(wanted) => {
            let differs = wanted.iter().any(|w| !names.contains(&w.as_str()))
                || names.iter().any(|n| !wanted.iter().any(|w| w == n));
            differs.then(|| {
                (
                    wanted.join(", "),
                    if names.is_empty() {
                        "no finding".to_owned()
                    } else {
                        names.join(", ")
                    },
                )
            })
        }
        Conformance::NotAsked => None,
    }
}

/// A turn's Kind, as `load` names it: BKN-DAC's Kind, `feedback` for BKN-USR.
fn kind_of(t: &crate::session::stream::StreamedTurn) -> String {
    let usr = t.interface == Some(Interface::Usr)
        || t.request.get("Header").and_then(|h| h.as_str()) == Some(Interface::Usr.header());
    if usr {
        return "feedback".into();
    }
    t.request
        .get("Kind")
        .and_then(|k| k.as_str())
        .unwrap_or("?")
        .to_owned()
}

/// The summary for people.
pub fn text(r: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "load report: {} ({} recording{})",
        r.dir,
        r.recordings,
        if r.recordings == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        out,
        "  {} turns recorded, {} counted by Locust{}: {:.0} turns/s",
        r.turns,
        r.locust_turns,
        if r.turns == r.locust_turns {
            ""
        } else {
            " (they differ: Locust writes its CSV files each second, so a run ended by --run-time or Ctrl-C leaves out its last second; else a recording is missing)"
        },
        r.turns_per_s
    );
    latency_table(&mut out, r);
    steps_table(&mut out, r);
    failures(&mut out, r);
    out
}

/// The recorded latencies, all turns and by Kind.
fn latency_table(out: &mut String, r: &Report) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "  {:<32} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "latency (ms), recorded", "p50", "p90", "p99", "max", "turns"
    );
    let _ = writeln!(
        out,
        "  {:<32} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8}",
        "all", r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms, r.turns
    );
    for (kind, l) in &r.per_kind {
        let _ = writeln!(
            out,
            "  {:<32} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8}",
            kind, l.p50_ms, l.p90_ms, l.p99_ms, l.max_ms, l.turns
        );
    }
}

/// Locust's own figures for each step, where its CSV files were read.
fn steps_table(out: &mut String, r: &Report) {
    use std::fmt::Write;
    if !r.steps.is_empty() {
        let _ = writeln!(
            out,
            "  {:<44} {:<20} {:>8} {:>8} {:>7} {:>7}",
            "step (Locust)", "Kind", "requests", "failures", "p50", "p99"
        );
        for s in &r.steps {
            let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0}"));
            let _ = writeln!(
                out,
                "  {:<44} {:<20} {:>8} {:>8} {:>7} {:>7}",
                s.name,
                s.kind,
                s.requests,
                s.failures,
                ms(s.median_ms),
                ms(s.p99_ms)
            );
        }
    }
}

/// What went wrong: failed expectations, unanswered and nonconformant turns, Locust's and
/// MCP's failures, notes and what could not be read.
fn failures(out: &mut String, r: &Report) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "  failed expectations {}, turns without a reply {}, nonconformant {}",
        r.failed_expectations, r.errors, r.nonconformant
    );
    for f in &r.failed {
        let _ = writeln!(
            out,
            "  ✗ {} ({}) ×{}: {}",
            f.name, f.kind, f.occurrences, f.reason
        );
    }
    for f in &r.findings_failed {
        let _ = writeln!(
            out,
            "  ✗ {} ({}) ×{}: findings: expected {}, got {}",
            f.step, f.scenario, f.occurrences, f.expected, f.got
        );
    }
    for (rule, n) in &r.by_rule {
        let _ = writeln!(out, "  nonconformant: {rule} ×{n}");
    }
    for f in &r.mcp_failed {
        let _ = writeln!(out, "  ✗ MCP {} ×{}: {}", f.name, f.occurrences, f.reason);
    }
    for n in &r.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    for u in &r.unreadable {
        let _ = writeln!(out, "  unreadable: {u}");
    }
}
