//! The command line: one module per subcommand. Each returns the process exit code.

mod auth;
mod certify;
mod config;
mod dialogue;
mod doctor;
mod load;
mod overwrite;
mod proxy;
mod replay;
mod resources;
mod schema;
mod send;
mod serve;
mod target;
mod test;
mod tools;
mod tui;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "bkn-explorer",
    version,
    about = "Explore BKN-DAC and BKN-USR dialogues over MCP",
    long_about = "A terminal dialogue explorer for the MPAI BKN-DAC (PGM-KDA) and BKN-USR (PGM-KUS) \
                  data types over the Model Context Protocol, with reference servers and a \
                  conformance checker."
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The explorer's options, which `bkn-explorer` alone takes too (`bkn-explorer --session
    /// FILE` is `bkn-explorer tui --session FILE`).
    #[command(flatten)]
    pub explorer: tui::Args,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The explorer (the default): connect, compose, watch, save, replay.
    Tui(tui::Args),
    /// Check messages against the specification (message, exchange and dialogue rules).
    ///
    /// Reads: a message, a JSON array of messages, JSON Lines; a session file (the
    /// explorer's, `dialogue --save`) and a recording (`proxy --record`), dialogue by
    /// dialogue; `dialogue`'s output, exchange by exchange. A resource (`W`, `read -o`) is
    /// checked against its schema; a scenario (YAML or JSON) is checked as `test` reads it;
    /// a servers file as --servers reads it. Said and skipped, as holding no message:
    /// certify reports (JSON, Markdown), JUnit reports (`test --junit`), a turn exported as a
    /// command line, a JSON Schema (`schema`), a Locust export's scenarios.json.
    Validate(validate::Args),
    /// Print the JSON Schema of a data type.
    Schema(schema::Args),
    /// Run a reference server (Domain Access or User State Refinement) over stdio or HTTP.
    Serve(serve::Args),
    /// Send one Request and print the Response (findings on standard error).
    Send(send::Args),
    /// Send the Requests of a file in order in one dialogue; one JSON line per exchange.
    Dialogue(dialogue::Args),
    /// List a server's tools, resources and prompts.
    Tools(tools::ToolsArgs),
    /// Call any tool of any MCP server.
    Call(tools::CallArgs),
    /// List a server's resources (the domain, its Spaces, the Users, ...).
    Resources(resources::ListArgs),
    /// Read one resource of a server and print it (JSON pretty-printed, its shape checked).
    Read(resources::ReadArgs),
    /// Send a session's Requests again and show how the replies differ from the recorded ones.
    Replay(replay::Args),
    /// Run dialogue tests (scenarios with expectations) against one server or several.
    Test(test::Args),
    /// A conformance report for a Domain Access or User State Refinement server: every rule
    /// of the binding provoked and judged (pass, fail with evidence, or skip with why).
    Certify(certify::Args),
    /// Run a scenario in many dialogues at once and report throughput and latency.
    Load(load::Args),
    /// Try each step of reaching a server and say which one fails, and what to do.
    Doctor(doctor::Args),
    /// The user's files: `config path` says where each is.
    Config(config::Args),
    /// OAuth sign-ins to HTTP servers: login, logout, status.
    Auth(auth::Args),
    /// Stand in for a server between an agent and the real one (`proxy -- CMD ARGS` for
    /// stdio, `proxy --http PORT --upstream URL`): pass everything unchanged, check each BKN
    /// exchange, record the dialogues.
    Proxy(proxy::Args),
}

/// Exit codes shared by the headless commands.
/// The parser of a count or size where 0 means nothing sensible (dialogues at once, times
/// through, MiB, connections): clap refuses 0 with the range allowed, before anything runs.
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

pub mod exit {
    /// Everything conforms / succeeded.
    pub const OK: u8 = 0;
    /// Something does not conform, or the server reported an error.
    pub const NONCONFORMANT: u8 = 1;
    /// Usage, file or connection failure.
    pub const FAILURE: u8 = 2;
}

pub fn main() -> ExitCode {
    // A reader that goes away (`bkn-explorer schema dac | head -3`) ends the program as it
    // ends other Unix tools: quietly, with 141 (128 + SIGPIPE), not with a backtrace. (The
    // signal itself stays ignored: a server or a child that goes away is an error to report,
    // not a reason to die.)
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if crate::tui::run::is_failed_print(info) {
            std::process::exit(141);
        }
        default_hook(info);
    }));
    let cli = Cli::parse();
    // Each mistake of config.toml (a timeout that is no duration, a name misspelt) is said,
    // with its line, by every command that talks to a server: the setting was left out and
    // its default used. (The explorer says them in its messages.)
    if matches!(
        cli.command,
        Some(
            Command::Send(_)
                | Command::Dialogue(_)
                | Command::Tools(_)
                | Command::Call(_)
                | Command::Resources(_)
                | Command::Read(_)
                | Command::Replay(_)
                | Command::Test(_)
                | Command::Load(_)
                | Command::Certify(_)
                | Command::Doctor(_)
        )
    ) {
        for problem in crate::settings::Settings::current().1 {
            eprintln!("bkn-explorer: note: {problem}");
        }
    }
    let code = match cli.command {
        Some(Command::Validate(args)) => validate::run(args),
        Some(Command::Schema(args)) => schema::run(args),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Send(args)) => send::run(args),
        Some(Command::Dialogue(args)) => dialogue::run(args),
        Some(Command::Tools(args)) => tools::tools(args),
        Some(Command::Call(args)) => tools::call(args),
        Some(Command::Resources(args)) => resources::list(args),
        Some(Command::Read(args)) => resources::read(args),
        Some(Command::Replay(args)) => replay::run(args),
        Some(Command::Test(args)) => test::run(args),
        Some(Command::Load(args)) => load::run(args),
        Some(Command::Certify(args)) => certify::run(args),
        Some(Command::Doctor(args)) => doctor::run(args),
        Some(Command::Config(args)) => config::run(args),
        Some(Command::Auth(args)) => auth::run(args),
        Some(Command::Proxy(args)) => proxy::run(args),
        Some(Command::Tui(args)) => tui::run(args),
        None => tui::run(cli.explorer),
    };
    ExitCode::from(code)
}

/// Every scenario read and checked before anything is sent; None when one cannot be (its
/// errors said on standard error).
fn read_scenarios(paths: &[std::path::PathBuf]) -> Option<Vec<crate::scenario::Scenario>> {
    let mut scenarios = Vec::new();
    let mut unreadable = false;
    for path in paths {
        match crate::scenario::load(path) {
            Ok(s) => scenarios.push(s),
            Err(errors) => {
                unreadable = true;
                for e in errors {
                    eprintln!("{e}");
                }
            }
        }
    }
    (!unreadable).then_some(scenarios)
}

/// Writes a dialogue run headless as a session file.
fn save_dialogue(
    path: &std::path::Path,
    name: Option<&str>,
    spec: &crate::client::spec::ServerSpec,
    dialogue: crate::session::DialogueRecord,
) -> Result<(), String> {
    let mut session = crate::session::Session {
        name: name.map(str::to_owned),
        ..Default::default()
    };
    let server = session.add_server(spec);
    session.dialogues.push(crate::session::DialogueRecord {
        name: name.map(str::to_owned),
        server,
        ..dialogue
    });
    session
        .save(path)
        .map_err(|e| format!("cannot save {}: {e}", path.display()))
}
