//! The client registry's use cases, for the platform admin account's master keys only.

use std::sync::Arc;

use quire_kernel::{Clock, InfraError, Principal};

use crate::model::{ClientId, ClientSecret, ClientType, NewClient, OAuthClient, Registration};
use crate::ports::{ClientStore, InsertClientError};
use crate::redirect::{MAX_REDIRECT_URIS, RedirectUri};

/// Longest client name, in characters after trimming.
pub const MAX_NAME_CHARS: usize = 60;

/// Fresh ids drawn before giving up (a clash of 128-bit ids means a broken generator).
const ID_ATTEMPTS: usize = 3;

/// Why a registry call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    #[error("managing OAuth clients needs a master key")]
    InsufficientScope,
    #[error("only the platform admin account manages OAuth clients")]
    Forbidden,
    /// A field of the registration is wrong; the text names it.
    #[error("{0}")]
    Invalid(String),
    #[error("OAuth client not found")]
    NotFound,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A client just registered or given a new secret: the secret is in this value only.
#[derive(Debug, Clone)]
pub struct Registered {
    pub client: OAuthClient,
    pub secret: Option<ClientSecret>,
}

/// The registry's use cases.
#[derive(Debug, Clone)]
pub struct ClientService {
    pub(crate) store: Arc<dyn ClientStore>,
    clock: Arc<dyn Clock>,
}

impl ClientService {
    #[must_use]
    pub fn new(store: Arc<dyn ClientStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Refuses anyone but the platform admin account's master keys; the edge asks before it
    /// reads a body, so a caller without the right learns nothing from its mistakes.
    ///
    /// # Errors
    /// `InsufficientScope` (not a master key), `Forbidden` (another account).
    pub fn authorize(principal: &Principal) -> Result<(), ClientError> {
        admin_only(principal)
    }

    /// Every live client.
    ///
    /// # Errors
    /// `InsufficientScope`, `Forbidden`, `Infra`.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<OAuthClient>, ClientError> {
        admin_only(principal)?;
        Ok(self.store.live_clients().await?)
    }

    /// Registers a client; a confidential one gets its secret, returned this once.
    ///
    /// # Errors
    /// `InsufficientScope`, `Forbidden`, `Invalid` (naming the field), `Infra`.
    pub async fn register(
        &self,
        principal: &Principal,
        name: &str,
        client_type: &str,
        redirect_uris: &[String],
    ) -> Result<Registered, ClientError> {
        admin_only(principal)?;
        let new = check(name, client_type, redirect_uris)?;
        let secret = (new.client_type == ClientType::Confidential).then(ClientSecret::generate);
        let mut client = OAuthClient {
            id: ClientId::generate(),
            name: new.name,
            client_type: new.client_type,
            redirect_uris: new.redirect_uris,
            secret_hash: secret.as_ref().map(ClientSecret::hash),
            created_at: self.clock.now(),
            deleted_at: None,
            registration: Registration::Admin,
            last_used_at: None,
        };
        for attempt in 1..=ID_ATTEMPTS {
            match self.store.insert_client(&client).await {
                Ok(()) => return Ok(Registered { client, secret }),
                Err(InsertClientError::IdTaken) if attempt < ID_ATTEMPTS => {
                    client.id = ClientId::generate();
                }
                Err(InsertClientError::IdTaken) => {
                    return Err(InfraError::new("no free OAuth client id").into());
                }
                Err(InsertClientError::Infra(e)) => return Err(e.into()),
            }
        }
        Err(InfraError::new("no free OAuth client id").into())
    }

    /// One live client.
    ///
    /// # Errors
    /// `InsufficientScope`, `Forbidden`, `NotFound` (unknown or deleted), `Infra`.
    pub async fn get(&self, principal: &Principal, id: &str) -> Result<OAuthClient, ClientError> {
        admin_only(principal)?;
        let id = ClientId::parse(id).ok_or(ClientError::NotFound)?;
        match self.store.client(&id).await? {
            Some(c) if c.is_live() => Ok(c),
            _ => Err(ClientError::NotFound),
        }
    }

