//! `bkn-explorer tools` and `bkn-explorer call TOOL [JSON]`: exploring any MCP server.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::connection::{Connection, ServerSummary};
use crate::client::event::EventSink;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use clap::ValueEnum;
use rmcp::model::{Prompt, Resource};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct ToolsArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(clap::Args, Debug)]
pub struct CallArgs {
    /// The tool to call.
    tool: String,
    /// Its arguments as a JSON object (default {}); - reads them from standard input.
    arguments: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
}

/// Lists what a server offers: who it is, its tools (marking BKN-DAC and BKN-USR), resources
/// and prompts. Without a server named, both reference servers, one after the other (in JSON,
/// an array of the two).
pub fn tools(args: ToolsArgs) -> u8 {
    let specs = if let Some(all) = args.server.every_server_of_the_file() {
        match all {
            Ok(specs) => specs,
            Err(e) => return fail("tools", &e),
        }
    } else if args.server.names_a_server() {
        match args.server.resolve(None) {
            Ok(s) => vec![s],
            Err(e) => return fail("tools", &e),
        }
    } else {
        vec![
            ServerSpec::embedded(Interface::Dac),
            ServerSpec::embedded(Interface::Usr),
        ]
    };
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail("tools", &e),
    };
    let mut outputs = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if i > 0 && args.format == Format::Text {
            println!("\n{}\n", "─".repeat(40));
        }
        match runtime.block_on(describe(spec, &args)) {
            Ok(Some(json)) => outputs.push(json),
            Ok(None) => {}
            Err(code) => return code,
        }
    }
    if args.format == Format::Json {
        let out = match outputs.len() {
            1 => outputs.remove(0),
            _ => Value::Array(outputs),
        };
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    }
    exit::OK
}

/// One server's description: printed as text, or returned as JSON.
async fn describe(spec: &ServerSpec, args: &ToolsArgs) -> Result<Option<Value>, u8> {
    let connection =
        match Connection::connect(spec, &args.server.connect_options(EventSink::none())).await {
            Ok(c) => c,
            Err(e) => return Err(fail("tools", &e.message)),
        };
    let resources = connection.list_resources().await.unwrap_or_default();
    let prompts = connection.list_prompts().await.unwrap_or_default();
    let json_out = match args.format {
        Format::Json => Some(description_json(&connection, &resources, &prompts)),
        Format::Text => {
            print_description(&connection.summary, &resources, &prompts);
            None
        }
    };
    connection.close().await;
    Ok(json_out)
}

/// The interface (DAC or USR) the tool of `name` carries, if it carries one.
fn bkn_interface(s: &ServerSummary, name: &str) -> Option<&'static str> {
    s.bkn_tools
        .iter()
        .find(|(_, t)| t.as_str() == name)
        .map(|(i, _)| i.name())
}

fn description_json(connection: &Connection, resources: &[Resource], prompts: &[Prompt]) -> Value {
    let s = &connection.summary;
    json!({
        "server": {"name": s.name, "version": s.version, "title": s.title, "protocolVersion": s.protocol_version,
                   "protocolAsked": s.protocol_asked, "dialogueState": match connection.state_home() {
                       crate::client::generation::StateHome::McpSession => "mcp-session",
                       crate::client::generation::StateHome::DialogId => "dialog-id",
                   },
                   "instructions": s.instructions, "dialogId": connection.dialog_id},
        "tools": s.tools.iter().map(|t| json!({"name": t.name, "title": t.title, "description": t.description,
            "interface": bkn_interface(s, &t.name), "inputSchema": t.input_schema, "outputSchema": t.output_schema})).collect::<Vec<_>>(),
        "hiddenTools": s.hidden_tools,
        "resources": resources.iter().map(|r| json!({"uri": r.uri, "name": r.name, "description": r.description})).collect::<Vec<_>>(),
        "prompts": prompts.iter().map(|p| json!({"name": p.name, "description": p.description})).collect::<Vec<_>>(),
        "published": s.published,
        "findings": s.findings,
    })
}

