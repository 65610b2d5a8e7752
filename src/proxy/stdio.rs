//! The stdio proxy: to the agent it is the server. It starts the real server and copies
//! bytes both ways as they come, each read written on at once and unchanged (its stderr is
//! the server's own, inherited). Beside the copying, complete lines go to the observer over a
//! bounded channel that is never waited on: when the checks fall behind, lines pass unchecked
//! and the recording says how many, but the traffic never waits and nothing is buffered
//! without bound (a line longer than the limit is passed on, and only its size is kept).
//!
//! It ends when either side ends: the agent closing its input closes the server's (which
//! then exits; it is killed if it has not within 5 s), and the server's output ending ends
//! the proxy. A stop signal (`stop`: SIGTERM, SIGINT, SIGHUP) ends it the same way as the
//! agent closing its side. The exit status is the server's (128 + the signal when one ended
//! it). Either way every dialogue is closed in the recording (the server, and what it held,
//! is gone), and a dialogue kept by DialogID (2026-07-28) idle for `idle` is closed as idle.

use super::observer::{Observer, Side};
use crate::session::journal::Closing;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Lines waiting for the observer before further ones pass unchecked.
const QUEUE: usize = 4096;

enum Seen {
    Line(Side, Vec<u8>, Instant, SystemTime),
    Oversized(Side, usize),
    Dropped(usize),
}

/// Splits bytes into lines for the observer, keeping at most `limit` bytes of a line.
struct Lines {
    side: Side,
    partial: Vec<u8>,
    /// The length of a line over the limit, counted while its rest goes by.
    over: Option<usize>,
    limit: usize,
    dropped: usize,
}

impl Lines {
    fn feed(&mut self, bytes: &[u8], tx: &mpsc::Sender<Seen>) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let (piece, complete) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = if complete {
                &rest[piece.len() + 1..]
            } else {
                &[]
            };
            match &mut self.over {
                Some(n) => *n += piece.len(),
                None if self.partial.len() + piece.len() > self.limit => {
                    self.over = Some(self.partial.len() + piece.len());
                    self.partial = Vec::new();
                }
                None => self.partial.extend_from_slice(piece),
            }
            if complete {
                let seen = match self.over.take() {
                    Some(n) => Seen::Oversized(self.side, n),
                    None => Seen::Line(
                        self.side,
                        std::mem::take(&mut self.partial),
                        Instant::now(),
                        SystemTime::now(),
                    ),
                };
                if tx.try_send(seen).is_err() {
                    self.dropped += 1;
                }
            }
        }
    }
}

/// Copies `from` to `to` as it comes, showing the lines to the observer.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    side: Side,
    limit: usize,
    tx: mpsc::Sender<Seen>,
) -> std::io::Result<()> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut lines = Lines {
        side,
        partial: Vec::new(),
        over: None,
        limit,
        dropped: 0,
    };
    loop {
        let n = from.read(&mut buffer).await?;
        if n == 0 {
            break;
        }
        // Shown before it is passed on: a Request is then always in the observer's queue
        // before its answer can be (the answer is read only after the write), whichever
        // pump runs first. Showing is a non-blocking send, not a wait.
        lines.feed(&buffer[..n], &tx);
        to.write_all(&buffer[..n]).await?;
        to.flush().await?;
    }
    if lines.dropped > 0 {
        let _ = tx.send(Seen::Dropped(lines.dropped)).await;
    }
    Ok(())
}

/// How the stdio proxy runs besides its server's command.
pub struct Settings<S> {
    /// Messages longer than this pass unchecked and unrecorded.
    pub limit: usize,
    /// A dialogue kept by DialogID with no exchange for this long is closed as idle.
    pub idle: Duration,
    /// Resolves, with the signal's name, when the proxy is asked to stop.
    pub stop: S,
}

