//! Session files: round trips, replay of the shipped sessions, a kill while saving, bad files.

use crate::common;

use bkn_explorer::client::connection::ConnectOptions;
use bkn_explorer::client::spec::{HttpSpec, ServerSpec, TransportSpec};
use bkn_explorer::session::replay::replay_dialogue;
use bkn_explorer::session::{Session, SessionError};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions")
        .join(name)
}

fn options() -> ConnectOptions {
    ConnectOptions {
        timeout: Duration::from_secs(15),
        embedded_program: Some(PathBuf::from(common::bin())),
        ..ConnectOptions::default()
    }
}

#[test]
fn saving_what_was_loaded_gives_the_same_bytes() {
    for name in ["dac-tour.json", "usr-refinement.json"] {
        let text = std::fs::read_to_string(shipped(name)).unwrap();
        let session = Session::parse(&text).unwrap();
        assert_eq!(session.to_text(), text, "{name} round trips byte for byte");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        session.save(&path).unwrap();
        let again = Session::load(&path).unwrap();
        assert_eq!(again, session, "the same dialogues after save and load");
        again.save(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "a second save is byte-identical"
        );
    }
}

#[test]
fn the_shipped_sessions_show_what_they_promise() {
    let tour = Session::load(&shipped("dac-tour.json")).unwrap();
    let turns = &tour.dialogues[0].turns;
    let kinds: std::collections::BTreeSet<String> = turns.iter().map(|t| t.kind()).collect();
    for k in [
        "semantic_grounding",
        "affordances",
        "constraints",
        "behavioural_expectations",
        "feasibility",
        "clarification",
        "commitment",
    ] {
        assert!(kinds.contains(k), "the tour has every Kind: {k} missing");
    }
    let statuses: std::collections::BTreeSet<&str> = turns
        .iter()
        .filter_map(|t| t.response())
        .flat_map(|r| {
            r["Feasibility"]["Steps"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|s| match s["PAStatus"].as_str().unwrap() {
            "Ack" => "Ack",
            "Clash" => "Clash",
            _ => "other",
        })
        .collect();
    assert_eq!(statuses.len(), 3, "a plan with several PA Statuses");
    let conflicting = turns.iter().filter_map(|t| t.response()).any(|r| {
        r["CommitmentStatus"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["Status"] == "conflicting")
    });
    assert!(conflicting, "commitments that conflict");
    let usr = Session::load(&shipped("usr-refinement.json")).unwrap();
    assert_eq!(
        usr.dialogues[0].interface,
        bkn_explorer::protocol::Interface::Usr
    );
}

#[tokio::test]
async fn the_shipped_sessions_replay_without_differences() {
    for name in ["dac-tour.json", "usr-refinement.json"] {
        let session = Session::load(&shipped(name)).unwrap();
        let replayed = replay_dialogue(
            &session,
            0,
            None,
            &options(),
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
        let differences: Vec<String> = replayed
            .turns
            .iter()
            .flat_map(|t| {
                t.differences
                    .iter()
                    .map(move |d| format!("turn {}: {d}", t.index))
            })
            .collect();
        assert!(differences.is_empty(), "{name}: {differences:#?}");
        assert_eq!(replayed.turns.len(), session.dialogues[0].turns.len());
        assert_ne!(
            replayed.dialog_id, session.dialogues[0].dialog_id,
            "a fresh dialogue"
        );
    }
    // The command says the same.
    let out = std::process::Command::new(common::bin())
        .arg("replay")
        .arg(shipped("dac-tour.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("replayed 10 turns: no differences"));
}

#[tokio::test]
async fn replay_against_a_changed_domain_shows_the_expected_differences() {
    let dir = tempfile::tempdir().unwrap();
    let domain_path = dir.path().join("poorer.json");
    let mut domain: Value =
        serde_json::from_str(bkn_explorer::server::dac::domain::DEFAULT_DOMAIN).unwrap();
    // A wallet of 3 credits: placing the kiosk (4) is no longer affordable.
    domain["Requester"]["Wallet"]["Amount"] = 3.into();
    std::fs::write(&domain_path, domain.to_string()).unwrap();
    let session = Session::load(&shipped("dac-tour.json")).unwrap();
    let server = ServerSpec::new(
        "poorer",
        TransportSpec::Embedded {
            interface: bkn_explorer::protocol::Interface::Dac,
            args: vec!["--domain".into(), domain_path.display().to_string()],
        },
    );
    let replayed = replay_dialogue(
        &session,
        0,
        Some(&server),
        &options(),
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    let changed: Vec<(usize, String)> = replayed
        .turns
        .iter()
        .flat_map(|t| t.differences.iter().map(move |d| (t.index, d.to_string())))
        .collect();
    // Only the feasibility turns (6 and 8) depend on the wallet.
    assert!(
        changed.iter().all(|(turn, _)| *turn == 6 || *turn == 8),
        "{changed:#?}"
    );
    assert!(
        changed
            .iter()
            .any(|(_, d)| d.starts_with("/Feasibility/Steps/0/PAStatus: \"Ack\" -> \"InsValue\"")),
        "{changed:#?}"
    );
    assert!(
        changed
            .iter()
            .any(|(turn, d)| *turn == 8 && d.contains("11 left\" -> ") && d.ends_with("2 left\"")),
        "{changed:#?}"
    );

    // --update writes the new answers; replaying again then finds nothing.
    let copy = dir.path().join("tour.json");
    std::fs::copy(shipped("dac-tour.json"), &copy).unwrap();
    let stdio = format!(
        "{} serve dac --domain {}",
        common::bin(),
        domain_path.display()
    );
    let run = |extra: &[&str]| {
        std::process::Command::new(common::bin())
            .arg("replay")
            .arg(&copy)
            .args(["--stdio", &stdio])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"Ack\" -> \"InsValue\""));
    assert_eq!(run(&["--update"]).status.code(), Some(1));
    assert_eq!(
        run(&[]).status.code(),
        Some(0),
        "after --update the session matches the new server"
    );
}

#[test]
fn bad_session_files_give_clear_errors_and_stay_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(shipped("dac-tour.json")).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated",
            good[..good.len() / 2].to_owned(),
            "not JSON at line",
        ),
        (
            "corrupt",
            good.replacen("\"turns\": [", "\"turns\": [}", 1),
            "not JSON at line",
        ),
        (
            "not a session",
            "{\"mcpServers\": {}}".into(),
            "not a bkn-explorer session",
        ),
        (
            "wrong format",
            good.replacen("bkn-explorer-session/1", "other-tool/7", 1),
            "a bkn-explorer session has",
        ),
        (
            "future version",
            good.replacen("bkn-explorer-session/1", "bkn-explorer-session/3", 1),
            "newer bkn-explorer",
        ),
        (
            "mistakes",
            good.replacen("\"interface\": \"dac\"", "\"interface\": \"dca\"", 1),
            "/dialogues/0/interface",
        ),
        ("empty", String::new(), "not JSON at line 1"),
    ];
    for (what, text, expected) in cases {
        let path = dir.path().join(format!("{what}.json"));
        std::fs::write(&path, &text).unwrap();
        let error = Session::load(&path).unwrap_err();
        assert!(error.to_string().contains(expected), "{what}: {error}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "{what}: the file is untouched"
        );
        let out = std::process::Command::new(common::bin())
            .arg("replay")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(expected),
            "{what}"
        );
    }
    assert!(matches!(
        Session::load(&dir.path().join("missing.json")),
        Err(SessionError::Io(_))
    ));
}

#[test]
fn secrets_are_saved_as_references() {
    let mut session = Session::default();
    session.add_server(&ServerSpec::new(
        "lab",
        TransportSpec::Http(HttpSpec {
            url: "https://lab.example/mcp".into(),
            headers: BTreeMap::from([("X-Api-Key".into(), "very-secret".into())]),
            token: Some("also-secret".into()),
            ..Default::default()
        }),
    ));
    let text = session.to_text();
    assert!(
        !text.contains("very-secret") && !text.contains("also-secret"),
        "{text}"
    );
    assert!(
        text.contains("\"bearerToken\": \"${BKN_LAB_TOKEN}\""),
        "{text}"
    );
    assert!(
        text.contains("\"environment\": [\n    \"BKN_LAB_X_API_KEY\",\n    \"BKN_LAB_TOKEN\"\n  ]"),
        "{text}"
    );
    Session::parse(&text).unwrap();
}

/// Run by `a_process_killed_while_saving_never_leaves_a_truncated_session` in a child process:
/// saves a large session over and over until killed.
#[test]
fn save_forever_when_asked() {
    let Ok(path) = std::env::var("BKN_TEST_SAVE_FOREVER") else {
        return;
    };
    let mut session = Session::load(&shipped("dac-tour.json")).unwrap();
    let turns = session.dialogues[0].turns.clone();
    for _ in 0..60 {
        session.dialogues[0].turns.extend(turns.iter().cloned());
    }
    let path = PathBuf::from(path);
    let mut n = 0u64;
    loop {
        session.notes = Some(format!("save number {n}"));
        session.save(&path).unwrap();
        n += 1;
    }
}

#[test]
fn a_process_killed_while_saving_never_leaves_a_truncated_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut saves_seen = std::collections::BTreeSet::new();
    // The test's name as the harness knows it (`sessions::save_forever_when_asked` in the
    // suite binary: module_path! says `suite::sessions`).
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let saver = if module.is_empty() {
        "save_forever_when_asked".to_owned()
    } else {
        format!("{module}::save_forever_when_asked")
    };
    let modified = || std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    for round in 0..12u64 {
        let before = modified();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &saver, "--nocapture", "--test-threads", "1"])
            .env("BKN_TEST_SAVE_FOREVER", &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Once the child is saving (a save of its own has replaced the file: on a busy
        // machine its start alone can take longer than any fixed pause), kill it at a
        // different moment each time, mostly in the middle of a write.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while modified() == before {
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: the child never saved"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(37 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        if path.exists() {
            let session = Session::load(&path)
                .unwrap_or_else(|e| panic!("round {round}: the session is damaged: {e}"));
            assert_eq!(session.dialogues[0].turns.len(), 610);
            saves_seen.insert(session.notes.clone());
        }
    }
    assert!(!saves_seen.is_empty(), "the child saved at least once");
    // Each kill may leave a temporary; the next save removes those of processes that died.
    let mut session = Session::load(&path).unwrap();
    session.notes = Some("saved after the kills".into());
    session.save(&path).unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers,
        vec![std::ffi::OsString::from("s.json")],
        "the next save leaves the session alone"
    );
}

