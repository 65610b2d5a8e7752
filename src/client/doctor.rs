//! The connection doctor: the steps of reaching an MCP server, tried one by one, each with what
//! it found and, when it failed, what to do. `bkn-explorer doctor` prints them all; a failed
//! HTTP connection uses `http_failure` to say which step failed instead of "connection error".

use super::connection::{ConnectOptions, Connection, chain, find_bkn_tools};
use super::generation::ProtocolChoice;
use super::opening::{Answered, Opening};
use super::spec::{ServerSpec, TransportSpec};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};

/// One step and how it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub step: &'static str,
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do about a failure.
    pub advice: Option<String>,
}

impl Check {
    fn ok(step: &'static str, detail: impl Into<String>) -> Check {
        Check {
            step,
            ok: true,
            detail: detail.into(),
            advice: None,
        }
    }

    fn failed(step: &'static str, detail: impl Into<String>, advice: impl Into<String>) -> Check {
        Check {
            step,
            ok: false,
            detail: detail.into(),
            advice: Some(advice.into()),
        }
    }

    /// "step: detail (advice)", for a one-line error.
    pub fn sentence(&self) -> String {
        match &self.advice {
            Some(a) => {
                let mut advice = a.chars();
                let first = advice.next().map(|c| c.to_uppercase().to_string());
                format!(
                    "{}: {}. {}{}",
                    self.step,
                    self.detail.trim_end_matches('.'),
                    first.unwrap_or_default(),
                    advice.as_str()
                )
            }
            None => format!("{}: {}", self.step, self.detail),
        }
    }
}

/// Where a server is, with its variables read.
enum Target {
    Http {
        url: String,
        headers: Vec<(String, String)>,
        legacy_sse: bool,
    },
    Stdio {
        command: String,
        args: Vec<String>,
    },
    Embedded,
}

fn expanded(spec: &ServerSpec) -> Result<Target, String> {
    let env = |name: &str| std::env::var(name).ok();
    let scope = spec.scope(&env);
    let expand = |v: &str| scope.expand(v).map_err(|e| scope.describe(&e));
    Ok(match &spec.transport {
        TransportSpec::Http(h) => {
            let mut headers = h
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), expand(v)?)))
                .collect::<Result<Vec<_>, String>>()?;
            if let Some(t) = &h.token {
                headers.push(("Authorization".into(), format!("Bearer {}", expand(t)?)));
            }
            Target::Http {
                url: expand(&h.url)?,
                headers,
                legacy_sse: h.legacy_sse,
            }
        }
        TransportSpec::Stdio(s) => Target::Stdio {
            command: expand(&s.command)?,
            args: s.args.iter().map(|a| expand(a)).collect::<Result<_, _>>()?,
        },
        TransportSpec::Embedded { .. } => Target::Embedded,
    })
}

/// Runs every step for a server until one fails (the ones after it cannot tell anything).
pub async fn examine(spec: &ServerSpec, options: &ConnectOptions) -> Vec<Check> {
    let asked = options.protocol_for(spec);
    // The transport's own steps, on the definition's values with their variables read.
    let mut checks = match expanded(spec) {
        Err(e) => vec![Check::failed(
            "variables",
            e,
            "set the variable, or give a default",
        )],
        Ok(Target::Http {
            url,
            headers,
            legacy_sse,
        }) => http_steps(&url, &headers, legacy_sse, options.timeout, asked).await,
        Ok(Target::Stdio { command, args }) => {
            stdio_steps(&command, &args, options.timeout, asked).await
        }
        Ok(Target::Embedded) => vec![Check::ok("command", "this program's own reference server")],
    };
    if checks.iter().any(|c| !c.ok) {
        return checks;
    }
    // Last, the whole connection as every command makes it: handshake, tools, resources.
    match Connection::connect(spec, options).await {
        Ok(c) => {
            let tools = c.summary.tools.len();
            let bkn = find_bkn_tools(&c.summary.tools);
            let names: Vec<String> = bkn
                .iter()
                .map(|(i, n)| format!("{n} ({})", i.name()))
                .collect();
            let version = c.summary.protocol_version.clone();
            let dialog = match c.dialog_id_origin {
                super::connection::DialogIdOrigin::McpSession => "the MCP session id",
                super::connection::DialogIdOrigin::Client => "chosen by the client",
            };
            c.close().await;
            // A DialogID is the binding's: said only of a server with a BKN tool.
            let dialog = if names.is_empty() {
                String::new()
            } else {
                format!(", DialogID {dialog}")
            };
            checks.push(Check::ok(
                "session",
                format!(
                    "{} (asked: {asked}){dialog}, {tools} tool{}",
                    super::generation::describe_for(&version, !names.is_empty()),
                    if tools == 1 { "" } else { "s" }
                ),
            ));
            if names.is_empty() {
                checks.push(Check::failed(
                    "bkn tools",
                    "no tool carries BKN-DAC or BKN-USR",
                    "a Domain Access or User State Refinement server offers a tool whose inputSchema has \"Header\": {\"const\": \"PGM-KDA-V1.0\"} (or PGM-KUS-V1.0); `bkn-explorer tools` lists what it offers",
                ));
            } else {
                checks.push(Check::ok("bkn tools", names.join(", ")));
            }
        }
        Err(e) => checks.push(Check::failed(
            "session",
            e.message,
            "the steps before it passed: see the server's log",
        )),
    }
    checks
}

