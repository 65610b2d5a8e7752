//! The Streamable HTTP proxy: it listens (loopback by default) where the agent expects its
//! server, and passes every request to the upstream endpoint and every answer back: POST,
//! GET (the server's SSE stream), DELETE, their bodies byte for byte (an SSE stream as it
//! comes, event by event) and their headers (but those of the connection itself), so that
//! `Mcp-Session-Id`, `Mcp-Protocol-Version`, `Last-Event-ID` and the agent's own credentials
//! reach the server. With `--token`, the listening side asks for its own bearer token, which
//! is taken off before the request goes on.
//!
//! `GET /recording?from=OFFSET` gives the recording from that byte on (the explorer's
//! `--watch http://ADDRESS` follows a proxy this way, from another machine too).
//!
//! Each MCP session has its observer (JSON-RPC ids are the session's), all writing to one
//! recording; the JSON-RPC messages of request bodies, JSON answers and SSE events are shown
//! to it. Stopped, it lets the requests under way finish for `STOP_GRACE`, then ends
//! anyway (an SSE stream the agent holds open would keep it for ever).
//! A session ends with the agent's DELETE, when the upstream cannot be reached any
//! more, or when the proxy stops; a dialogue kept by DialogID (2026-07-28) or an HTTP session
//! with no exchange for `--dialogue-idle` is closed as idle, and its observer let go. Every
//! end is written to the recording (`observer`), so that a watcher never shows a dialogue
//! live that the proxy no longer follows.

use super::body::{self, Copy, End, Kept, Lost};
use super::observer::{Observer, Recording, Side};
use crate::session::journal::Closing;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Headers of one connection (RFC 9110 §7.6.1) and the length, which the proxy's own body
/// framing sets: never passed on.
const HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// The most dialogues (MCP sessions, or 2026-07-28 DialogIDs) the proxy follows at once.
const MAX_FOLLOWED: usize = 10_000;

/// How the key of what is not an MCP session starts (2026-07-28 traffic, requests before
/// `initialize` answered).
const NO_SESSION: &str = "(no session)";

#[derive(Clone)]
struct Proxy {
    upstream: String,
    client: reqwest::Client,
    token: Option<String>,
    server: String,
    recording: Recording,
    sessions: Arc<Mutex<HashMap<String, Observer>>>,
    /// Messages longer than this pass unchecked and unrecorded.
    limit: usize,
    /// The longest request body passed on.
    max_body: usize,
    /// What the copies of messages being read hold together.
    budget: Arc<body::Budget>,
    /// The recording's file, for `GET /recording`.
    record: Option<std::path::PathBuf>,
}

impl Proxy {
    fn observe(&self, session: &str, side: Side, kept: Kept) {
        self.observe_at(session, side, kept, (Instant::now(), SystemTime::now()));
    }

