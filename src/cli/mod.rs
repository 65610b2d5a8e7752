//! The command line: one module per subcommand. Each returns the process exit code.

mod schema;
mod serve;
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
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check messages against the specification (message, exchange and dialogue rules).
    Validate(validate::Args),
    /// Print the JSON Schema of a data type.
    Schema(schema::Args),
    /// Run a reference server (Domain Access or User State Refinement) over stdio or HTTP.
    Serve(serve::Args),
}

/// Exit codes shared by the headless commands.
pub mod exit {
    /// Everything conforms / succeeded.
    pub const OK: u8 = 0;
    /// Something does not conform, or the server reported an error.
    pub const NONCONFORMANT: u8 = 1;
    /// Usage, file or connection failure.
    pub const FAILURE: u8 = 2;
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Validate(args)) => validate::run(args),
        Some(Command::Schema(args)) => schema::run(args),
        Some(Command::Serve(args)) => serve::run(args),
        None => {
            eprintln!("bkn-explorer: the explorer is not built yet; see --help");
            exit::FAILURE
        }
    };
    ExitCode::from(code)
}