/// Why an HTTP connection failed: the first step that fails, said in a sentence.
pub struct HttpFailure {
    pub sentence: String,
    /// The server refused for want of credentials and advertises no OAuth: an OAuth sign-in
    /// cannot help, and the sentence already says what does.
    pub needs_a_token: bool,
}

/// Why an HTTP connection failed, as the first step that fails (None when every step passes,
/// and the failure is further on).
pub async fn http_failure(
    url: &str,
    headers: &[(String, String)],
    legacy_sse: bool,
    asked: ProtocolChoice,
) -> Option<HttpFailure> {
    let failed = http_steps(url, headers, legacy_sse, Duration::from_secs(5), asked)
        .await
        .into_iter()
        .find(|c| !c.ok)?;
    Some(HttpFailure {
        sentence: failed.sentence(),
        needs_a_token: failed.advice.as_deref() == Some(NO_OAUTH_ADVICE),
    })
}

/// The HTTP steps (name, connect, tls, http, mcp), up to the first that fails.
async fn http_steps(
    url: &str,
    headers: &[(String, String)],
    legacy_sse: bool,
    timeout: Duration,
    asked: ProtocolChoice,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let passed = passed_http_steps(&mut checks, url, headers, legacy_sse, timeout, asked).await;
    if let Err(failed) = passed {
        checks.push(failed);
    }
    checks
}

/// Pushes each HTTP step that passes onto `checks`; the first that fails is the error (the
/// ones after it cannot tell anything).
async fn passed_http_steps(
    checks: &mut Vec<Check>,
    url: &str,
    headers: &[(String, String)],
    legacy_sse: bool,
    timeout: Duration,
    asked: ProtocolChoice,
) -> Result<(), Check> {
    let parsed = address_step(url)?;
    let (named, first) = name_step(&parsed, timeout).await?;
    checks.push(named);
    checks.push(connect_step(first, timeout).await?);
    // The MCP handshake's first request, as this client sends it in the generation asked for.
    let probe = HttpProbe::new(parsed, headers, timeout, asked)?;
    let response = probe
        .post(0)
        .send()
        .await
        .map_err(|e| request_failure(&probe.url, &e))?;
    if probe.url.scheme() == "https" {
        checks.push(Check::ok("tls", "the certificate is trusted"));
    }
    let mut opened = FirstResponse::read(response, &probe.openings[0]).await?;
    if opened.status == reqwest::StatusCode::UNAUTHORIZED && !gives_authorization(headers) {
        opened.oauth_advertised =
            oauth_advertised(&probe.client, &probe.url, opened.challenge.as_deref()).await;
    }
    let sse_note = legacy_sse_note(legacy_sse);
    checks.push(http_status_step(
        &opened, url, &probe.url, headers, sse_note,
    )?);
    checks.push(mcp_step(&probe, &opened, sse_note).await);
    // The session the probe opened is ended, as a client should.
    probe.end_session(opened.session).await;
    Ok(())
}

/// The endpoint's URL, if it is one this client can reach (no step of its own when it is).
fn address_step(url: &str) -> Result<reqwest::Url, Check> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(u),
        _ => Err(Check::failed(
            "address",
            format!("{url} is not an http:// or https:// URL"),
            "write the endpoint's whole URL, e.g. http://127.0.0.1:8080/mcp",
        )),
    }
}

