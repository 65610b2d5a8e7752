//! `bkn-explorer doctor [server options]`: each step of reaching the server, ok or failed, with
//! what to do; without a server named, both reference servers (Domain Access and User State
//! Refinement); with `--servers [FILE]` alone, every server of the file (or of the files
//! found). Exit 0 when every step passes, 1 when one fails, 2 for a usage mistake.

use super::exit;
use super::target::ServerArgs;
use crate::client::doctor;
use crate::client::spec::ServerSpec;
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
    let specs = match servers_to_examine(&args.server) {
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
    let json = args.format == "json";
    let mut all_ok = true;
    let mut outputs = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if !json {
            if i > 0 {
                println!();
            }
            println!("{} ({})", spec.name, spec.location());
        }
        let checks = runtime.block_on(doctor::examine(spec, &options));
        let ok = checks.iter().all(|c| c.ok);
        all_ok &= ok;
        if json {
            outputs.push(checks_json(spec, ok, &checks));
        } else {
            print_checks(&checks);
        }
    }
    if json {
        // One server: its object; several (the two reference servers, a servers file's): an
        // array of them (as `tools`).
        let out = match outputs.len() {
            1 => outputs.remove(0),
            _ => serde_json::Value::Array(outputs),
        };
        println!("{out}");
    }
    // 1 when a step of any server failed.
    if all_ok {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}

/// `--servers [FILE]` alone: every server of the file (or of the files found), one section
/// each, as `tools` and the explorer take them; without a server named, both reference
/// servers, as `tools` and `resources` do.
fn servers_to_examine(server: &ServerArgs) -> Result<Vec<ServerSpec>, String> {
    if let Some(all) = server.every_server_of_the_file() {
        return all;
    }
    if server.names_a_server() {
        return server.resolve(Some(Interface::Dac)).map(|s| vec![s]);
    }
    Ok(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ])
}

/// One server's steps, as `--format json` gives them.
fn checks_json(spec: &ServerSpec, ok: bool, checks: &[doctor::Check]) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = checks
        .iter()
        .map(|c| serde_json::json!({"step": c.step, "ok": c.ok, "detail": c.detail, "advice": c.advice}))
        .collect();
    serde_json::json!({"server": spec.name, "location": spec.location(), "ok": ok, "steps": steps})
}

/// One server's steps as text: each step's verdict and detail, and its advice under it.
fn print_checks(checks: &[doctor::Check]) {
    for c in checks {
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
