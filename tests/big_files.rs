//! Big recordings are read as streams: `serve --from-session` keeps each answered exchange's
//! compact text, `test --from-session` one dialogue's steps, `replay --dialogue N` one turn at
//! a time. Memory is read from the child's
//! /proc status (its high-water mark) and held to a generous bound against the file's size.

use crate::common;

use bkn_explorer::protocol::message::new_id;
use bkn_explorer::session::Session;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

/// A session of `dialogues` copies of the shipped tour's dialogue (real turns of the
/// reference server), each with its own DialogID; returns its path and size in bytes.
fn big_session(dir: &std::path::Path, dialogues: usize) -> (std::path::PathBuf, u64) {
    let mut tour = Session::load(std::path::Path::new("sessions/dac-tour.json")).unwrap();
    let one = tour.dialogues[0].clone();
    tour.dialogues = (0..dialogues)
        .map(|_| {
            let mut d = one.clone();
            d.dialog_id = new_id();
            d
        })
        .collect();
    let path = dir.join("big.json");
    std::fs::write(&path, tour.to_text()).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    (path, size)
}

/// The child's peak resident memory so far, in bytes (VmHWM).
fn peak(child: &Child) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

const MIB: u64 = 1024 * 1024;

#[test]
fn serve_and_test_from_a_big_session_hold_little_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, size) = big_session(dir.path(), 900);
    assert!(size > 25 * MIB, "{size}");

    // serve --from-session: loaded once it answers initialize.
    let mut serve = Command::new(common::bin())
        .args(["serve", "--from-session"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut answer = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains("\"result\""), "{answer}");
    let held = peak(&serve).unwrap();
    drop(stdin);
    serve.wait().unwrap();
    // The messages' compact text is what it needs (about a third of this indented file);
    // a whole typed session with values was several times the file.
    assert!(
        held < size + 64 * MIB,
        "serve --from-session peaked at {} MiB for a {} MiB session",
        held / MIB,
        size / MIB
    );

    // test --from-session: one dialogue's steps, whatever the file's size.
    let mut test = Command::new(common::bin())
        .args(["test", "--from-session"])
        .arg(&path)
        .args(["--dialogue", "450"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut high = 0;
    while test.try_wait().unwrap().is_none() {
        high = high.max(peak(&test).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut yaml = String::new();
    std::io::Read::read_to_string(&mut test.stdout.take().unwrap(), &mut yaml).unwrap();
    assert!(
        yaml.contains("turn 9 (") && !yaml.contains("turn 10 ("),
        "{yaml}"
    );
    assert!(
        high < size / 2 + 32 * MIB,
        "test --from-session peaked at {} MiB for a {} MiB session",
        high / MIB,
        size / MIB
    );
}

/// `replay FILE ARGS… --embedded dac`: its output and its peak memory, sampled while it runs.
fn replay_peak(path: &std::path::Path, args: &[&str]) -> (u64, String) {
    let mut replay = Command::new(common::bin())
        .arg("replay")
        .arg(path)
        .args(args)
        .args(["--embedded", "dac"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read while it runs: a full pipe would stall it.
    let mut out = replay.stdout.take().unwrap();
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut out, &mut text).unwrap();
        text
    });
    let mut high = 0;
    while replay.try_wait().unwrap().is_none() {
        high = high.max(peak(&replay).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    (high, reading.join().unwrap())
}

/// `replay --dialogue N` reads the session twice as a stream (its outline, then the turns of
/// dialogue N) and holds neither: it used to load the whole session, about twice the file.
/// What a replay needs whatever the file (the embedded server, the compiled schemas; much
/// more in a debug build) is measured on the shipped tour, and the big file may add little.
#[test]
fn replay_of_one_dialogue_of_a_big_session_holds_little_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, size) = big_session(dir.path(), 900);
    assert!(size > 25 * MIB, "{size}");
    let (small, text) = replay_peak(std::path::Path::new("sessions/dac-tour.json"), &[]);
    assert!(text.contains("replayed 10 turns: no differences"), "{text}");
    let (high, text) = replay_peak(&path, &["--dialogue", "450"]);
    assert!(
        text.contains("dialogue 450") && text.contains("replayed 10 turns: no differences"),
        "{text}"
    );
    assert!(
        high < small + size / 3,
        "replay --dialogue 450 peaked at {} MiB for a {} MiB session ({} MiB for the tour)",
        high / MIB,
        size / MIB,
        small / MIB
    );
}

/// `replay --update` writes the updated session as it replays, to a file that replaces the
/// session once whole (`atomic::Replacement`): it used to load the whole session and write it
/// from memory. Replaying one dialogue of the big session updates that dialogue (its new
/// DialogID), copies the others as they were, and adds little to a small replay's peak.
#[test]
fn replay_update_of_a_big_session_streams_it() {
    let dir = tempfile::tempdir().unwrap();
    let (path, size) = big_session(dir.path(), 900);
    let before = Session::load(&path).unwrap();
    let small_copy = dir.path().join("tour.json");
    std::fs::copy("sessions/dac-tour.json", &small_copy).unwrap();
    let (small, text) = replay_peak(&small_copy, &["--update"]);
    assert!(text.contains("updated"), "{text}");
    let (high, text) = replay_peak(&path, &["--dialogue", "450", "--update"]);
    assert!(
        text.contains("replayed 10 turns: no differences") && text.contains("updated"),
        "{text}"
    );
    eprintln!(
        "replay --update: tour {} MiB, dialogue 450 of a {} MiB session {} MiB",
        small / MIB,
        size / MIB,
        high / MIB
    );
    assert!(
        high < small + size / 3,
        "replay --update peaked at {} MiB for a {} MiB session ({} MiB for the tour)",
        high / MIB,
        size / MIB,
        small / MIB
    );
    let after = Session::load(&path).unwrap();
    assert_eq!(after.dialogues.len(), 900);
    assert_ne!(
        after.dialogues[450].dialog_id, before.dialogues[450].dialog_id,
        "the replayed dialogue has its new DialogID"
    );
    assert_eq!(after.dialogues[450].turns.len(), 10);
    for i in [0, 449, 451, 899] {
        assert_eq!(
            after.dialogues[i], before.dialogues[i],
            "dialogue {i} as it was"
        );
    }
    // Written as the whole session writes itself, and nothing left beside it.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), after.to_text());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A session whose one turn breaks the session schema is refused by `replay` (streamed) with
/// that turn's pointer, before anything is started or written; `--update` leaves it as it was.
#[test]
fn replay_names_a_bad_record_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("sessions/dac-tour.json").unwrap()).unwrap();
    value["dialogues"][0]["turns"][7]["latencyMs"] = (-3).into();
    let path = dir.path().join("bad.json");
    let text = serde_json::to_string_pretty(&value).unwrap();
    std::fs::write(&path, &text).unwrap();
    for extra in [&[][..], &["--update"][..]] {
        let out = Command::new(common::bin())
            .arg("replay")
            .arg(&path)
            .args(extra)
            .args(["--embedded", "dac"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("/dialogues/0/turns/7/latencyMs") && err.contains("-3"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "nothing replayed");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}
