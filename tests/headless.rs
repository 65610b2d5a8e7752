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
