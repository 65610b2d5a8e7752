//! The Streamable HTTP client: rmcp's reqwest client, wrapped to
//! - capture the `Mcp-Session-Id` the server assigns (it is the DialogID; rmcp has no getter,
//!   RMCP-NOTES section 2);
//! - log every message in both directions;
//! - apply `--max-message-mb` with an error that names the message's size. The inner client
//!   reads up to four times the limit, so that a message somewhat over it can be measured and
//!   answered at once; beyond that the inner client's own limit stops it.

use crate::client::event::{ConnectionId, EventSink, LogKind};
use crate::client::limits;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct LoggingHttpClient {
    inner: reqwest::Client,
    shared: Arc<Shared>,
}

struct Shared {
    connection: ConnectionId,
    events: EventSink,
    limit: usize,
    session_id: Mutex<Option<String>>,
    /// Results nested deeper than rmcp's JSON reader goes, read here: rmcp gets a marker in
    /// their place (`DEEP_MARKER`) and the call takes the result from here.
    deep: Mutex<HashMap<String, serde_json::Value>>,
    /// The tools of the last tools/list answers whose `x-mcp-header` annotations are invalid,
    /// and why: rmcp's transport drops them from the list it hands on without a word
    /// (`param_headers`), and the user is to be told.
    hidden: Mutex<Vec<(String, String)>>,
}

/// The member of the marker that stands for a result too deep for rmcp's reader.
pub const DEEP_MARKER: &str = "$bkn-explorer-deep-result";

