//! What every request of the data gateway goes through, in the spec's order: the database
//! behind a slug, the request's keys, the instance. The REST subset's request is in
//! `rest.rs`; the auth subset's use cases in `crate::auth`.
//!
//! The keys are checked as Supabase's Kong checks them in front of a project: the `apikey`
//! must be one of the database's two keys, else 401; the bearer token (the `apikey` again
//! when there is none) names the role and claims the request runs with. A Quire key that
//! may use `base` and write to the database's project is accepted in either place and acts
//! as `service_role`, so an agent never handles a JWT secret.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use quire_dataapi::RestError;
use quire_kernel::{App, Principal};
use quire_projects::{ProjectAccess, authorize_project};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::{DatabaseError, DatabaseService};
use crate::keys::{KeyRole, TokenError, verify_token};
use crate::model::DatabaseStatus;
use crate::ports::QuireKeys;
use crate::runtime::{DataApiInstance, GatewayTarget, InstanceError};

/// Why the gateway does not serve a request, each in its place of the spec's order.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GatewayError {
    /// No ready database has that slug, or its data API is off.
    #[error("database not found")]
    NotFound,
    /// The request has no `apikey`.
    #[error("no API key")]
    NoApiKey,
    /// The `apikey` is none of the database's keys, nor a Quire key that may act for it;
    /// or the bearer token is a Quire key that may not.
    #[error("invalid API key")]
    InvalidApiKey,
    /// PostgREST's refusal, in its words: a bearer token it cannot use, a request it
    /// cannot plan, a row it cannot answer, or PostgreSQL's error.
    #[error("{} ({})", .0.message, .0.code)]
    Rest(RestError),
    #[error(transparent)]
    Instance(#[from] InstanceError),
    #[error(transparent)]
    Service(#[from] DatabaseError),
}

/// A database's data API on this replica, before a request's keys are checked.
#[derive(Debug, Clone)]
pub enum Reach {
    Running(Arc<dyn DataApiInstance>),
    Stopped(Box<GatewayTarget>),
}

impl Reach {
    #[must_use]
    pub fn target(&self) -> &GatewayTarget {
        match self {
            Self::Running(instance) => instance.target(),
            Self::Stopped(target) => target,
        }
    }
}

/// A request's credentials, where Kong's key-auth finds them. `Debug` shows which are
/// there, never their values.
#[derive(Clone, Copy, Default)]
pub struct Credentials<'a> {
    /// The `apikey` header, else the query's `apikey` parameter.
    pub apikey: Option<&'a str>,
    /// The `Authorization: Bearer` token.
    pub bearer: Option<&'a str>,
}

impl std::fmt::Debug for Credentials<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("apikey", &self.apikey.is_some())
            .field("bearer", &self.bearer.is_some())
            .finish()
    }
}

/// The role and claims a request runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acting {
    pub role: KeyRole,
    /// `request.jwt.claims`, as JSON text.
    pub claims: String,
}

impl Acting {
    fn service_role() -> Self {
        Self {
            role: KeyRole::ServiceRole,
            claims: json!({ "role": "service_role" }).to_string(),
        }
    }

    fn of(role: KeyRole, claims: Map<String, Value>) -> Self {
        Self {
            role,
            claims: Value::Object(claims).to_string(),
        }
    }
}

/// A token verified under a secret: who it acts as, and until when.
struct Verified {
    secret: String,
    acting: Acting,
    exp: i64,
}

/// Tokens verified so far, by their text. The `anon` and `service_role` keys come with every
/// request, and checking one (its base64 and JSON read, its HMAC, its claims written out
/// again for SQL) cost about 3 us of a 37 us read. An entry serves only a request under the
/// secret it was verified with (a rotated secret verifies afresh, and fails) and only until
/// the token's `exp`; a token that fails is never kept, so only the secret's holders can
/// fill it, and it is emptied when full.
static VERIFIED: LazyLock<Mutex<HashMap<String, Verified>>> = LazyLock::new(Mutex::default);

/// The most tokens [`VERIFIED`] keeps.
const VERIFIED_KEPT: usize = 1024;

