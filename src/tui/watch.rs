//! Following a proxy's recording as it grows: the whole lines written since the last look,
//! read from where the last look stopped (never the recording again from its start), from
//! its file or from the HTTP proxy's address (`GET /recording?from=OFFSET`), and which
//! recording is the newest. The runner calls it; update gets the lines as events.
//!
//! It also tells when the writer is gone without writing the recording's end (a proxy
//! killed by SIGKILL): the proxy holds an exclusive lock on its recording while it runs (the
//! header says `"lock":"flock"`), which the system lets go of when the process dies however
//! it dies; an HTTP proxy's recording is gone with the proxy's address.

use crate::session::journal::{self, Line};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub struct Follower {
    path: PathBuf,
    /// The HTTP proxy's recording endpoint, when what is followed is an address.
    url: Option<String>,
    offset: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    lines: usize,
    /// The header said its writer holds a lock on the file while it writes.
    locked: bool,
}

/// What one look at a followed recording found.
#[derive(Debug, Default)]
pub struct Look {
    /// The whole lines written since the last look.
    pub lines: Vec<Line>,
    /// The writer is gone (and how that was told): the lines are the last there will be.
    pub gone: Option<String>,
}

impl Follower {
    /// Follows a file, or (a path that is an `http://` or `https://` URL) the recording of
    /// the HTTP proxy listening there.
    pub fn new(path: PathBuf) -> Follower {
        let text = path.to_string_lossy();
        let url = (text.starts_with("http://") || text.starts_with("https://")).then(|| {
            let base = text.trim_end_matches('/');
            let base = base.strip_suffix("/mcp").unwrap_or(base);
            format!("{base}/recording")
        });
        Follower {
            path,
            url,
            offset: 0,
            partial: Vec::new(),
            lines: 0,
            locked: false,
        }
    }

    /// The whole lines written since the last call, read, and whether the writer is gone;
    /// an error ends the following (a file that went away or shrank, a proxy that cannot be
    /// reached at first, or a line that is not the journal's).
    pub async fn read_new(&mut self) -> Result<Look, String> {
        let Some(url) = &self.url else {
            return self.read_file();
        };
        let answer = match reqwest::Client::new()
            .get(format!("{url}?from={}", self.offset))
            .send()
            .await
        {
            Ok(answer) => answer,
            // It answered before: the proxy, which wrote the recording, is gone.
            Err(e) if self.lines > 0 => {
                return Ok(Look {
                    lines: Vec::new(),
                    gone: Some(format!(
                        "the proxy at {} no longer answers: {e}",
                        self.path.display()
                    )),
                });
            }
            Err(e) => {
                return Err(format!(
                    "the proxy at {} cannot be reached: {e}",
                    self.path.display()
                ));
            }
        };
        if !answer.status().is_success() {
            let status = answer.status();
            let text = answer.text().await.unwrap_or_default();
            return Err(format!("{url}: {status} {}", text.trim()));
        }
        let fresh = answer.bytes().await.map_err(|e| e.to_string())?;
        self.offset += fresh.len() as u64;
        Ok(Look {
            lines: self.take_lines(&fresh)?,
            gone: None,
        })
    }

    fn read_file(&mut self) -> Result<Look, String> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            // Not there yet: the proxy has not started (the explorer may be started first).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.offset == 0 => {
                return Ok(Look::default());
            }
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        // Asked before reading: when the lock is free now, nothing will be written after
        // what is read below (the writer took it before its header, and lets go only when
        // it is gone).
        let gone = (self.locked && file.try_lock_shared().is_ok()).then(|| {
            let _ = file.unlock();
            "its proxy is gone without writing its end (it no longer holds the recording's lock)"
                .to_owned()
        });
        let lines = self.read_open(&mut file)?;
        Ok(Look { lines, gone })
    }

    fn read_open(&mut self, file: &mut std::fs::File) -> Result<Vec<Line>, String> {
        let length = file.metadata().map(|m| m.len()).unwrap_or(0);
        if length < self.offset {
            return Err(format!(
                "{} was cut shorter while being watched; watching stops",
                self.path.display()
            ));
        }
        if length == self.offset {
            return Ok(Vec::new());
        }
        file.seek(SeekFrom::Start(self.offset))
            .map_err(|e| e.to_string())?;
        let mut fresh = Vec::with_capacity((length - self.offset) as usize);
        file.take(length - self.offset)
            .read_to_end(&mut fresh)
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        self.offset += fresh.len() as u64;
        self.take_lines(&fresh)
    }

    fn take_lines(&mut self, fresh: &[u8]) -> Result<Vec<Line>, String> {
        self.partial.extend_from_slice(fresh);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(end) = self.partial[start..].iter().position(|&b| b == b'\n') {
            let line = &self.partial[start..start + end];
            start += end + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            self.lines += 1;
            match journal::read_line(self.lines, line) {
                Ok(l) => {
                    if let Line::Start { lock: Some(_), .. } = &l {
                        self.locked = true;
                    }
                    out.push(l);
                }
                // A damaged line after the header (a write torn by a full disk) is skipped:
                // the writer starts a fresh line after it, so the lines after it are whole.
                Err(e) if self.lines > 1 => out.push(Line::Note(format!(
                    "{}: {e}; the line is skipped",
                    self.path.display()
                ))),
                Err(e) => return Err(format!("{}: {e}", self.path.display())),
            }
        }
        self.partial.drain(..start);
        Ok(out)
    }
}

