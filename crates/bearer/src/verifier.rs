//! The verifier and its two caches.

use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use async_trait::async_trait;
use quire_accounts::AccountStore;
use quire_kernel::secret::sha256_hex;
use quire_kernel::{
    AccountId, Clock, InfraError, LinkId, PageChanges, PageId, Principal, PrincipalKind, ProjectId,
    Resource,
};
use quire_keys::{AuthError, BearerTokens};
use quire_oauth::access_token::VerifiedToken;
use quire_oauth::consent::home_project;
use quire_oauth::{
    ClientId, ClientStore, KeySchedule, SigningKey, SigningKeyStore, TokenAudience, TokenRefusal,
};
use quire_projects::ProjectStore;
use quire_read_cache::ClockCache;
use time::{Duration, OffsetDateTime};

/// How long the key set is held: far below the hour a new key is published ahead.
pub const KEY_CACHE_TTL: StdDuration = StdDuration::from_secs(60);
/// How long a registry answer is held: a deletion reaches every replica within 5 s.
pub const CLIENT_CACHE_TTL: StdDuration = StdDuration::from_secs(4);
/// How long an account's role and a client's home project in it are held: the longest a
/// deactivation or a new home project made on another replica takes to reach this one (as
/// for API keys). A token naming its project (`project` claim) needs no home project.
pub const SUBJECT_TTL: StdDuration = StdDuration::from_secs(1);
/// Least time between two reloads forced by unknown `kid`s (forged tokens cost no I/O).
const FORCED_RELOAD_SPACING: Duration = Duration::seconds(5);

/// What a token's principal takes from the database beyond the token itself.
#[derive(Debug, Clone, Copy)]
struct Subject {
    home_project_id: ProjectId,
    is_platform_admin: bool,
}

/// Whose subject is held: the account, the client, and the token's `project` claim (the
/// project its grant picked), `None` for a grant made before the picker.
type SubjectKey = (AccountId, ClientId, Option<ProjectId>);

/// What the verifier reads through.
#[derive(Debug, Clone)]
pub struct BearerPorts {
    pub keys: Arc<dyn SigningKeyStore>,
    pub clients: Arc<dyn ClientStore>,
    pub accounts: Arc<dyn AccountStore>,
    pub projects: Arc<dyn ProjectStore>,
    pub clock: Arc<dyn Clock>,
}

/// Verifies access tokens and makes their principals.
#[derive(Clone)]
pub struct BearerVerifier {
    ports: BearerPorts,
    audience: TokenAudience,
    keys: ClockCache<(), Arc<Vec<SigningKey>>>,
    /// SHA-256 of a token → what it said and the `kid` of the key that verified it.
    verified: ClockCache<String, (VerifiedToken, String)>,
    /// Client id → whether it is live.
    clients: ClockCache<ClientId, bool>,
    /// (account, client, claimed project) → the principal's project and role, for
    /// activated accounts, held for [`SUBJECT_TTL`].
    subjects: ClockCache<SubjectKey, Subject>,
    last_forced_reload: Arc<Mutex<Option<OffsetDateTime>>>,
}

