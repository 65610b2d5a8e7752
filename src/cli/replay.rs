//! `bkn-explorer replay SESSION`: each dialogue's Requests sent again in a fresh dialogue, each
//! reply compared with the recorded one (identifiers and times aside).
//!
//! Exit 0 when nothing differs, 1 when something does, 2 when the session cannot be read or a
//! server cannot be reached.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::event::EventSink;
use crate::session::Session;
use crate::session::replay::replay_dialogue;
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
    let mut session = match Session::load(&args.session) {
        Ok(s) => s,
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
    for i in which {
        let record = session.dialogues[i].clone();
        let title = record
            .name
            .clone()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        println!(
            "dialogue {i}{title} on {}:",
            server
                .as_ref()
                .map(|s| s.name.as_str())
                .unwrap_or(&record.server)
        );
        let result = runtime.block_on(replay_dialogue(
            &session,
            i,
            server.as_ref(),
            &options,
            &CancellationToken::new(),
            |t| {
                let recorded = &record.turns[t.index];
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
                        crate::client::turn::Subject::Request => "request",
                        crate::client::turn::Subject::Response => "response",
                    };
                    println!("      {on}: {}", f.finding);
                }
            },
        ));
        match result {
            Err(e) => {
                eprintln!("bkn-explorer replay: dialogue {i}: {e}");
                code = exit::FAILURE;
            }
            Ok(replayed) => {
                turns += replayed.turns.len();
                differing += replayed
                    .turns
                    .iter()
                    .filter(|t| !t.differences.is_empty())
                    .count();
                if replayed.turns.iter().any(|t| {
                    t.replayed
                        .findings
                        .iter()
                        .any(|f| f.on == crate::client::turn::Subject::Response)
                }) {
                    code = code.max(exit::NONCONFORMANT);
                }
                if let Some(why) = &replayed.stopped {
                    println!("  stopped: {why}");
                }
                if replayed.differs() {
                    code = code.max(exit::NONCONFORMANT);
                }
                if args.update {
                    session.dialogues[i] = replayed.record(&record);
                }
            }
        }
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
    if args.update && code != exit::FAILURE {
        if let Err(e) = session.save(&args.session) {
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
