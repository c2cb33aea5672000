//! The account.

use quire_kernel::{AccountId, Email, Handle, ProjectId};
use time::OffsetDateTime;

use crate::sealing::SealedSecret;

/// A person's (or an organisation's) account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: AccountId,
    pub email: Email,
    pub handle: Handle,
    /// An argon2id PHC string; `None` until a password is set.
    pub password_hash: Option<String>,
    /// When the account proved it holds its email address (a link from a message, or an
    /// operator or the first-run setup vouching for it); an account signs in only after.
    pub email_verified_at: Option<OffsetDateTime>,
    pub activated_at: Option<OffsetDateTime>,
    pub is_platform_admin: bool,
    pub default_project_id: ProjectId,
    pub created_at: OffsetDateTime,
    /// The enrolled second factor's secret, sealed under the server's key, if any.
    pub totp_secret: Option<SealedSecret>,
}
