//! Session journals: a session written as it happens, one JSON line per event, so that a
//! crash of anything loses at most the exchange in flight (each line goes out in one write;
//! nothing already written is ever rewritten). The proxy records in this format; every
//! reader of sessions reads it (`Session::parse`, `validate`, `replay`, the explorer).
//!
//! ```text
//! {"format":"bkn-explorer-journal/1","name":…,"servers":{…},"environment":[…],"started":…}
//! {"dialogue":{"id":1,"server":"da","interface":"dac","dialogID":"…"}}
//! {"turn":{"dialogue":1,"record":{…a turn, as in a session file…}}}
//! {"note":"the agent closed its side"}
//! ```
//!
//! A journal cut off (the last line incomplete) or damaged is read up to the last whole
//! line, and the session's notes say where and why it stopped.

use super::{DialogueRecord, Session, SessionError};
use crate::client::spec::{self, ServerSpec};
use crate::client::turn::Turn;
use crate::protocol::Interface;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const JOURNAL_FORMAT: &str = "bkn-explorer-journal/1";

/// Whether a text (its first bytes suffice) is a journal.
pub fn looks_like_journal(head: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&head[..head.len().min(200)]);
    let compact: String = head.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with("{\"format\":\"bkn-explorer-journal/")
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    servers: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    environment: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DialogueLine {
    id: u64,
    server: String,
    interface: Interface,
    #[serde(rename = "dialogID")]
    dialog_id: String,
}

