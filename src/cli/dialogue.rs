//! `bkn-explorer dialogue FILE`: the Requests in FILE (a JSON array or JSON Lines) sent in
//! order in one dialogue; one JSON line per exchange on standard output.
//!
//! Exit 0 when every Response conforms; 1 when one does not or the server rejected a Request;
//! 2 on a usage or connection failure.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::dialogue::Filling;
use crate::client::turn::{ErrorKind, Reply, Turn};
use crate::protocol::Interface;
use crate::protocol::conformance::interface_of;
use crate::protocol::document;
use serde_json::{Value, json};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Requests: a JSON array or JSON Lines (- for standard input).
    requests: PathBuf,
    /// The interface, when the first Request's Header does not say.
    #[arg(long, value_parser = super::validate::parse_interface)]
    interface: Option<Interface>,
    /// Send the Requests exactly as written.
    #[arg(long, conflicts_with = "fresh")]
    as_is: bool,
    /// Renew each Request's QueryID, QueryTime, DialogID and DataID, keeping its TurnIndex (for
    /// Requests recorded in another dialogue); by default only missing common fields are filled.
    #[arg(long)]
    fresh: bool,
    /// Also write the dialogue as a session file (see docs/sessions.md).
    #[arg(long, value_name = "SESSION")]
    save: Option<PathBuf>,
    /// A name for the saved session and its dialogue.
    #[arg(long, requires = "save")]
    name: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(args: Args) -> u8 {
    let text = match target::read_input(&args.requests) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let requests = match document::parse(&text) {
        Ok(d) => d.values(),
        Err(e) => return fail(&format!("{}: not JSON: {e}", args.requests.display())),
    };
    let Some(interface) = args
        .interface
        .or_else(|| requests.first().and_then(interface_of))
    else {
        return fail("cannot tell the interface from the first Request: give --interface dac|usr");
    };
    let (runtime, mut dialogue) = match args.server.open_dialogue(interface) {
        Ok(opened) => opened,
        Err(e) => return fail(&e),
    };
    let server_findings = super::send::server_notes(&dialogue);
    runtime.block_on(async {
        let filling = if args.as_is {
            Filling::AsIs
        } else if args.fresh {
            Filling::Fresh
        } else {
            Filling::Missing
        };
        let dialog_id = dialogue.dialog_id().to_owned();
        let spec = dialogue.connection.spec.clone();
        let defaults = dialogue.defaults.values.clone();
        let mut turns: Vec<Turn> = Vec::new();
        let mut code = server_findings;
        let cancel = CancellationToken::new();
        for (i, fields) in requests.into_iter().enumerate() {
            let request = dialogue.prepare(fields, filling);
            let turn = dialogue.send(request, &cancel).await;
            println!("{}", line(i, &turn));
            code = code.max(verdict(&turn));
            let lost = matches!(&turn.reply, Reply::Error(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Transport));
            turns.push(turn);
            if lost {
                eprintln!("bkn-explorer dialogue: the connection is gone; the remaining Requests were not sent");
                break;
            }
        }
        dialogue.close().await;
        if let Some(path) = &args.save
            && let Err(e) = super::save_dialogue(path, args.name.as_deref(), &spec, interface, &dialog_id, &defaults, turns)
        {
            eprintln!("bkn-explorer dialogue: {e}");
            return exit::FAILURE;
        }
        code
    })
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer dialogue: {message}");
    exit::FAILURE
}

fn verdict(turn: &Turn) -> u8 {
    match &turn.reply {
        Reply::Response(_) if turn.findings.is_empty() => exit::OK,
        Reply::Response(_) | Reply::ToolError(_) => exit::NONCONFORMANT,
        Reply::Error(e) => match e.kind {
            ErrorKind::Protocol | ErrorKind::TooLarge => exit::NONCONFORMANT,
            _ => exit::FAILURE,
        },
    }
}

/// One exchange as a JSON line.
fn line(i: usize, turn: &Turn) -> String {
    let mut out = json!({
        "exchange": i,
        "turnIndex": turn.turn_index(),
        "kind": turn.kind(),
        "outcome": turn.outcome(),
        "latencyMs": turn.latency_ms,
        "conforms": turn.conforms(),
        "findings": turn.findings,
    });
    let object = out.as_object_mut().expect("an object");
    match &turn.reply {
        Reply::Response(r) => object.insert("response".into(), r.value()),
        Reply::ToolError(t) => object.insert("toolError".into(), Value::String(t.clone())),
        Reply::Error(e) => {
            object.insert("error".into(), serde_json::to_value(e).unwrap_or_default())
        }
    };
    serde_json::to_string(&out).unwrap_or_default()
}
