//! Session files: dialogues saved to reload, share and replay (`docs/sessions.md`, schema
//! `docs/session.schema.json`). A file is pretty-printed JSON with a stable key order and no
//! default values, so a saved session diffs well in git, and saving what was loaded gives the
//! same bytes. Secrets are written as `${VAR}` references, never in clear.

pub use crate::atomic;
pub mod changes;
pub mod check;
pub mod diff;
pub mod feed;
pub mod journal;
pub mod replay;
mod skeleton;
pub mod stream;
pub mod walk;
pub mod write;

use crate::client::spec::{self, ServerSpec};
use crate::client::turn::Turn;
use crate::protocol::Interface;
use crate::protocol::document::SyntaxError;
use crate::protocol::message::CommonDefaults;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;
use std::sync::LazyLock;

/// The format this program writes and reads.
pub const FORMAT: &str = "bkn-explorer-session/1";
pub const FORMAT_PREFIX: &str = "bkn-explorer-session/";
pub const SESSION_SCHEMA: &str = include_str!("../../docs/session.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(SESSION_SCHEMA).expect("the session schema is JSON");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the session schema compiles")
});

/// The parts of the session schema a file read piece by piece is checked against (`walk`):
/// a dialogue without its turns, and one turn. Each is the schema's own part, with its `$defs`.
static DIALOGUE_VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| part_of_schema(|s| s["properties"]["dialogues"]["items"].clone()));
static TURN_VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| part_of_schema(|_| serde_json::json!({"$ref": "#/$defs/Turn"})));

fn part_of_schema(part: impl Fn(&Value) -> Value) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(SESSION_SCHEMA).expect("the session schema is JSON");
    let mut part = part(&schema);
    part["$schema"] = schema["$schema"].clone();
    part["$defs"] = schema["$defs"].clone();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&part)
        .expect("the part of the session schema compiles")
}

/// Which part of a session a value read on its own is.
#[derive(Clone, Copy)]
pub(crate) enum Part {
    /// The file's head, with `"dialogues": []`.
    Head,
    /// A dialogue, with `"turns": []`.
    Dialogue,
    Turn,
}

/// The mistakes of `value` (a part of a session at `at`, a JSON pointer) by the session
/// schema, each at its pointer in the file.
pub(crate) fn schema_problems(part: Part, value: &Value, at: &str) -> Vec<(String, String)> {
    let validator: &jsonschema::Validator = match part {
        Part::Head => &VALIDATOR,
        Part::Dialogue => &DIALOGUE_VALIDATOR,
        Part::Turn => &TURN_VALIDATOR,
    };
    validator
        .iter_errors(value)
        .map(|e| {
            let inner = e.instance_path().as_str();
            let pointer = format!("{at}{inner}");
            (
                if pointer.is_empty() {
                    "/".to_owned()
                } else {
                    pointer
                },
                e.to_string(),
            )
        })
        .collect()
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    pub name: Option<String>,
    pub notes: Option<String>,
    pub servers: Vec<ServerSpec>,
    pub defaults: CommonDefaults,
    pub dialogues: Vec<DialogueRecord>,
}

/// One dialogue of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogueRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The name of its server in `servers`.
    pub server: String,
    pub interface: Interface,
    pub dialog_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The common fields this dialogue filled into its Requests, when they were not the
    /// session's (learnt from the server, or set by the user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<CommonDefaults>,
    /// The MCP version its connection negotiated (2026-07-28 or later: the server kept the
    /// dialogue by DialogID; before, in the MCP session), when it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub turns: Vec<Turn>,
}

/// The file as written.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionFile {
    format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    notes: Option<String>,
    servers: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    environment: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    defaults: Option<CommonDefaults>,
    dialogues: Vec<DialogueRecord>,
}

