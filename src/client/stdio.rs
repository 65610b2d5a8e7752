//! The stdio transport: a child process speaking newline-delimited JSON-RPC on its stdin and
//! stdout. Written here rather than taken from rmcp so that it can
//! - take messages up to `--max-message-mb` and end the request an oversized message answers at
//!   once, with its size (rmcp drops such a line and the request waits for its timeout);
//! - report lines that are not JSON-RPC instead of passing over them in silence;
//! - log every message from its raw text, without serialising it again;
//! - keep the server's stderr (shown in the log, and in the error when the server dies) off the
//!   terminal;
//! - carry turns on a hot path (`Direct`): the engine writes a `tools/call` itself and the
//!   transport hands its answer straight back. Through rmcp a turn passes its service loop
//!   twice (a channel in, a task spawned to write, a channel out), which cost about a quarter
//!   of the client's CPU per turn. Everything else (the handshake, lists, resources, the
//!   server's own requests and notifications) goes through rmcp.

use crate::client::event::{ConnectionId, EventSink, LogKind};
use crate::client::limits;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// How many bytes of each end of an oversized message are kept to find its `id`.
const KEEP: usize = 4096;

/// What the transport noticed about the server, for error messages.
#[derive(Debug, Default)]
pub struct Health {
    /// Lines on stdout that were not JSON-RPC messages.
    pub garbage_lines: usize,
    pub last_garbage: Option<String>,
    /// The last lines the server wrote to stderr.
    pub stderr_tail: VecDeque<String>,
    /// Set while what a server that never answered left on its stdout is read (when its
    /// transport is dropped: a handshake that failed on writing, before anything was read);
    /// fires once that is in `garbage_lines`.
    pub drained: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Health {
    pub const STDERR_LINES: usize = 12;

    /// A sentence about what went wrong, if anything did.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.garbage_lines > 0 {
            parts.push(format!(
                "the server wrote {} line{} that {} not JSON-RPC (last: {})",
                self.garbage_lines,
                if self.garbage_lines == 1 { "" } else { "s" },
                if self.garbage_lines == 1 { "is" } else { "are" },
                self.last_garbage.as_deref().unwrap_or("")
            ));
        }
        if let Some(last) = self.stderr_tail.back() {
            parts.push(format!("its last stderr line: {last}"));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// What the server writes (a child's stdout, or the client's end of an in-process pipe).
pub type ServerOutput = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
/// What the server reads (a child's stdin, or the client's end of an in-process pipe).
pub type ServerInput = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

pub struct StdioTransport {
    reader: BufReader<ServerOutput>,
    writer: Arc<tokio::sync::Mutex<ServerInput>>,
    limit: usize,
    connection: ConnectionId,
    events: EventSink,
    /// Requests sent and not answered yet, to fail them all when an oversized message's id
    /// cannot be found.
    pending: Arc<Mutex<HashSet<RequestId>>>,
    /// The ids of the `tools/call` Requests not answered yet: their results are decoded
    /// straight into `CallToolResult`.
    calls: Arc<Mutex<HashSet<RequestId>>>,
    /// Messages made up by the transport, delivered before reading more.
    queued: VecDeque<ServerJsonRpcMessage>,
    health: Arc<Mutex<Health>>,
    direct: Arc<Direct>,
    /// Whether the server ever wrote a JSON-RPC message.
    answered: bool,
}

/// Turns sent on the hot path: written by the caller, answered through a oneshot channel by
/// the transport's reader, never seen by rmcp's service loop.
pub struct Direct {
    /// The server's input, as long as the transport holds it: closing the transport must
    /// close the pipe (the server's cue to leave), whoever else holds the `Direct`.
    writer: std::sync::Weak<tokio::sync::Mutex<ServerInput>>,
    /// The ids of the turns in flight and where their answers go. When the transport stops
    /// reading (the server's end, or the transport dropped) the senders are dropped: the
    /// callers then learn that the server has gone.
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<ServerJsonRpcMessage>>>,
    next: AtomicU64,
    /// Set when the transport stops reading: nothing more will be answered.
    ended: std::sync::atomic::AtomicBool,
    /// What every 2026-07-28 request carries in `_meta` (none over 2025-11-25).
    envelope: std::sync::OnceLock<serde_json::Map<String, serde_json::Value>>,
    connection: ConnectionId,
    events: EventSink,
}

/// A turn in flight on the hot path.
pub struct DirectCall {
    pub id: RequestId,
    pub answer: oneshot::Receiver<ServerJsonRpcMessage>,
}

impl Direct {
    /// From now on each turn carries `envelope` in its `_meta` (MCP 2026-07-28, no session).
    pub fn set_envelope(&self, envelope: serde_json::Map<String, serde_json::Value>) {
        let _ = self.envelope.set(envelope);
    }

    /// Writes a `tools/call` of `name` with `arguments` (a JSON object, as text; written by
    /// `decode::tool_call_text`).
    pub async fn call(&self, name: &str, arguments: &RawValue) -> io::Result<DirectCall> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id_text = format!("call-{n}");
        let mut line =
            crate::client::decode::tool_call_text(&id_text, name, arguments, self.envelope.get())?;
        line.push(b'\n');
        let id = RequestId::String(id_text.into());
        let (tx, answer) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        if self.ended.load(Ordering::Acquire) {
            self.forget(&id);
            return Err(io::ErrorKind::NotConnected.into());
        }
        let written = async {
            let writer = self.writer.upgrade().ok_or(io::ErrorKind::NotConnected)?;
            let mut w = writer.lock().await;
            w.write_all(&line).await?;
            w.flush().await
        }
        .await;
        if let Err(e) = written {
            self.forget(&id);
            return Err(e);
        }
        if self.events.wants_logs() {
            line.pop();
            let text = String::from_utf8(line).unwrap_or_default();
            self.events.log(self.connection, LogKind::Sent, text);
        }
        Ok(DirectCall { id, answer })
    }

    /// Stops waiting for `id` (a timeout or a cancel): a late answer is then passed to rmcp,
    /// which drops it as an answer to nothing.
    pub fn forget(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<ServerJsonRpcMessage>>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The transport stopped reading: the turns in flight learn that the server has gone.
    fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.lock().clear();
    }

    fn awaits(&self, id: &RequestId) -> bool {
        self.lock().contains_key(id)
    }

    /// Hands `message` to the turn that waits for it; gives it back when none does.
    fn deliver(&self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let Some(id) = response_id(&message) else {
            return Some(message);
        };
        let Some(waiting) = self.lock().remove(id) else {
            return Some(message);
        };
        // A caller that stopped waiting meanwhile has nothing to be told.
        let _ = waiting.send(message);
        None
    }
}

impl StdioTransport {
    pub fn new(
        stdout: ServerOutput,
        stdin: ServerInput,
        limit: usize,
        connection: ConnectionId,
        events: EventSink,
        health: Arc<Mutex<Health>>,
    ) -> StdioTransport {
        let writer = Arc::new(tokio::sync::Mutex::new(stdin));
        let direct = Arc::new(Direct {
            writer: Arc::downgrade(&writer),
            waiting: Mutex::default(),
            next: AtomicU64::new(1),
            ended: Default::default(),
            envelope: Default::default(),
            connection,
            events: events.clone(),
        });
        StdioTransport {
            // A large buffer: a big message costs fewer reads.
            reader: BufReader::with_capacity(256 * 1024, stdout),
            writer,
            limit,
            connection,
            events,
            pending: Arc::default(),
            calls: Arc::default(),
            queued: VecDeque::new(),
            health,
            direct,
            answered: false,
        }
    }

