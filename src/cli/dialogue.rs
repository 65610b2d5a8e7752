//! `bkn-explorer dialogue FILE`: the Requests in FILE (a JSON array or JSON Lines) sent in
//! order in one dialogue; one JSON line per exchange on standard output (the Request as sent
//! and its reply: `validate` judges such a file again, exchange by exchange, as a dialogue).
//!
//! Exit 0 when every Response conforms; 1 when one does not or the server rejected a Request;
//! 2 on a usage or connection failure.

use super::exit;
use super::target::ServerArgs;
use crate::client::dialogue::Filling;
use crate::client::turn::{ErrorKind, Reply, Turn};
use crate::protocol::Interface;
use crate::protocol::conformance::interface_of;
use crate::protocol::document;
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::{Read, Write};
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
    /// Let --save replace a file that is there already (without it, an existing file is
    /// never overwritten: it may be someone's work).
    #[arg(long, requires = "save")]
    force: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// Where the Requests come from: a file (read twice: once to check that all of it is JSON
/// before anything is sent, once to send), or standard input (read once, as it comes).
fn requests(path: &std::path::Path) -> Result<document::Reader<Box<dyn Read>>, String> {
    let open = || -> Result<Box<dyn Read>, String> {
        if path.as_os_str() == "-" {
            Ok(Box::new(std::io::stdin().lock()))
        } else {
            std::fs::File::open(path)
                .map(|f| Box::new(f) as Box<dyn Read>)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
    };
    if path.as_os_str() != "-" {
        for message in document::Reader::new(open()?) {
            message.map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        }
    }
    Ok(document::Reader::new(open()?))
}

pub fn run(args: Args) -> u8 {
    // Before anything is sent: a file --save would replace is named, and left alone.
    if let Some(path) = &args.save
        && let Err(e) = super::overwrite::refuse_existing("--save", path, args.force)
    {
        return fail(&e);
    }
    let mut requests = match requests(&args.requests) {
        Ok(r) => r.peekable(),
        Err(e) => return fail(&e),
    };
    let first = match requests.peek() {
        Some(Ok(m)) => Some(&m.value),
        Some(Err(e)) => return fail(&format!("{}: not JSON: {e}", args.requests.display())),
        None => None,
    };
    let Some(interface) = args.interface.or_else(|| first.and_then(interface_of)) else {
        return fail("cannot tell the interface from the first Request: give --interface dac|usr");
    };
    let (runtime, mut dialogue) = match args.server.open_dialogue(interface) {
        Ok(opened) => opened,
        Err(e) => return fail(&e),
    };
    let server_findings = super::send::server_notes(&dialogue);
    runtime.block_on(async {
        // What the saved dialogue says of itself, taken before it closes.
        let spec = dialogue.connection.spec.clone();
        let defaults = dialogue.defaults.values.clone();
        let record = crate::session::DialogueRecord {
            name: None,
            server: String::new(),
            interface,
            dialog_id: dialogue.dialog_id().to_owned(),
            notes: None,
            defaults: (defaults != crate::protocol::message::CommonDefaults::default())
                .then_some(defaults),
            protocol_version: Some(dialogue.connection.summary.protocol_version.clone()),
            turns: Vec::new(),
        };
        let (turns, mut code) = send_each(&args, &mut dialogue, requests, server_findings).await;
        dialogue.close().await;
        let Some(path) = save_path(&args, &mut code) else {
            return code;
        };
        let record = crate::session::DialogueRecord { turns, ..record };
        if let Err(e) = super::save_dialogue(&path, args.name.as_deref(), &spec, record) {
            eprintln!("bkn-explorer dialogue: {e}");
            return exit::FAILURE;
        }
        code
    })
}

/// Each Request sent in turn, its line written as its reply comes, until the Requests end,
/// the connection is gone, standard output fails or a signal stops the run: the turns (kept
/// only to be saved: without --save, memory does not grow with the dialogue) and the exit
/// code, from `code` on.
async fn send_each(
    args: &Args,
    dialogue: &mut crate::client::dialogue::Dialogue,
    requests: impl Iterator<Item = Result<document::Located, document::SyntaxError>>,
    mut code: u8,
) -> (Vec<Turn>, u8) {
    let filling = if args.as_is {
        Filling::AsIs
    } else if args.fresh {
        Filling::Fresh
    } else {
        Filling::Missing
    };
    let mut turns: Vec<Turn> = Vec::new();
    let from_stdin = args.requests.as_os_str() == "-";
    let cancel = stopped_by_a_signal(from_stdin);
    let mut out = Output::new(from_stdin);
    for (i, message) in requests.enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        let fields = match message {
            Ok(m) => m.value,
            Err(e) => {
                eprintln!("bkn-explorer dialogue: standard input: not JSON: {e}; stopped");
                code = exit::FAILURE;
                break;
            }
        };
        let request = dialogue.prepare(fields, filling);
        let turn = {
            let send = std::pin::pin!(dialogue.send(request, &cancel));
            out.while_waiting(send).await
        };
        write_line(&mut out.buffer, i, &turn);
        if out.written().is_err() {
            break;
        }
        code = code.max(verdict(&turn));
        let lost = matches!(&turn.reply, Reply::Error(e) if matches!(e.kind, ErrorKind::Gone | ErrorKind::Transport));
        if args.save.is_some() {
            turns.push(turn);
        }
        if lost {
            eprintln!(
                "bkn-explorer dialogue: the connection is gone; the remaining Requests were not sent"
            );
            break;
        }
    }
    if cancel.is_cancelled() {
        eprintln!(
            "bkn-explorer dialogue: stopped by a signal; the remaining Requests were not sent"
        );
        code = exit::FAILURE;
    }
    let _ = out.flush();
    (turns, code)
}