/// Why a session file cannot be read. The file is left as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    Io(String),
    /// Not JSON, at a line and column.
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// Not a session, or one of a format this program does not read.
    Format(String),
    /// A session with mistakes, each at a JSON pointer.
    Invalid(Vec<(String, String)>),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Io(e) => write!(f, "{e}"),
            SessionError::Syntax {
                line,
                column,
                message,
            } => {
                write!(
                    f,
                    "not JSON at line {line}, column {column}: {message} (the file may be truncated or corrupt)"
                )
            }
            SessionError::Format(e) => write!(f, "{e}"),
            SessionError::Invalid(problems) => {
                write!(
                    f,
                    "{} mistake{} in the session:",
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" }
                )?;
                for (at, message) in problems.iter().take(20) {
                    write!(f, "\n  {at}: {message}")?;
                }
                if problems.len() > 20 {
                    write!(f, "\n  … and {} more", problems.len() - 20)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for SessionError {}

impl Session {
    /// Reads a session from its text. The messages stay text (see `RawJson`); the rest is
    /// checked against the session schema first, so that each mistake comes with its pointer.
    pub fn parse(text: &str) -> Result<Session, SessionError> {
        if journal::looks_like_journal(text.as_bytes()) {
            return journal::parse(text);
        }
        let syntax = |e: serde_json::Error| {
            let e = SyntaxError::from(e);
            SessionError::Syntax {
                line: e.line,
                column: e.column,
                message: e.message,
            }
        };
        let outline = skeleton::parse(text).map_err(syntax)?;
        match outline.get("format").and_then(Value::as_str) {
            Some(FORMAT) => {}
            Some(other) => {
                let newer = other
                    .strip_prefix(FORMAT_PREFIX)
                    .and_then(|v| v.parse::<u32>().ok())
                    .is_some_and(|v| v > 1);
                return Err(SessionError::Format(if newer {
                    format!(
                        "this session is in {other}, made by a newer bkn-explorer; this one reads {FORMAT}"
                    )
                } else {
                    format!("/format is \"{other}\"; a bkn-explorer session has \"{FORMAT}\"")
                }));
            }
            None => {
                return Err(SessionError::Format(format!(
                    "not a bkn-explorer session: it has no \"format\": \"{FORMAT}\""
                )));
            }
        }
        let problems = schema_problems(Part::Head, &outline, "");
        if !problems.is_empty() {
            return Err(SessionError::Invalid(problems));
        }
        drop(outline);
        // What the schema cannot see (a message no JSON value can hold) is found here, with
        // the path it is at.
        let mut reader = serde_json::Deserializer::from_str(text);
        let file: SessionFile = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let pointer = pointer_of(e.path());
            let inner = SyntaxError::from(e.into_inner());
            SessionError::Invalid(vec![(
                pointer,
                format!(
                    "{} (line {}, column {})",
                    inner.message, inner.line, inner.column
                ),
            )])
        })?;
        let servers_text = serde_json::to_string(&file.servers).unwrap_or_default();
        let servers = spec::parse_servers(&servers_text)
            .map_err(|e| SessionError::Invalid(vec![(format!("/servers{}", e.at), e.message)]))?;
        let mut problems = Vec::new();
        for (i, d) in file.dialogues.iter().enumerate() {
            if !servers.iter().any(|s| s.name == d.server) {
                problems.push((
                    format!("/dialogues/{i}/server"),
                    format!("\"{}\" is not one of the servers", d.server),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(SessionError::Invalid(problems));
        }
        Ok(Session {
            name: file.name,
            notes: file.notes,
            servers,
            defaults: file.defaults.unwrap_or_default(),
            dialogues: file.dialogues,
        })
    }

    pub fn load(path: &Path) -> Result<Session, SessionError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SessionError::Io(format!("cannot read {}: {e}", path.display())))?;
        Session::parse(&text)
    }

    /// The file's text (an empty line should the session not serialise: see `try_text`).
    pub fn to_text(&self) -> String {
        self.try_text().unwrap_or_else(|_| "\n".into())
    }

    /// The file's text, or why it cannot be written: a save never writes a part of a file.
    pub fn try_text(&self) -> serde_json::Result<String> {
        let (servers, environment) = spec::write_servers(&self.servers);
        let file = SessionFile {
            format: FORMAT.into(),
            name: self.name.clone(),
            notes: self.notes.clone(),
            servers,
            environment,
            defaults: (self.defaults != CommonDefaults::default()).then(|| self.defaults.clone()),
            dialogues: self.dialogues.clone(),
        };
        let mut text = serde_json::to_string_pretty(&file)?;
        text.push('\n');
        Ok(text)
    }

    /// Saves atomically: a reader, or a crash half-way, sees the old file or the new one,
    /// never a part.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = self
            .try_text()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        atomic::write(path, text.as_bytes())
    }

    /// The commands that replaying or continuing these dialogues would start on this machine,
    /// with their servers' names (see `ServerSpec::command_it_runs`): a session file never
    /// starts one without the user's consent.
    pub fn commands_of(&self, dialogues: &[usize]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for d in dialogues.iter().filter_map(|&i| self.dialogues.get(i)) {
            if let Some(spec) = self.server_of(d)
                && let Some(command) = spec.command_it_runs()
                && !out.iter().any(|(name, _)| *name == spec.name)
            {
                out.push((spec.name.clone(), command));
            }
        }
        out
    }

    /// The server a dialogue was recorded with.
    pub fn server_of(&self, dialogue: &DialogueRecord) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == dialogue.server)
    }

    /// Adds a server unless one with the same definition is there; returns the name it has in
    /// this session (a clash of names gets a suffix).
    pub fn add_server(&mut self, server: &ServerSpec) -> String {
        if let Some(existing) = self
            .servers
            .iter()
            .find(|s| s.transport == server.transport)
        {
            return existing.name.clone();
        }
        let mut name = server.name.clone();
        let mut n = 2;
        while self.servers.iter().any(|s| s.name == name) {
            name = format!("{}-{n}", server.name);
            n += 1;
        }
        self.servers.push(ServerSpec {
            name: name.clone(),
            ..server.clone()
        });
        name
    }
}