    /// The hot path for turns on this transport.
    pub fn direct(&self) -> Arc<Direct> {
        self.direct.clone()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.direct.end();
        if !self.answered {
            self.drain();
        }
    }
}

impl StdioTransport {
    /// A server that never answered (the handshake failed, often on writing to a server that
    /// had exited already) may have said why on its stdout: "hello world", a usage text, a
    /// log line. What it left there is read (a few lines, briefly) into `Health`, so that the
    /// error can quote it.
    fn drain(&mut self) {
        const LINES: usize = 3;
        const WITHIN: std::time::Duration = std::time::Duration::from_millis(500);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let empty: ServerOutput = Box::new(tokio::io::empty());
        let mut reader = std::mem::replace(&mut self.reader, BufReader::new(empty));
        let health = self.health.clone();
        let limit = self.limit;
        let (done, drained) = oneshot::channel();
        health.lock().unwrap_or_else(|p| p.into_inner()).drained = Some(drained);
        runtime.spawn(async move {
            let read = async {
                for _ in 0..LINES {
                    let Ok(Line::Text(bytes)) = read_line(&mut reader, limit).await else {
                        break;
                    };
                    if bytes.iter().all(u8::is_ascii_whitespace)
                        || crate::protocol::json::frame_from_slice::<ServerJsonRpcMessage>(&bytes)
                            .is_ok()
                    {
                        continue;
                    }
                    let text = String::from_utf8_lossy(&bytes);
                    let shown: String = text.trim_end().chars().take(120).collect();
                    let mut health = health.lock().unwrap_or_else(|p| p.into_inner());
                    health.garbage_lines += 1;
                    health.last_garbage = Some(format!("\"{shown}\""));
                }
            };
            let _ = tokio::time::timeout(WITHIN, read).await;
            let _ = done.send(());
        });
    }
}

/// One line read from the server.
pub(crate) enum Line {
    Eof,
    Text(Vec<u8>),
    TooLong {
        size: usize,
        head: Vec<u8>,
        tail: Vec<u8>,
    },
}

/// One line within `limit` bytes: a longer one is read to its end and kept as its first and
/// last `KEEP` bytes and its size.
pub(crate) async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    limit: usize,
) -> io::Result<Line> {
    let mut line = Vec::new();
    let (mut size, mut over, mut started) = (0usize, false, false);
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (started, over) {
                (false, _) => Line::Eof,
                (true, false) => Line::Text(line),
                (true, true) => Line::TooLong { size, head, tail },
            });
        }
        started = true;
        let (chunk, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        size += chunk.len();
        if !over && line.len() + chunk.len() > limit {
            over = true;
            line.extend_from_slice(&chunk[..KEEP.saturating_sub(line.len()).min(chunk.len())]);
            head = std::mem::take(&mut line);
            head.truncate(KEEP);
        }
        if over {
            tail.extend_from_slice(&chunk[chunk.len().saturating_sub(KEEP)..]);
            let excess = tail.len().saturating_sub(KEEP);
            tail.drain(..excess);
        } else {
            line.extend_from_slice(chunk);
        }
        let consumed = end.unwrap_or(buf.len());
        reader.consume(consumed);
        if end.is_some() {
            return Ok(if over {
                Line::TooLong { size, head, tail }
            } else {
                Line::Text(line)
            });
        }
    }
}

