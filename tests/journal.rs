//! Journals damaged by a full disk: a write torn part-way, then space back and more events
//! written. Every reader reads the later turns, and `validate` says the file is partly
//! unreadable (exit 2) and names the line.

use crate::common;

use bkn_explorer::client::spec::ServerSpec;
use bkn_explorer::protocol::Interface;
use bkn_explorer::session::Session;
use bkn_explorer::session::journal::Writer;
use std::io::Write;

/// A journal of the shipped Domain Access tour (real turns of the reference server), written
/// by the journal's own writer; returns its path and how many turns it has.
fn tour_journal(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, usize) {
    let tour = Session::load(std::path::Path::new("sessions/dac-tour.json")).unwrap();
    let path = dir.join(name);
    let server = ServerSpec::embedded(Interface::Dac);
    let mut w = Writer::create(&path, Some("tour"), &server).unwrap();
    w.dialogue(1, &server.name, Interface::Dac, "D1");
    let turns = &tour.dialogues[0].turns;
    for t in turns {
        w.turn(1, t);
    }
    (path, turns.len())
}

#[test]
fn a_journal_torn_by_a_full_disk_is_read_past_the_tear_and_validate_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let (path, turns) = tour_journal(dir.path(), "torn.jsonl");
    let whole = std::fs::read(&path).unwrap();
    // The disk fills in the middle of the last turn's line: the file keeps half of it …
    let last_start = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let torn_line = whole[..last_start].iter().filter(|&&b| b == b'\n').count() + 1;
    let cut = last_start + (whole.len() - last_start) / 2;
    std::fs::write(&path, &whole[..cut]).unwrap();
    // … and when space comes back the writer goes on with a fresh line (its newline first),
    // then the turn it could not write and one more.
    let lines: Vec<&[u8]> = whole.split(|&b| b == b'\n').collect();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"\n").unwrap();
    for line in [lines[2], lines[3]] {
        file.write_all(line).unwrap();
        file.write_all(b"\n").unwrap();
    }
    drop(file);

    // The session loader (explorer, replay, serve, test --from-session) reads the later turns.
    let session = Session::load(&path).unwrap();
    assert_eq!(session.dialogues[0].turns.len(), turns - 1 + 2);
    let notes = session.notes.unwrap_or_default();
    assert!(
        notes.contains(&format!("line {torn_line} is not a journal entry")),
        "{notes}"
    );

    // validate checks every whole line and exits 2: the file is partly unreadable.
    let out = std::process::Command::new(common::bin())
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("partly unreadable")
            && stdout.contains(&format!("line {torn_line} is not a journal entry")),
        "{stdout}"
    );
    // Each turn's Request and Response were counted: the later lines were read.
    let messages = 2 * (turns - 1 + 2);
    assert!(
        stdout.contains(&format!("checked {messages} messages")),
        "{stdout}"
    );

    // Cut off in its last line only (a proxy killed mid-write): a note, exit 0.
    let (cut_path, _) = tour_journal(dir.path(), "cut.jsonl");
    let text = std::fs::read(&cut_path).unwrap();
    std::fs::write(&cut_path, &text[..text.len() - 30]).unwrap();
    let out = std::process::Command::new(common::bin())
        .arg("validate")
        .arg(&cut_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("note: the recording ends in the middle of line"),
        "{stderr}"
    );
}

/// A journal of two dialogues recorded at once (their lines interleaved) is replayed dialogue
/// by dialogue, each with its own turns in order: `replay` reads a journal as it goes, and
/// keeps the turns of the later dialogue read while it replays the earlier.
#[test]
fn a_journal_of_interleaved_dialogues_replays_each_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let tour = Session::load(std::path::Path::new("sessions/dac-tour.json")).unwrap();
    let turns = &tour.dialogues[0].turns;
    let path = dir.path().join("two.journal");
    let server = ServerSpec::embedded(Interface::Dac);
    let mut w = Writer::create(&path, Some("two"), &server).unwrap();
    w.dialogue(1, &server.name, Interface::Dac, "D1");
    w.dialogue(2, &server.name, Interface::Dac, "D2");
    for (i, turn) in turns.iter().enumerate() {
        w.turn(1, turn);
        if i < 6 {
            w.turn(2, turn);
        }
    }
    drop(w);
    let out = std::process::Command::new(common::bin())
        .arg("replay")
        .arg(&path)
        .args(["--embedded", "dac"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = stdout.find("dialogue 1").unwrap();
    assert!(stdout[..second].contains("turn 9 ("), "{stdout}");
    assert!(
        stdout[second..].contains("turn 5 (") && !stdout[second..].contains("turn 6 ("),
        "{stdout}"
    );
    assert!(
        stdout.contains("replayed 16 turns: no differences"),
        "{stdout}"
    );
}
