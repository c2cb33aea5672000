//! The auth subset of a database's data API (`/db/{slug}/auth/v1`, GoTrue's paths and
//! JSON): sign-up, password and refresh-token grants, the signed-in user, sign-out,
//! password recovery and sign-in by a mailed code or link, and the admin API. Users,
//! sessions and refresh tokens live in the tenant database's `auth` schema (port
//! [`TenantUsers`]); access tokens are HS256 JWTs under the database's secret with `sub`,
//! `role: authenticated` and `session_id`, so `auth.uid()` policies see who asks.
//!
//! The rules: passwords with argon2id, hashed off the async workers; sign-up and its
//! confirmation link in `signup` (nobody can take an address they do not receive mail at,
//! and the link confirms only the password its presser chose);
//! refresh tokens of 256 bits stored as their SHA-256, rotated on every use, a reused one
//! ending its session, in `refresh`; recovery and sign-in mails, each with a one-time link
//! and a 6-digit code that are spent together, in `one_time` (where their links lead, in
//! `redirect`); the `service_role`'s admin API in `admin`; sign-up, the token grants and
//! the mails counted per database, client address and address in the shared rate limiter.

mod admin;
mod error;
mod model;
mod one_time;
mod otp_verify;
mod redirect;
mod refresh;
mod schema;
mod signup;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use quire_kernel::password::{hash_password_unchecked, verify_password};
use quire_kernel::secret::{random_url_token, sha256_hex};
use quire_kernel::{Email, Offload, RateLimiter, offloaded};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

pub use error::AuthError;
pub use model::{AuthSession, AuthSettings, EndUser, NewEndUser, SignOutScope, UserChange};
pub use schema::AUTH_SCHEMA_SQL;

pub use admin::{Admin, AdminUser, GeneratedLink, LinkRequest, UsersPage};
pub use otp_verify::OtpVerification;
pub use signup::SignedUp;

use crate::keys::{KeyRole, TokenError, sign_token, verify_token};
use crate::ports::{EndUserMail, TenantUsers};
use crate::runtime::{DataApiInstance, GatewayTarget};
use crate::service::DatabaseService;

/// GoTrue's shortest password.
pub const MIN_PASSWORD_CHARS: usize = 6;
/// An access token's lifetime (GoTrue's default `JWT_EXP`).
pub const ACCESS_TOKEN_SECS: i64 = 3600;
/// A rotated refresh token presented again this soon, while its successor is unused, is
/// a retry (a lost answer, tabs refreshing at once), not a theft: it gets that successor.
pub const REFRESH_REUSE_GRACE: Duration = Duration::from_secs(10);
/// How long a confirmation link works (GoTrue's `MAILER_OTP_EXP`).
pub const CONFIRMATION_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Passwords a confirmation link's page takes before the link is dead.
pub const CONFIRMATION_TRIES: u32 = 5;
/// Most `user_metadata` a user may keep, as JSON text.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;

/// Sign-ups per client address and database in an hour.
const SIGN_UPS_PER_HOUR: u32 = 30;
/// Password grants per client address and database in five minutes (GoTrue's
/// `RATE_LIMIT_TOKEN_REFRESH` counts both grants; passwords are the ones guessed).
const PASSWORD_GRANTS_PER_5_MIN: u32 = 30;
const REFRESH_GRANTS_PER_5_MIN: u32 = 150;
/// Confirmation links opened per client address and database in five minutes.
const VERIFY_PER_5_MIN: u32 = 30;
/// How long a mailed one-time code and its link work (GoTrue's `MAILER_OTP_EXP`).
pub const ONE_TIME_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Codes a mail's code takes, right or wrong, before it is dead with its link.
pub const ONE_TIME_TRIES: u32 = 5;
/// Recovery, sign-in and confirmation mails asked for per client address and database in
/// an hour.
const MAIL_REQUESTS_PER_HOUR: u32 = 30;
/// One mail per address in this time (GoTrue's `SMTP_MAX_FREQUENCY`).
const MAIL_INTERVAL: Duration = Duration::from_secs(60);
/// Mails per database in an hour, whoever asks (GoTrue's `RATE_LIMIT_EMAIL_SENT`).
const MAILS_PER_HOUR: u32 = 30;
/// Codes and links presented per client address and database in five minutes.
const CODES_PER_5_MIN: u32 = 30;
const HOUR: Duration = Duration::from_secs(3600);
const FIVE_MINUTES: Duration = Duration::from_secs(300);

/// A hash no password matches, verified when the email is unknown so that an unknown
/// address costs what a wrong password does.
static DECOY_HASH: LazyLock<String> =
    LazyLock::new(|| hash_password_unchecked(&random_url_token()).unwrap_or_default());

/// The auth use cases of one database, over its running instance.
#[derive(Debug, Clone)]
pub struct TenantAuth {
    instance: Arc<dyn DataApiInstance>,
    issuer: String,
    clock: Arc<dyn quire_kernel::Clock>,
    offload: Arc<dyn Offload>,
    limiter: Arc<dyn RateLimiter>,
    mail: Arc<dyn EndUserMail>,
}

