//! Replay: each recorded Request sent again, in order, in a fresh dialogue (new QueryIDs,
//! times and DialogID; the same content, TurnIndex included), and each new reply compared with
//! the recorded one.

use crate::client::connection::ConnectOptions;
use crate::client::defaults::{Chosen, Origin, Overrides};
use crate::client::dialogue::{Dialogue, Filling};
use crate::client::spec::ServerSpec;
use crate::client::turn::{ErrorKind, Reply, Turn};
use crate::protocol::message::CommonDefaults;
use crate::session::diff::{self, Difference};
use crate::session::{DialogueRecord, Session};
use tokio_util::sync::CancellationToken;

/// One recorded turn and its replay.
#[derive(Clone, Debug)]
pub struct ReplayedTurn {
    pub index: usize,
    /// The DialogID of the replayed dialogue (its first session's, as `Outcome` gives it).
    pub dialog_id: String,
    /// The MCP version the replay speaks (as `Outcome` gives it).
    pub protocol_version: String,
    pub replayed: Turn,
    pub differences: Vec<Difference>,
}

/// A dialogue replayed: its new DialogID and turns, or why it could not be.
#[derive(Clone, Debug)]
pub struct ReplayedDialogue {
    pub dialog_id: String,
    pub turns: Vec<ReplayedTurn>,
    /// Set when the connection was lost and the rest of the Requests were not sent.
    pub stopped: Option<String>,
    /// The replay speaks another MCP generation than the recording did, and why.
    pub generation_note: Option<String>,
}

impl ReplayedDialogue {
    pub fn differs(&self) -> bool {
        self.stopped.is_some() || self.turns.iter().any(|t| !t.differences.is_empty())
    }

    /// The dialogue as replayed, to replace the recorded one (`--update`).
    pub fn record(&self, recorded: &DialogueRecord) -> DialogueRecord {
        DialogueRecord {
            dialog_id: self.dialog_id.clone(),
            turns: self.turns.iter().map(|t| t.replayed.clone()).collect(),
            ..recorded.clone()
        }
    }
}

/// A TurnIndex that differs by exactly the renumbering of a replayed reconnect.
fn is_renumbering(d: &diff::Difference, by: u64) -> bool {
    let number = |v: &Option<serde_json::Value>| v.as_ref().and_then(serde_json::Value::as_u64);
    d.pointer == "/TurnIndex"
        && matches!((number(&d.recorded), number(&d.replayed)), (Some(r), Some(n)) if r == n + by)
}

/// Where a replay takes a dialogue's recorded turns from, one at a time: a session in memory
/// (the explorer's), or a file read as it goes (`session::feed`, the `replay` command's), so
/// that a replay holds one recorded turn, not the session.
pub trait RecordedTurns {
    /// The next recorded turn; `None` when the dialogue has no more.
    fn next(&mut self) -> impl std::future::Future<Output = Option<Turn>> + Send;
}

/// The turns of a dialogue held in memory.
pub struct Held<'a>(pub std::slice::Iter<'a, Turn>);

impl RecordedTurns for Held<'_> {
    async fn next(&mut self) -> Option<Turn> {
        self.0.next().cloned()
    }
}

/// How a replay ended: its new DialogID, and why it stopped early, if it did. (The turns went
/// to the caller one by one.)
#[derive(Clone, Debug)]
pub struct Outcome {
    pub dialog_id: String,
    pub stopped: Option<String>,
    /// The replay speaks another MCP generation than the recording did, and why.
    pub generation_note: Option<String>,
    /// The MCP version the replay's connection negotiated.
    pub protocol_version: String,
}

/// Replays one dialogue of a session on `server` (the recorded one when `None`), calling
/// `each` as every turn comes back.
pub async fn replay_dialogue(
    session: &Session,
    index: usize,
    server: Option<&ServerSpec>,
    options: &ConnectOptions,
    cancel: &CancellationToken,
    mut each: impl FnMut(&ReplayedTurn),
) -> Result<ReplayedDialogue, String> {
    let record = session
        .dialogues
        .get(index)
        .ok_or_else(|| format!("the session has no dialogue {index}"))?;
    let mut turns = Vec::new();
    let outcome = replay_recorded(
        session,
        record,
        &mut Held(record.turns.iter()),
        server,
        options,
        cancel,
        |_, done| {
            each(&done);
            turns.push(done);
        },
    )
    .await?;
    Ok(ReplayedDialogue {
        dialog_id: outcome.dialog_id,
        turns,
        stopped: outcome.stopped,
        generation_note: outcome.generation_note,
    })
}

