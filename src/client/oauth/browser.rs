//! The person's part of a sign-in: a browser opened on the authorization URL, and a loopback
//! listener for the redirect that brings the code back.
//!
//! The browser is `$BROWSER` when it is set (a `:`-separated list of commands, as the
//! convention has it; `%s` in a command stands for the URL, else the URL is added as the last
//! argument), else the desktop's opener (`xdg-open` with a display, `open` on macOS). On a
//! remote terminal there is none: the URL is shown, and the user opens it wherever their
//! browser is (the redirect goes to 127.0.0.1, so that browser must be on this machine, or
//! the port forwarded).

use axum::extract::{RawQuery, State};
use axum::response::Html;
use std::process::Stdio;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Opens `url` in a browser; says which command did, or None when there is no browser to
/// open (the caller shows the URL either way).
pub async fn open(url: &str) -> Option<String> {
    let commands: Vec<String> = match std::env::var("BROWSER") {
        Ok(list) if !list.trim().is_empty() => list.split(':').map(str::to_owned).collect(),
        _ => desktop_opener().into_iter().collect(),
    };
    for line in commands {
        if launch(&line, url).await {
            return Some(line);
        }
    }
    None
}

fn desktop_opener() -> Option<String> {
    if cfg!(target_os = "macos") {
        return Some("open".into());
    }
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    (display && which::which("xdg-open").is_ok()).then(|| "xdg-open".into())
}

