//! A database's end users, sessions and refresh tokens, in the tenant's own `auth` schema.

use std::fmt::Debug;
use std::time::Duration;

use async_trait::async_trait;
use quire_kernel::InfraError;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::auth::{AuthSettings, EndUser, NewEndUser, SignOutScope, UserChange};

/// Why a user could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum UserWriteError {
    /// Another user of the database has that email (any case), and it is confirmed (a
    /// sign-up), or is any other user (a change of address): checked by a unique index, so
    /// racing sign-ups of one address make one user.
    #[error("email taken")]
    EmailTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// What presenting a refresh token did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rotation {
    /// The token was current: it is revoked and its successor is the session's current
    /// token. Or it was just rotated, within the grace, and its successor is still current:
    /// nothing changed, and the successor is the answer again.
    Rotated { user: EndUser, session: Uuid },
    /// No such token, or its session ended; or a token just rotated whose current successor
    /// is not the one named (made under another secret, or before successors were derived):
    /// it cannot be handed out again, and the session goes on.
    Unknown,
    /// A token already rotated was presented again: its whole session (the family of
    /// tokens) is ended.
    Reused,
}

/// A try at a confirmation link, counted: the password hash of the sign-up it confirms, and
/// how many tries are left after this one.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfirmationTry {
    pub password_hash: String,
    pub tries_left: u32,
}

impl Debug for ConfirmationTry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmationTry")
            .field("tries_left", &self.tries_left)
            .finish_non_exhaustive()
    }
}

/// A one-time link and code of a user's (password recovery, magic link, invitation), as
/// stored: the SHA-256 of the link's token, and the code's MAC under the database's secret.
#[derive(Clone, PartialEq, Eq)]
pub struct OneTimeHashes {
    pub token_hash: String,
    pub code_hash: String,
}

impl Debug for OneTimeHashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneTimeHashes")
    }
}

/// What presenting a one-time code did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeTry {
    /// The code was the user's: it is spent (the link with it), the address is confirmed,
    /// and the user as they now are.
    Verified(EndUser),
    /// Not the code: the try is counted, `tries_left` more are allowed (none: the code is
    /// dead).
    Wrong { tries_left: u32 },
    /// No code awaits its use for that address (none sent, spent, lapsed, or its tries used
    /// up).
    Unknown,
}

/// A database's end users, sessions and refresh tokens (the tenant's `auth` schema), as
/// the data API's instance reaches them.
#[async_trait]
pub trait TenantUsers: Send + Sync + Debug {
    /// The database's auth settings (`auth.settings`, which the owner may change with SQL).
    ///
    /// # Errors
    /// Storage failures.
    async fn settings(&self) -> Result<AuthSettings, InfraError>;

    /// Stores a new user, or replaces the unconfirmed user of the same address (any case):
    /// its id stays, and everything else is the new sign-up's (password, metadata,
    /// confirmation and its link with no tries made, creation time), its sessions ended, so
    /// the first sign-up's link is dead, as is any code or link mailed to it. One statement, so racing sign-ups of one address
    /// leave one user.
    ///
    /// # Errors
    /// `EmailTaken` when a confirmed user has the address; storage failures.
    async fn sign_up_user(&self, user: &NewEndUser) -> Result<EndUser, UserWriteError>;

    /// The user with `email` (compared without case) and their password hash.
    ///
    /// # Errors
    /// Storage failures.
    async fn user_by_email(&self, email: &str) -> Result<Option<(EndUser, String)>, InfraError>;

    /// # Errors
    /// Storage failures.
    async fn user(&self, id: Uuid) -> Result<Option<EndUser>, InfraError>;

