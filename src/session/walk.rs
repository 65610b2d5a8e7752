//! Reading a session file or a journal item by item, with its turns typed, without holding
//! the session: what `serve --from-session` and `test --from-session` read a file of any size
//! with. (`stream.rs` is `validate`'s: messages as values, no times or findings.) Memory is
//! one turn plus what the caller keeps.
//!
//! A session file is read in the order this program writes its keys (`servers` before
//! `dialogues`; a dialogue's `server`, `interface` and `dialogId` before its `turns`); a file
//! whose keys were reordered by hand is loaded whole instead, as `Session::load` reads it.

use super::journal;
use super::{DialogueRecord, FORMAT, Part, Session, SessionError, schema_problems, skeleton};
use crate::client::turn::Turn;
use crate::protocol::message::CommonDefaults;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::path::Path;

/// One thing read, in the file's order.
pub enum Item {
    /// The session's name, servers and defaults, before any dialogue (its `dialogues` are
    /// empty).
    Start(Session),
    /// A dialogue begins (its `turns` empty): its place in the session.
    Dialogue(usize, DialogueRecord),
    /// A turn of dialogue `dialogue` (by place).
    Turn {
        dialogue: usize,
        turn: Turn,
    },
    /// What a journal recorded the server offered: its tools, and a resource read.
    Tools(Vec<Value>),
    Resource(String, Value),
}

/// Calls `each` with every item of the session or journal at `path`, until it says
/// `Break`. Returns the notes of a journal (what it said, the lines it skipped).
pub fn walk(
    path: &Path,
    each: &mut dyn FnMut(Item) -> ControlFlow<()>,
) -> Result<Vec<String>, SessionError> {
    let cannot =
        |e: std::io::Error| SessionError::Io(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut source = BufReader::with_capacity(256 * 1024, file);
    let head = source.fill_buf().map_err(cannot)?;
    if journal::looks_like_journal(head) {
        return journal::walk(source, each);
    }
    if super::stream::looks_like_session(head) {
        let mut state = State {
            each,
            start: None,
            dialogues: 0,
            stopped: false,
            out_of_order: false,
            invalid: None,
        };
        let mut de = serde_json::Deserializer::from_reader(source);
        let result = FileSeed(&mut state).deserialize(&mut de);
        match result {
            Ok(()) => return Ok(Vec::new()),
            Err(_) if state.stopped => return Ok(Vec::new()),
            Err(_) if state.invalid.is_some() => {
                return Err(SessionError::Invalid(state.invalid.unwrap_or_default()));
            }
            Err(e) if !state.out_of_order && (e.is_syntax() || e.is_eof()) => {
                let e = crate::protocol::document::SyntaxError::from(e);
                return Err(SessionError::Syntax {
                    line: e.line,
                    column: e.column,
                    message: e.message,
                });
            }
            Err(e) if !state.out_of_order => {
                return Err(SessionError::Invalid(vec![(
                    "/".into(),
                    format!("{e} (line {}, column {})", e.line(), e.column()),
                )]));
            }
            // Nothing was given yet (the order is known before the first dialogue).
            Err(_) => {}
        }
    }
    // Not this program's key order (or not a session at all): read whole, which says why.
    let session = Session::load(path)?;
    let mut session = session;
    let dialogues = std::mem::take(&mut session.dialogues);
    if each(Item::Start(session)).is_break() {
        return Ok(Vec::new());
    }
    for (i, mut d) in dialogues.into_iter().enumerate() {
        let turns = std::mem::take(&mut d.turns);
        if each(Item::Dialogue(i, d)).is_break() {
            return Ok(Vec::new());
        }
        for turn in turns {
            if each(Item::Turn { dialogue: i, turn }).is_break() {
                return Ok(Vec::new());
            }
        }
    }
    Ok(Vec::new())
}

struct State<'a> {
    each: &'a mut dyn FnMut(Item) -> ControlFlow<()>,
    /// The session so far (name, servers, defaults), until `dialogues` is reached.
    start: Option<Session>,
    dialogues: usize,
    /// `each` said Break: the error that ends the parse is not the file's.
    stopped: bool,
    /// The keys are not in this program's order: nothing was given, the file is read whole.
    out_of_order: bool,
    /// What the session schema finds wrong with the part just read, at its pointers.
    invalid: Option<Vec<(String, String)>>,
}

impl State<'_> {
    /// Checks a part of the file against the session schema: its mistakes end the walk.
    fn check<E: serde::de::Error>(&mut self, part: Part, value: &Value, at: &str) -> Result<(), E> {
        let problems = schema_problems(part, value, at);
        if problems.is_empty() {
            return Ok(());
        }
        self.invalid = Some(problems);
        Err(E::custom("not by the session schema"))
    }

    fn give<E: serde::de::Error>(&mut self, item: Item) -> Result<(), E> {
        if (self.each)(item).is_break() {
            self.stopped = true;
            return Err(E::custom("stopped"));
        }
        Ok(())
    }
}

struct FileSeed<'s, 'a>(&'s mut State<'a>);

