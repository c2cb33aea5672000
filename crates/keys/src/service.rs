//! Key use cases: authenticate, mint, list, revoke.

use std::collections::HashMap;
use std::sync::Arc;

use quire_kernel::{
    AccountId, App, Apps, Clock, InfraError, KeyId, Principal, PrincipalKind, ProjectId,
    ProjectSlug, Resource, Tier,
};
use quire_kernel::{Paged, Paging, TimeKey};
use quire_projects::{AddressError, ProjectAccess, ProjectStore, address_project};

use crate::credential::{PlaintextKey, is_jwt_shaped};
use crate::model::{CredentialOwner, KeyRecord};
use crate::ports::{BearerTokens, KeyStore};

/// Longest key name, in characters.
pub const MAX_KEY_NAME_CHARS: usize = 60;

/// Why a credential was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// Missing, unrecognised or revoked.
    #[error("missing, unrecognised or revoked API key")]
    InvalidApiKey,
    /// A JWT-shaped credential that failed verification; the text is the spec's
    /// `error_description`.
    #[error("bearer token rejected")]
    InvalidToken(&'static str),
    #[error("this account is not activated yet")]
    NotActivated,
    /// A valid credential that this route does not take (an app key or a bearer token
    /// where only the account's master key will do).
    #[error("only a master key of the account can do this")]
    NotMaster,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// How precisely a key's last use is kept: a busy key is written about once per this.
pub const KEY_USE_RESOLUTION: time::Duration = time::Duration::minutes(1);

/// A request to mint an app key, with fields already known to be of the right JSON type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MintRequest {
    pub name: String,
    pub apps: Vec<String>,
    /// A project slug; `None` means the account's default project.
    pub project: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MintError {
    #[error("minting keys needs a master key; OAuth bearer tokens can never mint keys")]
    InsufficientScope,
    /// `name` or `apps` invalid; the text is the prose the spec puts in `error`.
    #[error("{0}")]
    InvalidInput(String),
    /// `project` is not a well-formed slug.
    #[error("project: {0}")]
    InvalidProject(String),
    /// `project` names no project of the account.
    #[error("project is not a project of this account")]
    ProjectNotOwned,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A freshly minted key: the only value that ever holds the plaintext.
#[derive(Debug, Clone)]
pub struct MintedKey {
    pub plaintext: PlaintextKey,
    pub record: KeyRecord,
    pub project_slug: ProjectSlug,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListKeysError {
    #[error("a master key is required")]
    InsufficientScope,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevokeError {
    #[error("a master key is required")]
    InsufficientScope,
    #[error("key not found")]
    NotFound,
    #[error(
        "a key cannot revoke itself by id; use another master key, or DELETE /api/platform/v1/keys/current"
    )]
    CurrentKey,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Why a credential could not revoke itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevokeSelfError {
    /// An OAuth access token (or a dashboard session) is not an API key: it ends through
    /// the token revocation endpoint (or by signing out).
    #[error("only an API key can revoke itself here; revoke an OAuth token at /api/oauth/revoke")]
    NotAnApiKey,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The list tag of the account's keys in cursors ([`KeyService::list_page`]).
pub const KEYS_LIST: &str = "keys";

/// A key with the slug of its home project, for listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedKey {
    pub record: KeyRecord,
    /// The home project: the key's own for app keys, the default project for master keys.
    pub home_project: Option<(ProjectId, ProjectSlug)>,
}

/// Builds a new key record and its plaintext (not stored).
#[must_use]
pub fn new_key(
    account: AccountId,
    name: String,
    tier: Tier,
    project_id: Option<ProjectId>,
    now: time::OffsetDateTime,
) -> (PlaintextKey, KeyRecord) {
    let plaintext = PlaintextKey::generate();
    let record = KeyRecord {
        id: KeyId::new(),
        account_id: account,
        name,
        tier,
        project_id,
        key_prefix: plaintext.prefix().to_owned(),
        key_hash: plaintext.hash(),
        created_at: now,
        revoked_at: None,
        last_used_at: None,
    };
    (plaintext, record)
}

/// The credential of an `Authorization: Bearer …` header (the scheme in any case).
fn bearer_credential(authorization: Option<&str>) -> Result<&str, AuthError> {
    authorization
        .and_then(|h| h.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, credential)| credential.trim())
        .ok_or(AuthError::InvalidApiKey)
}

fn check_name(name: &str) -> Result<String, MintError> {
    let n = name.chars().count();
    let trimmed = name.trim();
    if trimmed.is_empty() || n > MAX_KEY_NAME_CHARS {
        return Err(MintError::InvalidInput(format!(
            "name must be 1-{MAX_KEY_NAME_CHARS} characters"
        )));
    }
    if quire_kernel::text::has_control(trimmed) {
        return Err(MintError::InvalidInput(
            "name must not contain control characters".into(),
        ));
    }
    Ok(trimmed.to_owned())
}

fn check_apps(apps: &[String]) -> Result<Apps, MintError> {
    let allowed = "page, serve, link, base";
    if apps.is_empty() {
        return Err(MintError::InvalidInput(format!(
            "apps must be a non-empty array of: {allowed}"
        )));
    }
    let mut parsed = Vec::with_capacity(apps.len());
    for a in apps {
        let app = App::parse(a).ok_or_else(|| {
            MintError::InvalidInput(format!(
                "unknown app {}; apps must be drawn from: {allowed}",
                quire_kernel::text::quoted(a)
            ))
        })?;
        if parsed.contains(&app) {
            return Err(MintError::InvalidInput(format!(
                "app {} is listed twice",
                quire_kernel::text::quoted(a)
            )));
        }
        parsed.push(app);
    }
    Apps::new(parsed).ok_or_else(|| MintError::InvalidInput("apps must not be empty".into()))
}

/// The key use cases.
#[derive(Debug, Clone)]
pub struct KeyService {
    keys: Arc<dyn KeyStore>,
    projects: Arc<dyn ProjectStore>,
    bearers: Arc<dyn BearerTokens>,
    clock: Arc<dyn Clock>,
}

impl KeyService {
    pub fn new(
        keys: Arc<dyn KeyStore>,
        projects: Arc<dyn ProjectStore>,
        bearers: Arc<dyn BearerTokens>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            keys,
            projects,
            bearers,
            clock,
        }
    }

    /// Turns the value of an `Authorization` header into a principal, for the REST API.
    ///
    /// # Errors
    /// As [`KeyService::authenticate_at`].
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Principal, AuthError> {
        self.authenticate_at(authorization, Resource::Api).await
    }

    /// Turns the value of an `Authorization` header presented to `resource` into a
    /// principal. API keys are good at every resource; a bearer token only at the one it
    /// was minted for.
    ///
    /// # Errors
    /// [`AuthError::InvalidApiKey`] for a missing header, a non-Bearer scheme, an
    /// unrecognisable credential, or an unknown or revoked key;
    /// [`AuthError::InvalidToken`] for a JWT-shaped credential that fails verification
    /// (see [`BearerTokens`]);
    /// [`AuthError::NotActivated`] for a valid key of an account not yet activated.
    pub async fn authenticate_at(
        &self,
        authorization: Option<&str>,
        resource: Resource,
    ) -> Result<Principal, AuthError> {
        let credential = bearer_credential(authorization)?;
        let Some(key) = PlaintextKey::parse(credential) else {
            if is_jwt_shaped(credential) {
                return self.bearers.principal(credential, resource).await;
            }
            return Err(AuthError::InvalidApiKey);
        };
        let owner = self.live_key(&key).await?;
        if !owner.account_activated {
            return Err(AuthError::NotActivated);
        }
        self.note_use(&owner.key).await;
        let home = match (&owner.key.tier, owner.key.project_id) {
            (Tier::App(_), Some(project)) => project,
            _ => owner.default_project_id,
        };
        Ok(Principal {
            account_id: owner.key.account_id,
            kind: PrincipalKind::Key {
                key_id: owner.key.id,
                tier: owner.key.tier,
            },
            home_project_id: home,
            is_platform_admin: owner.is_platform_admin,
        })
    }

    /// Records the key's use for its owner's Keys page, at most once per
    /// [`KEY_USE_RESOLUTION`]. Best effort: a store that cannot record it would fail the
    /// request's own work anyway, and the request should not fail for this alone.
    async fn note_use(&self, key: &KeyRecord) {
        let now = self.clock.now();
        let since = now - KEY_USE_RESOLUTION;
        if key.last_used_at.is_none_or(|t| t < since) {
            let _ = self.keys.touch_key(key.id, now, since).await;
        }
    }

    /// The account whose master key the `Authorization` header carries, activated or not:
    /// for the routes by which an account reads its state and activates itself.
    ///
    /// # Errors
    /// [`AuthError::InvalidApiKey`] as for [`KeyService::authenticate`];
    /// [`AuthError::NotMaster`] for an app key or a bearer token.
    pub async fn account_of_master_key(
        &self,
        authorization: Option<&str>,
    ) -> Result<AccountId, AuthError> {
        let credential = bearer_credential(authorization)?;
        let Some(key) = PlaintextKey::parse(credential) else {
            return Err(if is_jwt_shaped(credential) {
                AuthError::NotMaster
            } else {
                AuthError::InvalidApiKey
            });
        };
        let owner = self.live_key(&key).await?;
        match owner.key.tier {
            Tier::Master => Ok(owner.key.account_id),
            Tier::App(_) => Err(AuthError::NotMaster),
        }
    }

    async fn live_key(&self, key: &PlaintextKey) -> Result<CredentialOwner, AuthError> {
        let hash = key.hash();
        self.keys
            .find_by_hash(&hash)
            .await?
            .filter(|o| o.key.key_hash.matches(&hash) && o.key.revoked_at.is_none())
            .ok_or(AuthError::InvalidApiKey)
    }

    /// Mints a master key for `account`: the dashboard's create-key action (its caller has
    /// checked the session, its second factor and that the account is activated).
    ///
    /// # Errors
    /// [`MintError::InvalidInput`] for a bad name; [`MintError::Infra`] on storage failure.
    pub async fn mint_master(
        &self,
        account: AccountId,
        name: &str,
    ) -> Result<(PlaintextKey, KeyRecord), MintError> {
        let name = check_name(name)?;
        let (plaintext, record) = new_key(account, name, Tier::Master, None, self.clock.now());
        self.keys.insert_key(&record).await?;
        Ok((plaintext, record))
    }

    /// Mints an app key. Master keys are never minted here.
    ///
    /// # Errors
    /// See [`MintError`]; nothing is stored on error.
    pub async fn mint(
        &self,
        principal: &Principal,
        request: MintRequest,
    ) -> Result<MintedKey, MintError> {
        if !principal.is_master() {
            return Err(MintError::InsufficientScope);
        }
        let name = check_name(&request.name)?;
        let apps = check_apps(&request.apps)?;
        if let Some(slug) = &request.project {
            ProjectSlug::parse(slug).map_err(|e| MintError::InvalidProject(e.0))?;
        }
        // The addressing rules decide which project `project` names (default: home).
        let project = address_project(
            self.projects.as_ref(),
            principal,
            request.project.as_deref(),
            ProjectAccess::Write,
        )
        .await
        .map_err(|e| match e {
            AddressError::InsufficientScope => MintError::ProjectNotOwned,
            AddressError::Infra(e) => MintError::Infra(e),
        })?;
        let (plaintext, record) = new_key(
            principal.account_id,
            name,
            Tier::App(apps),
            Some(project.id),
            self.clock.now(),
        );
        self.keys.insert_key(&record).await?;
        Ok(MintedKey {
            plaintext,
            record,
            project_slug: project.slug,
        })
    }

    /// Every key of the caller's account with its home project.
    ///
    /// # Errors
    /// [`ListKeysError::InsufficientScope`] unless called with a master key.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<ListedKey>, ListKeysError> {
        if !principal.is_master() {
            return Err(ListKeysError::InsufficientScope);
        }
        let keys = self.keys.keys_of_account(principal.account_id).await?;
        self.listed(principal, keys).await
    }

    /// One page of [`KeyService::list`], oldest first (list tag [`KEYS_LIST`]).
    ///
    /// # Errors
    /// As [`KeyService::list`].
    pub async fn list_page(
        &self,
        principal: &Principal,
        paging: &Paging<TimeKey>,
    ) -> Result<Paged<ListedKey>, ListKeysError> {
        if !principal.is_master() {
            return Err(ListKeysError::InsufficientScope);
        }
        let keys = self
            .keys
            .keys_after(principal.account_id, paging.after.as_ref(), paging.fetch())
            .await?;
        let listed = self.listed(principal, keys).await?;
        Ok(Paged::from_fetched(KEYS_LIST, paging, listed, |k| {
            TimeKey {
                at: k.record.created_at,
                id: k.record.id.0,
            }
        }))
    }

    /// The keys with the slugs of their home projects.
    async fn listed(
        &self,
        principal: &Principal,
        keys: Vec<KeyRecord>,
    ) -> Result<Vec<ListedKey>, ListKeysError> {
        let projects: HashMap<ProjectId, ProjectSlug> = self
            .projects
            .projects_of_account(principal.account_id)
            .await?
            .into_iter()
            .map(|p| (p.id, p.slug))
            .collect();
        let default = self
            .projects
            .default_project_of(principal.account_id)
            .await?;
        Ok(keys
            .into_iter()
            .map(|record| {
                let home = match record.tier {
                    Tier::Master => default,
                    Tier::App(_) => record.project_id,
                };
                let home_project =
                    home.and_then(|id| projects.get(&id).map(|slug| (id, slug.clone())));
                ListedKey {
                    record,
                    home_project,
                }
            })
            .collect())
    }

    /// Revokes the API key making the call, whatever its tier: a client signing out ends
    /// its own credential (`revoke` refuses the calling key, so that no one locks
    /// themselves out by mistake; this is the deliberate way).
    ///
    /// # Errors
    /// See [`RevokeSelfError`].
    pub async fn revoke_current(&self, principal: &Principal) -> Result<(), RevokeSelfError> {
        let id = principal.key_id().ok_or(RevokeSelfError::NotAnApiKey)?;
        self.keys.revoke_key(id, self.clock.now()).await?;
        Ok(())
    }

    /// Revokes a key of the caller's account; revoking an already revoked key succeeds.
    ///
    /// # Errors
    /// See [`RevokeError`].
    pub async fn revoke(&self, principal: &Principal, id: KeyId) -> Result<(), RevokeError> {
        if !principal.is_master() {
            return Err(RevokeError::InsufficientScope);
        }
        let key = self
            .keys
            .key_by_id(id)
            .await?
            .filter(|k| k.account_id == principal.account_id)
            .ok_or(RevokeError::NotFound)?;
        if principal.key_id() == Some(key.id) {
            return Err(RevokeError::CurrentKey);
        }
        if key.revoked_at.is_none() {
            self.keys.revoke_key(key.id, self.clock.now()).await?;
        }
        Ok(())
    }
}
