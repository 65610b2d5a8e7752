//! `bkn-explorer schema dac|usr|dem [--mode rq|rs] [--source]`, and the shapes of the resources
//! servers publish (`dac-domain`, `dac-space`, `usr-users`, `usr-user`), of scenario
//! files (`scenario`) and of a line of a proxy's recording (`journal`).

use crate::protocol::resources::Shape;
use crate::protocol::schema;
use crate::protocol::{Interface, Mode};
use clap::ValueEnum;
use serde_json::{Value, json};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which schema: a data type (dac, usr), the DataXMData secondary schema (dem), or the
    /// shape of a resource a server publishes (dac-domain, dac-space, usr-users, usr-user),
    /// a scenario file of `bkn-explorer test` (scenario), or a line of a proxy's recording
    /// (journal).
    #[arg(value_enum)]
    which: Which,
    /// Only the Request (rq) or the Response (rs) schema; both when not given.
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// Print the file as written (with its $refs to common.json and dem.json) instead of the
    /// self-contained form with every $ref resolved.
    #[arg(long)]
    source: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Which {
    Dac,
    Usr,
    Dem,
    DacDomain,
    DacSpace,
    UsrUsers,
    UsrUser,
    Scenario,
    Journal,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModeArg {
    Rq,
    Rs,
}

pub fn run(args: Args) -> u8 {
    let interface = match args.which {
        Which::Dac => Interface::Dac,
        Which::Usr => Interface::Usr,
        Which::Dem => {
            print!("{}", schema::DEM.source);
            return super::exit::OK;
        }
        Which::Scenario => {
            print!("{}", crate::scenario::SCHEMA);
            return super::exit::OK;
        }
        Which::Journal => {
            print!("{}", crate::session::journal::SCHEMA);
            return super::exit::OK;
        }
        Which::DacDomain | Which::DacSpace | Which::UsrUsers | Which::UsrUser => {
            let shape = match args.which {
                Which::DacDomain => Shape::DacDomain,
                Which::DacSpace => Shape::DacSpace,
                Which::UsrUsers => Shape::UsrUsers,
                _ => Shape::UsrUser,
            };
            print!("{}", shape.schema());
            return super::exit::OK;
        }
    };
    let one = |mode: Mode| -> Value {
        if args.source {
            schema::document(interface, mode).clone()
        } else {
            schema::self_contained(interface, mode).clone()
        }
    };
    match args.mode {
        Some(ModeArg::Rq) if args.source => {
            print!("{}", schema::message_file(interface, Mode::Request).source)
        }
        Some(ModeArg::Rs) if args.source => {
            print!("{}", schema::message_file(interface, Mode::Response).source)
        }
        Some(ModeArg::Rq) => println!("{}", pretty(&one(Mode::Request))),
        Some(ModeArg::Rs) => println!("{}", pretty(&one(Mode::Response))),
        None => println!(
            "{}",
            pretty(&json!({"Request": one(Mode::Request), "Response": one(Mode::Response)}))
        ),
    }
    super::exit::OK
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