    /// `observe`, for a message that passed at `at` (an agent's request is shown to the
    /// observer only once the upstream answered, so its own time is taken before it is sent).
    fn observe_at(&self, session: &str, side: Side, kept: Kept, at: (Instant, SystemTime)) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        // What a client can make the proxy hold is bounded: past so many dialogues followed
        // at once, a new one still passes through, unrecorded, and the recording says so.
        if sessions.len() >= MAX_FOLLOWED && !sessions.contains_key(session) {
            self.recording.note(&format!(
                "the proxy follows at most {MAX_FOLLOWED} dialogues at once: {session} passes through unrecorded"
            ));
            return;
        }
        let observer = sessions.entry(session.to_owned()).or_insert_with(|| {
            let observer = Observer::sharing(&self.server, self.recording.clone());
            if session.starts_with(NO_SESSION) {
                observer
            } else {
                observer.of_http_session()
            }
        });
        match kept {
            Kept::Whole(message) => observer.line(side, &message, at.0, at.1),
            Kept::Lost(Lost::OverLimit, bytes) => observer.oversized(side, bytes),
            Kept::Lost(Lost::OverBudget, bytes) => observer.note(&format!(
                "{} sent a message of {bytes} bytes while the proxy held {} MiB of messages \
                 being read (its bound): passed on unchecked and not recorded",
                side.who(),
                self.budget.max() >> 20
            )),
        }
    }

    /// A copy for the recording, within the message limit and the proxy's budget.
    fn copy(&self) -> Copy {
        Copy::new(self.limit, self.budget.clone())
    }

    fn end_session(&self, session: &str, why: &str) {
        let observer = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
        if let Some(mut o) = observer {
            o.session_ended(Closing::Ended, why, Instant::now(), SystemTime::now());
        }
    }

    /// Every session and dialogue followed is over, `how` (the proxy goes on: a later
    /// request opens new ones).
    fn end_all(&self, how: Closing, why: &str) {
        let all: Vec<(String, Observer)> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .collect();
        for (_, mut o) in all {
            o.session_ended(how, why, Instant::now(), SystemTime::now());
        }
    }

    /// Every session still open is no longer followed (the proxy stops; the server may keep
    /// them), and the recording ends.
    pub fn finish(&self, why: &str) {
        self.end_all(Closing::RecordingStopped, why);
        self.recording.end(why);
    }

    /// Whether a dialogue is followed (one opened and not closed yet).
    fn following(&self) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(Observer::has_dialogues)
    }

    /// While dialogues are followed, whether the upstream still takes connections: one that
    /// refuses them is gone, and what it held with it (its dialogues are closed as ended
    /// without waiting for the agent's next request to find out).
    async fn upstream_gone(&self) {
        let Some(address) = reqwest::Url::parse(&self.upstream).ok().and_then(|u| {
            Some(format!(
                "{}:{}",
                u.host_str()?.trim_start_matches('[').trim_end_matches(']'),
                u.port_or_known_default()?
            ))
        }) else {
            return;
        };
        if !self.following() {
            return;
        }
        let tried = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect(address.as_str()),
        )
        .await;
        if let Ok(Err(e)) = tried
            && e.kind() == std::io::ErrorKind::ConnectionRefused
        {
            let why = format!(
                "the upstream {} no longer takes connections ({e})",
                self.upstream
            );
            self.end_all(Closing::Ended, &why);
            self.recording.note(&why);
        }
    }

    /// Closes the dialogues idle for `idle`, and lets go of the observers left with none.
    fn expire(&self, idle: Duration) {
        let at = Instant::now();
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, o| !o.expire(idle, at));
    }
}

/// What an HTTP proxy is given.
pub struct Settings {
    pub listen: SocketAddr,
    /// The real server's MCP endpoint.
    pub upstream: String,
    /// The bearer token the listening side asks for, if any.
    pub token: Option<String>,
    pub recording: Recording,
    /// The recording's file, for `GET /recording`.
    pub record: Option<std::path::PathBuf>,
    /// Messages longer than this pass unchecked (the recording says so).
    pub limit: usize,
    /// Request bodies longer than this are refused (413).
    pub max_body: usize,
    /// A dialogue kept by DialogID, or an HTTP session, with no exchange for this long is
    /// closed in the recording as idle (`--dialogue-idle`).
    pub dialogue_idle: Duration,
}

