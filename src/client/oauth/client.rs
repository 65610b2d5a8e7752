//! The HTTP client under rmcp's transport for a server that may want OAuth.
//!
//! Each request carries the kept access token when there is one (refreshed first when it is
//! about to expire). When the server still refuses:
//! - 401 with a token sent: the token is refreshed once and the request sent again;
//! - 401 otherwise (or the refresh failed): the person signs in (`sign_in`), then again;
//! - 403 `insufficient_scope` naming scopes the token lacks: a sign-in asking for the union
//!   of the granted and the required scopes (a step-up), then again. A 403 for scopes the
//!   token already has cannot be helped by signing in, and is returned as it is.
//!
//! At most `MAX_SIGN_INS_PER_REQUEST` sign-ins per request. A connection signs in once at a
//! time; a request that waited for another's sign-in uses its token.

use super::sign_in::sign_in;
use super::store::Store;
use super::{MAX_SIGN_INS_PER_REQUEST, OAuthOptions, SIGN_IN_TIMEOUT, SignInMode, SignInNotice};
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthError, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

type Notify = Arc<dyn Fn(SignInNotice) + Send + Sync>;

/// One server's OAuth state for one connection.
pub struct Authorizer {
    resource: String,
    options: OAuthOptions,
    store: Store,
    /// rmcp's manager once a sign-in or a refresh needed one (it holds the client's
    /// registration and the discovered metadata).
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    notify: Notify,
    /// A person is signing in: the time they take is theirs, not the server's.
    waiting: AtomicBool,
    /// Why the last sign-in failed, for the error that ends the connection.
    failure: Mutex<Option<String>>,
}

impl Authorizer {
    pub fn new(resource: &str, options: OAuthOptions, notify: Notify) -> Arc<Authorizer> {
        let (store, problem) = Store::open(options.data_dir.clone(), resource);
        if let Some(problem) = problem {
            notify(SignInNotice::Failed {
                reason: format!("the kept sign-in cannot be read ({problem}); sign in again"),
            });
        }
        Arc::new(Authorizer {
            resource: resource.to_owned(),
            options,
            store,
            manager: tokio::sync::Mutex::new(None),
            notify,
            waiting: AtomicBool::new(false),
            failure: Mutex::new(None),
        })
    }

    /// Whether a token is kept for this server (requests then carry it, refreshed as needed).
    pub fn holds_token(&self) -> bool {
        self.store.record().and_then(|r| r.access_token()).is_some()
    }

    pub fn is_waiting_for_a_person(&self) -> bool {
        self.waiting.load(Ordering::Relaxed)
    }

    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn fail(&self, reason: String) -> String {
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.clone());
        (self.notify)(SignInNotice::Failed {
            reason: reason.clone(),
        });
        reason
    }

    /// The token to send: the kept one, refreshed when it is about to expire; None when there
    /// is none (the request goes without, and the server's refusal says how to sign in).
    async fn token(&self) -> Option<String> {
        let record = self.store.record()?;
        let token = record.access_token()?;
        if record.fresh_at(SystemTime::now()) {
            return Some(token);
        }
        self.refresh(&token).await
    }

    /// A new token for one the server refused or that expired; None when it cannot be had
    /// without a person.
    async fn refresh(&self, refused: &str) -> Option<String> {
        let mut manager = self.manager.lock().await;
        // Another request may have refreshed or signed in meanwhile.
        if let Some(current) = self.store.record().and_then(|r| r.access_token())
            && current != refused
        {
            return Some(current);
        }
        if !self.store.record()?.has_refresh_token() {
            return None;
        }
        if manager.is_none() {
            *manager = self.manager_from_store().await;
        }
        let refreshed = manager.as_ref()?.refresh_token().await;
        match refreshed {
            Ok(_) => {
                let record = self.store.record()?;
                (self.notify)(SignInNotice::Refreshed {
                    expires_in: record
                        .expires_at()
                        .and_then(|at| at.duration_since(SystemTime::now()).ok()),
                });
                record.access_token()
            }
            Err(_) => None,
        }
    }

    /// A manager for the kept sign-in of an earlier run, able to refresh it.
    async fn manager_from_store(&self) -> Option<AuthorizationManager> {
        let record = self.store.record()?;
        let mut manager = AuthorizationManager::new(self.resource.as_str())
            .await
            .ok()?;
        manager.set_credential_store(self.store.clone());
        if !manager.initialize_from_store().await.ok()? {
            return None;
        }
        if let Some(secret) = &record.client_secret {
            let config = OAuthClientConfig::new(&record.credentials.client_id, &self.resource)
                .with_client_secret(secret);
            manager.configure_client(config).ok()?;
        }
        Some(manager)
    }

    /// Signs in (one at a time) and returns the new token. `refused` is the token the server
    /// refused, if any: when another request has signed in meanwhile, its token is used.
    async fn sign_in(
        &self,
        challenge: &str,
        scopes: Option<Vec<String>>,
        refused: Option<&str>,
    ) -> Result<String, String> {
        let mut manager = self.manager.lock().await;
        if scopes.is_none()
            && let Some(current) = self.store.record().and_then(|r| r.access_token())
            && Some(current.as_str()) != refused
        {
            return Ok(current);
        }
        if self.options.sign_in == SignInMode::Never {
            return Err(self.fail(format!(
                "{} wants you to sign in; run `bkn-explorer auth login {}` first",
                self.resource, self.resource
            )));
        }
        self.waiting.store(true, Ordering::Relaxed);
        let result = sign_in(
            &self.resource,
            Some(challenge),
            scopes,
            &self.options,
            &self.store,
            SIGN_IN_TIMEOUT,
            self.notify.as_ref(),
        )
        .await;
        self.waiting.store(false, Ordering::Relaxed);
        match result {
            Ok(signed_in) => {
                *manager = Some(signed_in);
                *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = None;
                self.store
                    .record()
                    .and_then(|r| r.access_token())
                    .ok_or_else(|| self.fail("the sign-in gave no access token".into()))
            }
            Err(reason) => Err(self.fail(reason)),
        }
    }

    fn granted_scopes(&self) -> Vec<String> {
        self.store
            .record()
            .map(|r| r.scopes().to_vec())
            .unwrap_or_default()
    }
}