#[derive(Serialize, Deserialize)]
struct TurnLine {
    dialogue: u64,
    record: Turn,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Entry {
    Dialogue(DialogueLine),
    Turn(TurnLine),
    Note(String),
    End(String),
    Closed(ClosedLine),
    /// The server's tools, as its `tools/list` gave them.
    Tools(Vec<Value>),
    /// A resource the server gave (`resources/read`), its JSON.
    Resource(ResourceLine),
}

#[derive(Serialize, Deserialize)]
struct ResourceLine {
    uri: String,
    contents: Value,
}

/// What a journal recorded of the server besides its dialogues: its last tools list and the
/// resources read from it (the last reading of each URI).
#[derive(Clone, Debug, Default)]
pub struct Offered {
    pub tools: Vec<Value>,
    pub resources: Vec<(String, Value)>,
}

/// The tools and resources a journal recorded (nothing for a session file).
pub fn offered(text: &str) -> Offered {
    let mut out = Offered::default();
    if !looks_like_journal(text.as_bytes()) {
        return out;
    }
    for line in text.lines().skip(1) {
        match serde_json::from_str::<Entry>(line) {
            Ok(Entry::Tools(t)) => out.tools = t,
            Ok(Entry::Resource(r)) => {
                out.resources.retain(|(uri, _)| *uri != r.uri);
                out.resources.push((r.uri, r.contents));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    out
}

#[derive(Serialize, Deserialize)]
struct ClosedLine {
    dialogue: u64,
    reason: String,
}

/// One line of a journal, read on its own (the explorer follows a journal as it grows).
#[derive(Debug)]
pub enum Line {
    /// The first line: the recording's name and servers.
    Start {
        name: Option<String>,
        servers: Vec<ServerSpec>,
    },
    Dialogue {
        id: u64,
        server: String,
        interface: Interface,
        dialog_id: String,
    },
    Turn {
        dialogue: u64,
        turn: Box<Turn>,
    },
    Note(String),
    /// One dialogue is over (its MCP session ended), and why.
    Closed {
        dialogue: u64,
        reason: String,
    },
    /// The recording is over (the proxy ended), and why.
    End(String),
    /// What the server offers (its tools, a resource read): kept for `serve --from-session`.
    Offered,
}

/// Reads line `number` (1 is the header) of a journal.
pub fn read_line(number: usize, bytes: &[u8]) -> Result<Line, String> {
    if number == 1 {
        let header: Header =
            serde_json::from_slice(bytes).map_err(|e| format!("the journal's first line: {e}"))?;
        if header.format != JOURNAL_FORMAT {
            return Err(format!(
                "/format is \"{}\"; this program reads journals of \"{JOURNAL_FORMAT}\"",
                header.format
            ));
        }
        let text = serde_json::to_string(&header.servers).unwrap_or_default();
        let servers =
            spec::parse_servers(&text).map_err(|e| format!("/servers{}: {}", e.at, e.message))?;
        return Ok(Line::Start {
            name: header.name,
            servers,
        });
    }
    let entry: Entry = serde_json::from_slice(bytes).map_err(|e| format!("line {number}: {e}"))?;
    Ok(match entry {
        Entry::Dialogue(d) => Line::Dialogue {
            id: d.id,
            server: d.server,
            interface: d.interface,
            dialog_id: d.dialog_id,
        },
        Entry::Turn(t) => Line::Turn {
            dialogue: t.dialogue,
            turn: Box::new(t.record),
        },
        Entry::Note(n) => Line::Note(n),
        Entry::End(e) => Line::End(e),
        Entry::Closed(c) => Line::Closed {
            dialogue: c.dialogue,
            reason: c.reason,
        },
        Entry::Tools(_) | Entry::Resource(_) => Line::Offered,
    })
}

/// A journal being written. A line that cannot be written is said once on stderr, and the
/// writer goes on trying (the traffic it records never waits for it).
pub struct Writer {
    file: File,
    path: PathBuf,
    failing: bool,
}

impl Writer {
    /// Starts a journal at `path`, which must not exist (a recording is never overwritten).
    pub fn create(path: &Path, name: Option<&str>, server: &ServerSpec) -> Result<Writer, String> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => format!(
                    "{} exists; a recording is never written over (choose another --record)",
                    path.display()
                ),
                _ => format!("cannot create {}: {e}", path.display()),
            })?;
        let (servers, environment) = spec::write_servers(std::slice::from_ref(server));
        let mut writer = Writer {
            file,
            path: path.to_owned(),
            failing: false,
        };
        writer.line(&Header {
            format: JOURNAL_FORMAT.into(),
            name: name.map(str::to_owned),
            servers,
            environment,
            started: Some(crate::protocol::message::now_rfc3339()),
        });
        Ok(writer)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn dialogue(&mut self, id: u64, server: &str, interface: Interface, dialog_id: &str) {
        self.line(&json!({"dialogue": DialogueLine {
            id,
            server: server.to_owned(),
            interface,
            dialog_id: dialog_id.to_owned(),
        }}));
    }

    pub fn turn(&mut self, dialogue: u64, turn: &Turn) {
        self.line(&json!({"turn": {"dialogue": dialogue, "record": turn}}));
    }

    pub fn note(&mut self, text: &str) {
        self.line(&json!({ "note": text }));
    }

    /// The server's tools (from its `tools/list`).
    pub fn tools(&mut self, tools: &Value) {
        self.line(&json!({ "tools": tools }));
    }

    /// A resource the server gave.
    pub fn resource(&mut self, uri: &str, contents: &Value) {
        self.line(
            &json!({"resource": ResourceLine { uri: uri.to_owned(), contents: contents.clone() }}),
        );
    }

    /// A dialogue is over (its MCP session ended), and why.
    pub fn closed(&mut self, dialogue: u64, why: &str) {
        self.line(&json!({"closed": ClosedLine { dialogue, reason: why.to_owned() }}));
    }

    /// The last line: the recording is over, and why.
    pub fn end(&mut self, why: &str) {
        self.line(&json!({ "end": why }));
    }

    /// One line, in one write.
    fn line(&mut self, value: &impl Serialize) {
        let mut bytes = match serde_json::to_vec(value) {
            Ok(b) => b,
            Err(_) => return,
        };
        bytes.push(b'\n');
        match self.file.write_all(&bytes) {
            Ok(()) => self.failing = false,
            Err(e) if !self.failing => {
                self.failing = true;
                eprintln!(
                    "bkn-explorer: cannot write the recording {}: {e}; the traffic still passes",
                    self.path.display()
                );
            }
            Err(_) => {}
        }
    }
}

/// Reads a journal as a session. What stopped the reading early is in the session's notes.
pub fn parse(text: &str) -> Result<Session, SessionError> {
    let mut lines = text.split_inclusive('\n').enumerate();
    let Some((_, first)) = lines.next() else {
        return Err(SessionError::Format("an empty journal".into()));
    };
    let header: Header =
        serde_json::from_str(first.trim_end()).map_err(|e| SessionError::Syntax {
            line: 1,
            column: e.column(),
            message: format!("the journal's first line: {e}"),
        })?;
    if header.format != JOURNAL_FORMAT {
        return Err(SessionError::Format(format!(
            "/format is \"{}\"; this program reads journals of \"{JOURNAL_FORMAT}\"",
            header.format
        )));
    }
    let servers_text = serde_json::to_string(&header.servers).unwrap_or_default();
    let servers = spec::parse_servers(&servers_text)
        .map_err(|e| SessionError::Invalid(vec![(format!("/servers{}", e.at), e.message)]))?;
    let mut session = Session {
        name: header.name,
        servers,
        ..Default::default()
    };
    let mut ids: Vec<u64> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for (i, line) in lines {
        let number = i + 1;
        let complete = line.ends_with('\n');
        if line.trim().is_empty() {
            continue;
        }
        let entry: Entry = match serde_json::from_str(line.trim_end()) {
            Ok(e) => e,
            Err(e) => {
                notes.push(if complete {
                    format!(
                        "line {number} is not a journal entry ({e}); read up to line {}",
                        number - 1
                    )
                } else {
                    format!(
                        "the recording was cut off in line {number} (an exchange in flight); \
                         read up to line {}",
                        number - 1
                    )
                });
                break;
            }
        };
        match entry {
            Entry::Dialogue(d) => {
                if !session.servers.iter().any(|s| s.name == d.server) {
                    notes.push(format!(
                        "line {number}: dialogue {} names server \"{}\", which the journal does not have; read up to line {}",
                        d.id,
                        d.server,
                        number - 1
                    ));
                    break;
                }
                ids.push(d.id);
                session.dialogues.push(DialogueRecord {
                    name: None,
                    server: d.server,
                    interface: d.interface,
                    dialog_id: d.dialog_id,
                    notes: None,
                    defaults: None,
                    protocol_version: None,
                    turns: Vec::new(),
                });
            }
            Entry::Turn(t) => match ids.iter().position(|&id| id == t.dialogue) {
                Some(at) => session.dialogues[at].turns.push(t.record),
                None => {
                    notes.push(format!(
                        "line {number}: a turn of dialogue {}, which no line before opened; read up to line {}",
                        t.dialogue,
                        number - 1
                    ));
                    break;
                }
            },
            Entry::Note(n) | Entry::End(n) => notes.push(n),
            Entry::Closed(_) | Entry::Tools(_) | Entry::Resource(_) => {}
        }
    }
    if !notes.is_empty() {
        session.notes = Some(notes.join("\n"));
    }
    Ok(session)
}

/// Calls `each` for every turn of the journal in `source`, one line at a time (memory is one
/// line); returns the notes (what the recording said, and where reading stopped early).
pub fn for_each_turn<R: std::io::BufRead>(
    source: R,
    each: &mut dyn FnMut(super::stream::StreamedTurn),
) -> Result<Vec<String>, super::stream::StreamError> {
    use super::stream::{StreamError, StreamedReply, StreamedTurn};
    let mut lines = source.split(b'\n').enumerate();
    let first = match lines.next() {
        Some((_, Ok(line))) => line,
        Some((_, Err(e))) => return Err(StreamError::NotSession(format!("cannot read: {e}"))),
        None => return Err(StreamError::NotSession("an empty journal".into())),
    };
    let header: Header = serde_json::from_slice(&first)
        .map_err(|e| StreamError::NotSession(format!("the journal's first line: {e}")))?;
    if header.format != JOURNAL_FORMAT {
        return Err(StreamError::NotSession(format!(
            "/format is \"{}\"; this program reads journals of \"{JOURNAL_FORMAT}\"",
            header.format
        )));
    }
    // Each dialogue's place, interface and how many turns it has had.
    let mut dialogues: Vec<(u64, Interface, usize)> = Vec::new();
    let mut notes = Vec::new();
    for (i, line) in lines {
        let number = i + 1;
        let line = line.map_err(|e| StreamError::NotSession(format!("cannot read: {e}")))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let entry: Entry = match serde_json::from_slice(&line) {
            Ok(e) => e,
            Err(e) => {
                notes.push(format!(
                    "line {number} is not a whole journal entry ({e}; the recording may have \
                     been cut off); read up to line {}",
                    number - 1
                ));
                break;
            }
        };
        match entry {
            Entry::Dialogue(d) => dialogues.push((d.id, d.interface, 0)),
            Entry::Turn(t) => {
                let Some(at) = dialogues.iter().position(|d| d.0 == t.dialogue) else {
                    notes.push(format!(
                        "line {number}: a turn of dialogue {}, which no line before opened; read up to line {}",
                        t.dialogue,
                        number - 1
                    ));
                    break;
                };
                let (_, interface, count) = &mut dialogues[at];
                let reply = match &t.record.reply {
                    crate::client::turn::Reply::Response(r) => StreamedReply::Response(r.value()),
                    crate::client::turn::Reply::ToolError(e) => StreamedReply::ToolError(e.clone()),
                    crate::client::turn::Reply::Error(_) => StreamedReply::Nothing,
                };
                each(StreamedTurn {
                    dialogue: at,
                    turn: *count,
                    interface: Some(*interface),
                    request: t.record.request_value(),
                    reply,
                    new_session: t.record.new_session,
                });
                *count += 1;
            }
            Entry::Note(n) | Entry::End(n) => notes.push(n),
            Entry::Closed(_) | Entry::Tools(_) | Entry::Resource(_) => {}
        }
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::turn::Reply;
    use crate::protocol::raw::RawJson;

    fn turn(i: u64) -> Turn {
        Turn {
            request: RawJson::from_value(&json!({"TurnIndex": i})),
            reply: Reply::ToolError("no".into()),
            findings: Vec::new(),
            sent: "2026-12-01T00:00:00.000Z".into(),
            received: Some("2026-12-01T00:00:00.001Z".into()),
            latency_ms: 1.0,
            new_session: false,
        }
    }

    #[test]
    fn a_journal_reads_back_as_the_session_it_recorded_even_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.bknj");
        let server = ServerSpec::from_command_line("my-da --flag").unwrap();
        let mut w = Writer::create(&path, Some("agent run"), &server).unwrap();
        w.dialogue(1, &server.name, Interface::Dac, "D1");
        w.turn(1, &turn(0));
        w.note("the agent closed its side");
        w.turn(1, &turn(1));
        let again = Writer::create(&path, None, &server).err().unwrap();
        assert!(again.contains("never written over"), "{again}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(looks_like_journal(text.as_bytes()));
        let s = Session::parse(&text).unwrap();
        assert_eq!(s.name.as_deref(), Some("agent run"));
        assert_eq!(s.dialogues.len(), 1);
        assert_eq!(s.dialogues[0].turns, vec![turn(0), turn(1)]);
        assert_eq!(s.notes.as_deref(), Some("the agent closed its side"));

        // Cut in the middle of the last line: everything before it, and a note.
        let cut = &text[..text.len() - 20];
        let s = Session::parse(cut).unwrap();
        assert_eq!(s.dialogues[0].turns.len(), 1);
        let notes = s.notes.unwrap();
        assert!(
            notes.contains("cut off in line 5") && notes.contains("read up to line 4"),
            "{notes}"
        );

        // A damaged line in the middle: read up to it.
        let damaged = text.replacen("{\"note\"", "{\"nope\"", 1);
        let s = Session::parse(&damaged).unwrap();
        assert_eq!(s.dialogues[0].turns.len(), 1);
        assert!(s.notes.unwrap().contains("line 4 is not a journal entry"));
    }
}