/// How long the requests under way when the proxy is stopped may take to finish: an SSE
/// stream the agent keeps open (a 2025-11-25 session's GET) would otherwise keep the proxy,
/// and its recording's end, waiting for ever.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Serves until `stop` resolves (with the name of what stopped it, e.g. the signal); says
/// the address it listens on through `bound` as soon as it does.
pub async fn run(
    settings: Settings,
    bound: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = &'static str> + Send + 'static,
) -> Result<(), String> {
    let Settings {
        listen,
        upstream,
        token,
        recording,
        record,
        limit,
        max_body,
        dialogue_idle,
    } = settings;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let client = reqwest::Client::builder()
        .pool_idle_timeout(crate::client::connection::POOL_IDLE)
        .build()
        .map_err(|e| e.to_string())?;
    let server = reqwest::Url::parse(&upstream)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| format!("{h}:{}", u.port_or_known_default().unwrap_or(0)))
        })
        .unwrap_or_else(|| upstream.clone());
    let proxy = Proxy {
        upstream,
        client,
        token,
        server,
        recording,
        sessions: Arc::new(Mutex::new(HashMap::new())),
        limit,
        max_body,
        budget: body::Budget::new(body::BUDGET.max(limit)),
        record,
    };
    let hosts = Arc::new(allowed_hosts(address));
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(forward))
        .route("/recording", axum::routing::get(recording_from))
        .with_state(proxy.clone())
        // DNS rebinding: a page on another site must not reach the proxy (nor, through it,
        // the upstream, whose own Host check sees the proxy's request) or read its recording.
        .layer(axum::middleware::from_fn(
            move |request: Request, next: axum::middleware::Next| {
                let hosts = hosts.clone();
                async move {
                    match foreign(&hosts, request.headers()) {
                        Some(refusal) => refusal,
                        None => next.run(request).await,
                    }
                }
            },
        ));
    bound(address);
    // The same bounds on connections, slow heads and idle ones as the reference servers.
    let cancel = tokio_util::sync::CancellationToken::new();
    let stopping = cancel.clone();
    let (stopped_by, what_stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let _ = stopped_by.send(stop.await);
        stopping.cancel();
    });
    // Idle dialogues closed, checked a few times within each expiry (at most every 30 s),
    // and the upstream's going away noticed as often.
    let expiring = proxy.clone();
    let tick = (dialogue_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    let ticker = tokio::spawn(async move {
        let mut every = tokio::time::interval(tick);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            expiring.expire(dialogue_idle);
            expiring.upstream_gone().await;
        }
    });
    // Each connection may hold one towards the upstream too.
    let bounds = crate::server::per_core::fit_to_descriptors(Default::default(), 2);
    let mut served = crate::server::per_core::serve(listener, app, cancel.clone(), bounds)
        .map_err(|e| e.to_string())?;
    let joined = tokio::select! {
        joined = &mut served => Some(joined),
        // Still open after the grace (an SSE stream, say): left to the process's end. Their
        // Requests still waiting are recorded without their answer.
        _ = cancel.cancelled() => tokio::time::timeout(STOP_GRACE, &mut served).await.ok(),
    };
    ticker.abort();
    // Sent before the cancel, so there once stopped (serving may also end on its own).
    let mut what_stopped = what_stopped;
    let why = match what_stopped.try_recv() {
        Ok(what) => format!("the proxy stopped ({what})"),
        Err(_) => "the proxy stopped".to_owned(),
    };
    proxy.finish(&why);
    match joined {
        Some(joined) => joined
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string())),
        None => Ok(()),
    }
}

/// The Host names the proxy answers to: loopback's, and the address it listens on.
fn allowed_hosts(listen: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if !listen.ip().is_unspecified() {
        hosts.push(listen.ip().to_string());
    }
    hosts
}

/// The refusal of a request whose Host (or Origin, when it has one) is not the proxy's own,
/// or that names two Hosts; a JSON-RPC error body, as every refusal of the transport.
fn foreign(hosts: &[String], headers: &HeaderMap) -> Option<Response> {
    let named = |value: &str| -> bool {
        // host[:port], [v6][:port], or a URL's authority for Origin.
        let authority = value
            .split_once("://")
            .map_or(value, |(_, rest)| rest)
            .trim_end_matches('/');
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else {
            authority.rsplit_once(':').map_or(authority, |(h, _)| h)
        };
        hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    };
    let refuse = |why: String| {
        Some(crate::server::transport::refusal(
            StatusCode::FORBIDDEN,
            why,
        ))
    };
    let all: Vec<&str> = headers
        .get_all("host")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    match all.as_slice() {
        [host] if named(host) => {}
        [host] => return refuse(format!("Host {host} is not this proxy's")),
        [] => return refuse("the request names no Host".into()),
        _ => return refuse("the request has more than one Host header".into()),
    }
    if let Some(origin) = headers.get("origin").and_then(|v| v.to_str().ok())
        && origin != "null"
        && !named(origin)
    {
        return refuse(format!("Origin {origin} is not this proxy's"));
    }
    None
}

