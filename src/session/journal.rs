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
//! A journal cut off (the last line incomplete) is read up to the last whole line; a damaged
//! line (a write torn by a full disk) is skipped and the lines after it read. The session's
//! notes say which lines and why.

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

/// The schema of one line (the header, or one entry): the source of truth for the lines'
/// shapes, which the types below mirror (their tests check each kind of line the writer
/// writes against it). `bkn-explorer schema journal` prints it.
pub const SCHEMA: &str = include_str!("../../docs/journal.schema.json");

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
    /// How the writer says it is still writing: `"flock"` when it holds an exclusive
    /// flock(2) on the file from before this line until it stops (a process killed, even by
    /// SIGKILL, lets go of it). Without it (an older recording, a Locust worker's), whether
    /// the writer is still there cannot be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lock: Option<WriterLock>,
}

/// How a journal's writer shows that it is still writing (the header's `lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WriterLock {
    /// An exclusive flock(2) on the journal, held while the writer runs.
    Flock,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DialogueLine {
    id: u64,
    server: String,
    interface: Interface,
    #[serde(rename = "dialogID")]
    dialog_id: String,
    /// The scenario the dialogue plays (a recording of Locust's workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scenario: Option<String>,
    /// The MCP version the agent spoke (2026-07-28 or later: the server keeps the dialogue
    /// by DialogID; before, in the MCP session), when the proxy saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct TurnLine {
    dialogue: u64,
    /// The scenario step the turn was sent for (a recording of Locust's workers): beside the
    /// record, so that every reader of journals reads the turn as it reads any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    step: Option<StepRef>,
    record: Turn,
}

/// The scenario step a recorded turn was sent for, and what the step expects of the turn's
/// conformance: what a Locust worker cannot judge (the checks are this program's) and `load
/// --report` judges on the recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    pub scenario: String,
    /// The step's place in its scenario (0-based).
    pub index: usize,
    pub name: String,
    pub conformance: Conformance,
}

/// What a step expects of its turn's findings (`docs/tests.md`, Expectations).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Conformance {
    /// No finding (the default).
    Conforms,
    /// At least one finding (`conforms: false`).
    NotConforming,
    /// Exactly these checks (`findings: [...]`): a negative test of a server.
    Findings(Vec<String>),
    /// Nothing asked: a Request the server is to reject, broken on purpose.
    NotAsked,
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

#[derive(Serialize, Deserialize)]
struct ClosedLine {
    dialogue: u64,
    reason: String,
    /// What the end is (absent in recordings made before it was said: an end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cause: Option<Closing>,
}

/// What a `closed` line says of its dialogue: over for certain, or no longer followed by
/// the recording while it may go on at its server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Closing {
    /// The dialogue is over: its MCP session ended (DELETE), its stdio connection closed, or
    /// its server exited.
    Ended,
    /// No exchange for the idle expiry (the proxy's `--dialogue-idle`, the server's own by
    /// default): the server may have dropped what it held of the dialogue.
    Idle,
    /// The proxy stopped: the dialogue may go on at its server, unrecorded.
    RecordingStopped,
}