/// The `id` of a message from its last bytes: `…,"id":7}` (servers that write it last).
fn id_at_end(tail: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(tail);
    let at = text.rfind("\"id\"")?;
    let value = text[at + 4..].trim_start().strip_prefix(':')?.trim();
    let value = value.strip_suffix('}')?.trim();
    serde_json::from_str::<serde_json::Value>(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

impl StdioTransport {
    /// The result of a `tools/call` this client sent (a turn's Response), decoded straight
    /// into `CallToolResult`; anything else is left to rmcp's general decoder.
    fn tool_result(&self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        crate::client::decode::tool_result(line, |id| {
            self.direct.awaits(id)
                || self
                    .calls
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(id)
        })
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

fn response_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ServerJsonRpcMessage::Response(r) => Some(&r.id),
        ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let line = serde_json::to_string(&item).map(|mut s| {
            s.push('\n');
            s
        });
        if let Some(id) = request_id(&item) {
            if crate::client::decode::is_tool_call(&item) {
                self.calls
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id.clone());
            }
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id);
        }
        let writer = self.writer.clone();
        let events = self.events.clone();
        let connection = self.connection;
        async move {
            let mut line = line.map_err(io::Error::other)?;
            {
                let mut w = writer.lock().await;
                w.write_all(line.as_bytes()).await?;
                w.flush().await?;
            }
            // Logged once it is on its way (the server works meanwhile), from the line itself.
            if events.wants_logs() {
                line.pop();
                events.log(connection, LogKind::Sent, line);
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(made_up) = self.queued.pop_front() {
                match self.direct.deliver(made_up) {
                    Some(message) => return Some(message),
                    None => continue,
                }
            }
            let line = match read_line(&mut self.reader, self.limit).await {
                Ok(line) => line,
                Err(e) => {
                    self.events.log(
                        self.connection,
                        LogKind::Client,
                        format!("reading the server's stdout failed: {e}"),
                    );
                    self.direct.end();
                    return None;
                }
            };
            match line {
                Line::Eof => {
                    self.direct.end();
                    return None;
                }
                Line::Text(bytes) => {
                    if let Some(message) = self.text_line(bytes) {
                        return Some(message);
                    }
                }
                Line::TooLong { size, head, tail } => self.drop_too_long(size, &head, &tail),
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.writer.lock().await.shutdown().await
    }
}

impl StdioTransport {
    /// A line the server wrote: the message for rmcp, or None when there is none for it (a
    /// blank line, one the hot path took, or one that is not JSON-RPC, which is logged and
    /// counted against the server's health).
    fn text_line(&mut self, bytes: Vec<u8>) -> Option<ServerJsonRpcMessage> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let decoded = match self.tool_result(&bytes) {
            Some(message) => Ok(message),
            None => crate::protocol::json::frame_from_slice::<ServerJsonRpcMessage>(&bytes),
        };
        let message = match decoded {
            Ok(message) => message,
            Err(e) => {
                self.not_json_rpc(&bytes, &e);
                return None;
            }
        };
        self.answered = true;
        if self.events.wants_logs() {
            // JSON that parsed is UTF-8: the bytes become the text as they are.
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            self.events.log(self.connection, LogKind::Received, text);
        }
        if let Some(id) = response_id(&message) {
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(id);
            self.calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(id);
        }
        self.direct.deliver(message)
    }

    fn not_json_rpc(&self, bytes: &[u8], e: &impl std::fmt::Display) {
        let text = String::from_utf8_lossy(bytes);
        let shown: String = text.chars().take(120).collect();
        self.events.log(
            self.connection,
            LogKind::Client,
            format!("the server wrote a line that is not JSON-RPC ({e}): {text}"),
        );
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        health.garbage_lines += 1;
        health.last_garbage = Some(format!("\"{shown}\""));
    }

    /// A message over the limit is dropped: the request it answers (found at its start or
    /// end; else every one waiting) gets a made-up "too large" error in its place.
    fn drop_too_long(&mut self, size: usize, head: &[u8], tail: &[u8]) {
        let ids: Vec<RequestId> = match limits::find_id(head).or_else(|| id_at_end(tail)) {
            Some(id) => vec![id],
            None => {
                let mut ids: Vec<RequestId> = self
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .cloned()
                    .collect();
                ids.extend(self.direct.lock().keys().cloned());
                ids
            }
        };
        self.events.log(
            self.connection,
            LogKind::Client,
            format!(
                "the server sent a message of {}, over the {} limit; it was dropped",
                limits::human_size(size),
                limits::human_size(self.limit)
            ),
        );
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        for id in ids {
            pending.remove(&id);
            self.queued
                .push_back(limits::too_large(id, size, self.limit, true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_over_the_limit_keep_their_ends() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"{}\"}}\n{{\"x\":1}}\n",
            "a".repeat(10_000)
        );
        let mut reader = BufReader::with_capacity(64, big.as_bytes());
        match read_line(&mut reader, 1000).await.unwrap() {
            Line::TooLong { size, head, tail } => {
                assert_eq!(size, big.find('\n').unwrap());
                assert_eq!(
                    serde_json::to_value(limits::find_id(&head).unwrap()).unwrap(),
                    4
                );
                assert!(tail.ends_with(b"aaa\"}"));
            }
            _ => panic!("expected an oversized line"),
        }
        assert!(
            matches!(read_line(&mut reader, 1000).await.unwrap(), Line::Text(t) if t == b"{\"x\":1}")
        );
        assert!(matches!(
            read_line(&mut reader, 1000).await.unwrap(),
            Line::Eof
        ));
        assert_eq!(
            serde_json::to_value(id_at_end(b"aaaa\"},\"id\":\"q-9\"}").unwrap()).unwrap(),
            "q-9"
        );
    }
}