/// The host's name resolved: the step, and the first address it has.
async fn name_step(
    url: &reqwest::Url,
    timeout: Duration,
) -> Result<(Check, std::net::SocketAddr), Check> {
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_matches(['[', ']']);
    let port = url.port_or_known_default().unwrap_or(80);
    let first = match tokio::time::timeout(timeout, tokio::net::lookup_host((bare, port))).await {
        Ok(Ok(mut addresses)) => addresses.next(),
        Ok(Err(e)) => {
            return Err(Check::failed(
                "name",
                format!("cannot resolve {host}: {e}"),
                "check the host name's spelling, the DNS, or /etc/hosts",
            ));
        }
        Err(_) => {
            return Err(Check::failed(
                "name",
                format!(
                    "resolving {host} took over {}",
                    crate::duration::show(timeout)
                ),
                "check the DNS",
            ));
        }
    };
    let Some(first) = first else {
        return Err(Check::failed(
            "name",
            format!("{host} has no address"),
            "check the host name",
        ));
    };
    let detail = if bare.parse::<std::net::IpAddr>().is_ok() {
        format!("{host} (an address)")
    } else {
        format!("{host} is {}", first.ip())
    };
    Ok((Check::ok("name", detail), first))
}

/// A TCP connection to the address, within 3 s (or the timeout, if shorter).
async fn connect_step(address: std::net::SocketAddr, timeout: Duration) -> Result<Check, Check> {
    match tokio::time::timeout(
        Duration::from_secs(3).min(timeout),
        tokio::net::TcpStream::connect(address),
    )
    .await
    {
        Ok(Ok(_)) => Ok(Check::ok(
            "connect",
            format!("{address} accepts connections"),
        )),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Err(Check::failed(
            "connect",
            format!("{address} refused the connection"),
            "is the server running, and on this port?",
        )),
        Ok(Err(e)) => Err(Check::failed(
            "connect",
            format!("cannot reach {address}: {e}"),
            "check the network, a VPN or a firewall",
        )),
        Err(_) => Err(Check::failed(
            "connect",
            format!("{address} did not accept a connection within 3 s"),
            "a firewall may drop the packets; check the port",
        )),
    }
}

/// The handshake's openings, each POSTed to the endpoint as this client sends it.
struct HttpProbe<'a> {
    client: reqwest::Client,
    url: reqwest::Url,
    /// The user's headers (a token among them), sent with each opening.
    headers: &'a [(String, String)],
    asked: ProtocolChoice,
    openings: Vec<Opening>,
}

impl<'a> HttpProbe<'a> {
    fn new(
        url: reqwest::Url,
        headers: &'a [(String, String)],
        timeout: Duration,
        asked: ProtocolChoice,
    ) -> Result<Self, Check> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| Check::failed("http", format!("no HTTP client: {e}"), "report this"))?;
        Ok(HttpProbe {
            client,
            url,
            headers,
            asked,
            openings: Opening::sequence(asked),
        })
    }

    /// The request of the opening at `at` (its index is its JSON-RPC id).
    fn post(&self, at: usize) -> reqwest::RequestBuilder {
        let opening = &self.openings[at];
        let mut request = self
            .client
            .post(self.url.clone())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(opening.with_id(at as u64).to_string());
        for (k, v) in opening.headers() {
            request = request.header(k, v);
        }
        for (k, v) in self.headers {
            request = request.header(k, v);
        }
        request
    }

    async fn end_session(&self, session: Option<String>) {
        if let Some(id) = session {
            let _ = self
                .client
                .delete(self.url.clone())
                .header("Mcp-Session-Id", id)
                .send()
                .await;
        }
    }
}

/// The first opening got no HTTP answer: a TLS failure on https, or no HTTP at all.
fn request_failure(url: &reqwest::Url, e: &reqwest::Error) -> Check {
    let text = chain(e);
    let tls = url.scheme() == "https"
        && ["certificate", "tls", "TLS", "handshake", "SSL"]
            .iter()
            .any(|w| text.contains(w));
    if tls {
        Check::failed(
            "tls",
            text,
            "the server's certificate is not trusted here, or it does not speak TLS on this port (try http://)",
        )
    } else {
        Check::failed(
            "http",
            text,
            "the server accepted the connection but not an HTTP request",
        )
    }
}

/// The answer to the first opening, as far as the http and mcp steps read it.
struct FirstResponse {
    status: reqwest::StatusCode,
    session: Option<String>,
    content_type: String,
    challenge: Option<String>,
    allow: Option<String>,
    /// On a 401 with no credentials given: whether the server advertises OAuth metadata.
    oauth_advertised: bool,
    /// The body on one line, or what it is (see `body_head`).
    head: String,
    /// The JSON-RPC message it carries, whatever the status: a refusal of the opening comes
    /// with a 4xx.
    answer: Option<serde_json::Value>,
}

