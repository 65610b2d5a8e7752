//! OAuth 2.1, as the MCP authorization specification says, through the commands users run.
//!
//! An authorization server and a protected resource run in the test (axum): the resource is
//! the reference Domain Access server behind a bearer check, answering 401 with
//! `WWW-Authenticate: Bearer resource_metadata=…` until a valid token comes. The person's
//! browser is `tests/peers/browser.py` ($BROWSER), which follows the authorization URL's
//! redirect to the explorer's loopback listener. Covered: discovery from the 401, dynamic
//! client registration, PKCE (S256, checked by the server), the `resource` indicator, the
//! token kept 0600 and used by the next run, refresh, a revoked token, metadata that names
//! another resource, `--no-sign-in`, and `auth login|status|logout`. The official MCP
//! conformance suite's client scenarios for authorization run last. No test reaches the
//! internet.

use crate::common;

use axum::extract::{Form, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Counts {
    registrations: u32,
    authorizations: u32,
    code_grants: u32,
    refresh_grants: u32,
    refused_tokens: u32,
    /// Refused requests that carried a token (one this server did not issue, or revoked).
    refused_with_a_token: u32,
}

struct Grant {
    client: String,
    challenge: String,
    redirect: String,
    scope: String,
    resource: String,
}

struct Access {
    resource: String,
    expires: Instant,
    revoked: bool,
}

struct AuthState {
    base: String,
    upstream: String,
    /// What the protected resource metadata says the resource is (a wrong one for the
    /// audience test).
    published_resource: Option<String>,
    lifetime: u64,
    /// Only turns (`tools/call`) need a token: the handshake and discovery go through
    /// without one.
    turns_only: bool,
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    access: HashMap<String, Access>,
    refresh: HashMap<String, (String, String, bool)>,
    counts: Counts,
    next: u32,
}

impl AuthState {
    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }
    fn issue(&mut self, scope: &str, resource: &str) -> Value {
        self.next += 1;
        let access = format!("at-{}", self.next);
        let refresh = format!("rt-{}", self.next);
        self.access.insert(
            access.clone(),
            Access {
                resource: resource.to_owned(),
                expires: Instant::now() + Duration::from_secs(self.lifetime),
                revoked: false,
            },
        );
        self.refresh.insert(
            refresh.clone(),
            (scope.to_owned(), resource.to_owned(), false),
        );
        json!({"access_token": access, "token_type": "Bearer", "expires_in": self.lifetime,
               "refresh_token": refresh, "scope": scope})
    }
}

type Shared = Arc<Mutex<AuthState>>;

/// The authorization server and the protected resource, on one port.
struct AuthServer {
    state: Shared,
    url: String,
    _upstream: common::HttpChild,
}

impl AuthServer {
    async fn start(lifetime: u64) -> AuthServer {
        let upstream = common::spawn_http(&["dac".to_owned()]).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let state: Shared = Arc::new(Mutex::new(AuthState {
            base: base.clone(),
            upstream: upstream.url.clone(),
            published_resource: None,
            lifetime,
            turns_only: false,
            clients: HashMap::new(),
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: HashMap::new(),
            counts: Counts::default(),
            next: 0,
        }));
        let app = Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(server_metadata),
            )
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/mcp", any(protected))
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        AuthServer {
            state,
            url: format!("{base}/mcp"),
            _upstream: upstream,
        }
    }

    fn counts(&self) -> (u32, u32, u32, u32) {
        let s = self.state.lock().unwrap();
        let c = &s.counts;
        (
            c.registrations,
            c.authorizations,
            c.code_grants,
            c.refresh_grants,
        )
    }

    fn revoke(&self, access: bool, refresh: bool) {
        let mut s = self.state.lock().unwrap();
        if access {
            s.access.values_mut().for_each(|a| a.revoked = true);
        }
        if refresh {
            s.refresh.values_mut().for_each(|r| r.2 = true);
        }
    }
}

async fn resource_metadata(State(s): State<Shared>) -> Json<Value> {
    let s = s.lock().unwrap();
    let resource = s.published_resource.clone().unwrap_or_else(|| s.resource());
    Json(
        json!({"resource": resource, "authorization_servers": [s.base], "scopes_supported": ["dac"]}),
    )
}