/// One line of a journal, read on its own (the explorer follows a journal as it grows).
#[derive(Debug)]
pub enum Line {
    /// The first line: the recording's name and servers.
    Start {
        name: Option<String>,
        servers: Vec<ServerSpec>,
        /// How its writer shows it is still writing, when it says.
        lock: Option<WriterLock>,
    },
    Dialogue {
        id: u64,
        server: String,
        interface: Interface,
        dialog_id: String,
        /// The MCP version it spoke, when the recording says.
        protocol_version: Option<String>,
    },
    Turn {
        dialogue: u64,
        turn: Box<Turn>,
    },
    Note(String),
    /// One dialogue is over or no longer followed (`cause`; an end when absent), and why.
    Closed {
        dialogue: u64,
        reason: String,
        cause: Option<Closing>,
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
            lock: header.lock,
        });
    }
    let entry: Entry = serde_json::from_slice(bytes).map_err(|e| format!("line {number}: {e}"))?;
    Ok(match entry {
        Entry::Dialogue(d) => Line::Dialogue {
            id: d.id,
            server: d.server,
            interface: d.interface,
            dialog_id: d.dialog_id,
            protocol_version: d.protocol_version,
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
            cause: c.cause,
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
    /// The last write failed, and may have left part of its line in the file (a full disk
    /// takes what fits): the next line starts with a newline, so that the half line stays a
    /// damaged line of its own and never swallows the next event.
    torn: bool,
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
        let lock = lock_for_writing(&file, path);
        let (servers, environment) = spec::write_servers(std::slice::from_ref(server));
        let mut writer = Writer {
            file,
            path: path.to_owned(),
            failing: false,
            torn: false,
        };
        writer.line(&Header {
            format: JOURNAL_FORMAT.into(),
            name: name.map(str::to_owned),
            servers,
            environment,
            started: Some(crate::protocol::message::now_rfc3339()),
            lock,
        });
        Ok(writer)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn dialogue(&mut self, id: u64, server: &str, interface: Interface, dialog_id: &str) {
        self.dialogue_in(id, server, interface, dialog_id, None);
    }

    /// A dialogue, with the MCP version the agent spoke in it when it is known.
    pub fn dialogue_in(
        &mut self,
        id: u64,
        server: &str,
        interface: Interface,
        dialog_id: &str,
        protocol_version: Option<&str>,
    ) {
        self.line(&json!({"dialogue": DialogueLine {
            id,
            server: server.to_owned(),
            interface,
            dialog_id: dialog_id.to_owned(),
            scenario: None,
            protocol_version: protocol_version.map(str::to_owned),
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

    /// A dialogue is over, or no longer followed (`cause`), and why.
    pub fn closed(&mut self, dialogue: u64, cause: Closing, why: &str) {
        self.line(&json!({"closed": ClosedLine {
            dialogue,
            reason: why.to_owned(),
            cause: Some(cause),
        }}));
    }

    /// The last line: the recording is over, and why.
    pub fn end(&mut self, why: &str) {
        self.line(&json!({ "end": why }));
    }

    /// One line, in one write.
    fn line(&mut self, value: &impl Serialize) {
        // After a torn write, a newline first: an empty line when nothing of the torn one
        // reached the file (readers skip it), the end of the half line otherwise.
        let mut bytes = if self.torn { vec![b'\n'] } else { Vec::new() };
        if serde_json::to_writer(&mut bytes, value).is_err() {
            return;
        }
        bytes.push(b'\n');
        match self.file.write_all(&bytes) {
            Ok(()) => {
                self.failing = false;
                self.torn = false;
            }
            Err(e) if !self.failing => {
                self.failing = true;
                self.torn = true;
                eprintln!(
                    "bkn-explorer: cannot write the recording {}: {e}; the traffic still passes",
                    self.path.display()
                );
            }
            Err(_) => self.torn = true,
        }
    }
}

/// Locks a journal for as long as its writer lives (the lock goes with the file, or the
/// process, however it ends): a watcher that finds it free after the header knows the
/// recording will not grow again. Taken before the header is written, so that no watcher
/// sees a header that says `lock` without it. Only where locks are advisory (flock(2) on
/// Unix): elsewhere a lock would keep the watchers from reading, and the header says none.
fn lock_for_writing(file: &File, path: &Path) -> Option<WriterLock> {
    if !cfg!(unix) {
        return None;
    }
    match file.lock() {
        Ok(()) => Some(WriterLock::Flock),
        Err(e) => {
            eprintln!(
                "bkn-explorer: cannot lock the recording {} ({e}): a watcher cannot tell when \
                 its writer is gone",
                path.display()
            );
            None
        }
    }
}

/// What reading a journal said besides its entries.
#[derive(Debug, Default)]
pub struct Reading {
    /// What the recording said (its notes, how it ended), and a last line still in flight.
    pub notes: Vec<String>,
    /// Lines that could not be read and were skipped, each said with its number: the
    /// journal is partly unreadable (a write torn by a full disk, a damaged file).
    pub damaged: Vec<String>,
    /// The reader has what it wanted: the lines after are not read.
    stop: bool,
}

impl Reading {
    /// Everything, damage first, as a session's notes say it.
    fn all(&self) -> Vec<String> {
        self.damaged.iter().chain(&self.notes).cloned().collect()
    }
}

/// Why the first line is not a journal's header, and where in it.
struct BadHeader {
    column: usize,
    message: String,
    format: bool,
}

fn header(first: &[u8]) -> Result<Header, BadHeader> {
    let header: Header = serde_json::from_slice(trim_line(first)).map_err(|e| BadHeader {
        column: e.column(),
        message: format!("the journal's first line: {e}"),
        format: false,
    })?;
    if header.format != JOURNAL_FORMAT {
        return Err(BadHeader {
            column: 1,
            message: format!(
                "/format is \"{}\"; this program reads journals of \"{JOURNAL_FORMAT}\"",
                header.format
            ),
            format: true,
        });
    }
    Ok(header)
}

fn trim_line(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &line[..end]
}

/// Calls `each` with every entry after the header (line 2 on), in order, one line in memory
/// at a time. A line that is not an entry is skipped and said in `damaged`, and every later
/// whole line is still read: after a torn write the writer starts a fresh line, so the half
/// line is a line of its own. A last line without its newline is an exchange in flight (or
/// one still being written): said in `notes`, not damage. A recording whose writer says it
/// holds a `lock` writes its `end` at every stop it sees: one read whole without it was cut
/// (or is still being written), which `notes` says.
fn entries<R: std::io::BufRead>(
    mut source: R,
    lock: Option<WriterLock>,
    each: &mut dyn FnMut(usize, Entry, &mut Reading),
) -> std::io::Result<Reading> {
    let mut reading = Reading::default();
    let mut ended = false;
    let mut line = Vec::new();
    let mut number = 1;
    while !reading.stop {
        line.clear();
        if source.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        number += 1;
        let complete = line.ends_with(b"\n");
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Entry>(text) {
            Ok(entry) => {
                ended |= matches!(entry, Entry::End(_));
                each(number, entry, &mut reading)
            }
            Err(_) if !complete => reading.notes.push(format!(
                "the recording ends in the middle of line {number} (an exchange in flight, or \
                 one still being written); read up to line {}",
                number - 1
            )),
            Err(e) => reading.damaged.push(format!(
                "line {number} is not a journal entry ({e}; a write torn by a full disk, or \
                 damage): skipped, the lines after it are read"
            )),
        }
    }
    if lock.is_some() && !ended && !reading.stop {
        reading.notes.push(NO_END.to_owned());
    }
    Ok(reading)
}

/// What the notes say of a recording read whole without its end.
pub const NO_END: &str = "the recording has no end: its proxy was killed (SIGKILL) or crashed, \
                          or is still writing; everything it wrote is read";

/// The first line of `text`, and the rest.
fn split_first(text: &[u8]) -> (&[u8], &[u8]) {
    match text.iter().position(|&b| b == b'\n') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, &[]),
    }
}

/// The dialogues of a journal as read so far: each one's id, and the turns of one that no
/// line opened (its dialogue line was damaged) are said once.
#[derive(Default)]
struct Dialogues {
    ids: Vec<u64>,
    orphans: Vec<u64>,
}

impl Dialogues {
    /// The place of dialogue `id`, or `None` (said in `reading` the first time).
    fn place(&mut self, id: u64, number: usize, reading: &mut Reading) -> Option<usize> {
        let at = self.ids.iter().position(|&d| d == id);
        if at.is_none() && !self.orphans.contains(&id) {
            self.orphans.push(id);
            reading.damaged.push(format!(
                "line {number}: a turn of dialogue {id}, which no line before opened: its turns \
                 are skipped"
            ));
        }
        at
    }
}

/// The session a journal's first line starts (its name and servers, no dialogues yet), and
/// its writer's lock.
fn start(first: &[u8]) -> Result<(Session, Option<WriterLock>), SessionError> {
    let header = header(first).map_err(|e| {
        if e.format {
            SessionError::Format(e.message)
        } else {
            SessionError::Syntax {
                line: 1,
                column: e.column,
                message: e.message,
            }
        }
    })?;
    let servers_text = serde_json::to_string(&header.servers).unwrap_or_default();
    let servers = spec::parse_servers(&servers_text)
        .map_err(|e| SessionError::Invalid(vec![(format!("/servers{}", e.at), e.message)]))?;
    let session = Session {
        name: header.name,
        servers,
        ..Default::default()
    };
    Ok((session, header.lock))
}

/// Reads a journal as a session. What was skipped, and what the recording said, is in the
/// session's notes.
pub fn parse(text: &str) -> Result<Session, SessionError> {
    if text.is_empty() {
        return Err(SessionError::Format("an empty journal".into()));
    }
    let (first, rest) = split_first(text.as_bytes());
    let (mut session, lock) = start(first)?;
    let mut dialogues = Dialogues::default();
    let reading = entries(rest, lock, &mut |number, entry, reading| match entry {
        Entry::Dialogue(d) => {
            if !session.servers.iter().any(|s| s.name == d.server) {
                reading.damaged.push(format!(
                    "line {number}: dialogue {} names server \"{}\", which the journal does not \
                     have: skipped",
                    d.id, d.server
                ));
                return;
            }
            dialogues.ids.push(d.id);
            session.dialogues.push(DialogueRecord {
                name: None,
                server: d.server,
                interface: d.interface,
                dialog_id: d.dialog_id,
                notes: None,
                defaults: None,
                protocol_version: d.protocol_version,
                turns: Vec::new(),
            });
        }
        Entry::Turn(t) => {
            if let Some(at) = dialogues.place(t.dialogue, number, reading) {
                session.dialogues[at].turns.push(t.record);
            }
        }
        Entry::Note(n) | Entry::End(n) => reading.notes.push(n),
        Entry::Closed(_) | Entry::Tools(_) | Entry::Resource(_) => {}
    })
    .map_err(|e| SessionError::Io(format!("cannot read: {e}")))?;
    let notes = reading.all();
    if !notes.is_empty() {
        session.notes = Some(notes.join("\n"));
    }
    Ok(session)
}

/// A journal's items for `walk::walk`, one line at a time, until `each` says Break; returns
/// the notes (damaged lines first).
pub(super) fn walk(
    mut source: impl std::io::BufRead,
    each: &mut dyn FnMut(super::walk::Item) -> std::ops::ControlFlow<()>,
) -> Result<Vec<String>, SessionError> {
    use super::walk::Item;
    let mut first = Vec::new();
    source
        .read_until(b'\n', &mut first)
        .map_err(|e| SessionError::Io(format!("cannot read: {e}")))?;
    if first.is_empty() {
        return Err(SessionError::Format("an empty journal".into()));
    }
    // The header is read as the loader reads it (the same errors).
    let (start, lock) = start(trim_line(&first))?;
    let servers = start.servers.clone();
    if each(Item::Start(start)).is_break() {
        return Ok(Vec::new());
    }
    let mut dialogues = Dialogues::default();
    let mut give = |item: Item, reading: &mut Reading| {
        reading.stop |= each(item).is_break();
    };
    let reading = entries(source, lock, &mut |number, entry, reading| match entry {
        Entry::Dialogue(d) => {
            if !servers.iter().any(|s| s.name == d.server) {
                reading.damaged.push(format!(
                    "line {number}: dialogue {} names server \"{}\", which the journal does not \
                     have: skipped",
                    d.id, d.server
                ));
                return;
            }
            dialogues.ids.push(d.id);
            let record = DialogueRecord {
                name: None,
                server: d.server,
                interface: d.interface,
                dialog_id: d.dialog_id,
                notes: None,
                defaults: None,
                protocol_version: d.protocol_version,
                turns: Vec::new(),
            };
            give(Item::Dialogue(dialogues.ids.len() - 1, record), reading);
        }
        Entry::Turn(t) => {
            if let Some(dialogue) = dialogues.place(t.dialogue, number, reading) {
                give(
                    Item::Turn {
                        dialogue,
                        turn: t.record,
                    },
                    reading,
                );
            }
        }
        Entry::Note(n) | Entry::End(n) => reading.notes.push(n),
        Entry::Tools(t) => give(Item::Tools(t), reading),
        Entry::Resource(r) => give(Item::Resource(r.uri, r.contents), reading),
        Entry::Closed(_) => {}
    })
    .map_err(|e| SessionError::Io(format!("cannot read: {e}")))?;
    Ok(reading.all())
}

/// Calls `each` for every turn of the journal in `source`, and `closed` with a dialogue's
/// place when its `closed` line comes (its turns are over), one line at a time (memory is one
/// line); returns what the recording said and which lines were skipped.
pub fn for_each_turn<R: std::io::BufRead>(
    mut source: R,
    each: &mut dyn FnMut(super::stream::StreamedTurn),
    closed: &mut dyn FnMut(usize),
) -> Result<Reading, super::stream::StreamError> {
    use super::stream::{StreamError, StreamedReply, StreamedTurn};
    let mut first = Vec::new();
    match source.read_until(b'\n', &mut first) {
        Ok(0) => return Err(StreamError::NotSession("an empty journal".into())),
        Ok(_) => {}
        Err(e) => return Err(StreamError::NotSession(format!("cannot read: {e}"))),
    }
    let lock = header(&first)
        .map_err(|e| StreamError::NotSession(e.message))?
        .lock;
    // Each dialogue's interface and how many turns it has had, by place.
    let mut dialogues = Dialogues::default();
    let mut counts: Vec<(Interface, usize)> = Vec::new();
    entries(source, lock, &mut |number, entry, reading| match entry {
        Entry::Dialogue(d) => {
            dialogues.ids.push(d.id);
            counts.push((d.interface, 0));
        }
        Entry::Turn(t) => {
            let Some(at) = dialogues.place(t.dialogue, number, reading) else {
                return;
            };
            let (interface, count) = &mut counts[at];
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
                kept_as: None,
                latency_ms: t.record.latency_ms,
                step: t.step,
                binding: t
                    .record
                    .findings
                    .into_iter()
                    .map(|f| f.finding)
                    .filter(|f| f.level() == crate::protocol::conformance::Level::Binding)
                    .collect(),
            });
            *count += 1;
        }
        Entry::Note(n) | Entry::End(n) => reading.notes.push(n),
        Entry::Closed(c) => {
            if let Some(at) = dialogues.ids.iter().position(|&d| d == c.dialogue) {
                closed(at);
            }
        }
        Entry::Tools(_) | Entry::Resource(_) => {}
    })
    .map_err(|e| StreamError::NotSession(format!("cannot read: {e}")))
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
            asked: Vec::new(),
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
        // No end line: the writer (still here) may go on, or was cut; the notes say so.
        assert_eq!(
            s.notes.as_deref(),
            Some(format!("the agent closed its side\n{NO_END}").as_str())
        );
        let mut ended = text.clone();
        ended.push_str("{\"end\":\"the proxy stopped\"}\n");
        assert_eq!(
            Session::parse(&ended).unwrap().notes.as_deref(),
            Some("the agent closed its side\nthe proxy stopped"),
            "a recording with its end says nothing more"
        );

        // Cut in the middle of the last line: everything before it, and a note.
        let cut = &text[..text.len() - 20];
        let s = Session::parse(cut).unwrap();
        assert_eq!(s.dialogues[0].turns.len(), 1);
        let notes = s.notes.unwrap();
        assert!(
            notes.contains("middle of line 5") && notes.contains("read up to line 4"),
            "{notes}"
        );

        // A damaged line in the middle: skipped, the lines after it read.
        let damaged = text.replacen("{\"note\"", "{\"nope\"", 1);
        let s = Session::parse(&damaged).unwrap();
        assert_eq!(s.dialogues[0].turns.len(), 2);
        assert!(s.notes.unwrap().contains("line 4 is not a journal entry"));
    }

    /// A full disk takes part of a line and refuses the rest; when space comes back, the
    /// next line must not be glued to the half one.
    #[test]
    fn a_write_torn_by_a_full_disk_loses_only_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let server = ServerSpec::from_command_line("my-da").unwrap();
        let mut w = Writer::create(&path, None, &server).unwrap();
        w.dialogue(1, &server.name, Interface::Dac, "D1");
        w.turn(1, &turn(0));
        // The disk is full: the write fails (/dev/full refuses every byte) …
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let real = std::mem::replace(&mut w.file, full);
        w.turn(1, &turn(1));
        assert!(w.torn);
        // … after a part of the line reached the disk, as a short write leaves it.
        let mut line =
            serde_json::to_vec(&json!({"turn": {"dialogue": 1, "record": turn(1)}})).unwrap();
        line.truncate(line.len() / 2);
        (&real).write_all(&line).unwrap();
        // Space comes back.
        w.file = real;
        w.turn(1, &turn(2));
        w.turn(1, &turn(3));
        assert!(!w.torn);

        let text = std::fs::read_to_string(&path).unwrap();
        let s = Session::parse(&text).unwrap();
        assert_eq!(s.dialogues[0].turns, vec![turn(0), turn(2), turn(3)]);
        let notes = s.notes.unwrap();
        assert!(notes.contains("line 4 is not a journal entry"), "{notes}");

        let mut seen = Vec::new();
        let reading =
            for_each_turn(text.as_bytes(), &mut |t| seen.push(t.request), &mut |_| {}).unwrap();
        assert_eq!(
            seen,
            [
                json!({"TurnIndex": 0}),
                json!({"TurnIndex": 2}),
                json!({"TurnIndex": 3})
            ]
        );
        assert_eq!(reading.damaged.len(), 1, "{:?}", reading.damaged);
        assert!(
            reading.damaged[0].starts_with("line 4 "),
            "{:?}",
            reading.damaged
        );
        assert_eq!(reading.notes, [NO_END], "only that it has no end");

        // Cut off in its last line as well (the proxy killed mid-write): a note, not damage.
        let reading = for_each_turn(
            &text.as_bytes()[..text.len() - 10],
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(reading.damaged.len(), 1, "{:?}", reading.damaged);
        assert!(
            reading.notes[0].contains("middle of line 6"),
            "{:?}",
            reading.notes
        );
    }

    /// Every kind of line the writer writes (a header with its lock, each cause of a
    /// `closed` line) conforms to the journal's schema, and so do an older recording's lines
    /// (no lock, a `closed` line without cause); the schema's causes are the type's.
    #[test]
    fn every_line_written_conforms_to_the_journal_schema() {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let server = ServerSpec::from_command_line("my-da").unwrap();
        let mut w = Writer::create(&path, Some("run"), &server).unwrap();
        w.dialogue_in(1, &server.name, Interface::Dac, "D1", Some("2026-07-28"));
        w.turn(1, &turn(0));
        w.tools(&json!([{"name": "bkn_dac"}]));
        w.resource("dac://domain", &json!({"MInstance": "MI:X"}));
        w.note("a note");
        let causes = [Closing::Ended, Closing::Idle, Closing::RecordingStopped];
        for cause in causes {
            w.closed(1, cause, "why");
        }
        w.end("the proxy stopped");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().next().unwrap().contains(r#""lock":"flock""#));
        let old = [
            r#"{"format":"bkn-explorer-journal/1","servers":{"da":{"command":"da"}}}"#,
            r#"{"closed":{"dialogue":1,"reason":"the agent ended its MCP session (DELETE)"}}"#,
        ];
        for line in text.lines().chain(old) {
            let value: Value = serde_json::from_str(line).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{line}: {errors:?}");
        }
        for bad in [
            r#"{"closed":{"dialogue":1,"reason":"x","cause":"maybe"}}"#,
            r#"{"note":"a","end":"b"}"#,
        ] {
            let value: Value = serde_json::from_str(bad).unwrap();
            assert!(!validator.is_valid(&value), "{bad}");
        }
        let named: Vec<Value> = causes.iter().map(|c| json!(c)).collect();
        assert_eq!(
            schema["$defs"]["Closing"]["enum"].as_array().unwrap(),
            &named
        );
        assert_eq!(
            schema["$defs"]["Header"]["properties"]["lock"]["enum"],
            json!([WriterLock::Flock])
        );
    }
}
