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