/// The refusal of a request without the proxy's token, when it has one.
fn refused(proxy: &Proxy, headers: &HeaderMap) -> Option<Response> {
    let token = proxy.token.as_ref()?;
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(crate::server::transport::bearer_credentials);
    let matches = given.is_some_and(|g| {
        crate::server::transport::constant_time_eq(g.as_bytes(), token.as_bytes())
    });
    (!matches).then(|| {
        // A JSON-RPC error body, as every refusal of the transport (MCP-BINDING section 2).
        let mut response = crate::server::transport::refusal(
            StatusCode::UNAUTHORIZED,
            "this proxy wants its token (Authorization: Bearer …; see --token)".into(),
        );
        response.headers_mut().insert(
            axum::http::header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer"),
        );
        response
    })
}

/// The recording from byte `from` on (all of it without).
async fn recording_from(
    State(proxy): State<Proxy>,
    axum::extract::Query(query): axum::extract::Query<HashMap<String, u64>>,
    headers: HeaderMap,
) -> Response {
    if let Some(refusal) = refused(&proxy, &headers) {
        return refusal;
    }
    let Some(path) = proxy.record.clone() else {
        return crate::server::transport::refusal(
            StatusCode::NOT_FOUND,
            "this proxy does not record (--no-record)".into(),
        );
    };
    let from = query.get("from").copied().unwrap_or(0);
    // Streamed as it is read: a long journal is never held whole, however many read it.
    let opened = async {
        use tokio::io::AsyncSeekExt;
        let mut file = tokio::fs::File::open(&path).await?;
        file.seek(std::io::SeekFrom::Start(from)).await?;
        std::io::Result::Ok(file)
    };
    match opened.await {
        Ok(file) => (
            [("content-type", "application/x-ndjson")],
            Body::from_stream(tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024)),
        )
            .into_response(),
        Err(e) => crate::server::transport::refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read the recording: {e}"),
        ),
    }
}

async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if let Some(refusal) = refused(&proxy, &parts.headers) {
        return refusal;
    }
    // A declared body over the limit is refused before it is read.
    let declared =
        header(&parts.headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > proxy.max_body as u64) {
        crate::server::transport::linger(body);
        return too_long(&proxy);
    }
    // The body goes on as it comes, never held whole: the upstream reads it through the
    // proxy, which keeps the copy the recording needs.
    let (passing, passage) = body::Passing::new(
        body,
        proxy.max_body,
        declared,
        proxy.copy(),
        crate::server::transport::BODY_DEADLINE,
    );
    // The request's time is when it leaves, not when the answer is back: the latency of a
    // turn the recording gives is from one to the other.
    let asked = (Instant::now(), SystemTime::now());
    let sent = upstream_request(&proxy, &parts, passing, declared)
        .send()
        .await;
    let (end, length, kept) = {
        let mut p = passage.lock().unwrap_or_else(|p| p.into_inner());
        (p.end, p.copy.len(), p.copy.take())
    };
    let answer = match sent {
        Ok(a) => a,
        Err(e) => return unsent(&proxy, end, &e),
    };
    let whole = match (&kept, end) {
        (Kept::Whole(bytes), End::Whole) => Some(&bytes[..]),
        _ => None,
    };
    let session = session_of(&parts.headers, whole, answer.headers());
    if length > 0 {
        if end == End::Whole {
            proxy.observe_at(&session, Side::Agent, kept, asked);
        } else {
            // The upstream answered before the body ended (a refusal, say): nothing whole to
            // record.
            proxy.recording.note(&format!(
                "the agent's request body was answered HTTP {} after {length} bytes, before \
                 it ended: not recorded",
                answer.status().as_u16()
            ));
        }
    }
    if parts.method == axum::http::Method::DELETE {
        proxy.end_session(&session, "the agent ended its MCP session (DELETE)");
    }
    tapped_answer(proxy, answer, session)
}

