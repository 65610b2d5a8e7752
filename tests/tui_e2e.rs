//! The explorer end to end in a real terminal: tmux runs `bkn-explorer` (no arguments: it
//! starts both reference servers over stdio), keys go in with `send-keys`, and what the user
//! would see comes back with `capture-pane`. `.ci/run` installs tmux; without it these tests
//! fail and say so.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A tmux server of its own (its own socket), with one window running the explorer; killed
/// when dropped.
struct Tmux {
    socket: String,
    _data: tempfile::TempDir,
    data_dir: std::path::PathBuf,
}

impl Tmux {
    fn start(width: u16, height: u16, args: &str) -> Tmux {
        Tmux::start_with(width, height, args, &[], tempfile::tempdir().unwrap())
    }

    /// Starts the explorer with `args`, extra environment (`NAME=value`) and a data
    /// directory of the test's making.
    fn start_with(
        width: u16,
        height: u16,
        args: &str,
        env: &[&str],
        data: tempfile::TempDir,
    ) -> Tmux {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.as_ref().is_ok_and(|o| o.status.success()),
            "these tests need tmux (a real terminal to run the explorer in); install it (apt-get install tmux) or run .ci/run, which does"
        );
        let socket = format!(
            "bkn-e2e-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let data_dir = data.path().to_owned();
        let t = Tmux {
            socket,
            _data: data,
            data_dir,
        };
        // A placeholder first, so that the pane is kept after the explorer exits (to read
        // what it left behind and its exit status) however fast that is.
        t.run(&[
            "new-session",
            "-d",
            "-s",
            "e2e",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "sleep 100000",
        ]);
        t.run(&["set-option", "-w", "-t", "e2e", "remain-on-exit", "on"]);
        // The shell says how the explorer exited (tmux's own pane_dead_status is not
        // reliable across versions).
        let command = format!(
            "'{}' {args}; echo bkn-exit=$?",
            env!("CARGO_BIN_EXE_bkn-explorer")
        );
        let data_env = format!("BKN_EXPLORER_DATA_DIR={}", t.data_dir.display());
        let mut respawn = vec![
            "respawn-pane",
            "-k",
            "-t",
            "e2e",
            "-e",
            "TERM=xterm-256color",
            "-e",
            &data_env,
        ];
        for e in env {
            respawn.extend(["-e", e]);
        }
        respawn.push(&command);
        t.run(&respawn);
        t
    }

