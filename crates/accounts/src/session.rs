//! Dashboard sessions and password sign-in.
//!
//! A session id is 32 random bytes (base64url) handed to the browser once, in a cookie; the
//! database keeps only its SHA-256. Failed sign-ins are counted per account (whichever login
//! names it) and per client address in the shared `RateLimiter`, so guessing is throttled on
//! every replica alike; a right password costs nothing. An account whose budget is spent is
//! refused only to addresses that failed against it, so nobody can lock its owner out by
//! guessing from elsewhere. Unknown logins and wrong passwords get the same answer after the
//! same argon2id work, and unknown logins have budgets of their own, as accounts do.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::{
    AccountId, Budget, Clock, InfraError, Offload, RateLimiter, Slot, Take, address_key,
};
use time::OffsetDateTime;

use crate::model::Account;
use crate::password_check::password_matches;
use crate::ports::AccountStore;
use crate::sealing::{SealedSecret, SealingKey};

/// How long a session lasts.
pub const SESSION_LIFETIME: time::Duration = time::Duration::hours(12);
/// Failed sign-ins allowed per account, and per client address, in [`ATTEMPT_WINDOW`].
pub const ATTEMPTS_PER_ACCOUNT: u32 = 10;
pub const ATTEMPTS_PER_ADDRESS: u32 = 30;
pub const ATTEMPT_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Rate-limit buckets of failed sign-ins: per client address, per account (or unknown
/// login), and per account and address (who failed against whom).
pub const SIGN_IN_ADDRESS_BUCKET: &str = "sign_in_address";
pub const SIGN_IN_ACCOUNT_BUCKET: &str = "sign_in_account";
pub const SIGN_IN_PAIR_BUCKET: &str = "sign_in_pair";

/// Rate-limit buckets of wrong second-factor codes (TOTP or recovery), kept apart from the
/// password's so a guesser of one does not spend the budgets of the other.
pub const SECOND_FACTOR_ADDRESS_BUCKET: &str = "second_factor_address";
pub const SECOND_FACTOR_ACCOUNT_BUCKET: &str = "second_factor_account";
pub const SECOND_FACTOR_PAIR_BUCKET: &str = "second_factor_pair";

/// The slots one try takes: a slot's bucket, key and number.
pub(crate) type Slots = Vec<(&'static str, String, Slot)>;

/// A guessing surface budgeted by the one rule of sign-in: failures per address, per
/// account, and per account and address.
#[derive(Debug)]
pub(crate) struct Surface {
    address: &'static str,
    account: &'static str,
    pair: &'static str,
    account_budget: Budget,
}

const SIGN_IN: Surface = Surface {
    address: SIGN_IN_ADDRESS_BUCKET,
    account: SIGN_IN_ACCOUNT_BUCKET,
    pair: SIGN_IN_PAIR_BUCKET,
    account_budget: ACCOUNT_BUDGET,
};

pub(crate) const SECOND_FACTOR: Surface = Surface {
    address: SECOND_FACTOR_ADDRESS_BUCKET,
    account: SECOND_FACTOR_ACCOUNT_BUCKET,
    pair: SECOND_FACTOR_PAIR_BUCKET,
    account_budget: Budget::fixed(CODES_PER_ACCOUNT, ATTEMPT_WINDOW),
};

const ADDRESS_BUDGET: Budget = Budget::fixed(ATTEMPTS_PER_ADDRESS, ATTEMPT_WINDOW);
const ACCOUNT_BUDGET: Budget = Budget::fixed(ATTEMPTS_PER_ACCOUNT, ATTEMPT_WINDOW);
/// The failures of one address against one account; never the binding limit (the address's
/// own is lower), only the record that lets an address with none past a spent account budget.
const PAIR_BUDGET: Budget = Budget::fixed(ATTEMPTS_PER_ADDRESS, ATTEMPT_WINDOW);
/// Past a spent account budget: one try for an address with no failure against the account.
const PAIR_FIRST_TRY: Budget = Budget::fixed(1, ATTEMPT_WINDOW);

/// `Throttled` until `retry_at`, in whole seconds (at least one).
fn throttled(retry_at: OffsetDateTime, now: OffsetDateTime) -> SignInError {
    let wait = retry_at - now;
    let secs = wait.whole_seconds() + i64::from(wait.subsec_nanoseconds() > 0);
    SignInError::Throttled {
        retry_after_secs: u64::try_from(secs).unwrap_or(1).max(1),
    }
}

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
    /// The secret of a second-factor enrollment this session began and has not finished,
    /// sealed: it stays on the server, never in a form.
    pub pending_totp: Option<SealedSecret>,
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

    /// Keeps `secret` (or nothing) as the session's pending enrollment; absent is not an
    /// error.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn set_pending_totp(
        &self,
        id_hash: &str,
        secret: Option<&SealedSecret>,
    ) -> Result<(), InfraError>;

    /// Removes every session of `account` but `keep`; returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    async fn delete_other_sessions(
        &self,
        account: AccountId,
        keep: &str,
    ) -> Result<u64, InfraError>;

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
    Throttled { retry_after_secs: u64 },
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
    #[error("this enrollment was not started in this session; start again")]
    NotStarted,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Wrong second-factor codes allowed per account in [`ATTEMPT_WINDOW`] (a 6-digit code
/// falls to guessing at about one in 10⁵ per try with the skew window, so this keeps it out
/// of reach); past it, as at sign-in, only addresses that have not failed against the
/// account may try.
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
    pub(crate) accounts: Arc<dyn AccountStore>,
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) limiter: Arc<dyn RateLimiter>,
    pub(crate) clock: Arc<dyn Clock>,
    /// Where passwords are verified, so that no async worker waits on argon2id.
    pub(crate) offload: Arc<dyn Offload>,
    pub(crate) sealing: SealingKey,
}

