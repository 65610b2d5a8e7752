//! The explorer's own files, for the runner (update never touches a file): the data
//! directory, the marker that tells a run that ended badly from a clean one, the autosave and
//! its recovery, the list of recent sessions, what the Open overlay lists and completes.

use crate::tui::overlay::PickerItem;
use std::path::{Path, PathBuf};

/// The autosave of a run of an older version (one for every run): still offered back.
pub const AUTOSAVE: &str = "autosave.json";
/// What the autosave held when the last run ended cleanly: never offered as a recovery, but
/// there for a user who said "quit anyway" and regrets it (until the next clean end).
pub const LAST_RUN: &str = "last-run.json";
/// The marker of a run of an older version (it held the process id).
const RUNNING: &str = "running";
const RECENT: &str = "recent.json";

/// Each run has its own autosave, named by its process id: two explorers at once never
/// overwrite each other's turns.
pub fn autosave_of(data_dir: &Path, pid: u32) -> PathBuf {
    data_dir.join(format!("autosave-{pid}.json"))
}

/// Each run's unsent drafts, written as they change (a crash loses no typing).
pub fn drafts_of(data_dir: &Path, pid: u32) -> PathBuf {
    data_dir.join(format!("drafts-{pid}.json"))
}

/// An unsent draft as the drafts' autosave keeps it: the dialogue it was typed in.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedDraft {
    pub dialogue: String,
    pub interface: crate::protocol::Interface,
    pub draft: crate::tui::composer::Draft,
}

/// Reads a drafts' autosave.
pub fn read_drafts(path: &Path) -> Result<Vec<SavedDraft>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Each run's marker, `running-PID`: there while it runs. It holds nothing, or why the run
/// ended when a signal ended it with unsaved turns (`ended SIGHUP`).
fn marker_of(data_dir: &Path, pid: u32) -> PathBuf {
    data_dir.join(format!("running-{pid}"))
}

/// How a run that left turns behind ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It never said: it crashed or was killed (SIGKILL, the machine stopped).
    Unclean,
    /// A signal ended it (the terminal closed, SIGTERM): it saved its autosave and left, as a
    /// quit with unsaved work does.
    Signal(crate::tui::event::Signal),
}

/// The autosave of an earlier run to offer back (moved aside, so that nothing overwrites it
/// before the user answers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The session it autosaved (none when it had only drafts).
    pub path: Option<PathBuf>,
    /// Its unsent drafts, when it had some.
    pub drafts: Option<PathBuf>,
    pub ending: Ending,
}

