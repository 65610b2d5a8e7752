//! Serving a reference server over stdio or Streamable HTTP.
//!
//! HTTP is guarded as MCP's security practices ask: it binds to loopback unless told
//! otherwise, checks the Host and Origin headers (DNS rebinding), requires a bearer token when
//! one is set, and limits the size of a request body.

use crate::server::dialogues::{DialogueLimits, Dialogues};
use crate::server::mcp::{Backend, BknServer, DialogueState};
use crate::server::stdio::Turns;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Serves one session over this process's stdin and stdout until the client closes them.
/// When they are pipes (as when a client spawns the server) they are read through epoll
/// rather than tokio's blocking-thread stdin, which halves the time of a turn.
pub async fn serve_stdio<B: Backend>(
    backend: Arc<B>,
    limits: DialogueLimits,
) -> anyhow::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    serve_lines(backend, stdin, stdout, limits).await
}

/// Serves one session of newline-delimited JSON-RPC read from `input` and written to
/// `output` (stdio, or one end of an in-process pipe) until `input` ends. A 2025-11-25
/// client's dialogue is the session; 2026-07-28 requests (no session) may carry several
/// dialogues, kept by DialogID within `limits`.
pub async fn serve_lines<B, R, W>(
    backend: Arc<B>,
    input: R,
    output: W,
    limits: DialogueLimits,
) -> anyhow::Result<()>
where
    B: Backend,
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let server = BknServer::new(backend, BknServer::<B>::keyed_dialogues(limits));
    let turns = server.clone();
    let transport = crate::server::stdio::ServerStdio::new(input, output).answering(Box::new(
        move |name, arguments, place, irregular| {
            turns.call_directly(name, arguments, place, irregular)
        },
    ));
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // The input ended before any `initialize`: the normal end for 2026-07-28 clients
        // (no session, each request answered on its own) or a client that sent nothing.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(anyhow::anyhow!("the MCP session did not start: {e}")),
    };
    running.waiting().await?;
    Ok(())
}

#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Host names accepted besides loopback (and the bound address).
    pub allowed_hosts: Vec<String>,
    /// When set, every request needs `Authorization: Bearer <token>`.
    pub token: Option<String>,
    pub max_body_bytes: usize,
    /// A session or a dialogue kept by DialogID with no traffic for `idle` ends, with its
    /// dialogue state; at most `max` of each are held.
    pub dialogues: DialogueLimits,
    /// Connections held, and how long a slow or idle one is waited for.
    pub bounds: crate::server::per_core::Bounds,
}

impl HttpOptions {
    pub fn loopback(port: u16) -> HttpOptions {
        HttpOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            allowed_hosts: Vec::new(),
            token: None,
            max_body_bytes: 4 * 1024 * 1024,
            dialogues: DialogueLimits::default(),
            bounds: Default::default(),
        }
    }
}

/// A running HTTP server.
pub struct HttpServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// The MCP endpoint, e.g. `http://127.0.0.1:43567/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting requests and ends every session.
    pub async fn shutdown(self) -> std::io::Result<()> {
        self.shutdown.cancel();
        self.task.await.unwrap_or(Ok(()))
    }

    /// Runs until the server stops (on error, or when `shutdown` is called elsewhere).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.unwrap_or(Ok(()))
    }

    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// Binds and starts serving; returns once the socket is bound (so the port is known).
pub async fn serve_http<B: Backend>(
    backend: Arc<B>,
    options: HttpOptions,
) -> anyhow::Result<HttpServer> {
    let shutdown = CancellationToken::new();
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", options.addr))?;
    let addr = listener.local_addr()?;
    let server_name = format!("bkn-explorer-{}", backend.interface().code());
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.dialogues.idle);
    let sessions = Arc::new(sessions);
    let keyed = BknServer::<B>::keyed_dialogues(options.dialogues);
    let mcp = mcp_endpoint(
        backend,
        &options,
        addr,
        &shutdown,
        sessions.clone(),
        keyed.clone(),
    );
    let token = options.token.clone().map(Arc::new);
    let app =
        axum::Router::new()
            .nest_service(
                "/mcp",
                mcp.layer(axum::middleware::from_fn(jsonrpc_refusals)),
            )
            // For monitoring and the load test: how many sessions' state is held.
            .route("/health", health(server_name, sessions, keyed))
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let token = token.clone();
                    async move {
                        require_token(token.as_deref().map(String::as_str), request, next).await
                    }
                },
            ));
    let task = crate::server::per_core::serve(listener, app, shutdown.clone(), options.bounds)
        .map_err(|e| anyhow::anyhow!("cannot start serving HTTP: {e}"))?;
    Ok(HttpServer {
        addr,
        shutdown,
        task,
    })
}