impl SessionService {
    pub fn new(
        accounts: Arc<dyn AccountStore>,
        sessions: Arc<dyn SessionStore>,
        limiter: Arc<dyn RateLimiter>,
        clock: Arc<dyn Clock>,
        offload: Arc<dyn Offload>,
        sealing: SealingKey,
    ) -> Self {
        Self {
            accounts,
            sessions,
            limiter,
            clock,
            offload,
            sealing,
        }
    }

    /// Signs in with an email or handle and a password, from a browser holding no session.
    ///
    /// # Errors
    /// As [`SessionService::sign_in_holding`].
    pub async fn sign_in(
        &self,
        login: &str,
        password: &str,
        client_ip: &str,
    ) -> Result<SignedIn, SignInError> {
        self.sign_in_holding(login, password, client_ip, None).await
    }

    /// Signs in with an email or handle and a password; `held` is the session the browser
    /// already holds, if any.
    ///
    /// Only failures count. Past [`ATTEMPTS_PER_ADDRESS`] failures from the address in
    /// [`ATTEMPT_WINDOW`] every attempt from it is refused. Past [`ATTEMPTS_PER_ACCOUNT`]
    /// failures against the account (by its email or its handle alike), attempts are refused
    /// only from addresses that have failed against it, unless `held` is a live session of
    /// that account.
    ///
    /// # Errors
    /// `Throttled` as above (nothing is checked or counted then); `WrongCredentials` for an
    /// unknown login, an account without a password or a wrong password (alike);
    /// `EmailNotVerified` (only after the right password) for an account that has not
    /// confirmed its address.
    /// An account not yet activated signs in: its session reaches the activation and
    /// security pages, and its credentials answer `not_activated` on versioned routes.
    pub async fn sign_in_holding(
        &self,
        login: &str,
        password: &str,
        client_ip: &str,
        held: Option<&SessionToken>,
    ) -> Result<SignedIn, SignInError> {
        let mut slots = Vec::new();
        let result = self
            .attempt(login, password, client_ip, held, &mut slots)
            .await;
        // A failure keeps its slots; anything else (the right password, a refusal, a
        // storage failure) was no guess and gives them back.
        self.settle(slots, matches!(result, Err(SignInError::WrongCredentials)))
            .await?;
        result
    }