/// A serde path (`dialogues[0].turns[3].request`) as a JSON pointer
/// (`/dialogues/0/turns/3/request`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_files_say_why() {
        assert!(matches!(
            Session::parse("{\"format\": \"bkn-explorer-session/1\", "),
            Err(SessionError::Syntax { line: 1, .. })
        ));
        let e = Session::parse(
            r#"{"format": "bkn-explorer-session/2", "servers": {}, "dialogues": []}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("newer bkn-explorer"), "{e}");
        let e = Session::parse(r#"{"servers": {}}"#).unwrap_err();
        assert!(e.to_string().contains("not a bkn-explorer session"), "{e}");
        let e = Session::parse(r#"{"format": "bkn-explorer-session/1", "servers": {}, "dialogues": [{"server": "x", "interface": "dac", "dialogId": "d", "turns": []}]}"#).unwrap_err();
        assert_eq!(
            e,
            SessionError::Invalid(vec![(
                "/dialogues/0/server".into(),
                "\"x\" is not one of the servers".into()
            )])
        );
        let e = Session::parse(r#"{"format": "bkn-explorer-session/1", "servers": {}, "dialogues": [{"server": "x", "interface": "dac", "dialogId": "d", "turns": [{"request": {}, "sent": "yesterday", "latencyMs": 1}]}]}"#).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("/dialogues/0/turns/0"), "{text}");
    }

    #[test]
    fn an_empty_session_round_trips() {
        let mut s = Session::default();
        s.add_server(&ServerSpec::embedded(Interface::Dac));
        let text = s.to_text();
        assert!(!text.contains("defaults"), "defaults are omitted: {text}");
        assert_eq!(Session::parse(&text).unwrap(), s);
    }
}
