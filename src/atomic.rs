//! Atomic file writes: the new content goes to a temporary file beside the target, is flushed
//! to disk, and then renamed over the target. A reader, or a process killed half-way, sees the
//! old file or the new one, never a part of either. No folder is made: a path whose folder
//! does not exist is an error (the caller makes the folders that are its own).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, bytes, false)
}

/// The same, for a file only its owner may read or write (mode 0600 from the start, so the
/// content is never readable by others, not even for a moment): OAuth tokens.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, bytes, true)
}

fn write_with(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    let mut file = Replacement::create_with(path, private)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file written bit by bit that replaces `path` only once it is whole (`commit`): what a
/// writer that streams uses. Dropped without `commit`, it is removed and `path` is untouched.
pub struct Replacement {
    file: Option<io::BufWriter<File>>,
    temporary: PathBuf,
    path: PathBuf,
    dir: PathBuf,
    name: String,
}

impl Replacement {
    pub fn create(path: &Path) -> io::Result<Replacement> {
        Replacement::create_with(path, false)
    }

    fn create_with(path: &Path, private: bool) -> io::Result<Replacement> {
        // A symlink is written through (its target is replaced, the link stays); anything but
        // a regular file (a FIFO, a device, a folder) is never replaced by one.
        let path = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).or_else(|_| {
                // A dangling link: its target, as it names it.
                fs::read_link(path).map(|t| match path.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                })
            })?,
            _ => path.to_path_buf(),
        };
        let existing = match fs::metadata(&path) {
            Ok(m) if !m.is_file() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not a regular file: it is not replaced",
                        path.display()
                    ),
                ));
            }
            Ok(m) => Some(m.permissions()),
            Err(_) => None,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a file path", path.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let temporary = dir.join(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if private {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        #[cfg(not(unix))]
        let _ = private;
        let file = options.open(&temporary)?;
        let replacement = Replacement {
            file: Some(io::BufWriter::with_capacity(256 * 1024, file)),
            temporary,
            path,
            dir,
            name,
        };
        // The file replaced keeps its mode (a session made 0600 stays 0600).
        if let Some(permissions) = existing
            && !private
            && let Some(file) = &replacement.file
        {
            file.get_ref().set_permissions(permissions)?;
        }
        Ok(replacement)
    }

    /// Flushes the file to disk and renames it over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("a replacement is committed once");
        let result = (|| {
            let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.sync_all()?;
            fs::rename(&self.temporary, &self.path)?;
            // The rename itself must reach the disk too.
            #[cfg(unix)]
            File::open(&self.dir)?.sync_all()?;
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&self.temporary);
        } else {
            remove_abandoned_temporaries(&self.dir, &self.name);
        }
        result
    }
}

impl Write for Replacement {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(bytes),
            None => Err(io::Error::other("the replacement was committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        // Not committed: the target stays as it was.
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// A process killed in the middle of a write leaves its temporary behind (nothing can remove
/// it then). The next write of the same file removes those of processes that no longer run;
/// the process ID in the name says whose a temporary is, so a save in progress elsewhere is
/// never touched. Best effort: a temporary that cannot be removed is left alone.
fn remove_abandoned_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some(Ok(pid)) = rest.split_once('.').map(|(pid, _)| pid.parse::<u32>()) else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // Signal 0 checks that the process exists without signalling it. EPERM means it exists
    // but belongs to someone else.
    // SAFETY: kill with signal 0 has no effect on the target.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_runs(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        super::write(&path, b"one").unwrap();
        super::write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let nested = dir.path().join("a/b/s.json");
        assert!(super::write(&nested, b"x").is_err(), "no folder is made");
        assert!(!dir.path().join("a").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_is_readable_by_its_owner_alone_even_when_replacing_an_open_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token.json");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        super::write_private(&path, b"secret").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
    }

    #[cfg(unix)]
    #[test]
    fn a_write_removes_temporaries_of_dead_processes_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        // A process that has ended: its ID is free (until reused, which only keeps its file).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let abandoned = dir.path().join(format!(".s.json.{dead}.abc.tmp"));
        let ours = dir
            .path()
            .join(format!(".s.json.{}.def.tmp", std::process::id()));
        let other_file = dir.path().join(format!(".t.json.{dead}.abc.tmp"));
        for p in [&abandoned, &ours, &other_file] {
            std::fs::write(p, b"part").unwrap();
        }
        super::write(&path, b"whole").unwrap();
        assert!(!abandoned.exists(), "a dead process's temporary is removed");
        assert!(ours.exists(), "a running process's temporary is kept");
        assert!(other_file.exists(), "another file's temporary is kept");
    }
}