impl LoggingHttpClient {
    pub fn new(
        inner: reqwest::Client,
        connection: ConnectionId,
        events: EventSink,
        limit: usize,
    ) -> Self {
        LoggingHttpClient {
            inner,
            shared: Arc::new(Shared {
                connection,
                events,
                limit,
                session_id: Mutex::new(None),
                deep: Mutex::new(HashMap::new()),
                hidden: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The session the server assigned, once `initialize` has been answered.
    pub fn session_id(&self) -> Option<String> {
        self.shared
            .session_id
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The result a deep marker stands for (taken: each is read once).
    pub fn take_deep(&self, key: &str) -> Option<serde_json::Value> {
        self.shared
            .deep
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)
    }

    /// The tools found hidden in the tools/list answers since the last call (taken).
    pub fn take_hidden(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.shared.hidden.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Notes the tools of a tools/list answer whose annotations are invalid. Only a message
    /// that names `x-mcp-header` at all is read again for it.
    fn note_hidden(&self, data: &str) {
        if !data.contains("x-mcp-header") {
            return;
        }
        let Ok(message) = serde_json::from_str::<serde_json::Value>(data) else {
            return;
        };
        let Some(tools) = message.pointer("/result/tools").and_then(|t| t.as_array()) else {
            return;
        };
        let mut hidden = self.shared.hidden.lock().unwrap_or_else(|p| p.into_inner());
        for tool in tools {
            let (Some(name), Some(schema)) = (
                tool.get("name").and_then(|n| n.as_str()),
                tool.get("inputSchema").and_then(|s| s.as_object()),
            ) else {
                continue;
            };
            if let Err(why) = crate::client::param_headers::annotations(schema) {
                hidden.push((name.to_owned(), why));
            }
        }
    }

    /// A server message nested too deep for rmcp: its result is kept here and replaced by a
    /// marker rmcp can read.
    fn shallow(&self, data: &str) -> Option<String> {
        // Most messages are shallow: rmcp reads them as they are.
        crate::protocol::json::deeper_than(data.as_bytes(), crate::protocol::json::RMCP_DEPTH)?;
        let mut message: serde_json::Value = crate::protocol::json::from_str(data).ok()?;
        let result = message.get_mut("result")?;
        let key = crate::protocol::message::new_id();
        let marker = serde_json::json!({"content": [], "_meta": {DEEP_MARKER: key}});
        let deep = std::mem::replace(result, marker);
        self.shared
            .deep
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, deep);
        serde_json::to_string(&message).ok()
    }

    fn ceiling(&self) -> usize {
        self.shared.limit.saturating_mul(4)
    }

    fn remember(&self, session: &Option<String>) {
        if let Some(id) = session {
            let mut current = self
                .shared
                .session_id
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if current.as_deref() != Some(id) {
                *current = Some(id.clone());
            }
        }
    }

    fn log(&self, kind: LogKind, text: impl Into<String>) {
        self.shared.events.log(self.shared.connection, kind, text);
    }

    /// Logs each event of a server stream and replaces the oversized ones with an error for
    /// the request they answer (`fallback` when their id cannot be found).
    fn watch(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
        fallback: Option<RequestId>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let this = self.clone();
        stream
            .map(move |event| match event {
                Ok(mut sse) => {
                    if let Some(data) = &sse.data {
                        if data.len() > this.shared.limit {
                            this.log(
                                LogKind::Client,
                                format!(
                                    "the server sent a message of {}, over the {} limit; it was dropped",
                                    limits::human_size(data.len()),
                                    limits::human_size(this.shared.limit)
                                ),
                            );
                            let id = limits::find_id(&data.as_bytes()[..data.len().min(4096)]).or_else(|| fallback.clone());
                            if let Some(id) = id {
                                let error = limits::too_large(id, data.len(), this.shared.limit, true);
                                sse.data = serde_json::to_string(&error).ok();
                            }
                        } else if !data.is_empty() {
                            if this.shared.events.wants_logs() {
                                this.log(LogKind::Received, data.clone());
                            }
                            this.note_hidden(data);
                            if let Some(shallow) = this.shallow(data) {
                                sse.data = Some(shallow);
                            }
                        }
                    }
                    Ok(sse)
                }
                Err(e) => {
                    this.log(LogKind::Client, format!("the server's event stream broke: {e}"));
                    Err(e)
                }
            })
            .boxed()
    }

    fn check_json(&self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let text = serde_json::to_string(&message).unwrap_or_default();
        if text.len() > self.shared.limit
            && let Some(id) = response_id(&message)
        {
            self.log(
                LogKind::Client,
                format!(
                    "the server sent a message of {}, over the {} limit",
                    limits::human_size(text.len()),
                    limits::human_size(self.shared.limit)
                ),
            );
            return limits::too_large(id, text.len(), self.shared.limit, true);
        }
        self.note_hidden(&text);
        self.log(LogKind::Received, text);
        message
    }
}

/// A `tools/call` answered on an event stream (as servers answer when they may report
/// progress): the stream is read up to its first message. When that is the answer, it is
/// decoded on the hot path (`client::decode`) and handed to rmcp as a plain reply; otherwise
/// (progress first, an error, the stream broken or ended) the events read are put back in
/// front of the rest and rmcp reads them all, as it would have.
async fn answer_in_stream(
    mut stream: BoxStream<'static, Result<Sse, SseError>>,
    id: RequestId,
    session: Option<String>,
) -> StreamableHttpPostResponse {
    let mut read = Vec::new();
    while let Some(event) = stream.next().await {
        let data = match &event {
            Ok(sse) => sse.data.as_deref().filter(|d| !d.is_empty()),
            Err(_) => None,
        };
        if let Some(data) = data {
            if let Some(answer) =
                crate::client::decode::tool_result(data.as_bytes(), |got| *got == id)
            {
                finish_reading(stream);
                return StreamableHttpPostResponse::Json(answer, session);
            }
            read.push(event);
            break;
        }
        let broken = event.is_err();
        // A priming event (an id, no data): kept for rmcp, which resumes from it.
        read.push(event);
        if broken {
            break;
        }
    }
    StreamableHttpPostResponse::Sse(futures::stream::iter(read).chain(stream).boxed(), session)
}

/// Reads an answered stream to its end, so that its connection goes back to the pool for
/// the next turn (a stream dropped part-read closes its connection, and the next turn would
/// open a new one). The end has usually arrived with the answer; if not, a task waits for it,
/// for a while: a server that keeps the stream open gets it closed.
fn finish_reading(mut stream: BoxStream<'static, Result<Sse, SseError>>) {
    use futures::FutureExt;
    loop {
        match stream.next().now_or_never() {
            Some(Some(_)) => continue,
            Some(None) => return,
            None => break,
        }
    }
    tokio::spawn(async move {
        let rest = async { while stream.next().await.is_some() {} };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), rest).await;
    });
}

fn response_id(message: &ServerJsonRpcMessage) -> Option<RequestId> {
    match message {
        ServerJsonRpcMessage::Response(r) => Some(r.id.clone()),
        ServerJsonRpcMessage::Error(e) => e.id.clone(),
        _ => None,
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

impl StreamableHttpClient for LoggingHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        mut limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        if let Some(id) = &session_id {
            self.remember(&Some(id.to_string()));
        }
        let id = request_id(&message);
        let tool_call = crate::client::decode::is_tool_call(&message);
        if self.shared.events.wants_logs() {
            self.log(
                LogKind::Sent,
                serde_json::to_string(&message).unwrap_or_default(),
            );
        }
        limits.max_sse_event_size = self.ceiling();
        limits.max_json_response_size = self.ceiling();
        let result = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        match result {
            Ok(StreamableHttpPostResponse::Json(message, session)) => {
                self.remember(&session);
                Ok(StreamableHttpPostResponse::Json(
                    self.check_json(message),
                    session,
                ))
            }
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => {
                self.remember(&session);
                let stream = self.watch(stream, id.clone());
                Ok(match id.filter(|_| tool_call) {
                    Some(id) => answer_in_stream(stream, id, session).await,
                    None => StreamableHttpPostResponse::Sse(stream, session),
                })
            }
            Ok(accepted) => Ok(accepted),
            Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) if id.is_some() => {
                let id = id.expect("checked");
                self.log(
                    LogKind::Client,
                    format!(
                        "the server's response is larger than {}",
                        limits::human_size(max_size)
                    ),
                );
                Ok(StreamableHttpPostResponse::Json(
                    limits::too_large(id, max_size, self.shared.limit, false),
                    None,
                ))
            }
            Err(e) => {
                self.log(LogKind::Client, format!("HTTP request failed: {e}"));
                Err(e)
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.log(LogKind::Client, format!("ending HTTP session {session_id}"));
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let ceiling = self.ceiling();
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            ceiling,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        _max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                self.ceiling(),
            )
            .await?;
        Ok(self.watch(stream, None))
    }
}
