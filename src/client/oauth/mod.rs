//! OAuth 2.1 for HTTP servers, as the MCP authorization specification says.
//!
//! rmcp's `AuthorizationManager` does the protocol: discovery (the 401's `WWW-Authenticate`,
//! protected resource metadata, authorization server metadata or OpenID configuration, the
//! 2025-03-26 fallbacks), PKCE, the `resource` indicator, the code exchange and refresh. This
//! module adds what a tool around it needs:
//! - `store`: sign-ins kept per server URL in the data directory (0600, atomic);
//! - `browser`: the browser opened (or the URL shown) and the loopback redirect listener;
//! - `sign_in`: one sign-in, choosing the client's identity (a configured client ID, a Client
//!   ID Metadata Document URL, or dynamic registration, in the specification's order);
//! - `client`: the HTTP client under rmcp's transport that sends the token, refreshes it, and
//!   on a 401 (or a 403 that asks for more scope) signs in and sends the request again.

pub mod browser;
pub mod client;
pub mod sign_in;
pub mod store;

use std::path::PathBuf;
use std::time::Duration;

/// How the client identifies itself, and where sign-ins are kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OAuthOptions {
    /// The data directory that holds `oauth/` (None: signed in for this run only).
    pub data_dir: Option<PathBuf>,
    /// A client ID registered with the authorization server beforehand.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The HTTPS URL of this client's Client ID Metadata Document, used when the
    /// authorization server accepts URL client IDs.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for (default: what the server's challenge or metadata names).
    pub scopes: Vec<String>,
    /// The loopback port of the redirect (default: one the system picks; a fixed one for
    /// authorization servers that want an exact redirect URI).
    pub callback_port: Option<u16>,
    pub sign_in: SignInMode,
    /// Someone will see the URL if no browser can be opened (the explorer, or a terminal);
    /// when not (a headless command in CI without `$BROWSER`), a sign-in fails at once instead
    /// of waiting for nobody.
    pub someone_watches: bool,
}

/// Whether a connection may ask the person to sign in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SignInMode {
    /// Open the browser (or show the URL) and wait for the redirect.
    #[default]
    Interactive,
    /// Use kept sign-ins and refresh them, but never start one (CI): a server that wants a
    /// new sign-in is an error that says to run `bkn-explorer auth login URL`.
    Never,
}

/// How long a person has to finish signing in.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// How many sign-ins one request may cause (a first one, then scope step-ups) before the
/// server's refusal is taken as final.
pub const MAX_SIGN_INS_PER_REQUEST: u32 = 3;

/// What a sign-in reports while it goes.
#[derive(Clone, Debug, PartialEq)]
pub enum SignInNotice {
    /// The person is asked to open `url`; `browser` is the command that opened it, if any.
    Open {
        url: String,
        browser: Option<String>,
    },
    SignedIn {
        scopes: Vec<String>,
        expires_in: Option<Duration>,
    },
    /// A kept token was refreshed without asking anyone.
    Refreshed {
        expires_in: Option<Duration>,
    },
    Failed {
        reason: String,
    },
}

impl SignInNotice {
    /// One line for a log or a terminal.
    pub fn describe(&self, server: &str) -> String {
        match self {
            SignInNotice::Open { url, browser } => match browser {
                Some(b) => format!("{server} asks you to sign in; opened in {b}: {url}"),
                None => format!("{server} asks you to sign in; open this URL in a browser: {url}"),
            },
            SignInNotice::SignedIn { scopes, expires_in } => format!(
                "signed in to {server}{}{}",
                if scopes.is_empty() {
                    String::new()
                } else {
                    format!(" (scopes: {})", scopes.join(" "))
                },
                expires_in
                    .map(|d| format!(", token valid for {}", human_duration(d)))
                    .unwrap_or_default()
            ),
            SignInNotice::Refreshed { expires_in } => format!(
                "refreshed the token for {server}{}",
                expires_in
                    .map(|d| format!(", valid for {}", human_duration(d)))
                    .unwrap_or_default()
            ),
            SignInNotice::Failed { reason } => format!("signing in to {server} failed: {reason}"),
        }
    }
}

/// `52 min`, `3 h 05 min`, `40 s`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min", s / 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}