impl FirstResponse {
    async fn read(response: reqwest::Response, opening: &Opening) -> Result<Self, Check> {
        let status = response.status();
        let header = |name| header_text(response.headers(), name).map(str::to_owned);
        let session = header("mcp-session-id");
        let content_type = header("content-type").unwrap_or_default();
        let challenge = header("www-authenticate");
        let allow = header("allow");
        let body = read_bounded(response, PROBE_LIMIT)
            .await
            .map_err(|overgrown| {
                overgrown_opening(format!(
                    "{status}: {}",
                    overgrown.sentence(&opening.describe())
                ))
            })?;
        Ok(FirstResponse {
            status,
            session,
            head: body_head(&content_type, &body),
            answer: jsonrpc_answer(&content_type, &body),
            content_type,
            challenge,
            allow,
            oauth_advertised: false,
        })
    }
}

/// A header's value, when it is text.
fn header_text<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The mcp step failed by an answer to an opening that never ended within `PROBE_LIMIT`.
fn overgrown_opening(detail: String) -> Check {
    Check::failed(
        "mcp",
        detail,
        "a server answers the opening with one message of a few KiB; this one never ended it \
         (see the server's log)",
    )
}

/// The body on one line (whole: a refusal's reason is often at its end), or what it is when it
/// is a web page.
fn body_head(content_type: &str, body: &str) -> String {
    if content_type.starts_with("text/html") || body.trim_start().starts_with('<') {
        return "an HTML page".into();
    }
    // Whole when it is a message (a JSON-RPC answer is quoted from `answer` whole); a body that
    // is not one is shown as far as tells what it is.
    let line = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown: String = line.chars().take(2000).collect();
    if shown.len() < line.len() {
        format!("{shown}… ({} bytes more)", line.len() - shown.len())
    } else {
        line
    }
}

/// Added to a failure's advice when the servers file names the legacy HTTP+SSE transport.
fn legacy_sse_note(legacy_sse: bool) -> &'static str {
    if legacy_sse {
        " The file says type \"sse\": the legacy HTTP+SSE transport (before MCP 2025-03-26), which this client does not speak; if the server also offers Streamable HTTP (often at /mcp), point url there."
    } else {
        ""
    }
}

/// The HTTP status of the first answer: a success, or a JSON-RPC error the mcp step reads,
/// passes; any other status is the failure, with what it means.
fn http_status_step(
    opened: &FirstResponse,
    url: &str,
    parsed: &reqwest::Url,
    headers: &[(String, String)],
    sse_note: &str,
) -> Result<Check, Check> {
    let status = opened.status;
    let head = &opened.head;
    match status.as_u16() {
        // Before the JSON-RPC error below: a 401 carries one too (the reference server's
        // says it needs a token), but it is the credentials that failed, not the handshake.
        401 => Err(unauthorized(url, headers, opened)),
        200..=299 => Ok(Check::ok(
            "http",
            format!("{status}, {}", opened.content_type),
        )),
        400..=499
            if opened
                .answer
                .as_ref()
                .is_some_and(|a| a.get("error").is_some()) =>
        {
            Ok(Check::ok(
                "http",
                format!("{status} with a JSON-RPC error (read below)"),
            ))
        }
        403 => Err(Check::failed(
            "http",
            format!("403 Forbidden: {head}"),
            "the credentials are known but not allowed here",
        )),
        404 => Err(Check::failed(
            "http",
            format!("404 Not Found: nothing at {}", parsed.path()),
            format!("check the path: Streamable HTTP endpoints are often at /mcp.{sse_note}"),
        )),
        405 | 415 => {
            let allowed = opened
                .allow
                .as_ref()
                .map(|a| format!(" (Allow: {a})"))
                .unwrap_or_default();
            Err(Check::failed(
                "http",
                format!(
                    "{status}{allowed}: {} is not a Streamable HTTP MCP endpoint",
                    parsed.path()
                ),
                format!(
                    "an MCP endpoint takes a POST of JSON-RPC; check the URL's path.{sse_note}"
                ),
            ))
        }
        501 => Err(Check::failed(
            "http",
            format!("{status}: the server does not take a POST here ({head})"),
            format!("this is not an MCP server, or not its MCP endpoint.{sse_note}"),
        )),
        _ => Err(Check::failed(
            "http",
            format!("{status}: {head}"),
            format!("the server failed the first request of the MCP handshake.{sse_note}"),
        )),
    }
}