async fn server_metadata(State(s): State<Shared>) -> Json<Value> {
    let b = s.lock().unwrap().base.clone();
    Json(json!({
        "issuer": b, "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"), "registration_endpoint": format!("{b}/register"),
        "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["dac"]
    }))
}

async fn register(State(s): State<Shared>, Json(body): Json<Value>) -> Response {
    let mut s = s.lock().unwrap();
    s.counts.registrations += 1;
    let id = format!("client-{}", s.counts.registrations);
    let redirects: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    s.clients.insert(id.clone(), redirects.clone());
    (
        StatusCode::CREATED,
        Json(json!({"client_id": id, "redirect_uris": redirects, "token_endpoint_auth_method": "none"})),
    )
        .into_response()
}

/// Grants at once (the person said yes), after checking what OAuth 2.1 requires of the
/// request: a registered client and redirect, PKCE with S256, and the resource indicator.
async fn authorize(State(s): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let mut s = s.lock().unwrap();
    s.counts.authorizations += 1;
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let redirect = get("redirect_uri");
    let known = s
        .clients
        .get(&get("client_id"))
        .is_some_and(|r| r.contains(&redirect));
    if !known || get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
        return (
            StatusCode::BAD_REQUEST,
            "unknown client or redirect, or no PKCE S256",
        )
            .into_response();
    }
    if get("resource") != s.resource() {
        return (
            StatusCode::BAD_REQUEST,
            "the resource indicator is not this server",
        )
            .into_response();
    }
    s.next += 1;
    let code = format!("code-{}", s.next);
    s.codes.insert(
        code.clone(),
        Grant {
            client: get("client_id"),
            challenge: get("code_challenge"),
            redirect: redirect.clone(),
            scope: get("scope"),
            resource: get("resource"),
        },
    );
    let to = format!("{redirect}?code={code}&state={}", get("state"));
    (StatusCode::FOUND, [("location", to)]).into_response()
}

async fn token(State(s): State<Shared>, Form(f): Form<HashMap<String, String>>) -> Response {
    let mut s = s.lock().unwrap();
    let get = |k: &str| f.get(k).cloned().unwrap_or_default();
    let refuse = |what: &str| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": what})),
        )
            .into_response()
    };
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some(grant) = s.codes.remove(&get("code")) else {
                return refuse("unknown code");
            };
            // S256: the challenge is base64url(SHA-256(verifier)). (The conformance suite
            // below checks it with an implementation of its own.)
            let verifier = oauth2::PkceCodeVerifier::new(get("code_verifier"));
            let computed = oauth2::PkceCodeChallenge::from_code_verifier_sha256(&verifier);
            if computed.as_str() != grant.challenge {
                return refuse("the code verifier does not match the challenge");
            }
            if get("redirect_uri") != grant.redirect || get("client_id") != grant.client {
                return refuse("another client or redirect");
            }
            if get("resource") != grant.resource {
                return refuse("another resource");
            }
            s.counts.code_grants += 1;
            Json(s.issue(&grant.scope, &grant.resource)).into_response()
        }
        "refresh_token" => {
            let Some((scope, resource, revoked)) = s.refresh.get(&get("refresh_token")).cloned()
            else {
                return refuse("unknown refresh token");
            };
            if revoked {
                return refuse("revoked");
            }
            s.counts.refresh_grants += 1;
            Json(s.issue(&scope, &resource)).into_response()
        }
        _ => refuse("unsupported grant"),
    }
}

/// The reference server behind a bearer check: a token must be known, live, not revoked and
/// issued for this resource (its audience).
async fn protected(State(s): State<Shared>, headers: HeaderMap, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 24)
        .await
        .unwrap_or_default();
    let turn = body.windows(12).any(|w| w == b"\"tools/call\"");
    let request = Request::from_parts(parts, axum::body::Body::from(body));
    let (upstream, resource_metadata) = {
        let mut s = s.lock().unwrap();
        let token = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        let resource = s.resource();
        let valid = s
            .access
            .get(token)
            .is_some_and(|a| !a.revoked && a.expires > Instant::now() && a.resource == resource);
        let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", s.base);
        if !valid && (turn || !s.turns_only) {
            s.counts.refused_tokens += 1;
            if !token.is_empty() {
                s.counts.refused_with_a_token += 1;
            }
            let error = if token.is_empty() {
                ""
            } else {
                ", error=\"invalid_token\""
            };
            return (
                StatusCode::UNAUTHORIZED,
                [(
                    "www-authenticate",
                    format!("Bearer resource_metadata=\"{metadata}\"{error}"),
                )],
            )
                .into_response();
        }
        (s.upstream.clone(), metadata)
    };
    let _ = resource_metadata;
    forward(&upstream, request).await
}

