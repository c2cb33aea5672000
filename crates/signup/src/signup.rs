//! Sign-up and email verification.
//!
//! A sign-up answers the same whether or not its address has an account: a new address
//! gets an account (not verified, so it cannot sign in yet) and a link to verify it; a
//! known address gets a notice to its owner and nothing else. Both paths hash the password
//! and write once, and the message leaves off the request path, so neither the answer nor
//! its timing tells them apart. Handles are public, so "that handle is taken" may show.

use std::time::Duration;

use quire_accounts::{Account, CreateAccountStoreError, new_account};
use quire_kernel::{Email, Handle, InfraError};
use quire_mail::Recipient;

use crate::address_key;
use crate::messages::Letterhead;
use crate::password_rules::{self, PasswordRule};
use crate::ports::SignupPorts;
use crate::tokens::{AccountToken, LinkPurpose, LinkToken};

/// Sign-ups allowed per address, and per client address, in [`LIMIT_WINDOW`].
pub const SIGN_UPS_PER_ADDRESS: u32 = 3;
pub const SIGN_UPS_PER_CLIENT: u32 = 10;
/// Verification messages sent again (at sign-in) per account in [`LIMIT_WINDOW`].
pub const RESENDS_PER_ACCOUNT: u32 = 3;
pub const LIMIT_WINDOW: Duration = Duration::from_secs(60 * 60);

/// Whether people may create accounts themselves (`QUIRE_SIGNUP`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SignUpMode {
    /// Only operators create accounts (the default).
    #[default]
    Closed,
    Open,
}

/// What a signed-up account must do before its keys work (`QUIRE_ACTIVATION`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ActivationMode {
    /// Activate with a captcha and a phone number on the invitation list (the default).
    #[default]
    Invitation,
    /// Nothing: an account is active from its sign-up (it still verifies its address
    /// before it can sign in).
    None,
}

