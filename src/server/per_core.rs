//! Serving HTTP connections on single-threaded runtimes, one per two cores.
//!
//! A turn over HTTP hands over between several tasks: hyper's connection, rmcp's session
//! worker and its service loop, then back to the connection with the answer. On tokio's
//! multi-threaded scheduler each hand-over may wake another worker thread to look for work (a
//! futex wake and a context switch, for nothing when one client talks at a time). So each
//! accepted connection is dealt to one of several single-threaded runtimes: a connection's
//! tasks, and the session it starts, live on one thread.
//!
//! A client's session is spread over several connections (rmcp's client keeps a GET stream
//! open beside its POSTs, and opens another connection when one is still busy), and a turn
//! that arrives on another runtime than its session's hands over between threads again. So a
//! runtime is filled up to a few connections before the next is used (`FILL`): one client's
//! connections share a thread, and more clients' are spread over the runtimes.
//!
//! A new connection that belongs to a session already made goes to the runtime that holds the
//! session: the acceptor peeks at its first request's `Mcp-Session-Id` (without taking it) and
//! looks the session up (`Sessions`, learnt when a session's `initialize` is answered). A
//! client whose turns come on another connection than its `initialize` (rmcp's client does:
//! its `initialize` connection is closed, its GET stream takes another) would otherwise hand
//! each turn over between threads: 8 such sessions cost the server 1.0–1.1 s for 8,000 turns
//! against 0.83 s for the same turns on one connection each; with the look-up, the same.
//!
//! There are half as many runtimes as cores (`serve`): the reference server's clients run on
//! the same machine in most runs, and a serving thread that shares a core with them is
//! preempted and woken at each turn. On 2 vCPUs, `load` with 8 sessions made 10,900–12,200
//! turns/s on one runtime against 5,700–6,600 on two, with half the server's CPU; one
//! `dialogue --url` is the same either way (about 3,100–3,900 turns/s), as `FILL` kept a
//! single client on one runtime already. Measured against tokio's multi-threaded runtime
//! before (docs/performance.md): one `dialogue --url` went from 2,510–3,060 to 2,720–3,580
//! turns/s (the server's CPU a turn from 195–240 to 140–195 µs).

use axum::serve::Listener;
use std::cell::Cell;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

type Connection = (std::net::TcpStream, SocketAddr);

/// What every HTTP listener of this program bounds, whoever connects: how many connections
/// it holds, how long a new connection has to send its first request head, and how long a
/// connection may go without a byte either way (an event stream's keep-alive counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub max_connections: usize,
    pub head_deadline: Duration,
    pub idle: Duration,
}

impl Default for Bounds {
    /// 1,024 connections (a client holds two or three), 10 s for a request head, 2 minutes
    /// idle (event streams send a keep-alive every 15 s).
    fn default() -> Self {
        Bounds {
            max_connections: 1024,
            head_deadline: Duration::from_secs(10),
            idle: Duration::from_secs(120),
        }
    }
}

/// What a connection past the bound is told before it is closed: a JSON-RPC error body, as
/// every refusal of the transport (MCP-BINDING section 2).
fn over_the_bound(max: usize) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
        "message": format!("this server holds its maximum of {max} connections; try again later")}})
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// How many open connections a runtime takes before the next runtime is used: a client's
/// dialogue holds two or three at once (its POSTs, its GET stream).
const FILL: usize = 4;

/// The most sessions remembered: past that the map starts again (a session it forgot is
/// dealt as a new client's; sessions also end unseen, when they expire).
const MAX_SESSIONS: usize = 65_536;

const SESSION_HEADER: &str = "mcp-session-id";

