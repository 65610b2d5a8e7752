//! `bkn-explorer doctor [server options]`: each step of reaching the server, ok or failed, with
//! what to do. Exit 0 when every step passes, 1 when one fails, 2 for a usage mistake.

use super::exit;
use super::target::ServerArgs;
use crate::client::doctor;
use crate::protocol::Interface;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Print the steps as JSON.
    #[arg(long, value_name = "text|json", default_value = "text")]
    format: String,
}

pub fn run(args: Args) -> u8 {
    let spec = match args.server.resolve(Some(Interface::Dac)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bkn-explorer doctor: {e}");
            return exit::FAILURE;
        }
    };
    let runtime = match super::target::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bkn-explorer doctor: {e}");
            return exit::FAILURE;
        }
    };
    let options = args
        .server
        .connect_options(crate::client::event::EventSink::none());
    if args.format != "json" {
        println!("{} ({})", spec.name, spec.location());
    }
    let checks = runtime.block_on(doctor::examine(&spec, &options));
    let all_ok = checks.iter().all(|c| c.ok);
    if args.format == "json" {
        let steps: Vec<serde_json::Value> = checks
            .iter()
            .map(|c| {
                serde_json::json!({"step": c.step, "ok": c.ok, "detail": c.detail, "advice": c.advice})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"server": spec.name, "location": spec.location(), "ok": all_ok, "steps": steps})
        );
    } else {
        for c in &checks {
            println!(
                "  {:<6} {:<10} {}",
                if c.ok { "ok" } else { "FAILED" },
                c.step,
                c.detail
            );
            if let Some(a) = &c.advice {
                println!("  {:<6} {:<10} → {a}", "", "");
            }
        }
    }
    if all_ok {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}