/// Replays the dialogue `record` of `session` (whose servers and defaults it uses; `record`'s
/// own turns are not read: they come from `recorded`), giving `each` every recorded turn with
/// its replay, which it may keep or drop.
pub async fn replay_recorded(
    session: &Session,
    record: &DialogueRecord,
    recorded_turns: &mut impl RecordedTurns,
    server: Option<&ServerSpec>,
    options: &ConnectOptions,
    cancel: &CancellationToken,
    mut each: impl FnMut(&Turn, ReplayedTurn),
) -> Result<Outcome, String> {
    let reach = Reach {
        spec: replayed_on(session, record, server)?,
        options,
        record,
        base: recorded_defaults(session, record),
        overrides: Overrides::default(),
    };
    let mut dialogue = reach.connect().await?;
    let mut replayed = Outcome::began(&dialogue);
    // Over 2026-07-28 a new dialogue starts at TurnIndex 0 (a server refuses a later turn of
    // a DialogID it does not hold): the turns after a recorded reconnect are sent renumbered
    // from 0 in a fresh dialogue, which is what the recorded reconnect did to the server's
    // state, and compared with their recorded TurnIndex.
    let mut renumbered_by: u64 = 0;
    // One recorded turn ahead: a lost connection ends the replay unless the next turn went on
    // in a new session.
    let mut next = recorded_turns.next().await;
    let mut i = 0;
    while let Some(recorded) = next.take() {
        let recorded = &recorded;
        if cancel.is_cancelled() {
            replayed.stopped = Some("cancelled".into());
            break;
        }
        // The recorded dialogue went on in a new MCP session here (a reconnect): so does the
        // replay, at the same TurnIndex.
        if recorded.new_session && i > 0 {
            match reach.reconnect(&mut dialogue, recorded).await {
                Ok(by) => renumbered_by = by,
                Err(e) => {
                    replayed.stopped =
                        Some(format!("cannot open the new session of turn {i}: {e}"));
                    break;
                }
            }
        }
        let mut turn = send_as_recorded(&mut dialogue, recorded, renumbered_by, cancel).await;
        turn.new_session = recorded.new_session && i > 0;
        let mut differences = diff::compare(recorded, &turn);
        if renumbered_by > 0 {
            differences.retain(|d| !is_renumbering(d, renumbered_by));
        }
        let lost = connection_lost(&turn);
        let done = ReplayedTurn {
            index: i,
            dialog_id: replayed.dialog_id.clone(),
            protocol_version: replayed.protocol_version.clone(),
            replayed: turn,
            differences,
        };
        each(recorded, done);
        next = recorded_turns.next().await;
        i += 1;
        // A lost connection ends the replay, unless the recording went on in a new session.
        let goes_on = next.as_ref().is_some_and(|t| t.new_session);
        if let Some(why) = lost
            && !goes_on
        {
            replayed.stopped = Some(why);
            break;
        }
    }
    dialogue.close().await;
    Ok(replayed)
}

/// The server a dialogue is replayed on: the one given, else the one it was recorded with.
fn replayed_on(
    session: &Session,
    record: &DialogueRecord,
    server: Option<&ServerSpec>,
) -> Result<ServerSpec, String> {
    match server {
        Some(s) => Ok(s.clone()),
        None => session
            .server_of(record)
            .cloned()
            .ok_or_else(|| format!("the session has no server {}", record.server)),
    }
}

impl Outcome {
    /// A replay's outcome as its dialogue opens: not stopped (yet).
    fn began(dialogue: &Dialogue) -> Outcome {
        Outcome {
            dialog_id: dialogue.dialog_id().to_owned(),
            stopped: None,
            generation_note: dialogue.connection.summary.generation_note.clone(),
            protocol_version: dialogue.connection.summary.protocol_version.clone(),
        }
    }
}

/// The common fields the dialogue was recorded with: its own, or the session's (the
/// built-in ones when it has none).
fn recorded_defaults(session: &Session, record: &DialogueRecord) -> Chosen {
    let recorded = record.defaults.as_ref().unwrap_or(&session.defaults);
    if *recorded == CommonDefaults::default() {
        Chosen::built_in()
    } else {
        Chosen::from_base(recorded.clone(), Origin::Session)
    }
}

/// How a replay reaches its server, as often as the recording reconnected.
struct Reach<'a> {
    spec: ServerSpec,
    options: &'a ConnectOptions,
    record: &'a DialogueRecord,
    base: Chosen,
    overrides: Overrides,
}

impl Reach<'_> {
    /// A new dialogue, in the MCP generation it was recorded in, where the server still
    /// speaks it.
    async fn connect(&self) -> Result<Dialogue, String> {
        Dialogue::connect_as_before(
            &self.spec,
            self.options,
            self.record.interface,
            self.base.clone(),
            &self.overrides,
            self.record.protocol_version.as_deref(),
        )
        .await
    }

    /// The dialogue replaced by a new one where the recording reconnected before `recorded`,
    /// at its TurnIndex: how far the turns from here on are renumbered (a new 2026-07-28
    /// dialogue starts at 0), or why no new one could be opened.
    async fn reconnect(&self, dialogue: &mut Dialogue, recorded: &Turn) -> Result<u64, String> {
        let old = std::mem::replace(dialogue, self.connect().await?);
        old.close().await;
        let stateless =
            dialogue.connection.state_home() == crate::client::generation::StateHome::DialogId;
        let Some(t) = recorded
            .request_value()
            .get("TurnIndex")
            .and_then(serde_json::Value::as_u64)
        else {
            return Ok(0);
        };
        if stateless {
            Ok(t)
        } else {
            dialogue.start_at(t);
            Ok(0)
        }
    }
}

/// The recorded Request sent again (renumbered after a 2026-07-28 reconnect), what the server
/// asked at this turn when it was recorded answered the same way.
async fn send_as_recorded(
    dialogue: &mut Dialogue,
    recorded: &Turn,
    renumbered_by: u64,
    cancel: &CancellationToken,
) -> Turn {
    let mut request = recorded.request_value();
    if renumbered_by > 0
        && let Some(t) = request.get("TurnIndex").and_then(serde_json::Value::as_u64)
    {
        request["TurnIndex"] = t.saturating_sub(renumbered_by).into();
    }
    let request = dialogue.prepare(request, Filling::Fresh);
    dialogue.connection.answer_turn_as_recorded(&recorded.asked);
    dialogue.send(request, cancel).await
}

/// Why the turn's connection is gone (or the turn was cancelled), if it is.
fn connection_lost(turn: &Turn) -> Option<String> {
    match &turn.reply {
        Reply::Error(e)
            if matches!(
                e.kind,
                ErrorKind::Gone | ErrorKind::Transport | ErrorKind::Cancelled
            ) =>
        {
            Some(e.message.clone())
        }
        _ => None,
    }
}