/// The Hosts a request may name (the loopback names, the bound address, `--allowed-host`)
/// and the Origins a browser's request may come from (the same hosts, any port).
fn hosts_and_origins(addr: SocketAddr, allowed: &[String]) -> (Vec<String>, Vec<String>) {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(String::from)
        .to_vec();
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(allowed.iter().cloned());
    let origins: Vec<String> = hosts
        .iter()
        .flat_map(|h| {
            let h = if h.contains(':') && !h.starts_with('[') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        })
        .collect();
    (hosts, origins)
}

/// The MCP endpoint: rmcp's Streamable HTTP service for 2025-11-25 sessions, behind the
/// 2026-07-28 turns answered before it and the bound on sessions.
fn mcp_endpoint<B: Backend>(
    backend: Arc<B>,
    options: &HttpOptions,
    addr: SocketAddr,
    shutdown: &CancellationToken,
    sessions: Arc<LocalSessionManager>,
    keyed: Arc<Dialogues<DialogueState<B::Dialogue>>>,
) -> axum::Router {
    let (hosts, origins) = hosts_and_origins(addr, &options.allowed_hosts);
    let tool: Arc<str> = backend.tool_name().into();
    let max_sessions = options.dialogues.max;
    let backend_for_turns = backend.clone();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        {
            let keyed = keyed.clone();
            move || Ok(BknServer::new(backend.clone(), keyed.clone()))
        },
        sessions.clone(),
        config,
    );
    let max_body = options.max_body_bytes;
    // 2026-07-28 turns answered before rmcp (which would build a service for each request):
    // one handler, beside the dialogues kept by DialogID that every handler shares.
    let turns: Arc<Turns> = {
        let server = BknServer::new(backend_for_turns, keyed);
        Arc::new(Box::new(move |name, arguments, place, irregular| {
            server.call_directly(name, arguments, place, irregular)
        }))
    };
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                jsonrpc_bodies(request, next, max_body, tool.clone(), turns.clone())
            },
        ))
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                guard_sessions(request, next, sessions.clone(), max_sessions)
            },
        ))
}

/// `GET /health`: the server's name and how many dialogues it holds, by where they live
/// (MCP-BINDING section 3: MCP sessions for 2025-11-25, by DialogID for 2026-07-28).
fn health<D: Default + Send + 'static>(
    server_name: String,
    held: Arc<LocalSessionManager>,
    keyed: Arc<Dialogues<D>>,
) -> axum::routing::MethodRouter {
    axum::routing::get(move || {
        let server_name = server_name.clone();
        let keyed = keyed.clone();
        let held = held.clone();
        async move {
            // The MCP sessions the session manager holds (each with its state).
            let sessions = held.sessions.read().await.len();
            let keyed = keyed.len();
            axum::Json(serde_json::json!({
                "status": "ok",
                "server": server_name,
                "dialogues": {
                    "2025-11-25": sessions,
                    "2026-07-28": keyed,
                },
                "sessions": sessions,
            }))
        }
    })
}

/// The arguments of a `tools/call` nested deeper than rmcp's JSON reader goes (serde_json's
/// default of 128 levels), read here and handed to the tool beside the request (MCP-BINDING
/// section 6: a conformant message is never refused for its depth below 1,000 levels).
#[derive(Clone, Debug)]
pub struct DeepArguments(pub serde_json::Map<String, serde_json::Value>);

