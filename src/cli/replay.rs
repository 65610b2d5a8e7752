//! `bkn-explorer replay SESSION`: each dialogue's Requests sent again in a fresh dialogue, each
//! reply compared with the recorded one (identifiers and times aside).
//!
//! Exit 0 when nothing differs, 1 when something does, 2 when the session cannot be read or a
//! server cannot be reached.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::connection::ConnectOptions;
use crate::client::event::EventSink;
use crate::client::spec::ServerSpec;
use crate::client::turn::{Subject, Turn};
use crate::session::feed::{self, DialogueTurns, Feed};
use crate::session::replay::{Outcome, RecordedTurns, ReplayedTurn, replay_recorded};
use crate::session::write::Writer;
use crate::session::{DialogueRecord, Session};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session file.
    session: PathBuf,
    /// Replay only this dialogue (0-based).
    #[arg(long, value_name = "N")]
    dialogue: Option<usize>,
    /// Rewrite the session with the new replies (and DialogIDs).
    #[arg(long)]
    update: bool,
    /// Start the commands the session's servers name (a stdio server's command line): a
    /// session file from someone else can name any command, so without this (or a server
    /// named here) replay refuses to start one.
    #[arg(long)]
    trust_servers: bool,
    /// Replay on this server instead of each dialogue's own (--stdio, --url, --server,
    /// --embedded).
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(args: Args) -> u8 {
    let mut replay = match Replay::prepare(&args) {
        Ok(replay) => replay,
        Err(code) => return code,
    };
    // With --update, the new session is written as the replay goes: every dialogue, in order
    // (those not replayed copied as they were); without, the dialogues replayed only.
    let order: Vec<usize> = if args.update {
        (0..replay.session.dialogues.len()).collect()
    } else {
        replay.which.clone()
    };
    for i in order {
        if replay.which.contains(&i) {
            replay.dialogue(i);
        } else {
            replay.copy(i);
        }
    }
    replay.finish()
}

/// Says why replay cannot go on, and gives its exit code.
fn failure(why: impl std::fmt::Display) -> u8 {
    eprintln!("bkn-explorer replay: {why}");
    exit::FAILURE
}

/// A replay under way: the session's outline, where its turns are read again, the session
/// rewritten (--update) and what was found so far.
struct Replay<'a> {
    args: &'a Args,
    session: Session,
    /// Each dialogue's count of turns.
    counts: Vec<usize>,
    /// The dialogues replayed.
    which: Vec<usize>,
    /// The server named on the command line, instead of each dialogue's own.
    server: Option<ServerSpec>,
    options: ConnectOptions,
    runtime: tokio::runtime::Runtime,
    feed: Feed,
    update: Option<Update>,
    turns: usize,
    differing: usize,
    /// Dialogues that go on another from a new connection: not replayed (said why).
    set_aside: usize,
    code: u8,
}

