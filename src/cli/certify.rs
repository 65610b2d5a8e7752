//! `bkn-explorer certify`: a conformance report for a Domain Access or User State Refinement
//! server (docs/certify.md). Exit 0 when no rule fails, 1 when one does, 2 when the server
//! cannot be reached or serves no BKN tool.

use super::exit;
use super::target::{self, ServerArgs};
use crate::certify::{self, Progress, Verdict, report};
use crate::client::event::EventSink;
use crate::protocol::Interface;
use clap::ValueEnum;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The interface to certify (default: the one the server serves).
    #[arg(long, value_name = "dac|usr", value_parser = super::validate::parse_interface)]
    interface: Option<Interface>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write a JUnit XML report (one test case per rule; a skipped rule is skipped).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write every exchange as a session the explorer opens, each rule's evidence a
    /// dialogue of its own.
    #[arg(long, value_name = "SESSION")]
    save: Option<PathBuf>,
    /// Let --save (and --junit) replace a file that is there already (without it, an existing
    /// file is never overwritten: it may be someone's work; an earlier JUnit report is).
    #[arg(long)]
    force: bool,
    /// Run only this rule, or the rules of a family (`feasibility`, `commitments.`);
    /// repeatable.
    #[arg(long = "only", value_name = "RULE")]
    only: Vec<String>,
    /// The longest one rule may take before it fails (a server that hangs), e.g. 30s, 2m;
    /// plain numbers are seconds.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        value_parser = crate::duration::positive
    )]
    rule_timeout: Duration,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn run(args: Args) -> u8 {
    let spec = match args
        .server
        .resolve(Some(args.interface.unwrap_or(Interface::Dac)))
    {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if let Err(e) = certify::rules::select(&args.only, args.interface.unwrap_or(Interface::Dac)) {
        return fail(&e);
    }
    if let Err(e) = refuse_overwrites(&args) {
        return fail(&e);
    }
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let options = certify::Options {
        spec,
        connect: args.server.connect_options(EventSink::none()),
        overrides: args.server.overrides(),
        interface: args.interface,
        only: args.only.clone(),
        rule_timeout: args.rule_timeout,
    };
    let cancel = CancellationToken::new();
    let mut line = ProgressLine::new();
    let outcome = runtime.block_on(async {
        let stop = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        certify::certify(&options, &cancel, |p| line.show(&p)).await
    });
    line.clear();
    let report = match outcome {
        Ok(r) => r,
        Err(e) => return fail(&e.0),
    };
    write_outputs(&args, &report);
    let printed = match args.format {
        Format::Text => report::text(&report),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&report::json(&report)).unwrap_or_default()
        ),
        Format::Markdown => report::markdown(&report),
    };
    print!("{printed}");
    if report.count(Verdict::Fail) > 0 {
        exit::NONCONFORMANT
    } else {
        exit::OK
    }
}

/// Before a rule runs: a file the outputs would replace is named, and left alone.
fn refuse_overwrites(args: &Args) -> Result<(), String> {
    if let Some(p) = args.save.as_deref() {
        super::overwrite::refuse_existing("--save", p, args.force)?;
    }
    if let Some(p) = args.junit.as_deref() {
        super::overwrite::refuse_existing_unless_junit("--junit", p, args.force)?;
    }
    Ok(())
}

/// The JUnit report and the session of the evidence, written whatever the verdicts, so that
/// CI and the explorer have them.
fn write_outputs(args: &Args, report: &certify::Report) {
    if let Some(path) = &args.junit
        && let Err(e) = crate::session::atomic::write(path, report::junit(report).as_bytes())
    {
        eprintln!("bkn-explorer certify: cannot write {}: {e}", path.display());
    }
    if let Some(path) = &args.save {
        match report::session(report).save(path) {
            Ok(()) => eprintln!("saved every exchange to {}", path.display()),
            Err(e) => eprintln!("bkn-explorer certify: cannot save {}: {e}", path.display()),
        }
    }
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer certify: {message}");
    exit::FAILURE
}

/// The rule running, on standard error: redrawn in place on a terminal, a line per rule
/// otherwise.
struct ProgressLine {
    tty: bool,
    total: usize,
    drawn: bool,
}

impl ProgressLine {
    fn new() -> ProgressLine {
        ProgressLine {
            tty: std::io::stderr().is_terminal(),
            total: 0,
            drawn: false,
        }
    }

    fn show(&mut self, p: &Progress) {
        let mut err = std::io::stderr().lock();
        match p {
            Progress::Learnt { total, .. } => self.total = *total,
            Progress::Started { index, rule } if self.tty => {
                let _ = write!(err, "\r\x1b[2K[{}/{}] {}", index + 1, self.total, rule.name);
                self.drawn = true;
            }
            Progress::Finished { index, result } if !self.tty => {
                let _ = writeln!(
                    err,
                    "[{}/{}] {} {}",
                    index + 1,
                    self.total,
                    result.rule.name,
                    result.verdict
                );
            }
            _ => {}
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