/// A 401: what happened and the fix. A token given was refused; with none, the server asks
/// for credentials (its WWW-Authenticate quoted), and OAuth is offered only when the server
/// advertises OAuth metadata (`oauth_advertised`): a plain bearer-token server (`serve
/// --token`) is told to be given a token, not signed in to.
fn unauthorized(url: &str, headers: &[(String, String)], opened: &FirstResponse) -> Check {
    let asks = opened
        .challenge
        .as_deref()
        .map(|c| format!(" (WWW-Authenticate: {c})"))
        .unwrap_or_default();
    if gives_authorization(headers) {
        return Check::failed(
            "http",
            format!("401 Unauthorized: the server refused the token{asks}"),
            "check --token / BKN_TOKEN (or the Authorization header): the server refused the \
             one given (is it this server's, and still valid?)",
        );
    }
    let advice = if opened.oauth_advertised {
        format!(
            "it uses OAuth: sign in with `bkn-explorer auth login {url}` (the other commands \
             and the explorer sign in by themselves unless --no-sign-in), or give a token: \
             --token TOKEN (or BKN_TOKEN)"
        )
    } else {
        NO_OAUTH_ADVICE.to_owned()
    };
    Check::failed(
        "http",
        format!("401 Unauthorized: the server asks for credentials{asks}"),
        advice,
    )
}

/// The advice for a 401 from a server that advertises no OAuth (also how `http_failure` knows
/// that a sign-in cannot help).
const NO_OAUTH_ADVICE: &str = "it publishes no OAuth metadata: give it a token with --token \
    TOKEN (or BKN_TOKEN), --header \"Authorization: Bearer …\", or \"headers\" in the servers file";

fn gives_authorization(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
}

/// Whether the server behind a 401 advertises OAuth: its challenge names a protected-resource
/// metadata document (RFC 9728, what MCP asks of an OAuth server), or one of the well-known
/// metadata documents answers (the protected resource's, or, MCP 2025-03-26's fallback, the
/// authorization server's at the root).
async fn oauth_advertised(
    client: &reqwest::Client,
    url: &reqwest::Url,
    challenge: Option<&str>,
) -> bool {
    if challenge.is_some_and(|c| c.to_ascii_lowercase().contains("resource_metadata")) {
        return true;
    }
    let path = url.path().trim_end_matches('/');
    let documents = [
        format!("/.well-known/oauth-protected-resource{path}"),
        "/.well-known/oauth-protected-resource".to_owned(),
        "/.well-known/oauth-authorization-server".to_owned(),
    ];
    for document in documents {
        let mut at = url.clone();
        at.set_path(&document);
        at.set_query(None);
        let Ok(response) = client.get(at).send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let metadata = answer_of(response, PROBE_LIMIT).await;
        if metadata
            .is_some_and(|m| m.get("authorization_servers").is_some() || m.get("issuer").is_some())
        {
            return true;
        }
    }
    false
}

/// The first answer judged; a refused opening is followed by the next the client would try.
async fn mcp_step(probe: &HttpProbe<'_>, opened: &FirstResponse, sse_note: &str) -> Check {
    let openings = &probe.openings;
    let mut refusals = Vec::new();
    let mut answer = opened.answer.clone();
    let mut at = 0;
    loop {
        let opening = &openings[at];
        let Some(a) = answer.take() else {
            return Check::failed(
                "mcp",
                format!(
                    "the answer to {} is not JSON-RPC ({}): {}",
                    opening.describe(),
                    opened.content_type,
                    opened.head
                ),
                format!("this is not an MCP server, or not its MCP endpoint.{sse_note}"),
            );
        };
        match opening.judge(&a) {
            Answered::Speaks {
                name,
                version,
                also,
            } => {
                let others = if also.len() > 1 {
                    format!(" (it lists {})", also.join(", "))
                } else {
                    String::new()
                };
                let before = if refusals.is_empty() {
                    String::new()
                } else {
                    format!(" after {} refused", openings[0].describe())
                };
                return Check::ok(
                    "mcp",
                    format!(
                        "{name} speaks {}: {} answered{before}{others}",
                        super::generation::describe_plain(&version),
                        opening.describe()
                    ),
                );
            }
            Answered::Refused(why) => {
                refusals.push(why);
                at += 1;
                if at == openings.len() {
                    return refused_step(probe.asked, &refusals);
                }
                answer = match probe.post(at).send().await {
                    Ok(r) => match probe_answer(r, PROBE_LIMIT).await {
                        Ok(answer) => answer,
                        Err(overgrown) => {
                            return overgrown_opening(overgrown.sentence(&openings[at].describe()));
                        }
                    },
                    Err(_) => None,
                };
            }
        }
    }
}

