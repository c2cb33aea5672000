//! Dynamic client registration (RFC 7591) for agents: a client registers itself, unvetted,
//! and is shown as unverified at consent.
//!
//! Public clients (`none`) and confidential ones (`client_secret_basic`, the default, or
//! `client_secret_post`, with a secret returned once and stored as its SHA-256); metadata
//! Quire does not use is ignored; redirect URIs follow the agent rules of
//! [`RedirectUri::parse_for_agent`]. Registrations are limited per client address, the
//! operator can turn them off, and a dynamic client unused for
//! [`DYNAMIC_CLIENT_IDLE_LIFETIME`] is deleted by the janitor.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use quire_kernel::{Clock, InfraError, RateLimiter};
use time::Duration;

use crate::model::{ClientId, ClientSecret, ClientType, OAuthClient, Registration};
use crate::ports::{ClientStore, InsertClientError};
use crate::redirect::{MAX_REDIRECT_URIS, RedirectUri};
use crate::service::{MAX_NAME_CHARS, Registered};

/// Registrations one address may make per window (clients register once or twice per
/// connection; a person connecting a few agents stays far below).
pub const REGISTRATION_RATE_LIMIT: u32 = 20;
pub const REGISTRATION_RATE_WINDOW: StdDuration = StdDuration::from_secs(60 * 60);
/// A dynamic client that neither redeemed a code nor refreshed a token this long is deleted.
pub const DYNAMIC_CLIENT_IDLE_LIFETIME: Duration = Duration::days(30);
/// A client's last use is written at most this often.
const TOUCH_EVERY: Duration = Duration::hours(1);

/// The registration request's metadata Quire reads (RFC 7591 §2); the rest is ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientMetadata {
    pub redirect_uris: Option<Vec<String>>,
    pub client_name: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
}

/// Why a registration was refused (RFC 7591 §3.2.2, and Quire's limits).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    #[error(
        "dynamic client registration is turned off on this server; ask its operator for a client"
    )]
    Disabled,
    #[error("{0}")]
    InvalidRedirectUri(String),
    #[error("{0}")]
    InvalidClientMetadata(String),
    #[error("too many client registrations from this address; wait an hour")]
    RateLimited,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A registered dynamic client, with how it authenticates at the token endpoint.
#[derive(Debug, Clone)]
pub struct DynamicClient {
    pub registered: Registered,
    pub token_endpoint_auth_method: &'static str,
}

/// The registration endpoint's use cases and the janitor's expiry.
#[derive(Debug, Clone)]
pub struct DynamicRegistration {
    store: Arc<dyn ClientStore>,
    limiter: Arc<dyn RateLimiter>,
    clock: Arc<dyn Clock>,
    enabled: bool,
}

fn auth_method(raw: Option<&str>) -> Result<(ClientType, &'static str), RegistrationError> {
    match raw.unwrap_or("client_secret_basic") {
        "none" => Ok((ClientType::Public, "none")),
        "client_secret_basic" => Ok((ClientType::Confidential, "client_secret_basic")),
        "client_secret_post" => Ok((ClientType::Confidential, "client_secret_post")),
        other => Err(RegistrationError::InvalidClientMetadata(format!(
            "token_endpoint_auth_method {:?} is not supported; use none, client_secret_basic or client_secret_post",
            other.chars().take(40).collect::<String>()
        ))),
    }
}

fn only(
    field: &str,
    values: Option<&Vec<String>>,
    allowed: &[&str],
) -> Result<(), RegistrationError> {
    match values
        .into_iter()
        .flatten()
        .find(|v| !allowed.contains(&v.as_str()))
    {
        None => Ok(()),
        Some(v) => Err(RegistrationError::InvalidClientMetadata(format!(
            "{field} {:?} is not supported; use {}",
            v.chars().take(40).collect::<String>(),
            allowed.join(", ")
        ))),
    }
}

/// The name shown at consent: printable, at most [`MAX_NAME_CHARS`] characters, or a
/// placeholder.
pub(crate) fn shown_name(raw: Option<&str>) -> String {
    let name: String = raw
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    if name.trim().is_empty() {
        "Unnamed agent".to_owned()
    } else {
        name.trim().to_owned()
    }
}

/// Checks a registration request.
///
/// # Errors
/// [`RegistrationError::InvalidRedirectUri`], [`RegistrationError::InvalidClientMetadata`].
pub fn check(
    metadata: &ClientMetadata,
) -> Result<(ClientType, &'static str, Vec<RedirectUri>), RegistrationError> {
    let uris = metadata.redirect_uris.as_deref().unwrap_or_default();
    if uris.is_empty() {
        return Err(RegistrationError::InvalidRedirectUri(
            "redirect_uris must name at least one redirect URI".into(),
        ));
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(RegistrationError::InvalidRedirectUri(format!(
            "redirect_uris may name at most {MAX_REDIRECT_URIS} URIs"
        )));
    }
    let mut checked = Vec::with_capacity(uris.len());
    for uri in uris {
        let parsed = RedirectUri::parse_for_agent(uri).map_err(|why| {
            let shown: String = uri.chars().take(100).collect();
            RegistrationError::InvalidRedirectUri(format!("redirect URI {shown:?} {why}"))
        })?;
        if !checked.contains(&parsed) {
            checked.push(parsed);
        }
    }
    let (client_type, method) = auth_method(metadata.token_endpoint_auth_method.as_deref())?;
    only(
        "grant_types",
        metadata.grant_types.as_ref(),
        &["authorization_code", "refresh_token"],
    )?;
    only(
        "response_types",
        metadata.response_types.as_ref(),
        &["code"],
    )?;
    Ok((client_type, method, checked))
}

