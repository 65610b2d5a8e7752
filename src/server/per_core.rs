//! Serving HTTP connections on one single-threaded runtime per core.
//!
//! A turn over HTTP hands over between several tasks: hyper's connection, rmcp's session
//! worker and its service loop, then back to the connection with the answer. On tokio's
//! multi-threaded scheduler each hand-over may wake another worker thread to look for work (a
//! futex wake and a context switch, for nothing when one client talks at a time). So each
//! accepted connection is dealt to one of several single-threaded runtimes, one per core: a
//! connection's tasks, and the session it starts, live on one thread.
//!
//! A client's session is spread over several connections (rmcp's client keeps a GET stream
//! open beside its POSTs, and opens another connection when one is still busy), and a turn
//! that arrives on another runtime than its session's hands over between threads again. So a
//! runtime is filled up to a few connections before the next is used (`FILL`): one client's
//! connections share a thread, and more clients' are spread over every core.
//!
//! Measured on 2 cores (docs/performance.md), alternated with the multi-threaded runtime: one
//! `dialogue --url` went from 2,510–3,060 to 2,720–3,580 turns/s (the server's CPU a turn from
//! 195–240 to 140–195 µs). The price is paid by many sessions of one client: `load` with 8
//! sessions made 6,180–7,450 turns/s against 8,500–10,840, since their turns arrive on either
//! runtime's connections, and each such hand-over wakes a thread that the multi-threaded
//! scheduler, busy on both cores, would often not have had to wake.

use axum::serve::Listener;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

type Connection = (std::net::TcpStream, SocketAddr);

/// How many open connections a runtime takes before the next runtime is used: a client's
/// dialogue holds two or three at once (its POSTs, its GET stream).
const FILL: usize = 4;

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
                    return (Counted { stream, open }, peer);
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

/// Serves `app` on the connections `listener` accepts until `stop` is cancelled, each
/// connection on one of a runtime per core (threads of their own). The acceptor runs on the
/// current runtime; the returned task ends when every runtime has finished serving (axum's
/// graceful shutdown: connections are asked to close and their requests finish).
pub fn serve(
    listener: TcpListener,
    app: axum::Router,
    stop: CancellationToken,
) -> io::Result<tokio::task::JoinHandle<io::Result<()>>> {
    let local = listener.local_addr()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut dealt = Vec::with_capacity(cores);
    let mut finished = Vec::with_capacity(cores);
    for core in 0..cores {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (dealer, connections) = mpsc::unbounded_channel();
        let open = Arc::new(AtomicUsize::new(0));
        let (done, finish) = oneshot::channel();
        let app = app.clone();
        let stop = stop.clone();
        let counted = open.clone();
        std::thread::Builder::new()
            .name(format!("http-{core}"))
            .spawn(move || {
                let listener = Dealt {
                    connections,
                    open: counted,
                    local,
                };
                let served = runtime.block_on(async move {
                    axum::serve(listener, app)
                        .with_graceful_shutdown(stop.cancelled_owned())
                        .await
                });
                let _ = done.send(served);
            })?;
        dealt.push(Core { dealer, open });
        finished.push(finish);
    }
    Ok(tokio::spawn(async move {
        let mut listener = listener;
        loop {
            let (stream, peer) = tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                accepted = Listener::accept(&mut listener) => accepted,
            };
            // Small writes go out at once: without TCP_NODELAY a Response written in two parts
            // waits for the client's delayed acknowledgement (about 40 ms a turn).
            let _ = stream.set_nodelay(true);
            match stream.into_std() {
                Ok(stream) => {
                    let core = &dealt[choose(&dealt)];
                    core.open.fetch_add(1, Ordering::Relaxed);
                    // A runtime that has stopped (it cannot before `stop`) drops it: closed.
                    let _ = core.dealer.send((stream, peer));
                }
                Err(e) => tracing::warn!("a connection from {peer} could not be served: {e}"),
            }
        }
        drop(dealt);
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

/// A served connection, counted among its runtime's open ones until it closes.
struct Counted {
    stream: TcpStream,
    open: Arc<AtomicUsize>,
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
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
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