/// A dialogue that went on in a new MCP session (`R`) is recorded so, and replayed so: the
/// replay opens a new session at the same turn, and finds no false difference (the new
/// session's server knows no commitment of the old one). Without the mark, it would.
#[tokio::test]
async fn a_reconnect_is_replayed_as_a_new_session_without_false_differences() {
    use bkn_explorer::client::defaults::{Chosen, Overrides};
    use bkn_explorer::client::dialogue::{Dialogue, Filling};
    use bkn_explorer::protocol::Interface;
    use bkn_explorer::session::DialogueRecord;
    use serde_json::json;

    let spec = ServerSpec::embedded(Interface::Dac);
    let cancel = CancellationToken::new();
    // A reconnect is a new MCP session: 2025-11-25's (over 2026-07-28 the dialogue is kept
    // by DialogID, and a new connection is no new dialogue).
    let connect = ConnectOptions {
        protocol: Some(bkn_explorer::client::generation::ProtocolChoice::Session),
        ..options()
    };
    let overrides = Overrides::default();
    let open = || {
        Dialogue::connect(
            &spec,
            &connect,
            Interface::Dac,
            Chosen::built_in(),
            &overrides,
        )
    };
    let mut first = open().await.unwrap();
    let commit = json!({"Kind": "commitment", "Commitments": [
        {"CommitmentID": "c1", "Statement": "Kiosk#3 not locatedAt MLoc:Square.Fountain"}]});
    let request = first.prepare(commit, Filling::Missing);
    let t0 = first.send(request, &cancel).await;
    let dialog_id = first.dialog_id().to_owned();
    first.close().await;
    let mut second = open().await.unwrap();
    second.start_at(1);
    let grounding = json!({"Kind": "semantic_grounding", "Terms": [{"Text": "bench"}]});
    let request = second.prepare(grounding, Filling::Missing);
    let mut t1 = second.send(request, &cancel).await;
    second.close().await;
    t1.new_session = true;
    assert_eq!(
        t1.response().unwrap()["CommitmentStatus"],
        json!([]),
        "the new session knows no commitment"
    );
    let mut session = Session {
        servers: vec![spec.clone()],
        dialogues: vec![DialogueRecord {
            name: None,
            server: spec.name.clone(),
            interface: Interface::Dac,
            dialog_id,
            notes: None,
            defaults: None,
            protocol_version: Some("2025-11-25".into()),
            turns: vec![t0, t1],
        }],
        ..Default::default()
    };
    // Saved and read back, the mark is kept.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reconnected.json");
    session.save(&path).unwrap();
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"newSession\": true")
    );
    session = Session::load(&path).unwrap();
    let replayed = replay_dialogue(&session, 0, None, &connect, &cancel, |_| {})
        .await
        .unwrap();
    assert!(!replayed.differs(), "{:#?}", replayed.turns[1].differences);
    assert!(replayed.turns[1].replayed.new_session);
    // Replayed over 2026-07-28 (no sessions; pinned: a replay speaks the recorded
    // generation otherwise): the reconnect is a fresh dialogue, renumbered from TurnIndex 0,
    // and again nothing differs.
    let pinned = ConnectOptions {
        protocol: Some(bkn_explorer::client::generation::ProtocolChoice::Stateless),
        ..options()
    };
    let stateless = replay_dialogue(&session, 0, None, &pinned, &cancel, |_| {})
        .await
        .unwrap();
    assert_eq!(
        stateless.turns[1].replayed.request_value()["TurnIndex"],
        0,
        "a new 2026 dialogue starts at 0"
    );
    assert!(
        !stateless.differs(),
        "{:#?}",
        stateless.turns[1].differences
    );
    // The control: the same recording without the mark differs (c1 would be retained).
    session.dialogues[0].turns[1].new_session = false;
    let replayed = replay_dialogue(&session, 0, None, &connect, &cancel, |_| {})
        .await
        .unwrap();
    assert!(
        replayed.differs(),
        "without the mark the replay cannot know"
    );
}

