//! The hot path for turns over Streamable HTTP, as `stdio::Direct` is over stdio: a
//! `tools/call` is posted on an HTTP/1.1 connection of this module's own (hyper's client
//! connection, kept alive between turns) and its answer is read from the response as it comes,
//! past rmcp's service loop and its reqwest client. rmcp still does the handshake, discovery,
//! the end of the session, and every message that is not a turn.
//!
//! Why: in `load` (8 sessions against the reference server) a turn through rmcp cost the
//! client about 95 µs of CPU, as much as the server's; a POST through reqwest alone costs about
//! 37 µs, on hyper's connection about 22 µs (the rest is the kernel's TCP).
//!
//! It is used only where it sends what rmcp would send (`HttpTurns::for_session`): plain
//! `http://` (no TLS), no proxy named in the environment (reqwest would use it), a protocol
//! version before 2026 (whose requests carry more headers), and no OAuth token (rmcp's client
//! refreshes it). A server that answers a turn with 401 turns the path off for the connection:
//! it did not take the Request, which then goes through rmcp, which signs in.

use crate::client::decode;
use crate::client::event::{ConnectionId, EventSink, LogKind};
use crate::client::limits;
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderMap, HeaderName, HeaderValue};
use http::{StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use rmcp::model::{
    ErrorCode, ErrorData, JsonRpcResponse, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a turn waits for the end of the response stream after the answer (it usually
/// comes in the same read, or the next).
const END_AFTER_THE_ANSWER: Duration = Duration::from_millis(5);

/// How many times a turn's event stream is resumed when it ends before the answer.
const MAX_RESUMES: usize = 3;

/// How long to wait before resuming when the server did not say (rmcp's default).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// A response body read as server-sent events.
type Events = sse_stream::SseStream<
    http_body_util::combinators::MapErr<
        Limited<hyper::body::Incoming>,
        fn(BoxError) -> std::io::Error,
    >,
>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The SSE reader wants an error type of its own: the size limit is found again in it
/// (`is_too_long`).
fn event_stream(body: Limited<hyper::body::Incoming>) -> Events {
    sse_stream::SseStream::new(
        body.map_err(std::io::Error::other as fn(BoxError) -> std::io::Error),
    )
}

/// What the hot path needs to send what rmcp would send on the session.
pub struct SessionHeaders<'a> {
    pub url: &'a str,
    pub session_id: &'a str,
    pub protocol_version: &'a str,
    /// `--header` and the server file's headers, expanded.
    pub custom: &'a HashMap<HeaderName, HeaderValue>,
    /// `--token`, expanded: sent as `Authorization: Bearer …`.
    pub token: Option<&'a str>,
}

/// Turns of one MCP session over Streamable HTTP.
pub struct HttpTurns {
    /// The request target (path and query); the host goes in `headers`.
    target: Uri,
    /// Where to connect (`host:port`).
    address: String,
    headers: HeaderMap,
    /// Connections not in use. A turn takes one (or opens one) and gives it back once its
    /// response has been read to the end; a connection whose turn was dropped is closed.
    idle: Arc<Mutex<Vec<SendRequest<Full<Bytes>>>>>,
    next: AtomicU64,
    limit: usize,
    connect_timeout: Duration,
    connection: ConnectionId,
    events: EventSink,
    /// Off after a server asked for authorization: rmcp's client signs in.
    on: AtomicBool,
}

/// Why a turn on the hot path got no answer.
#[derive(Debug)]
pub enum TurnFailure {
    /// The server no longer knows the session (404).
    SessionGone,
    /// The server asks for authorization (401): it did not take the Request, which may be
    /// sent again through rmcp.
    Unauthorized,
    /// The server cannot be reached: nothing was sent.
    Unreachable(String),
    /// The Request was sent and no answer could be read.
    Broken(String),
}

/// What a message on a turn's response is, to the turn.
enum Read {
    Answer(ServerJsonRpcMessage),
    Notification(ServerNotification),
    /// A request of the server's own (the id, the method).
    Request(RequestId, String),
    /// Anything else (an answer to another request): logged and passed over.
    Other,
}

impl HttpTurns {
    /// The hot path for a session, when it sends what rmcp would; None otherwise (the turns
    /// then go through rmcp).
    pub fn for_session(
        session: SessionHeaders<'_>,
        limit: usize,
        connect_timeout: Duration,
        connection: ConnectionId,
        events: EventSink,
    ) -> Option<Arc<HttpTurns>> {
        if session.protocol_version.starts_with("2026") || proxy_in_environment() {
            return None;
        }
        let url: Uri = session.url.parse().ok()?;
        if url.scheme_str() != Some("http") {
            return None;
        }
        let authority = url.authority()?.clone();
        let address = format!("{}:{}", authority.host(), url.port_u16().unwrap_or(80));
        let target = Uri::builder()
            .path_and_query(url.path_and_query()?.clone())
            .build()
            .ok()?;
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(authority.as_str()).ok()?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json"),
        );
        headers.insert(
            HeaderName::from_static("mcp-session-id"),
            HeaderValue::from_str(session.session_id).ok()?,
        );
        headers.insert(
            HeaderName::from_static("mcp-protocol-version"),
            HeaderValue::from_str(session.protocol_version).ok()?,
        );
        if let Some(token) = session.token {
            headers.insert(
                AUTHORIZATION,
                HeaderValue::from_str(&format!("Bearer {token}")).ok()?,
            );
        }
        for (name, value) in session.custom {
            headers.insert(name.clone(), value.clone());
        }
        Some(Arc::new(HttpTurns {
            target,
            address,
            headers,
            idle: Arc::default(),
            next: AtomicU64::new(1),
            limit,
            connect_timeout,
            connection,
            events,
            on: AtomicBool::new(true),
        }))
    }

    /// Whether turns take this path (not after a server asked for authorization).
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Posts a `tools/call` of `name` with `arguments` (a JSON object, as text). Returns its id
    /// (for `notifications/cancelled` when the caller stops waiting) and the answer to wait
    /// for; the server's notifications before the answer go to `notified`.
    pub fn call<'a>(
        self: &'a Arc<Self>,
        name: &str,
        arguments: &RawValue,
        notified: impl Fn(ServerNotification) + 'a,
    ) -> (
        RequestId,
        impl Future<Output = Result<ServerJsonRpcMessage, TurnFailure>> + 'a,
    ) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id_text = format!("call-{n}");
        let body = decode::tool_call_text(&id_text, name, arguments);
        let id = RequestId::String(id_text.into());
        let awaited = id.clone();
        let answer = async move {
            let body = body.map_err(|e| TurnFailure::Unreachable(e.to_string()))?;
            self.exchange(body, &awaited, &notified).await
        };
        (id, answer)
    }

    async fn exchange(
        self: &Arc<Self>,
        body: Vec<u8>,
        id: &RequestId,
        notified: &impl Fn(ServerNotification),
    ) -> Result<ServerJsonRpcMessage, TurnFailure> {
        let mut sender = self.sender().await?;
        let logged = self.events.wants_logs().then(|| body.clone());
        let response = sender
            .send_request(self.post(body))
            .await
            .map_err(|e| TurnFailure::Broken(format!("the HTTP request failed: {e}")))?;
        if let Some(body) = logged {
            let text = String::from_utf8(body).unwrap_or_default();
            self.events.log(self.connection, LogKind::Sent, text);
        }
        let status = response.status();
        match status {
            StatusCode::UNAUTHORIZED => {
                self.on.store(false, Ordering::Relaxed);
                self.events.log(
                    self.connection,
                    LogKind::Client,
                    "the server asks for authorization: turns go through rmcp's client from now on",
                );
                return Err(TurnFailure::Unauthorized);
            }
            StatusCode::NOT_FOUND => return Err(TurnFailure::SessionGone),
            s if !s.is_success() => {
                let text = response
                    .into_body()
                    .collect()
                    .now_or_never()
                    .and_then(Result::ok)
                    .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                    .unwrap_or_default();
                let text: String = text.chars().take(300).collect();
                return Err(TurnFailure::Broken(format!(
                    "the server answered HTTP {s}{}",
                    if text.is_empty() {
                        String::new()
                    } else {
                        format!(": {text}")
                    }
                )));
            }
            _ => {}
        }
        let stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let body = Limited::new(response.into_body(), self.ceiling());
        if !stream {
            let bytes = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return Ok(self.too_large(id, self.ceiling(), false));
                }
                Err(e) => {
                    return Err(TurnFailure::Broken(format!(
                        "the server's response broke off: {e}"
                    )));
                }
            };
            self.give_back(sender);
            if bytes.len() > self.limit {
                return Ok(self.too_large(id, bytes.len(), true));
            }
            return match self.read(&bytes, id) {
                Read::Answer(answer) => Ok(answer),
                _ => Err(TurnFailure::Broken(
                    "the server's response is not the answer to the call".into(),
                )),
            };
        }
        let mut events = event_stream(body);
        // Where to resume when the stream ends before the answer (the server names its events
        // and may say how long to wait: SSE resumability).
        let mut last_event_id: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut resumed = 0;
        loop {
            let Some(event) = events.next().await else {
                // Ended before the answer: read to the end, so the connection can carry the
                // GET that resumes it.
                let Some(from) = last_event_id.clone().filter(|_| resumed < MAX_RESUMES) else {
                    return Err(TurnFailure::Broken(
                        "the server's event stream ended before the answer".into(),
                    ));
                };
                resumed += 1;
                tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
                sender = self.sender_after(sender).await?;
                events = self.resume(&mut sender, &from).await?;
                continue;
            };
            let event = match event {
                Ok(event) => event,
                Err(e) if is_too_long(&e) => return Ok(self.too_large(id, self.ceiling(), false)),
                Err(e) => {
                    return Err(TurnFailure::Broken(format!(
                        "the server's event stream broke: {e}"
                    )));
                }
            };
            if let Some(event_id) = event.id.filter(|i| !i.is_empty()) {
                last_event_id = Some(event_id);
            }
            if let Some(ms) = event.retry {
                retry = Some(Duration::from_millis(ms));
            }
            let Some(data) = event.data.filter(|d| !d.is_empty()) else {
                continue;
            };
            if data.len() > self.limit {
                return Ok(self.too_large(id, data.len(), true));
            }
            let read = self.read(data.as_bytes(), id);
            if self.events.wants_logs() {
                self.events.log(self.connection, LogKind::Received, data);
            }
            match read {
                Read::Answer(answer) => {
                    self.finish(sender, events).await;
                    return Ok(answer);
                }
                Read::Notification(notification) => notified(notification),
                Read::Request(request, method) => self.refuse(request, method),
                Read::Other => {}
            }
        }
    }

    /// A connection for the next request on the session after a response read to its end:
    /// the same one when it can carry it, else another.
    async fn sender_after(
        &self,
        mut sender: SendRequest<Full<Bytes>>,
    ) -> Result<SendRequest<Full<Bytes>>, TurnFailure> {
        if !sender.is_closed() && sender.ready().await.is_ok() {
            return Ok(sender);
        }
        self.sender().await
    }

    /// Resumes the session's event stream after the event `from` (GET with `Last-Event-ID`),
    /// as the MCP transport says a client does when a stream ends before its answer.
    async fn resume(
        &self,
        sender: &mut SendRequest<Full<Bytes>>,
        from: &str,
    ) -> Result<Events, TurnFailure> {
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("the event stream ended before the answer: resuming after event {from}"),
        );
        let mut request = http::Request::new(Full::new(Bytes::new()));
        *request.uri_mut() = self.target.clone();
        *request.headers_mut() = self.headers.clone();
        request.headers_mut().remove(CONTENT_TYPE);
        request
            .headers_mut()
            .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        request.headers_mut().insert(
            HeaderName::from_static("last-event-id"),
            HeaderValue::from_str(from)
                .map_err(|e| TurnFailure::Broken(format!("event id {from:?}: {e}")))?,
        );
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| TurnFailure::Broken(format!("resuming the event stream failed: {e}")))?;
        match response.status() {
            StatusCode::NOT_FOUND => Err(TurnFailure::SessionGone),
            s if !s.is_success() => Err(TurnFailure::Broken(format!(
                "the event stream ended before the answer, and resuming it was refused (HTTP {s})"
            ))),
            _ => Ok(event_stream(Limited::new(
                response.into_body(),
                self.ceiling(),
            ))),
        }
    }

    fn post(&self, body: Vec<u8>) -> http::Request<Full<Bytes>> {
        let mut request = http::Request::new(Full::new(Bytes::from(body)));
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = self.target.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }

    /// An idle connection, or a new one.
    async fn sender(&self) -> Result<SendRequest<Full<Bytes>>, TurnFailure> {
        loop {
            let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some(mut sender) = idle else { break };
            if !sender.is_closed() && sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        let unreachable =
            |e: &dyn std::fmt::Display| TurnFailure::Unreachable(format!("{}: {e}", self.address));
        let stream = tokio::time::timeout(
            self.connect_timeout,
            tokio::net::TcpStream::connect(&self.address),
        )
        .await
        .map_err(|_| {
            unreachable(&format!(
                "no connection within {} s",
                self.connect_timeout.as_secs()
            ))
        })?
        .map_err(|e| unreachable(&e))?;
        // A turn is one small write each way: Nagle's delay would only hold it back.
        let _ = stream.set_nodelay(true);
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| unreachable(&e))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    fn give_back(&self, sender: SendRequest<Full<Bytes>>) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(sender);
    }

    /// After the answer: the rest of the stream is read to its end before the connection is
    /// used again (a response dropped part-read closes its connection). A server ends the
    /// stream right after the answer, so it is waited for here, briefly: the next turn then
    /// finds the connection free (otherwise every turn would take the other of two
    /// connections, and leave a task behind to read this one's end). A server that keeps the
    /// stream open gets a task that waits for its end, for a while, and then the connection
    /// closed.
    async fn finish<S>(&self, sender: SendRequest<Full<Bytes>>, mut rest: S)
    where
        S: futures::Stream + Unpin + Send + 'static,
    {
        let ended = async { while rest.next().await.is_some() {} };
        if tokio::time::timeout(END_AFTER_THE_ANSWER, ended)
            .await
            .is_ok()
        {
            return self.give_back(sender);
        }
        let idle = self.idle.clone();
        tokio::spawn(async move {
            let ended = async { while rest.next().await.is_some() {} };
            if tokio::time::timeout(Duration::from_secs(5), ended)
                .await
                .is_ok()
            {
                idle.lock().unwrap_or_else(|p| p.into_inner()).push(sender);
            }
        });
    }

    /// A request of the server's own during a turn: `ping` is answered, anything else is
    /// refused as a method this client does not have (it declares no capabilities), as rmcp's
    /// client would. The answer goes on a connection of its own.
    fn refuse(self: &Arc<Self>, id: RequestId, method: String) {
        let answer = if method == "ping" {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            self.events.log(
                self.connection,
                LogKind::Client,
                format!("the server asked {method} during a turn; this client has no such method"),
            );
            serde_json::json!({"jsonrpc": "2.0", "id": id, "error": ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("{method} is not supported"), None)})
        };
        let this = self.clone();
        tokio::spawn(async move {
            let Ok(mut sender) = this.sender().await else {
                return;
            };
            let body = serde_json::to_vec(&answer).unwrap_or_default();
            if let Ok(response) = sender.send_request(this.post(body)).await
                && response.into_body().collect().await.is_ok()
            {
                this.give_back(sender);
            }
        });
    }

    /// What a message on the response is: the answer is read on the fast path
    /// (`decode::tool_result`) when it is a tool's result, by rmcp's types otherwise.
    fn read(&self, data: &[u8], id: &RequestId) -> Read {
        if let Some(answer) = decode::tool_result(data, |got| got == id) {
            return Read::Answer(answer);
        }
        let message: ServerJsonRpcMessage = match crate::protocol::json::from_slice::<Value>(data)
            .ok()
            .and_then(|v| {
                use serde::Deserialize;
                ServerJsonRpcMessage::deserialize(serde_stacker::Deserializer::new(v)).ok()
            }) {
            Some(message) => message,
            None => {
                self.events.log(
                    self.connection,
                    LogKind::Client,
                    format!(
                        "the server sent a message that is not JSON-RPC: {}",
                        String::from_utf8_lossy(&data[..data.len().min(300)])
                    ),
                );
                return Read::Other;
            }
        };
        match message {
            ServerJsonRpcMessage::Response(JsonRpcResponse { id: got, .. }) if got != *id => {
                Read::Other
            }
            ServerJsonRpcMessage::Error(ref e) if e.id.as_ref().is_some_and(|got| got != id) => {
                Read::Other
            }
            ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_) => {
                Read::Answer(message)
            }
            ServerJsonRpcMessage::Notification(n) => Read::Notification(n.notification),
            ServerJsonRpcMessage::Request(r) => {
                let method = serde_json::to_value(&r.request)
                    .ok()
                    .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                Read::Request(r.id, method)
            }
        }
    }

    fn ceiling(&self) -> usize {
        self.limit.saturating_mul(4)
    }

    fn too_large(&self, id: &RequestId, size: usize, exact: bool) -> ServerJsonRpcMessage {
        self.events.log(
            self.connection,
            LogKind::Client,
            format!(
                "the server sent a message of {}{}, over the {} limit",
                if exact { "" } else { "more than " },
                limits::human_size(size),
                limits::human_size(self.limit)
            ),
        );
        limits::too_large(id.clone(), size, self.limit, exact)
    }
}

/// Whether an SSE error is the body's size limit (`Limited`'s error, in the `io::Error` the
/// SSE reader was given).
fn is_too_long(e: &sse_stream::Error) -> bool {
    match e {
        sse_stream::Error::Body(inner) => inner
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(|e| e.is::<http_body_util::LengthLimitError>()),
        _ => false,
    }
}

/// Whether reqwest would send through a proxy (it reads these variables).
fn proxy_in_environment() -> bool {
    ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}
