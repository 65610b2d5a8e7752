//! The hot path for turns over Streamable HTTP, as `stdio::Direct` is over stdio: a
//! `tools/call` is posted with the session's own reqwest client (the one under rmcp's
//! transport, so the same pool of connections) and its answer is read from the response as it
//! comes, past rmcp's service loop and worker. rmcp still does the handshake, discovery, the
//! end of the session, and every message that is not a turn.
//!
//! Why: in `load` (8 sessions against the reference server) a turn through rmcp cost the
//! client 100–130 µs of CPU, about as much as the server's; on this path 80–98 µs. A
//! connection of the path's own (hyper's HTTP/1.1 client: 22 µs a POST against reqwest's 37
//! in a bare client) was tried and dropped: it needs its own TLS, proxy and keep-alive
//! handling, which the session's reqwest client already has (`docs/performance.md`).
//!
//! It is used only where it sends what rmcp would send (`HttpTurns::for_session`): a protocol
//! version before 2026 (whose requests carry more headers), and no OAuth token held (rmcp's
//! client refreshes it). A server that answers a turn with 401 turns the path off for the
//! connection: it did not take the Request, which then goes through rmcp, which signs in.

use crate::client::decode;
use crate::client::event::{ConnectionId, EventSink, LogKind};
use crate::client::limits;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::StatusCode;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    ErrorCode, ErrorData, JsonRpcResponse, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    sse_stream::ByteStreamBody<
        BoxStream<'static, Result<bytes::Bytes, std::io::Error>>,
        bytes::Bytes,
    >,
>;

/// A response's body as server-sent events, cut off past `ceiling` bytes (`is_too_long`
/// finds that again in the SSE reader's error).
fn event_stream(response: reqwest::Response, ceiling: usize) -> Events {
    let mut read = 0usize;
    let bytes = response
        .bytes_stream()
        .map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            read = read.saturating_add(chunk.len());
            if read > ceiling {
                return Err(std::io::Error::other(TooLong));
            }
            Ok(chunk)
        })
        .boxed();
    sse_stream::SseStream::from_bytes_stream(bytes)
}

/// A response longer than the size limit allows.
#[derive(Debug)]
struct TooLong;

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the response is longer than the size limit allows")
    }
}

impl std::error::Error for TooLong {}

/// Where a turn's dialogue lives, as the hot path sends it.
pub enum TurnPlace {
    /// On this MCP session (2025-11-25): its `Mcp-Session-Id` on every POST.
    Session(String),
    /// No session (2026-07-28): each request carries this in its `_meta`, and each POST
    /// names its method and tool (`Mcp-Method`, `Mcp-Name`).
    Stateless(serde_json::Map<String, Value>),
}

/// What the hot path needs to send what rmcp would send on the session.
pub struct SessionHeaders<'a> {
    pub url: &'a str,
    pub place: TurnPlace,
    pub protocol_version: &'a str,
    /// `--header` and the server file's headers, expanded.
    pub custom: &'a HashMap<HeaderName, HeaderValue>,
    /// `--token`, expanded: sent as `Authorization: Bearer …`.
    pub token: Option<&'a str>,
}

/// Turns of one MCP session over Streamable HTTP.
pub struct HttpTurns {
    /// The session's client: its pool holds the connections rmcp's requests use.
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    next: AtomicU64,
    limit: usize,
    connection: ConnectionId,
    events: EventSink,
    /// Off after a server asked for authorization: rmcp's client signs in.
    on: AtomicBool,
    /// The `_meta` envelope of a 2026-07-28 request; None on a 2025-11-25 session.
    envelope: Option<serde_json::Map<String, Value>>,
    /// What answers the server's own requests on a turn's response (elicitations,
    /// samplings), as the connection's handler does through rmcp.
    responder: Option<crate::client::handler::Responder>,
}

/// Why a turn on the hot path got no answer.
#[derive(Debug)]
pub enum TurnFailure {
    /// The server no longer knows the session (404).
    SessionGone,
    /// The server asks for authorization (401): it did not take the Request, which may be
    /// sent again through rmcp.
    Unauthorized,
    /// This path cannot send the turn as rmcp would (nothing was sent): rmcp is to.
    NotTaken,
    /// The server cannot be reached: nothing was sent.
    Unreachable(String),
    /// The Request was sent and no answer could be read.
    Broken(String),
}