impl std::fmt::Debug for BearerVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerVerifier")
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl BearerVerifier {
    #[must_use]
    pub fn new(ports: BearerPorts, audience: TokenAudience) -> Self {
        // The caches age by the ports' clock, as the tokens' expiry does.
        let clock = ports.clock.clone();
        Self {
            audience,
            keys: ClockCache::new(1, KEY_CACHE_TTL, clock.clone()).named("oauth_signing_keys"),
            verified: ClockCache::new(10_000, KEY_CACHE_TTL, clock.clone()).named("bearer_tokens"),
            clients: ClockCache::new(10_000, CLIENT_CACHE_TTL, clock.clone())
                .named("oauth_clients"),
            subjects: ClockCache::new(10_000, SUBJECT_TTL, clock).named("bearer_subjects"),
            ports,
            last_forced_reload: Arc::new(Mutex::new(None)),
        }
    }

    async fn key_set(&self) -> Result<Arc<Vec<SigningKey>>, InfraError> {
        let store = self.ports.keys.clone();
        self.keys
            .try_get_with((), async move { store.signing_keys().await.map(Arc::new) })
            .await
            .map_err(|e| (*e).clone())
    }

    /// The verifying key named `kid`, reloading the set once if it is not held.
    async fn key(&self, kid: &str, now: OffsetDateTime) -> Result<Option<SigningKey>, InfraError> {
        let find = |keys: &[SigningKey]| {
            keys.iter()
                .find(|k| k.kid == kid && KeySchedule::verifies(keys, k, now))
                .cloned()
        };
        let keys = self.key_set().await?;
        if let Some(key) = find(&keys) {
            return Ok(Some(key));
        }
        let may_reload = {
            let mut last = self
                .last_forced_reload
                .lock()
                .map_err(|_| InfraError::new("key reload lock poisoned"))?;
            let due = last.is_none_or(|t| now - t >= FORCED_RELOAD_SPACING);
            if due {
                *last = Some(now);
            }
            due
        };
        if !may_reload {
            return Ok(None);
        }
        self.keys.invalidate(&()).await;
        Ok(find(&self.key_set().await?))
    }

    /// Steps 6 and 7: the client is registered and live, or the registry cannot say.
    async fn client_is_live(&self, id: &ClientId) -> Result<bool, TokenRefusal> {
        let clients = self.ports.clients.clone();
        let lookup = id.clone();
        self.clients
            .try_get_with(id.clone(), async move {
                clients
                    .client(&lookup)
                    .await
                    .map(|c| c.is_some_and(|c| c.is_live()))
            })
            .await
            .map_err(|e| {
                tracing::warn!(error = %e.chain(), "client registry unavailable for a bearer token");
                TokenRefusal::RegistryUnavailable
            })
    }

    /// Steps 1 to 5. A token that passed them is held by its SHA-256: while the key that
    /// signed it still verifies in the key set held, only its expiry is checked again.
    async fn verified(
        &self,
        token: &str,
        resource: Resource,
        now: OffsetDateTime,
    ) -> Result<VerifiedToken, AuthError> {
        let refused = |r: TokenRefusal| AuthError::InvalidToken(r.description());
        // Held per resource: a token verified for one audience says nothing of the other.
        let digest = format!("{}:{resource:?}", sha256_hex(token.as_bytes()));
        if let Some((verified, kid)) = self.verified.get(&digest).await {
            let keys = self.key_set().await?;
            let still_verifies = keys
                .iter()
                .any(|k| k.kid == kid && KeySchedule::verifies(&keys, k, now));
            if still_verifies {
                if verified.is_expired(now) {
                    return Err(refused(TokenRefusal::Expired));
                }
                return Ok(verified);
            }
        }
        let parsed = quire_oauth::access_token::parse(token).map_err(refused)?;
        let key = self.key(&parsed.kid, now).await?;
        let verified = parsed
            .check(key.as_ref(), &self.audience.at(resource), now)
            .map_err(refused)?;
        self.verified
            .insert(digest, (verified.clone(), parsed.kid))
            .await;
        Ok(verified)
    }

    async fn verify(&self, token: &str, resource: Resource) -> Result<Principal, AuthError> {
        let refused = |r: TokenRefusal| AuthError::InvalidToken(r.description());
        let verified = self
            .verified(token, resource, self.ports.clock.now())
            .await?;
        if !self
            .client_is_live(&verified.client_id)
            .await
            .map_err(refused)?
        {
            return Err(refused(TokenRefusal::UnknownClient));
        }
        let subject = self
            .subject((
                verified.account_id,
                verified.client_id.clone(),
                verified.project,
            ))
            .await?;
        Ok(Principal {
            account_id: verified.account_id,
            kind: PrincipalKind::OAuthClient {
                client_id: verified.client_id.as_str().to_owned(),
                scopes: verified.scopes,
            },
            home_project_id: subject.home_project_id,
            is_platform_admin: subject.is_platform_admin,
        })
    }

    /// The account's role and the project the token acts in, from memory while fresh: the
    /// claimed project (signed by us, checked to be the account's at consent), else the
    /// client's home project. Only activated accounts are held, so an activation is seen at
    /// once; a deactivation or a new home project reaches here within [`SUBJECT_TTL`]. A
    /// claimed project deleted since reaches nothing: the project rules refuse a project
    /// that does not exist.
    async fn subject(&self, key: SubjectKey) -> Result<Subject, AuthError> {
        let (account, client, claimed) = key.clone();
        if let Some(subject) = self.subjects.get(&key).await {
            return Ok(subject);
        }
        let account = self
            .ports
            .accounts
            .account_by_id(account)
            .await?
            // Accounts are never deleted, so a verified token always names one.
            .ok_or_else(|| InfraError::new("a verified access token names no account"))?;
        if account.activated_at.is_none() {
            return Err(AuthError::NotActivated);
        }
        let home_project_id = match claimed {
            Some(project) => project,
            None => {
                home_project(self.ports.projects.as_ref(), account.id, &client)
                    .await?
                    .id
            }
        };
        let subject = Subject {
            home_project_id,
            is_platform_admin: account.is_platform_admin,
        };
        self.subjects.insert(key, subject).await;
        Ok(subject)
    }
}

#[async_trait]
impl BearerTokens for BearerVerifier {
    async fn principal(&self, token: &str, resource: Resource) -> Result<Principal, AuthError> {
        self.verify(token, resource).await
    }
}

/// A deleted project may have been a client's home project: every held subject goes.
impl PageChanges for BearerVerifier {
    fn page_changed(&self, _: PageId) {}
    fn link_changed(&self, _: LinkId) {}
    fn project_changed(&self, _: ProjectId) {
        self.subjects.invalidate_all();
    }
}