/// The mcp step when the server refused every opening the client would try.
fn refused_step(asked: ProtocolChoice, refusals: &[String]) -> Check {
    Check::failed(
        "mcp",
        Opening::refused(asked, refusals),
        Opening::advice(asked, refusals),
    )
}

/// The most of a stderr line kept for the tail shown.
const STDERR_LINE: usize = 4096;

/// One line of a child's output (None at its end), read within `limit` bytes: a longer one is
/// given as its start and how long it was, never held whole.
async fn bounded_line(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    limit: usize,
) -> std::io::Result<Option<String>> {
    use super::stdio::Line;
    Ok(match super::stdio::read_line(reader, limit).await? {
        Line::Eof => None,
        Line::Text(line) => Some(String::from_utf8_lossy(&line).into_owned()),
        Line::TooLong { size, head, .. } => Some(format!(
            "{}… (a line of {}, over the {} read)",
            String::from_utf8_lossy(&head),
            super::limits::human_size(size),
            super::limits::human_size(limit)
        )),
    })
}

/// The most of a probe's answer that is read: an opening's answer is a few KiB, and a server
/// that answers with an endless stream (or gigabytes) must not take the client's memory.
pub const PROBE_LIMIT: usize = 1024 * 1024;

/// A probe's answer that grew past the limit before it was whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overgrown {
    /// An event stream (whose first message never ended within the limit), or a JSON body.
    pub stream: bool,
    pub limit: usize,
}

impl Overgrown {
    /// What happened, for a failed step.
    pub fn sentence(&self, what: &str) -> String {
        let size = super::limits::human_size(self.limit);
        if self.stream {
            format!(
                "the server's event stream answering {what} went past {size} without a \
                 whole JSON-RPC message; the request was ended there"
            )
        } else {
            format!(
                "the server's answer to {what} is longer than {size}; the request was ended \
                 there"
            )
        }
    }
}

/// The cut of an event stream past the limit, found again in the SSE reader's error.
#[derive(Debug)]
struct PastLimit;

impl std::fmt::Display for PastLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the answer went past the probe's limit")
    }
}

impl std::error::Error for PastLimit {}

/// A response's body as text, read within `limit` bytes, each chunk looked at once (no copy of
/// what came before, nothing held past the limit). An event stream is read only up to its
/// first JSON-RPC message, given back as that one event (`data: …`); one that passes the
/// limit first, or a JSON body longer than the limit, is `Overgrown`: a message was promised
/// and did not come whole. Anything else (a web page) is cut at the limit: only its start is
/// ever shown.
async fn read_bounded(response: reqwest::Response, limit: usize) -> Result<String, Overgrown> {
    use futures::StreamExt;
    let content_type = header_text(response.headers(), "content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        let mut read = 0usize;
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            read = read.saturating_add(chunk.len());
            if read > limit {
                return Err(std::io::Error::other(PastLimit));
            }
            Ok(chunk)
        });
        let mut events = std::pin::pin!(sse_stream::SseStream::from_bytes_stream(bytes));
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    if let Some(data) = event.data.filter(|d| {
                        d.trim_start().starts_with('{')
                            && serde_json::from_str::<serde_json::Value>(d).is_ok()
                    }) {
                        return Ok(format!("data: {}\n\n", data.replace('\n', "\ndata: ")));
                    }
                }
                Err(sse_stream::Error::Body(e))
                    if e.downcast_ref::<std::io::Error>()
                        .and_then(std::io::Error::get_ref)
                        .is_some_and(|e| e.is::<PastLimit>()) =>
                {
                    return Err(Overgrown {
                        stream: true,
                        limit,
                    });
                }
                // Not an event stream after all, or it broke off: no message in it.
                Err(_) => break,
            }
        }
        return Ok(String::new());
    }
    let json = content_type.starts_with("application/json");
    let mut response = response;
    let mut body: Vec<u8> = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit.saturating_sub(body.len());
        if chunk.len() > room {
            if json {
                return Err(Overgrown {
                    stream: false,
                    limit,
                });
            }
            body.extend_from_slice(&chunk[..room]);
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The JSON-RPC message a response carries (read within `limit`), if it carries one whole.
pub async fn answer_of(response: reqwest::Response, limit: usize) -> Option<serde_json::Value> {
    probe_answer(response, limit).await.ok().flatten()
}

/// The JSON-RPC message a response carries (read within `limit`), or why it could not be read.
async fn probe_answer(
    response: reqwest::Response,
    limit: usize,
) -> Result<Option<serde_json::Value>, Overgrown> {
    let content_type = header_text(response.headers(), "content-type")
        .unwrap_or("")
        .to_owned();
    let body = read_bounded(response, limit).await?;
    Ok(jsonrpc_answer(&content_type, &body))
}

/// A JSON-RPC message in a response's body: JSON, or the first event of an event stream.
fn jsonrpc_answer(content_type: &str, body: &str) -> Option<serde_json::Value> {
    let text = if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| d.starts_with('{'))
            .unwrap_or("")
    } else {
        body
    };
    serde_json::from_str(text).ok()
}