thread_local! {
    /// The runtime this thread runs (`None` outside the serving threads).
    static CORE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Which runtime holds each MCP session.
#[derive(Default)]
struct Sessions {
    by_id: Mutex<HashMap<String, usize>>,
}

impl Sessions {
    fn learn(&self, id: &str, core: usize) {
        let mut by_id = self.by_id.lock().unwrap_or_else(|e| e.into_inner());
        if by_id.len() >= MAX_SESSIONS {
            by_id.clear();
        }
        by_id.insert(id.to_owned(), core);
    }

    fn forget(&self, id: &str) {
        self.by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    fn core_of(&self, id: &str) -> Option<usize> {
        self.by_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .copied()
    }
}

/// Around every request: a session made here (a request without `Mcp-Session-Id` answered
/// with one) is learnt as this runtime's; a session deleted is forgotten.
async fn learn_sessions(
    sessions: Arc<Sessions>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let asked = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let deleting = request.method() == http::Method::DELETE;
    let response = next.run(request).await;
    match asked {
        None => {
            if let (Some(id), Some(core)) = (
                response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|v| v.to_str().ok()),
                CORE.get(),
            ) {
                sessions.learn(id, core);
            }
        }
        Some(id) if deleting && response.status().is_success() => sessions.forget(&id),
        Some(_) => {}
    }
    response
}

/// The `Mcp-Session-Id` of the first request head in `bytes`, if it has come whole: `Err`
/// while it is still coming.
fn session_of_head(bytes: &[u8]) -> Result<Option<String>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; 48];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(bytes) {
        Ok(httparse::Status::Complete(_)) => Ok(request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(SESSION_HEADER))
            .and_then(|h| std::str::from_utf8(h.value).ok())
            .map(|v| v.trim().to_owned())),
        Ok(httparse::Status::Partial) => Err(()),
        // Not HTTP/1 as httparse reads it (too many headers, HTTP/2's preface): no session.
        Err(_) => Ok(None),
    }
}

/// The session of a new connection's first request, read with `peek` (hyper reads it again on
/// the runtime the connection goes to): `Ok(None)` when it does not name one or is not
/// HTTP/1; `Err` when no whole head came within `deadline` (a client that sends its headers
/// slowly, or nothing): such a connection is closed, so that slow clients cannot hold the
/// descriptors normal ones need.
async fn first_session(stream: &TcpStream, deadline: Duration) -> Result<Option<String>, ()> {
    let mut buffer = vec![0u8; 16 * 1024];
    let look = async {
        let mut wait = Duration::from_millis(1);
        loop {
            let n = stream.peek(&mut buffer).await.map_err(|_| ())?;
            if n == 0 {
                return Err(());
            }
            match session_of_head(&buffer[..n]) {
                Ok(session) => return Ok(session),
                // A head larger than this: hyper refuses what it cannot take.
                Err(()) if n == buffer.len() => return Ok(None),
                // Part of the head: `peek` would return the same bytes at once, so wait for
                // the rest (a head is nearly always written whole), longer each time.
                Err(()) => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(100));
                }
            }
        }
    };
    tokio::time::timeout(deadline, look).await.map_err(|_| ())?
}

/// One runtime, as the acceptor sees it.
struct Core {
    dealer: mpsc::UnboundedSender<Connection>,
    /// Its connections still open.
    open: Arc<AtomicUsize>,
}

/// The first runtime with room below `FILL`, else the one with the fewest connections.
fn choose(cores: &[Core]) -> usize {
    let open = |c: &Core| c.open.load(Ordering::Relaxed);
    cores
        .iter()
        .position(|c| open(c) < FILL)
        .unwrap_or_else(|| {
            (0..cores.len())
                .min_by_key(|&i| open(&cores[i]))
                .unwrap_or(0)
        })
}

/// The connections dealt to one runtime, as a listener axum can serve.
struct Dealt {
    connections: mpsc::UnboundedReceiver<Connection>,
    open: Arc<AtomicUsize>,
    local: SocketAddr,
    idle: Duration,
}

