//! Scenarios on Locust's distributed workers (issue 30).
//!
//! - The workers' judge (`bkn_judge.py`) and this program's (`scenario::expect`) give the same
//!   verdicts, failures and words on the same cases, and fill Requests and captures alike: the
//!   one source of truth is the scenario, read here and exported as data; this test keeps the
//!   two interpreters of it in step (plain `python3`, no Locust needed).
//! - Locust for real (installed from the package registry into a cache outside the repository
//!   by tests/peers/locust/install.sh; skipped with the reason printed where it cannot be):
//!   the shipped scenarios exported and run headless by a master and two worker processes
//!   against `serve dac --http` and `serve usr --http` in both MCP generations for a bounded
//!   number of iterations; the recordings hold what Locust counted and conform; a server with
//!   a changed domain fails the expectations it breaks, with their reasons, in Locust's
//!   failure statistics; a server that dies mid-run costs failures with the reason, and the
//!   recordings stay whole and valid up to it.

use crate::common;

use bkn_explorer::client::turn::{ErrorKind, Reply, Subject, Turn, TurnError, TurnFinding};
use bkn_explorer::protocol::conformance::{Check, Finding};
use bkn_explorer::protocol::message::{CommonDefaults, Fill, fill_request};
use bkn_explorer::protocol::raw::RawJson;
use bkn_explorer::protocol::{Interface, Requirement};
use bkn_explorer::scenario;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Says on the terminal, past the test harness's capture, why a test did not run.
fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "test {test}: SKIPPED: {why}");
}

/// The system's python3, for the judge alone (standard library only).
fn python3() -> Option<PathBuf> {
    common::python3().map(PathBuf::from)
}

// --- The two judges in step -----------------------------------------------------------------

/// Scenarios that use every expectation a worker judges, and every matcher.
const DAC: &str = r#"
name: judges
interface: dac
steps:
  - request: {Kind: feasibility}
    expect:
      outcome: [answered, partially_answered]
      values:
        /Answer/Text: {matches: "^c[0-9] (conflicts|is kept)"}
        /Answer/ObjectClasses/0/Class: Kiosk
        /Answer/ObjectClasses/0/Confidence: {between: [0.5, 1]}
        /Answer/ObjectClasses/1: {Class: Stage, Confidence: 0.75}
        /Answer/Constraints: [no music after ten, "one kiosk"]
        /TurnIndex: {min: 1}
        /RequestID: {max: 3}
        /SourcesUsed: {present: true}
        /Failure: {present: false}
        /Outcome: {one_of: [answered, 2]}
        /Answer/Relations: {equals: null}
      feasibility: {steps: [Ack, Clash, InsRights], overall: partially_feasible}
      commitments: {c1: retained, c2: conflicting, c9: released}
      latency_ms: 20
  - request: {Kind: groundng}
    expect:
      tool_error: {matches: "Kind must be one of"}
  - request: {Kind: constraints}
    expect:
      tool_error: true
      latency_ms: {max: 0.5}
"#;

const USR: &str = r#"
name: judges of a user
interface: usr
steps:
  - request: {UserID: "User#Ana", Feedback: {Hypothesis: h}}
    expect:
      conforms: true
      user_state:
        /Emotion: curious
        /Intentions/0/Confidence: {min: 0.6}
        /Answer/Text: {matches: "(?i)ATTEND"}
      engagement: {level: {between: [0.5, 0.8]}, mode: interactive}
"#;