/// Runs `command` behind the proxy until either side ends or `stop` resolves; returns the
/// exit status.
pub async fn run<S>(command: &[String], mut observer: Observer, settings: Settings<S>) -> u8
where
    S: std::future::Future<Output = &'static str>,
{
    let Settings { limit, idle, stop } = settings;
    let Some((program, args)) = command.split_first() else {
        eprintln!("bkn-explorer proxy: no server command after --");
        return 2;
    };
    let mut child = match tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            // What the agent would have seen without the proxy: the server never started.
            let why = format!("cannot start {program}: {e}");
            eprintln!("bkn-explorer proxy: {why}");
            observer.note(&why);
            return 127;
        }
    };
    let server_in = child.stdin.take().expect("piped");
    let server_out = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel::<Seen>(QUEUE);
    let watcher = tokio::spawn(observe_all(observer, rx, idle));
    let mut to_server = tokio::spawn(pump(
        tokio::io::stdin(),
        server_in,
        Side::Agent,
        limit,
        tx.clone(),
    ));
    let mut to_agent = Box::pin(pump(
        server_out,
        tokio::io::stdout(),
        Side::Server,
        limit,
        tx.clone(),
    ));
    let mut agent_done = false;
    let why = tokio::select! {
        _ = &mut to_agent => "the server closed its output".to_owned(),
        _ = &mut to_server => {
            agent_done = true;
            // The agent is done: the server sees its input end, as it would without us,
            // and what it still writes goes on to the agent.
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut to_agent).await;
            "the agent closed its side".to_owned()
        }
        signal = stop => {
            // As if the agent had closed its side: the server's input ends (the copy
            // holding it is stopped), and what it still writes goes on to the agent.
            agent_done = true;
            to_server.abort();
            let _ = (&mut to_server).await;
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut to_agent).await;
            format!("the proxy was stopped ({signal})")
        }
    };
    let Some(status) = exit_status(&mut child).await else {
        return 1;
    };
    // Every sender gone, the observer finishes what it has.
    drop(to_agent);
    if !agent_done {
        to_server.abort();
        let _ = to_server.await;
    }
    let code = exit_code(&status);
    drop(tx);
    if let Ok(mut observer) = watcher.await {
        // The server is gone, and what it held of every dialogue with it.
        observer.finish(
            Closing::Ended,
            &format!("{why}; the server exited with {status}"),
            Instant::now(),
            SystemTime::now(),
        );
    }
    code
}

/// Everything the pumps saw, shown to the observer until they are gone, and the dialogues
/// idle for `idle` closed as they come to it (checked a few times within each expiry); the
/// messages the pumps had to drop are noted. The observer is given back to finish.
async fn observe_all(
    mut observer: Observer,
    mut rx: mpsc::Receiver<Seen>,
    idle: Duration,
) -> Observer {
    let mut dropped = 0;
    let tick = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    let mut every = tokio::time::interval(tick);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // Lines first: a dialogue is never found idle while a message of it waits here.
        let seen = tokio::select! {
            biased;
            seen = rx.recv() => seen,
            _ = every.tick() => {
                observer.expire(idle, Instant::now());
                continue;
            }
        };
        let Some(seen) = seen else { break };
        match seen {
            Seen::Line(side, line, at, now) => observer.line(side, &line, at, now),
            Seen::Oversized(side, n) => observer.oversized(side, n),
            Seen::Dropped(n) => dropped += n,
        }
    }
    if dropped > 0 {
        observer.note(&format!(
            "{dropped} messages passed unchecked: the checks fell behind the traffic"
        ));
    }
    observer
}

/// The server's exit status, waited for 5 s before it is killed; None if none can be had.
async fn exit_status(child: &mut tokio::process::Child) -> Option<std::process::ExitStatus> {
    match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => {
            let _ = child.kill().await;
            child.wait().await.ok()
        }
    }
}

fn exit_code(status: &std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return code as u8;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128u8.saturating_add(signal as u8);
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(limit: usize) -> Lines {
        Lines {
            side: Side::Server,
            partial: Vec::new(),
            over: None,
            limit,
            dropped: 0,
        }
    }

    #[test]
    fn lines_are_cut_where_they_end_and_one_over_the_limit_is_only_measured() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut l = lines(10);
        // Pieces as reads deliver them: a line across two reads, a long one across three.
        for piece in [&b"{\"a\":"[..], b"1}\nxxxxxxxx", b"xxxxxxxx", b"xxxx\n{}\n"] {
            l.feed(piece, &tx);
        }
        let mut seen = Vec::new();
        while let Ok(s) = rx.try_recv() {
            seen.push(match s {
                Seen::Line(_, line, ..) => String::from_utf8(line).unwrap(),
                Seen::Oversized(_, n) => format!("oversized {n}"),
                _ => "other".into(),
            });
        }
        assert_eq!(seen, ["{\"a\":1}", "oversized 20", "{}"]);
        assert!(
            l.partial.capacity() <= 16,
            "nothing of the long line was kept"
        );
    }

    #[test]
    fn lines_the_checks_cannot_take_are_counted_not_queued() {
        let (tx, _rx) = mpsc::channel(2);
        let mut l = lines(100);
        l.feed(b"1\n2\n3\n4\n5\n", &tx);
        assert_eq!(l.dropped, 3, "the queue holds 2; the traffic did not wait");
    }
}