impl<'de> DeserializeSeed<'de> for FileSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FileSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let state = self.0;
        // The head is small (names, servers, defaults): kept as values, to be checked against
        // the session schema as the whole file would be, then read.
        let mut head = Map::new();
        let with_no_dialogues = |head: &Map<String, Value>| {
            let mut v = head.clone();
            v.insert("dialogues".into(), Value::Array(Vec::new()));
            Value::Object(v)
        };
        while let Some(key) = map.next_key::<String>()? {
            if key != "dialogues" {
                head.insert(key, map.next_value()?);
                continue;
            }
            if state.start.is_some() {
                return Err(A::Error::custom("duplicate field `dialogues`"));
            }
            if !head.contains_key("servers") {
                state.out_of_order = true;
                return Err(A::Error::custom("dialogues before servers"));
            }
            if head.get("format").and_then(Value::as_str) != Some(FORMAT) {
                // Session::load says what is wrong with the format.
                state.out_of_order = true;
                return Err(A::Error::custom("not this format"));
            }
            state.check(Part::Head, &with_no_dialogues(&head), "")?;
            let field = |name: &str| head.get(name).cloned().unwrap_or(Value::Null);
            let mut session = Session {
                name: serde_json::from_value(field("name")).map_err(A::Error::custom)?,
                notes: serde_json::from_value(field("notes")).map_err(A::Error::custom)?,
                defaults: serde_json::from_value::<Option<CommonDefaults>>(field("defaults"))
                    .map_err(A::Error::custom)?
                    .unwrap_or_default(),
                ..Session::default()
            };
            session.servers = crate::client::spec::parse_servers(&field("servers").to_string())
                .map_err(|e| A::Error::custom(format!("/servers{}: {}", e.at, e.message)))?;
            state.start = Some(session.clone());
            state.give(Item::Start(session))?;
            map.next_value_seed(DialoguesSeed(&mut *state))?;
        }
        if state.start.is_none() {
            state.out_of_order = true;
            return Err(A::Error::custom("no dialogues"));
        }
        // What came after the dialogues is checked too.
        state.check(Part::Head, &with_no_dialogues(&head), "")?;
        Ok(())
    }
}

struct DialoguesSeed<'s, 'a>(&'s mut State<'a>);

impl<'de> DeserializeSeed<'de> for DialoguesSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for DialoguesSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of dialogues")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(DialogueSeed(&mut *self.0))?.is_some() {
            self.0.dialogues += 1;
        }
        Ok(())
    }
}

struct DialogueSeed<'s, 'a>(&'s mut State<'a>);

impl<'de> DeserializeSeed<'de> for DialogueSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DialogueSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a dialogue object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let state = self.0;
        let place = state.dialogues;
        let at = |what: &str| format!("/dialogues/{place}/{what}");
        // The dialogue's fields but its turns, checked against the session schema as in the
        // whole file, then read.
        let mut head = Map::new();
        let with_no_turns = |head: &Map<String, Value>| {
            let mut v = head.clone();
            v.insert("turns".into(), Value::Array(Vec::new()));
            Value::Object(v)
        };
        let mut turns = false;
        while let Some(key) = map.next_key::<String>()? {
            if key != "turns" {
                head.insert(key, map.next_value()?);
                continue;
            }
            if turns {
                return Err(A::Error::custom(format!("{}: given twice", at("turns"))));
            }
            turns = true;
            if !["server", "interface", "dialogId"]
                .iter()
                .all(|k| head.contains_key(*k))
            {
                return Err(A::Error::custom(format!(
                    "{}: server, interface and dialogId come before the turns",
                    at("turns")
                )));
            }
            state.check(
                Part::Dialogue,
                &with_no_turns(&head),
                &format!("/dialogues/{place}"),
            )?;
            let mut record: DialogueRecord = serde_json::from_value(with_no_turns(&head))
                .map_err(|e| A::Error::custom(format!("/dialogues/{place}: {e}")))?;
            record.turns = Vec::new();
            let known = state
                .start
                .as_ref()
                .is_some_and(|s| s.servers.iter().any(|sv| sv.name == record.server));
            if !known {
                return Err(A::Error::custom(format!(
                    "{}: \"{}\" is not one of the servers",
                    at("server"),
                    record.server
                )));
            }
            state.give(Item::Dialogue(place, record))?;
            map.next_value_seed(TurnsSeed(&mut *state, place))?;
        }
        // What came after the turns (or a dialogue without them) is checked too.
        if turns {
            state.check(
                Part::Dialogue,
                &with_no_turns(&head),
                &format!("/dialogues/{place}"),
            )?;
        } else {
            state.check(
                Part::Dialogue,
                &Value::Object(head),
                &format!("/dialogues/{place}"),
            )?;
        }
        Ok(())
    }
}

struct TurnsSeed<'s, 'a>(&'s mut State<'a>, usize);

impl<'de> DeserializeSeed<'de> for TurnsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TurnsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of turns")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (state, dialogue) = (self.0, self.1);
        let mut index = 0;
        loop {
            let Some(raw) = seq.next_element::<Box<serde_json::value::RawValue>>()? else {
                break;
            };
            // Checked against the session schema (its messages aside, which may be any JSON),
            // then read; the text of one turn is all that is held.
            let at = format!("/dialogues/{dialogue}/turns/{index}");
            let outline = skeleton::parse_turn(raw.get())
                .map_err(|e| A::Error::custom(format!("{at}: {e}")))?;
            state.check(Part::Turn, &outline, &at)?;
            drop(outline);
            let mut reader = serde_json::Deserializer::from_str(raw.get());
            let turn: Turn = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
                let pointer = super::pointer_of(e.path());
                A::Error::custom(format!("{at}{pointer}: {}", e.into_inner()))
            })?;
            state.give(Item::Turn { dialogue, turn })?;
            index += 1;
        }
        Ok(())
    }
}
