//! Where sign-ins are kept: one JSON file per server URL in `<data dir>/oauth/`, readable and
//! writable by the user alone (the folder 0700, each file 0600 from its creation), replaced
//! atomically so that a crash never leaves half a token. A file holds rmcp's stored
//! credentials (client ID, token response, granted scopes, when the token came, the issuer)
//! plus the client secret an authorization server may have issued at registration, which
//! rmcp does not keep and a confidential client needs to refresh.

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One server's sign-in.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    /// The MCP endpoint the tokens are for (the `resource` they were asked for).
    pub resource: String,
    pub credentials: StoredCredentials,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

impl Record {
    pub fn access_token(&self) -> Option<String> {
        use oauth2::TokenResponse;
        let response = self.credentials.token_response.as_ref()?;
        Some(response.access_token().secret().clone())
    }

    pub fn has_refresh_token(&self) -> bool {
        use oauth2::TokenResponse;
        self.credentials
            .token_response
            .as_ref()
            .is_some_and(|r| r.refresh_token().is_some())
    }

    /// When the access token stops working, if the server said.
    pub fn expires_at(&self) -> Option<SystemTime> {
        use oauth2::TokenResponse;
        let response = self.credentials.token_response.as_ref()?;
        let received = self.credentials.token_received_at?;
        Some(UNIX_EPOCH + Duration::from_secs(received) + response.expires_in()?)
    }

    /// The token is usable at `now` with a margin, so that it does not expire in flight: 30 s,
    /// or half its life for short-lived tokens (else a token of under 30 s would be refreshed
    /// before every request).
    pub fn fresh_at(&self, now: SystemTime) -> bool {
        use oauth2::TokenResponse;
        let Some(response) = self.credentials.token_response.as_ref() else {
            return false;
        };
        let margin = response.expires_in().map_or(Duration::ZERO, |life| {
            (life / 2).min(Duration::from_secs(30))
        });
        self.expires_at().is_none_or(|at| at > now + margin)
    }

    pub fn scopes(&self) -> &[String] {
        &self.credentials.granted_scopes
    }
}

/// The one spelling of a server URL that sign-ins are kept under (`http://h:1` and
/// `http://h:1/` are one server); a URL that does not parse is kept as it is.
pub fn canonical(resource: &str) -> String {
    reqwest::Url::parse(resource.trim())
        .map(|u| u.to_string())
        .unwrap_or_else(|_| resource.trim().to_owned())
}

/// The folder of sign-ins under a data directory.
pub fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("oauth")
}

/// The file of one server: its URL with every character that is not a letter, a digit, `.`
/// or `-` made `_` (readable in a listing; the record names its URL, so two URLs that make
/// the same name cannot be confused: the second is simply not signed in).
pub fn path_for(data_dir: &Path, resource: &str) -> PathBuf {
    let mut name: String = resource
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(180);
    folder(data_dir).join(format!("{name}.json"))
}

/// The sign-in kept for `resource`, if there is one.
pub fn read(data_dir: &Path, resource: &str) -> Result<Option<Record>, String> {
    let resource = &canonical(resource);
    let path = path_for(data_dir, resource);
    match read_file(&path)? {
        Some(record) if record.resource == *resource => Ok(Some(record)),
        _ => Ok(None),
    }
}

fn read_file(path: &Path) -> Result<Option<Record>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a sign-in record: {e}", path.display()))
}

