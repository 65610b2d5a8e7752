//! `bkn-explorer send [--interface dac|usr] FILE|-`: send one Request, print the Response.
//!
//! Exit 0 when the Response conforms; 1 when it does not, or the server rejected the Request
//! or answered with an error; 2 on a usage or connection failure.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::dialogue::Filling;
use crate::client::turn::{ErrorKind, Reply, Subject, Turn};
use crate::protocol::Interface;
use crate::protocol::conformance::interface_of;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Request: a JSON file, or - for standard input. Missing common fields are filled.
    request: PathBuf,
    /// The interface, when the Request's Header does not say.
    #[arg(long, value_parser = super::validate::parse_interface)]
    interface: Option<Interface>,
    /// Send the Request exactly as written (no common field filled).
    #[arg(long)]
    as_is: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(args: Args) -> u8 {
    let text = match target::read_input(&args.request) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    // At any depth below 1,000 levels (MCP-BINDING section 6), as every command reads.
    let request: serde_json::Value = match crate::protocol::json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return fail(&format!("{}: not JSON: {e}", args.request.display())),
    };
    // The Request's Header says; else --interface; else the embedded server named; else the
    // properties it uses (which reads the four message schemas: the costliest guess).
    let declared = request
        .get("Header")
        .and_then(serde_json::Value::as_str)
        .and_then(Interface::from_header);
    let Some(interface) = declared
        .or(args.interface)
        .or(args.server.embedded)
        .or_else(|| interface_of(&request))
    else {
        return fail("cannot tell the interface from the Request: give --interface dac|usr");
    };
    let (runtime, mut dialogue) = match args.server.open_one_shot(interface) {
        Ok(opened) => opened,
        Err(e) => return fail(&e),
    };
    let server_findings = server_notes(&dialogue);
    runtime.block_on(async {
        let filling = if args.as_is {
            Filling::AsIs
        } else {
            Filling::Missing
        };
        let request = dialogue.prepare(request, filling);
        // Ctrl-C or SIGTERM cancels the turn, as Esc does in the explorer: the server is told
        // (notifications/cancelled, or tasks/cancel for a task), and the turn is reported.
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let watcher = tokio::spawn(async move {
            super::serve::shutdown_signal().await;
            stop.cancel();
        });
        let turn = dialogue.send(request, &cancel).await;
        watcher.abort();
        // The answer is shown before the server is stopped: a script reading it need not
        // wait for the server to end (about a millisecond for ours, more for others).
        let code = report(&turn).max(server_findings);
        dialogue.close().await;
        code
    })
}

/// Says on standard error where the defaults came from (when not built in) and how the
/// server's tool breaks the binding; the exit code those findings give.
pub(super) fn server_notes(dialogue: &crate::client::dialogue::Dialogue) -> u8 {
    // The generation, always: where the dialogue's state lives is what a reader of a
    // surprising answer needs first (MCP-BINDING section 3).
    let summary = &dialogue.connection.summary;
    eprintln!(
        "note: {} (asked: {}), DialogID {}",
        crate::client::generation::describe(&summary.protocol_version),
        summary.protocol_asked,
        dialogue.dialog_id()
    );
    // Only when a value is not the built-in one: against the reference servers, silence.
    let d = &dialogue.defaults;
    if d.values != crate::protocol::message::CommonDefaults::default() {
        eprintln!("note: {}", d.describe());
    }
    let findings = &dialogue.connection.summary.findings;
    for f in findings {
        eprintln!("server: {f}");
    }
    if findings.is_empty() {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer send: {message}");
    exit::FAILURE
}

/// Prints the turn (the Response on stdout, the rest on stderr) and gives the exit code.
fn report(turn: &Turn) -> u8 {
    for f in &turn.findings {
        let on = match f.on {
            Subject::Request => "request",
            Subject::Response => "response",
        };
        eprintln!("{on}: {}", f.finding);
    }
    match &turn.reply {
        Reply::Response(response) => {
            println!(
                "{}",
                serde_json::to_string_pretty(response).unwrap_or_default()
            );
            if turn.findings.iter().any(|f| f.on == Subject::Response) {
                exit::NONCONFORMANT
            } else {
                exit::OK
            }
        }
        Reply::ToolError(text) => {
            eprintln!("the server rejected the Request (tool error):\n{text}");
            exit::NONCONFORMANT
        }
        Reply::Error(e) => {
            eprintln!("bkn-explorer send: {}", e.message);
            match e.kind {
                ErrorKind::Protocol | ErrorKind::TooLarge => exit::NONCONFORMANT,
                _ => exit::FAILURE,
            }
        }
    }
}
