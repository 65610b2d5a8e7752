//! One sign-in: discovery, the client's identity, the browser step and the code exchange.
//!
//! The client's identity follows the specification's order: a client ID configured for the
//! server (with its secret, if it has one); else this client's Client ID Metadata Document
//! URL, when one is configured and the authorization server accepts URL client IDs; else
//! dynamic client registration. Registration is done here rather than inside rmcp so that
//! the secret an authorization server may issue is kept for refreshing in a later run (rmcp
//! keeps only the client ID). It is done anew at each sign-in, because the redirect URI it
//! registers names this sign-in's loopback port.

use super::browser::{self, Callback};
use super::store::Store;
use super::{OAuthOptions, SignInNotice};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession,
};
use std::time::Duration;

/// The name this client registers under.
const CLIENT_NAME: &str = "bkn-explorer";

/// Signs in to `resource` and returns the manager that holds the new tokens (they are also in
/// `store`). `challenge` is the `WWW-Authenticate` of the refusal that asked for it;
/// `scopes`, when given, are asked for instead of the ones discovery selects (a step-up).
pub async fn sign_in(
    resource: &str,
    challenge: Option<&str>,
    scopes: Option<Vec<String>>,
    options: &OAuthOptions,
    store: &Store,
    timeout: Duration,
    notify: &(dyn Fn(SignInNotice) + Send + Sync),
) -> Result<AuthorizationManager, String> {
    let (mut manager, found) = discover(resource, challenge, store).await?;
    let callback = Callback::bind(options.callback_port).await?;
    let redirect_uri = callback.redirect_uri();
    let scopes = match scopes {
        Some(s) => s,
        None if !options.scopes.is_empty() => options.scopes.clone(),
        None => manager.select_scopes(None, &[]),
    };
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name(CLIENT_NAME);
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.clone());
    }
    let (request, secret) = identified(
        request,
        &mut manager,
        &found,
        options,
        &scopes,
        &redirect_uri,
    )
    .await?;
    store.set_client_secret(secret);
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| words(&e))?;
    let url = session.get_authorization_url().to_owned();
    let opened = browser::open(&url).await;
    if opened.is_none() && !options.someone_watches {
        return Err(format!(
            "no browser could be opened (set BROWSER) and no one is at a terminal to open the \
             URL; sign in where there is one: `bkn-explorer auth login {resource}`"
        ));
    }
    notify(SignInNotice::Open {
        url,
        browser: opened,
    });
    let redirect = callback.wait(timeout).await?;
    session
        .handle_callback_url(&redirect)
        .await
        .map_err(|e| format!("the token exchange failed: {}", words(&e)))?;
    notify(signed_in(store));
    Ok(session.auth_manager)
}

/// The authorization server's metadata, as discovery found it.
struct Found {
    metadata: AuthorizationMetadata,
    /// Found by the legacy fallback (no protected resource or authorization server
    /// metadata): a server that may want a plain bearer token instead.
    legacy: bool,
}

/// Discovery, from the refusal's challenge: the manager that knows the authorization server,
/// keeping its tokens in `store`.
async fn discover(
    resource: &str,
    challenge: Option<&str>,
    store: &Store,
) -> Result<(AuthorizationManager, Found), String> {
    let mut manager = AuthorizationManager::new(resource)
        .await
        .map_err(|e| format!("cannot use OAuth with {resource}: {}", words(&e)))?;
    manager.set_credential_store(store.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| format!("discovery failed: {}", words(&e)))?;
    let metadata = resolution.metadata;
    let legacy = resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback;
    if legacy && challenge.is_none() {
        return Err(format!(
            "{resource} did not ask for a sign-in and publishes no OAuth metadata (no protected \
             resource or authorization server metadata): there is nothing to sign in to"
        ));
    }
    manager.set_metadata(metadata.clone());
    Ok((manager, Found { metadata, legacy }))
}

/// The request with the client's identity, in the specification's order (see the module's
/// comment), and the secret to keep for refreshing, if there is one.
async fn identified(
    request: AuthorizationRequest,
    manager: &mut AuthorizationManager,
    found: &Found,
    options: &OAuthOptions,
    scopes: &[String],
    redirect_uri: &str,
) -> Result<(AuthorizationRequest, Option<String>), String> {
    let Found { metadata, legacy } = found;
    let accepts_url_ids = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if let Some(id) = &options.client_id {
        let request = request.with_preregistered_client(id);
        return Ok(match &options.client_secret {
            Some(s) => (request.with_client_secret(s), Some(s.clone())),
            None => (request, None),
        });
    }
    if let Some(url) = options
        .client_metadata_url
        .as_ref()
        .filter(|_| accepts_url_ids)
    {
        return Ok((request.with_client_metadata_url(url), None));
    }
    if metadata.registration_endpoint.is_some() {
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let registered = manager
            .register_client(CLIENT_NAME, redirect_uri, &refs)
            .await
            .map_err(|e| {
                if *legacy {
                    plain_bearer()
                } else {
                    format!(
                        "registering with the authorization server failed: {}",
                        words(&e)
                    )
                }
            })?;
        let mut request = request.with_preregistered_client(&registered.client_id);
        if let Some(s) = &registered.client_secret {
            request = request.with_client_secret(s);
        }
        return Ok((request, registered.client_secret));
    }
    if *legacy {
        return Err(plain_bearer());
    }
    Err(format!(
        "the authorization server ({}) does not offer dynamic client registration{}; give a \
         client ID registered with it: --client-id ID (and --client-secret)",
        metadata
            .issuer
            .as_deref()
            .unwrap_or(&metadata.authorization_endpoint),
        if *legacy {
            " and publishes no metadata"
        } else {
            ""
        }
    ))
}

/// What the new tokens allow, and for how long.
fn signed_in(store: &Store) -> SignInNotice {
    let record = store.record();
    SignInNotice::SignedIn {
        scopes: record
            .as_ref()
            .map(|r| r.scopes().to_vec())
            .unwrap_or_default(),
        expires_in: record.as_ref().and_then(|r| {
            r.expires_at()?
                .duration_since(std::time::SystemTime::now())
                .ok()
        }),
    }
}

/// rmcp's auth errors, in words a user can act on.
pub fn words(error: &AuthError) -> String {
    match error {
        AuthError::NoAuthorizationSupport => {
            "the server publishes no OAuth metadata (no protected resource or authorization \
             server metadata was found)"
                .into()
        }
        AuthError::PkceUnsupported => {
            "the authorization server does not support PKCE with S256, which OAuth 2.1 requires"
                .into()
        }
        other => other.to_string(),
    }
}

/// A server that answers 401 with a bare `WWW-Authenticate: Bearer` and publishes no OAuth
/// metadata (neither protected-resource nor authorization-server) most likely takes a plain
/// bearer token, as `serve --token` does: that is all that is said. The OAuth sign-in at the
/// default endpoints (MCP 2025-03-26's fallback) was tried too, and how it failed (a
/// registration refused with the server's own 401 body) adds nothing a user can act on.
fn plain_bearer() -> String {
    "the server asks for a bearer token and publishes no OAuth metadata: give it one with \
     --token TOKEN (or BKN_TOKEN)"
        .to_owned()
}
