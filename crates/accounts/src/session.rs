//! Dashboard sessions and password sign-in.
//!
//! A session id is 32 random bytes (base64url) handed to the browser once, in a cookie; the
//! database keeps only its SHA-256. Sign-in attempts are counted per account and per client
//! address in the shared `RateLimiter`, successful or not, so guessing is throttled on every
//! replica alike. Unknown logins and wrong passwords get the same answer after the same
//! argon2id work.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::password::verify_password;
use quire_kernel::{AccountId, Clock, InfraError, RateLimiter};
use time::OffsetDateTime;

use crate::mfa::TotpSecret;
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

/// The session cookie's secret.
#[derive(Debug)]
pub enum SessionCookie {}

impl quire_kernel::secret::TokenPurpose for SessionCookie {
    const NAME: &'static str = "SessionToken";
}

/// The secret in the session cookie; the store keeps its hash.
pub type SessionToken = quire_kernel::secret::OpaqueToken<SessionCookie>;

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

    /// Records that the session has given the second factor; absent is not an error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn mark_mfa_satisfied(&self, id_hash: &str) -> Result<(), InfraError>;

    /// Removes every session expired at `now`; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_expired_sessions(&self, now: OffsetDateTime) -> Result<u64, InfraError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    #[error("wrong email, handle or password")]
    WrongCredentials,
    #[error("too many sign-in attempts; wait a few minutes")]
    Throttled,
    /// The password was right, but the account has not confirmed its email address yet.
    #[error("confirm your email address first: follow the link in the message we sent")]
    EmailNotVerified(Box<Account>),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecondFactorError {
    #[error("that code is not right; use the current code from your authenticator app")]
    WrongCode,
    #[error("too many codes tried; wait a few minutes")]
    Throttled,
    #[error("this account already has a second factor")]
    AlreadyEnrolled,
    #[error("this account has no second factor")]
    NotEnrolled,
    #[error("the enrollment secret is not valid; start again")]
    MalformedSecret,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Second-factor codes allowed per account in [`ATTEMPT_WINDOW`] (a 6-digit code falls
/// to guessing at about one in 10⁵ per try with the skew window, so this keeps it out of
/// reach).
pub const CODES_PER_ACCOUNT: u32 = 10;

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
    /// `EmailNotVerified` (only after the right password) for an account that has not
    /// confirmed its address.
    /// An account not yet activated signs in: its session reaches the activation and
    /// security pages, and its credentials answer `not_activated` on versioned routes.
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
        if account.email_verified_at.is_none() {
            return Err(SignInError::EmailNotVerified(Box::new(account)));
        }
        let token = SessionToken::generate();
        let session = Session {
            id_hash: token.hash(),
            account_id: account.id,
            mfa_satisfied: account.totp_secret.is_none(),
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

    /// A fresh secret to enroll (not stored until [`SessionService::confirm_enrollment`]).
    #[must_use]
    pub fn begin_enrollment(&self) -> TotpSecret {
        TotpSecret::generate()
    }

    /// Enrolls `secret` for the signed-in `account` once `code` proves the authenticator
    /// app holds it. Other sessions of the account must then give the code too.
    ///
    /// # Errors
    /// `Throttled`, `MalformedSecret`, `WrongCode`, `AlreadyEnrolled`; nothing changes on
    /// error.
    pub async fn confirm_enrollment(
        &self,
        session: &Session,
        account: &Account,
        secret: &str,
        code: &str,
    ) -> Result<(), SecondFactorError> {
        if account.totp_secret.is_some() {
            return Err(SecondFactorError::AlreadyEnrolled);
        }
        let now = self.clock.now();
        self.count_code_attempt(account, now).await?;
        let secret = TotpSecret::parse(secret).ok_or(SecondFactorError::MalformedSecret)?;
        let step = secret
            .matching_step(code, now)
            .ok_or(SecondFactorError::WrongCode)?;
        if self
            .accounts
            .enroll_totp(account.id, &secret, step, &session.id_hash)
            .await?
        {
            Ok(())
        } else {
            Err(SecondFactorError::AlreadyEnrolled)
        }
    }

    /// Checks a code from the account's authenticator app and, if right and not used
    /// before, marks the session as having given the second factor.
    ///
    /// # Errors
    /// `NotEnrolled`, `Throttled`, `WrongCode` (also for a code already used).
    pub async fn give_second_factor(
        &self,
        session: &Session,
        account: &Account,
        code: &str,
    ) -> Result<(), SecondFactorError> {
        let secret = account
            .totp_secret
            .as_ref()
            .ok_or(SecondFactorError::NotEnrolled)?;
        let now = self.clock.now();
        self.count_code_attempt(account, now).await?;
        let step = secret
            .matching_step(code, now)
            .ok_or(SecondFactorError::WrongCode)?;
        if !self.accounts.use_totp_step(account.id, step).await? {
            return Err(SecondFactorError::WrongCode);
        }
        self.sessions.mark_mfa_satisfied(&session.id_hash).await?;
        Ok(())
    }

    async fn count_code_attempt(
        &self,
        account: &Account,
        now: OffsetDateTime,
    ) -> Result<(), SecondFactorError> {
        let allowed = self
            .limiter
            .hit(
                "second_factor_account",
                &account.id.0.to_string(),
                ATTEMPT_WINDOW,
                CODES_PER_ACCOUNT,
                now,
            )
            .await?;
        if allowed {
            Ok(())
        } else {
            Err(SecondFactorError::Throttled)
        }
    }

    /// Removes expired sessions (the janitor's work).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sweep_expired(&self) -> Result<u64, InfraError> {
        self.sessions
            .delete_expired_sessions(self.clock.now())
            .await
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