/// A session file never starts a command without consent: replay refuses the stdio command a
/// session names (it could be anything), saying which, unless --trust-servers; validate says
/// which commands a file would start.
#[test]
fn a_session_file_never_starts_a_command_without_consent() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let session = dir.path().join("sent-to-me.json");
    let text = serde_json::json!({
        "format": "bkn-explorer-session/1",
        "servers": {"helpful": {"command": "sh", "args": ["-c", format!("touch {}", marker.display())]}},
        "dialogues": [{"server": "helpful", "interface": "dac", "dialogId": "d", "turns": [
            {"request": {"Header": "PGM-KDA-V1.0", "Mode": "RQ", "Kind": "constraints"},
             "toolError": "refused", "sent": "2026-12-01T00:00:00Z", "latencyMs": 1.0}
        ]}]
    });
    std::fs::write(&session, text.to_string()).unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["replay"])
        .arg(&session)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("touch") && err.contains("--trust-servers"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    let out = std::process::Command::new(common::bin())
        .args(["validate"])
        .arg(&session)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("would start") && text.contains("helpful: sh -c"),
        "{text}"
    );
    assert!(!marker.exists());
}

/// `dialogue --save` never replaces a file that is there (text, a session, anything) without
/// --force; with it, a symlink is written through, the mode is kept, a FIFO is never replaced.
#[cfg(unix)]
#[test]
fn dialogue_save_does_not_overwrite_what_is_there() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        r#"{"Kind": "constraints", "EntityIDs": ["Avatar#7"]}"#,
    )
    .unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let save = |target: &std::path::Path, force: bool| {
        let mut c = std::process::Command::new(common::bin());
        c.arg("dialogue").arg(&requests).arg("--save").arg(target);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let out = save(&notes, false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    // Through a symlink, with --force: the target is replaced, the link and the mode stay.
    let target = dir.path().join("target.json");
    std::fs::write(&target, "{}").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(save(&link, true).status.success());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(bkn_explorer::session::Session::load(&target).is_ok());
    // A FIFO is never replaced by a regular file.
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = save(&fifo, true);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

/// A password in a server's URL (`http://user:PW@host/mcp`) is never written in clear: the
/// session `dialogue --save` writes names it as a `${BKN_…}` reference, and nothing the
/// command says shows it (issue 27, item 8). The reference server behind it takes the turns.
#[tokio::test]
async fn a_password_in_a_url_is_never_saved_in_clear() {
    let server = common::spawn_http(&["dac".into()]).await;
    let url = server.url.replace("http://", "http://ana:Pa55word@");
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        r#"{"Kind": "constraints", "EntityIDs": ["Avatar#7"]}"#,
    )
    .unwrap();
    let saved = dir.path().join("s.json");
    let out = tokio::process::Command::new(common::bin())
        .arg("dialogue")
        .arg(&requests)
        .args(["--url", &url, "--save"])
        .arg(&saved)
        .output()
        .await
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("Pa55word"), "{said}");
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(!text.contains("Pa55word"), "{text}");
    assert!(
        text.contains("ana:${BKN_"),
        "a reference in its place: {text}"
    );
    let session = bkn_explorer::session::Session::load(&saved).unwrap();
    assert_eq!(session.dialogues[0].turns.len(), 1);
}