impl Listener for Dealt {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        loop {
            let Some((stream, peer)) = self.connections.recv().await else {
                // The acceptor has stopped, so the server is shutting down: nothing more comes,
                // and axum's graceful shutdown ends the serving.
                return std::future::pending().await;
            };
            // Registers the socket with this runtime's reactor.
            match TcpStream::from_std(stream) {
                Ok(stream) => {
                    let open = self.open.clone();
                    let deadline = Box::pin(tokio::time::sleep(self.idle));
                    return (
                        Counted {
                            stream,
                            open,
                            idle: self.idle,
                            deadline,
                        },
                        peer,
                    );
                }
                Err(e) => {
                    self.open.fetch_sub(1, Ordering::Relaxed);
                    tracing::warn!("a connection from {peer} could not be served: {e}");
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}

/// Descriptors kept for everything but connections: the listener, the runtimes' epoll and
/// wakers, standard streams, files being read or written.
const RESERVED_DESCRIPTORS: u64 = 64;

/// How many descriptors this process may open, its soft limit raised to the hard one first
/// (as Go's runtime does): a stock system's soft limit of 1,024 would be reached before the
/// bound of 1,024 connections, and then `accept` fails for every client, normal ones
/// included. None where it cannot be read.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn descriptors() -> Option<u64> {
    // SAFETY: getrlimit and setrlimit only read and fill the struct they are given.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
        Some(limit.rlim_cur as u64)
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn descriptors() -> Option<u64> {
    None
}

/// `bounds` with its connections lowered to what the descriptors this process may open can
/// hold, each connection taking `per_connection` of them (the proxy's take one more towards
/// its upstream): past the bound a client is told so (503), where past the descriptors it
/// would get nothing at all. Said in the log when lowered.
pub fn fit_to_descriptors(bounds: Bounds, per_connection: u64) -> Bounds {
    let Some(limit) = descriptors() else {
        return bounds;
    };
    let room = (limit.saturating_sub(RESERVED_DESCRIPTORS) / per_connection.max(1)).max(1);
    if (bounds.max_connections as u64) <= room {
        return bounds;
    }
    tracing::warn!(
        "this process may open {limit} descriptors (ulimit -n): it holds at most {room} \
         connections, not {}",
        bounds.max_connections
    );
    Bounds {
        max_connections: room as usize,
        ..bounds
    }
}

/// Serves `app` on the connections `listener` accepts until `stop` is cancelled, each
/// connection on one of a runtime per core (threads of their own). The acceptor runs on the
/// current runtime; the returned task ends when every runtime has finished serving (axum's
/// graceful shutdown: connections are asked to close and their requests finish).
pub fn serve(
    listener: TcpListener,
    app: axum::Router,
    stop: CancellationToken,
    bounds: Bounds,
) -> io::Result<tokio::task::JoinHandle<io::Result<()>>> {
    // Half the cores, as `load` takes half for its dialogues: the clients of the reference
    // server run on the same machine in most runs (tests, benches, someone trying it), and
    // a serving thread that shares a core with them is preempted and woken by turns. On 2
    // vCPUs, `load`'s 8 sessions made 11,600 turns/s on one runtime against 7,400 on two.
    let cores = std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1));
    serve_on(listener, app, stop, cores, fit_to_descriptors(bounds, 1))
}

/// `serve` on `cores` runtimes.
fn serve_on(
    listener: TcpListener,
    app: axum::Router,
    stop: CancellationToken,
    cores: usize,
    bounds: Bounds,
) -> io::Result<tokio::task::JoinHandle<io::Result<()>>> {
    let local = listener.local_addr()?;
    let sessions = Arc::new(Sessions::default());
    let app = app.layer(axum::middleware::from_fn({
        let sessions = sessions.clone();
        move |request, next| learn_sessions(sessions.clone(), request, next)
    }));
    let mut dealt = Vec::with_capacity(cores);
    let mut finished = Vec::with_capacity(cores);
    for core in 0..cores {
        let (runtime, finish) = start_core(core, app.clone(), stop.clone(), local, bounds)?;
        dealt.push(runtime);
        finished.push(finish);
    }
    let dealt = Arc::new(dealt);
    Ok(tokio::spawn(async move {
        accept_and_deal(listener, &stop, dealt, sessions, bounds).await;
        let mut result = Ok(());
        for finish in finished {
            let served = finish
                .await
                .unwrap_or_else(|_| Err(io::Error::other("an HTTP serving thread stopped")));
            if result.is_ok() {
                result = served;
            }
        }
        result
    }))
}

/// Runtime number `core`, on a thread of its own, serving `app` on the connections dealt to
/// it until `stop`; with what tells when it has finished.
fn start_core(
    core: usize,
    app: axum::Router,
    stop: CancellationToken,
    local: SocketAddr,
    bounds: Bounds,
) -> io::Result<(Core, oneshot::Receiver<io::Result<()>>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (dealer, connections) = mpsc::unbounded_channel();
    let open = Arc::new(AtomicUsize::new(0));
    let (done, finish) = oneshot::channel();
    let counted = open.clone();
    std::thread::Builder::new()
        .name(format!("http-{core}"))
        .stack_size(crate::protocol::json::DEEP_STACK)
        .spawn(move || {
            CORE.set(Some(core));
            let listener = Dealt {
                connections,
                open: counted,
                local,
                idle: bounds.idle,
            };
            let served = runtime.block_on(serve_dealt(listener, app, stop, bounds));
            let _ = done.send(served);
        })?;
    Ok((Core { dealer, open }, finish))
}

/// Accepts connections until `stop`: past the bound each is told so and closed, the others
/// dealt to a runtime. Returns once the runtimes can take no more (every dealer dropped).
async fn accept_and_deal(
    mut listener: TcpListener,
    stop: &CancellationToken,
    dealt: Arc<Vec<Core>>,
    sessions: Arc<Sessions>,
    bounds: Bounds,
) {
    // Connections accepted and not yet dealt (their first head awaited).
    let looking = Arc::new(AtomicUsize::new(0));
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            accepted = Listener::accept(&mut listener) => accepted,
        };
        // Small writes go out at once: without TCP_NODELAY a Response written in two parts
        // waits for the client's delayed acknowledgement (about 40 ms a turn).
        let _ = stream.set_nodelay(true);
        // Past the bound (those being looked at count too): told so, and closed.
        let open = dealt
            .iter()
            .map(|c| c.open.load(Ordering::Relaxed))
            .sum::<usize>()
            + looking.load(Ordering::Relaxed);
        if open >= bounds.max_connections {
            tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                let mut stream = stream;
                let _ = tokio::time::timeout(
                    Duration::from_secs(1),
                    stream.write_all(&over_the_bound(bounds.max_connections)),
                )
                .await;
            });
            continue;
        }
        // Dealt from a task of its own: the look at its first request may wait.
        let looking = Looking::new(looking.clone());
        tokio::spawn(deal(
            stream,
            peer,
            dealt.clone(),
            sessions.clone(),
            looking,
            bounds,
        ));
    }
    // The runtimes stop taking connections once every dealer is gone: this one now, those
    // of connections whose first request head is awaited (`Bounds::head_deadline`).
}

