//! `quire-signup`: the account flows that start without a session and go through one-time
//! links: the first-run setup (a link printed in the server's log creates the first,
//! platform-admin account), sign-up with email verification, and password reset; and the
//! dashboard's password change, under the same password rules.
//!
//! A link is 32 random bytes, stored as its SHA-256 with a purpose, an expiry and a used
//! mark; following one is a GET that shows a confirm page and a POST that spends it (mail
//! scanners fetch links). Answers do not tell whether an address has an account: a sign-up
//! with a known address mails its owner instead, and messages leave off the request path.
//!
//! Pure domain: it depends on `quire-kernel`, `quire-accounts` (the account and its store),
//! `quire-projects` (the default project) and `quire-mail` (the message and the dispatch
//! port). Its own port: [`ports::SignupStore`].

pub mod messages;
pub mod password_change;
pub mod password_rules;
pub mod ports;
pub mod reset;
pub mod setup;
pub mod signup;
pub mod tokens;

pub use messages::Letterhead;
pub use password_change::{PasswordChange, PasswordChangeError};
pub use password_rules::PasswordRule;
pub use ports::{FirstAccount, SignupPorts, SignupStore};
pub use reset::{PasswordReset, ResetError};
pub use setup::{FirstRun, SetupError};
pub use signup::{ActivationMode, NewAccount, SignUp, SignUpError, SignUpMode, VerifyError};
pub use tokens::{AccountToken, LinkPurpose, LinkToken};

/// The dashboard paths the messages link to.
pub const SETUP_PATH: &str = "/setup";
pub const VERIFY_PATH: &str = "/account/verify";
pub const RESET_PATH: &str = "/account/reset";
pub const NEW_PASSWORD_PATH: &str = "/account/reset/new";

/// The key a rolling limit counts an email address under: its digest, so the limiter's
/// table holds no addresses.
fn address_key(email: &quire_kernel::Email) -> String {
    quire_kernel::secret::sha256_hex(email.as_str().as_bytes())
}