/// Responses the cases are judged on: some meet the expectations, some break each in its own
/// way (absent, another type, another number's kind, a longer list, an object missing a key).
fn dac_responses() -> Vec<Value> {
    let good = json!({
        "Outcome": "answered", "TurnIndex": 2, "RequestID": 3, "SourcesUsed": ["domain"],
        "Answer": {"Text": "c2 conflicts with the square",
            "ObjectClasses": [{"Class": "Kiosk", "Confidence": 0.9}, {"Class": "Stage", "Confidence": 0.75}],
            "Constraints": ["no music after ten", "one kiosk"], "Relations": null},
        "Feasibility": {"Overall": "partially_feasible", "Steps": [
            {"Step": 0, "PAStatus": "Ack"}, {"Step": 1, "PAStatus": "Clash"}, {"Step": 2, "PAStatus": "InsRights"}]},
        "CommitmentStatus": [{"CommitmentID": "c1", "Status": "retained"},
            {"CommitmentID": "c2", "Status": "conflicting"}, {"CommitmentID": "c9", "Status": "released"}]
    });
    let mut bad = good.clone();
    bad["Outcome"] = json!("not_answered");
    bad["TurnIndex"] = json!(0.5);
    bad["RequestID"] = json!("3");
    bad["Failure"] = json!({"Nature": "transient"});
    bad["Answer"]["Text"] = json!("nothing about commitments");
    bad["Answer"]["ObjectClasses"] = json!([{"Class": "Bench", "Confidence": true},
        {"Class": "Stage", "Confidence": 0.5, "Extra": 1}]);
    bad["Answer"]["Constraints"] = json!(["no music after ten", "one kiosk", "a third"]);
    bad["Answer"]["Relations"] = json!([]);
    bad["Feasibility"]["Steps"] = json!([{"Step": 0, "PAStatus": "Ack"}, {"Step": 1}]);
    bad["Feasibility"]["Overall"] = json!(7);
    bad["CommitmentStatus"] =
        json!([{"CommitmentID": "c1", "Status": "released"}, {"CommitmentID": "c2"}]);
    let mut odd = good.clone();
    odd["Outcome"] = json!(2);
    odd["TurnIndex"] = json!(2.0);
    odd["Answer"]["ObjectClasses"][1] = json!({"Class": "Stage", "Confidence": 0.75});
    odd["Answer"]["Constraints"] = json!("no music after ten");
    odd["Feasibility"] = json!({"Steps": "none"});
    odd.as_object_mut().unwrap().remove("SourcesUsed");
    odd.as_object_mut().unwrap().remove("CommitmentStatus");
    // On the edges of the ranges: they hold.
    let mut edge = good.clone();
    edge["Answer"]["ObjectClasses"][0]["Confidence"] = json!(0.5);
    edge["TurnIndex"] = json!(1);
    edge["RequestID"] = json!(3.0);
    vec![good, bad, odd, edge, json!({}), json!([1, 2])]
}

fn usr_responses() -> Vec<Value> {
    let good = json!({"Outcome": "answered",
        "RefinedUserState": {"Emotion": "curious", "Intentions": [{"Intent": "attend", "Confidence": 0.7}],
            "Answer": {"Text": "she wants to attend"}},
        "Engagement": {"Level": 0.6, "Mode": "interactive"}});
    let mut bad = good.clone();
    bad["RefinedUserState"]["Emotion"] = json!(["curious"]);
    bad["RefinedUserState"]["Intentions"] = json!([{"Intent": "leave", "Confidence": 0.2}]);
    bad["RefinedUserState"]["Answer"] = json!({"Text": 12});
    bad["Engagement"] = json!({"Level": "high", "Mode": "passive"});
    let mut edge = good.clone();
    edge["Engagement"]["Level"] = json!(0.8);
    edge["RefinedUserState"]["Intentions"][0]["Confidence"] = json!(0.6);
    vec![good, bad, edge, json!({"Outcome": "answered"})]
}

/// A turn as this program keeps it, and as the worker's judge reads it.
struct Case {
    turn: Turn,
    response: Option<Value>,
    python: Value,
}

