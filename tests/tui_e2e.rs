//! The explorer end to end in a real terminal: tmux runs `bkn-explorer` (no arguments: it
//! starts both reference servers over stdio), keys go in with `send-keys`, and what the user
//! would see comes back with `capture-pane`. `.ci/run` installs tmux; without it these tests
//! fail and say so.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A tmux server of its own (its own socket), with one window running the explorer; killed
/// when dropped.
struct Tmux {
    socket: String,
    _data: Option<tempfile::TempDir>,
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
        let path = data.path().to_owned();
        let mut t = Tmux::start_in(width, height, args, env, &path);
        t._data = Some(data);
        t
    }

    /// Starts the explorer on a data directory the test keeps (to start it again on it).
    fn start_in(width: u16, height: u16, args: &str, env: &[&str], data_dir: &Path) -> Tmux {
        Tmux::start_at(
            width,
            height,
            args,
            env,
            data_dir,
            Path::new(env!("CARGO_MANIFEST_DIR")),
        )
    }

    /// The same in a working directory of the test's choosing.
    fn start_at(
        width: u16,
        height: u16,
        args: &str,
        env: &[&str],
        data_dir: &Path,
        cwd: &Path,
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
        let t = Tmux {
            socket,
            _data: None,
            data_dir: data_dir.to_owned(),
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
        // The remembered theme and settings of the test's own (none).
        let config_env = format!(
            "BKN_EXPLORER_CONFIG_DIR={}",
            t.data_dir.join("config").display()
        );
        let mut respawn = vec![
            "respawn-pane",
            "-k",
            "-t",
            "e2e",
            "-e",
            "TERM=xterm-256color",
            "-e",
            &data_env,
            "-e",
            &config_env,
            "-c",
            cwd.to_str().expect("a UTF-8 path"),
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

    /// Waits until the screen stops changing (two captures 150 ms apart are equal), so that
    /// the keys sent before have all been drawn.
    fn wait_still(&self) -> String {
        self.wait_until("the screen to settle", |_| true)
    }

    /// Waits until `holds` is true of a screen that has stopped changing; fails with the
    /// screen if it never is.
    fn wait_until(&self, what: &str, holds: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = self.screen();
        loop {
            std::thread::sleep(Duration::from_millis(150));
            let screen = self.screen();
            if screen == last && holds(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited 30 s for {what}; the screen shows:\n{screen}"
            );
            last = screen;
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

    /// The explorer's process id, from the marker it keeps while running (`running-PID`).
    fn explorer_pid(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(pid) = running_pids(&self.data_dir).into_iter().next() {
                return pid;
            }
            assert!(
                Instant::now() < deadline,
                "no running marker in the data directory"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// This run's autosave.
    fn autosave(&self) -> std::path::PathBuf {
        autosave_of(&self.data_dir, &self.explorer_pid())
    }
}

/// The process ids of the running markers in a data directory.
fn running_pids(data_dir: &Path) -> Vec<String> {
    let mut pids: Vec<String> = std::fs::read_dir(data_dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("running-")
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    pids.sort();
    pids
}

/// A run's own autosave, named by its process id.
fn autosave_of(data_dir: &Path, pid: &str) -> std::path::PathBuf {
    data_dir.join(format!("autosave-{pid}.json"))
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
    // The composer starts on the first field; ↑ is the Kind row, where → four times is
    // feasibility; ↓ four times is Steps.
    t.keys(&["Up"]);
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
    assert!(screen.contains("answered · partia"), "{screen}");
    // The transcript row counts the steps by PA Status.
    assert!(screen.contains("2 Ack · 1 InsRights"), "{screen}");
    // Out of the composer (Esc: no turn is pending), q asks first (one turn is not saved),
    // y leaves, and the terminal is itself again.
    t.keys(&["Escape"]);
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
        t.data_dir.join("last-run.json").exists(),
        "the turn was autosaved, and the autosave kept as the last run's"
    );
    assert!(
        running_pids(&t.data_dir).is_empty()
            && !std::fs::read_dir(&t.data_dir).unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("autosave")),
        "nothing to offer back"
    );
}

#[test]
fn a_small_terminal_still_works() {
    let t = Tmux::start(80, 24, "");
    t.wait_for(
        &["server domain-access", "semantic_grounding"],
        "the narrow layout",
    );
    send_a_grounding(&t);
    t.keys(&["C-q"]);
    t.wait_for(&["Quit anyway?"], "the question before quitting");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn sigterm_without_work_leaves_cleanly() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    let pid = t.explorer_pid();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    assert_eq!(t.wait_exit(), "143", "the shell's code for SIGTERM");
    assert!(!t.screen().contains("bkn-explorer │"));
    assert!(
        running_pids(&t.data_dir).is_empty(),
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
    // Recovered turns are saved nowhere yet: quitting asks.
    t.keys(&["C-q"]);
    t.wait_for(&["10 turns are not saved"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Sends a grounding Request from the composer and waits for its answer.
fn send_a_grounding(t: &Tmux) {
    // F5 before the dialogue is open sends nothing ("still connecting").
    // The dialogue's title says it is open at any width (the status line's context is
    // cut short at 80 columns in the composer).
    t.wait_for(&["· open "], "the dialogue open");
    t.type_text("Where is the bench?");
    t.keys(&["Tab"]);
    t.type_text("bench");
    t.keys(&["F5"]);
    t.wait_for(&["Object classes", "Bench"], "the grounding");
}

fn signal(pid: &str, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// A signal with a turn not saved: the turn goes to the autosave, the running marker stays,
/// and the next start offers it back (and a new turn does not overwrite it first).
fn a_signal_keeps_the_work_for_the_next_start(name: &str, code: &str) {
    let data = tempfile::tempdir().unwrap();
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
        send_a_grounding(&t);
        let pid = t.explorer_pid();
        signal(&pid, name);
        assert_eq!(t.wait_exit(), code);
        assert!(
            !t.screen().contains("bkn-explorer │"),
            "the terminal is restored"
        );
        assert_eq!(
            std::fs::read_to_string(data.path().join(format!("running-{pid}"))).unwrap(),
            format!("ended SIG{name}"),
            "the marker stays, saying why, so that the next start offers the autosave"
        );
        let autosave = std::fs::read_to_string(autosave_of(data.path(), &pid)).unwrap();
        assert!(
            autosave.contains("\"bench\""),
            "the turn is in the autosave"
        );
    }
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    let screen = t.wait_for(
        &[&format!("ended by SIG{name}"), "Recover the session"],
        "the offer",
    );
    assert!(
        !screen.contains("did not close cleanly"),
        "a signal is no crash:\n{screen}"
    );
    t.keys(&["y"]);
    let screen = t.wait_for(
        &["recovered the autosaved session", "semantic_grounding"],
        "the recovered turn",
    );
    assert!(screen.contains("bench"), "{screen}");
    t.keys(&["C-q"]);
    t.wait_for(
        &["Quit anyway?"],
        "the question: the recovered turn is not saved",
    );
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
    assert_no_crash_report(data.path());
}

#[test]
fn sigterm_with_unsaved_work_is_recovered_at_the_next_start() {
    a_signal_keeps_the_work_for_the_next_start("TERM", "143");
}

#[test]
fn sighup_a_closed_terminal_is_recovered_at_the_next_start() {
    a_signal_keeps_the_work_for_the_next_start("HUP", "129");
}

#[test]
fn a_refused_recovery_keeps_the_file_and_new_turns_do_not_overwrite_it() {
    let data = tempfile::tempdir().unwrap();
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
        send_a_grounding(&t);
        signal(&t.explorer_pid(), "TERM");
        t.wait_exit();
    }
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    t.wait_for(&["Recover the session"], "the offer");
    t.keys(&["n"]);
    t.wait_for(&["semantic_grounding"], "a fresh start");
    send_a_grounding(&t);
    // The runner moves the file aside on its own task: wait for it.
    let moved_aside = || -> Vec<_> {
        std::fs::read_dir(data.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("recovered-"))
            .collect()
    };
    until("the crashed run's autosave moved aside", || {
        !moved_aside().is_empty()
    });
    let kept = moved_aside();
    assert_eq!(
        kept.len(),
        1,
        "the crashed run's autosave was moved aside once"
    );
    let text = std::fs::read_to_string(kept[0].path()).unwrap();
    assert!(
        text.contains("Where is the bench?"),
        "and still holds its turn"
    );
    t.keys(&["Escape", "q"]);
    t.wait_for(&["Quit anyway?"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
    assert!(
        running_pids(data.path()).is_empty(),
        "a clean quit removes the marker"
    );
}

#[test]
fn closing_a_dialogue_with_turns_asks_first() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    send_a_grounding(&t);
    t.keys(&["Escape", "x"]);
    t.wait_for(&["It has 1 turn", "Close it?"], "the question");
    t.keys(&["n"]);
    let screen = t.wait_for(&["1 domain-access #1"], "the dialogue still there");
    assert!(!screen.contains("It has 1 turn"), "{screen}");
    t.keys(&["x"]);
    t.wait_for(&["It has 1 turn"], "the question again");
    t.keys(&["y"]);
    let screen = t.wait_for(&["1 user-state #1"], "the other dialogue in view");
    assert!(!screen.contains("domain-access #1"), "{screen}");
    // The autosave no longer has it.
    let autosave = t.autosave();
    until("the autosave without the closed dialogue", || {
        !std::fs::read_to_string(&autosave)
            .unwrap_or_default()
            .contains("bench")
    });
    // Its turn is no longer counted as unsaved: q quits at once.
    let screen = t.wait_still();
    assert!(!screen.contains("unsaved"), "{screen}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn save_as_over_an_existing_file_asks_first() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious.json");
    std::fs::write(&target, "precious").unwrap();
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    send_a_grounding(&t);
    t.keys(&["Escape", "S", "C-u"]);
    t.type_text(&target.display().to_string());
    t.wait_for(&[&format!("→ {}", target.display())], "the full path shown");
    t.keys(&["Enter"]);
    t.wait_for(&["exists. Overwrite it?"], "the question");
    t.keys(&["n"]);
    // The answer taken (the question gone, the screen still), the file is as it was. (That
    // `n` asks for no save at all is the update's to show: tests/tui_update.rs.)
    t.wait_until("the question gone", |s| !s.contains("Overwrite it?"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    t.keys(&["S", "C-u"]);
    t.type_text(&target.display().to_string());
    t.keys(&["Enter"]);
    t.wait_for(&["exists. Overwrite it?"], "the question again");
    t.keys(&["y"]);
    t.wait_for(&["saved"], "the save");
    let saved = bkn_explorer::session::Session::load(&target).expect("a session now");
    assert_eq!(saved.dialogues[0].turns.len(), 1);
    // A folder that does not exist is not made.
    let missing = dir.path().join("no/such/folder/s.json");
    t.keys(&["S", "C-u"]);
    t.type_text(&missing.display().to_string());
    t.keys(&["Enter"]);
    t.wait_for(&["not saved: that folder does not exist"], "the refusal");
    assert!(!dir.path().join("no").exists());
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0", "saved: no question on quit");
}

/// The 1-based (column, row) of the first cell of a text on the screen.
fn position_of(screen: &str, text: &str) -> (usize, usize) {
    for (row, line) in screen.lines().enumerate() {
        if let Some(at) = line.find(text) {
            return (line[..at].chars().count() + 1, row + 1);
        }
    }
    panic!("{text:?} is not on the screen:\n{screen}");
}

#[test]
fn a_click_after_keyboard_scrolling_selects_the_row_under_the_pointer() {
    let t = Tmux::start(100, 26, "--session sessions/dac-tour.json");
    t.wait_for(&["Domain Access tour", "recorded"], "the session");
    // The transcript has the focus; Home, then down the list until the window has moved.
    t.keys(&["Home"]);
    for _ in 0..9 {
        t.keys(&["Down"]);
    }
    t.keys(&["Up", "Up", "Up", "Up", "Up", "Up"]);
    // Every key drawn before the click is aimed: the screen read too early would put the
    // pointer on a row that is about to move.
    let screen = t.wait_still();
    // Click the affordances row wherever the frame drew it (SGR mouse: press and release).
    let (x, y) = position_of(&screen, "behavioural_expec");
    t.run(&[
        "send-keys",
        "-t",
        "e2e",
        "-l",
        &format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m"),
    ]);
    // The selection mark is on the clicked row, and on no other transcript row.
    let marked = |screen: &str| -> Vec<usize> {
        screen
            .lines()
            .enumerate()
            .skip(1) // the tab bar (its › says more tabs follow)
            .filter(|(_, l)| l.contains('›'))
            .map(|(i, _)| i + 1)
            .collect()
    };
    let screen = t.wait_until("the click to select its row", |s| marked(s) == [y]);
    assert_eq!(
        marked(&screen),
        [y],
        "the clicked row is the selected one:\n{screen}"
    );
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn the_explorers_flags_work_at_the_top_level() {
    // --session and --theme, as `bkn-explorer --session FILE --theme light`.
    let data = tempfile::tempdir().unwrap();
    let t = Tmux::start_in(
        120,
        40,
        "--session sessions/dac-tour.json --theme light",
        &[],
        data.path(),
    );
    let screen = t.wait_for(&["Domain Access tour", "light │"], "the session, in light");
    assert!(!screen.contains("error:"), "{screen}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
    drop(t);
    // --theme is remembered for the next run.
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    t.wait_for(&["light │", "bkn_dac"], "the remembered theme");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
    // --stdio, with the server's command line.
    let bin = env!("CARGO_BIN_EXE_bkn-explorer");
    let t = Tmux::start(120, 40, &format!("--stdio \"'{bin}' serve dac\""));
    t.wait_for(&["bkn_dac", "open"], "the stdio server");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
    // --servers, a file in the mcpServers shape.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("servers.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"mcpServers": {{"square": {{"command": "{bin}", "args": ["serve", "usr"]}}}}}}"#
        ),
    )
    .unwrap();
    let t = Tmux::start(120, 40, &format!("--servers '{}'", file.display()));
    t.wait_for(&["square", "bkn_usr"], "the server of the file");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
    // --url, a Streamable HTTP server.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(common::spawn_http(&["dac".to_owned()]));
    let t = Tmux::start(120, 40, &format!("--url {}", server.url));
    t.wait_for(&["bkn_dac", "http", "open"], "the HTTP server");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
    drop(server);
}

#[test]
fn a_server_found_in_the_projects_mcp_json_is_added_used_and_removed() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".mcp.json"),
        serde_json::json!({"mcpServers": {"lab-dac": {
            "type": "stdio",
            "command": env!("CARGO_BIN_EXE_bkn-explorer"),
            "args": ["serve", "dac"]
        }}})
        .to_string(),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let usr = format!("--stdio '{} serve usr'", env!("CARGO_BIN_EXE_bkn-explorer"));
    let t = Tmux::start_at(120, 40, &usr, &[], data.path(), project.path());
    t.wait_for(&["bkn_usr"], "the one server named");
    // The palette offers the server the project's .mcp.json defines.
    t.keys(&["C-p"]);
    t.type_text("add server lab");
    t.wait_for(&["Add server lab-dac"], "the server found, in the palette");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["lab-dac", "bkn_dac", "added lab-dac"], "a dialogue on it");
    assert!(screen.contains("semantic_grounding"), "{screen}");
    // It works like any other: a Request and its Response.
    t.keys(&["F5"]);
    t.wait_for(&["answered"], "a turn on the added server");
    // Removed from the sidebar: it has a turn, so the explorer asks first.
    t.keys(&["Escape", "F6"]);
    t.keys(&["C-p"]);
    t.type_text("remove the server");
    t.keys(&["Enter"]);
    t.wait_for(&["Remove lab-dac", "y removes"], "the question");
    t.keys(&["y"]);
    let screen = t.wait_until("lab-dac to leave the sidebar", |s| {
        s.contains("removed lab-dac") && !s.contains("bkn_dac")
    });
    assert!(screen.contains("bkn_usr"), "{screen}");
    // Its turn is in no later save (the question said so): no longer counted, no question.
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// `bkn-explorer proxy --record RECORD -- bkn-explorer serve dac`, with the agent's side
/// (its standard input) and the answers (its standard output, by line) for the test to speak.
fn stdio_proxy(
    record: &Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let bin = env!("CARGO_BIN_EXE_bkn-explorer");
    let mut proxy = std::process::Command::new(bin)
        .arg("proxy")
        .arg("--record")
        .arg(record)
        .args(["--", bin, "serve", "dac", "--log-level", "warn"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent = proxy.stdin.take().unwrap();
    let answers = std::io::BufReader::new(proxy.stdout.take().unwrap()).lines();
    (proxy, agent, answers)
}

/// A real agent's dialogue seen live: an agent (this test, raw JSON-RPC) talks through
/// `bkn-explorer proxy` to the reference server while the explorer watches the recording.
/// Each turn shows as it passes (the time from the Request leaving the agent to the row on
/// the screen is printed: the screen is polled every 5 ms); the end of the agent's run is
/// said; `O` takes the dialogue over in one of the explorer's own.
#[test]
fn a_proxied_dialogue_is_watched_live_and_taken_over() {
    use std::io::Write;
    let data = tempfile::tempdir().unwrap();
    let record = data.path().join("live.jsonl");
    let (mut proxy, mut agent, mut answers) = stdio_proxy(&record);
    let mut say = |line: String| {
        agent.write_all(format!("{line}\n").as_bytes()).unwrap();
        agent.flush().unwrap();
    };
    say(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}}"#.into());
    answers.next().unwrap().unwrap();
    say(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());

    let t = Tmux::start_in(
        120,
        40,
        &format!("--watch {}", record.display()),
        &[],
        data.path(),
    );
    t.wait_for(&["watching"], "the explorer following the recording");
    let request = |id: u64, turn: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bkn_dac","arguments":{{"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":"MI:PublicSquare","UEnvironment":"UE:Lab","SessionID":"s-1","QueryID":"q-{id}","QueryTime":"2026-12-01T00:00:00.000Z","DialogID":"D-agent","TurnIndex":{turn},"DataXMData":{{"DataID":"x-{id}","Source":[{{"AIMID":"agent"}}]}},"Kind":"constraints","EntityIDs":["Kiosk#{turn}"],"Space":{{"SpaceID":"Space:Square"}}}}}}}}"#
        )
    };
    for turn in 0..3u64 {
        let started = Instant::now();
        say(request(10 + turn, turn));
        let row = format!("Kiosk#{turn}, Space:Square");
        loop {
            if t.screen().contains(&row) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "turn {turn} never shown:\n{}",
                t.screen()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        eprintln!(
            "turn {turn} on the screen {:.0} ms after the agent sent it",
            started.elapsed().as_secs_f64() * 1000.0
        );
        answers.next().unwrap().unwrap();
    }
    let screen = t.screen();
    assert!(
        screen.contains("◉ live")
            && screen.contains("D-agent")
            && screen.contains("O takes it over"),
        "{screen}"
    );
    // The agent ends its run: the dialogue becomes a recorded one, and the explorer says so.
    drop(agent);
    assert!(proxy.wait().unwrap().success());
    t.wait_for(&["ended"], "the end of the proxied run");
    // Taken over at its second turn, in a dialogue of the explorer's own.
    t.keys(&["Escape", "k", "O"]);
    t.wait_for(
        &[
            "taken over",
            "took over: 2 recorded Requests sent again, 0 answered differently",
        ],
        "the take-over",
    );
}

/// A 2026-07-28 agent's dialogues (no session: grouped by DialogID) watched while the
/// proxy is killed with SIGKILL, which leaves no end in the recording: the explorer tells the
/// recording's writer is gone (its lock let go) and shows both dialogues "ended (recording
/// stopped)", never live again, at 120x40 and 80x24.
#[test]
fn a_killed_proxys_dialogues_stop_being_live() {
    use std::io::Write;
    for (width, height) in [(120, 40), (80, 24)] {
        let data = tempfile::tempdir().unwrap();
        let record = data.path().join("killed.jsonl");
        let (mut proxy, mut agent, mut answers) = stdio_proxy(&record);
        let t = Tmux::start_in(
            width,
            height,
            &format!("--watch {}", record.display()),
            &[],
            data.path(),
        );
        t.wait_for(&["watching"], "the explorer following the recording");
        // No initialize: each request says its version and capabilities (2026-07-28).
        for (id, dialog) in [(1, "D-first"), (2, "D-second")] {
            let request = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"bkn_dac","arguments":{{"Header":"PGM-KDA-V1.0","Mode":"RQ","MInstance":"MI:PublicSquare","UEnvironment":"UE:Lab","SessionID":"s-1","QueryID":"q-{id}","QueryTime":"2026-12-01T00:00:00.000Z","DialogID":"{dialog}","TurnIndex":0,"DataXMData":{{"DataID":"x-{id}","Source":[{{"AIMID":"agent"}}]}},"Kind":"constraints","EntityIDs":["Kiosk#{id}"],"Space":{{"SpaceID":"Space:Square"}}}}}}}}"#
            );
            agent.write_all(format!("{request}\n").as_bytes()).unwrap();
            agent.flush().unwrap();
            answers.next().unwrap().unwrap();
        }
        let live = t.wait_for(&["◉ live", "proxied 2"], "both dialogues live");
        assert!(live.contains("proxied 1"), "{live}");
        proxy.kill().unwrap();
        proxy.wait().unwrap();
        let shown = t.wait_for(
            &["recording stopped", "◇"],
            "the dialogues no longer shown live",
        );
        assert!(!shown.contains("◉"), "nothing is live any more:\n{shown}");
        // The dialogue in view says so on the status line (or its header), and the other's
        // tab and row carry the mark.
        assert!(
            shown.matches('◇').count() >= 2,
            "both dialogues marked:\n{shown}"
        );
        drop(agent);
    }
}

/// A session file someone sent names a command to start its server: in a real terminal, `r`
/// (replay) asks first, showing the command; `n` keeps it from running (nothing is started),
/// `y` starts it (issue 27, item 1: it ran `sh -c …` without asking).
#[test]
fn a_command_a_session_file_names_runs_only_once_the_user_says_so() {
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
    let t = Tmux::start(140, 40, &format!("--session '{}'", session.display()));
    t.wait_for(&["helpful"], "the session's dialogue");
    t.keys(&["r"]);
    t.wait_for(&["touch", "Start it?"], "the question, with the command");
    t.keys(&["n"]);
    t.wait_until("the question gone", |s| !s.contains("Start it?"));
    assert!(!marker.exists(), "the command ran without consent");
    t.keys(&["r"]);
    t.wait_for(&["Start it?"], "the question again");
    t.keys(&["y"]);
    until("the command to run once allowed", || marker.exists());
}

/// Two explorers on one data directory: each autosaves to its own file; the one killed is
/// offered back at the next start, the other's clean quit offers nothing.
#[test]
fn two_explorers_at_once_keep_their_own_autosaves() {
    let data = tempfile::tempdir().unwrap();
    let first = Tmux::start_in(120, 40, "", &[], data.path());
    first.wait_for(&["bkn_dac", "bkn_usr"], "the first explorer");
    let first_pid = first.explorer_pid();
    let second = Tmux::start_in(120, 40, "", &[], data.path());
    second.wait_for(&["bkn_dac", "bkn_usr"], "the second explorer");
    assert!(
        !second.screen().contains("Recover"),
        "a running explorer's work is not offered"
    );
    let pids = running_pids(data.path());
    assert_eq!(pids.len(), 2, "{pids:?}");
    let second_pid = pids.into_iter().find(|p| *p != first_pid).unwrap();
    send_a_grounding(&first);
    send_a_grounding(&second);
    for pid in [&first_pid, &second_pid] {
        until(&format!("the autosave of {pid}"), || {
            std::fs::read_to_string(autosave_of(data.path(), pid))
                .is_ok_and(|t| t.contains("bench"))
        });
    }
    signal(&first_pid, "KILL");
    first.wait_exit();
    // The second quits as the user asks: nothing of its own to offer next time.
    second.keys(&["Escape", "q"]);
    second.wait_for(&["Quit anyway?"], "the question");
    second.keys(&["y"]);
    assert_eq!(second.wait_exit(), "0");
    assert!(data.path().join("last-run.json").exists());
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    t.wait_for(
        &["did not close cleanly", "Recover the session"],
        "the killed run's turns offered",
    );
    t.keys(&["y"]);
    let screen = t.wait_for(
        &["recovered the autosaved session", "semantic_grounding"],
        "the recovered turn",
    );
    assert!(screen.contains("bench"), "{screen}");
    t.keys(&["C-q"]);
    t.wait_for(&["Quit anyway?"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
    assert_no_crash_report(data.path());
}

/// The terminal closed under the explorer (tmux kills the pane: SIGHUP, then EIO on its
/// output): no crash report, the turn kept, and the next start offers it without calling it
/// a crash.
#[test]
fn a_closed_terminal_ends_like_a_quit_with_unsaved_work() {
    let data = tempfile::tempdir().unwrap();
    let pid;
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
        send_a_grounding(&t);
        pid = t.explorer_pid();
        t.run(&["kill-pane", "-t", "e2e"]);
        until("the explorer to leave", || {
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
        });
    }
    assert_no_crash_report(data.path());
    assert_eq!(
        std::fs::read_to_string(data.path().join(format!("running-{pid}"))).unwrap(),
        "ended SIGHUP"
    );
    assert!(
        std::fs::read_to_string(autosave_of(data.path(), &pid))
            .unwrap()
            .contains("bench")
    );
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    let screen = t.wait_for(&["its terminal closed", "Recover the session"], "the offer");
    assert!(!screen.contains("did not close cleanly"), "{screen}");
    t.keys(&["n"]);
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Every headless command that prints ends quietly when its reader goes away (`| head -3`):
/// no panic, no backtrace, the shell's code for SIGPIPE.
#[test]
fn headless_commands_end_quietly_when_their_reader_goes_away() {
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json");
    let sessions = sessions.to_str().unwrap();
    for args in [
        &["schema", "usr-user"][..],
        &["schema", "dac"],
        &["config", "path"],
        &["validate", sessions],
        &["replay", "--help"],
    ] {
        // The reader closes at once; `| head -3` is the same, a little later.
        let script = format!(
            "'{}' {} 2>err | (exec 0<&-; true); echo ${{PIPESTATUS[0]}} > code",
            env!("CARGO_BIN_EXE_bkn-explorer"),
            args.join(" ")
        );
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("bash")
            .args(["-c", &script])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let err = std::fs::read_to_string(dir.path().join("err")).unwrap();
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe") && !err.contains("backtrace"),
            "{args:?}: {err}"
        );
        let code = std::fs::read_to_string(dir.path().join("code")).unwrap();
        assert!(
            ["0", "1", "141"].contains(&code.trim()),
            "{args:?} exited {code}: {err}"
        );
    }
}

/// Ctrl-O with a turn not saved asks: n stays; a sets the turn aside in a file of the data
/// directory and opens the Open overlay, which lists it.
#[test]
fn ctrl_o_with_unsaved_turns_asks_first() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    send_a_grounding(&t);
    t.keys(&["Escape", "C-o"]);
    t.wait_for(
        &["Open another session", "1 turn is not saved", "a set aside"],
        "the question",
    );
    t.keys(&["n"]);
    let screen = t.wait_until("the question gone", |s| !s.contains("Open another session"));
    assert!(
        screen.contains("Bench"),
        "the turn is still in view:\n{screen}"
    );
    t.keys(&["C-o"]);
    t.wait_for(&["Open another session"], "the question again");
    t.keys(&["a"]);
    t.wait_for(
        &["set aside in", "set-aside-"],
        "the turn set aside, and Open",
    );
    let folder = t.data_dir.join("set-aside");
    let files: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(files.len(), 1);
    let kept = bkn_explorer::session::Session::load(&files[0].as_ref().unwrap().path()).unwrap();
    assert_eq!(kept.dialogues[0].turns.len(), 1);
    t.keys(&["Escape", "q"]);
    assert_eq!(t.wait_exit(), "0", "set aside: no question on quit");
}

/// A paste of lines ended by CR (tmux's paste-buffer turns LF into CR, as terminals paste)
/// keeps its lines in Steps.
#[test]
fn a_pasted_statement_per_line_stays_one_per_line() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    t.keys(&["Up", "Right", "Right", "Right", "Right"]);
    t.wait_for(&["< feasibility >"], "the feasibility form");
    t.keys(&["Down", "Down", "Down", "Down"]);
    t.run(&[
        "set-buffer",
        "MM-Add Nil Kiosk#3 At MLoc:Square.Stage\nPost Nil Item#12 To Process#Market",
    ]);
    t.run(&["paste-buffer", "-p", "-t", "e2e"]);
    let screen = t.wait_for(&["Post Nil Item#12"], "the paste");
    let post = screen
        .lines()
        .find(|l| l.contains("Post Nil Item#12"))
        .unwrap();
    assert!(!post.contains("Kiosk#3"), "one line:\n{screen}");
    t.keys(&["F5"]);
    t.wait_for(&["2 steps"], "two steps sent");
    t.keys(&["Escape", "q", "y"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Ctrl-S does not write over a session file changed on disk since it was opened: n leaves
/// it, o overwrites it.
#[test]
fn ctrl_s_asks_before_writing_over_a_file_changed_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tour.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/dac-tour.json"),
        &file,
    )
    .unwrap();
    let t = Tmux::start(120, 40, &format!("--session '{}'", file.display()));
    t.wait_for(&["Domain Access tour"], "the session");
    // Another program writes it.
    let changed = format!("{}\n", std::fs::read_to_string(&file).unwrap());
    std::fs::write(&file, &changed).unwrap();
    t.keys(&["C-s"]);
    t.wait_for(
        &["The file changed on disk", "o overwrite", "s save as"],
        "the question",
    );
    t.keys(&["n"]);
    t.wait_until("the question gone", |s| !s.contains("changed on disk"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), changed);
    t.keys(&["C-s"]);
    t.wait_for(&["The file changed on disk"], "the question again");
    t.keys(&["o"]);
    t.wait_for(&["saved"], "the save");
    assert_ne!(std::fs::read_to_string(&file).unwrap(), changed);
    // Saved by this explorer: the next Ctrl-S asks nothing.
    t.keys(&["C-s"]);
    t.wait_for(&["saved"], "the save");
    assert!(!t.screen().contains("changed on disk"));
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Enter on a turn puts its Request in the composer, keeping the unsent draft it replaces
/// (Ctrl-Z brings it back); quitting mentions a draft.
#[test]
fn a_replaced_draft_comes_back_with_ctrl_z_and_quitting_mentions_it() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    send_a_grounding(&t);
    t.type_text(" kiosk");
    t.wait_for(&["bench kiosk"], "the draft");
    t.keys(&["Escape", "Enter"]);
    let screen = t.wait_for(&["Ctrl-Z brings it back"], "the draft kept");
    assert!(!screen.contains("bench kiosk"), "{screen}");
    t.keys(&["C-z"]);
    t.wait_for(&["bench kiosk"], "the draft back");
    t.keys(&["Escape", "q"]);
    t.wait_for(&["has an unsent draft", "y quits"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Prose in a commitment is never rewritten by a completion, and Enter there is a new line.
#[test]
fn completion_never_rewrites_prose_in_a_commitment() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    // The Kind row; c three times is commitment; Question, then Commit.
    t.keys(&["Up", "c", "c", "c"]);
    t.wait_for(&["< commitment >"], "the commitment form");
    t.keys(&["Down", "Down"]);
    t.type_text("c1: Kiosk#3 locatedAt near the fountain");
    t.keys(&["Enter"]);
    t.type_text("c2: Avatar#7 isA Foun");
    t.wait_for(&["Fountain#1"], "an ID offered");
    t.keys(&["Enter"]);
    let screen = t.wait_until("two lines and a third", |s| {
        !s.contains("↑↓ Tab") && s.contains("c2: Avatar#7 isA Foun")
    });
    assert!(
        screen.contains("near the fountain") && !screen.contains("near the Fountain#1"),
        "{screen}"
    );
    let c1 = position_of(&screen, "c1: Kiosk#3").1;
    let c2 = position_of(&screen, "c2: Avatar#7 isA Foun").1;
    assert_eq!(c2, c1 + 1, "one per line:\n{screen}");
    t.keys(&["C-q"]);
    t.wait_for(&["has an unsent draft"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

/// An unsent draft survives a kill: it is autosaved as it changes and offered back.
#[test]
fn an_unsent_draft_is_autosaved_and_recovered_after_a_kill() {
    let data = tempfile::tempdir().unwrap();
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
        t.type_text("Where is the fountain?");
        let pid = t.explorer_pid();
        let drafts = data.path().join(format!("drafts-{pid}.json"));
        until("the draft autosaved", || {
            std::fs::read_to_string(&drafts).is_ok_and(|d| d.contains("fountain"))
        });
        signal(&pid, "KILL");
        t.wait_exit();
    }
    let t = Tmux::start_in(120, 40, "", &[], data.path());
    t.wait_for(&["did not close cleanly", "unsent drafts"], "the offer");
    t.keys(&["y"]);
    t.wait_for(
        &["recovered the unsent drafts", "Where is the fountain?"],
        "the draft back",
    );
    t.keys(&["C-q"]);
    t.wait_for(&["has an unsent draft"], "the question");
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

/// With NO_COLOR the selected row of the palette, the completions and the protocol log is
/// still seen: reverse video.
#[test]
fn no_color_still_shows_the_selected_rows() {
    let t = Tmux::start_with(120, 40, "", &["NO_COLOR=1"], tempfile::tempdir().unwrap());
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    let styled = || {
        String::from_utf8_lossy(&t.run(&["capture-pane", "-e", "-p", "-t", "e2e"]).stdout)
            .into_owned()
    };
    let reversed_line = |screen: &str, text: &str| {
        screen
            .lines()
            .find(|l| l.contains(text))
            .is_some_and(|l| l.contains("\x1b[7m"))
    };
    let screen = styled();
    assert!(!screen.contains("\x1b[38;"), "no colour at all:\n{screen}");
    // The palette.
    t.keys(&["Escape", "C-p"]);
    t.wait_for(&["Quit"], "the palette");
    assert!(reversed_line(&styled(), "Ctrl-q"), "{}", styled());
    t.type_text("focus log");
    t.wait_still();
    t.keys(&["Enter"]);
    t.wait_still();
    // The protocol log, its last entry selected.
    t.keys(&["End"]);
    let screen = t.wait_until("a log row selected", |_| true);
    let screen_styled = styled();
    assert!(
        screen_styled
            .lines()
            .any(|l| l.contains("\x1b[7m") && l.contains("#")),
        "{screen}"
    );
    // The completions, asked for in Commit.
    t.keys(&["c", "Down", "Down"]);
    t.type_text("c1: Ben");
    t.keys(&["C-Space"]);
    t.wait_for(&["Bench"], "the completions");
    let screen = styled();
    assert!(
        screen
            .lines()
            .any(|l| l.contains("\x1b[7m") && l.contains("Bench") && !l.contains("c1: Ben")),
        "{screen}"
    );
    t.keys(&["Escape", "Escape", "C-q", "y"]);
}

/// Waits until `holds` (a file written, a process gone: what the program does, not a time);
/// fails after a generous guard, saying what it waited for.
fn until(what: &str, holds: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !holds() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits up to `secs` until the screen shows all of `texts` (a whole certify run takes tens
/// of seconds in a debug build).
fn wait_long(t: &Tmux, texts: &[&str], what: &str, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = t.screen();
        if texts.iter().all(|x| screen.contains(x)) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "waited {secs} s for {what} ({texts:?}); the screen shows:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn certify_from_the_palette_shows_the_rules_of_the_reference_server() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    t.keys(&["Escape", ":"]);
    t.type_text("certify this");
    t.keys(&["Enter"]);
    let screen = wait_long(&t, &["Certify domain-access (BKN-DAC)", "░"], "the bar", 60);
    assert!(screen.contains("Esc stop"), "{screen}");
    let screen = wait_long(&t, &["✗ 0 failed", " rules, "], "the report", 300);
    assert!(screen.contains("✓ pass tools.found-by-header"), "{screen}");
    assert!(screen.contains("- skip turns.dialog-id"), "{screen}");
    // Only the skipped rules: f twice more than failed and passed.
    t.keys(&["f", "f", "f"]);
    let screen = t.wait_for(&["filter (only skip)"], "the skipped rules");
    assert!(!screen.contains("✓ pass"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_until("the pane to close", |s| {
        !s.contains("Certify domain-access")
    });
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn enter_on_a_failed_rule_opens_its_evidence_against_a_faulty_server() {
    let t = Tmux::start(
        80,
        24,
        &format!(
            "--stdio '{} tests/peers/certify_peer.py --forget-release'",
            common::python3().expect("python3")
        ),
    );
    t.wait_for(&["semantic_grounding"], "the peer's dialogue");
    t.keys(&["Escape", "V"]);
    wait_long(&t, &["✗ 1 failed"], "the report", 300);
    t.keys(&["f"]);
    let screen = t.wait_for(&["✗ fail commitments.release"], "the failed rule");
    assert!(screen.contains("is not listed"), "{screen}");
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        &["commitments.release: A", "recorded", "release certify-1"],
        "the evidence as a dialogue",
    );
    assert!(screen.contains("1 finding"), "{screen}");
    // It replays against the server, every reply compared.
    t.keys(&["r"]);
    t.wait_for(&["Replay"], "the replay");
    t.keys(&["C-q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// The Resources overlay as a user finds it: from the palette, in a terminal without colour
/// (the selected row in reverse video and marked ›), a resource read by a click, pretty JSON;
/// F3 opens it again, Esc closes it.
#[test]
fn the_resources_overlay_lists_and_reads_by_the_palette_and_the_mouse_without_colour() {
    let t = Tmux::start_with(120, 40, "", &["NO_COLOR=1"], tempfile::tempdir().unwrap());
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    t.keys(&["Escape", ":"]);
    t.wait_for(&["Quit"], "the palette");
    t.type_text("resources of");
    t.wait_for(&["Resources of the server in view"], "the action");
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        &[
            "Resources · domain-access",
            "› dac://domain",
            "dac://spaces/Space:Museum",
        ],
        "the list",
    );
    let styled = String::from_utf8_lossy(&t.run(&["capture-pane", "-e", "-p", "-t", "e2e"]).stdout)
        .into_owned();
    assert!(!styled.contains("\x1b[38;"), "no colour at all:\n{styled}");
    assert!(
        styled
            .lines()
            .any(|l| l.contains("\x1b[7m") && l.contains("dac://domain")),
        "{styled}"
    );
    // A click on the Market's row reads it.
    let (x, y) = position_of(&screen, "dac://spaces/Space:Market");
    t.run(&[
        "send-keys",
        "-t",
        "e2e",
        "-l",
        &format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m"),
    ]);
    t.wait_for(
        &[
            "dac://spaces/Space:Market · application/json · JSON",
            "\"SpaceID\"",
        ],
        "the Space read",
    );
    t.keys(&["Escape"]);
    t.wait_until("the overlay closed", |s| !s.contains("Resources · "));
    t.keys(&["F3"]);
    t.wait_for(&["Resources · domain-access"], "F3 opens it");
    t.keys(&["Escape", "q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// Where letters go is never a guess: the status line starts with ✎ EDIT in the composer and
/// NAV outside it; Esc in the composer always goes back to NAV (a pending turn goes on until
/// Esc outside it); switching dialogues in NAV never enters EDIT.
#[test]
fn the_mode_is_on_the_status_line_and_esc_always_leaves_edit() {
    let t = Tmux::start(120, 40, "");
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    let status = |s: &str| s.lines().last().unwrap_or_default().trim_start().to_owned();
    let screen = t.wait_still();
    assert!(status(&screen).starts_with("✎ EDIT"), "{screen}");
    assert!(screen.contains("▶ Compose"), "{screen}");
    t.keys(&["Escape"]);
    let screen = t.wait_until("NAV", |s| status(s).starts_with("NAV"));
    assert!(screen.contains("▶ Dialogue 1"), "{screen}");
    // To the second dialogue and back, in NAV: letters stay commands.
    t.keys(&["2"]);
    t.wait_for(&["user-state #1 ·"], "the second dialogue");
    t.keys(&["1"]);
    let screen = t.wait_still();
    assert!(status(&screen).starts_with("NAV"), "{screen}");
    // `c` enters EDIT; text goes to the composer; Esc leaves it again.
    t.keys(&["c"]);
    t.wait_until("EDIT", |s| status(s).starts_with("✎ EDIT"));
    t.type_text("qx");
    t.wait_for(&["qx"], "the letters typed as text");
    t.keys(&["Escape"]);
    t.wait_until("NAV again", |s| status(s).starts_with("NAV"));
    t.keys(&["q"]);
    t.wait_for(
        &["has an unsent draft", "y quits"],
        "q is a command: the question",
    );
    t.keys(&["y"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn tab_completes_paths_in_the_save_as_prompt_with_a_list_when_ambiguous() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
    std::fs::write(dir.path().join("sub/deep.json"), "{}").unwrap();
    std::fs::write(dir.path().join("sub/notes.txt"), "not a session").unwrap();
    std::fs::create_dir_all(dir.path().join("home/docs")).unwrap();
    let home = format!("HOME={}", dir.path().join("home").display());
    let data = tempfile::tempdir().unwrap();
    let t = Tmux::start_at(120, 40, "", &[&home], data.path(), dir.path());
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    t.keys(&["Escape", "S", "C-u"]);
    t.wait_for(&["Tab completes"], "the Save-as prompt");
    // One folder fits: it is typed, with its slash.
    t.type_text("su");
    t.keys(&["Tab"]);
    t.wait_for(&["sub/"], "the folder completed");
    // Two fit (a session and a folder; the .txt is not a session): what they share is
    // typed and both are listed.
    t.keys(&["Tab"]);
    let screen = t.wait_for(&["sub/deep.json", "sub/deeper/"], "the candidates listed");
    assert!(!screen.contains("notes.txt"), "{screen}");
    // Enter takes the highlighted one; the next Enter saves, over a file that exists: asked.
    t.keys(&["Enter"]);
    t.wait_until("the candidate taken", |s| !s.contains("sub/deeper/"));
    t.keys(&["Enter"]);
    t.wait_for(&["exists. Overwrite it?"], "the question");
    t.keys(&["n"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/deep.json")).unwrap(),
        "{}"
    );
    // ~/ is the home folder, and stays as typed.
    t.keys(&["S", "C-u"]);
    t.type_text("~/do");
    t.keys(&["Tab"]);
    t.wait_for(&["~/docs/"], "the home folder's entry completed");
    t.keys(&["Escape", "C-q"]);
    assert_eq!(t.wait_exit(), "0");
}

#[test]
fn slash_searches_the_raw_json_and_n_goes_to_the_next_match_without_colour() {
    let t = Tmux::start_with(120, 40, "", &["NO_COLOR=1"], tempfile::tempdir().unwrap());
    t.wait_for(&["bkn_dac", "bkn_usr"], "both servers");
    send_a_grounding(&t);
    t.keys(&["Escape", "C-p"]);
    t.type_text("focus the detail");
    t.wait_still();
    t.keys(&["Enter", "/"]);
    t.wait_for(&["▸Raw", "Enter keeps"], "the search line in Raw");
    t.type_text("bench");
    t.wait_for(&["/bench", "1/"], "the first match counted");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["n next"], "the search kept");
    let total = screen
        .lines()
        .find_map(|l| l.split("1/").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok())
        .expect("a count");
    assert!(
        total >= 2,
        "the Request and the Response both say bench:\n{screen}"
    );
    t.keys(&["n"]);
    t.wait_for(&[&format!("2/{total}")], "the next match");
    // The matches show without colour: reverse video (SGR 7), the current one also bold and
    // underlined (1;4;7).
    let styled = String::from_utf8_lossy(&t.run(&["capture-pane", "-e", "-p", "-t", "e2e"]).stdout)
        .into_owned();
    let marked = |sgr: &str| {
        styled
            .lines()
            .any(|l| l.contains(&format!("\x1b[{sgr}m")) && l.to_lowercase().contains("bench"))
    };
    assert!(marked("1;4;7"), "the current match:\n{styled}");
    t.keys(&["N"]);
    t.wait_for(&[&format!("1/{total}")], "the previous match");
    // Esc ends it; n is New dialogue again.
    t.keys(&["Escape"]);
    t.wait_until("the search ended", |s| !s.contains("n next"));
    // The turn is not saved: quitting asks.
    t.keys(&["C-q"]);
    t.wait_for(&["Quit anyway?"], "the question");
    t.keys(&["y"]);
    t.wait_exit();
}

/// `W` in the Resources overlay writes the resource read to a file and leaves the person on
/// it: the prompt opens over the overlay (Tab completes the path), a file there is asked
/// about first, a folder at the path is refused with why and the path kept, and after each
/// the overlay is back on the same resource.
#[test]
fn w_writes_a_resource_to_a_file_and_the_overlay_stays_on_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("out/folder")).unwrap();
    std::fs::write(dir.path().join("out/domain.json"), "old").unwrap();
    let data = tempfile::tempdir().unwrap();
    let t = Tmux::start_at(120, 40, "", &[], data.path(), dir.path());
    t.wait_for(&["bkn_dac", "bkn_usr", "· connected"], "both servers");
    t.keys(&["Escape", "F3"]);
    t.wait_for(&["Resources · domain-access", "› dac://domain"], "the list");
    t.keys(&["Enter"]);
    let read = "dac://domain · application/json · JSON";
    t.wait_for(&[read, "\"MInstance\""], "the domain read");
    t.keys(&["W"]);
    t.wait_for(&["Write it to", "domain.json"], "the prompt");
    // Over the overlay: the resource is still drawn under the prompt.
    let screen = t.wait_still();
    assert!(screen.contains(read), "{screen}");
    // A folder at the path: why, in the prompt, with the path kept; the overlay under it.
    t.keys(&["C-u"]);
    t.type_text("out/folder");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["is not a regular file"], "the refusal");
    assert!(screen.contains("not written"), "{screen}");
    assert!(screen.contains("Write it to"), "the prompt stays: {screen}");
    // Tab completes the path; the file there is asked about; y writes over it.
    t.keys(&["C-u"]);
    t.type_text("out/dom");
    t.keys(&["Tab"]);
    t.wait_for(&["out/domain.json"], "the path completed");
    t.keys(&["Enter"]);
    t.wait_for(&["exists. Overwrite it?"], "the question");
    t.keys(&["y"]);
    let screen = t.wait_for(&["wrote "], "the notice");
    assert!(screen.contains(read), "back on the resource: {screen}");
    assert!(!screen.contains("Write it to"), "{screen}");
    let written = std::fs::read_to_string(dir.path().join("out/domain.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&written).expect("the JSON read");
    assert_eq!(value["MInstance"], "MI:PublicSquare", "{written}");
    // Esc in the prompt goes back to the overlay too; Esc there closes it.
    t.keys(&["W"]);
    t.wait_for(&["Write it to"], "the prompt again");
    t.keys(&["Escape"]);
    let screen = t.wait_until("the prompt closed", |s| !s.contains("Write it to"));
    assert!(screen.contains(read), "{screen}");
    t.keys(&["Escape"]);
    t.wait_until("the overlay closed", |s| !s.contains("Resources · "));
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
}

/// The last run's copy of unsaved turns (issue 29): a later run that has nothing to keep
/// (its one turn closed with its dialogue) leaves it as it is; the start tells of it and the
/// Open overlay lists it first.
#[test]
fn a_run_with_nothing_to_keep_leaves_the_last_runs_unsaved_turns_alone() {
    let data = tempfile::tempdir().unwrap();
    let last = data.path().join("last-run.json");
    // Run A: one turn, quit without saving.
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        send_a_grounding(&t);
        t.keys(&["Escape", "q"]);
        t.wait_for(
            &[
                "1 turn is not saved",
                "until a later run quits with unsaved",
            ],
            "the question before quitting",
        );
        t.keys(&["y"]);
        assert_eq!(t.wait_exit(), "0");
    }
    let kept = std::fs::read(&last).expect("run A's turn kept as the last run's");
    let turns = |bytes: &[u8]| {
        let s: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        s["dialogues"].as_array().map_or(0, |d| {
            d.iter().map(|d| d["turns"].as_array().unwrap().len()).sum()
        })
    };
    assert_eq!(turns(&kept), 1);
    // Run B: told of it at start; a turn of its own, closed with its dialogue; q at once.
    {
        let t = Tmux::start_in(120, 40, "", &[], data.path());
        t.wait_for(
            &["1 unsaved turn of the last run is in", "to open"],
            "the notice of the last run's turns",
        );
        send_a_grounding(&t);
        t.keys(&["Escape", "x"]);
        t.wait_for(&["Close it?"], "the question");
        t.keys(&["y"]);
        t.wait_for(&["1 user-state #1"], "the other dialogue in view");
        t.keys(&["C-o"]);
        t.wait_for(
            &["the last run's 1 unsaved turn", "last-run.json"],
            "the last run's copy listed first",
        );
        t.keys(&["Escape"]);
        t.wait_still();
        t.keys(&["q"]);
        assert_eq!(t.wait_exit(), "0", "nothing unsaved: no question");
    }
    assert_eq!(
        std::fs::read(&last).unwrap(),
        kept,
        "run B had nothing to keep: run A's copy is as it was"
    );
    assert!(
        !std::fs::read_dir(data.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("autosave")),
        "run B's own autosave is gone"
    );
}

/// Issue 29: a start whose only server cannot start stays in NAV, names the server by its
/// command line, and `q` quits (it is never typed into the composer).
#[test]
fn a_start_whose_server_cannot_start_stays_in_nav_and_q_quits() {
    let t = Tmux::start(80, 24, "--stdio no-such-server");
    let screen = t.wait_for(&["failed", " NAV "], "the failed dialogue, in NAV");
    assert!(screen.contains("no-such-server · failed"), "{screen}");
    assert!(!screen.contains("Domain Access"), "{screen}");
    assert!(!screen.contains("EDIT"), "{screen}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), "0");
}
