//! The one rule for a file the user named as an output (`dialogue --save`, `certify --save`,
//! `test --from-session -o`, `read -o`, `--junit` …): what is there already may be someone's
//! work, so a headless command never replaces it unless told to (`--force`). Checked before
//! anything runs, so that a refusal costs nothing; the write itself stays atomic.

use std::path::Path;

/// `Err` with the message to print when `path` holds something and `force` is not given:
/// "--save FILE: a session of 2 dialogues is there already, and it is not replaced: choose
/// another file, or say --force".
pub fn refuse_existing(flag: &str, path: &Path, force: bool) -> Result<(), String> {
    if force {
        return Ok(());
    }
    match existing_file(path) {
        Some(what) => Err(format!(
            "{flag} {}: {what} is there already, and it is not replaced: choose another file, \
             or say --force",
            path.display()
        )),
        None => Ok(()),
    }
}

/// What is at `path`, when something is: "a session of N dialogues", "a file that is not a
/// session this program reads (…)", "something that is not a regular file" …
pub fn existing_file(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return Some("something that is not a regular file".into());
    }
    Some(match crate::session::Session::load(path) {
        Ok(s) => format!(
            "a session of {} dialogue{}",
            s.dialogues.len(),
            if s.dialogues.len() == 1 { "" } else { "s" }
        ),
        Err(_) => format!("a file of {} bytes", meta.len()),
    })
}

/// The same for a JUnit report: one this program (or any JUnit writer) made before is the
/// previous run's output, regenerated on every run (CI writes it again each time), so it is
/// replaced; anything else there is refused as `refuse_existing` refuses it.
pub fn refuse_existing_unless_junit(flag: &str, path: &Path, force: bool) -> Result<(), String> {
    if is_junit_report(path) {
        return Ok(());
    }
    refuse_existing(flag, path, force)
}

fn is_junit_report(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    let head = String::from_utf8_lossy(&head);
    read.is_ok() && head.trim_start().starts_with("<?xml") && head.contains("<testsuites")
}