fn case(reply: Reply, latency_ms: f64, binding: bool) -> Case {
    let response = match &reply {
        Reply::Response(r) => Some(r.value()),
        _ => None,
    };
    let (kind, text) = match &reply {
        Reply::Response(_) => ("response", String::new()),
        Reply::ToolError(t) => ("tool_error", t.clone()),
        Reply::Error(e) => ("error", e.message.clone()),
    };
    let finding = Finding::new(
        "",
        Requirement::Binding,
        Check::TextBlock,
        bkn_explorer::client::dialogue::TEXT_BLOCK_DIFFERS,
    );
    let findings: Vec<TurnFinding> = if binding {
        vec![TurnFinding {
            on: Subject::Response,
            finding: finding.clone(),
        }]
    } else {
        Vec::new()
    };
    let python_findings: Vec<Value> = findings
        .iter()
        .map(|f| json!({"pointer": f.finding.pointer, "display": f.finding.to_string()}))
        .collect();
    Case {
        turn: Turn {
            request: RawJson::from_value(&json!({})),
            reply,
            findings,
            sent: String::new(),
            received: None,
            latency_ms,
            new_session: false,
            asked: Vec::new(),
        },
        response,
        python: json!({"reply": kind, "text": text, "latencyMs": latency_ms, "findings": python_findings}),
    }
}

fn cases(responses: Vec<Value>) -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    for (i, r) in responses.into_iter().enumerate() {
        out.push(case(
            Reply::Response(RawJson::from_value(&r)),
            [3.0, 25.5, 0.25][i % 3],
            i == 1,
        ));
    }
    for text in [
        "/Kind: Kind must be one of semantic_grounding, …",
        "no\nsecond line",
    ] {
        out.push(case(Reply::ToolError(text.into()), 1.0, false));
    }
    out.push(case(
        Reply::Error(TurnError {
            kind: ErrorKind::Gone,
            message: "the connection is gone".into(),
        }),
        0.0,
        false,
    ));
    out
}

