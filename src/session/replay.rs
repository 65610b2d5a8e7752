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
    let spec = match server {
        Some(s) => s.clone(),
        None => session
            .server_of(record)
            .cloned()
            .ok_or_else(|| format!("the session has no server {}", record.server))?,
    };
    let recorded = record.defaults.as_ref().unwrap_or(&session.defaults);
    let base = if *recorded == CommonDefaults::default() {
        Chosen::built_in()
    } else {
        Chosen::from_base(recorded.clone(), Origin::Session)
    };
    let mut dialogue = Dialogue::connect(
        &spec,
        options,
        record.interface,
        base,
        &Overrides::default(),
    )
    .await?;
    let mut replayed = ReplayedDialogue {
        dialog_id: dialogue.dialog_id().to_owned(),
        turns: Vec::new(),
        stopped: None,
    };
    for (i, recorded) in record.turns.iter().enumerate() {
        if cancel.is_cancelled() {
            replayed.stopped = Some("cancelled".into());
            break;
        }
        let request = dialogue.prepare(recorded.request_value(), Filling::Fresh);
        let turn = dialogue.send(request, cancel).await;
        let differences = diff::compare(recorded, &turn);
        let lost = match &turn.reply {
            Reply::Error(e)
                if matches!(
                    e.kind,
                    ErrorKind::Gone | ErrorKind::Transport | ErrorKind::Cancelled
                ) =>
            {
                Some(e.message.clone())
            }
            _ => None,
        };
        let done = ReplayedTurn {
            index: i,
            replayed: turn,
            differences,
        };
        each(&done);
        replayed.turns.push(done);
        if let Some(why) = lost {
            replayed.stopped = Some(why);
            break;
        }
    }
    dialogue.close().await;
    Ok(replayed)
}