/// The recording server (`serve --from-session`) in both MCP generations, over stdio and
/// HTTP: a dialogue recorded over 2025-11-25 is answered as recorded to a client of either
/// generation (the commitment's Clash at turn 1), and the client says which it got.
#[tokio::test]
async fn the_recording_server_answers_both_generations() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("two.jsonl");
    std::fs::write(
        &requests,
        concat!(
            r#"{"Kind": "commitment", "Commitments": [{"CommitmentID": "c1", "Statement": "Avatar#7 not locatedAt MLoc:Square.Stage"}]}"#,
            "\n",
            r#"{"Kind": "feasibility", "ProcessActions": [{"Step": 0, "Statement": "MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage"}]}"#,
            "\n"
        ),
    )
    .unwrap();
    let recorded = dir.path().join("recorded.json");
    let dialogue = |server: &[&str], protocol: &str, save: Option<&Path>| {
        let mut c = std::process::Command::new(common::bin());
        c.arg("dialogue")
            .arg(&requests)
            .args(server)
            .args(["--protocol", protocol]);
        if let Some(path) = save {
            c.arg("--save").arg(path);
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = dialogue(&[], "2025-11-25", Some(&recorded));
    assert_eq!(code, Some(0), "{out}{err}");
    let stdio = format!(
        "{} serve --from-session {} --log-level warn",
        common::bin(),
        recorded.display()
    );
    let http = common::spawn_http(&["--from-session".into(), recorded.display().to_string()]).await;
    for server in [["--stdio", stdio.as_str()], ["--url", http.url.as_str()]] {
        for protocol in ["2025-11-25", "2026-07-28"] {
            let case = format!("{} {protocol}", server[0]);
            let (code, out, err) = dialogue(&server, protocol, None);
            assert_eq!(code, Some(0), "{case}: {out}{err}");
            assert!(err.contains(&format!("MCP {protocol} (")), "{case}: {err}");
            let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
            assert_eq!(
                last["response"]["Feasibility"]["Steps"][0]["PAStatus"], "Clash",
                "{case}: {out}"
            );
        }
    }
}

/// A file that comes to be at `dialogue --save`'s place while the dialogue runs (nothing was
/// there when it began) is left alone too: the dialogue is saved beside it, under a free
/// name that the message gives, and the exit says the save did not go where it was asked.
#[test]
fn a_file_that_appears_at_the_save_place_during_the_dialogue_is_left_alone() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("run.json");
    let mut child = std::process::Command::new(common::bin())
        .args(["dialogue", "-", "--save"])
        .arg(&target)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"Kind": "constraints", "EntityIDs": ["Avatar#7"]}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    // The first exchange is out: the dialogue is running. Someone writes the file meanwhile.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(line.contains("\"response\""), "{line}");
    std::fs::write(&target, "written meanwhile\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written meanwhile\n"
    );
    let beside = dir.path().join("run-2.json");
    assert!(err.contains(&beside.display().to_string()), "{err}");
    let saved = bkn_explorer::session::Session::load(&beside).unwrap();
    assert_eq!(saved.dialogues[0].turns.len(), 1);
}