    /// Deletes a client: a tombstone remains, projects naming it forget it.
    ///
    /// # Errors
    /// `InsufficientScope`, `Forbidden`, `NotFound`, `Infra`.
    pub async fn delete(&self, principal: &Principal, id: &str) -> Result<(), ClientError> {
        admin_only(principal)?;
        let id = ClientId::parse(id).ok_or(ClientError::NotFound)?;
        if self.store.delete_client(&id, self.clock.now()).await? {
            Ok(())
        } else {
            Err(ClientError::NotFound)
        }
    }

    /// Gives a confidential client a new secret; the old one stops working at once.
    ///
    /// # Errors
    /// `InsufficientScope`, `Forbidden`, `NotFound`, `Invalid` (a public client has no
    /// secret), `Infra`.
    pub async fn rotate_secret(
        &self,
        principal: &Principal,
        id: &str,
    ) -> Result<Registered, ClientError> {
        let mut client = self.get(principal, id).await?;
        if client.client_type == ClientType::Public {
            return Err(ClientError::Invalid(
                "a public client has no secret to rotate".into(),
            ));
        }
        let secret = ClientSecret::generate();
        if !self
            .store
            .set_client_secret(&client.id, &secret.hash())
            .await?
        {
            return Err(ClientError::NotFound);
        }
        client.secret_hash = Some(secret.hash());
        Ok(Registered {
            client,
            secret: Some(secret),
        })
    }
}

pub(crate) fn admin_only(principal: &Principal) -> Result<(), ClientError> {
    if !principal.is_master() {
        Err(ClientError::InsufficientScope)
    } else if !principal.is_platform_admin {
        Err(ClientError::Forbidden)
    } else {
        Ok(())
    }
}

fn check(
    name: &str,
    client_type: &str,
    redirect_uris: &[String],
) -> Result<NewClient, ClientError> {
    let invalid = |m: String| ClientError::Invalid(m);
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(invalid(format!(
            "name must be 1-{MAX_NAME_CHARS} characters after trimming"
        )));
    }
    let client_type = ClientType::parse(client_type)
        .ok_or_else(|| invalid("client_type must be confidential or public".into()))?;
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(invalid(format!(
            "redirect_uris must hold 1-{MAX_REDIRECT_URIS} URIs"
        )));
    }
    let mut checked: Vec<RedirectUri> = Vec::with_capacity(redirect_uris.len());
    for (i, raw) in redirect_uris.iter().enumerate() {
        let uri = RedirectUri::parse(raw, client_type)
            .map_err(|why| invalid(format!("redirect_uris[{i}] {why}")))?;
        if let Some(j) = checked.iter().position(|c| c.as_str() == uri.as_str()) {
            return Err(invalid(format!(
                "redirect_uris[{i}] repeats redirect_uris[{j}]"
            )));
        }
        checked.push(uri);
    }
    Ok(NewClient {
        name: name.to_owned(),
        client_type,
        redirect_uris: checked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_fields_are_checked_and_named() {
        let uris = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let ok = check("  My App  ", "public", &uris(&["http://127.0.0.1/cb"])).unwrap();
        assert_eq!(ok.name, "My App");
        let err = |n: &str, t: &str, u: &[&str]| match check(n, t, &uris(u)) {
            Err(ClientError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(err("   ", "public", &["https://a.example/"]).starts_with("name"));
        assert!(err(&"x".repeat(61), "public", &["https://a.example/"]).starts_with("name"));
        assert!(check(&"é".repeat(60), "public", &uris(&["https://a.example/"])).is_ok());
        assert!(err("A", "secret", &["https://a.example/"]).starts_with("client_type"));
        assert!(err("A", "public", &[]).starts_with("redirect_uris"));
        let eleven: Vec<String> = (0..11).map(|i| format!("https://a.example/{i}")).collect();
        assert!(matches!(
            check("A", "public", &eleven),
            Err(ClientError::Invalid(_))
        ));
        assert_eq!(
            err(
                "A",
                "public",
                &["https://a.example/", "https://a.example/#x"]
            ),
            "redirect_uris[1] must not have a fragment"
        );
        assert_eq!(
            err("A", "public", &["https://a.example/", "https://a.example/"]),
            "redirect_uris[1] repeats redirect_uris[0]"
        );
    }
}