impl DynamicRegistration {
    #[must_use]
    pub fn new(
        store: Arc<dyn ClientStore>,
        limiter: Arc<dyn RateLimiter>,
        clock: Arc<dyn Clock>,
        enabled: bool,
    ) -> Self {
        Self {
            store,
            limiter,
            clock,
            enabled,
        }
    }

    /// Whether the operator allows dynamic registration.
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// `POST /api/oauth/register` from `address`.
    ///
    /// # Errors
    /// See [`RegistrationError`]; a refused registration stores nothing.
    pub async fn register(
        &self,
        metadata: &ClientMetadata,
        address: &str,
    ) -> Result<DynamicClient, RegistrationError> {
        if !self.enabled {
            return Err(RegistrationError::Disabled);
        }
        let now = self.clock.now();
        let allowed = self
            .limiter
            .hit(
                "oauth-register",
                address,
                REGISTRATION_RATE_WINDOW,
                REGISTRATION_RATE_LIMIT,
                now,
            )
            .await?;
        if !allowed {
            return Err(RegistrationError::RateLimited);
        }
        let (client_type, method, redirect_uris) = check(metadata)?;
        let secret = (client_type == ClientType::Confidential).then(ClientSecret::generate);
        let mut client = OAuthClient {
            id: ClientId::generate(),
            name: shown_name(metadata.client_name.as_deref()),
            client_type,
            redirect_uris,
            secret_hash: secret.as_ref().map(ClientSecret::hash),
            created_at: now,
            deleted_at: None,
            registration: Registration::Dynamic,
            last_used_at: None,
        };
        for _ in 0..3 {
            match self.store.insert_client(&client).await {
                Ok(()) => {
                    return Ok(DynamicClient {
                        registered: Registered { client, secret },
                        token_endpoint_auth_method: method,
                    });
                }
                Err(InsertClientError::IdTaken) => client.id = ClientId::generate(),
                Err(InsertClientError::Infra(e)) => return Err(e.into()),
            }
        }
        Err(InfraError::new("no free OAuth client id").into())
    }

    /// The live dynamically registered client with `id`, for its `registration_client_uri`.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn client(&self, id: &str) -> Result<Option<OAuthClient>, InfraError> {
        let Some(id) = ClientId::parse(id) else {
            return Ok(None);
        };
        Ok(self
            .store
            .client(&id)
            .await?
            .filter(|c| c.is_live() && c.registration == Registration::Dynamic))
    }

    /// Deletes the dynamic clients unused for [`DYNAMIC_CLIENT_IDLE_LIFETIME`] (their grants
    /// are revoked with them); returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn expire_idle(&self) -> Result<usize, InfraError> {
        let now = self.clock.now();
        let idle = self
            .store
            .idle_dynamic_clients(now - DYNAMIC_CLIENT_IDLE_LIFETIME)
            .await?;
        let mut deleted = 0;
        for id in idle {
            if self.store.delete_client(&id, now).await? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

/// Whether a client's last use should be written again at `now`.
#[must_use]
pub fn due_for_touch(client: &OAuthClient, now: time::OffsetDateTime) -> bool {
    client.registration != Registration::Admin
        && client.last_used_at.is_none_or(|t| now - t >= TOUCH_EVERY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(uris: &[&str], method: Option<&str>) -> ClientMetadata {
        ClientMetadata {
            redirect_uris: Some(uris.iter().map(|u| (*u).to_owned()).collect()),
            token_endpoint_auth_method: method.map(str::to_owned),
            ..ClientMetadata::default()
        }
    }

    #[test]
    fn cursors_three_uris_register_together() {
        let m = metadata(
            &[
                "cursor://anysphere.cursor-mcp/oauth/callback",
                "https://www.cursor.com/agents/mcp/oauth/callback",
                "http://localhost:8787/callback",
            ],
            Some("none"),
        );
        let (client_type, method, uris) = check(&m).unwrap();
        assert_eq!(
            (client_type, method, uris.len()),
            (ClientType::Public, "none", 3)
        );
        let (client_type, method, _) = check(&metadata(&["https://a.example/cb"], None)).unwrap();
        assert_eq!(
            (client_type, method),
            (ClientType::Confidential, "client_secret_basic")
        );
    }

    #[test]
    fn bad_metadata_names_its_field() {
        let no_uris = check(&ClientMetadata::default()).unwrap_err();
        assert!(matches!(no_uris, RegistrationError::InvalidRedirectUri(_)));
        let bad_uri = check(&metadata(&["https://a.example/cb", "javascript:x"], None));
        assert!(
            matches!(bad_uri, Err(RegistrationError::InvalidRedirectUri(m)) if m.contains("javascript"))
        );
        let bad_method = check(&metadata(
            &["https://a.example/cb"],
            Some("private_key_jwt"),
        ));
        assert!(
            matches!(bad_method, Err(RegistrationError::InvalidClientMetadata(m)) if m.contains("token_endpoint_auth_method"))
        );
        let implicit = ClientMetadata {
            grant_types: Some(vec!["implicit".into()]),
            ..metadata(&["https://a.example/cb"], None)
        };
        assert!(matches!(
            check(&implicit),
            Err(RegistrationError::InvalidClientMetadata(_))
        ));
    }

    #[test]
    fn names_are_printable_and_bounded() {
        assert_eq!(shown_name(None), "Unnamed agent");
        assert_eq!(shown_name(Some(" \u{7}Claude\n ")), "Claude");
        assert_eq!(shown_name(Some(&"x".repeat(100))).len(), MAX_NAME_CHARS);
    }
}