/// Starts one browser command, detached from the terminal (its output would draw over the
/// explorer). One that ends at once with a failure (not installed, no display) did not open
/// anything; one still running after a moment, or that ended well (openers hand the URL to
/// a running browser and exit), did. A task waits for it so that it does not linger as a
/// zombie.
async fn launch(line: &str, url: &str) -> bool {
    let Some(mut words) = shlex::split(line.trim()) else {
        return false;
    };
    if words.is_empty() {
        return false;
    }
    if words.iter().any(|w| w.contains("%s")) {
        for w in &mut words {
            *w = w.replace("%s", url);
        }
    } else {
        words.push(url.to_owned());
    }
    let spawned = tokio::process::Command::new(&words[0])
        .args(&words[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = spawned else {
        return false;
    };
    match tokio::time::timeout(Duration::from_millis(500), child.wait()).await {
        Ok(Ok(status)) => status.success(),
        Ok(Err(_)) => false,
        Err(_) => {
            tokio::spawn(async move { child.wait().await });
            true
        }
    }
}

/// A listener on 127.0.0.1 for the authorization server's redirect.
pub struct Callback {
    listener: TcpListener,
    port: u16,
}

impl Callback {
    /// Listens on `port`, or on a port the system picks.
    pub async fn bind(port: Option<u16>) -> Result<Callback, String> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| {
                format!(
                    "cannot listen on 127.0.0.1:{} for the sign-in's redirect: {e}",
                    port.unwrap_or(0)
                )
            })?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        Ok(Callback { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits for the redirect and returns its whole URL (code, state and perhaps iss), or the
    /// error the authorization server sent back. The browser gets a page that says which.
    pub async fn wait(self, timeout: Duration) -> Result<String, String> {
        let (tx, mut rx) = mpsc::channel::<Result<String, String>>(1);
        let base = format!("http://127.0.0.1:{}/callback", self.port);
        let app = axum::Router::new()
            .route("/callback", axum::routing::get(redirected))
            .with_state((tx, base));
        // Bounded as every listener of this program: anything on the machine can connect to
        // it while the sign-in waits, and must not hold it (or its descriptors) for ever.
        let stop = tokio_util::sync::CancellationToken::new();
        let server = crate::server::per_core::serve(self.listener, app, stop.clone(), BOUNDS)
            .map_err(|e| format!("cannot serve the sign-in's redirect: {e}"))?;
        let outcome = tokio::time::timeout(timeout, rx.recv()).await;
        stop.cancel();
        // The page must reach the browser before the listener goes.
        let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
        match outcome {
            Ok(Some(result)) => result,
            Ok(None) => Err("the sign-in's redirect listener stopped".into()),
            Err(_) => Err(format!(
                "nobody finished signing in within {} s",
                timeout.as_secs()
            )),
        }
    }
}

/// What the redirect listener holds at most: a browser opens a connection or two.
pub const BOUNDS: crate::server::per_core::Bounds = crate::server::per_core::Bounds {
    max_connections: 16,
    head_deadline: Duration::from_secs(10),
    idle: Duration::from_secs(30),
};

type CallbackState = (mpsc::Sender<Result<String, String>>, String);

async fn redirected(
    State((tx, base)): State<CallbackState>,
    RawQuery(query): RawQuery,
) -> Html<String> {
    let query = query.unwrap_or_default();
    let full = format!("{base}?{query}");
    let pairs: Vec<(String, String)> = reqwest::Url::parse(&full)
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default();
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (result, page) = if let Some(error) = get("error") {
        let description = get("error_description").unwrap_or_default();
        let why = format!(
            "the authorization server refused: {error}{}",
            if description.is_empty() {
                String::new()
            } else {
                format!(" ({description})")
            }
        );
        (
            Err(why.clone()),
            format!("Sign-in failed: {}", escape(&why)),
        )
    } else if get("code").is_none() {
        let why = "the redirect carried no code".to_owned();
        (Err(why.clone()), format!("Sign-in failed: {why}"))
    } else {
        (
            Ok(full),
            "Signed in. You can close this tab and go back to bkn-explorer.".to_owned(),
        )
    };
    let _ = tx.try_send(result);
    Html(format!(
        "<!doctype html><meta charset=utf-8><title>bkn-explorer</title><p>{page}</p>"
    ))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_redirect_brings_back_its_url_or_the_servers_refusal() {
        let callback = Callback::bind(None).await.unwrap();
        let uri = callback.redirect_uri();
        let waiting = tokio::spawn(callback.wait(Duration::from_secs(5)));
        let page = reqwest::get(format!("{uri}?code=abc&state=xyz"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(page.contains("Signed in"), "{page}");
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            format!("{uri}?code=abc&state=xyz")
        );

        let callback = Callback::bind(None).await.unwrap();
        let uri = callback.redirect_uri();
        let waiting = tokio::spawn(callback.wait(Duration::from_secs(5)));
        let _ = reqwest::get(format!(
            "{uri}?error=access_denied&error_description=no%20thanks"
        ))
        .await;
        let why = waiting.await.unwrap().unwrap_err();
        assert_eq!(
            why,
            "the authorization server refused: access_denied (no thanks)"
        );
    }

    /// The redirect listener is bounded as every listener: past `BOUNDS.max_connections`
    /// connections that never finish their head, a new one is told 503; a kept-alive
    /// connection that stalls in a later request's head is closed by the head deadline; and
    /// the browser's redirect is still taken once the slow ones are gone.
    #[tokio::test]
    async fn the_redirect_listener_is_bounded() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let callback = Callback::bind(None).await.unwrap();
        let uri = callback.redirect_uri();
        let address = uri
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_owned();
        let waiting = tokio::spawn(callback.wait(Duration::from_secs(120)));
        let read_some = |mut stream: tokio::net::TcpStream| async move {
            let mut answer = vec![0u8; 2048];
            let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
                .await
                .expect("an answer at once")
                .unwrap_or(0);
            (String::from_utf8_lossy(&answer[..n]).into_owned(), stream)
        };
        // A kept-alive connection: its first request answered, its second head stalled.
        let mut kept = tokio::net::TcpStream::connect(&address).await.unwrap();
        kept.write_all(format!("GET /nothing HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let (first, mut kept) = read_some(kept).await;
        assert!(first.starts_with("HTTP/1.1 404"), "{first}");
        kept.write_all(b"GET /nothing HTTP/1.1\r\nHost: ")
            .await
            .unwrap();
        let mut slow = Vec::new();
        for _ in 1..BOUNDS.max_connections {
            let mut s = tokio::net::TcpStream::connect(&address).await.unwrap();
            s.write_all(b"GET /callback HTTP/1.1\r\nHost: ")
                .await
                .unwrap();
            slow.push(s);
        }
        let mut told = String::new();
        for _ in 0..100 {
            let s = tokio::net::TcpStream::connect(&address).await.unwrap();
            let mut s = s;
            s.write_all(b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            told = read_some(s).await.0;
            if told.starts_with("HTTP/1.1 503") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(told.contains("maximum of 16 connections"), "{told}");
        // The stalled head is closed (10 s), far sooner than the idle bound (30 s) would.
        let closed = async {
            let mut buffer = [0u8; 1024];
            while let Ok(n) = kept.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(25), closed)
            .await
            .expect("a stalled head closed by its deadline");
        drop(slow);
        // Once the slow ones are closed too, the redirect comes through.
        let mut page = String::new();
        for _ in 0..100 {
            match reqwest::get(format!("{uri}?code=abc&state=xyz")).await {
                Ok(r) if r.status().is_success() => {
                    page = r.text().await.unwrap();
                    break;
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        assert!(page.contains("Signed in"), "{page}");
        assert!(waiting.await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn nobody_signing_in_ends_with_a_reason() {
        let callback = Callback::bind(None).await.unwrap();
        let why = callback.wait(Duration::from_millis(50)).await.unwrap_err();
        assert!(why.contains("within 0 s"), "{why}");
    }
}
