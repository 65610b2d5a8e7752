//! `bkn-explorer auth login|logout|status`: OAuth sign-ins to HTTP servers, headless. The
//! other commands sign in by themselves when a server asks (unless `--no-sign-in`); these
//! are for doing it ahead of time (before a CI run that may not open a browser), seeing where
//! each sign-in stands, and forgetting one.

use super::exit;
use super::target::{self, OAuthArgs};
use crate::client::oauth::store::{self, Record};
use crate::client::oauth::{self, SIGN_IN_TIMEOUT, human_duration, sign_in};
use crate::settings::Settings;
use clap::ValueEnum;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Sign in to an HTTP server that asks for OAuth, and keep the tokens.
    Login {
        /// The server's MCP endpoint.
        url: String,
        #[command(flatten)]
        oauth: OAuthArgs,
    },
    /// Forget the tokens kept for a server.
    Logout {
        /// The server's MCP endpoint.
        url: String,
    },
    /// Where each sign-in stands (exit 1 when URL is given and not signed in).
    Status {
        /// Only this server.
        url: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> u8 {
    let Some(data_dir) = Settings::current().0.data_dir() else {
        eprintln!(
            "bkn-explorer auth: no data directory to keep sign-ins in (set BKN_EXPLORER_DATA_DIR)"
        );
        return exit::FAILURE;
    };
    match args.what {
        What::Login { url, oauth } => login(&url, &oauth),
        What::Logout { url } => logout(&data_dir, &url),
        What::Status { url, format } => status(&data_dir, url.as_deref(), format),
    }
}

fn login(url: &str, args: &OAuthArgs) -> u8 {
    let options = args.options();
    let runtime = match target::runtime() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let result = runtime.block_on(async {
        let challenge = challenge_of(url).await?;
        let (store, problem) = store::Store::open(options.data_dir.clone(), url);
        if let Some(problem) = problem {
            eprintln!("bkn-explorer auth: {problem}; it is replaced");
        }
        let notify = |notice: oauth::SignInNotice| {
            if let oauth::SignInNotice::Open { .. } = notice {
                eprintln!("{}", notice.describe(url));
            }
        };
        sign_in::sign_in(
            url,
            challenge.as_deref(),
            None,
            &options,
            &store,
            SIGN_IN_TIMEOUT,
            &notify,
        )
        .await?;
        Ok::<_, String>(store.record())
    });
    match result {
        Ok(Some(record)) => {
            println!("signed in to {url}");
            for line in describe(&record, SystemTime::now()) {
                println!("  {line}");
            }
            if options.data_dir.is_none() {
                eprintln!("bkn-explorer auth: no data directory: the sign-in was not kept");
            }
            exit::OK
        }
        Ok(None) => fail("the sign-in gave no tokens"),
        Err(e) => fail(&format!("signing in to {url} failed: {e}")),
    }
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, which names
/// its protected resource metadata and the scopes it wants; None when it does not refuse (a
/// sign-in then starts from the well-known metadata locations).
async fn challenge_of(url: &str) -> Result<Option<String>, String> {
    let body = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bkn-explorer", "version": env!("CARGO_PKG_VERSION")}}
    });
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| {
            format!("cannot reach {url}: {e} (`bkn-explorer doctor --url {url}` says why)")
        })?;
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned))
}

fn logout(data_dir: &std::path::Path, url: &str) -> u8 {
    match store::remove(data_dir, url) {
        Ok(true) => {
            println!("signed out of {url} (its tokens are deleted)");
            exit::OK
        }
        Ok(false) => {
            println!("not signed in to {url}");
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

fn status(data_dir: &std::path::Path, url: Option<&str>, format: Format) -> u8 {
    let mut records: Vec<Record> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    match url {
        Some(u) => match store::read(data_dir, u) {
            Ok(Some(r)) => records.push(r),
            Ok(None) => {}
            Err(e) => problems.push(e),
        },
        None => {
            for r in store::list(data_dir) {
                match r {
                    Ok(r) => records.push(r),
                    Err(e) => problems.push(e),
                }
            }
        }
    }
    let now = SystemTime::now();
    match format {
        Format::Json => {
            let list: Vec<Value> = records
                .iter()
                .map(|r| as_json(r, store::path_for(data_dir, &r.resource), now))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({"signIns": list, "problems": problems}))
                    .unwrap_or_default()
            );
        }
        Format::Text => {
            if records.is_empty() && problems.is_empty() {
                match url {
                    Some(u) => println!("not signed in to {u}"),
                    None => println!(
                        "no sign-ins kept (in {})",
                        store::folder(data_dir).display()
                    ),
                }
            }
            for r in &records {
                println!("{}", r.resource);
                for line in describe(r, now) {
                    println!("  {line}");
                }
            }
            for p in &problems {
                eprintln!("bkn-explorer auth: {p}");
            }
        }
    }
    if url.is_some() && records.is_empty() {
        exit::NONCONFORMANT
    } else {
        exit::OK
    }
}

/// A sign-in in lines: who, which scopes, until when.
fn describe(record: &Record, now: SystemTime) -> Vec<String> {
    let c = &record.credentials;
    let mut lines = vec![format!(
        "client {}{}",
        c.client_id,
        c.issuer
            .as_deref()
            .map(|i| format!(" at {i}"))
            .unwrap_or_default()
    )];
    if !c.granted_scopes.is_empty() {
        lines.push(format!("scopes: {}", c.granted_scopes.join(" ")));
    }
    let refresh = if record.has_refresh_token() {
        "refreshable"
    } else {
        "no refresh token"
    };
    lines.push(match record.expires_at() {
        Some(at) => match at.duration_since(now) {
            Ok(left) => format!("token valid for {} ({refresh})", human_duration(left)),
            Err(e) => format!(
                "token expired {} ago ({})",
                human_duration(e.duration()),
                if record.has_refresh_token() {
                    "refreshed at the next use"
                } else {
                    "sign in again"
                }
            ),
        },
        None => format!("token with no expiry given ({refresh})"),
    });
    lines
}

fn as_json(record: &Record, file: PathBuf, now: SystemTime) -> Value {
    let c = &record.credentials;
    let epoch = |t: SystemTime| t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok();
    json!({
        "resource": record.resource,
        "clientId": c.client_id,
        "issuer": c.issuer,
        "scopes": c.granted_scopes,
        "expiresAt": record.expires_at().and_then(epoch),
        "fresh": record.fresh_at(now),
        "refreshable": record.has_refresh_token(),
        "file": file.display().to_string(),
    })
}

fn fail(message: &str) -> u8 {
    eprintln!("bkn-explorer auth: {message}");
    exit::FAILURE
}