impl<'a> Replay<'a> {
    /// The session's outline read, the server and dialogues chosen, the commands it would
    /// start consented to, and the new session begun (--update); or the exit code of why not.
    fn prepare(args: &'a Args) -> Result<Replay<'a>, u8> {
        // The session is never held: its outline first (headers and turn counts; every
        // record is read and checked against the session schema), then the turns as they
        // are replayed.
        let feed::Outline {
            session,
            turns: counts,
        } = feed::outline(&args.session)
            .map_err(|e| failure(format!("{}: {e}", args.session.display())))?;
        let server = named_server(&args.server)?;
        let mut options = args.server.connect_options(EventSink::none());
        // One dialogue at a time, one turn at a time, on this current-thread runtime.
        options.share_cpu = true;
        let chosen = chosen_dialogues(args.dialogue, session.dialogues.len())?;
        let (which, set_aside) = set_aside_continuations(&session, chosen);
        if server.is_none() && !args.trust_servers {
            refuse_commands(&args.session, &session.commands_of(&which))?;
        }
        let runtime = target::runtime().map_err(failure)?;
        // While the server starts, the checks the turns need are compiled.
        crate::protocol::schema::warm_up_each_in_background(
            which.iter().map(|&i| session.dialogues[i].interface),
        );
        // Without --update, the turns are read for the dialogues replayed only.
        let all: Vec<usize> = (0..session.dialogues.len()).collect();
        let feed = Feed::start(
            args.session.clone(),
            if args.update { &all } else { &which },
            &counts,
        );
        let update = if args.update {
            Some(Update::start(&args.session, &session)?)
        } else {
            None
        };
        Ok(Replay {
            args,
            session,
            counts,
            which,
            server,
            options,
            runtime,
            feed,
            update,
            turns: 0,
            differing: 0,
            set_aside,
            code: exit::OK,
        })
    }

    /// A dialogue not replayed, copied into the updated session as it was.
    fn copy(&mut self, i: usize) {
        let Some(update) = self.update.as_mut() else {
            return;
        };
        let mut recorded = self.feed.dialogue(i, self.counts[i]);
        let copied = copy_dialogue(
            &mut update.writer,
            &self.session.dialogues[i],
            &mut recorded,
            &self.runtime,
        );
        update.keep(copied);
        if recorded.left() > 0 {
            self.code = exit::FAILURE;
        }
    }

    /// Dialogue `i` replayed: each turn printed as it comes back (and written, with
    /// --update), then what ended it.
    fn dialogue(&mut self, i: usize) {
        let record = &self.session.dialogues[i];
        let title = record
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        println!(
            "dialogue {i}{title} on {}:",
            self.server
                .as_ref()
                .map(|s| s.name.as_str())
                .unwrap_or(&record.server)
        );
        let mut tally = Tally::default();
        let update = &mut self.update;
        let cancel = CancellationToken::new();
        let mut streamed = self.feed.dialogue(i, self.counts[i]);
        let result = self.runtime.block_on(replay_recorded(
            &self.session,
            record,
            &mut streamed,
            self.server.as_ref(),
            &self.options,
            &cancel,
            |recorded: &Turn, t: ReplayedTurn| tally.turn(update.as_mut(), record, recorded, t),
        ));
        let short = streamed.left();
        match result {
            Err(e) => {
                eprintln!("bkn-explorer replay: dialogue {i}: {e}");
                self.code = exit::FAILURE;
            }
            Ok(outcome) => self.ended(i, outcome, tally, short),
        }
    }

    /// What ended dialogue `i`'s replay, counted into the whole's: its generation note, why
    /// it stopped or how many turns could not be read again; with --update, the dialogue's
    /// head when no turn wrote it.
    fn ended(&mut self, i: usize, outcome: Outcome, tally: Tally, short: usize) {
        if let Some(note) = &outcome.generation_note {
            eprintln!("bkn-explorer replay: dialogue {i}: {note}");
        }
        self.turns += tally.replayed;
        self.differing += tally.differs;
        if tally.nonconformant {
            self.code = self.code.max(exit::NONCONFORMANT);
        }
        if let Some(why) = &outcome.stopped {
            println!("  stopped: {why}");
        } else if short > 0 {
            // The file ended (or changed) between the first reading and this one.
            eprintln!(
                "bkn-explorer replay: dialogue {i}: {short} of its {} turns could not \
                 be read again from {}",
                self.counts[i],
                self.args.session.display()
            );
            self.code = exit::FAILURE;
        }
        if outcome.stopped.is_some() || tally.differs > 0 {
            self.code = self.code.max(exit::NONCONFORMANT);
        }
        if let Some(update) = self.update.as_mut()
            && !tally.head_written
        {
            let written = update.writer.dialogue(&DialogueRecord {
                dialog_id: outcome.dialog_id,
                // The replies written are of the generation the replay spoke.
                protocol_version: Some(outcome.protocol_version),
                ..self.session.dialogues[i].clone()
            });
            update.keep(written);
        }
    }

    /// The count of turns replayed, and the updated session saved; the exit code.
    fn finish(self) -> u8 {
        let mut code = self.code;
        if let Err(e) = self.feed.finish() {
            eprintln!("bkn-explorer replay: {}: {e}", self.args.session.display());
            code = exit::FAILURE;
        }
        let turns = self.turns;
        let aside = match self.set_aside {
            0 => String::new(),
            1 => " (1 dialogue not replayable as recorded, set aside)".to_owned(),
            n => format!(" ({n} dialogues not replayable as recorded, set aside)"),
        };
        println!(
            "replayed {turns} turn{}: {}{aside}",
            if turns == 1 { "" } else { "s" },
            if self.differing == 0 {
                "no differences".to_owned()
            } else {
                format!("{} differ", self.differing)
            }
        );
        if let Some(update) = self.update {
            // Nothing is replaced unless every dialogue was read and written whole.
            if code == exit::FAILURE {
                return code;
            }
            if let Err(e) = update.save() {
                return failure(format!("cannot save {}: {e}", self.args.session.display()));
            }
            println!("updated {}", self.args.session.display());
        }
        code
    }
}

/// The chosen dialogues that can be replayed, and how many were set aside: a dialogue whose
/// DialogID an earlier dialogue of the session has goes on that one from a new connection
/// (certify's "from a new connection" dialogues save it so). A replay opens each dialogue
/// afresh, under a DialogID of its own, so its later TurnIndex would be refused: that is no
/// difference of the server's, and it is said, not counted.
fn set_aside_continuations(session: &Session, chosen: Vec<usize>) -> (Vec<usize>, usize) {
    let mut set_aside = 0;
    let which = chosen
        .into_iter()
        .filter(|&i| {
            let d = &session.dialogues[i];
            let Some(j) = session.dialogues[..i]
                .iter()
                .position(|e| !d.dialog_id.is_empty() && e.dialog_id == d.dialog_id)
            else {
                return true;
            };
            set_aside += 1;
            println!(
                "dialogue {i}{}: not replayed: it goes on dialogue {j} (the same DialogID {}) \
                 from a new connection, which a replay in fresh dialogues cannot do as recorded",
                d.name
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                d.dialog_id
            );
            false
        })
        .collect();
    (which, set_aside)
}

/// The server named on the command line to replay on, if one is.
fn named_server(server: &ServerArgs) -> Result<Option<ServerSpec>, u8> {
    let named = server.stdio.is_some()
        || server.url.is_some()
        || server.server.is_some()
        || server.embedded.is_some();
    if !named {
        return Ok(None);
    }
    server.resolve(None).map(Some).map_err(failure)
}

/// The dialogues to replay: the one asked for (`--dialogue N`), or all.
fn chosen_dialogues(asked: Option<usize>, count: usize) -> Result<Vec<usize>, u8> {
    match asked {
        Some(n) if n < count => Ok(vec![n]),
        Some(n) => Err(failure(format!(
            "the session has {count} dialogues; there is no {n}"
        ))),
        None => Ok((0..count).collect()),
    }
}

/// A session file never starts a command without consent: the commands it would start are
/// listed, and refused.
fn refuse_commands(session: &std::path::Path, commands: &[(String, String)]) -> Result<(), u8> {
    if commands.is_empty() {
        return Ok(());
    }
    eprintln!(
        "bkn-explorer replay: {} names {} to start on this machine:",
        session.display(),
        if commands.len() == 1 {
            "a command"
        } else {
            "commands"
        }
    );
    for (name, command) in commands {
        eprintln!("  {name}: {command}");
    }
    eprintln!(
        "A session file never starts a command without consent: if you trust it, say \
         --trust-servers; or name the server to replay on (--stdio, --url, --server, \
         --embedded)."
    );
    Err(exit::FAILURE)
}

/// The session rewritten with the new replies (and DialogIDs), to a file beside it that
/// replaces it once whole.
struct Update {
    writer: Writer<crate::atomic::Replacement>,
    /// The first write that failed: nothing is replaced then.
    unwritten: Option<std::io::Error>,
}

impl Update {
    fn start(path: &std::path::Path, session: &Session) -> Result<Update, u8> {
        crate::atomic::Replacement::create(path)
            .and_then(|file| Writer::start(file, session))
            .map(|writer| Update {
                writer,
                unwritten: None,
            })
            .map_err(|e| failure(format!("cannot write {}: {e}", path.display())))
    }