/// [`verify_token`] as the role and claims a request runs with, through [`VERIFIED`].
fn verified(secret: &str, token: &str, now: OffsetDateTime) -> Result<Acting, TokenError> {
    if let Ok(kept) = VERIFIED.lock()
        && let Some(v) = kept.get(token)
        && v.secret == secret
        && v.exp > now.unix_timestamp()
    {
        return Ok(v.acting.clone());
    }
    let token_claims = verify_token(secret, token, now)?;
    // `verify_token` refuses a token without a numeric `exp`.
    let exp = token_claims
        .claims
        .get("exp")
        .and_then(Value::as_i64)
        .unwrap_or(i64::MIN);
    let acting = Acting::of(token_claims.role, token_claims.claims);
    if let Ok(mut kept) = VERIFIED.lock() {
        if kept.len() >= VERIFIED_KEPT {
            kept.clear();
        }
        kept.insert(
            token.to_owned(),
            Verified {
                secret: secret.to_owned(),
                acting: acting.clone(),
                exp,
            },
        );
    }
    Ok(acting)
}

fn is_quire_key(credential: &str) -> bool {
    credential.starts_with("qk_")
}

/// PostgREST's answers to a bearer token it cannot use.
fn token_refusal(e: TokenError) -> RestError {
    let (code, message) = match e {
        TokenError::Invalid => ("PGRST301", "No suitable key or wrong key type"),
        TokenError::Expired => ("PGRST303", "JWT expired"),
        TokenError::Role => (
            "PGRST301",
            "the token's role is not one this database serves",
        ),
    };
    RestError {
        status: 401,
        code: code.to_owned(),
        message: message.to_owned(),
        details: None,
        hint: None,
    }
}

impl DatabaseService {
    /// Where database `slug`'s data API stands on this replica: its instance when one is
    /// running whose record was checked within the last second, else the record is read
    /// (a database gone, or its data API off, is `NotFound` from then on). Nothing is
    /// started here: the request's keys are checked first.
    ///
    /// # Errors
    /// `NotFound`; `Service` (`Unavailable` without a cluster, `Infra`).
    pub async fn data_api(&self, slug: &str) -> Result<Reach, GatewayError> {
        self.cluster()?;
        if let Some(instance) = self.ports.runtime.fresh(slug) {
            return Ok(Reach::Running(instance));
        }
        // Before the record: a stop (a rotation) between the two makes this target stale.
        let stops_seen = self.ports.runtime.stops();
        let now = self.ports.clock.now();
        let database = self
            .ports
            .records
            .database_by_slug(slug)
            .await
            .map_err(DatabaseError::from)?
            .filter(|d| d.status == DatabaseStatus::Ready && d.data_api_enabled && !d.lapsed(now));
        let Some(database) = database else {
            return Err(GatewayError::NotFound);
        };
        Ok(Reach::Stopped(Box::new(GatewayTarget {
            tenant: self.access(&database)?,
            jwt_secret: self.jwt_secret(&database)?,
            database,
            stops_seen,
        })))
    }

    /// The instance for a request whose keys were checked: the running one, or one started
    /// for `target`.
    ///
    /// # Errors
    /// `Instance` (starting, unavailable, saturated).
    pub async fn serve_data_api(
        &self,
        reach: Reach,
    ) -> Result<Arc<dyn DataApiInstance>, GatewayError> {
        match reach {
            Reach::Running(instance) => Ok(instance),
            Reach::Stopped(target) => Ok(self.ports.runtime.instance(*target).await?),
        }
    }

    /// The request's `apikey`, checked: one of `target`'s two keys (an end user's token is
    /// none), or a Quire key that may act for it; and who it acts as.
    ///
    /// # Errors
    /// `NoApiKey`, `InvalidApiKey`.
    pub async fn check_key(
        &self,
        target: &GatewayTarget,
        apikey: Option<&str>,
        keys: &dyn QuireKeys,
    ) -> Result<Acting, GatewayError> {
        let key = apikey.ok_or(GatewayError::NoApiKey)?;
        let acts = if is_quire_key(key) {
            self.quire_key_serves(target, key, keys)
                .await
                .then(Acting::service_role)
        } else {
            verified(&target.jwt_secret, key, self.ports.clock.now())
                .ok()
                .filter(|acting| acting.role != KeyRole::Authenticated)
        };
        acts.ok_or(GatewayError::InvalidApiKey)
    }