/// The newest recording of the data directory's recordings/ (the proxy's default place).
pub fn newest_recording(data_dir: Option<&Path>) -> Option<PathBuf> {
    let dir = data_dir?.join("recordings");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::spec::ServerSpec;
    use crate::protocol::Interface;
    use std::io::Write;

    #[test]
    fn only_whole_lines_are_read_and_each_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let server = ServerSpec::from_command_line("da").unwrap();
        let mut w = journal::Writer::create(&path, None, &server).unwrap();
        let mut f = Follower::new(path.clone());
        assert!(matches!(
            &f.read_file().unwrap().lines[..],
            [Line::Start { .. }]
        ));
        assert!(f.read_file().unwrap().lines.is_empty(), "nothing new");
        w.dialogue(1, &server.name, Interface::Dac, "D");
        // Half a line: not yet.
        let mut raw = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        raw.write_all(br#"{"note":"ha"#).unwrap();
        assert!(matches!(
            &f.read_file().unwrap().lines[..],
            [Line::Dialogue { id: 1, .. }]
        ));
        raw.write_all(b"lf\"}\n").unwrap();
        assert!(matches!(&f.read_file().unwrap().lines[..], [Line::Note(n)] if n == "half"));
        assert_eq!(
            newest_recording(Some(dir.path())),
            None,
            "not in recordings/"
        );
    }

    /// A proxy killed by SIGKILL writes no end: its lock, which the system lets go of with
    /// the process, says it is gone (here: the writer dropped without its end).
    #[test]
    fn a_writer_gone_without_its_end_is_told_by_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let server = ServerSpec::from_command_line("da").unwrap();
        let mut w = journal::Writer::create(&path, None, &server).unwrap();
        w.dialogue(1, &server.name, Interface::Dac, "D");
        let mut f = Follower::new(path.clone());
        let look = f.read_file().unwrap();
        assert_eq!(look.lines.len(), 2);
        assert!(look.gone.is_none(), "the writer is there");
        assert!(f.read_file().unwrap().gone.is_none(), "and still is");
        w.turn(
            1,
            &crate::client::turn::Turn {
                request: crate::protocol::raw::RawJson::from_value(
                    &serde_json::json!({"TurnIndex": 0}),
                ),
                reply: crate::client::turn::Reply::ToolError("no".into()),
                findings: Vec::new(),
                sent: "2026-12-01T00:00:00.000Z".into(),
                received: None,
                latency_ms: 1.0,
                new_session: false,
                asked: Vec::new(),
            },
        );
        drop(w);
        let look = f.read_file().unwrap();
        assert!(
            matches!(&look.lines[..], [Line::Turn { dialogue: 1, .. }]),
            "what it wrote last is read: {:?}",
            look.lines
        );
        assert!(look.gone.is_some(), "and it is known to be gone");

        // A recording whose header says no lock (older ones, a Locust worker's): unknown.
        let old = dir.path().join("old.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&old, text.replacen(",\"lock\":\"flock\"", "", 1)).unwrap();
        let mut f = Follower::new(old);
        let look = f.read_file().unwrap();
        assert_eq!(look.lines.len(), 3);
        assert!(f.read_file().unwrap().gone.is_none());
    }
}