    fn keep(&mut self, written: std::io::Result<()>) {
        if let Err(e) = written {
            self.unwritten.get_or_insert(e);
        }
    }

    fn save(self) -> std::io::Result<()> {
        self.unwritten
            .map_or(Ok(()), Err)
            .and_then(|()| self.writer.finish())
            .and_then(crate::atomic::Replacement::commit)
    }
}

/// A dialogue's head and recorded turns written as they were (until a write fails).
fn copy_dialogue(
    writer: &mut Writer<crate::atomic::Replacement>,
    record: &DialogueRecord,
    recorded: &mut DialogueTurns<'_>,
    runtime: &tokio::runtime::Runtime,
) -> std::io::Result<()> {
    writer.dialogue(record)?;
    while let Some(t) = runtime.block_on(recorded.next()) {
        writer.turn(&t)?;
    }
    Ok(())
}

/// One dialogue's replayed turns as they come back: counted, printed and dropped; only
/// --update keeps them, each written to the new session (after its dialogue's head, written
/// with the first).
#[derive(Default)]
struct Tally {
    replayed: usize,
    differs: usize,
    /// A reply broke the data type's rules.
    nonconformant: bool,
    head_written: bool,
}

impl Tally {
    fn turn(
        &mut self,
        update: Option<&mut Update>,
        record: &DialogueRecord,
        recorded: &Turn,
        t: ReplayedTurn,
    ) {
        self.replayed += 1;
        if !t.differences.is_empty() {
            self.differs += 1;
        }
        self.nonconformant |= t
            .replayed
            .findings
            .iter()
            .any(|f| f.on == Subject::Response);
        show(recorded, &t);
        if let Some(update) = update {
            let head = if self.head_written {
                Ok(())
            } else {
                self.head_written = true;
                update.writer.dialogue(&DialogueRecord {
                    dialog_id: t.dialog_id.clone(),
                    // The replies written are of the generation the replay spoke.
                    protocol_version: Some(t.protocol_version.clone()),
                    ..record.clone()
                })
            };
            let written = head.and_then(|()| update.writer.turn(&t.replayed));
            update.keep(written);
        }
    }
}

/// A turn's line and its differences and findings, as it comes back.
fn show(recorded: &Turn, t: &ReplayedTurn) {
    let label = format!(
        "  turn {} ({}, TurnIndex {})",
        t.index,
        recorded.kind(),
        recorded
            .turn_index()
            .map(|n| n.to_string())
            .unwrap_or("-".into())
    );
    if t.differences.is_empty() {
        println!("{label}: same");
    } else {
        println!(
            "{label}: {} difference{}",
            t.differences.len(),
            if t.differences.len() == 1 { "" } else { "s" }
        );
        for d in &t.differences {
            println!("      {d}");
        }
    }
    // The replayed turn's own verdict, as send and dialogue give it.
    for f in &t.replayed.findings {
        let on = match f.on {
            Subject::Request => "request",
            Subject::Response => "response",
        };
        println!("      {on}: {}", f.finding);
    }
}
