//! Dialogue tests as code, run as users run them: `bkn-explorer test` and `load` as processes
//! against the reference servers (stdio and HTTP), a server with a changed domain, the fault
//! server, and a third-party server in Python; the JUnit report checked against the schema CI
//! tools read; a recording turned into a test that passes against its server.

use crate::common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shipped(name: &str) -> String {
    root().join("scenarios").join(name).display().to_string()
}

/// Runs the program; returns the exit code, standard output and standard error.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::bin())
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("the program runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The reference Domain Access with a poorer requester (3 MPAI-Credit instead of 12).
fn poorer_domain(dir: &Path) -> String {
    let mut domain: Value =
        serde_json::from_str(bkn_explorer::server::dac::domain::DEFAULT_DOMAIN).unwrap();
    domain["Requester"]["Wallet"]["Amount"] = 3.into();
    let path = dir.join("poorer.json");
    std::fs::write(&path, domain.to_string()).unwrap();
    format!(
        "'{}' serve dac --domain '{}'",
        common::bin(),
        path.display()
    )
}

/// In each MCP generation (the dialogue's state in the MCP session, or kept by DialogID).
const GENERATIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[test]
fn the_shipped_scenarios_pass_on_the_reference_servers() {
    for protocol in GENERATIONS {
        let (code, out, err) = run(&[
            "test",
            &shipped("dac-kiosk.yaml"),
            &shipped("usr-ana.yaml"),
            "--protocol",
            protocol,
        ]);
        assert_eq!(code, 0, "{protocol}: {out}{err}");
        assert!(out.contains("2 of 2 runs passed"), "{protocol}: {out}");
    }
}

#[tokio::test]
async fn the_shipped_scenarios_pass_over_http() {
    for (which, file) in [("dac", "dac-kiosk.yaml"), ("usr", "usr-ana.yaml")] {
        let server = common::spawn_http(&[which.to_owned()]).await;
        for protocol in GENERATIONS {
            let (code, out, err) = tokio::task::spawn_blocking({
                let url = server.url.clone();
                move || {
                    run(&[
                        "test",
                        &shipped(file),
                        "--url",
                        &url,
                        "--protocol",
                        protocol,
                    ])
                }
            })
            .await
            .unwrap();
            assert_eq!(code, 0, "{which} {protocol}: {out}{err}");
        }
    }
}

#[test]
fn a_changed_domain_fails_the_expectations_it_breaks_and_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let poorer = poorer_domain(dir.path());
    let (code, out, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--stdio",
        &poorer,
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let steps = report["runs"][0]["steps"].as_array().unwrap();
    let failed: Vec<&Value> = steps.iter().filter(|s| s["passed"] == false).collect();
    assert_eq!(
        failed.len(),
        1,
        "only the plan depends on the wallet: {out}"
    );
    assert_eq!(failed[0]["index"], 3);
    let failure = &failed[0]["failures"][0];
    assert_eq!(
        failure["pointer"], "/Feasibility/Steps/0/PAStatus",
        "{failure}"
    );
    assert!(
        failure["actual"].as_str().unwrap().contains("InsValue"),
        "{failure}"
    );
    assert!(
        failed[0]["response"].is_object(),
        "the Response is in the report"
    );
}

/// The text report and JUnit keep only failing steps' turns (`Keep::Failing`): the failing
/// step still shows its Response, and every step its time.
#[test]
fn the_text_report_shows_the_failing_steps_response_and_every_steps_time() {
    let dir = tempfile::tempdir().unwrap();
    let poorer = poorer_domain(dir.path());
    let junit = dir.path().join("junit.xml");
    let (code, out, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--stdio",
        &poorer,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("4 of 5 steps passed"), "{out}");
    let failing = out
        .lines()
        .find(|l| l.trim_start().starts_with("✗ step 4"))
        .unwrap_or_else(|| panic!("the failing step is named: {out}"));
    assert!(failing.contains(" ms)"), "with its time: {failing}");
    assert!(out.contains("Response: {"), "and its Response: {out}");
    let xml = assert_junit(&junit);
    let times: Vec<f64> = xml
        .match_indices("time=\"")
        .skip(1) // the suite's
        .map(|(at, m)| {
            let rest = &xml[at + m.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    // A step that ran carries its time (a step not run has none), passing ones too, although
    // their turns are dropped. Not "more than 0": JUnit's times have three decimals, and a
    // step faster than half a millisecond (a Request the server refuses at once, any turn
    // of a release build) reads 0.000.
    assert_eq!(times.len(), 5, "one per step: {xml}");
    assert!(
        times.iter().all(|t| *t >= 0.0),
        "passing steps keep their time: {xml}"
    );
}

/// `Keep::Failing`: a passing step's turn is dropped once reported (its time kept); a failing
/// step's stays, for the report. The progress callback sees every turn.
#[tokio::test]
async fn a_run_told_to_keep_failing_turns_drops_the_passing_ones() {
    use bkn_explorer::client::connection::ConnectOptions;
    use bkn_explorer::client::defaults::Overrides;
    use bkn_explorer::client::spec::ServerSpec;
    use bkn_explorer::protocol::interface::Interface;
    use bkn_explorer::scenario::run::{Keep, Progress, run};
    let s = bkn_explorer::scenario::parse(
        r#"
steps:
  - request: {Kind: constraints, EntityIDs: [Kiosk#3], Space: {SpaceID: Space:Square}}
    expect: {outcome: answered}
  - request: {Kind: constraints, EntityIDs: [Kiosk#3], Space: {SpaceID: Space:Square}}
    expect: {outcome: not_answered}
"#,
        Path::new("t.yaml"),
    )
    .unwrap();
    let mut seen = 0;
    let out = run(
        &s,
        &ServerSpec::embedded(Interface::Dac),
        &ConnectOptions {
            embedded_program: Some(PathBuf::from(common::bin())),
            ..ConnectOptions::default()
        },
        &Overrides::default(),
        &tokio_util::sync::CancellationToken::new(),
        Keep::Failing,
        |p| {
            if let Progress::Step(step) = p {
                assert!(step.turn.is_some(), "reported with its turn");
                seen += 1;
            }
        },
    )
    .await;
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(seen, 2);
    let [passing, failing] = &out.steps[..] else {
        panic!("two steps")
    };
    assert!(passing.passed() && passing.turn.is_none());
    assert!(passing.latency_ms > 0.0, "its time is kept");
    assert!(!failing.passed() && failing.turn.is_some());
}

#[test]
fn servers_compared_side_by_side_differ_where_their_answers_do() {
    let dir = tempfile::tempdir().unwrap();
    let poorer = poorer_domain(dir.path());
    let (code, out, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--embedded",
        "dac",
        "--stdio",
        &poorer,
        "--compare",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let differing = report["differences"][0]["steps"].as_array().unwrap();
    assert_eq!(differing.len(), 1, "{out}");
    assert_eq!(differing[0]["step"], 3);
    let lines: Vec<&str> = differing[0]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("/Feasibility/Steps/0/PAStatus")),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("QueryID") || l.contains("DialogID")),
        "what always differs is left out: {lines:?}"
    );
    // The same server twice agrees with itself.
    let (code, out, _) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--embedded",
        "dac",
        "--embedded",
        "dac",
        "--compare",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the servers agree on every step"), "{out}");
}

/// The JUnit report validates against the schema of what CI tools read.
fn assert_junit(path: &Path) -> String {
    let xml = std::fs::read_to_string(path).expect("the JUnit report was written");
    let xsd = std::fs::read_to_string(root().join("tests/fixtures/junit/junit.xsd")).unwrap();
    let schema = xmlschema::parse_schema(&xsd).expect("the JUnit schema parses");
    let doc = oxml::parse(&xml).expect("the report is XML");
    let report = xmlschema::validate(&doc, &schema);
    assert!(report.is_valid(), "{report:?}\n{xml}");
    xml
}

#[test]
fn a_server_that_dies_fails_its_step_with_the_reason_and_the_rest_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let faulty = format!(
        "'{}' --fault crash-on-call",
        env!("CARGO_BIN_EXE_bkn-fault-server")
    );
    let (code, out, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--stdio",
        &faulty,
        "--embedded",
        "dac",
        "--junit",
        junit.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let faulty_run = &report["runs"][0];
    let first = &faulty_run["steps"][0];
    assert_eq!(first["passed"], false);
    let why = first["failures"][0]["actual"].as_str().unwrap();
    assert!(why.contains("no reply") && why.contains("exited"), "{why}");
    assert!(
        faulty_run["steps"][1]["notRun"]
            .as_str()
            .unwrap()
            .contains("the connection is gone"),
        "{faulty_run}"
    );
    assert_eq!(
        report["runs"][1]["passed"], true,
        "the healthy server's run went on"
    );
    let xml = assert_junit(&junit);
    assert!(xml.contains("<error") && xml.contains("not run"), "{xml}");
    assert!(xml.contains("<failure"), "{xml}");
    assert!(xml.contains(r#"tests="10""#), "{xml}");
}

#[test]
fn a_passing_run_gives_a_junit_report_ci_tools_read() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let (code, _, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        &shipped("usr-ana.yaml"),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let xml = assert_junit(&junit);
    assert_eq!(xml.matches("<testcase").count(), 8, "one per step: {xml}");
    assert!(
        !xml.contains("<failure") && !xml.contains("<error"),
        "{xml}"
    );
}

#[test]
fn a_recording_becomes_a_test_that_passes_on_the_server_it_was_recorded_from() {
    let dir = tempfile::tempdir().unwrap();
    for session in ["dac-tour.json", "usr-refinement.json"] {
        let scenario = dir.path().join(format!("{session}.yaml"));
        let (code, _, err) = run(&[
            "test",
            "--from-session",
            &root().join("sessions").join(session).display().to_string(),
            "--output",
            scenario.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&scenario).unwrap();
        assert!(
            text.starts_with("# A scenario made by bkn-explorer"),
            "{text}"
        );
        assert!(!text.contains("QueryID"), "volatile fields are left out");
        let (code, out, err) = run(&["test", scenario.to_str().unwrap()]);
        assert_eq!(code, 0, "{session}: {out}{err}");
    }
    // A dialogue that is not there is a clear error.
    let (code, _, err) = run(&[
        "test",
        "--from-session",
        "sessions/dac-tour.json",
        "--dialogue",
        "5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("there is no dialogue 5"), "{err}");
}

/// A recorded number that a JSON value here does not hold as written (beyond 64 bits, more
/// digits than a double keeps) is written into the scenario as recorded, as a number.
#[test]
fn a_recording_made_a_test_keeps_every_number_as_it_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let tour = std::fs::read_to_string(root().join("sessions/dac-tour.json")).unwrap();
    let mut session: Value = serde_json::from_str(&tour).unwrap();
    let dialogue = &mut session["dialogues"][0];
    dialogue["turns"].as_array_mut().unwrap().truncate(1);
    let turn = &mut dialogue["turns"][0];
    turn["request"]["Terms"][0]["Weight"] = json!("BIG-INTEGER");
    turn["request"]["Terms"][1]["Weight"] = json!("LONG-DECIMAL");
    turn["request"]["Terms"][2]["Weight"] = json!(2.5);
    turn["response"]["Tally"] = json!("BIG-NEGATIVE");
    let text = serde_json::to_string_pretty(&session)
        .unwrap()
        .replace("\"BIG-INTEGER\"", "18446744073709551616123")
        .replace("\"LONG-DECIMAL\"", "0.10000000000000000000000000001")
        .replace("\"BIG-NEGATIVE\"", "-98765432109876543210987654321");
    let path = dir.path().join("numbers.json");
    std::fs::write(&path, text).unwrap();
    let (code, yaml, err) = run(&["test", "--from-session", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for exact in [
        "Weight: 18446744073709551616123\n",
        "Weight: 0.10000000000000000000000000001\n",
        "Weight: 2.5\n",
        "/Tally: -98765432109876543210987654321\n",
    ] {
        assert!(yaml.contains(exact), "{exact} not in:\n{yaml}");
    }
    assert!(!yaml.contains("BKNEXACT"), "{yaml}");
    // Numbers in YAML, not strings.
    let read: Value = serde_saphyr::from_str(&yaml).unwrap();
    let terms = &read["steps"][0]["request"]["Terms"];
    assert!(terms[0]["Weight"].is_number(), "{terms}");
    assert!(terms[1]["Weight"].is_number(), "{terms}");
}

#[test]
fn mistakes_are_reported_with_their_place_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "steps:\n  - request:\n      Kind: feasibilty\n    expect:\n      values:\n        /Answer/Txt: x\n      outcome: answerd\n  - request: {Kind: constraints, EntityIDs: [\"{{later}}\"]}\n",
    )
    .unwrap();
    // A server that would leave a mark if it were started.
    let marker = dir.path().join("started");
    let server = format!("sh -c 'touch {}; cat'", marker.display());
    let (code, out, err) = run(&["test", bad.to_str().unwrap(), "--stdio", &server]);
    assert_eq!(code, 2, "{out}{err}");
    let file = bad.display().to_string();
    for (place, what) in [
        (
            "3:13",
            "\"feasibilty\" is not a Kind (did you mean feasibility?)",
        ),
        ("6:9", "/Answer/Txt cannot exist"),
        ("7:16", "\"answerd\" is not an Outcome"),
        ("8:", "{{later}} is used before a step captures it"),
    ] {
        assert!(
            err.contains(&format!("{file}:{place}")) && err.contains(what),
            "no {what} at {place}:\n{err}"
        );
    }
    assert!(err.contains("nothing was sent"), "{err}");
    assert!(!marker.exists(), "the server was started");
    // Not YAML at all: where it stops being readable.
    std::fs::write(&bad, "steps: [\n  {request: }\n").unwrap();
    let (code, _, err) = run(&["test", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{file}:")), "{err}");
}

#[test]
fn a_step_is_retried_until_its_expectations_hold_or_its_retries_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.yaml");
    std::fs::write(
        &path,
        "server: {embedded: dac}\nsteps:\n  - request: {Kind: semantic_grounding, Terms: [{Text: bench}]}\n    expect:\n      values: {/Answer/ObjectClasses/0/Class: Fountain}\n    retry: {times: 2, delay_ms: 10}\n",
    )
    .unwrap();
    let (code, out, _) = run(&["test", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let report = json(&out);
    assert_eq!(report["runs"][0]["steps"][0]["attempts"], 3, "{out}");
}

#[test]
fn a_third_party_server_is_tested_for_the_rule_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lab.yaml");
    std::fs::write(
        &path,
        r#"name: the lab's Domain Access says feasible with a Clash
steps:
  - request:
      Kind: feasibility
      ProcessActions:
        - {Step: 0, Statement: "MM-Move Nil Robot#1 To MLoc:Lab.Bench"}
        - {Step: 1, Statement: "MM-Move Nil Robot#1 To MLoc:Lab.Door"}
    expect:
      findings: [feasibility.overall]
      values:
        /Feasibility/Overall: feasible
"#,
    )
    .unwrap();
    let peer = format!(
        "{} {}/tests/peers/raw_dac_server.py --clash-feasible",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, out, err) = run(&["test", path.to_str().unwrap(), "--stdio", &peer]);
    assert_eq!(code, 0, "the expected finding was found: {out}{err}");
    // Without the fault, the finding is not there, and the test says so.
    let honest = peer.replace(" --clash-feasible", "");
    let (code, out, _) = run(&["test", path.to_str().unwrap(), "--stdio", &honest]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("findings feasibility.overall"), "{out}");
}

/// `load --fresh` over HTTP: a new session for each time through the scenario (the sessions
/// share one HTTP client), every one answered as the scenario expects and closed after.
#[tokio::test]
async fn load_over_http_with_a_session_each_time_passes_and_closes_them() {
    let server = common::spawn_http(&["dac".to_owned()]).await;
    let url = server.url.clone();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        run(&[
            "load",
            &shipped("dac-kiosk.yaml"),
            "--concurrency",
            "3",
            "--repeat",
            "3",
            "--fresh",
            "--url",
            &url,
            "--format",
            "json",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    let report = json(&out);
    assert_eq!(report["turns"], 3 * 3 * 5, "{report}");
    for key in ["errors", "timeouts", "nonconformant", "expectations_failed"] {
        assert_eq!(report[key], 0, "{key}: {report}");
    }
    let health = server.url.replace("/mcp", "/health");
    let sessions = reqwest::get(&health)
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["sessions"]
        .clone();
    assert_eq!(sessions, 0, "every session was closed");
}

#[test]
fn load_reports_throughput_latency_and_its_own_cpu() {
    let (code, out, err) = run(&[
        "load",
        &shipped("dac-kiosk.yaml"),
        "--concurrency",
        "3",
        "--repeat",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let report = json(&out);
    assert_eq!(report["turns"], 3 * 4 * 5);
    for key in [
        "turns_per_s",
        "p50_ms",
        "p90_ms",
        "p99_ms",
        "max_ms",
        "client_cpu_s",
    ] {
        assert!(
            report[key].as_f64().is_some_and(|v| v >= 0.0),
            "{key}: {report}"
        );
    }
    assert_eq!(report["errors"], 0);
    assert_eq!(report["nonconformant"], 0);
    assert_eq!(report["per_kind"]["feasibility"]["turns"], 12);
    // A scenario with a mistake is refused before the load starts.
    let (code, _, err) = run(&["load", "Cargo.toml"]);
    assert_eq!(code, 2, "{err}");
}

/// The schema check is not vacuous: what CI tools would refuse, it refuses.
#[test]
fn the_junit_schema_refuses_what_ci_tools_would() {
    let xsd = std::fs::read_to_string(root().join("tests/fixtures/junit/junit.xsd")).unwrap();
    let schema = xmlschema::parse_schema(&xsd).unwrap();
    for bad in [
        r#"<testsuites><testsuite tests="1"><testcase name="a"/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite name="s" tests="x"><testcase name="a"/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite name="s" tests="1"><testcase/></testsuite></testsuites>"#,
        r#"<testsuites><testsuite name="s" tests="1"><case name="a"/></testsuite></testsuites>"#,
    ] {
        let doc = oxml::parse(bad).unwrap();
        assert!(!xmlschema::validate(&doc, &schema).is_valid(), "{bad}");
    }
    let good = r#"<testsuites><testsuite name="s" tests="1" time="0.5"><testcase name="a" classname="f" time="0.1"><failure message="m" type="t">text</failure></testcase></testsuite></testsuites>"#;
    assert!(xmlschema::validate(&oxml::parse(good).unwrap(), &schema).is_valid());
}

/// A step with no expectations still needs an answer: against a server that dies before
/// answering, it fails (issue 29: "✓ 2 of 2 steps passed" against a server that crashed).
#[test]
fn a_step_that_got_no_answer_fails_whatever_it_expects() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("no-expect.yaml");
    std::fs::write(
        &scenario,
        "name: nothing expected\nserver: {embedded: dac}\nsteps:\n  - name: ask\n    request: {Kind: constraints, EntityIDs: [Kiosk#3]}\n",
    )
    .unwrap();
    let faulty = format!(
        "'{}' --fault crash-on-call",
        env!("CARGO_BIN_EXE_bkn-fault-server")
    );
    let (code, out, err) = run(&[
        "test",
        scenario.to_str().unwrap(),
        "--stdio",
        &faulty,
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let step = &report["runs"][0]["steps"][0];
    assert_eq!(step["passed"], false, "{report}");
    assert!(
        step["failures"][0]["actual"]
            .as_str()
            .unwrap()
            .contains("no reply"),
        "{report}"
    );
}

/// A scenario that goes on in a new session: in 2025-11-25 a new MCP session with the
/// TurnIndex going on; in 2026-07-28 (no sessions) a new dialogue from TurnIndex 0. Either
/// way the server remembers nothing of before, so the commitment retained before it is not
/// in the answer after it, and every step passes (a later TurnIndex under a new DialogID was
/// refused over 2026-07-28 as a dialogue the server does not hold).
#[tokio::test]
async fn a_new_session_step_passes_in_both_generations_over_stdio_and_http() {
    let file = root().join("tests/fixtures/scenarios/new-session.yaml");
    let file = file.display().to_string();
    let server = common::spawn_http(&["dac".to_owned()]).await;
    for protocol in ["2025-11-25", "2026-07-28"] {
        for url in [None, Some(server.url.clone())] {
            let file = file.clone();
            let over = url.clone().unwrap_or_else(|| "stdio".into());
            let (code, out, err) = tokio::task::spawn_blocking(move || {
                let mut args = vec!["test", &file, "--protocol", protocol, "--format", "json"];
                if let Some(url) = &url {
                    args.extend(["--url", url]);
                }
                run(&args)
            })
            .await
            .unwrap();
            assert_eq!(code, 0, "{protocol} over {over}: {out}{err}");
            let report = json(&out);
            let steps = report.pointer("/runs/0/steps").cloned().unwrap_or_default();
            assert_eq!(steps.as_array().map(Vec::len), Some(2), "{report}");
            // The report names the generation the run spoke.
            assert_eq!(report.pointer("/runs/0/protocol"), Some(&json!(protocol)));
        }
    }
}

/// `test --servers FILE` without --server runs on every server of the file (it was ignored,
/// and the scenario ran on its own server without a word).
#[test]
fn test_with_a_servers_file_runs_on_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("servers.json");
    std::fs::write(
        &file,
        serde_json::json!({"mcpServers": {"lab-dac": {
            "command": common::bin(), "args": ["serve", "dac"]}}})
        .to_string(),
    )
    .unwrap();
    let (code, out, err) = run(&[
        "test",
        &shipped("dac-kiosk.yaml"),
        "--servers",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("lab-dac"), "the file's server ran it: {out}");
}