/// Runs the worker's judge on `cases` (judge_cases.py); None when there is no python3.
fn python_says(cases: &[Value]) -> Option<Vec<Value>> {
    let python = python3()?;
    let mut child = Command::new(python)
        .arg(root().join("tests/peers/locust/judge_cases.py"))
        .arg(root().join("src/scenario/locust"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let input = serde_json::to_vec(cases).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "judge_cases.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("judge_cases.py prints JSON"))
}

/// The Rust judge's failures as the worker's judge writes them.
fn rust_says(expect: &[scenario::expect::Expectation], c: &Case) -> Value {
    let failures = scenario::expect::judge(expect, &c.turn, c.response.as_ref());
    Value::Array(
        failures
            .into_iter()
            .map(|f| {
                json!({"expectation": f.expectation, "pointer": f.pointer, "expected": f.expected, "actual": f.actual})
            })
            .collect(),
    )
}

#[test]
fn the_workers_judge_gives_the_verdicts_and_words_of_bkn_explorers() {
    let mut inputs: Vec<Value> = Vec::new();
    let mut wanted: Vec<Value> = Vec::new();
    let mut judged = 0;
    for (text, responses) in [(DAC, dac_responses()), (USR, usr_responses())] {
        let s = scenario::parse(text, Path::new("judges.yaml")).expect("the cases' scenario reads");
        let cases = cases(responses);
        for step in &s.steps {
            let exported: Vec<Value> = step
                .expect
                .iter()
                .map(scenario::locust::expectation)
                .collect();
            for c in &cases {
                inputs.push(json!({"what": "judge", "expect": exported, "turn": c.python, "response": c.response}));
                wanted.push(rust_says(&step.expect, c));
                judged += 1;
            }
        }
    }
    // Requests filled alike: the common fields, in the order of Table 1, what is given kept.
    let defaults = CommonDefaults::default();
    let givens = [
        json!({"Kind": "constraints", "EntityIDs": ["Kiosk#3"]}),
        json!({"Kind": "feasibility", "MInstance": "MI:Other", "TurnIndex": 9, "DescrMetadata": "d", "Z": 1}),
        json!({"UserID": "User#Ana", "DataXMData": {"Source": [{"AIMID": "X"}]}, "Header": "PGM-KUS-V1.0"}),
    ];
    for given in &givens {
        inputs.push(
            json!({"what": "fill", "given": given, "header": "PGM-KDA-V1.0",
            "dialogID": "d1", "turnIndex": 3, "defaults": {
                "MInstance": defaults.m_instance, "UEnvironment": defaults.u_environment,
                "SessionID": defaults.session_id, "AIMID": defaults.aim_id}}),
        );
        let mut object = given.as_object().unwrap().clone();
        fill_request(
            &mut object,
            Interface::Dac,
            "d1",
            3,
            &defaults,
            Fill::Missing,
        );
        wanted.push(Value::Object(object));
    }
    // Captures written in alike: a whole placeholder keeps its value's type.
    let captured: HashMap<String, Value> = [
        ("n".to_owned(), json!(2)),
        ("s".to_owned(), json!("Kiosk")),
        ("o".to_owned(), json!({"a": [1, "x"]})),
    ]
    .into();
    let request = json!({"A": "{{n}}", "B": " {{ s }} ", "C": "the {{s}} at {{n}} {{o}}",
        "D": ["{{o}}", {"E": "{{missing}}"}], "F": 1.5});
    inputs.push(json!({"what": "captures", "request": request, "captured": captured}));
    wanted.push(Value::Object(scenario::run::fill_captures(
        request.as_object().unwrap(),
        &captured,
    )));

    let Some(said) = python_says(&inputs) else {
        skipped(
            "the_workers_judge_gives_the_verdicts_and_words_of_bkn_explorers",
            "no python3 on PATH",
        );
        return;
    };
    assert_eq!(said.len(), wanted.len());
    let failures: usize = wanted
        .iter()
        .take(judged)
        .map(|w| w.as_array().map_or(0, Vec::len))
        .sum();
    assert!(
        failures > 40,
        "the cases break many expectations ({failures})"
    );
    for (i, (said, wanted)) in said.iter().zip(&wanted).enumerate() {
        let (said, wanted) = if i >= judged && i < judged + givens.len() {
            (fill_shape(said), fill_shape(wanted))
        } else {
            (said.clone(), wanted.clone())
        };
        assert_eq!(
            said, wanted,
            "case {i}: the worker's judge (left) and bkn-explorer's (right) differ\ninput: {:#}",
            inputs[i]
        );
    }
}

/// A filled Request with what is made afresh each time (QueryID, QueryTime, DataID) replaced
/// by what it looks like, the order of its keys kept.
fn fill_shape(v: &Value) -> Value {
    let mut v = v.clone();
    let obj = v.as_object_mut().unwrap();
    assert_eq!(obj["QueryID"].as_str().unwrap().len(), 36, "{obj:?}");
    obj["QueryID"] = json!("uuid");
    assert!(obj["QueryTime"].as_str().unwrap().ends_with('Z'));
    assert_eq!(obj["QueryTime"].as_str().unwrap().len(), 24);
    obj["QueryTime"] = json!("time");
    if let Some(id) = obj["DataXMData"].get_mut("DataID") {
        *id = json!("uuid");
    }
    let keys: Vec<Value> = obj.keys().map(|k| json!(k)).collect();
    json!({"keys": keys, "value": v})
}

// --- Locust for real --------------------------------------------------------------------------

/// Locust's bin folder (tests/peers/locust/install.sh makes it once), or why there is none.
fn locust() -> Result<PathBuf, String> {
    static BIN: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if python3().is_none() {
            return Err("no python3 on PATH".into());
        }
        let pinned = std::fs::read_to_string(root().join("tests/peers/locust/requirements.txt"))
            .expect("the pins are there");
        assert!(
            pinned.lines().any(|l| l.trim() == scenario::locust::LOCUST),
            "tests/peers/locust/requirements.txt pins the Locust an export pins ({})",
            scenario::locust::LOCUST
        );
        let out = Command::new(root().join("tests/peers/locust/install.sh"))
            .output()
            .map_err(|e| format!("tests/peers/locust/install.sh did not run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "Locust could not be installed from the package registry: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let bin = PathBuf::from(stdout.lines().last().unwrap_or_default().trim());
        if !bin.join("locust").exists() {
            return Err(format!("install.sh printed no Locust: {stdout}"));
        }
        Ok(bin)
    })
    .clone()
}

/// The project exported for `scenarios` against `url`, in a new folder.
fn export(scenarios: &[&str], url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["load".into()];
    args.extend(
        scenarios
            .iter()
            .map(|s| root().join("scenarios").join(s).display().to_string()),
    );
    args.extend(["--export", "locust", "--url", url, "-o"].map(String::from));
    args.push(dir.path().display().to_string());
    let out = Command::new(common::bin()).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "the export: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Runs Locust headless in `project` (a master and two worker processes); returns its exit
/// code and log. `until` is called while it runs.
fn run_locust(bin: &Path, project: &Path, args: &[&str], mut until: impl FnMut()) -> (i32, String) {
    // One Locust run at a time (three processes each, beside a server, on CI's 2 cores): the
    // scenario's latency expectation (500 ms) is not to be broken by the tests' own crowd.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let log = project.join("locust.log");
    let mut child = Command::new(bin.join("locust"))
        .current_dir(project)
        .args([
            "--headless",
            "--processes",
            "2",
            "--csv",
            "stats",
            "--only-summary",
        ])
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("BKN_RECORDINGS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its log, the master's and the workers' (all on standard error), for failures.
        .stderr(std::fs::File::create(&log).expect("the log file"))
        .spawn()
        .expect("locust starts");
    // Bounded: a run that does not end is killed and fails the test.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "Locust did not end in 120 s: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        until();
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status.code().unwrap_or(-1),
        std::fs::read_to_string(&log).unwrap_or_default(),
    )
}

/// `bkn-explorer ARGS`: exit code and standard output.
fn explorer(args: &[&str]) -> (i32, String) {
    let out = Command::new(common::bin()).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn recordings(project: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(project.join("recordings"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn report(project: &Path) -> (i32, Value) {
    let (code, out) = explorer(&[
        "load",
        "--report",
        &project.display().to_string(),
        "--format",
        "json",
    ]);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_scenarios_run_on_locusts_workers_in_both_generations() {
    let bin = match locust() {
        Ok(bin) => bin,
        Err(why) => {
            return skipped(
                "the_shipped_scenarios_run_on_locusts_workers_in_both_generations",
                &why,
            );
        }
    };
    const USERS: u64 = 4;
    const ITERATIONS: u64 = 3;
    // The third goes on in a new session (a new dialogue from TurnIndex 0 over 2026-07-28).
    let new_session = root().join("tests/fixtures/scenarios/new-session.yaml");
    let new_session = new_session.to_str().unwrap();
    for (which, file, steps) in [
        ("dac", "dac-kiosk.yaml", 5),
        ("usr", "usr-ana.yaml", 3),
        ("dac", new_session, 2),
    ] {
        let server = common::spawn_http(&[which.to_owned()]).await;
        for generation in ["2025-11-25", "2026-07-28"] {
            let project = export(&[file], &server.url);
            let bin = bin.clone();
            let dir = project.path().to_owned();
            // usr-ana's answers depend on the dialogue's history: a new dialogue each time.
            let fresh = which == "usr" || file == new_session;
            let (code, log) = tokio::task::spawn_blocking(move || {
                let mut args = vec!["-u", "4", "-r", "100", "--iterations", "3"];
                args.extend(["--mcp-protocol", generation]);
                if fresh {
                    args.push("--fresh");
                }
                run_locust(&bin, &dir, &args, || {})
            })
            .await
            .unwrap();
            let what = format!("{which} over {generation}");
            assert_eq!(code, 0, "{what}: Locust failed:\n{log}");
            let (code, r) = report(project.path());
            assert_eq!(code, 0, "{what}: the report: {r:#}");
            let expected = USERS * ITERATIONS * steps;
            assert_eq!(r["turns"], expected, "{what}: recorded: {r:#}");
            assert_eq!(r["locust_turns"], expected, "{what}: Locust counted: {r:#}");
            assert_eq!(r["nonconformant"], 0, "{what}: {r:#}");
            assert_eq!(r["failed_expectations"], 0, "{what}: {r:#}");
            assert!(
                r["mcp_failed"].as_array().unwrap().is_empty(),
                "{what}: {r:#}"
            );
            // One recording per worker process, each a journal `validate` reads; the only
            // findings are those of dac-kiosk's negative step (a misspelt Kind on purpose).
            let files = recordings(project.path());
            assert_eq!(
                files.len(),
                2,
                "{what}: one recording per worker: {files:?}"
            );
            let mut args = vec!["validate", "--format", "json"];
            args.extend(files.iter().map(String::as_str));
            let (code, out) = explorer(&args);
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["summary"]["unreadable"], 0, "{what}: {out}");
            let findings: Vec<&Value> = v["files"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|f| f["findings"].as_array().unwrap())
                .collect();
            match which {
                "dac" if file != new_session => {
                    assert_eq!(code, 1, "{what}: {out}");
                    assert_eq!(findings.len() as u64, USERS * ITERATIONS, "{what}: {out}");
                    assert!(
                        findings
                            .iter()
                            .all(|f| f["check"] == "schema.enum" && f["on"] == "request"),
                        "{what}: only the misspelt Kind: {out}"
                    );
                }
                _ => assert_eq!(code, 0, "{what}: all conform: {out}"),
            }
            // Locust's statistics are per step, typed by Kind.
            let steps_seen: Vec<&str> = r["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap())
                .collect();
            assert_eq!(steps_seen.len() as u64, steps, "{what}: {steps_seen:?}");
        }
    }
}

/// The reference Domain Access with a poorer requester (3 MPAI-Credit instead of 12): the
/// plan's first step is then InsValue (as tests/scenarios.rs checks for `test`).
fn poorer_domain(dir: &Path) -> PathBuf {
    let mut domain: Value =
        serde_json::from_str(bkn_explorer::server::dac::domain::DEFAULT_DOMAIN).unwrap();
    domain["Requester"]["Wallet"]["Amount"] = 3.into();
    let path = dir.join("poorer.json");
    std::fs::write(&path, domain.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_domain_fails_the_expectations_it_breaks_in_locusts_failures() {
    let bin = match locust() {
        Ok(bin) => bin,
        Err(why) => {
            return skipped(
                "a_changed_domain_fails_the_expectations_it_breaks_in_locusts_failures",
                &why,
            );
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let domain = poorer_domain(dir.path());
    let server = common::spawn_http(&[
        "dac".to_owned(),
        "--domain".to_owned(),
        domain.display().to_string(),
    ])
    .await;
    let project = export(&["dac-kiosk.yaml"], &server.url);
    let path = project.path().to_owned();
    let (code, log) = tokio::task::spawn_blocking(move || {
        run_locust(
            &bin,
            &path,
            &["-u", "2", "-r", "100", "--iterations", "2"],
            || {},
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 1, "failures make Locust exit 1:\n{log}");
    let failures = std::fs::read_to_string(project.path().join("stats_failures.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(failures.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1, "one failing step, one reason: {failures}");
    let row = &rows[0];
    assert_eq!(&row[0], "feasibility", "its Kind: {failures}");
    assert_eq!(&row[1], "a plan that breaks the commitment", "{failures}");
    assert!(
        row[2].starts_with(
            "/Feasibility/Steps/0/PAStatus: expected [Ack, Clash, InsRights], got [InsValue"
        ),
        "the reason, as test says it: {failures}"
    );
    assert_eq!(&row[3], "4", "every time through (2 users × 2): {failures}");
    let (code, r) = report(project.path());
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["failed_expectations"], 4, "{r:#}");
    assert_eq!(r["turns"], r["locust_turns"], "{r:#}");
    assert_eq!(r["nonconformant"], 0, "{r:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_costs_failures_with_the_reason_and_the_recordings_stay_valid() {
    let bin = match locust() {
        Ok(bin) => bin,
        Err(why) => {
            return skipped(
                "a_server_that_dies_costs_failures_with_the_reason_and_the_recordings_stay_valid",
                &why,
            );
        }
    };
    let mut server = common::spawn_http(&["usr".to_owned()]).await;
    let project = export(&["usr-ana.yaml"], &server.url);
    let path = project.path().to_owned();
    // The server is killed once the workers have recorded some turns; the users go on through
    // their iterations against nothing (a short pause after each loss).
    let (code, log) = tokio::task::spawn_blocking(move || {
        let mut killed = false;
        let files = path.clone();
        let child = &mut server.child;
        run_locust(
            &bin,
            &path,
            &["-u", "2", "-r", "100", "--iterations", "40", "--fresh"]
                .into_iter()
                .chain(["--pause-after-loss", "0.05"])
                .collect::<Vec<_>>(),
            || {
                if killed {
                    return;
                }
                let turns: usize = recordings(&files)
                    .iter()
                    .map(|f| {
                        std::fs::read_to_string(f)
                            .unwrap_or_default()
                            .matches("{\"turn\":")
                            .count()
                    })
                    .sum();
                if turns >= 12 {
                    child.start_kill().expect("the server is killed");
                    killed = true;
                }
            },
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 1, "failures make Locust exit 1:\n{log}");
    let failures = std::fs::read_to_string(project.path().join("stats_failures.csv")).unwrap();
    assert!(
        failures.contains("the server cannot be reached") || failures.contains("the connection"),
        "the reason is in Locust's failures: {failures}"
    );
    let (_, r) = report(project.path());
    assert!(r["turns"].as_u64().unwrap() >= 12, "{r:#}");
    assert_eq!(
        r["turns"], r["locust_turns"],
        "every counted turn recorded: {r:#}"
    );
    assert!(r["unreadable"].as_array().unwrap().is_empty(), "{r:#}");
    assert_eq!(r["nonconformant"], 0, "{r:#}");
    let files = recordings(project.path());
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let (code, out) = explorer(&args);
    assert_eq!(code, 0, "the recordings are whole and conform: {out}");
}

// --- What cannot be exported --------------------------------------------------------------------

#[test]
fn a_scenario_locust_cannot_drive_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("project");
    let shipped = root()
        .join("scenarios/dac-kiosk.yaml")
        .display()
        .to_string();
    let target = out.display().to_string();
    // Its own server is the embedded reference server (stdio): no URL, no project.
    let run = Command::new(common::bin())
        .args(["load", &shipped, "--export", "locust", "-o", &target])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not one Locust can drive") && err.contains("--url"),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert!(!out.exists(), "nothing was written");
    // A stdio server named on the command line: the same.
    let run = Command::new(common::bin())
        .args([
            "load",
            &shipped,
            "--export",
            "locust",
            "--stdio",
            "my-server --flag",
        ])
        .args(["-o", &target])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("stdio, my-server --flag"));
    assert!(!out.exists(), "nothing was written");
    // A regular expression Python's re reads otherwise: said with its step, nothing written.
    let scenario = dir.path().join("unicode.yaml");
    std::fs::write(
        &scenario,
        "steps:\n  - request: {Kind: constraints}\n    expect:\n      values:\n        /Answer/Text: {matches: '\\p{Lu}'}\n",
    )
    .unwrap();
    let run = Command::new(common::bin())
        .args([
            "load",
            &scenario.display().to_string(),
            "--export",
            "locust",
        ])
        .args(["--url", "http://127.0.0.1:9/mcp", "-o", &target])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("step 1") && err.contains("a Unicode class"),
        "{err}"
    );
    assert!(!out.exists(), "nothing was written");
    // A project is written once; again only with --force.
    let export = |force: bool| {
        let mut c = Command::new(common::bin());
        c.args(["load", &shipped, "--export", "locust"]).args([
            "--url",
            "http://127.0.0.1:9/mcp",
            "-o",
            &target,
        ]);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    assert!(export(false).status.success());
    let locustfile = std::fs::read_to_string(out.join("locustfile.py")).unwrap();
    assert!(locustfile.contains(&format!("bkn-explorer {}", env!("CARGO_PKG_VERSION"))));
    let requirements = std::fs::read_to_string(out.join("requirements.txt")).unwrap();
    assert!(requirements.lines().any(|l| l == scenario::locust::LOCUST));
    std::fs::write(out.join("locustfile.py"), "# mine").unwrap();
    let again = export(false);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(out.join("locustfile.py")).unwrap(),
        "# mine"
    );
    assert!(export(true).status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("locustfile.py")).unwrap(),
        locustfile
    );
}