    async fn attempt(
        &self,
        login: &str,
        password: &str,
        client_ip: &str,
        held: Option<&SessionToken>,
        slots: &mut Slots,
    ) -> Result<SignedIn, SignInError> {
        let now = self.clock.now();
        let login = login.trim().to_lowercase();
        let address = address_key(client_ip);
        let account = self.accounts.account_by_login(&login).await?;
        // The account's budget whichever login named it; an unknown login has one of its
        // own, so budgets say nothing about which logins exist.
        let budget_key = match &account {
            Some(a) => format!("account:{}", a.id.0),
            None => format!("login:{login}"),
        };
        let holder = account.as_ref().zip(held).map(|(a, token)| (a.id, token));
        if let Err(retry_at) = self
            .take_try(&SIGN_IN, budget_key, address, holder, slots, now)
            .await?
        {
            return Err(throttled(retry_at, now));
        }
        let stored = account.as_ref().and_then(|a| a.password_hash.clone());
        let matches = password_matches(self.offload.as_ref(), password, stored).await?;
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
            pending_totp: None,
        };
        self.sessions.insert_session(&session).await?;
        Ok(SignedIn { token, session })
    }

    /// Takes the slots of one try on `surface` from `address` against `budget_key` (an
    /// account, or an unknown login) into `slots`; `Ok(Err(retry_at))` when the try is
    /// refused. Past the account's budget only an address with no failure against it may
    /// try, or a browser holding a live session of the account (`holder`).
    pub(crate) async fn take_try(
        &self,
        surface: &Surface,
        budget_key: String,
        address: String,
        holder: Option<(AccountId, &SessionToken)>,
        slots: &mut Slots,
        now: OffsetDateTime,
    ) -> Result<Result<(), OffsetDateTime>, InfraError> {
        match self
            .limiter
            .take(surface.address, &address, &ADDRESS_BUDGET, now)
            .await?
        {
            Take::Taken(slot) => slots.push((surface.address, address.clone(), slot)),
            Take::Refused { retry_at } => return Ok(Err(retry_at)),
        }
        let pair_key = format!("{budget_key}|{address}");
        match self
            .limiter
            .take(surface.account, &budget_key, &surface.account_budget, now)
            .await?
        {
            Take::Taken(slot) => {
                slots.push((surface.account, budget_key, slot));
                if let Take::Taken(slot) = self
                    .limiter
                    .take(surface.pair, &pair_key, &PAIR_BUDGET, now)
                    .await?
                {
                    slots.push((surface.pair, pair_key, slot));
                }
            }
            Take::Refused {
                retry_at: account_opens,
            } => {
                let holder = match holder {
                    Some((id, token)) => self
                        .current(token)
                        .await?
                        .is_some_and(|(s, _)| s.account_id == id),
                    None => false,
                };
                // Someone spent the account's budget: an address that has not failed
                // against it still gets its try, so guessing elsewhere locks no one out.
                match self
                    .limiter
                    .take(surface.pair, &pair_key, &PAIR_FIRST_TRY, now)
                    .await?
                {
                    Take::Taken(slot) => slots.push((surface.pair, pair_key, slot)),
                    Take::Refused { .. } if holder => {}
                    // Back when the account's budget has room, or this address's failure
                    // is a window old, whichever comes first.
                    Take::Refused { retry_at } => return Ok(Err(retry_at.min(account_opens))),
                }
            }
        }
        Ok(Ok(()))
    }

    /// Keeps the slots of a try that `failed`; gives back those of any other.
    pub(crate) async fn settle(&self, slots: Slots, failed: bool) -> Result<(), InfraError> {
        if !failed {
            for (bucket, key, slot) in slots {
                self.limiter.give_back(bucket, &key, slot).await?;
            }
        }
        Ok(())
    }

    /// The live session a cookie names, with its account.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; unknown or expired is `Ok(None)`.
    pub async fn current(
        &self,
        token: &SessionToken,
    ) -> Result<Option<(Session, Account)>, InfraError> {
        self.by_hash(&token.hash()).await
    }

    /// `session` and its account as they stand now (after an action changed them).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure; ended or expired is `Ok(None)`.
    pub async fn reload(
        &self,
        session: &Session,
    ) -> Result<Option<(Session, Account)>, InfraError> {
        self.by_hash(&session.id_hash).await
    }

    async fn by_hash(&self, id_hash: &str) -> Result<Option<(Session, Account)>, InfraError> {
        let Some(session) = self.sessions.session_by_hash(id_hash).await? else {
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

    /// Ends every other session of the session's account (other browsers, other devices);
    /// returns how many.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sign_out_others(&self, session: &Session) -> Result<u64, InfraError> {
        self.sessions
            .delete_other_sessions(session.account_id, &session.id_hash)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashed() {
        let t = SessionToken::generate();
        assert_eq!(t.expose().len(), 43);
        assert_ne!(SessionToken::generate(), t);
        assert_eq!(t.hash().len(), 64);
        assert!(!format!("{t:?}").contains(t.expose()));
    }
}