/// rmcp's HTTP client `C` with OAuth added (or, without an `Authorizer`, `C` as it is: a
/// server given a `--token` or an `Authorization` header is not signed in to).
#[derive(Clone)]
pub struct AuthorizingClient<C> {
    inner: C,
    auth: Option<Arc<Authorizer>>,
}

impl<C> AuthorizingClient<C> {
    pub fn new(inner: C, auth: Option<Arc<Authorizer>>) -> Self {
        AuthorizingClient { inner, auth }
    }
}

impl<C: StreamableHttpClient + Sync> AuthorizingClient<C> {
    /// Runs `call` with the token, reacting to the server's refusals as the module says.
    async fn call<T, F, Fut>(
        &self,
        given: Option<String>,
        call: F,
    ) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let Some(auth) = self.auth.as_ref().filter(|_| given.is_none()) else {
            return call(given).await;
        };
        let mut token = auth.token().await;
        let mut sign_ins = 0;
        let mut refreshed = false;
        loop {
            match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(refusal)) => {
                    if let Some(sent) = &token
                        && !refreshed
                    {
                        refreshed = true;
                        if let Some(new) = auth.refresh(sent).await
                            && new != *sent
                        {
                            token = Some(new);
                            continue;
                        }
                    }
                    if sign_ins == MAX_SIGN_INS_PER_REQUEST {
                        return Err(StreamableHttpError::AuthRequired(refusal));
                    }
                    sign_ins += 1;
                    let new = auth
                        .sign_in(&refusal.www_authenticate_header, None, token.as_deref())
                        .await
                        .map_err(|e| {
                            StreamableHttpError::Auth(AuthError::AuthorizationFailed(e))
                        })?;
                    token = Some(new);
                }
                Err(StreamableHttpError::InsufficientScope(refusal)) => {
                    let granted = auth.granted_scopes();
                    let required: Vec<String> = refusal
                        .required_scope
                        .as_deref()
                        .unwrap_or_default()
                        .split_whitespace()
                        .map(str::to_owned)
                        .collect();
                    let missing = required.iter().any(|s| !granted.contains(s));
                    if !missing || sign_ins == MAX_SIGN_INS_PER_REQUEST {
                        return Err(StreamableHttpError::InsufficientScope(refusal));
                    }
                    sign_ins += 1;
                    let mut union = granted;
                    for s in required {
                        if !union.contains(&s) {
                            union.push(s);
                        }
                    }
                    let new = auth
                        .sign_in(&refusal.www_authenticate_header, Some(union), None)
                        .await
                        .map_err(|e| {
                            StreamableHttpError::Auth(AuthError::AuthorizationFailed(e))
                        })?;
                    token = Some(new);
                }
                other => return other,
            }
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for AuthorizingClient<C> {
    type Error = C::Error;

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
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.call(auth_header, |token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Ending a session never asks anyone to sign in: the kept token or nothing.
        let token = match (&auth_header, &self.auth) {
            (None, Some(auth)) => auth.store.record().and_then(|r| r.access_token()),
            _ => auth_header,
        };
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
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
        // The inner client applies its own ceiling whatever is asked here.
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            usize::MAX,
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
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.call(auth_header, |token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