/// One connection dealt once its first request head has come: to the runtime that holds
/// the MCP session it names, else to the least busy; closed if no head comes in time.
async fn deal(
    stream: TcpStream,
    peer: SocketAddr,
    dealt: Arc<Vec<Core>>,
    sessions: Arc<Sessions>,
    looking: Looking,
    bounds: Bounds,
) {
    let Ok(session) = first_session(&stream, bounds.head_deadline).await else {
        tracing::info!(
            "closed a connection from {peer}: no request head within {} s",
            bounds.head_deadline.as_secs()
        );
        return;
    };
    drop(looking);
    let index = session
        .and_then(|id| sessions.core_of(&id))
        .filter(|&i| i < dealt.len())
        .unwrap_or_else(|| choose(&dealt));
    match stream.into_std() {
        Ok(stream) => {
            let core = &dealt[index];
            core.open.fetch_add(1, Ordering::Relaxed);
            // A runtime that has stopped (it cannot before `stop`) drops it: closed.
            let _ = core.dealer.send((stream, peer));
        }
        Err(e) => tracing::warn!("a connection from {peer} could not be served: {e}"),
    }
}

/// Serves the connections dealt to this runtime until `stop`, each with hyper's HTTP/1
/// server: every request's head (not only a connection's first, which the acceptor waits
/// for) must come whole within `Bounds::head_deadline`, timed from when the connection is
/// ready for it, so a kept-alive connection that starts a head and stalls is closed too (axum's
/// `serve` sets no timer, and hyper then has no header deadline). On `stop`, no new connection
/// is taken, the open ones finish their requests (hyper's graceful shutdown) and this returns
/// once all are closed, as axum's graceful shutdown does.
async fn serve_dealt(
    mut listener: Dealt,
    app: axum::Router,
    stop: CancellationToken,
    bounds: Bounds,
) -> io::Result<()> {
    // Each connection's task holds a receiver: all are gone once every connection has closed.
    let (closed, open) = tokio::sync::watch::channel(());
    loop {
        let (io, _peer) = tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let (stop, open) = (stop.clone(), open.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(bounds.head_deadline);
            let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(io), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(e) = served {
                        tracing::debug!("a connection ended: {e}");
                    }
                }
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(open);
        });
    }
    drop(open);
    closed.closed().await;
    Ok(())
}

/// A connection being looked at by the acceptor, counted against the bound until dealt.
struct Looking(Arc<AtomicUsize>);

impl Looking {
    fn new(count: Arc<AtomicUsize>) -> Looking {
        count.fetch_add(1, Ordering::Relaxed);
        Looking(count)
    }
}

impl Drop for Looking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A served connection, counted among its runtime's open ones until it closes; one with no
/// byte read or written for `idle` fails its next read or write (hyper then closes it).
struct Counted {
    stream: TcpStream,
    open: Arc<AtomicUsize>,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Counted {
    /// After a read or a write: the idle time starts again.
    fn active(&mut self) {
        let next = tokio::time::Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
    }

    /// Pending I/O: an error once the connection has been idle for too long.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.deadline.as_mut().poll(cx).is_ready()
    }
}