/// Around rmcp's POST handling: a body that is not a JSON-RPC message gets a JSON-RPC error
/// (rmcp answers a plain-text 415), and a body nested too deep for rmcp's reader has its
/// arguments read here.
async fn jsonrpc_bodies(
    request: Request,
    next: Next,
    max_body: usize,
    tool: Arc<str>,
    turns: Arc<Turns>,
) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match read_body(&parts.headers, body, max_body, "(see --max-body-mb)").await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let mut bytes = bytes;
    if crate::protocol::json::deeper_than(&bytes, crate::protocol::json::RMCP_DEPTH).is_some()
        && let Some((shallow, arguments)) = stash_arguments(&bytes)
    {
        parts.extensions.insert(DeepArguments(arguments));
        bytes = shallow.into();
    }
    if let Some(error) = bad_tool_call(&bytes, &tool) {
        // The error of a well-formed request: in a 200, as MCP answers (MCP-BINDING
        // section 2); only the transport's refusals have a 4xx.
        return (StatusCode::OK, axum::Json(error)).into_response();
    }
    let header_version = parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    if let Some(error) = crate::server::jsonrpc::reply_to_removed(&bytes, header_version) {
        return (StatusCode::NOT_FOUND, axum::Json(error)).into_response();
    }
    if let Some(error) = crate::server::jsonrpc::reply_to_bad_id(&bytes) {
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    let deep = parts.extensions.get::<DeepArguments>().is_some();
    let answered = if deep {
        None
    } else {
        stateless_turn(&parts.headers, &bytes, &tool, &turns)
            // Whatever the generation: rmcp cannot read a number beyond a double, and takes a
            // member given twice silently; either is a finding of the Request.
            .or_else(|| {
                is_call_of(&bytes, &tool)
                    .then(|| crate::server::stdio::answer_irregular(&bytes, &turns))
                    .flatten()
            })
    };
    if let Some(answer) = answered {
        return (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            answer,
        )
            .into_response();
    }
    let json_body = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"));
    let response = next
        .run(Request::from_parts(
            parts,
            axum::body::Body::from(bytes.clone()),
        ))
        .await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && json_body
        && let Some(error) = crate::server::jsonrpc::reply_to_unreadable(&bytes)
    {
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    response
}

/// A 2026-07-28 turn (a `tools/call` of the server's tool, no session) answered here, as a
/// JSON response, when everything about it is as that version says (its headers, the whole
/// `_meta` envelope, no log asked for): rmcp's stateless path builds and runs a service for
/// each request, a quarter more of the server's CPU a turn than a 2025-11-25 session's.
/// Anything else (a header missing or disagreeing, a log level, a deep message) is rmcp's,
/// which answers or refuses it as the version says.
fn stateless_turn(
    headers: &axum::http::HeaderMap,
    bytes: &[u8],
    tool: &str,
    turns: &Turns,
) -> Option<Vec<u8>> {
    let is =
        |name: &str, value: &str| headers.get(name).and_then(|v| v.to_str().ok()) == Some(value);
    let accepts_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    if !(is("mcp-protocol-version", "2026-07-28")
        && is("mcp-method", "tools/call")
        && is("mcp-name", tool)
        && accepts_json
        && headers.get("mcp-session-id").is_none())
    {
        return None;
    }
    // A log asked for travels as a notification on an event stream: rmcp's to send.
    if bytes
        .windows(LOG_LEVEL_KEY.len())
        .any(|w| w == LOG_LEVEL_KEY.as_bytes())
    {
        return None;
    }
    let credentials = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    crate::server::stdio::answer_directly(
        bytes,
        turns,
        false,
        crate::server::dialogues::Principal::of(credentials),
    )
}

const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// Whether a body is a `tools/call` of the server's tool, from a cheap look at its text.
fn is_call_of(bytes: &[u8], tool: &str) -> bool {
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    has(b"\"tools/call\"") && has(format!("\"{tool}\"").as_bytes())
}

/// Every refusal of the transport with a JSON-RPC error body (MCP-BINDING section 2): rmcp
/// answers some in plain text (a wrong Content-Type or Accept, an unknown session); their
/// status stays, their text becomes the error's message.
async fn jsonrpc_refusals(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_owned()
    } else {
        text
    };
    let mut out = refusal(status, message);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// How long a request body may take to arrive once its head has.
pub const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// A request's body, within `limit` bytes and `BODY_DEADLINE`: a declared length over the
/// limit is refused (413) before any of it is read, a body that does not come whole in time
/// 408 (a client that declares a gigabyte and sends ten bytes is not waited for). `hint` ends
/// the 413's sentence (the option that sets the limit). Servers and the proxy use it.
pub async fn read_body(
    headers: &axum::http::HeaderMap,
    body: axum::body::Body,
    limit: usize,
    hint: &str,
) -> Result<axum::body::Bytes, Response> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body exceeds {limit} bytes {hint}"),
        )
    };
    if headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > limit as u64)
    {
        linger(body);
        return Err(too_large());
    }
    match tokio::time::timeout(BODY_DEADLINE, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(too_large()),
        Err(_) => Err(refusal(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not come whole within {} s",
                BODY_DEADLINE.as_secs()
            ),
        )),
    }
}