    /// Whether a confirmation token that hashes to `token_hash`, made less than `within`
    /// before `now`, awaits its use with fewer than `tries` tries made at it (the page of
    /// the link; nothing changes).
    ///
    /// # Errors
    /// Storage failures.
    async fn confirmation_pending(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<bool, InfraError>;

    /// Counts a try at the confirmation whose token hashes to `token_hash`, if it awaits
    /// its use as [`Self::confirmation_pending`] says, in one statement (so racing tries
    /// are counted each, and never more than `tries` are let through); returns the password
    /// hash of its sign-up, to check the try's password against, and the tries left.
    ///
    /// # Errors
    /// Storage failures.
    async fn try_confirmation(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<ConfirmationTry>, InfraError>;

    /// Confirms the address of the unconfirmed user whose confirmation token hashes to
    /// `token_hash`, if the token was made less than `within` ago and the user's password
    /// hash is still `password_hash` (the one a try was checked against); the token is
    /// spent.
    ///
    /// # Errors
    /// Storage failures.
    async fn confirm_email(
        &self,
        token_hash: &str,
        password_hash: &str,
        now: OffsetDateTime,
        within: Duration,
    ) -> Result<Option<EndUser>, InfraError>;

    /// Stores a new user as the owner's key makes one (the admin API): refused when any
    /// user has the address, confirmed or not. `app_metadata` is merged over the default
    /// (`provider`, `providers`).
    ///
    /// # Errors
    /// `EmailTaken`; storage failures.
    async fn insert_user(
        &self,
        user: &NewEndUser,
        app_metadata: Option<&Map<String, Value>>,
    ) -> Result<EndUser, UserWriteError>;

    /// Gives user `user` a new one-time link and code, made at `now`, with no tries made:
    /// the ones before no longer work. `false` when there is no such user.
    ///
    /// # Errors
    /// Storage failures.
    async fn set_one_time(
        &self,
        user: Uuid,
        hashes: &OneTimeHashes,
        now: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Presents a one-time code for the user with `email` (without case): if one made less
    /// than `within` before `now` awaits its use with fewer than `tries` tries made, the try
    /// is counted, in one statement (racing tries are each counted), and when its MAC is
    /// `code_hash` the code and its link are spent and the address confirmed. A user whose
    /// address this confirms keeps no password (nor sign-up link): one chosen before can be
    /// anyone's who signed the address up.
    ///
    /// # Errors
    /// Storage failures.
    async fn try_code(
        &self,
        email: &str,
        code_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<CodeTry, InfraError>;

    /// Spends the one-time link whose token hashes to `token_hash`, made less than `within`
    /// before `now` and with its code's tries not used up, as a right code is spent; the
    /// user as they now are.
    ///
    /// # Errors
    /// Storage failures.
    async fn spend_link(
        &self,
        token_hash: &str,
        now: OffsetDateTime,
        within: Duration,
        tries: u32,
    ) -> Result<Option<EndUser>, InfraError>;

    /// Gives the unconfirmed user of `email` (without case) who signed up with a password a
    /// new confirmation link (its token hashing to `token_hash`, made at `now`, no tries
    /// made); the link before no longer works. `None` when there is no such user.
    ///
    /// # Errors
    /// Storage failures.
    async fn renew_confirmation(
        &self,
        email: &str,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, InfraError>;

    /// Applies `change` to user `id`; `None` when there is no such user. A new password
    /// spends the user's links and codes.
    ///
    /// # Errors
    /// `EmailTaken` when the new email is another user's; storage failures.
    async fn update_user(
        &self,
        id: Uuid,
        change: &UserChange,
        now: OffsetDateTime,
    ) -> Result<Option<EndUser>, UserWriteError>;

    /// Starts session `session` of `user` with its first refresh token (stored as
    /// `token_hash`) and records the sign-in, in one transaction.
    ///
    /// # Errors
    /// Storage failures.
    async fn start_session(
        &self,
        user: Uuid,
        session: Uuid,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Result<EndUser, InfraError>;

    /// Rotates the refresh token whose hash is `presented` to its successor, whose hash is
    /// `successor` (the successor is derived from the token, so every presentation of one
    /// token names the same), with the token and its session locked, so presentations of
    /// one session take turns. A current token is revoked and its successor stored. A token
    /// revoked less than `grace` ago whose successor is still current (a lost answer, tabs
    /// refreshing at once) changes nothing and is `Rotated` again, however often; any other
    /// revoked one ends its session and is `Reused`.
    ///
    /// # Errors
    /// Storage failures.
    async fn rotate(
        &self,
        presented: &str,
        successor: &str,
        now: OffsetDateTime,
        grace: Duration,
    ) -> Result<Rotation, InfraError>;

    /// Whether session `session` is still open.
    ///
    /// # Errors
    /// Storage failures.
    async fn session_open(&self, session: Uuid) -> Result<bool, InfraError>;

    /// Ends sessions of `user`: `session` alone, every one, or every other one.
    ///
    /// # Errors
    /// Storage failures.
    async fn end_sessions(
        &self,
        user: Uuid,
        session: Uuid,
        scope: SignOutScope,
    ) -> Result<(), InfraError>;

    /// The users, newest first (then by id), `offset` of them skipped and at most `limit`,
    /// and how many there are in all.
    ///
    /// # Errors
    /// Storage failures.
    async fn list_users(&self, offset: u64, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError>;

    /// Deletes user `id` with their sessions; whether there was one.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_user(&self, id: Uuid) -> Result<bool, InfraError>;
}