    /// Who a request with `credentials` acts as on `target`: the `apikey` checked, then the
    /// bearer token (none, or the `apikey` again, acts as the key).
    ///
    /// # Errors
    /// `NoApiKey`, `InvalidApiKey` (the `apikey`, or a Quire key as the bearer that may not
    /// act for the database); `Rest` with PostgREST's 401 for a bearer token it cannot use.
    pub async fn acting(
        &self,
        target: &GatewayTarget,
        credentials: Credentials<'_>,
        keys: &dyn QuireKeys,
    ) -> Result<Acting, GatewayError> {
        let key_acts = self.check_key(target, credentials.apikey, keys).await?;
        let Some(token) = credentials.bearer else {
            return Ok(key_acts);
        };
        if credentials.apikey == Some(token) {
            return Ok(key_acts);
        }
        if is_quire_key(token) {
            return if self.quire_key_serves(target, token, keys).await {
                Ok(Acting::service_role())
            } else {
                Err(GatewayError::InvalidApiKey)
            };
        }
        verified(&target.jwt_secret, token, self.ports.clock.now())
            .map_err(|e| GatewayError::Rest(token_refusal(e)))
    }

    /// Whether the Quire key `key` may act as `service_role` on `target`'s database: a
    /// live key with `base`, of the database's account, in a project it may write to. A
    /// store that failed answers no.
    async fn quire_key_serves(
        &self,
        target: &GatewayTarget,
        key: &str,
        keys: &dyn QuireKeys,
    ) -> bool {
        let Some(principal) = keys.principal(key).await else {
            return false;
        };
        principal.has_app(App::Base)
            && self
                .key_may_serve(&principal, target)
                .await
                .unwrap_or(false)
    }

    /// Whether a Quire credential may act as `service_role` on the database: one of its
    /// account's, in a project it may write to. (`base` in its apps is checked besides.)
    async fn key_may_serve(
        &self,
        principal: &Principal,
        target: &GatewayTarget,
    ) -> Result<bool, DatabaseError> {
        if principal.account_id != target.database.account_id {
            return Ok(false);
        }
        match authorize_project(
            self.ports.projects.as_ref(),
            principal,
            target.database.project_id,
            ProjectAccess::Write,
        )
        .await
        {
            Ok(_) => Ok(true),
            Err(quire_projects::AddressError::InsufficientScope) => Ok(false),
            Err(quire_projects::AddressError::Infra(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::OffsetDateTime;

    use super::{TokenError, verified};
    use crate::keys::{ApiKeys, KeyRole, sign_token};

    const SECRET: &str = "a-secret-of-the-gateway-under-test-0123456789";

    fn at(unix: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(unix).unwrap()
    }

    /// A kept token answers as the first check did, and only while that check would still
    /// pass: under the same secret (a rotation refuses it) and before its `exp`.
    #[test]
    fn a_verified_token_is_kept_only_for_its_secret_and_its_lifetime() {
        let keys = ApiKeys::derive(SECRET, "kept", at(1_800_000_000));
        let anon = verified(SECRET, &keys.anon, at(1_800_000_000)).unwrap();
        assert_eq!(anon.role, KeyRole::Anon);
        assert_eq!(
            verified(SECRET, &keys.anon, at(1_800_000_001)).unwrap(),
            anon
        );
        assert_eq!(
            verified(
                "another-secret-of-the-same-length-0123456789",
                &keys.anon,
                at(1_800_000_001)
            )
            .unwrap_err(),
            TokenError::Invalid
        );

        let claims = json!({ "role": "authenticated", "sub": "u1", "exp": 1_800_000_060 });
        let claims = claims.as_object().cloned().unwrap();
        let user = sign_token(SECRET, &claims);
        let acting = verified(SECRET, &user, at(1_800_000_000)).unwrap();
        assert_eq!(acting.role, KeyRole::Authenticated);
        assert!(
            acting.claims.contains("\"sub\":\"u1\""),
            "{}",
            acting.claims
        );
        assert_eq!(
            verified(SECRET, &user, at(1_800_000_060)).unwrap_err(),
            TokenError::Expired
        );
        // A token that fails is not kept: the same text keeps failing.
        let forged = format!("{user}x");
        for _ in 0..2 {
            assert_eq!(
                verified(SECRET, &forged, at(1_800_000_000)).unwrap_err(),
                TokenError::Invalid
            );
        }
    }
}
