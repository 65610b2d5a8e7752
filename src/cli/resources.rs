//! `bkn-explorer resources` and `bkn-explorer read URI`: what a server publishes for its
//! clients (MCP-BINDING section 1: `dac://domain`, `dac://spaces/…`, `usr://users`, …), listed
//! and read headless, as MCP Inspector's Resources tab does. A resource of a known shape is
//! checked against its schema (`docs/resources/`) as it is read.

use super::exit;
use super::target::{self, ServerArgs};
use crate::client::connection::{CallError, Connection};
use crate::client::event::EventSink;
use crate::client::spec::ServerSpec;
use crate::protocol::Interface;
use crate::protocol::resources::Shape;
use base64::Engine;
use clap::ValueEnum;
use rmcp::model::{Resource, ResourceContents};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    server: ServerArgs,
}

#[derive(clap::Args, Debug)]
pub struct ReadArgs {
    /// The resource's URI, as `bkn-explorer resources` lists it (e.g. dac://domain).
    uri: String,
    /// `json`: the whole MCP result (every content with its uri and mimeType); `text` (the
    /// default): the content itself, JSON pretty-printed.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the content to this file instead of standard output (a binary content decoded).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Let --output replace a file that is there already (without it, an existing file is
    /// never overwritten: it may be someone's work).
    #[arg(long, requires = "output")]
    force: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// Lists the resources of a server (both reference servers when none is named).
pub fn list(args: ListArgs) -> u8 {
    let specs = match specs(&args.server, None) {
        Ok(s) => s,
        Err(e) => return fail("resources", &e),
    };
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail("resources", &e),
    };
    let mut listed = Vec::new();
    for spec in &specs {
        let found = runtime.block_on(async {
            let connection = connect(spec, &args.server).await?;
            let resources = connection.list_resources().await;
            let name = connection.summary.name.clone();
            connection.close().await;
            resources
                .map(|r| (name, r))
                .map_err(|e| format!("{}: cannot list its resources: {e}", spec.name))
        });
        match found {
            Ok(found) => listed.push(found),
            Err(e) => return fail("resources", &e),
        }
    }
    match args.format {
        Format::Json => {
            let servers: Vec<Value> = listed
                .iter()
                .map(|(name, resources)| json!({"server": name, "resources": resources}))
                .collect();
            let out = match servers.len() {
                1 => servers.into_iter().next().unwrap_or_default(),
                _ => Value::Array(servers),
            };
            println!("{}", pretty(&out));
        }
        Format::Text => {
            for (i, (name, resources)) in listed.iter().enumerate() {
                if i > 0 {
                    println!();
                }
                println!("{name}: {} resources", resources.len());
                for r in resources {
                    print_one(r);
                }
            }
        }
    }
    exit::OK
}

fn print_one(r: &Resource) {
    let mime = r.mime_type.as_deref().unwrap_or("");
    println!("  {}  {mime}", r.uri);
    if let Some(d) = r.description.as_deref().or(r.title.as_deref()) {
        println!("      {}", d.lines().next().unwrap_or_default());
    }
}

