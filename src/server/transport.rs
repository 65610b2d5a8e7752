//! Serving a reference server over stdio or Streamable HTTP.
//!
//! HTTP is guarded as MCP's security practices ask: it binds to loopback unless told
//! otherwise, checks the Host and Origin headers (DNS rebinding), requires a bearer token when
//! one is set, and limits the size of a request body.

use crate::server::mcp::{Backend, BknServer};
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
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Serves one session over this process's stdin and stdout until the client closes them.
/// When they are pipes (as when a client spawns the server) they are read through epoll
/// rather than tokio's blocking-thread stdin, which halves the time of a turn.
pub async fn serve_stdio<B: Backend>(backend: Arc<B>) -> anyhow::Result<()> {
    let running = BknServer::new(backend)
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
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
    /// A session with no traffic for this long ends, with its dialogue state.
    pub session_idle: Duration,
}

impl HttpOptions {
    pub fn loopback(port: u16) -> HttpOptions {
        HttpOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            allowed_hosts: Vec::new(),
            token: None,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle: Duration::from_secs(30 * 60),
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

    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(String::from)
        .to_vec();
    if !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
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

    let server_name = format!("bkn-explorer-{}", backend.interface().code());
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        move || Ok(BknServer::new(backend.clone())),
        Arc::new(sessions),
        config,
    );
    let token = options.token.clone().map(Arc::new);
    let app =
        axum::Router::new()
            .nest_service("/mcp", service)
            // For monitoring and the load test: how many sessions' state is held.
            .route(
                "/health",
                axum::routing::get(move || {
                    let server_name = server_name.clone();
                    async move {
                        axum::Json(serde_json::json!({
                            "status": "ok",
                            "server": server_name,
                            "sessions": crate::server::mcp::live_sessions(),
                        }))
                    }
                }),
            )
            .layer(axum::middleware::from_fn(
                move |request: Request, next: Next| {
                    let token = token.clone();
                    async move {
                        require_token(token.as_deref().map(String::as_str), request, next).await
                    }
                },
            ));
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    Ok(HttpServer {
        addr,
        shutdown,
        task,
    })
}

async fn require_token(token: Option<&str>, request: Request, next: Next) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "this bkn-explorer server needs Authorization: Bearer <token> (see --token)\n",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Compares without leaking where the first difference is.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