fn print_description(s: &ServerSummary, resources: &[Resource], prompts: &[Prompt]) {
    println!(
        "{} {} ({}; asked: {})",
        s.name,
        s.version,
        crate::client::generation::describe_for(&s.protocol_version, !s.bkn_tools.is_empty()),
        s.protocol_asked
    );
    if let Some(title) = &s.title {
        println!("  {title}");
    }
    print_tools(s);
    println!("\nresources ({}):", resources.len());
    for r in resources {
        println!(
            "  {}  {}",
            r.uri,
            r.description.as_deref().unwrap_or_default()
        );
    }
    println!("\nprompts ({}):", prompts.len());
    for p in prompts {
        println!(
            "  {}  {}",
            p.name,
            p.description.as_deref().unwrap_or_default()
        );
    }
    print_instance(s);
    if !s.findings.is_empty() {
        println!("\nfindings ({}):", s.findings.len());
        for f in &s.findings {
            println!("  {f}");
        }
    }
}

/// The tools (the BKN ones marked with their interface), then those hidden for invalid
/// annotations.
fn print_tools(s: &ServerSummary) {
    println!("\ntools ({}):", s.tools.len());
    for t in &s.tools {
        let mark = bkn_interface(s, &t.name)
            .map(|i| format!("  [{i}]"))
            .unwrap_or_default();
        println!("  {}{mark}", t.name);
        if let Some(d) = &t.description {
            println!("      {}", d.lines().next().unwrap_or_default());
        }
    }
    if !s.hidden_tools.is_empty() {
        println!(
            "\nhidden tools ({}): invalid x-mcp-header annotations, not called (SEP-2243)",
            s.hidden_tools.len()
        );
        for h in &s.hidden_tools {
            println!("  {}\n      {}", h.name, h.reason);
        }
    }
}

/// The M-Instance a BKN server serves (MCP-BINDING section 1), or that it names none.
fn print_instance(s: &ServerSummary) {
    match &s.published {
        Some(p) => println!(
            "\nserves MInstance {}{} (named by {})",
            p.m_instance.as_deref().unwrap_or("?"),
            p.u_environment
                .as_deref()
                .map(|u| format!(", UEnvironment {u}"))
                .unwrap_or_default(),
            p.source
        ),
        None if !s.bkn_tools.is_empty() => println!(
            "\nnames no M-Instance (MCP-BINDING section 1: dac://domain or usr://users){}",
            s.resource_problem
                .as_deref()
                .map(|p| format!("; {p}"))
                .unwrap_or_default()
        ),
        None => {}
    }
}

/// Calls any tool and prints its result; exit 1 when the result is a tool error.
pub fn call(args: CallArgs) -> u8 {
    let text = match args.arguments.as_deref() {
        None => "{}".to_owned(),
        Some("-") => match target::read_input(std::path::Path::new("-")) {
            Ok(t) => t,
            Err(e) => return fail("call", &e),
        },
        Some(json) => json.to_owned(),
    };
    let arguments = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return fail("call", "the arguments must be a JSON object"),
        Err(e) => {
            return fail(
                "call",
                &format!(
                    "the arguments are not JSON: {}",
                    crate::protocol::document::SyntaxError::from(e)
                ),
            );
        }
    };
    // Without a server named, the reference server whose tool it is.
    let default = Interface::from_tool_name(&args.tool);
    if !args.server.names_a_server() && default.is_none() {
        return fail(
            "call",
            &format!(
                "name the server of {}: the reference servers have only bkn_dac and bkn_usr \
                 (--stdio \"CMD\", --url URL, --server NAME --servers FILE)",
                args.tool
            ),
        );
    }
    let spec = match args.server.resolve(default) {
        Ok(s) => s,
        Err(e) => return fail("call", &e),
    };
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail("call", &e),
    };
    runtime.block_on(async {
        let connection =
            match Connection::connect(&spec, &args.server.connect_options(EventSink::none())).await
            {
                Ok(c) => c,
                Err(e) => return fail("call", &e.message),
            };
        let result = connection
            .call_tool(&args.tool, arguments, &CancellationToken::new())
            .await;
        connection.close().await;
        match result {
            Ok(result) => {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&result).unwrap_or_default()
                );
                if result.is_error == Some(true) {
                    exit::NONCONFORMANT
                } else {
                    exit::OK
                }
            }
            Err(e) => fail("call", &e.to_string()),
        }
    })
}

fn fail(command: &str, message: &str) -> u8 {
    eprintln!("bkn-explorer {command}: {message}");
    exit::FAILURE
}