/// The sign-up form (also the first-run setup's).
#[derive(Debug, Clone, Default)]
pub struct NewAccount {
    pub email: String,
    pub handle: String,
    pub password: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignUpError {
    #[error("sign-up is closed on this server; ask its operator for an account")]
    Closed,
    #[error("{0}")]
    InvalidEmail(String),
    #[error("{0}")]
    InvalidHandle(String),
    #[error(transparent)]
    Password(#[from] PasswordRule),
    #[error("that handle is taken; choose another")]
    HandleTaken,
    #[error("too many sign-ups from here or for this address; try again in an hour")]
    RateLimited { retry_after_secs: u64 },
    #[error(transparent)]
    Infra(#[from] InfraError),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "this link is not valid: it was used already, or it expired. Sign in to get a new one."
    )]
    LinkRefused,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// Sign-up and email verification.
#[derive(Debug, Clone)]
pub struct SignUp {
    ports: SignupPorts,
    letterhead: Letterhead,
    mode: SignUpMode,
    activation: ActivationMode,
}

impl SignUp {
    #[must_use]
    pub fn new(
        ports: SignupPorts,
        letterhead: Letterhead,
        mode: SignUpMode,
        activation: ActivationMode,
    ) -> Self {
        Self {
            ports,
            letterhead,
            mode,
            activation,
        }
    }

    #[must_use]
    pub fn is_open(&self) -> bool {
        self.mode == SignUpMode::Open
    }

    /// Signs up from `client`: `Ok` means "a message is on its way to the address" (a
    /// verification link for a new address, a notice to the owner of a known one).
    ///
    /// # Errors
    /// In this order: `Closed`; `InvalidEmail`, `InvalidHandle`, `Password` (nothing is
    /// counted); `RateLimited` past [`SIGN_UPS_PER_CLIENT`] from the client or
    /// [`SIGN_UPS_PER_ADDRESS`] for the address in an hour; `HandleTaken`. Nothing is
    /// stored on error.
    pub async fn sign_up(&self, input: &NewAccount, client: &str) -> Result<(), SignUpError> {
        if !self.is_open() {
            return Err(SignUpError::Closed);
        }
        let email = Email::parse(&input.email).map_err(|e| SignUpError::InvalidEmail(e.0))?;
        // The relay's rules are stricter (ASCII, one plain address): check them now, so
        // every stored account can be written to.
        Recipient::parse(email.as_str()).map_err(SignUpError::InvalidEmail)?;
        let handle = Handle::parse(&input.handle).map_err(|e| SignUpError::InvalidHandle(e.0))?;
        password_rules::check(&input.password, handle.as_str(), email.as_str())?;
        let now = self.ports.clock.now();
        let by_client = self
            .ports
            .limiter
            .hit(
                "sign_up_client",
                client,
                LIMIT_WINDOW,
                SIGN_UPS_PER_CLIENT,
                now,
            )
            .await?;
        let by_address = self
            .ports
            .limiter
            .hit(
                "sign_up_address",
                &address_key(&email),
                LIMIT_WINDOW,
                SIGN_UPS_PER_ADDRESS,
                now,
            )
            .await?;
        if !(by_client && by_address) {
            return Err(SignUpError::RateLimited {
                retry_after_secs: LIMIT_WINDOW.as_secs(),
            });
        }
        if self
            .ports
            .accounts
            .account_by_login(handle.as_str())
            .await?
            .is_some()
        {
            return Err(SignUpError::HandleTaken);
        }
        let password_hash =
            password_rules::hash(self.ports.offload.as_ref(), &input.password).await?;
        let (mut account, project) = new_account(email, handle, Some(password_hash), now);
        if self.activation == ActivationMode::None {
            account.activated_at = Some(now);
        }
        let (token, verification) =
            AccountToken::issue(LinkPurpose::VerifyEmail, Some(account.id), now);
        match self
            .ports
            .store
            .sign_up(&account, &project, &verification)
            .await
        {
            Ok(()) => self.send(self.letterhead.verify_email(&account, &token)),
            Err(CreateAccountStoreError::EmailTaken) => {
                let owner = self
                    .ports
                    .accounts
                    .account_by_login(account.email.as_str())
                    .await?;
                if let Some(owner) = owner {
                    self.send(self.letterhead.already_registered(&owner));
                }
            }
            Err(CreateAccountStoreError::HandleTaken) => return Err(SignUpError::HandleTaken),
            Err(CreateAccountStoreError::Infra(e)) => return Err(e.into()),
        }
        Ok(())
    }

    /// Sends a new verification link to an account that signed in with the right password
    /// before verifying (the older link stops working). Returns whether one was sent: at
    /// most [`RESENDS_PER_ACCOUNT`] an hour.
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn resend_verification(&self, account: &Account) -> Result<bool, InfraError> {
        if account.email_verified_at.is_some() {
            return Ok(false);
        }
        let now = self.ports.clock.now();
        if !self
            .ports
            .limiter
            .hit(
                "verify_resend",
                &account.id.0.to_string(),
                LIMIT_WINDOW,
                RESENDS_PER_ACCOUNT,
                now,
            )
            .await?
        {
            return Ok(false);
        }
        let (token, stored) = AccountToken::issue(LinkPurpose::VerifyEmail, Some(account.id), now);
        self.ports.store.issue_link(&stored).await?;
        self.send(self.letterhead.verify_email(account, &token));
        Ok(true)
    }

    /// Whether `token` is a live verification link (the confirm page says so before the
    /// person presses the button).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn verification_is_live(&self, token: &str) -> Result<bool, InfraError> {
        let hash = LinkToken::received(token).hash();
        Ok(self
            .ports
            .store
            .live_link(&hash, self.ports.clock.now())
            .await?
            .is_some_and(|t| t.purpose == LinkPurpose::VerifyEmail))
    }

    /// Verifies the address the link `token` was sent to. No session is created: the
    /// person signs in next, with their password.
    ///
    /// # Errors
    /// `LinkRefused` for an unknown, used or expired link; nothing changes on error.
    pub async fn verify_email(&self, token: &str) -> Result<(), VerifyError> {
        let hash = LinkToken::received(token).hash();
        match self
            .ports
            .store
            .verify_email(&hash, self.ports.clock.now())
            .await?
        {
            Some(_) => Ok(()),
            None => Err(VerifyError::LinkRefused),
        }
    }

    /// Forgets one-time links of every purpose that expired (the janitor's work).
    ///
    /// # Errors
    /// [`InfraError`] on storage failure.
    pub async fn sweep(&self) -> Result<u64, InfraError> {
        self.ports
            .store
            .forget_links_before(self.ports.clock.now())
            .await
    }

    fn send(&self, mail: Option<quire_mail::OutboundMail>) {
        if let Some(mail) = mail {
            self.ports.mail.dispatch(mail);
        }
    }
}