    fn run(&self, args: &[&str]) -> Output {
        // tmux wants a terminal type even detached (CI may have none).
        let out = Command::new("tmux")
            .env("TERM", "xterm-256color")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "e2e"]).stdout).into()
    }

    /// The screen and what scrolled off it.
    fn history(&self) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["capture-pane", "-p", "-S", "-", "-t", "e2e"])
                .stdout,
        )
        .into()
    }

    /// Keys by tmux name (`F5`, `Down`, `Escape`), one at a time, so that no two run together
    /// into an escape sequence.
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.run(&["send-keys", "-t", "e2e", k]);
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "e2e", "-l", text]);
        std::thread::sleep(Duration::from_millis(40));
    }

    /// Waits until the screen shows all of `texts`; fails with the screen if it never does.
    fn wait_for(&self, texts: &[&str], what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited 30 s for {what} ({texts:?}); the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the explorer to exit; returns its exit status.
    fn wait_exit(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let history = self.history();
            if let Some(at) = history.find("bkn-exit=") {
                return history[at + "bkn-exit=".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "the explorer did not exit; the screen shows:\n{history}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The explorer's process id, from the marker it keeps while running.
    fn explorer_pid(&self) -> String {
        let marker = self.data_dir.join("running");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(pid) = std::fs::read_to_string(&marker) {
                return pid.trim().to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "no running marker in the data directory"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn assert_no_crash_report(data_dir: &Path) {
    let reports: Vec<_> = std::fs::read_dir(data_dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("crash"))
                .collect()
        })
        .unwrap_or_default();
    assert!(reports.is_empty(), "crash reports: {reports:?}");
}

#[test]
fn compose_and_send_a_feasibility_request_and_read_the_pa_statuses() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(
        &["bkn_dac", "bkn_usr", "semantic_grounding"],
        "both servers",
    );
    // Kind row: → four times is feasibility; ↓ four times is Steps.
    t.keys(&["Right", "Right", "Right", "Right"]);
    t.wait_for(&["< feasibility >"], "the feasibility form");
    t.keys(&["Down", "Down", "Down", "Down"]);
    t.type_text("MM-Add Nil Kiosk#3 At MLoc:Square.Stage");
    t.keys(&["Enter"]);
    t.type_text("MM-Move Nil Avatar#7 From MLoc:Square.Gate To MLoc:Square.Stage");
    t.keys(&["Enter"]);
    t.type_text("Post Nil Item#12 To Process#Market");
    t.keys(&["F5"]);
    let screen = t.wait_for(
        &["PARTIALLY FEASIBLE", "PA Status", "Ack", "InsRights"],
        "the feasibility verdict",
    );
    assert!(screen.contains("2 of 3 steps Ack"), "{screen}");
    assert!(screen.contains("answered · partially feasible"), "{screen}");
    // q asks first (one turn is not saved), y leaves, and the terminal is itself again.
    t.keys(&["Tab"]);
    t.keys(&["q"]);
    t.wait_for(
        &["not saved", "Quit anyway?"],
        "the question before quitting",
    );
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
    let after = t.screen();
    assert!(
        !after.contains("bkn-explorer │"),
        "the alternate screen was left behind:\n{after}"
    );
    assert_no_crash_report(&t.data_dir);
    assert!(
        t.data_dir.join("autosave.json").exists(),
        "the turn was autosaved"
    );
}

#[test]
fn a_small_terminal_still_works() {
    let t = Tmux::start(80, 24, "");
    t.wait_for(
        &["server domain-access", "semantic_grounding"],
        "the narrow layout",
    );
    t.keys(&["Down"]);
    t.type_text("Where is the bench?");
    t.keys(&["Down"]);
    t.type_text("bench");
    t.keys(&["F5"]);
    t.wait_for(&["Object classes", "Bench"], "the grounding");
    t.keys(&["C-q"]);
    t.wait_for(&["Quit anyway?"], "the question before quitting");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn sigterm_leaves_cleanly() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    let pid = t.explorer_pid();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    assert_eq!(t.wait_exit(), "0", "SIGTERM is a clean exit");
    assert!(!t.screen().contains("bkn-explorer │"));
    assert!(
        !t.data_dir.join("running").exists(),
        "a clean exit removes the running marker"
    );
    assert_no_crash_report(&t.data_dir);
}

#[test]
fn a_panic_restores_the_terminal_and_leaves_a_report() {
    // The test hook panics after the first frame.
    let t = Tmux::start_with(
        100,
        30,
        "",
        &["BKN_EXPLORER_TEST_PANIC=1"],
        tempfile::tempdir().unwrap(),
    );
    let status = t.wait_exit();
    assert_ne!(status, "0", "a panic is a failure");
    let screen = t.history();
    assert!(
        screen.contains("bkn-explorer crashed")
            && screen.contains("a report with the backtrace is in"),
        "the message is on the restored screen:\n{screen}"
    );
    assert!(
        !screen.contains("bkn-explorer │"),
        "the alternate screen was left:\n{screen}"
    );
    let reports: Vec<_> = std::fs::read_dir(&t.data_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("crash-"))
        .collect();
    assert_eq!(reports.len(), 1);
    let report = std::fs::read_to_string(reports[0].path()).unwrap();
    assert!(report.contains("Backtrace"), "{report}");
}

#[test]
fn a_run_that_did_not_end_cleanly_is_offered_for_recovery() {
    // What a crash leaves: the running marker of a process that is gone, and the autosave.
    let data = tempfile::tempdir().unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    std::fs::write(data.path().join("running"), pid.to_string()).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json"),
        data.path().join("autosave.json"),
    )
    .unwrap();
    let t = Tmux::start_with(120, 40, "", &[], data);
    t.wait_for(
        &["did not close cleanly", "Recover the session"],
        "the offer to recover",
    );
    t.keys(&["y"]);
    let screen = t.wait_for(
        &["Domain Access tour", "recovered"],
        "the recovered session",
    );
    assert!(screen.contains("feasibility"), "{screen}");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
}