/// Marks this run as running (`mark_stopped` removes the mark on a clean end), and finds the
/// autosaves that runs which are not running any more left behind (their marker stayed):
/// each is moved aside and returned, to offer it back. Runs still running are left alone.
pub fn mark_running(data_dir: &Path) -> Vec<Recovery> {
    let _ = std::fs::create_dir_all(data_dir);
    let mut found = Vec::new();
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
    // An older version's run: one marker, one autosave.
    let legacy = data_dir.join(RUNNING);
    if let Some(pid) = std::fs::read_to_string(&legacy)
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        && !alive(pid)
    {
        let _ = std::fs::remove_file(&legacy);
        let autosave = data_dir.join(AUTOSAVE);
        let kept = data_dir.join(format!("recovered-{stamp}.json"));
        if autosave.exists() && std::fs::rename(&autosave, &kept).is_ok() {
            found.push(Recovery {
                path: Some(kept),
                drafts: None,
                ending: Ending::Unclean,
            });
        }
    }
    let mut markers: Vec<(u32, PathBuf)> = std::fs::read_dir(data_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let pid = name.strip_prefix("running-")?.parse::<u32>().ok()?;
                    Some((pid, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    markers.sort();
    for (pid, marker) in markers {
        let said = std::fs::read_to_string(&marker).unwrap_or_default();
        let ending = match said.trim().strip_prefix("ended ") {
            // A name this version does not know is told as an unclean end.
            Some(signal) => signal.parse().map_or(Ending::Unclean, Ending::Signal),
            // A run still going keeps its own (its turns are its own).
            None if alive(pid) && pid != std::process::id() => continue,
            None => Ending::Unclean,
        };
        let _ = std::fs::remove_file(&marker);
        let moved = |from: PathBuf, to: PathBuf| {
            (from.exists() && std::fs::rename(&from, &to).is_ok()).then_some(to)
        };
        let path = moved(
            autosave_of(data_dir, pid),
            data_dir.join(format!("recovered-{pid}-{stamp}.json")),
        );
        let drafts = moved(
            drafts_of(data_dir, pid),
            data_dir.join(format!("recovered-{pid}-{stamp}.drafts.json")),
        );
        if path.is_some() || drafts.is_some() {
            found.push(Recovery {
                path,
                drafts,
                ending,
            });
        }
    }
    let _ = std::fs::write(marker_of(data_dir, std::process::id()), "");
    found
}

/// Says in this run's marker that a signal ended it with unsaved turns in its autosave: the
/// next start offers them back without calling the run a crash.
pub fn mark_ended(data_dir: &Path, signal: crate::tui::event::Signal) {
    let marker = marker_of(data_dir, std::process::id());
    if marker.exists() {
        let _ = std::fs::write(marker, format!("ended {signal}"));
    }
}

/// What a run that ends as the user asked leaves behind it: its unsaved turns (in its
/// autosave) and whether it had unsent drafts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    pub unsaved: usize,
    pub drafts: bool,
}

/// Beside `last-run.json`: how many of its turns were not saved (the number, as text).
const LAST_RUN_UNSAVED: &str = "last-run.unsaved";
const LAST_RUN_DRAFTS: &str = "last-run.drafts.json";

/// Removes this run's mark: the run ended as the user asked, nothing to recover. The rule
/// for the last run's copy: a run that leaves unsaved turns makes its autosave
/// `last-run.json` (and says how many beside it); a run that leaves none removes its
/// autosave and leaves an earlier run's copy as it is, so a run that had nothing to keep
/// never replaces one that had. The drafts' copy follows the same rule.
pub fn mark_stopped(data_dir: &Path, kept: Kept) {
    let pid = std::process::id();
    let _ = std::fs::remove_file(marker_of(data_dir, pid));
    let autosave = autosave_of(data_dir, pid);
    if kept.unsaved > 0 && autosave.exists() {
        if std::fs::rename(&autosave, data_dir.join(LAST_RUN)).is_ok() {
            let _ = crate::session::atomic::write(
                &data_dir.join(LAST_RUN_UNSAVED),
                kept.unsaved.to_string().as_bytes(),
            );
        }
    } else {
        let _ = std::fs::remove_file(&autosave);
    }
    let drafts = drafts_of(data_dir, pid);
    if kept.drafts && drafts.exists() {
        let _ = std::fs::rename(drafts, data_dir.join(LAST_RUN_DRAFTS));
    } else {
        let _ = std::fs::remove_file(&drafts);
    }
}

/// The last run's copy when it holds unsaved turns: its path and how many.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastRun {
    pub path: PathBuf,
    pub unsaved: usize,
}

/// The last run's copy, if it is there and holds unsaved turns (a copy an older version
/// left, without the count, is not announced: what it holds is not known; nor is one
/// written after its count, which was opened and saved in place).
pub fn last_run(data_dir: &Path) -> Option<LastRun> {
    let path = data_dir.join(LAST_RUN);
    let count = data_dir.join(LAST_RUN_UNSAVED);
    let unsaved = std::fs::read_to_string(&count)
        .ok()?
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)?;
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let saved_since = matches!((modified(&path), modified(&count)), (Some(f), Some(c)) if f > c);
    (path.is_file() && !saved_since).then_some(LastRun { path, unsaved })
}

fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        false
    }
}

/// The recent session files, newest first.
pub fn recent(data_dir: Option<&Path>) -> Vec<PathBuf> {
    data_dir
        .and_then(|d| std::fs::read_to_string(d.join(RECENT)).ok())
        .and_then(|t| serde_json::from_str::<Vec<PathBuf>>(&t).ok())
        .unwrap_or_default()
}

/// Puts a session file at the top of the recent ones.
pub fn remember(data_dir: Option<&Path>, path: &Path) {
    let Some(dir) = data_dir else { return };
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut list = recent(Some(dir));
    list.retain(|p| p != &path);
    list.insert(0, path);
    list.truncate(10);
    if let Ok(text) = serde_json::to_string_pretty(&list) {
        let _ = crate::session::atomic::write(&dir.join(RECENT), text.as_bytes());
    }
}