/// Passes a request to the reference server and its answer (JSON or an SSE stream) back.
async fn forward(upstream: &str, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 24)
        .await
        .unwrap_or_default();
    let client = reqwest::Client::new();
    let mut out = client.request(parts.method.clone(), upstream).body(body);
    for name in [
        "content-type",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
    ] {
        if let Some(v) = parts.headers.get(name) {
            out = out.header(name, v);
        }
    }
    let Ok(answer) = out.send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let mut response = Response::builder().status(answer.status().as_u16());
    for name in ["content-type", "mcp-session-id"] {
        if let Some(v) = answer.headers().get(name) {
            response = response.header(name, v.as_bytes());
        }
    }
    response
        .body(axum::body::Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

fn browser() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/browser.py");
    format!(
        "{} {}",
        common::python3().expect("python3"),
        script.display()
    )
}

/// Runs the explorer's command line with a data directory and, when `sign_in`, a browser.
async fn run(data: &Path, sign_in: bool, args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(common::bin());
    command
        .args(args)
        .env("BKN_EXPLORER_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", data.join("config"))
        .env_remove("BKN_TOKEN");
    if sign_in {
        command.env("BROWSER", browser());
    } else {
        command.env("BROWSER", "false");
    }
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("the command ends within 60 s")
        .expect("the command runs")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[tokio::test]
async fn a_server_that_asks_for_oauth_is_signed_in_to_once_and_its_kept_token_used_after() {
    let server = AuthServer::start(3600).await;
    let data = tempfile::tempdir().unwrap();

    let first = run(data.path(), true, &["tools", "--url", &server.url]).await;
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("bkn_dac"),
        "{}",
        text(&first)
    );
    assert!(
        String::from_utf8_lossy(&first.stderr).contains("asks you to sign in"),
        "{}",
        text(&first)
    );
    // Discovery from the 401, one registration, one authorization with PKCE, one code grant.
    assert_eq!(server.counts(), (1, 1, 1, 0));

    // Kept for the user alone.
    let files: Vec<_> = std::fs::read_dir(data.path().join("oauth"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(files.len(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    // The next run uses the kept token: nobody is asked, nothing is registered.
    let second = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &server.url],
    )
    .await;
    assert!(second.status.success(), "{}", text(&second));
    assert_eq!(server.counts(), (1, 1, 1, 0));

    let status = run(data.path(), false, &["auth", "status", &server.url]).await;
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        out.contains("client client-1")
            && out.contains("scopes: dac")
            && out.contains("token valid for"),
        "{out}"
    );

    let json = run(data.path(), false, &["auth", "status", "--format", "json"]).await;
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["signIns"][0]["resource"], server.url);
    assert_eq!(v["signIns"][0]["fresh"], true);

    let logout = run(data.path(), false, &["auth", "logout", &server.url]).await;
    assert!(logout.status.success(), "{}", text(&logout));
    let status = run(data.path(), false, &["auth", "status", &server.url]).await;
    assert_eq!(status.status.code(), Some(1), "{}", text(&status));
    assert!(String::from_utf8_lossy(&status.stdout).contains("not signed in"));

    // Signed out, with no browser to open ($BROWSER fails) and no terminal to show the URL
    // on: it fails at once, rather than wait five minutes for nobody. What it did, not how
    // long it took: the browser it tried failed, so it never waited for the sign-in (no code
    // was granted); a wait would have met `run`'s guard, a minute, long before five.
    let before = server.counts();
    let alone = run(data.path(), false, &["tools", "--url", &server.url]).await;
    assert_eq!(alone.status.code(), Some(2), "{}", text(&alone));
    assert!(
        String::from_utf8_lossy(&alone.stderr).contains("no browser could be opened"),
        "{}",
        text(&alone)
    );
    assert_eq!(
        server.counts().2,
        before.2,
        "a code was granted: {:?}",
        server.counts()
    );

    // Signed out, and told not to ask anyone: a clear error that says what to do.
    let refused = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &server.url],
    )
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("auth login"), "{err}");
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_without_asking_anyone() {
    // 4 s tokens, refreshed when less than half their life is left.
    let server = AuthServer::start(4).await;
    let data = tempfile::tempdir().unwrap();
    let login = run(data.path(), true, &["auth", "login", &server.url]).await;
    assert!(login.status.success(), "{}", text(&login));
    assert!(
        String::from_utf8_lossy(&login.stdout).contains("signed in to"),
        "{}",
        text(&login)
    );
    assert_eq!(server.counts(), (1, 1, 1, 0));

    // Three seconds pass, on the client's clock: the kept sign-in says its token came then
    // (1 s of its life is left, under the half it keeps in hand). No waiting: the record's
    // time is the clock the client reads.
    use bkn_explorer::client::oauth::store;
    let mut record = store::read(data.path(), &server.url)
        .unwrap()
        .expect("the sign-in is kept");
    let received = record.credentials.token_received_at.as_mut().unwrap();
    *received -= 3;
    store::write(data.path(), &record).unwrap();
    let used = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &server.url],
    )
    .await;
    assert!(used.status.success(), "{}", text(&used));
    let (_, authorizations, _, refreshes) = server.counts();
    assert_eq!(authorizations, 1, "not signed in again");
    // (More than one when the run outlasts the new token's first half, on a slow machine.)
    assert!(refreshes >= 1, "refreshed before it was sent");
}