/// How much of a refused body is read and thrown away, and for how long, so that the client
/// sees the refusal: a connection closed with unread bytes is reset, and a client still
/// writing its body then gets a broken pipe instead of the 413 (nginx's lingering close).
/// Nothing read is kept; a client that declares a gigabyte and stops is not waited for long.
const LINGER_BYTES: usize = 64 * 1024 * 1024;
const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads and discards what comes of a refused request's body, within `LINGER_BYTES` and
/// `LINGER_TIME`, apart from the answer (which goes at once).
pub fn linger(body: axum::body::Body) {
    tokio::spawn(async move {
        use futures::StreamExt;
        let mut data = body.into_data_stream();
        let mut seen = 0usize;
        let drained = async {
            while let Some(Ok(chunk)) = data.next().await {
                seen += chunk.len();
                if seen > LINGER_BYTES {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, drained).await;
    });
}

/// A refusal of the transport: its status, and a JSON-RPC error object as its body
/// (MCP-BINDING section 2), never plain text.
pub fn refusal(status: StatusCode, message: String) -> Response {
    let body = crate::server::jsonrpc::error(serde_json::Value::Null, -32000, message);
    (status, axum::Json(body)).into_response()
}

/// Before anything else: a request that names two Hosts is refused (which one the Host check
/// would see is not defined); a DELETE of a session the server does not hold is 404 (rmcp
/// answers 202); an `initialize` past the bound on sessions is refused with 503.
async fn guard_sessions(
    request: Request,
    next: Next,
    sessions: Arc<LocalSessionManager>,
    max: usize,
) -> Response {
    if request.headers().get_all(header::HOST).iter().count() > 1 {
        return refusal(
            StatusCode::BAD_REQUEST,
            "the request has more than one Host header".into(),
        );
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let held = |id: &str| {
        sessions
            .sessions
            .try_read()
            .map(|m| m.keys().any(|k| k.as_ref() == id))
            .unwrap_or(true)
    };
    match (request.method(), session) {
        (&axum::http::Method::DELETE, Some(id)) if !held(&id) => {
            return refusal(
                StatusCode::NOT_FOUND,
                format!("this server holds no MCP session {id}"),
            );
        }
        (&axum::http::Method::POST, None) => {
            let count = sessions.sessions.try_read().map(|m| m.len()).unwrap_or(0);
            if count >= max
                && request
                    .headers()
                    .get("mcp-protocol-version")
                    .is_none_or(|v| v.as_bytes() < b"2026-07-28".as_slice())
            {
                // Only a new session's `initialize` is refused here; everything else a
                // session-less client sends is answered (or refused) by what it asks.
                let (parts, body) = request.into_parts();
                let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
                    return refusal(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!("this server holds its maximum of {max} sessions"),
                    );
                };
                if crate::protocol::rpc::Probe::read(&bytes)
                    .and_then(|p| p.request("initialize"))
                    .is_some()
                {
                    return refusal(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "this server holds its maximum of {max} MCP sessions; a new one \
                             cannot be opened now (the ones it holds go on)"
                        ),
                    );
                }
                return next
                    .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                    .await;
            }
        }
        _ => {}
    }
    next.run(request).await
}

/// A `tools/call` of a tool this server does not have, or whose arguments are not an object:
/// -32602, in a 200 (MCP-BINDING section 2: a well-formed request's JSON-RPC error is not a
/// refusal of the transport). Read cheaply: the arguments are only
/// looked at, not parsed.
fn bad_tool_call(bytes: &[u8], tool: &str) -> Option<serde_json::Value> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        id: Option<serde_json::Value>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        arguments: Option<&'a serde_json::value::RawValue>,
    }
    let call: Call = serde_json::from_slice(bytes).ok()?;
    if call.method != Some("tools/call") {
        return None;
    }
    let id = call.id.filter(|i| i.is_string() || i.is_number())?;
    let params = call.params?;
    let reason = match (&params.name, params.arguments) {
        (Some(name), _) if name != tool => {
            format!("Invalid params of tools/call: unknown tool {name}: this server has {tool}")
        }
        (_, Some(arguments)) if !arguments.get().trim_start().starts_with('{') => {
            "Invalid params of tools/call: the tool's \"arguments\" must be a JSON object \
             (MCP-BINDING section 1: the Request itself)"
                .into()
        }
        _ => return None,
    };
    Some(crate::server::jsonrpc::error(
        id,
        crate::server::jsonrpc::INVALID_PARAMS,
        reason,
    ))
}

