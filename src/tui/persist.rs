//! The explorer's own files, for the runner (update never touches a file): the data
//! directory, the marker that tells a run that ended badly from a clean one, the autosave and
//! its recovery, the list of recent sessions, what the Open overlay lists and completes.

use crate::tui::overlay::PickerItem;
use std::path::{Path, PathBuf};

pub const AUTOSAVE: &str = "autosave.json";
/// What the autosave held when the last run ended cleanly: never offered as a recovery, but
/// there for a user who said "quit anyway" and regrets it (until the next clean end).
pub const LAST_RUN: &str = "last-run.json";
const RUNNING: &str = "running";
const RECENT: &str = "recent.json";

/// Where the explorer keeps its own files (`Settings::data_dir`).
pub fn data_dir() -> Option<PathBuf> {
    crate::settings::Settings::current().0.data_dir()
}

/// Marks this run as running (`mark_stopped` removes the mark on a clean end). When the last
/// run did not end cleanly and left an autosave, the autosave is moved aside (so that this
/// run's own autosaves do not overwrite it before the user answers) and its new path is
/// returned, to offer it back.
pub fn mark_running(data_dir: &Path) -> Option<PathBuf> {
    let marker = data_dir.join(RUNNING);
    let autosave = data_dir.join(AUTOSAVE);
    let ended_badly = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .is_some_and(|pid| !alive(pid));
    let _ = std::fs::create_dir_all(data_dir);
    let _ = std::fs::write(&marker, std::process::id().to_string());
    if !(ended_badly && autosave.exists()) {
        return None;
    }
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
    let kept = data_dir.join(format!("recovered-{stamp}.json"));
    std::fs::rename(&autosave, &kept).ok().map(|()| kept)
}

/// Removes this run's mark: the run ended as the user asked, nothing to recover. The autosave
/// becomes `last-run.json`, which no start offers back (what it held was saved, or the user
/// chose to leave it) but which is not lost either.
pub fn mark_stopped(data_dir: &Path) {
    let marker = data_dir.join(RUNNING);
    if std::fs::read_to_string(&marker)
        .is_ok_and(|pid| pid.trim() == std::process::id().to_string())
    {
        let _ = std::fs::remove_file(marker);
        let autosave = data_dir.join(AUTOSAVE);
        if autosave.exists() {
            let _ = std::fs::rename(autosave, data_dir.join(LAST_RUN));
        }
    }
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
    for r in recent(data_dir) {
        if !paths
            .iter()
            .any(|p| p.canonicalize().ok() == r.canonicalize().ok())
            && r.exists()
        {
            paths.push(r);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let detail = describe(&path);
            PickerItem {
                label: display_path(&path),
                detail,
                path,
            }
        })
        .collect()
}

/// The paths that complete what was typed: the entries of its folder whose names start with
/// its last part (folders end with `/`), JSON files and folders only.
pub fn complete_path(typed: &str, cwd: &Path) -> Vec<String> {
    let expanded = match typed.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().unwrap_or_default().join(rest),
        None => PathBuf::from(typed),
    };
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
                    (dir || name.ends_with(".json"))
                        .then(|| format!("{prefix}{name}{}", if dir { "/" } else { "" }))
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

    #[test]
    fn a_run_that_ended_badly_offers_its_autosave_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        // A marker of a process that is not running, and its autosave.
        std::fs::write(dir.path().join(RUNNING), "999999999").unwrap();
        std::fs::write(dir.path().join(AUTOSAVE), "{}").unwrap();
        let kept = mark_running(dir.path()).expect("offered");
        assert!(kept.exists() && !dir.path().join(AUTOSAVE).exists());
        // A clean end leaves nothing to offer.
        mark_stopped(dir.path());
        assert_eq!(mark_running(dir.path()), None);
    }

    #[test]
    fn paths_complete_from_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("s1.json"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        assert_eq!(complete_path("s", dir.path()), ["s1.json", "sub/"]);
        let abs = format!("{}/", dir.path().display());
        assert_eq!(complete_path(&abs, dir.path()).len(), 2);
    }
}
