//! Reading a session file or a journal item by item, with its turns typed, without holding
//! the session: what `serve --from-session` and `test --from-session` read a file of any size
//! with. (`stream.rs` is `validate`'s: messages as values, no times or findings.) Memory is
//! one turn plus what the caller keeps.
//!
//! A session file is read in the order this program writes its keys (`servers` before
//! `dialogues`; a dialogue's `server`, `interface` and `dialogId` before its `turns`); a file
//! whose keys were reordered by hand is loaded whole instead, as `Session::load` reads it.

use super::journal;
use super::{DialogueRecord, FORMAT, Session, SessionError};
use crate::client::turn::Turn;
use crate::protocol::Interface;
use crate::protocol::message::CommonDefaults;
use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
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
            format: None,
            start: None,
            dialogues: 0,
            stopped: false,
            out_of_order: false,
        };
        let mut de = serde_json::Deserializer::from_reader(source);
        let result = FileSeed(&mut state).deserialize(&mut de);
        match result {
            Ok(()) => return Ok(Vec::new()),
            Err(_) if state.stopped => return Ok(Vec::new()),
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
    format: Option<String>,
    /// The session so far (name, servers, defaults), until `dialogues` is reached.
    start: Option<Session>,
    dialogues: usize,
    /// `each` said Break: the error that ends the parse is not the file's.
    stopped: bool,
    /// The keys are not in this program's order: nothing was given, the file is read whole.
    out_of_order: bool,
}

impl State<'_> {
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
        let mut session = Session::default();
        let mut servers: Option<Map<String, Value>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => state.format = Some(map.next_value()?),
                "name" => session.name = map.next_value()?,
                "notes" => session.notes = map.next_value()?,
                "servers" => servers = Some(map.next_value()?),
                "defaults" => {
                    session.defaults = map
                        .next_value::<Option<CommonDefaults>>()?
                        .unwrap_or_default()
                }
                "dialogues" => {
                    let Some(servers) = servers.take() else {
                        state.out_of_order = true;
                        return Err(A::Error::custom("dialogues before servers"));
                    };
                    match state.format.as_deref() {
                        Some(FORMAT) => {}
                        _ => {
                            // Session::load says what is wrong with the format.
                            state.out_of_order = true;
                            return Err(A::Error::custom("not this format"));
                        }
                    }
                    session.servers =
                        crate::client::spec::parse_servers(&Value::Object(servers).to_string())
                            .map_err(|e| {
                                A::Error::custom(format!("/servers{}: {}", e.at, e.message))
                            })?;
                    state.start = Some(session.clone());
                    state.give(Item::Start(std::mem::take(&mut session)))?;
                    map.next_value_seed(DialoguesSeed(&mut *state))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if state.start.is_none() {
            state.out_of_order = true;
            return Err(A::Error::custom("no dialogues"));
        }
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
        let (mut name, mut server, mut interface, mut dialog_id) = (None, None, None, None);
        let (mut notes, mut defaults, mut protocol_version) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => name = map.next_value()?,
                "server" => server = Some(map.next_value::<String>()?),
                "interface" => interface = Some(map.next_value::<Interface>()?),
                "dialogId" => dialog_id = Some(map.next_value::<String>()?),
                "notes" => notes = map.next_value()?,
                "defaults" => defaults = map.next_value()?,
                "protocolVersion" => protocol_version = map.next_value()?,
                "turns" => {
                    let (Some(server), Some(interface), Some(dialog_id)) =
                        (server.take(), interface, dialog_id.take())
                    else {
                        return Err(A::Error::custom(format!(
                            "{}: server, interface and dialogId come before the turns",
                            at("turns")
                        )));
                    };
                    let known = state
                        .start
                        .as_ref()
                        .is_some_and(|s| s.servers.iter().any(|sv| sv.name == server));
                    if !known {
                        return Err(A::Error::custom(format!(
                            "{}: \"{server}\" is not one of the servers",
                            at("server")
                        )));
                    }
                    let record = DialogueRecord {
                        name: name.take(),
                        server,
                        interface,
                        dialog_id,
                        notes: notes.take(),
                        defaults: defaults.take(),
                        protocol_version: protocol_version.take(),
                        turns: Vec::new(),
                    };
                    state.give(Item::Dialogue(place, record))?;
                    map.next_value_seed(TurnsSeed(&mut *state, place))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
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
            let turn = seq.next_element::<Turn>().map_err(|e| {
                A::Error::custom(format!("/dialogues/{dialogue}/turns/{index}: {e}"))
            })?;
            let Some(turn) = turn else { break };
            state.give(Item::Turn { dialogue, turn })?;
            index += 1;
        }
        Ok(())
    }
}
