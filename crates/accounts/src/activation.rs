//! Activation: an account that signed itself up proves a little work (the captcha) and a
//! phone number on the operator's invitation list, and is activated.
//!
//! The checks run in the order the contract gives, and each refusal changes nothing beyond
//! what came before it: the attempt is counted first (so every refusal below costs one of
//! the five), and the captcha is spent before the number is looked at (so one solution
//! cannot probe several numbers). The invitation list is the real gate; the captcha and the
//! five attempts in a rolling 15 minutes only slow down guessing at it.

use std::sync::Arc;
use std::time::Duration;

use quire_kernel::{AccountId, Clock, InfraError, RateLimiter};
use serde_json::Value;
use time::OffsetDateTime;

use crate::captcha::{ACTIVATE, CaptchaKeys, CaptchaRefusal};
use crate::model::Account;
use crate::phone::{PhoneError, PhoneNumber};
use crate::ports::{AccountStore, Binding, CaptchaLedger, InvitationStore};

/// Activation attempts allowed per account in [`ATTEMPT_WINDOW`].
pub const ATTEMPTS: u32 = 5;
pub const ATTEMPT_WINDOW: Duration = Duration::from_secs(15 * 60);

/// The fields of an activation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationRequest {
    /// The ALTCHA payload: base64 JSON of the challenge and its solution.
    pub captcha: String,
    pub phone: String,
}

/// A body that could not be read into an [`ActivationRequest`]; the text names the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestProblem {
    NotJson(String),
    Fields(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActivationError {
    #[error("too many activation attempts; at most {ATTEMPTS} in 15 minutes")]
    RateLimited { retry_after_secs: u64 },
    #[error("{}", match .0 { RequestProblem::NotJson(m) | RequestProblem::Fields(m) => m })]
    InvalidBody(RequestProblem),
    #[error("this account is already activated")]
    AlreadyActivated,
    #[error(transparent)]
    CaptchaFailed(CaptchaRefusal),
    #[error(transparent)]
    InvalidPhone(PhoneError),
    #[error("this number is not on the invitation list, or is bound to another account")]
    NotEligible,
    #[error("no such account")]
    UnknownAccount,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Where an account stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivationState {
    pub account: Account,
}

impl ActivationState {
    #[must_use]
    pub fn activated_at(&self) -> Option<OffsetDateTime> {
        self.account.activated_at
    }
}

/// What activation runs on.
#[derive(Debug, Clone)]
pub struct ActivationPorts {
    pub accounts: Arc<dyn AccountStore>,
    pub invitations: Arc<dyn InvitationStore>,
    pub captchas: Arc<dyn CaptchaLedger>,
    pub limiter: Arc<dyn RateLimiter>,
    pub clock: Arc<dyn Clock>,
}

/// Activation and its captcha.
#[derive(Debug, Clone)]
pub struct ActivationService {
    ports: ActivationPorts,
    keys: CaptchaKeys,
}

impl ActivationService {
    #[must_use]
    pub fn new(ports: ActivationPorts, keys: CaptchaKeys) -> Self {
        Self { ports, keys }
    }

    /// A signed challenge for `account` to solve before activating (ten minutes to answer).
    #[must_use]
    pub fn challenge(&self, account: AccountId) -> Value {
        self.keys
            .challenge(account, ACTIVATE, self.ports.clock.now())
    }

    /// Where the account stands.
    ///
    /// # Errors
    /// `UnknownAccount`, `Infra`.
    pub async fn state(&self, account: AccountId) -> Result<ActivationState, ActivationError> {
        let account = self
            .ports
            .accounts
            .account_by_id(account)
            .await?
            .ok_or(ActivationError::UnknownAccount)?;
        Ok(ActivationState { account })
    }

    /// Activates `account` with a solved captcha and a number on the invitation list.
    /// `request` is the body as read: a body that could not be read is refused only after
    /// the attempt is counted.
    ///
    /// # Errors
    /// In this order: `RateLimited` (the sixth attempt in a rolling 15 minutes),
    /// `InvalidBody`, `AlreadyActivated`, `CaptchaFailed` (the solution is spent from here
    /// on, whatever follows), `InvalidPhone`, `NotEligible`. Nothing but the attempt and
    /// the spent solution is recorded on error.
    pub async fn activate(
        &self,
        account: AccountId,
        request: Result<ActivationRequest, RequestProblem>,
    ) -> Result<ActivationState, ActivationError> {
        let now = self.ports.clock.now();
        let allowed = self
            .ports
            .limiter
            .hit(
                "activate_account",
                &account.0.to_string(),
                ATTEMPT_WINDOW,
                ATTEMPTS,
                now,
            )
            .await?;
        if !allowed {
            // An upper bound: the oldest counted attempt leaves the window within it.
            return Err(ActivationError::RateLimited {
                retry_after_secs: ATTEMPT_WINDOW.as_secs(),
            });
        }
        let request = request.map_err(ActivationError::InvalidBody)?;
        let state = self.state(account).await?;
        if state.account.activated_at.is_some() {
            return Err(ActivationError::AlreadyActivated);
        }
        let solution = self
            .keys
            .check(&request.captcha, account, ACTIVATE, now)
            .map_err(ActivationError::CaptchaFailed)?;
        if !self
            .ports
            .captchas
            .spend_captcha(&solution.nonce_hash, solution.expires_at)
            .await?
        {
            return Err(ActivationError::CaptchaFailed(CaptchaRefusal::AlreadyUsed));
        }
        let number = PhoneNumber::parse(&request.phone).map_err(ActivationError::InvalidPhone)?;
        match self
            .ports
            .invitations
            .bind_and_activate(account, &number, now)
            .await?
        {
            Binding::Activated => self.state(account).await,
            Binding::NotEligible => Err(ActivationError::NotEligible),
            Binding::AlreadyActivated => Err(ActivationError::AlreadyActivated),
        }
    }

    /// Forgets spent captcha solutions whose challenges have expired (the janitor's work).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sweep(&self) -> Result<u64, InfraError> {
        self.ports
            .captchas
            .forget_captchas_before(self.ports.clock.now())
            .await
    }
}