/// A `tools/call` body with its arguments replaced by `{}`, and the arguments.
fn stash_arguments(bytes: &[u8]) -> Option<(Vec<u8>, serde_json::Map<String, serde_json::Value>)> {
    let mut message: serde_json::Value = crate::protocol::json::frame_from_slice(bytes).ok()?;
    if message.get("method").and_then(serde_json::Value::as_str) != Some("tools/call") {
        return None;
    }
    let arguments = message.pointer_mut("/params/arguments")?;
    let serde_json::Value::Object(deep) = std::mem::replace(arguments, serde_json::json!({}))
    else {
        return None;
    };
    Some((serde_json::to_vec(&message).ok()?, deep))
}

async fn require_token(token: Option<&str>, request: Request, next: Next) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials);
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
        return next.run(request).await;
    }
    let mut response = refusal(
        StatusCode::UNAUTHORIZED,
        "this bkn-explorer server needs Authorization: Bearer <token> (see --token)".into(),
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// The credentials of `Bearer <token>`: the scheme's name is case-insensitive (RFC 9110).
pub fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start())
}

/// Compares without leaking where the first difference is, nor (beyond whether they differ)
/// how the lengths compare: every byte of the longer is looked at.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut differ = (a.len() != b.len()) as u8;
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        differ |= x ^ y;
    }
    differ == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token comparison answers right whatever the lengths (it looks at every byte of the
    /// longer, never stopping at the first difference or a length mismatch: that it takes the
    /// same time is the code's shape, which a timing test on a shared machine cannot show).
    #[test]
    fn tokens_compare_equal_only_when_equal() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(constant_time_eq(b"", b""));
        for (a, b) in [
            (&b"s3cret"[..], &b"s3cre"[..]),
            (b"s3cret", b"s3cret\0"),
            (b"s3cret", b""),
            (b"s3cret", b"S3cret"),
            (b"s3cret", b"s3cres"),
        ] {
            assert!(!constant_time_eq(a, b), "{a:?} {b:?}");
            assert!(!constant_time_eq(b, a), "{b:?} {a:?}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_read_whatever_its_case() {
        for header in ["Bearer t", "bearer t", "BEARER  t", " bEaReR t"] {
            assert_eq!(bearer_credentials(header), Some("t"), "{header}");
        }
        assert_eq!(bearer_credentials("Basic t"), None);
        assert_eq!(bearer_credentials("Bearer"), None);
    }
}