/// The refusal of a request body over the proxy's limit.
fn too_long(proxy: &Proxy) -> Response {
    crate::server::transport::refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body exceeds {} bytes (the proxy's --max-body-mb)",
            proxy.max_body
        ),
    )
}

/// The agent's request as it goes to the upstream: its body as it comes (with the agent's
/// framing), its headers but the connection's own, the host and the proxy's token.
fn upstream_request(
    proxy: &Proxy,
    parts: &axum::http::request::Parts,
    passing: body::Passing,
    declared: Option<u64>,
) -> reqwest::RequestBuilder {
    let has_body =
        declared.is_some_and(|n| n > 0) || parts.headers.contains_key("transfer-encoding");
    let mut outgoing = proxy.client.request(parts.method.clone(), &proxy.upstream);
    if has_body {
        outgoing = outgoing.body(reqwest::Body::wrap_stream(passing));
        if let Some(n) = declared {
            // The agent's framing, so that the upstream knows the length as it would directly.
            outgoing = outgoing.header("content-length", n);
        }
    }
    for (name, value) in &parts.headers {
        let n = name.as_str();
        if HOP.contains(&n) || n == "host" || (proxy.token.is_some() && n == "authorization") {
            continue;
        }
        outgoing = outgoing.header(name, value);
    }
    outgoing
}

/// The agent's answer when the upstream got no request: its body was too long, too slow or
/// broken, or the upstream could not be reached (which the recording notes).
fn unsent(proxy: &Proxy, end: End, e: &reqwest::Error) -> Response {
    match end {
        End::TooLong => too_long(proxy),
        End::TooSlow => crate::server::transport::refusal(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not come whole within {} s",
                crate::server::transport::BODY_DEADLINE.as_secs()
            ),
        ),
        End::Broken => crate::server::transport::refusal(
            StatusCode::BAD_REQUEST,
            "the request body broke off".into(),
        ),
        End::Open | End::Whole => {
            let why = format!("the upstream {} could not be reached: {e}", proxy.upstream);
            if e.is_connect() {
                // Nothing listens there any more: what the server held of the dialogues
                // went with it (a later request opens new ones).
                proxy.end_all(Closing::Ended, &why);
            }
            proxy.recording.note(&why);
            crate::server::transport::refusal(
                StatusCode::BAD_GATEWAY,
                format!("the upstream could not be reached: {e}"),
            )
        }
    }
}

/// The session a request belongs to: the agent's, or the one the server gives at
/// initialize. Over 2026-07-28 there is none (a server may still send one: not heard), and a
/// turn's dialogue is named by the DialogID its `whole` body carries: one recorded dialogue
/// each, as a session is over 2025-11-25.
fn session_of(asked: &HeaderMap, whole: Option<&[u8]>, answered: &HeaderMap) -> String {
    let stateless = header(asked, "mcp-protocol-version")
        .is_some_and(|v| crate::client::generation::is_stateless(&v));
    match header(asked, "mcp-session-id") {
        Some(s) if !stateless => s,
        _ if stateless => whole
            .and_then(dialogue_of)
            .map(|d| format!("{NO_SESSION} DialogID {d}"))
            .unwrap_or_else(|| NO_SESSION.into()),
        _ => header(answered, "mcp-session-id").unwrap_or_else(|| NO_SESSION.into()),
    }
}

