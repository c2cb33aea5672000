//! `quire-accounts`: accounts, their activation state and platform-admin flag, and the
//! bootstrap that creates an account together with its default project and first master key,
//! and dashboard sessions with throttled password sign-in and a TOTP second factor.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` and `quire-keys` (for the
//! project and key it creates alongside an account), plus `totp-rs` for the RFC 6238
//! arithmetic. Password hashing is `quire_kernel::password`.

pub mod mfa;
pub mod model;
pub mod ports;
pub mod service;
pub mod session;

pub use mfa::TotpSecret;
pub use model::Account;
pub use ports::{AccountStore, CreateAccountStoreError};
pub use service::{
    AccountService, CreateAccount, CreateAccountError, CreatedAccount, SetPasswordError,
};
pub use session::{
    SecondFactorError, Session, SessionCookie, SessionService, SessionStore, SessionToken,
    SignInError, SignedIn,
};