/// What a message on a turn's response is, to the turn.
enum Read {
    Answer(ServerJsonRpcMessage),
    Notification(ServerNotification),
    /// A request of the server's own.
    Request(RequestId, Box<rmcp::model::ServerRequest>),
    /// Anything else (an answer to another request, a message that is not JSON-RPC, which
    /// `read` logs): passed over.
    Other,
}

impl HttpTurns {
    /// The hot path for a session, when it sends what rmcp would; None otherwise (the turns
    /// then go through rmcp).
    pub fn for_session(
        client: reqwest::Client,
        session: SessionHeaders<'_>,
        limit: usize,
        connection: ConnectionId,
        events: EventSink,
    ) -> Option<HttpTurns> {
        let url = reqwest::Url::parse(session.url).ok()?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json"),
        );
        let envelope = match session.place {
            TurnPlace::Session(id) => {
                headers.insert(
                    HeaderName::from_static("mcp-session-id"),
                    HeaderValue::from_str(&id).ok()?,
                );
                None
            }
            TurnPlace::Stateless(envelope) => {
                headers.insert(
                    HeaderName::from_static("mcp-method"),
                    HeaderValue::from_static("tools/call"),
                );
                Some(envelope)
            }
        };
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
        Some(HttpTurns {
            client,
            url,
            headers,
            next: AtomicU64::new(1),
            limit,
            connection,
            events,
            on: AtomicBool::new(true),
            envelope,
            responder: None,
        })
    }

    /// Answers the server's own requests during a turn as `responder` says.
    pub fn answering(mut self, responder: crate::client::handler::Responder) -> HttpTurns {
        self.responder = Some(responder);
        self
    }

    /// Whether turns take this path (not after a server asked for authorization).
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Posts a `tools/call` of `name` with `arguments` (a JSON object, as text). Returns its id
    /// (for `notifications/cancelled` when the caller stops waiting) and the answer to wait
    /// for; the server's notifications before the answer go to `notified`.
    /// `params` are the call's `Mcp-Param-*` headers (`param_headers`), sent as they are.
    pub fn call<'a>(
        &'a self,
        name: &str,
        arguments: &RawValue,
        params: Vec<(String, String)>,
        notified: impl Fn(ServerNotification) + 'a,
    ) -> (
        RequestId,
        impl Future<Output = Result<ServerJsonRpcMessage, TurnFailure>> + 'a,
    ) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id_text = format!("call-{n}");
        let body = decode::tool_call_text(&id_text, name, arguments, self.envelope.as_ref());
        let id = RequestId::String(id_text.into());
        let awaited = id.clone();
        // 2026-07-28 names the tool in a header too, in Base64 where a header cannot carry
        // the name as it is (SEP-2243, as rmcp encodes it).
        let tool_header = HeaderValue::from_str(&crate::client::param_headers::encode(name)).ok();
        let answer = async move {
            let body = body
                .map_err(|e| TurnFailure::Broken(format!("the Request cannot be written: {e}")))?;
            self.exchange(body, tool_header, params, &awaited, &notified)
                .await
        };
        (id, answer)
    }

    async fn exchange(
        &self,
        body: Vec<u8>,
        tool_header: Option<HeaderValue>,
        params: Vec<(String, String)>,
        id: &RequestId,
        notified: &impl Fn(ServerNotification),
    ) -> Result<ServerJsonRpcMessage, TurnFailure> {
        if self.events.wants_logs() {
            let text = String::from_utf8_lossy(&body).into_owned();
            self.events.log(self.connection, LogKind::Sent, text);
        }
        let post = self.call_post(body, tool_header, params)?;
        let response = post.send().await.map_err(|e| {
            let why = crate::client::connection::chain(&e);
            if e.is_connect() {
                TurnFailure::Unreachable(why)
            } else {
                TurnFailure::Broken(format!("the HTTP request failed: {why}"))
            }
        })?;
        let response = self.accepted(response).await?;
        let stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if stream {
            self.answer_in_stream(response, id, notified).await
        } else {
            self.answer_in_body(response, id).await
        }
    }

    /// The call's POST; without a session (2026-07-28), with the tool's name and its
    /// parameters in headers too (none that cannot be one: the call is then not taken).
    fn call_post(
        &self,
        body: Vec<u8>,
        tool_header: Option<HeaderValue>,
        params: Vec<(String, String)>,
    ) -> Result<reqwest::RequestBuilder, TurnFailure> {
        let mut post = self.post(body);
        if self.envelope.is_some() {
            match tool_header {
                Some(name) => post = post.header("mcp-name", name),
                None => return Err(TurnFailure::NotTaken),
            }
            for (name, value) in params {
                // Names are HTTP tokens and values ASCII (`param_headers`): each fits.
                match (
                    HeaderName::try_from(name.as_str()),
                    HeaderValue::from_str(&value),
                ) {
                    (Ok(name), Ok(value)) => post = post.header(name, value),
                    _ => return Err(TurnFailure::NotTaken),
                }
            }
        }
        Ok(post)
    }

    /// The response, when its status lets the answer be read; a 401 hands the turns to rmcp's
    /// client (which signs in) from now on.
    async fn accepted(
        &self,
        response: reqwest::Response,
    ) -> Result<reqwest::Response, TurnFailure> {
        match response.status() {
            StatusCode::UNAUTHORIZED => {
                self.on.store(false, Ordering::Relaxed);
                self.events.log(
                    self.connection,
                    LogKind::Client,
                    "the server asks for authorization: turns go through rmcp's client from now on",
                );
                Err(TurnFailure::Unauthorized)
            }
            // Without a session, a 404 is the server's word on the method, read after.
            StatusCode::NOT_FOUND if self.envelope.is_none() => Err(TurnFailure::SessionGone),
            s if !s.is_success() => {
                // Enough to say why; never the whole of an endless body.
                let text = match crate::client::limits::body_within(response, 64 * 1024).await {
                    Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                    _ => "(a body of more than 64 KiB)".to_owned(),
                };
                Err(TurnFailure::Broken(format!(
                    "the server answered HTTP {s}{}",
                    if text.is_empty() {
                        String::new()
                    } else {
                        format!(": {text}")
                    }
                )))
            }
            _ => Ok(response),
        }
    }

    /// The answer as a JSON body, read within the limit.
    async fn answer_in_body(
        &self,
        response: reqwest::Response,
        id: &RequestId,
    ) -> Result<ServerJsonRpcMessage, TurnFailure> {
        if response
            .content_length()
            .is_some_and(|n| n > self.ceiling() as u64)
        {
            return Ok(self.too_large(id, self.ceiling(), false));
        }
        let bytes = match crate::client::limits::body_within(response, self.limit).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(past)) => return Ok(self.too_large(id, past, false)),
            Err(e) => {
                return Err(TurnFailure::Broken(format!(
                    "the server's response broke off: {e}"
                )));
            }
        };
        if self.events.wants_logs() {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            self.events.log(self.connection, LogKind::Received, text);
        }
        match self.read(&bytes, id) {
            Read::Answer(answer) => Ok(answer),
            _ => Err(TurnFailure::Broken(
                "the server's response is not the answer to the call".into(),
            )),
        }
    }

    /// The answer in an event stream, past the notifications and requests before it (told
    /// and answered as they come); a stream that ends first is resumed where the server
    /// allows it.
    async fn answer_in_stream(
        &self,
        response: reqwest::Response,
        id: &RequestId,
        notified: &impl Fn(ServerNotification),
    ) -> Result<ServerJsonRpcMessage, TurnFailure> {
        let mut events = event_stream(response, self.ceiling());
        // Where to resume when the stream ends before the answer (the server names its events
        // and may say how long to wait: SSE resumability).
        let mut last_event_id: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut resumed = 0;
        loop {
            let Some(event) = events.next().await else {
                let Some(from) = last_event_id.clone().filter(|_| resumed < MAX_RESUMES) else {
                    return Err(TurnFailure::Broken(
                        "the server's event stream ended before the answer".into(),
                    ));
                };
                resumed += 1;
                tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
                events = self.resume(&from).await?;
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
                    finish(events).await;
                    return Ok(answer);
                }
                Read::Notification(notification) => notified(notification),
                Read::Request(id, request) => self.answer_request(id, *request),
                Read::Other => {}
            }
        }
    }

    /// A POST of `body` on the session, with the headers rmcp sends.
    fn post(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        self.client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body)
    }

    /// Resumes the session's event stream after the event `from` (GET with `Last-Event-ID`),
    /// as the MCP transport says a client does when a stream ends before its answer.
    async fn resume(&self, from: &str) -> Result<Events, TurnFailure> {
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("the event stream ended before the answer: resuming after event {from}"),
        );
        let mut headers = self.headers.clone();
        headers.remove(CONTENT_TYPE);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let response = self
            .client
            .get(self.url.clone())
            .headers(headers)
            .header("last-event-id", from)
            .send()
            .await
            .map_err(|e| {
                TurnFailure::Broken(format!(
                    "resuming the event stream failed: {}",
                    crate::client::connection::chain(&e)
                ))
            })?;
        match response.status() {
            StatusCode::NOT_FOUND => Err(TurnFailure::SessionGone),
            s if !s.is_success() => Err(TurnFailure::Broken(format!(
                "the event stream ended before the answer, and resuming it was refused (HTTP {s})"
            ))),
            _ => Ok(event_stream(response, self.ceiling())),
        }
    }

    /// A request of the server's own during a turn: `ping` is answered, an elicitation or a
    /// sampling as the connection's handler answers it (from `--answers` or the person at the
    /// explorer), anything else refused as a method this client does not have, as rmcp's
    /// client would. The answer is posted in a task of its own: the turn goes on reading.
    fn answer_request(&self, id: RequestId, request: rmcp::model::ServerRequest) {
        use rmcp::model::ServerRequest;
        let responder = self.responder.clone();
        let (events, connection) = (self.events.clone(), self.connection);
        let post = self.post(Vec::new());
        tokio::spawn(async move {
            let refuse = |method: &str| {
                events.log(
                    connection,
                    LogKind::Client,
                    format!(
                        "the server asked {method} during a turn; this client has no such method"
                    ),
                );
                Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("{method} is not supported"),
                    None,
                ))
            };
            let result: Result<Value, ErrorData> = match (request, responder) {
                (ServerRequest::PingRequest(_), _) => Ok(serde_json::json!({})),
                (ServerRequest::ElicitRequest(r), Some(responder)) => responder
                    .elicit(r.params, None)
                    .await
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                (ServerRequest::CreateMessageRequest(r), Some(responder)) => responder
                    .sample(r.params, None)
                    .await
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                (other, _) => {
                    let method = serde_json::to_value(&other)
                        .ok()
                        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_default();
                    refuse(&method)
                }
            };
            let answer = match result {
                Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            if let Ok(response) = post
                .body(serde_json::to_vec(&answer).unwrap_or_default())
                .send()
                .await
            {
                let _ = response.bytes().await;
            }
        });
    }

    /// What a message on the response is: the answer is read on the fast path
    /// (`decode::tool_result`) when it is a tool's result, by rmcp's types otherwise.
    fn read(&self, data: &[u8], id: &RequestId) -> Read {
        if let Some(answer) = decode::tool_result(data, |got| got == id) {
            return Read::Answer(answer);
        }
        let message: ServerJsonRpcMessage =
            match crate::protocol::json::frame_from_slice::<Value>(data)
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
            ServerJsonRpcMessage::Request(r) => Read::Request(r.id, Box::new(r.request)),
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

/// Whether an SSE error is the size limit's (`event_stream`).
fn is_too_long(e: &sse_stream::Error) -> bool {
    match e {
        sse_stream::Error::Body(inner) => inner
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(|e| e.is::<TooLong>()),
        _ => false,
    }
}

/// After the answer: the rest of the stream is read to its end, so that its connection goes
/// back to the pool (a response dropped part-read closes its connection, and the next turn
/// would open a new one). The end has usually come with the answer, or comes right after it;
/// it is waited for here, briefly, so the next turn finds the connection free. A server that
/// keeps the stream open gets a task that waits for its end, for a while.
async fn finish(mut rest: Events) {
    let ended = async { while rest.next().await.is_some() {} };
    if tokio::time::timeout(END_AFTER_THE_ANSWER, ended)
        .await
        .is_ok()
    {
        return;
    }
    tokio::spawn(async move {
        let ended = async { while rest.next().await.is_some() {} };
        let _ = tokio::time::timeout(Duration::from_secs(5), ended).await;
    });
}
