//! `bkn-explorer replay SESSION`: each dialogue's Requests sent again in a fresh dialogue, each
//! reply compared with the recorded one (identifiers and times aside).
//!
//! Exit 0 when nothing differs, 1 when something does, 2 when the session cannot be read or a
//! server cannot be reached.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::event::EventSink;
use crate::client::turn::{Subject, Turn};
use crate::session::DialogueRecord;
use crate::session::feed::{self, Feed};
use crate::session::replay::{RecordedTurns, ReplayedTurn, replay_recorded};
use crate::session::write::Writer;
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
    // The session is never held: its outline first (headers and turn counts; every record is
    // read and checked against the session schema), then the turns as they are replayed.
    let (session, counts) = match feed::outline(&args.session) {
        Ok(o) => (o.session, o.turns),
        Err(e) => {
            eprintln!("bkn-explorer replay: {}: {e}", args.session.display());
            return exit::FAILURE;
        }
    };
    let named = args.server.stdio.is_some()
        || args.server.url.is_some()
        || args.server.server.is_some()
        || args.server.embedded.is_some();
    let server = if named {
        match args.server.resolve(None) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("bkn-explorer replay: {e}");
                return exit::FAILURE;
            }
        }
    } else {
        None
    };
    let mut options = args.server.connect_options(EventSink::none());
    // One dialogue at a time, one turn at a time, on this current-thread runtime.
    options.share_cpu = true;
    let which: Vec<usize> = match args.dialogue {
        Some(n) if n < session.dialogues.len() => vec![n],
        Some(n) => {
            eprintln!(
                "bkn-explorer replay: the session has {} dialogues; there is no {n}",
                session.dialogues.len()
            );
            return exit::FAILURE;
        }
        None => (0..session.dialogues.len()).collect(),
    };
    if server.is_none() && !args.trust_servers {
        let commands = session.commands_of(&which);
        if !commands.is_empty() {
            eprintln!(
                "bkn-explorer replay: {} names {} to start on this machine:",
                args.session.display(),
                if commands.len() == 1 {
                    "a command"
                } else {
                    "commands"
                }
            );
            for (name, command) in &commands {
                eprintln!("  {name}: {command}");
            }
            eprintln!(
                "A session file never starts a command without consent: if you trust it, say \
                 --trust-servers; or name the server to replay on (--stdio, --url, --server, \
                 --embedded)."
            );
            return exit::FAILURE;
        }
    }
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bkn-explorer replay: {e}");
            return exit::FAILURE;
        }
    };
    // While the server starts, the checks the turns need are compiled.
    crate::protocol::schema::warm_up_each_in_background(
        which.iter().map(|&i| session.dialogues[i].interface),
    );
    let (mut differing, mut turns, mut code) = (0usize, 0usize, exit::OK);
    // With --update, the new session is written as the replay goes (every dialogue, in order:
    // those not replayed as they were), to a file beside the session that replaces it once
    // whole; without, the turns are read for the dialogues replayed only.
    let all: Vec<usize> = (0..session.dialogues.len()).collect();
    let mut feed = Feed::start(
        args.session.clone(),
        if args.update { &all } else { &which },
        &counts,
    );
    let mut update = if args.update {
        match crate::atomic::Replacement::create(&args.session)
            .and_then(|file| Writer::start(file, &session))
        {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!(
                    "bkn-explorer replay: cannot write {}: {e}",
                    args.session.display()
                );
                return exit::FAILURE;
            }
        }
    } else {
        None
    };
    let mut unwritten: Option<std::io::Error> = None;
    for i in if args.update {
        all.clone()
    } else {
        which.clone()
    } {
        let record = &session.dialogues[i];
        if !which.contains(&i) {
            // Not replayed: copied into the updated session as it was.
            if let Some(w) = update.as_mut() {
                let mut recorded = feed.dialogue(i, counts[i]);
                let copied = (|| {
                    w.dialogue(record)?;
                    while let Some(t) = runtime.block_on(recorded.next()) {
                        w.turn(&t)?;
                    }
                    std::io::Result::Ok(())
                })();
                if let Err(e) = copied {
                    unwritten.get_or_insert(e);
                }
                if recorded.left() > 0 {
                    code = exit::FAILURE;
                }
            }
            continue;
        }
        let title = record
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        println!(
            "dialogue {i}{title} on {}:",
            server
                .as_ref()
                .map(|s| s.name.as_str())
                .unwrap_or(&record.server)
        );
        // Only --update keeps the replayed turns: each is written to the new session as it
        // comes back (after its dialogue's head, written with the first); otherwise each is
        // printed, counted and dropped.
        let mut head_written = false;
        let (mut replayed, mut differs, mut nonconformant) = (0usize, 0usize, false);
        let mut print = |recorded: &Turn, t: ReplayedTurn| {
            replayed += 1;
            if !t.differences.is_empty() {
                differs += 1;
            }
            nonconformant |= t
                .replayed
                .findings
                .iter()
                .any(|f| f.on == Subject::Response);
            show(recorded, &t);
            if let Some(w) = update.as_mut() {
                let written = (|| {
                    if !head_written {
                        head_written = true;
                        w.dialogue(&DialogueRecord {
                            dialog_id: t.dialog_id.clone(),
                            ..record.clone()
                        })?;
                    }
                    w.turn(&t.replayed)
                })();
                if let Err(e) = written {
                    unwritten.get_or_insert(e);
                }
            }
        };
        let cancel = CancellationToken::new();
        let mut streamed = feed.dialogue(i, counts[i]);
        let result = runtime.block_on(replay_recorded(
            &session,
            record,
            &mut streamed,
            server.as_ref(),
            &options,
            &cancel,
            &mut print,
        ));
        let short = streamed.left();
        match result {
            Err(e) => {
                eprintln!("bkn-explorer replay: dialogue {i}: {e}");
                code = exit::FAILURE;
            }
            Ok(outcome) => {
                if let Some(note) = &outcome.generation_note {
                    eprintln!("bkn-explorer replay: dialogue {i}: {note}");
                }
                turns += replayed;
                differing += differs;
                if nonconformant {
                    code = code.max(exit::NONCONFORMANT);
                }
                if let Some(why) = &outcome.stopped {
                    println!("  stopped: {why}");
                } else if short > 0 {
                    // The file ended (or changed) between the first reading and this one.
                    eprintln!(
                        "bkn-explorer replay: dialogue {i}: {short} of its {} turns could not \
                         be read again from {}",
                        counts[i],
                        args.session.display()
                    );
                    code = exit::FAILURE;
                }
                if outcome.stopped.is_some() || differs > 0 {
                    code = code.max(exit::NONCONFORMANT);
                }
                if let Some(w) = update.as_mut()
                    && !head_written
                    && let Err(e) = w.dialogue(&DialogueRecord {
                        dialog_id: outcome.dialog_id,
                        ..record.clone()
                    })
                {
                    unwritten.get_or_insert(e);
                }
            }
        }
    }
    if let Err(e) = feed.finish() {
        eprintln!("bkn-explorer replay: {}: {e}", args.session.display());
        code = exit::FAILURE;
    }
    println!(
        "replayed {turns} turn{}: {}",
        if turns == 1 { "" } else { "s" },
        if differing == 0 {
            "no differences".to_owned()
        } else {
            format!("{differing} differ")
        }
    );
    if let Some(w) = update {
        // Nothing is replaced unless every dialogue was read and written whole.
        if code == exit::FAILURE {
            return code;
        }
        if let Err(e) = unwritten
            .map_or(Ok(()), Err)
            .and_then(|()| w.finish())
            .and_then(crate::atomic::Replacement::commit)
        {
            eprintln!(
                "bkn-explorer replay: cannot save {}: {e}",
                args.session.display()
            );
            return exit::FAILURE;
        }
        println!("updated {}", args.session.display());
    }
    code
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