/// A verified access token: whose, and which session.
#[derive(Debug, Clone, Copy)]
pub struct Bearer {
    pub user: Uuid,
    pub session: Uuid,
}

impl DatabaseService {
    /// The auth use cases of the database `instance` serves.
    #[must_use]
    pub fn tenant_auth(&self, instance: Arc<dyn DataApiInstance>) -> TenantAuth {
        let issuer = format!("{}/auth/v1", self.api_url(&instance.target().database.slug));
        TenantAuth {
            instance,
            issuer,
            clock: self.ports.clock.clone(),
            offload: self.ports.offload.clone(),
            limiter: self.ports.limiter.clone(),
            mail: self.ports.mail.clone(),
        }
    }
}

/// Whether `token` has the shape of the links' tokens ([`random_url_token`]: 43
/// characters of base64url), so that the gateway need not start an instance (the link is
/// the one route open without a key) for what cannot be one.
#[must_use]
pub fn plausible_link_token(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A new address (sign-up, a change of address): one the mailer can write to, or GoTrue's
/// 400 before anything is stored.
fn checked_email(raw: &str) -> Result<String, AuthError> {
    Email::parse(raw)
        .map(|e| e.as_str().to_owned())
        .map_err(|_| {
            AuthError::Validation("Unable to validate email address: invalid format".into())
        })
}

/// An address to look a user up by: trimmed and lower-cased only, so a user stored under
/// an older, looser rule still signs in.
fn lookup_email(raw: &str) -> Result<String, AuthError> {
    let email = raw.trim().to_lowercase();
    if email.is_empty() || email.len() > 254 {
        return Err(AuthError::Validation(
            "Unable to validate email address: invalid format".into(),
        ));
    }
    Ok(email)
}

fn checked_metadata(data: Option<Value>) -> Result<Option<Map<String, Value>>, AuthError> {
    match data {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => {
            if Value::Object(map.clone()).to_string().len() > MAX_METADATA_BYTES {
                return Err(AuthError::Validation(format!(
                    "user metadata is larger than {MAX_METADATA_BYTES} bytes"
                )));
            }
            Ok(Some(map))
        }
        Some(_) => Err(AuthError::Validation("data must be a JSON object".into())),
    }
}

/// A change of address to one another user has: GoTrue's `email_exists`.
fn email_exists(e: crate::ports::UserWriteError) -> AuthError {
    match AuthError::from(e) {
        AuthError::UserExists => AuthError::EmailExists,
        other => other,
    }
}

impl TenantAuth {
    fn users(&self) -> &dyn TenantUsers {
        self.instance.users()
    }

    /// The database these use cases serve, and its secret.
    #[must_use]
    pub fn target(&self) -> &GatewayTarget {
        self.instance.target()
    }

    fn bucket(&self, what: &str) -> String {
        format!("db-auth-{what}:{}", self.instance.target().database.id.0)
    }

    async fn admit(
        &self,
        what: &str,
        client: &str,
        window: Duration,
        limit: u32,
    ) -> Result<(), AuthError> {
        let now = self.clock.now();
        let admitted = self
            .limiter
            .hit(&self.bucket(what), client, window, limit, now)
            .await?;
        if admitted {
            Ok(())
        } else {
            Err(AuthError::RateLimited {
                retry_after_secs: window.as_secs(),
            })
        }
    }

    async fn hash(&self, password: String) -> Result<String, AuthError> {
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(AuthError::WeakPassword);
        }
        offloaded(self.offload.as_ref(), move || {
            hash_password_unchecked(&password)
        })
        .await?
        .map_err(|_| AuthError::Validation("Password is too long".into()))
    }

    /// Signs a new session of `user` in, begun by `method` (`password`, `otp`): an access
    /// token and a first refresh token.
    async fn open_session(&self, user: &EndUser, method: &str) -> Result<AuthSession, AuthError> {
        let session = Uuid::new_v4();
        let refresh = random_url_token();
        let now = self.clock.now();
        let user = self
            .users()
            .start_session(user.id, session, &sha256_hex(refresh.as_bytes()), now)
            .await?;
        Ok(self.session(user, session, method, refresh, now))
    }

    fn session(
        &self,
        user: EndUser,
        session: Uuid,
        method: &str,
        refresh_token: String,
        now: OffsetDateTime,
    ) -> AuthSession {
        let expires_at = now + time::Duration::seconds(ACCESS_TOKEN_SECS);
        let claims = user.access_claims(&self.issuer, session, method, now, expires_at);
        AuthSession {
            access_token: sign_token(&self.instance.target().jwt_secret, &claims),
            refresh_token,
            expires_in: ACCESS_TOKEN_SECS,
            expires_at: expires_at.unix_timestamp(),
            user,
        }
    }

    /// `POST token?grant_type=password`.
    ///
    /// # Errors
    /// `RateLimited`, `Validation`, `InvalidCredentials` (unknown email or wrong password,
    /// alike and at the same cost), `EmailNotConfirmed`.
    pub async fn password_grant(
        &self,
        client: &str,
        email: &str,
        password: String,
    ) -> Result<AuthSession, AuthError> {
        self.admit("password", client, FIVE_MINUTES, PASSWORD_GRANTS_PER_5_MIN)
            .await?;
        let email = lookup_email(email)?;
        let found = self.users().user_by_email(&email).await?;
        // A user with no password (made by a mailed code, or by the owner without one)
        // costs what an unknown address does, and no password is theirs.
        let stored = found
            .as_ref()
            .map(|(_, hash)| hash.clone())
            .filter(|hash| !hash.is_empty())
            .unwrap_or_else(|| DECOY_HASH.clone());
        let matches = offloaded(self.offload.as_ref(), move || {
            verify_password(&password, &stored)
        })
        .await?;
        let user = match found {
            Some((user, hash)) if matches && !hash.is_empty() => user,
            _ => return Err(AuthError::InvalidCredentials),
        };
        if user.email_confirmed_at.is_none() {
            return Err(AuthError::EmailNotConfirmed);
        }
        self.open_session(&user, "password").await
    }

    /// The user and session an access token (the bearer of `GET`/`PUT user` and `logout`)
    /// names: this database's, `authenticated`, unexpired, its session still open.
    ///
    /// # Errors
    /// `NoAuthorization` without a token; `BadJwt`; `SessionNotFound`.
    pub async fn bearer(&self, token: Option<&str>) -> Result<Bearer, AuthError> {
        let token = token.ok_or(AuthError::NoAuthorization)?;
        let now = self.clock.now();
        let verified =
            verify_token(&self.instance.target().jwt_secret, token, now).map_err(|e| match e {
                TokenError::Expired => AuthError::BadJwt("token is expired"),
                TokenError::Invalid | TokenError::Role => AuthError::BadJwt("signature is invalid"),
            })?;
        if verified.role != KeyRole::Authenticated {
            // The anon key as a bearer: GoTrue answers that no user signed in.
            return Err(AuthError::BadJwt("the token names no signed-in user"));
        }
        let uuid_claim = |name: &str| {
            verified
                .claims
                .get(name)
                .and_then(Value::as_str)
                .and_then(|s| Uuid::parse_str(s).ok())
        };
        let user = uuid_claim("sub").ok_or(AuthError::BadJwt("the token has no subject"))?;
        let session = uuid_claim("session_id").ok_or(AuthError::SessionNotFound)?;
        if !self.users().session_open(session).await? {
            return Err(AuthError::SessionNotFound);
        }
        Ok(Bearer { user, session })
    }

    /// `GET user`.
    ///
    /// # Errors
    /// As [`Self::bearer`]; `UserNotFound` for a user deleted meanwhile.
    pub async fn user(&self, token: Option<&str>) -> Result<EndUser, AuthError> {
        let bearer = self.bearer(token).await?;
        self.users()
            .user(bearer.user)
            .await?
            .ok_or(AuthError::UserNotFound)
    }

    /// `PUT user`: a new email, password or metadata. A new password spends the user's
    /// mailed links and codes and ends their other sessions, as GoTrue's does: whoever
    /// used the old one (the reason for a recovery, often) is signed out.
    ///
    /// # Errors
    /// As [`Self::bearer`]; `Validation`, `WeakPassword`, `EmailExists`, `UserNotFound`.
    pub async fn update_user(
        &self,
        token: Option<&str>,
        email: Option<&str>,
        password: Option<String>,
        data: Option<Value>,
    ) -> Result<EndUser, AuthError> {
        let bearer = self.bearer(token).await?;
        let email = email.map(checked_email).transpose()?;
        if email.is_some() && self.users().settings().await?.confirm_email {
            // An address taken without its confirmation would undo what the owner asked.
            return Err(AuthError::Validation(
                "Changing the address needs a confirmation this database does not offer yet".into(),
            ));
        }
        let user_metadata = checked_metadata(data)?;
        let password_hash = match password {
            Some(p) => Some(self.hash(p).await?),
            None => None,
        };
        let new_password = password_hash.is_some();
        let change = UserChange {
            email,
            password_hash,
            user_metadata,
            ..UserChange::default()
        };
        let user = self
            .users()
            .update_user(bearer.user, &change, self.clock.now())
            .await
            .map_err(email_exists)?
            .ok_or(AuthError::UserNotFound)?;
        if new_password {
            self.users()
                .end_sessions(bearer.user, bearer.session, SignOutScope::Others)
                .await?;
        }
        Ok(user)
    }

    /// `POST logout`: ends the token's sessions (`scope`), so their refresh tokens no
    /// longer work and `GET user` refuses their access tokens.
    ///
    /// # Errors
    /// As [`Self::bearer`].
    pub async fn sign_out(
        &self,
        token: Option<&str>,
        scope: SignOutScope,
    ) -> Result<(), AuthError> {
        let bearer = self.bearer(token).await?;
        self.users()
            .end_sessions(bearer.user, bearer.session, scope)
            .await?;
        Ok(())
    }

    /// The database's auth settings (`GET settings`).
    ///
    /// # Errors
    /// Storage failures.
    pub async fn settings(&self) -> Result<AuthSettings, AuthError> {
        Ok(self.users().settings().await?)
    }
}
