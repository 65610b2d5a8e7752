//! What a new user found in the headless commands (issue 29's follow-up): outputs that
//! replaced a file silently, failures blamed on the wrong step, Debug values in reports,
//! counts of 0 accepted, documents that are not messages judged as messages … each checked
//! against a real server (the reference servers, the fault server, a Python peer).

use crate::common;

use common::bin;
use std::path::{Path, PathBuf};

/// Runs the explorer with these arguments; exit code, stdout, stderr.
fn explorer(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(bin())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the explorer runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every output a command writes to a file the user named refuses a file that is there (exit
/// 2, the --force way out said, the file untouched) and replaces it with --force; a JUnit
/// report of an earlier run is replaced (it is regenerated output, not someone's work).
#[test]
fn outputs_never_replace_a_file_that_is_there_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine.txt");
    let session = root().join("sessions/dac-tour.json");
    let refused = |args: &[&str]| {
        std::fs::write(&mine, "my work\n").unwrap();
        let (code, out, err) = explorer(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("is there already, and it is not replaced") && err.contains("say --force"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my work\n");
    };
    let m = s(&mine);
    refused(&[
        "certify",
        "--embedded",
        "dac",
        "--only",
        "tools.",
        "--save",
        m,
    ]);
    refused(&[
        "certify",
        "--embedded",
        "dac",
        "--only",
        "tools.",
        "--junit",
        m,
    ]);
    refused(&["test", "--from-session", s(&session), "-o", m]);
    let scenario = root().join("scenarios/dac-kiosk.yaml");
    refused(&["test", s(&scenario), "--embedded", "dac", "--junit", m]);
    refused(&["read", "dac://domain", "-o", m]);

    // With --force each is written.
    let (code, _, err) = explorer(&["read", "dac://domain", "-o", m, "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("MInstance")
    );
    let (code, _, err) = explorer(&["test", "--from-session", s(&session), "-o", m, "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&mine).unwrap().contains("steps"));
    std::fs::write(&mine, "my work\n").unwrap();
    let (code, _, err) = explorer(&[
        "certify",
        "--embedded",
        "dac",
        "--only",
        "tools.",
        "--save",
        m,
        "--force",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::read_to_string(&mine)
            .unwrap()
            .contains("dialogues")
    );

    // A JUnit report of an earlier run is the run's output again: replaced without --force.
    let junit = dir.path().join("junit.xml");
    for _ in 0..2 {
        let (code, _, err) = explorer(&[
            "certify",
            "--embedded",
            "dac",
            "--only",
            "tools.",
            "--junit",
            s(&junit),
        ]);
        assert_eq!(code, 0, "{err}");
    }
}

/// A 401 of `serve --http --token` fails the http step, said as what it is: a wrong token
/// refused (check --token / BKN_TOKEN), no token a server asking for credentials (its
/// WWW-Authenticate quoted, no OAuth offered: it advertises none) — never "ok http" then a
/// handshake that "refused every opening".
#[tokio::test]
async fn a_refused_bearer_token_fails_the_http_step_not_the_handshake() {
    let server = common::spawn_http(&["dac".into(), "--token".into(), "sekret".into()]).await;
    let url = server.url.clone();
    let doctor = move |token: Option<&'static str>| {
        let url = url.clone();
        async move {
            let mut args = vec!["doctor", "--format", "json", "--url", &url];
            args.extend(token.map(|t| ["--token", t]).into_iter().flatten());
            let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                explorer(&args)
            })
            .await
            .unwrap()
        }
    };
    let failed_step = |out: &str| {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        let steps = v["steps"].as_array().unwrap().clone();
        let failed: Vec<_> = steps.iter().filter(|s| s["ok"] == false).collect();
        assert_eq!(failed.len(), 1, "{steps:?}");
        (
            failed[0]["step"].as_str().unwrap().to_owned(),
            format!("{} → {}", failed[0]["detail"], failed[0]["advice"]),
        )
    };
    let (code, out, err) = doctor(Some("wrong")).await;
    assert_eq!(code, 1, "{err}");
    let (step, said) = failed_step(&out);
    assert_eq!(step, "http", "{said}");
    assert!(
        said.contains("refused the token") && said.contains("--token / BKN_TOKEN"),
        "{said}"
    );
    let (code, out, err) = doctor(None).await;
    assert_eq!(code, 1, "{err}");
    let (step, said) = failed_step(&out);
    assert_eq!(step, "http", "{said}");
    assert!(
        said.contains("asks for credentials") && said.contains("WWW-Authenticate: Bearer"),
        "{said}"
    );
    assert!(!said.contains("auth login"), "no OAuth advertised: {said}");
    let (code, out, err) = doctor(Some("sekret")).await;
    assert_eq!(code, 0, "{out}{err}");
}

fn fault_server(fault: &str) -> String {
    format!("{} --fault {fault}", env!("CARGO_BIN_EXE_bkn-fault-server"))
}

/// `dialogue FILE` that exits 1 says on standard error which turn failed and how (as `send`
/// does), not only inside the JSON on standard output.
#[test]
fn a_failing_dialogue_says_what_failed_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        "{\"Kind\": \"constraints\", \"EntityIDs\": [\"Avatar#7\"]}\n\
         {\"Kind\": \"constraints\", \"EntityIDs\": [\"Avatar#7\"]}\n",
    )
    .unwrap();
    let (code, out, err) = explorer(&[
        "dialogue",
        s(&requests),
        "--stdio",
        &fault_server("missing-outcome"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    for turn in ["turn 0: ", "turn 1: "] {
        let line = err
            .lines()
            .find(|l| l.starts_with(turn))
            .unwrap_or_else(|| panic!("{turn} on stderr: {err}"));
        assert!(
            line.contains("finding") && line.contains("response: ") && line.contains("Outcome"),
            "{line}"
        );
    }
    // A dialogue that conforms says nothing of the kind.
    let (code, _, err) = explorer(&["dialogue", s(&requests)]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("turn 0:"), "{err}");
}

fn certify_peer(flags: &str) -> String {
    format!(
        "{} {}/tests/peers/certify_peer.py {flags}",
        common::python3().expect("python3"),
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Against a server that answers without CommitmentStatus, certify says what was missing,
/// never a Rust Debug value ("None and None", "(None, None)").
#[test]
fn certify_says_what_is_missing_not_debug_values() {
    let out = std::process::Command::new(bin())
        .args([
            "certify",
            "--stdio",
            &certify_peer("--no-commitment-status"),
            "--only",
            "commitments.conflict-in-request",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("certify-1 is not in the Response's CommitmentStatus"),
        "{text}"
    );
    assert!(
        !text.contains("None") && !text.contains("Some("),
        "no Debug values: {text}"
    );
}

/// A count of 0 is refused before anything runs, with the range allowed (`load -c 0 -r 1`
/// ran "0 dialogues × 1 time through it" and reported turns).
#[test]
fn counts_of_zero_are_refused() {
    let scenario = root().join("scenarios/dac-kiosk.yaml");
    for args in [
        vec!["load", s(&scenario), "-c", "0", "-r", "1"],
        vec!["load", s(&scenario), "-c", "1", "-r", "0"],
        vec!["certify", "--rule-timeout", "0"],
        vec!["tools", "--timeout", "0"],
        vec!["send", "x.json", "--max-message-mb", "0"],
        vec!["serve", "dac", "--max-dialogues", "0"],
        vec!["proxy", "--max-message-mb", "0", "--", "true"],
    ] {
        let (code, out, err) = explorer(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("invalid value '0'"), "{args:?}: {err}");
        assert!(out.is_empty(), "nothing ran: {args:?}: {out}");
    }
}

/// `test` against a server that answers but has no BKN-DAC tool says so, with its tools, not
/// that it "could not be reached" (on the terminal and in JUnit).
#[test]
fn a_server_without_the_tool_was_reached_and_has_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let scenario = root().join("scenarios/dac-kiosk.yaml");
    let (code, out, err) = explorer(&[
        "test",
        s(&scenario),
        "--stdio",
        &certify_peer("--other-tools"),
        "--junit",
        s(&junit),
    ]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        out.contains("has no BKN-DAC tool") && out.contains("its tools: weather, echo"),
        "{out}"
    );
    assert!(!out.contains("could not be reached"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("no-tool") && !xml.contains("could not be reached"),
        "{xml}"
    );
}

/// A resource the server does not have: its error, and where to see what it has.
#[test]
fn reading_a_resource_that_is_not_there_points_to_resources() {
    let (code, _, err) = explorer(&["read", "usr://users/User#Zed"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`bkn-explorer resources` lists what the server has"),
        "{err}"
    );
}

/// `validate` on a document the tool wrote that is no message says what it is: a resource
/// (checked against its schema), a certify report (skipped); an empty array is said as one.
#[test]
fn validate_recognises_documents_that_are_not_messages() {
    let dir = tempfile::tempdir().unwrap();
    let space = dir.path().join("space.json");
    let (code, _, err) = explorer(&["read", "dac://spaces/Space:Square", "-o", s(&space)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = explorer(&["validate", s(&space)]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("is a dac://spaces resource (checked against its schema: ok)"),
        "{out}"
    );
    // A space that breaks its schema: said, and exit 1.
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&space).unwrap()).unwrap();
    value["MLocations"] = serde_json::json!("not a list");
    std::fs::write(&space, value.to_string()).unwrap();
    let (code, out, _) = explorer(&["validate", s(&space)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("breaks its schema") && out.contains("/MLocations"),
        "{out}"
    );

    let report = dir.path().join("report.json");
    let (_, json, err) = explorer(&["certify", "--only", "tools.", "--format", "json"]);
    std::fs::write(&report, json).unwrap();
    let (code, out, _) = explorer(&["validate", s(&report)]);
    // Read, and holding no message: named and skipped, not "could not be read" (exit 2).
    assert_eq!(code, 0, "{err}{out}");
    assert!(
        out.contains("a certify report") && out.contains("skipped"),
        "{out}"
    );
    assert!(!out.contains("QueryID"), "not judged as a Request: {out}");

    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "[]").unwrap();
    let (_, out, _) = explorer(&["validate", s(&empty)]);
    assert!(out.contains("an empty array: no message in it"), "{out}");
}

/// `doctor --servers` with no name checks every server of the files found (one section
/// each; the exit code the worst), as the explorer takes `--servers` alone.
#[test]
fn doctor_with_servers_alone_checks_every_server_found() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let write = |servers: serde_json::Value| {
        std::fs::write(
            dir.path().join(".mcp.json"),
            serde_json::json!({ "mcpServers": servers }).to_string(),
        )
        .unwrap();
    };
    let doctor = || {
        let out = std::process::Command::new(bin())
            .args(["doctor", "--servers", "--timeout", "10"])
            .current_dir(dir.path())
            .env("BKN_EXPLORER_CONFIG_DIR", config.path())
            .env_remove("BKN_TOKEN")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let b = bin();
    write(serde_json::json!({
        "dac": {"type": "stdio", "command": b, "args": ["serve", "dac"]},
        "usr": {"type": "stdio", "command": b, "args": ["serve", "usr"]},
    }));
    let (code, out, err) = doctor();
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("dac (") && out.contains("usr ("), "{out}");
    write(serde_json::json!({
        "dac": {"type": "stdio", "command": b, "args": ["serve", "dac"]},
        "gone": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
    }));
    let (code, out, err) = doctor();
    assert_eq!(code, Some(1), "the worst: {out}{err}");
    assert!(out.contains("dac (") && out.contains("gone ("), "{out}");
    assert!(out.contains("FAILED"), "{out}");
}

/// `replay` of a certify session reports no false differences (a tool error naming the
/// recorded DialogID is the same as one naming the replay's own); a dialogue that goes on an
/// earlier one under its DialogID (as certify saved "from a new connection" before it kept
/// them as one record) is said to be not replayable as recorded, not counted as differing.
#[tokio::test]
async fn replaying_a_certify_session_reports_no_false_differences() {
    let server = common::spawn_http(&["dac".into()]).await;
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("certify.json");
    let (url, path) = (server.url.clone(), saved.clone());
    let ((code, out, err), (again, out2, err2)) = tokio::task::spawn_blocking(move || {
        let (code, out, err) = explorer(&[
            "certify",
            "--url",
            &url,
            "--only",
            "dialogues.",
            "--save",
            s(&path),
        ]);
        assert_eq!(code, 0, "{out}{err}");
        let replayed = explorer(&["replay", s(&path)]);
        // A dialogue going on the first one under its DialogID, as a session of its own.
        let mut session: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let dialogues = session["dialogues"].as_array_mut().unwrap();
        let mut goes_on = dialogues[0].clone();
        goes_on["name"] = serde_json::json!("A (from a new connection)");
        dialogues.insert(1, goes_on);
        std::fs::write(&path, session.to_string()).unwrap();
        (replayed, explorer(&["replay", s(&path)]))
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(": no differences"), "{out}");
    assert_eq!(again, 0, "{out2}{err2}");
    assert!(
        out2.contains("(A (from a new connection)): not replayed: it goes on dialogue 0"),
        "{out2}"
    );
    assert!(
        out2.contains("no differences (1 dialogue not replayable as recorded, set aside)"),
        "{out2}"
    );
}

/// `--session` naming a file that is not there stops before the screen starts: the path, that
/// it does not exist, exit 2 (as other bad arguments do), nothing drawn.
#[test]
fn a_session_that_does_not_exist_is_refused_before_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let (code, out, err) = explorer(&["--session", s(&missing)]);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(
        err.contains(s(&missing)) && err.contains("does not exist"),
        "{err}"
    );
    assert!(out.is_empty(), "the screen started: {out:?}");
    let (code, _, err) = explorer(&["--session", s(dir.path())]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a file"), "{err}");
}

/// `validate` on the files bkn-explorer itself writes: none is "unreadable". A certify report
/// (JSON or Markdown) and a JUnit report are named and skipped (exit 0); a scenario, YAML or
/// JSON, is checked as `test` reads it and points to `bkn-explorer test`; a scenario with a
/// mistake is a finding with its line (exit 1), not "not JSON".
#[test]
fn validate_names_each_file_this_tool_writes_and_checks_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    for (format, file) in [("json", "cert.json"), ("markdown", "cert.md")] {
        let (code, out, err) = explorer(&[
            "certify",
            "--embedded",
            "usr",
            "--only",
            "tools.found-by-header",
            "--format",
            format,
        ]);
        assert_eq!(code, 0, "{out}{err}");
        std::fs::write(at(file), out).unwrap();
    }
    let session = root().join("sessions/dac-tour.json");
    let (code, out, err) = explorer(&[
        "test",
        "--from-session",
        s(&session),
        "-o",
        s(&at("tour.yaml")),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let kiosk = root().join("scenarios/dac-kiosk.yaml");
    let (code, out, err) = explorer(&[
        "test",
        s(&kiosk),
        "--embedded",
        "dac",
        "--junit",
        s(&at("report.xml")),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    std::fs::write(
        at("scenario.json"),
        r#"{"name":"one","server":{"embedded":"dac"},"steps":[{"request":{"Kind":"semantic_grounding","Question":"q","Terms":[{"Text":"stage"}]}}]}"#,
    )
    .unwrap();
    let files = [
        "cert.json",
        "cert.md",
        "tour.yaml",
        "report.xml",
        "scenario.json",
    ];
    let paths: Vec<PathBuf> = files.iter().map(|f| at(f)).collect();
    let mut args = vec!["validate"];
    args.extend(paths.iter().map(|p| s(p)));
    let (code, out, err) = explorer(&args);
    assert_eq!(code, 0, "{out}{err}");
    for said in [
        "cert.json is a certify report (",
        "cert.md is a certify report in Markdown (",
        "report.xml is a JUnit report (",
        "tour.yaml is a scenario (",
        "scenario.json is a scenario (1 step; checked as a scenario: ok): run it with `bkn-explorer test ",
    ] {
        assert!(out.contains(said), "{said:?} in {out}");
    }
    assert!(
        out.contains("(2 scenarios; 3 skipped: no messages in them): all conform"),
        "{out}"
    );
    assert!(
        !out.contains("could not be read") && !out.contains("not JSON"),
        "{out}"
    );

    // What `schema` prints, and a servers file (read as --servers reads it).
    let (code, schema, err) = explorer(&["schema", "usr-user"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(at("schema.json"), schema).unwrap();
    std::fs::write(
        at("servers.json"),
        r#"{"mcpServers":{"dac":{"command":"bkn-explorer","args":["serve","dac"]}}}"#,
    )
    .unwrap();
    let (code, out, err) = explorer(&["validate", s(&at("schema.json")), s(&at("servers.json"))]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("schema.json is a JSON Schema (")
            && out.contains("servers.json is a servers file (1 server; read as"),
        "{out}"
    );

    std::fs::write(
        at("bad.yaml"),
        "name: bad\nserver:\n  embedded: dac\nsteps:\n- request:\n    Kind: semantic_grounding\n  expect:\n    outcom: answered\n",
    )
    .unwrap();
    let (code, out, err) = explorer(&["validate", s(&at("bad.yaml"))]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("bad.yaml is a scenario, and `test` would refuse it: line 8")
            && out.contains("1 finding"),
        "{out}"
    );
}