/// The upstream's answer passed back to the agent as it comes (its headers but the
/// connection's own), each message shown to the session's observer on its way.
fn tapped_answer(proxy: Proxy, answer: reqwest::Response, session: String) -> Response {
    let status = answer.status();
    let mut response = Response::builder().status(status.as_u16());
    let mut event_stream = false;
    for (name, value) in answer.headers() {
        if HOP.contains(&name.as_str()) {
            continue;
        }
        if name == "content-type" && value.as_bytes().starts_with(b"text/event-stream") {
            event_stream = true;
        }
        response = response.header(name.as_str(), value.as_bytes());
    }
    let tap = Tap {
        data: proxy.copy(),
        proxy,
        session,
        event_stream,
        pending: Vec::new(),
        skipping: false,
    };
    let stream = Tapped {
        inner: answer.bytes_stream().boxed(),
        tap: Some(tap),
    };
    response
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

/// The DialogID a `tools/call`'s arguments carry, read without parsing the rest.
fn dialogue_of(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        arguments: Option<Arguments>,
    }
    #[derive(serde::Deserialize)]
    struct Arguments {
        #[serde(rename = "DialogID")]
        dialog_id: Option<String>,
    }
    let call: Call = serde_json::from_slice(body).ok()?;
    if call.method.as_deref() != Some("tools/call") {
        return None;
    }
    call.params?.arguments?.dialog_id
}

/// The upstream's body as it comes, shown to the tap on its way.
struct Tapped {
    inner: futures::stream::BoxStream<'static, Result<Bytes, reqwest::Error>>,
    tap: Option<Tap>,
}

impl futures::Stream for Tapped {
    type Item = Result<Bytes, reqwest::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let polled = self.inner.poll_next_unpin(cx);
        match &polled {
            std::task::Poll::Ready(Some(Ok(bytes))) => {
                if let Some(tap) = &mut self.tap {
                    tap.feed(bytes);
                }
            }
            std::task::Poll::Ready(_) => {
                if let Some(mut tap) = self.tap.take() {
                    tap.finish();
                }
            }
            std::task::Poll::Pending => {}
        }
        polled
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(HeaderName::from_bytes(name.as_bytes()).ok()?)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// What the server sends, shown to the observer as it passes: a JSON answer when it is
/// whole, an SSE stream event by event (the `data` lines of an event make its message). Kept
/// within the message limit and the proxy's budget, as the agent's bodies are.
struct Tap {
    proxy: Proxy,
    session: String,
    event_stream: bool,
    /// The start of an SSE line not ended yet.
    pending: Vec<u8>,
    /// The rest of a line longer than the limit is passed over (its bytes still counted).
    skipping: bool,
    /// The JSON answer so far, or the current SSE event's data.
    data: Copy,
}

impl Tap {
    fn feed(&mut self, bytes: &[u8]) {
        if !self.event_stream {
            self.data.push(bytes);
            return;
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let Some(end) = rest.iter().position(|&b| b == b'\n') else {
                if self.skipping {
                    self.data.push(rest);
                } else {
                    self.pending.extend_from_slice(rest);
                    if self.pending.len() > self.proxy.limit {
                        // A line longer than any message kept: its data is lost to the
                        // recording (counted, so that the note says how long it was).
                        let line = std::mem::take(&mut self.pending);
                        self.data.push(line.strip_prefix(b"data:").unwrap_or(&line));
                        self.skipping = true;
                    }
                }
                return;
            };
            let (part, after) = (&rest[..end], &rest[end + 1..]);
            rest = after;
            if self.skipping {
                self.data.push(part);
                self.skipping = false;
                continue;
            }
            let whole;
            let line = if self.pending.is_empty() {
                part
            } else {
                self.pending.extend_from_slice(part);
                whole = std::mem::take(&mut self.pending);
                &whole[..]
            };
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                if !self.data.is_empty() {
                    let data = self.data.take();
                    self.proxy.observe(&self.session, Side::Server, data);
                }
            } else if let Some(value) = line.strip_prefix(b"data:") {
                if !self.data.is_empty() {
                    self.data.push(b"\n");
                }
                self.data.push(value.strip_prefix(b" ").unwrap_or(value));
            }
        }
    }

    /// The body ended (or broke off): a JSON answer is shown now.
    fn finish(&mut self) {
        if !self.event_stream && !self.data.is_empty() {
            let body = self.data.take();
            self.proxy.observe(&self.session, Side::Server, body);
        }
    }
}
