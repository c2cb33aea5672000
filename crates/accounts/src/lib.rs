//! `quire-accounts`: accounts, their activation state and platform-admin flag, and the
//! bootstrap that creates an account together with its default project and first master key;
//! dashboard sessions with throttled password sign-in and a TOTP second factor (its secret
//! sealed under the server's key, with one-time recovery codes); and activation by a
//! captcha and a phone number on the operator's invitation list.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` and `quire-keys` (for the
//! project and key it creates alongside an account), plus pure computation: `totp-rs` for
//! the RFC 6238 arithmetic, `aws-lc-rs` for the AES-256-GCM that seals the TOTP secret,
//! `altcha` for the captcha's proof of work and `phonenumber` for libphonenumber's
//! metadata. Password hashing is `quire_kernel::password`, run on the kernel's `Offload`
//! port so that argon2id never holds an async worker.

pub mod activation;
pub mod captcha;
pub mod invitations;
pub mod mfa;
pub mod model;
mod password_check;
pub mod phone;
pub mod ports;
pub mod recovery;
pub mod sealing;
mod second_factor;
pub mod service;
pub mod session;

pub use activation::{
    ActivationError, ActivationPorts, ActivationRequest, ActivationService, ActivationState,
    RequestProblem,
};
pub use captcha::{CaptchaCost, CaptchaKeys, CaptchaRefusal};
pub use invitations::{InvitationList, InviteError};
pub use phone::{PhoneError, PhoneNumber, Region};

pub use mfa::TotpSecret;
pub use model::Account;
pub use ports::{
    AccountStore, Binding, CaptchaLedger, CreateAccountStoreError, Invitation, InvitationStore,
};
pub use recovery::{RECOVERY_CODES, RecoveryCodes, recovery_code_hash};
pub use sealing::{SealedSecret, SealingKey, UnsealError, UnsealValueError};
pub use service::{
    AccountService, AdminAccountsError, CreateAccount, CreateAccountError, CreatedAccount,
    SetActivatedError, SetPasswordError, new_account,
};
pub use session::{
    SecondFactorError, Session, SessionCookie, SessionService, SessionStore, SessionToken,
    SignInError, SignedIn,
};