/// The sessions the Open overlay lists: the sessions folder's files and the recent ones.
pub fn picker_items(sessions_dir: &Path, data_dir: Option<&Path>) -> Vec<PickerItem> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(sessions_dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    // The last run's unsaved turns come first: the start-up notice sends the user here.
    let last = data_dir.and_then(last_run);
    if let Some(last) = &last {
        paths.retain(|p| p.canonicalize().ok() != last.path.canonicalize().ok());
    }
    for r in recent(data_dir) {
        if !paths
            .iter()
            .any(|p| p.canonicalize().ok() == r.canonicalize().ok())
            && r.exists()
        {
            paths.push(r);
        }
    }
    let mut items: Vec<PickerItem> = Vec::new();
    if let Some(last) = last {
        items.push(PickerItem {
            label: display_path(&last.path),
            detail: format!(
                "the last run's {} unsaved turn{}: {}",
                last.unsaved,
                if last.unsaved == 1 { "" } else { "s" },
                describe(&last.path)
            ),
            path: last.path,
        });
    }
    items.extend(paths.into_iter().map(|path| {
        let detail = describe(&path);
        PickerItem {
            label: display_path(&path),
            detail,
            path,
        }
    }));
    items
}

/// The paths that complete what was typed: the entries of its folder whose names start with
/// its last part (folders end with `/`; hidden ones only when a `.` is typed), folders and the
/// files that end in one of `extensions` (any file when there is none). `~/` is the home
/// folder and stays as typed.
pub fn complete_path(typed: &str, cwd: &Path, extensions: &[&str]) -> Vec<String> {
    let expanded = crate::settings::expand_home(Path::new(typed));
    let (folder, stem) = if typed.ends_with('/') {
        (expanded.clone(), String::new())
    } else {
        (
            expanded.parent().map(Path::to_path_buf).unwrap_or_default(),
            expanded
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    };
    let listed = if folder.as_os_str().is_empty() {
        cwd.to_path_buf()
    } else if folder.is_relative() {
        cwd.join(&folder)
    } else {
        folder.clone()
    };
    let prefix = match typed.rfind('/') {
        Some(i) => &typed[..=i],
        None => "",
    };
    let mut out: Vec<String> = std::fs::read_dir(&listed)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if !name.starts_with(&stem) || (name.starts_with('.') && !stem.starts_with('.'))
                    {
                        return None;
                    }
                    let dir = e.file_type().ok()?.is_dir();
                    let wanted = extensions.is_empty()
                        || extensions
                            .iter()
                            .any(|x| name.strip_suffix(x).is_some_and(|n| n.ends_with('.')));
                    (dir || wanted).then(|| format!("{prefix}{name}{}", if dir { "/" } else { "" }))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.truncate(50);
    out
}

/// "Domain Access tour: 1 dialogue, 10 turns": only the name and the counts are taken (the
/// messages are skipped over, not parsed), so a long list of big sessions stays quick.
fn describe(path: &Path) -> String {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Head {
        format: Option<String>,
        name: Option<String>,
        #[serde(default)]
        dialogues: Vec<DialogueHead>,
    }
    #[derive(serde::Deserialize)]
    struct DialogueHead {
        #[serde(default)]
        turns: Vec<IgnoredAny>,
    }
    let head = std::fs::File::open(path)
        .map_err(|e| e.to_string())
        .and_then(|f| {
            serde_json::from_reader::<_, Head>(std::io::BufReader::new(f))
                .map_err(|e| e.to_string())
        });
    match head {
        Ok(h)
            if h.format
                .as_deref()
                .is_some_and(|f| f.starts_with(crate::session::FORMAT_PREFIX)) =>
        {
            let turns: usize = h.dialogues.iter().map(|d| d.turns.len()).sum();
            let name = h.name.map(|n| format!("{n}: ")).unwrap_or_default();
            format!(
                "{name}{} dialogue{}, {turns} turn{}",
                h.dialogues.len(),
                if h.dialogues.len() == 1 { "" } else { "s" },
                if turns == 1 { "" } else { "s" }
            )
        }
        Ok(_) => "not a bkn-explorer session (no format)".to_owned(),
        Err(e) => format!("cannot be read: {}", e.lines().next().unwrap_or_default()),
    }
}

/// A path as a person wants to read it: relative to the working directory when under it,
/// with `~` for the home directory otherwise.
pub fn display_path(path: &Path) -> String {
    if let Ok(cwd) = std::env::current_dir()
        && let Ok(rest) = path.strip_prefix(&cwd)
    {
        return rest.display().to_string();
    }
    if let Some(home) = dirs::home_dir()
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process id that is not running.
    fn gone() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_run_that_ended_badly_offers_its_autosave_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        // An older version's marker of a process that is not running, and its autosave.
        std::fs::write(dir.path().join(RUNNING), gone().to_string()).unwrap();
        std::fs::write(dir.path().join(AUTOSAVE), "{}").unwrap();
        let kept = mark_running(dir.path());
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].ending, Ending::Unclean);
        let path = kept[0].path.clone().unwrap();
        assert!(path.exists() && !dir.path().join(AUTOSAVE).exists());
        // A clean end leaves nothing to offer.
        mark_stopped(dir.path(), Kept::default());
        assert_eq!(mark_running(dir.path()), []);
    }

    #[test]
    fn each_run_has_its_own_autosave_and_a_dead_ones_is_offered() {
        let dir = tempfile::tempdir().unwrap();
        // Another run, still going (this test's parent, say), and one that was killed.
        let running = std::os::unix::process::parent_id();
        let killed = gone();
        for pid in [running, killed] {
            std::fs::write(marker_of(dir.path(), pid), "").unwrap();
            std::fs::write(autosave_of(dir.path(), pid), format!("{pid}")).unwrap();
        }
        let kept = mark_running(dir.path());
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(
            std::fs::read_to_string(kept[0].path.as_ref().unwrap()).unwrap(),
            killed.to_string()
        );
        assert!(
            autosave_of(dir.path(), running).exists() && marker_of(dir.path(), running).exists(),
            "the running one's are left alone"
        );
        assert!(marker_of(dir.path(), std::process::id()).exists());
        // A signal's end is said, and not taken for a crash; drafts alone are offered too.
        std::fs::write(drafts_of(dir.path(), std::process::id()), "[]").unwrap();
        mark_ended(dir.path(), crate::tui::event::Signal::Hup);
        let kept = mark_running(dir.path());
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(
            kept[0].ending,
            Ending::Signal(crate::tui::event::Signal::Hup)
        );
        assert_eq!(kept[0].path, None);
        assert!(kept[0].drafts.as_ref().unwrap().exists());
        mark_stopped(dir.path(), Kept::default());
        assert!(!marker_of(dir.path(), std::process::id()).exists());
    }

    /// Issue 29: run A quits with unsaved turns; run B, with nothing to keep, leaves A's
    /// copy as it is (and its own autosave goes); the Open overlay lists A's copy first.
    #[test]
    fn a_run_with_nothing_to_keep_never_replaces_the_last_runs_unsaved_turns() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        // Run A.
        mark_running(dir.path());
        std::fs::write(autosave_of(dir.path(), me), "A").unwrap();
        mark_stopped(
            dir.path(),
            Kept {
                unsaved: 2,
                drafts: false,
            },
        );
        let last = last_run(dir.path()).expect("A's copy");
        assert_eq!(last.unsaved, 2);
        // Run B: an autosave (a turn since closed), nothing unsaved at the end.
        mark_running(dir.path());
        std::fs::write(autosave_of(dir.path(), me), "B").unwrap();
        std::fs::write(drafts_of(dir.path(), me), "[]").unwrap();
        mark_stopped(dir.path(), Kept::default());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(LAST_RUN)).unwrap(),
            "A"
        );
        assert_eq!(last_run(dir.path()), Some(last.clone()));
        assert!(!autosave_of(dir.path(), me).exists() && !drafts_of(dir.path(), me).exists());
        let sessions = tempfile::tempdir().unwrap();
        let items = picker_items(sessions.path(), Some(dir.path()));
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].path, last.path);
        assert!(
            items[0]
                .detail
                .starts_with("the last run's 2 unsaved turns")
        );
        // Run C leaves unsaved turns of its own: its copy replaces A's.
        mark_running(dir.path());
        std::fs::write(autosave_of(dir.path(), me), "C").unwrap();
        mark_stopped(
            dir.path(),
            Kept {
                unsaved: 1,
                drafts: false,
            },
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(LAST_RUN)).unwrap(),
            "C"
        );
        assert_eq!(last_run(dir.path()).unwrap().unsaved, 1);
        // Opened and saved in place (written after its count): nothing unsaved to announce.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .append(true)
            .open(dir.path().join(LAST_RUN))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(last_run(dir.path()), None);
    }

    #[test]
    fn paths_complete_from_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("s1.json"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        assert_eq!(
            complete_path("s", dir.path(), &["json"]),
            ["s1.json", "sub/"]
        );
        let abs = format!("{}/", dir.path().display());
        assert_eq!(complete_path(&abs, dir.path(), &["json"]).len(), 2);
    }
}