/// A recorded dialogue is replayed in the MCP generation it was recorded in (issue 26), as
/// the reference server's `/health` tells (a 2026-07-28 dialogue stays keyed by DialogID, a
/// 2025-11-25 one ends with its session); a server that refuses that generation now is
/// reached in the one it speaks, and the replay says so.
#[tokio::test]
async fn replay_speaks_the_generation_recorded_and_says_when_the_server_refuses_it() {
    let server = common::spawn_http(&["dac".into()]).await;
    let health = server.url.replace("/mcp", "/health");
    let keyed = || async {
        let v: Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
        v["dialogues"]["2026-07-28"].as_u64().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        r#"{"Kind": "constraints", "EntityIDs": ["Kiosk#3"], "Space": {"SpaceID": "Space:Square"}}"#,
    )
    .unwrap();
    let explorer = |args: Vec<String>| async move {
        let out = tokio::process::Command::new(common::bin())
            .args(&args)
            .output()
            .await
            .unwrap();
        (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let mut saved = Vec::new();
    for (generation, keyed_before) in [("2025-11-25", 0), ("2026-07-28", 0)] {
        let session = dir.path().join(format!("{generation}.json"));
        let (code, said) = explorer(vec![
            "dialogue".into(),
            requests.display().to_string(),
            "--url".into(),
            server.url.clone(),
            "--protocol".into(),
            generation.into(),
            "--save".into(),
            session.display().to_string(),
        ])
        .await;
        assert_eq!(code, Some(0), "{said}");
        let recorded = Session::load(&session).unwrap();
        assert_eq!(
            recorded.dialogues[0].protocol_version.as_deref(),
            Some(generation)
        );
        let keyed_recorded = keyed().await;
        assert_eq!(
            keyed_recorded,
            keyed_before + u64::from(generation == "2026-07-28"),
            "{generation}"
        );
        // Replayed without --protocol: in the recorded generation (auto would speak
        // 2026-07-28, and the server would hold one more dialogue by DialogID).
        let (code, said) = explorer(vec!["replay".into(), session.display().to_string()]).await;
        assert_eq!(code, Some(0), "{said}");
        assert!(!said.contains("goes on over"), "{said}");
        assert_eq!(
            keyed().await,
            keyed_recorded + u64::from(generation == "2026-07-28"),
            "replayed over {generation}"
        );
        saved.push(session);
    }
    // A server that speaks only 2025-11-25 (raw JSON-RPC, initialize only) refuses the
    // recorded 2026-07-28: the replay goes on over 2025-11-25 and says so.
    // With --update, the session then says the generation its new replies were made in.
    let updated = dir.path().join("updated.json");
    std::fs::copy(&saved[1], &updated).unwrap();
    let (code, said) = explorer(vec![
        "replay".into(),
        updated.display().to_string(),
        "--update".into(),
        "--stdio".into(),
        format!("python3 {}", common::peer("raw_dac_server.py")),
    ])
    .await;
    assert_eq!(
        Session::load(&updated).unwrap().dialogues[0]
            .protocol_version
            .as_deref(),
        Some("2025-11-25"),
        "{said}"
    );
    assert_ne!(code, Some(2), "{said}");
    assert!(
        said.contains("the dialogue spoke MCP 2026-07-28, which the server refuses now"),
        "{said}"
    );
    assert!(said.contains("it goes on over MCP 2025-11-25"), "{said}");
}

/// The proxy records the MCP version each dialogue spoke, in both generations, and a
/// replay of the recording speaks it.
#[tokio::test]
async fn the_proxy_records_the_generation_of_each_dialogue() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("rq.jsonl");
    std::fs::write(
        &requests,
        r#"{"Kind": "constraints", "EntityIDs": ["Kiosk#3"], "Space": {"SpaceID": "Space:Square"}}"#,
    )
    .unwrap();
    for generation in ["2025-11-25", "2026-07-28"] {
        let record = dir.path().join(format!("{generation}.jsonl"));
        let through = format!(
            "{bin} proxy --record {} -- {bin} serve dac",
            record.display(),
            bin = common::bin()
        );
        common::dialogue_ok(&requests, &["--stdio", &through, "--protocol", generation]).await;
        let session = Session::load(&record).unwrap();
        assert_eq!(
            session.dialogues[0].protocol_version.as_deref(),
            Some(generation),
            "{}",
            std::fs::read_to_string(&record).unwrap()
        );
    }
}