/// The stdio steps (command, start, stdout, mcp or handshake), up to the first that fails.
async fn stdio_steps(
    command: &str,
    args: &[String],
    timeout: Duration,
    asked: ProtocolChoice,
) -> Vec<Check> {
    let program = match command_step(command) {
        Ok(program) => program,
        Err(failed) => return vec![failed],
    };
    let mut checks = vec![Check::ok("command", program.display().to_string())];
    match StdioProbe::start(&program, args) {
        Ok(probe) => checks.extend(probe.handshake(asked, timeout).await),
        Err(failed) => checks.push(failed),
    }
    checks
}

/// The program a command names: a path, or a name found on the PATH.
fn command_step(command: &str) -> Result<std::path::PathBuf, Check> {
    let found = if command.contains('/') {
        std::path::Path::new(command)
            .is_file()
            .then(|| command.into())
    } else {
        which::which(command).ok()
    };
    found.ok_or_else(|| {
        Check::failed(
            "command",
            format!(
                "{command} is not found{}",
                if command.contains('/') {
                    ""
                } else {
                    " on the PATH"
                }
            ),
            "check the command's name, install it, or give its whole path",
        )
    })
}

/// A stdio server started for the handshake: its stdin and stdout, and the tail of its stderr.
struct StdioProbe {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    /// Read within a bound: a server that writes an endless line holds no more than that of
    /// the doctor's memory.
    stdout: BufReader<tokio::process::ChildStdout>,
    stderr_tail: tokio::task::JoinHandle<Vec<String>>,
    /// Lines of stdout that are not JSON-RPC.
    junk: Vec<String>,
}

impl StdioProbe {
    /// The start step: the program spawned with its stdio piped (or why it could not be).
    fn start(program: &std::path::Path, args: &[String]) -> Result<StdioProbe, Check> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Check::failed(
                    "start",
                    format!("cannot start {}: {e}", program.display()),
                    "is it executable?",
                )
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let stderr_tail = tokio::spawn(last_lines(child.stderr.take().expect("piped")));
        Ok(StdioProbe {
            child,
            stdin,
            stdout,
            stderr_tail,
            junk: Vec::new(),
        })
    }

    /// The openings tried, and the steps that tell how the server answered; the server is
    /// ended after.
    async fn handshake(mut self, asked: ProtocolChoice, timeout: Duration) -> Vec<Check> {
        let openings = Opening::sequence(asked);
        let (refusals, outcome) = self.try_openings(&openings, timeout).await;
        let checks = match outcome {
            Ok(answered) => answered_steps(&self.junk, answered, asked, &refusals),
            Err(ended) => {
                drop(self.stdin);
                let _ = self.child.start_kill();
                let tail = tokio::time::timeout(Duration::from_secs(1), self.stderr_tail)
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or_default();
                let unanswered = &openings[refusals.len()];
                vec![handshake_failure(
                    ended, unanswered, timeout, &self.junk, &tail,
                )]
            }
        };
        let _ = self.child.start_kill();
        checks
    }

    /// Each opening in turn until one is answered with a result (or all are refused): the
    /// refusals, and the answer that is not one (a refusal when all were), or how the server
    /// ended (None: it did not answer within the timeout).
    async fn try_openings(
        &mut self,
        openings: &[Opening],
        timeout: Duration,
    ) -> (Vec<String>, Result<Answered, Option<String>>) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut refusals = Vec::new();
        for (at, opening) in openings.iter().enumerate() {
            let line = format!("{}\n", opening.with_id(at as u64));
            let _ = self.stdin.write_all(line.as_bytes()).await;
            let _ = self.stdin.flush().await;
            match self.answer_to(at, deadline).await {
                Ok(v) => match opening.judge(&v) {
                    Answered::Refused(why) => refusals.push(why),
                    speaks => return (refusals, Ok(speaks)),
                },
                Err(how) => return (refusals, Err(how)),
            }
        }
        (refusals, Ok(Answered::Refused(String::new())))
    }

    /// The message answering the request of `id`, past notifications and log messages; lines
    /// that are not JSON are kept as junk. Err(None) at the deadline, Err(Some(how)) when the
    /// server ended.
    async fn answer_to(
        &mut self,
        id: usize,
        deadline: tokio::time::Instant,
    ) -> Result<serde_json::Value, Option<String>> {
        loop {
            match tokio::time::timeout_at(deadline, bounded_line(&mut self.stdout, PROBE_LIMIT))
                .await
            {
                Err(_) => return Err(None),
                Ok(Ok(None)) | Ok(Err(_)) => return Err(Some(self.how_it_ended().await)),
                Ok(Ok(Some(line))) => {
                    if line.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<serde_json::Value>(&line) {
                        Ok(v) if v.get("id") == Some(&serde_json::json!(id)) => return Ok(v),
                        Ok(_) => continue, // a notification or a log message
                        Err(_) => self.junk.push(line),
                    }
                }
            }
        }
    }

    /// After its stdout closed: its exit status, if it comes within 2 s.
    async fn how_it_ended(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        match status {
            Ok(Ok(s)) => match s.code() {
                Some(c) => format!("it exited with status {c}"),
                None => "it was killed by a signal".into(),
            },
            _ => "it closed its standard output".into(),
        }
    }
}

