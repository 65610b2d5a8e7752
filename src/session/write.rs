//! Writing a session file bit by bit: its head, then each dialogue and each of its turns as
//! they come, so that a session of any size is written holding one turn (`replay --update`).
//! The bytes are those `Session::to_text` writes for the same session: each piece is
//! pretty-printed by serde_json and indented to its place (JSON strings hold no line break, so
//! every line of a piece is indented alike).

use super::{DialogueRecord, Session};
use crate::client::turn::Turn;
use std::io::{self, Write};

/// A session file being written to `out`.
pub struct Writer<W: Write> {
    out: W,
    dialogues: usize,
    /// Turns written in the open dialogue; `None` when no dialogue is open.
    turns: Option<usize>,
}

fn invalid(e: serde_json::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Each line of `text` indented by `by` spaces.
fn indented(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&pad);
        out.push_str(line);
    }
    out
}

impl<W: Write> Writer<W> {
    /// Writes the head of `session` (its name, servers and defaults; its dialogues are left
    /// out: they come with `dialogue`).
    pub fn start(mut out: W, session: &Session) -> io::Result<Writer<W>> {
        let head = Session {
            dialogues: Vec::new(),
            ..session.clone()
        };
        let text = head.try_text().map_err(invalid)?;
        let open = text
            .strip_suffix("[]\n}\n")
            .ok_or_else(|| io::Error::other("a session's text ends with its dialogues"))?;
        out.write_all(open.as_bytes())?;
        out.write_all(b"[")?;
        Ok(Writer {
            out,
            dialogues: 0,
            turns: None,
        })
    }

    /// Begins a dialogue: `record`'s fields but its turns, which come with `turn`.
    pub fn dialogue(&mut self, record: &DialogueRecord) -> io::Result<()> {
        self.close_dialogue()?;
        let head = DialogueRecord {
            turns: Vec::new(),
            ..record.clone()
        };
        let text = indented(&serde_json::to_string_pretty(&head).map_err(invalid)?, 4);
        let open = text
            .strip_suffix("[]\n    }")
            .ok_or_else(|| io::Error::other("a dialogue's text ends with its turns"))?;
        self.out
            .write_all(if self.dialogues == 0 { b"\n" } else { b",\n" })?;
        self.out.write_all(open.as_bytes())?;
        self.out.write_all(b"[")?;
        self.dialogues += 1;
        self.turns = Some(0);
        Ok(())
    }

    /// A turn of the open dialogue.
    pub fn turn(&mut self, turn: &Turn) -> io::Result<()> {
        let Some(n) = self.turns else {
            return Err(io::Error::other("a turn written before its dialogue"));
        };
        let text = indented(&serde_json::to_string_pretty(turn).map_err(invalid)?, 8);
        self.out.write_all(if n == 0 { b"\n" } else { b",\n" })?;
        self.out.write_all(text.as_bytes())?;
        self.turns = Some(n + 1);
        Ok(())
    }

    fn close_dialogue(&mut self) -> io::Result<()> {
        match self.turns.take() {
            None => Ok(()),
            Some(0) => self.out.write_all(b"]\n    }"),
            Some(_) => self.out.write_all(b"\n      ]\n    }"),
        }
    }

    /// Ends the file; gives back what it was written to.
    pub fn finish(mut self) -> io::Result<W> {
        self.close_dialogue()?;
        self.out.write_all(if self.dialogues == 0 {
            b"]\n}\n"
        } else {
            b"\n  ]\n}\n"
        })?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn written(session: &Session) -> String {
        let mut w = Writer::start(Vec::new(), session).unwrap();
        for d in &session.dialogues {
            w.dialogue(d).unwrap();
            for t in &d.turns {
                w.turn(t).unwrap();
            }
        }
        String::from_utf8(w.finish().unwrap()).unwrap()
    }

    #[test]
    fn the_bytes_are_those_of_the_whole_text() {
        for file in ["sessions/dac-tour.json", "sessions/usr-refinement.json"] {
            let mut s = Session::load(Path::new(file)).unwrap();
            assert_eq!(written(&s), s.to_text(), "{file}");
            // A dialogue without turns, and a session without dialogues.
            s.dialogues[0].turns.clear();
            assert_eq!(written(&s), s.to_text(), "{file}, no turns");
            s.dialogues.clear();
            assert_eq!(written(&s), s.to_text(), "{file}, no dialogues");
        }
    }
}