#[tokio::test]
async fn a_revoked_token_is_refreshed_and_a_revoked_grant_means_signing_in_again() {
    let server = AuthServer::start(3600).await;
    let data = tempfile::tempdir().unwrap();
    let first = run(data.path(), true, &["tools", "--url", &server.url]).await;
    assert!(first.status.success(), "{}", text(&first));

    // The access token revoked: the server's 401 leads to one refresh, silently.
    server.revoke(true, false);
    let again = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &server.url],
    )
    .await;
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(server.counts(), (1, 1, 1, 1));

    // The whole grant revoked: refreshing fails, so the person signs in again.
    server.revoke(true, true);
    let refused = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &server.url],
    )
    .await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let signed_in = run(data.path(), true, &["tools", "--url", &server.url]).await;
    assert!(signed_in.status.success(), "{}", text(&signed_in));
    let (_, authorizations, code_grants, _) = server.counts();
    assert_eq!((authorizations, code_grants), (2, 2));
}

/// The handshake needs no token, a turn does: the turn's first try (on the HTTP hot path, past
/// rmcp) is refused with 401 and nothing is answered; it is sent again through rmcp's client,
/// which signs in, and answered once.
#[tokio::test]
async fn a_server_that_asks_for_a_token_only_at_the_first_turn_gets_one_and_its_answer() {
    let server = AuthServer::start(3600).await;
    server.state.lock().unwrap().turns_only = true;
    let data = tempfile::tempdir().unwrap();
    let request = data.path().join("request.json");
    std::fs::write(
        &request,
        r#"{"Kind": "constraints", "EntityIDs": ["Fountain#1"]}"#,
    )
    .unwrap();
    let out = run(
        data.path(),
        true,
        &["send", request.to_str().unwrap(), "--url", &server.url],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let response: Value = serde_json::from_slice(&out.stdout).expect("the Response");
    assert_eq!(response["Outcome"], "answered", "{}", text(&out));
    assert_eq!(response["TurnIndex"], 0, "the refused try used up nothing");
    let (registrations, authorizations, code_grants, _) = server.counts();
    assert_eq!((registrations, authorizations, code_grants), (1, 1, 1));
    // The hot path's try, then rmcp's client's first (it too sends what it holds: nothing),
    // then the signed-in one.
    assert_eq!(server.state.lock().unwrap().counts.refused_tokens, 2);
}

#[tokio::test]
async fn metadata_that_names_another_resource_is_refused_before_anyone_signs_in() {
    let server = AuthServer::start(3600).await;
    server.state.lock().unwrap().published_resource = Some("http://elsewhere.example/mcp".into());
    let data = tempfile::tempdir().unwrap();
    let out = run(data.path(), true, &["tools", "--url", &server.url]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(
        err.contains("signing in with oauth failed") && err.contains("resource"),
        "{err}"
    );
    let (registrations, authorizations, _, _) = server.counts();
    assert_eq!(
        (registrations, authorizations),
        (0, 0),
        "no token is asked for another audience"
    );
}

#[tokio::test]
async fn a_token_for_another_server_is_not_sent_to_this_one() {
    let one = AuthServer::start(3600).await;
    let two = AuthServer::start(3600).await;
    let data = tempfile::tempdir().unwrap();
    assert!(
        run(data.path(), true, &["auth", "login", &one.url])
            .await
            .status
            .success()
    );
    let out = run(
        data.path(),
        false,
        &["tools", "--no-sign-in", "--url", &two.url],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let counts = &two.state.lock().unwrap().counts;
    assert!(counts.refused_tokens >= 1);
    assert_eq!(
        counts.refused_with_a_token, 0,
        "one's token never went to two"
    );
}

/// The official conformance suite's client scenarios for authorization, each with the
/// explorer as the client (`tools --url URL`; `call` where the scenario needs a tool called;
/// the context's pre-registered credentials as --client-id and --client-secret).
#[tokio::test]
async fn the_explorer_passes_the_conformance_suites_authorization_scenarios() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = common::conformance_suite();
    let bin = common::bin();
    let context = root.join("tests/peers/conformance_context.py");
    let scenarios: Vec<(&str, String)> = [
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
    ]
    .into_iter()
    .map(|s| (s, format!("{bin} tools --url")))
    .chain([
        (
            "auth/basic-cimd",
            format!("{bin} tools --client-metadata-url https://conformance-test.local/client-metadata.json --url"),
        ),
        ("auth/scope-step-up", format!("{bin} call test-tool --url")),
        ("auth/pre-registration", format!("{} {} {bin} tools --url", common::python3().expect("python3"), context.display())),
    ])
    .collect();
    let runs: Vec<_> = scenarios
        .into_iter()
        .map(|(scenario, command)| {
            let suite = suite.clone();
            std::thread::spawn(move || {
                let (passed, log) =
                    common::client_scenario(&suite, scenario, &command, &[("BROWSER", browser())]);
                (scenario, passed, log)
            })
        })
        .collect();
    let mut failed = Vec::new();
    for run in runs {
        let (scenario, passed, log) = run.join().unwrap();
        if !passed {
            failed.push(format!("{scenario}:\n{log}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} scenario(s) failed:\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}

#[tokio::test]
async fn signing_in_to_a_server_without_oauth_says_there_is_nothing_to_sign_in_to() {
    let plain = common::spawn_http(&["dac".to_owned()]).await;
    let data = tempfile::tempdir().unwrap();
    let out = run(data.path(), true, &["auth", "login", &plain.url]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to sign in to"), "{err}");
    assert!(!data.path().join("oauth").exists(), "nothing kept");
    // And its tools are listed as before: OAuth stays out of the way of servers without it.
    let tools = run(data.path(), false, &["tools", "--url", &plain.url]).await;
    assert!(tools.status.success(), "{}", text(&tools));
}

/// A server that wants a plain bearer token (`serve --token`: a bare `WWW-Authenticate:
/// Bearer`, no OAuth metadata) is not explained as an OAuth sign-in: the error says, shortly,
/// that it asks for credentials and to give the token, and nothing of the OAuth registration
/// tried in passing (issue 29, item 13). With the token, it answers; a wrong one is refused.
#[tokio::test]
async fn a_plain_bearer_token_server_is_told_to_want_a_token_not_a_sign_in() {
    let server = common::spawn_http(&["dac".into(), "--token".into(), "s3cret".into()]).await;
    let data = tempfile::tempdir().unwrap();
    let out = run(data.path(), true, &["tools", "--url", &server.url]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("publishes no OAuth metadata") && err.contains("--token TOKEN"),
        "{err}"
    );
    assert!(err.contains("asks for credentials"), "{err}");
    assert!(
        !err.contains("registering") && !err.contains("refused every opening"),
        "{err}"
    );
    assert!(err.len() < 700, "short: {} characters: {err}", err.len());
    let out = run(
        data.path(),
        false,
        &["tools", "--url", &server.url, "--token", "wrong"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the server refused the token") && err.contains("BKN_TOKEN"),
        "{err}"
    );
    let out = run(
        data.path(),
        false,
        &["tools", "--url", &server.url, "--token", "s3cret"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
}