pub fn write(data_dir: &Path, record: &Record) -> Result<(), String> {
    let dir = folder(data_dir);
    make_private_folder(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = path_for(data_dir, &record.resource);
    let text = serde_json::to_vec_pretty(record).map_err(|e| e.to_string())?;
    crate::atomic::write_private(&path, &text).map_err(|e| format!("{}: {e}", path.display()))
}

fn make_private_folder(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Forgets the sign-in for `resource`; says whether there was one.
pub fn remove(data_dir: &Path, resource: &str) -> Result<bool, String> {
    let resource = &canonical(resource);
    if read(data_dir, resource)?.is_none() {
        return Ok(false);
    }
    let path = path_for(data_dir, resource);
    std::fs::remove_file(&path)
        .map(|_| true)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Every sign-in kept, sorted by URL; files that cannot be read come back as their error.
pub fn list(data_dir: &Path) -> Vec<Result<Record, String>> {
    let dir = folder(data_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| read_file(p).transpose())
        .collect()
}

/// rmcp's credential store over one server's record: kept in memory, and written through to
/// its file when there is a data directory (else the sign-in lasts for this run).
#[derive(Clone)]
pub struct Store {
    data_dir: Option<PathBuf>,
    resource: String,
    record: Arc<Mutex<Option<Record>>>,
}

impl Store {
    /// The store of `resource`, with what its file holds (an unreadable file is reported and
    /// treated as no sign-in: signing in again replaces it).
    pub fn open(data_dir: Option<PathBuf>, resource: &str) -> (Store, Option<String>) {
        let resource = &canonical(resource);
        let (record, problem) = match &data_dir {
            Some(dir) => match read(dir, resource) {
                Ok(r) => (r, None),
                Err(e) => (None, Some(e)),
            },
            None => (None, None),
        };
        let store = Store {
            data_dir,
            resource: resource.to_owned(),
            record: Arc::new(Mutex::new(record)),
        };
        (store, problem)
    }

    pub fn record(&self) -> Option<Record> {
        self.record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Keeps the client secret a registration gave (saved with the next tokens).
    pub fn set_client_secret(&self, secret: Option<String>) {
        let mut record = self.record.lock().unwrap_or_else(|p| p.into_inner());
        match record.as_mut() {
            Some(r) => r.client_secret = secret,
            None => {
                *record = Some(Record {
                    resource: self.resource.clone(),
                    credentials: StoredCredentials::new(String::new(), None, Vec::new(), None),
                    client_secret: secret,
                })
            }
        }
    }

    fn persist(&self, record: Option<&Record>) -> Result<(), AuthError> {
        let Some(dir) = &self.data_dir else {
            return Ok(());
        };
        let result = match record {
            Some(r) => write(dir, r),
            None => remove(dir, &self.resource).map(|_| ()),
        };
        result.map_err(AuthError::CredentialStoreError)
    }
}

#[async_trait::async_trait]
impl CredentialStore for Store {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self
            .record()
            .map(|r| r.credentials)
            .filter(|c| !c.client_id.is_empty()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let record = {
            let mut record = self.record.lock().unwrap_or_else(|p| p.into_inner());
            let secret = record.as_ref().and_then(|r| r.client_secret.clone());
            let updated = Record {
                resource: self.resource.clone(),
                credentials,
                client_secret: secret,
            };
            *record = Some(updated.clone());
            updated
        };
        self.persist(Some(&record))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        *self.record.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.persist(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(expires_in: u64, received_at: u64) -> StoredCredentials {
        let response: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({"access_token": "at", "token_type": "Bearer", "expires_in": expires_in, "refresh_token": "rt"}),
        )
        .unwrap();
        StoredCredentials::new(
            "client".into(),
            Some(response),
            vec!["a".into()],
            Some(received_at),
        )
    }

    #[tokio::test]
    async fn a_saved_sign_in_is_read_back_private_and_only_for_its_own_url() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:4000/mcp";
        let (store, problem) = Store::open(Some(dir.path().into()), url);
        assert!(problem.is_none() && store.record().is_none());
        store.set_client_secret(Some("s3cret".into()));
        store.save(token(3600, 1_000)).await.unwrap();

        let record = read(dir.path(), url).unwrap().unwrap();
        assert_eq!(record.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(record.access_token().as_deref(), Some("at"));
        assert!(record.has_refresh_token());
        assert_eq!(
            record.expires_at(),
            Some(UNIX_EPOCH + Duration::from_secs(4_600))
        );
        assert!(record.fresh_at(UNIX_EPOCH + Duration::from_secs(4_000)));
        assert!(
            !record.fresh_at(UNIX_EPOCH + Duration::from_secs(4_580)),
            "30 s margin"
        );
        let (short, _) = Store::open(None, url);
        short.save(token(20, 1_000)).await.unwrap();
        let short = short.record().unwrap();
        assert!(
            short.fresh_at(UNIX_EPOCH + Duration::from_secs(1_009)),
            "half of 20 s"
        );
        assert!(!short.fresh_at(UNIX_EPOCH + Duration::from_secs(1_011)));
        assert!(
            read(dir.path(), "http://127.0.0.1:4000/mcp2")
                .unwrap()
                .is_none()
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path_for(dir.path(), url)), 0o600);
            assert_eq!(mode(&folder(dir.path())), 0o700);
        }
        assert_eq!(list(dir.path()).len(), 1);
        assert!(remove(dir.path(), url).unwrap());
        assert!(!remove(dir.path(), url).unwrap());
    }

    #[test]
    fn a_damaged_file_is_an_error_that_names_it_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let url = "https://h/mcp";
        std::fs::create_dir_all(folder(dir.path())).unwrap();
        std::fs::write(path_for(dir.path(), url), "{not json").unwrap();
        let (store, problem) = Store::open(Some(dir.path().into()), url);
        assert!(store.record().is_none());
        let problem = problem.unwrap();
        assert!(
            problem.contains("https___h_mcp.json") && problem.contains("not a sign-in record"),
            "{problem}"
        );
    }
}