/// The last 5 lines of a child's stderr (each read within `STDERR_LINE`), once it ends.
async fn last_lines(stderr: tokio::process::ChildStderr) -> Vec<String> {
    let mut lines = BufReader::new(stderr);
    let mut tail = std::collections::VecDeque::new();
    while let Ok(Some(l)) = bounded_line(&mut lines, STDERR_LINE).await {
        tail.push_back(l);
        if tail.len() > 5 {
            tail.pop_front();
        }
    }
    tail.into_iter().collect()
}

/// The first 3 lines of junk, quoted (each to its first 100 characters).
fn quoted(junk: &[String]) -> String {
    junk.iter()
        .take(3)
        .map(|l| format!("\"{}\"", l.chars().take(100).collect::<String>()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The steps of a stdio server that answered: stdout (when it wrote junk) and mcp.
fn answered_steps(
    junk: &[String],
    answered: Answered,
    asked: ProtocolChoice,
    refusals: &[String],
) -> Vec<Check> {
    let mut checks = Vec::new();
    if !junk.is_empty() {
        checks.push(Check::failed(
            "stdout",
            format!(
                "it wrote {} line{} that {} not JSON-RPC: {}",
                junk.len(),
                if junk.len() == 1 { "" } else { "s" },
                if junk.len() == 1 { "is" } else { "are" },
                quoted(junk)
            ),
            "a stdio server writes only MCP messages to stdout; logs go to stderr",
        ));
    }
    checks.push(match answered {
        Answered::Speaks { name, version, .. } => Check::ok(
            "mcp",
            format!(
                "{name} speaks {}",
                super::generation::describe_plain(&version)
            ),
        ),
        Answered::Refused(_) => refused_step(asked, refusals),
    });
    checks
}

/// The handshake step of a stdio server that ended (`Some(how)`) or said nothing in time
/// (`None`) before answering `unanswered`, with its junk and the tail of its stderr.
fn handshake_failure(
    ended: Option<String>,
    unanswered: &Opening,
    timeout: Duration,
    junk: &[String],
    tail: &[String],
) -> Check {
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {}", tail.join(" | "))
    };
    let junk_note = if junk.is_empty() {
        String::new()
    } else {
        format!("; it wrote lines that are not JSON-RPC: {}", quoted(junk))
    };
    match ended {
        Some(how) => Check::failed(
            "handshake",
            format!(
                "{how} before answering {}{junk_note}{tail}",
                unanswered.describe()
            ),
            "run the command by hand to see why it stops; check its arguments and environment",
        ),
        None => Check::failed(
            "handshake",
            format!(
                "no answer to {} within {}{junk_note}{tail}",
                unanswered.describe(),
                crate::duration::show(timeout)
            ),
            if junk.is_empty() {
                "is it an MCP server over stdio? some need an argument (e.g. --stdio) to speak on stdin and stdout"
            } else {
                "a stdio server writes only MCP messages to stdout; logs go to stderr"
            },
        ),
    }
}
