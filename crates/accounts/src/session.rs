//! Dashboard sessions and password sign-in.
//!
//! A session id is 32 random bytes (base64url) handed to the browser once, in a cookie; the
//! database keeps only its SHA-256. Sign-in attempts are counted per account and per client
//! address in the shared `RateLimiter`, successful or not, so guessing is throttled on every
//! replica alike. Unknown logins and wrong passwords get the same answer after the same
//! argon2id work.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::password::verify_password;
use quire_kernel::{AccountId, Clock, InfraError, RateLimiter};
use time::OffsetDateTime;

use crate::model::Account;
use crate::ports::AccountStore;

/// How long a session lasts.
pub const SESSION_LIFETIME: time::Duration = time::Duration::hours(12);
/// Sign-in attempts allowed per account, and per client address, in [`ATTEMPT_WINDOW`].
pub const ATTEMPTS_PER_ACCOUNT: u32 = 10;
pub const ATTEMPTS_PER_ADDRESS: u32 = 30;
pub const ATTEMPT_WINDOW: Duration = Duration::from_secs(15 * 60);

/// A real argon2id hash of a fixed string, verified against when the login is unknown (or
/// has no password), so that costs the same work as a wrong password.
static DECOY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    quire_kernel::password::hash_password_unchecked(DECOY_PASSWORD).unwrap_or_default()
});
const DECOY_PASSWORD: &str = "quire-sign-in-decoy";

/// The secret in the session cookie. Its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(String);

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(…)")
    }
}

impl SessionToken {
    #[must_use]
    pub fn generate() -> Self {
        Self(quire_kernel::secret::random_url_token())
    }

    #[must_use]
    pub fn from_cookie(value: &str) -> Self {
        Self(value.to_owned())
    }

    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Lowercase hex SHA-256: what the store holds.
    #[must_use]
    pub fn hash(&self) -> String {
        quire_kernel::secret::sha256_hex(self.0.as_bytes())
    }
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id_hash: String,
    pub account_id: AccountId,
    /// Whether the second factor has been given in this session (true when the account has
    /// none enrolled).
    pub mfa_satisfied: bool,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// Persistence of sessions.
#[async_trait]
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn insert_session(&self, session: &Session) -> Result<(), InfraError>;

    /// # Errors
    /// [`InfraError`] on storage failure; unknown is `Ok(None)`.
    async fn session_by_hash(&self, id_hash: &str) -> Result<Option<Session>, InfraError>;

    /// Removes the session; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_session(&self, id_hash: &str) -> Result<(), InfraError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("wrong email, handle or password")]
    WrongCredentials,
    #[error("too many sign-in attempts; wait a few minutes")]
    Throttled,
    #[error("this account is not activated yet")]
    NotActivated,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// A successful sign-in: the cookie value, shown once.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: SessionToken,
    pub session: Session,
}

/// Dashboard sign-in, sessions and sign-out.
#[derive(Debug, Clone)]
pub struct SessionService {
    accounts: Arc<dyn AccountStore>,
    sessions: Arc<dyn SessionStore>,
    limiter: Arc<dyn RateLimiter>,
    clock: Arc<dyn Clock>,
}

impl SessionService {
    pub fn new(
        accounts: Arc<dyn AccountStore>,
        sessions: Arc<dyn SessionStore>,
        limiter: Arc<dyn RateLimiter>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            accounts,
            sessions,
            limiter,
            clock,
        }
    }

    /// Signs in with an email or handle and a password.
    ///
    /// # Errors
    /// `Throttled` past [`ATTEMPTS_PER_ACCOUNT`] attempts for the login or
    /// [`ATTEMPTS_PER_ADDRESS`] from the address in [`ATTEMPT_WINDOW`]; `WrongCredentials`
    /// for an unknown login, an account without a password or a wrong password (alike);
    /// `NotActivated` for a right password of an account not activated.
    pub async fn sign_in(
        &self,
        login: &str,
        password: &str,
        client_ip: &str,
    ) -> Result<SignedIn, SignInError> {
        let now = self.clock.now();
        let login = login.trim().to_lowercase();
        let by_address = self
            .limiter
            .hit(
                "sign_in_address",
                client_ip,
                ATTEMPT_WINDOW,
                ATTEMPTS_PER_ADDRESS,
                now,
            )
            .await?;
        let by_account = self
            .limiter
            .hit(
                "sign_in_account",
                &login,
                ATTEMPT_WINDOW,
                ATTEMPTS_PER_ACCOUNT,
                now,
            )
            .await?;
        if !(by_address && by_account) {
            return Err(SignInError::Throttled);
        }
        let account = self.accounts.account_by_login(&login).await?;
        let stored = account
            .as_ref()
            .and_then(|a| a.password_hash.clone())
            .unwrap_or_else(|| DECOY_HASH.clone());
        let matches = verify_password(password, &stored);
        let account: Account = match account {
            Some(a) if matches && a.password_hash.is_some() => a,
            _ => return Err(SignInError::WrongCredentials),
        };
        if account.activated_at.is_none() {
            return Err(SignInError::NotActivated);
        }
        let token = SessionToken::generate();
        let session = Session {
            id_hash: token.hash(),
            account_id: account.id,
            mfa_satisfied: true,
            created_at: now,
            expires_at: now + SESSION_LIFETIME,
        };
        self.sessions.insert_session(&session).await?;
        Ok(SignedIn { token, session })
    }

    /// The live session a cookie names, with its account.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown or expired is `Ok(None)`.
    pub async fn current(
        &self,
        token: &SessionToken,
    ) -> Result<Option<(Session, Account)>, InfraError> {
        let Some(session) = self.sessions.session_by_hash(&token.hash()).await? else {
            return Ok(None);
        };
        if self.clock.now() >= session.expires_at {
            return Ok(None);
        }
        Ok(self
            .accounts
            .account_by_id(session.account_id)
            .await?
            .map(|a| (session, a)))
    }

    /// Ends the session a cookie names.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sign_out(&self, token: &SessionToken) -> Result<(), InfraError> {
        self.sessions.delete_session(&token.hash()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoy_is_a_real_hash_so_unknown_logins_cost_a_real_verification() {
        assert!(DECOY_HASH.starts_with("$argon2id$"));
        assert!(verify_password(DECOY_PASSWORD, &DECOY_HASH));
        assert!(!verify_password("anything", &DECOY_HASH));
    }

    #[test]
    fn tokens_are_random_and_hashed() {
        let t = SessionToken::generate();
        assert_eq!(t.expose().len(), 43);
        assert_ne!(SessionToken::generate(), t);
        assert_eq!(t.hash().len(), 64);
        assert!(!format!("{t:?}").contains(t.expose()));
    }
}