/// Ctrl-C or SIGTERM stops the run like the end of its Requests: the turn in flight is
/// cancelled and recorded, the gathered lines are written and --save still saves. Not when
/// the Requests come from standard input, whose reads block this task (a signal would wait
/// for the next line); each line is written at once there anyway.
fn stopped_by_a_signal(from_stdin: bool) -> CancellationToken {
    let cancel = CancellationToken::new();
    if !from_stdin {
        let stop = cancel.clone();
        tokio::spawn(async move {
            super::serve::shutdown_signal().await;
            stop.cancel();
        });
    }
    cancel
}

/// Where --save saves. A file that came to be there while the dialogue ran is not replaced
/// either: the dialogue goes to a free name beside it, said (and the run fails), so that
/// neither is lost.
fn save_path(args: &Args, code: &mut u8) -> Option<PathBuf> {
    let path = args.save.clone()?;
    if args.force {
        return Some(path);
    }
    let Some(what) = super::overwrite::existing_file(&path) else {
        return Some(path);
    };
    let beside = free_name_beside(&path);
    eprintln!(
        "bkn-explorer dialogue: --save {}: {what} came to be there while the dialogue ran; it \
         is left alone, and the dialogue is saved to {} instead",
        path.display(),
        beside.display()
    );
    *code = exit::FAILURE;
    Some(beside)
}

/// `NAME-2.json`, `NAME-3.json` … beside `path`: the first name nothing has.
fn free_name_beside(path: &std::path::Path) -> std::path::PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    let extension = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (2u32..)
        .map(|n| path.with_file_name(format!("{stem}-{n}{extension}")))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_err())
        .unwrap_or_else(|| path.with_file_name(format!("{stem}-{}{extension}", std::process::id())))
}

/// Standard output, one JSON line per exchange. Lines read from standard input (an agent or
/// a person feeding Requests) are written one by one, as they happen. From a file they are
/// gathered for up to `Output::AT_MOST` and written together: a reader of the pipe
/// (`| jq`, a CI log) woken for every line cost the client more than a tenth of a fast turn's
/// CPU. A line never waits longer than that, even behind a slow turn.
struct Output {
    out: std::io::StdoutLock<'static>,
    buffer: Vec<u8>,
    each_line: bool,
    /// When the oldest line not written yet was made.
    since: Option<std::time::Instant>,
}

impl Output {
    const AT_MOST: std::time::Duration = std::time::Duration::from_millis(20);
    const FULL: usize = 64 * 1024;

    fn new(each_line: bool) -> Output {
        Output {
            out: std::io::stdout().lock(),
            buffer: Vec::with_capacity(Self::FULL),
            each_line,
            since: None,
        }
    }

    /// Waits for `turn`, writing what is gathered if the turn outlasts `AT_MOST`.
    async fn while_waiting<T>(
        &mut self,
        mut turn: std::pin::Pin<&mut impl Future<Output = T>>,
    ) -> T {
        let Some(since) = self.since else {
            return turn.await;
        };
        tokio::select! {
            biased;
            done = &mut turn => done,
            () = tokio::time::sleep_until((since + Self::AT_MOST).into()) => {
                // A failed write shows again at the next line, where it stops the run.
                let _ = self.flush();
                turn.await
            }
        }
    }

    /// A line was added to the buffer: written now, or gathered.
    fn written(&mut self) -> std::io::Result<()> {
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        if self.each_line || self.buffer.len() >= Self::FULL || since.elapsed() >= Self::AT_MOST {
            return self.flush();
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.since = None;
        let written = self
            .out
            .write_all(&self.buffer)
            .and_then(|()| self.out.flush());
        self.buffer.clear();
        written
    }
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

/// One exchange as a JSON line (and its newline), the Response written as it came.
fn write_line(out: &mut Vec<u8>, i: usize, turn: &Turn) {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Line<'a> {
        exchange: usize,
        turn_index: Option<u64>,
        kind: &'a str,
        outcome: Option<&'a str>,
        latency_ms: f64,
        conforms: bool,
        findings: &'a [crate::client::turn::TurnFinding],
        /// The Request as sent (with the fields filled), so that `validate` can judge the
        /// exchanges of this output as a dialogue again.
        request: &'a RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        response: Option<&'a RawValue>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_error: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a crate::client::turn::TurnError>,
    }
    let head = turn.head();
    let line = Line {
        exchange: i,
        turn_index: head.turn_index,
        kind: head.kind.as_str(),
        outcome: head.outcome.as_deref(),
        latency_ms: turn.latency_ms,
        conforms: turn.conforms(),
        findings: &turn.findings,
        request: turn.request.raw(),
        response: match &turn.reply {
            Reply::Response(r) => Some(r.raw()),
            _ => None,
        },
        tool_error: match &turn.reply {
            Reply::ToolError(t) => Some(t),
            _ => None,
        },
        error: match &turn.reply {
            Reply::Error(e) => Some(e),
            _ => None,
        },
    };
    if serde_json::to_writer(&mut *out, &line).is_ok() {
        out.push(b'\n');
    }
}