/// Reads one resource and prints it; exit 1 when a resource of a known shape breaks it.
pub fn read(args: ReadArgs) -> u8 {
    // Without a server named, the reference server whose scheme the URI has.
    let default = if args.uri.starts_with("dac://") {
        Some(Interface::Dac)
    } else if args.uri.starts_with("usr://") {
        Some(Interface::Usr)
    } else {
        None
    };
    if !args.server.names_a_server() && default.is_none() {
        return fail(
            "read",
            &format!(
                "name the server of {}: the reference servers publish dac:// and usr:// resources \
                 (--stdio \"CMD\", --url URL, --server NAME --servers FILE)",
                args.uri
            ),
        );
    }
    if let Some(path) = &args.output
        && let Err(e) = super::overwrite::refuse_existing("--output", path, args.force)
    {
        return fail("read", &e);
    }
    let spec = match specs(&args.server, default) {
        Ok(mut s) => s.remove(0),
        Err(e) => return fail("read", &e),
    };
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail("read", &e),
    };
    let contents = runtime.block_on(async {
        let connection = connect(&spec, &args.server).await?;
        let read = connection.read_resource_contents(&args.uri).await;
        connection.close().await;
        read.map_err(|e| match e {
            // The server answered, and has no such resource (or refused the URI): what it
            // does have is one command away.
            CallError::Protocol(_) => format!(
                "cannot read {}: {e}; `bkn-explorer resources` lists what the server has",
                args.uri
            ),
            e => format!("cannot read {}: {e}", args.uri),
        })
    });
    let contents = match contents {
        Ok(c) => c,
        Err(e) => return fail("read", &e),
    };
    if contents.is_empty() {
        return fail("read", &format!("{}: the server gave no content", args.uri));
    }
    let findings = check_shape(&args.uri, &contents);
    let written = match (&args.output, args.format) {
        (_, Format::Json) => emit(
            args.output.as_ref(),
            format!("{}\n", pretty(&json!({ "contents": contents }))).as_bytes(),
        ),
        (Some(path), Format::Text) => emit(Some(path), &content_bytes(&contents)),
        (None, Format::Text) => emit(None, crate::client::resources::shown(&contents).as_bytes()),
    };
    if let Err(e) = written {
        return fail("read", &e);
    }
    for (pointer, message) in &findings {
        eprintln!(
            "{}: does not keep its shape (docs/resources/) at {}: {message}",
            args.uri,
            if pointer.is_empty() { "/" } else { pointer }
        );
    }
    if findings.is_empty() {
        exit::OK
    } else {
        exit::NONCONFORMANT
    }
}

/// The content's own bytes (a binary content decoded), for `-o FILE`.
fn content_bytes(contents: &[ResourceContents]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in contents {
        match c {
            ResourceContents::TextResourceContents { text, .. } => {
                out.extend_from_slice(text.as_bytes())
            }
            ResourceContents::BlobResourceContents { blob, .. } => out.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .unwrap_or_default(),
            ),
            other => out.extend(pretty(&json!(other)).into_bytes()),
        }
    }
    out
}

/// Where a resource of a known shape (its URI says which) breaks it; nothing for others.
fn check_shape(uri: &str, contents: &[ResourceContents]) -> Vec<(String, String)> {
    let Some(shape) = Shape::of_uri(uri) else {
        return Vec::new();
    };
    let text = contents.iter().find_map(|c| match c {
        ResourceContents::TextResourceContents { text, .. } => Some(text.as_str()),
        _ => None,
    });
    match text.map(serde_json::from_str::<Value>) {
        Some(Ok(value)) => shape.check(&value),
        Some(Err(e)) => vec![(String::new(), format!("not JSON: {e}"))],
        None => vec![(String::new(), "no text content".to_owned())],
    }
}

/// Writes to the file (atomically) or to standard output.
fn emit(path: Option<&PathBuf>, bytes: &[u8]) -> Result<(), String> {
    match path {
        Some(path) => crate::atomic::write(path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write to standard output: {e}"))
        }
    }
}

fn specs(server: &ServerArgs, default: Option<Interface>) -> Result<Vec<ServerSpec>, String> {
    if let Some(all) = server.every_server_of_the_file() {
        return all;
    }
    if server.names_a_server() || default.is_some() {
        return server.resolve(default).map(|s| vec![s]);
    }
    Ok(vec![
        ServerSpec::embedded(Interface::Dac),
        ServerSpec::embedded(Interface::Usr),
    ])
}

async fn connect(spec: &ServerSpec, server: &ServerArgs) -> Result<Connection, String> {
    Connection::connect(spec, &server.connect_options(EventSink::none()))
        .await
        .map_err(|e| e.message)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn fail(command: &str, message: &str) -> u8 {
    eprintln!("bkn-explorer {command}: {message}");
    exit::FAILURE
}