fn idle_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the connection was idle for too long",
    )
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.active();
                Poll::Ready(r)
            }
            Poll::Pending if this.expired(cx) => Poll::Ready(Err(idle_error())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write(cx, buf) {
            Poll::Ready(r) => {
                this.active();
                Poll::Ready(r)
            }
            Poll::Pending if this.expired(cx) => Poll::Ready(Err(idle_error())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write_vectored(cx, bufs) {
            Poll::Ready(r) => {
                this.active();
                Poll::Ready(r)
            }
            Poll::Pending if this.expired(cx) => Poll::Ready(Err(idle_error())),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(open: &[usize]) -> Vec<Core> {
        open.iter()
            .map(|&n| Core {
                dealer: mpsc::unbounded_channel().0,
                open: Arc::new(AtomicUsize::new(n)),
            })
            .collect()
    }

    #[test]
    fn a_request_heads_session_is_read_when_the_head_is_whole() {
        let head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nMcp-Session-Id: abc \r\n\r\n{";
        assert_eq!(session_of_head(head), Ok(Some("abc".into())));
        assert_eq!(session_of_head(&head[..30]), Err(()), "still coming");
        assert_eq!(
            session_of_head(b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n"),
            Ok(None)
        );
        assert_eq!(
            session_of_head(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
            Ok(None)
        );
    }

    /// One HTTP/1.1 request on a new connection (closed after it): the answer's `x-core`, and
    /// its `mcp-session-id` if it made a session.
    async fn core_serving(addr: SocketAddr, session: Option<&str>) -> (String, Option<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let session = session
            .map(|s| format!("mcp-session-id: {s}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{session}content-length: 0\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let header = |name: &str| {
            answer
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_owned())
        };
        let core = header("x-core: ").unwrap_or_else(|| panic!("{answer}"));
        (core, header("mcp-session-id: "))
    }

    /// A connection naming a session goes to the runtime that made the session, not to the
    /// one `choose` would give it.
    #[tokio::test]
    async fn a_sessions_new_connection_goes_to_the_runtime_that_holds_it() {
        use axum::http::HeaderValue;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // Answers with the runtime serving it; a request without a session makes one.
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let app = axum::Router::new().fallback(|request: axum::extract::Request| async move {
            let mut response = axum::response::Response::new(axum::body::Body::empty());
            let core = CORE.get().map(|c| c.to_string()).unwrap_or_default();
            response
                .headers_mut()
                .insert("x-core", HeaderValue::from_str(&core).unwrap());
            if !request.headers().contains_key(SESSION_HEADER) {
                let id = format!("s{}", MADE.fetch_add(1, Ordering::Relaxed));
                response
                    .headers_mut()
                    .insert(SESSION_HEADER, HeaderValue::from_str(&id).unwrap());
            }
            response
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let served = serve_on(listener, app, stop.clone(), 2, Bounds::default()).unwrap();
        // Four kept-alive connections, each answered (so dealt), fill the first runtime; the
        // session is then made on the second.
        let mut kept = Vec::new();
        for _ in 0..FILL {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            let mut head = Vec::new();
            while !head.ends_with(b"\r\n\r\n") {
                let mut byte = [0u8; 1];
                stream.read_exact(&mut byte).await.unwrap();
                head.push(byte[0]);
            }
            assert!(String::from_utf8_lossy(&head).contains("x-core: 0"));
            kept.push(stream);
        }
        let (core, session) = core_serving(addr, None).await;
        assert_eq!(core, "1");
        let session = session.expect("a session made");
        // Once the first runtime has room again (its connections' ends seen), a new client
        // goes there, and the session's connection to its own runtime.
        drop(kept);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while core_serving(addr, None).await.0 != "0" {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the first runtime never had room again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(core_serving(addr, Some(&session)).await.0, "1");
        assert_eq!(
            core_serving(addr, Some("unknown")).await.0,
            "0",
            "a session not made here is dealt as a new client"
        );
        stop.cancel();
        served.await.unwrap().unwrap();
    }

    #[test]
    fn a_runtime_is_filled_before_the_next_then_the_least_busy_is_chosen() {
        assert_eq!(choose(&cores(&[0, 0])), 0);
        assert_eq!(choose(&cores(&[FILL - 1, 0])), 0);
        assert_eq!(choose(&cores(&[FILL, 0])), 1);
        assert_eq!(choose(&cores(&[FILL, FILL - 1, 0])), 1);
        assert_eq!(choose(&cores(&[FILL + 2, FILL + 1])), 1);
        assert_eq!(choose(&cores(&[FILL, FILL])), 0);
        assert_eq!(choose(&cores(&[3])), 0);
        assert_eq!(choose(&cores(&[FILL + 9])), 0);
    }
}
