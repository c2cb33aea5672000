//! What the database use cases need from the outside: the records, the cluster, and the
//! running data API instances.

use std::collections::HashMap;
use std::fmt::Debug;

use async_trait::async_trait;
use quire_accounts::SealedSecret;
use quire_kernel::{AccountId, DatabaseId, InfraError, ProjectId};
use serde_json::Value;
use time::OffsetDateTime;

use std::time::Duration;

use uuid::Uuid;

use crate::auth::{AuthSettings, EndUser, NewEndUser, SignOutScope, UserChange};
use crate::model::{Database, TenantAccess, TenantNames};

#[derive(Debug, thiserror::Error)]
pub enum InsertDatabaseError {
    /// A database of any account, in any state, has that slug.
    #[error("slug taken")]
    SlugTaken,
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The database records (Quire's metadata, on either of its databases).
#[async_trait]
pub trait DatabaseRecords: Send + Sync + Debug {
    /// Stores `database` as given (status `provisioning`, with its lease).
    ///
    /// # Errors
    /// `SlugTaken` when any record holds the slug (checked by the write itself, so two
    /// racing creates of one slug make one database); storage failures.
    async fn insert_database(&self, database: &Database) -> Result<(), InsertDatabaseError>;

    /// Marks a provisioning record ready; `false` when it is not provisioning any more (the
    /// janitor took it as dead).
    ///
    /// # Errors
    /// Storage failures.
    async fn mark_ready(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError>;

    /// A record in any state.
    ///
    /// # Errors
    /// Storage failures.
    async fn database(&self, id: DatabaseId) -> Result<Option<Database>, InfraError>;

    /// A record in any state, by slug.
    ///
    /// # Errors
    /// Storage failures.
    async fn database_by_slug(&self, slug: &str) -> Result<Option<Database>, InfraError>;

    /// The ready databases of a project, newest first.
    ///
    /// # Errors
    /// Storage failures.
    async fn project_databases(&self, project: ProjectId) -> Result<Vec<Database>, InfraError>;

    /// Switches a ready database's data API; a `jwt_secret` is stored with it (the first
    /// enable), `None` keeps the stored one. `false` when no ready record has that id.
    ///
    /// # Errors
    /// Storage failures.
    async fn set_data_api(
        &self,
        id: DatabaseId,
        enabled: bool,
        jwt_secret: Option<&SealedSecret>,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Replaces a ready database's JWT secret `from` with `to`, whether its data API is on
    /// or off. `false` when no ready record has that id and that secret: never enabled,
    /// gone, or rotated by another request meanwhile (compared, so two racing rotations
    /// cannot both believe their secret is the one kept).
    ///
    /// # Errors
    /// Storage failures.
    async fn rotate_jwt_secret(
        &self,
        id: DatabaseId,
        from: &SealedSecret,
        to: &SealedSecret,
        at: OffsetDateTime,
    ) -> Result<bool, InfraError>;

    /// Marks a ready record `deleting`; `false` when it is not ready.
    ///
    /// # Errors
    /// Storage failures.
    async fn mark_deleting(&self, id: DatabaseId, at: OffsetDateTime) -> Result<bool, InfraError>;

    /// Removes the record; a missing one is no error.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_database(&self, id: DatabaseId) -> Result<(), InfraError>;

    /// The provisioning and ready records of `account` (of every account when `None`),
    /// oldest first: what the account's quota of databases counts (a record being deleted
    /// no longer does).
    ///
    /// # Errors
    /// Storage failures.
    async fn live_databases(&self, account: Option<AccountId>)
    -> Result<Vec<Database>, InfraError>;

    /// What the janitor must finish at `now`: provisioning records whose lease lapsed,
    /// deleting records, and ready records whose `expires_at` passed.
    ///
    /// # Errors
    /// Storage failures.
    async fn janitor_due(&self, now: OffsetDateTime) -> Result<Vec<Database>, InfraError>;
}

/// The result of the last statement of some SQL.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlOutcome {
    pub columns: Vec<String>,
    /// At most the limit asked for; values as JSON (numbers, booleans and JSON as such,
    /// everything else as PostgreSQL's text).
    pub rows: Vec<Vec<Value>>,
    /// Rows the statement returned or touched (a `SELECT` of more rows than were kept
    /// counts them all).
    pub row_count: u64,
}

/// PostgreSQL refused the SQL: its own words, never the SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlRefusal {
    pub message: String,
    pub sqlstate: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the SQL, when PostgreSQL gives one.
    pub position: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("PostgreSQL refused the SQL: {} ({})", .0.message, .0.sqlstate)]
    Refused(SqlRefusal),
    /// The database takes no more connections now (its owner role's connection limit); the
    /// message says so in the owner's terms.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// The PostgreSQL cluster the databases live on. Each step of a creation is its own call,
/// so the use case can undo exactly what was done; every undo is [`Cluster::drop_tenant`].
#[async_trait]
pub trait Cluster: Send + Sync + Debug {
    /// Creates the owner role and the authenticator role (`LOGIN` with their passwords; the
    /// authenticator `NOINHERIT`, a member of `anon`, `authenticated` and `service_role`,
    /// with a connection limit).
    ///
    /// # Errors
    /// The cluster failed or refused (a role of that name exists).
    async fn create_roles(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// Creates the database, owned by the owner role, `CONNECT` for its two roles alone.
    ///
    /// # Errors
    /// The cluster failed or refused.
    async fn create_database(&self, names: &TenantNames) -> Result<(), InfraError>;

    /// Inside the new database: what the shared roles may use (Supabase's default grants),
    /// the trigger that announces DDL to the data API, and, as the owner, the `auth` schema
    /// ([`crate::auth::AUTH_SCHEMA_SQL`]), so tutorial SQL naming `auth.users` works at once.
    ///
    /// # Errors
    /// The cluster failed or refused.
    async fn prepare_database(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// Drops the database (closing its connections) and both roles. What is missing is no
    /// error, so it undoes any prefix of a creation and can be retried.
    ///
    /// # Errors
    /// The cluster failed.
    async fn drop_tenant(&self, names: &TenantNames) -> Result<(), InfraError>;

    /// Runs `sql` (one statement or several) connected as the owner role, and returns the
    /// last statement's result with at most `max_rows` rows.
    ///
    /// # Errors
    /// `Refused` with PostgreSQL's error, or before anything runs for what cannot run here
    /// (`COPY` to or from the client); `Busy` when the database takes no more connections;
    /// `Infra` when the cluster failed.
    async fn run_sql(
        &self,
        tenant: &TenantAccess,
        sql: &str,
        max_rows: usize,
    ) -> Result<SqlOutcome, ClusterError>;

    /// Ends the owners' SQL sessions that have run longer than any request can still be
    /// waiting for (what a replica that stopped mid-query left), and says how many. Safe
    /// with several replicas: it ends only what is already over. A cluster that keeps no
    /// sessions of its own has nothing to end, hence the default.
    ///
    /// # Errors
    /// The cluster failed.
    async fn end_abandoned_sessions(&self) -> Result<u64, InfraError> {
        Ok(0)
    }

    /// Tells every data API instance serving the database to load its schema again
    /// (a `NOTIFY` in the database, which every replica's instance listens for).
    ///
    /// # Errors
    /// The cluster failed.
    async fn announce_reload(&self, tenant: &TenantAccess) -> Result<(), InfraError>;

    /// The size in bytes of each of these databases that exists, by database name.
    ///
    /// # Errors
    /// The cluster failed.
    async fn sizes(&self, names: &[TenantNames]) -> Result<HashMap<String, u64>, InfraError>;
}

/// What this replica's running data API instances must hear at once (other replicas
/// read the records).
pub trait DataApiSignals: Send + Sync + Debug {
    /// The database's data API was turned off, or the database is going, or its secret
    /// changed: stop serving it, and refuse a target read before this call
    /// ([`DataApiSignals::stops`]).
    fn stop(&self, id: DatabaseId);

    /// How many stops this replica has heard so far, read before a database's record is:
    /// a target whose record was read before its database's last stop is stale (it may
    /// hold the secret the stop was for). A runtime that keeps no instances has none.
    fn stops(&self) -> u64 {
        0
    }
}

/// Who a backend is, read by the session itself at connect (one row: the pid, and
/// `backend_start` in microseconds since the epoch), so that a pid the system gave to a newer
/// backend since is never taken for it. Schema-qualified throughout: a tenant may put
/// objects of its own ahead of `pg_catalog` in the `search_path` of its database.
pub const BACKEND_IDENTITY_SQL: &str = "SELECT pg_catalog.pg_backend_pid(), \
     (pg_catalog.date_part('epoch', backend_start) OPERATOR(pg_catalog.*) 1000000)\
     ::pg_catalog.int8 FROM pg_catalog.pg_stat_activity \
     WHERE pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()";

/// A backend of one of a tenant's roles, as [`BACKEND_IDENTITY_SQL`] named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantBackend {
    pub role: String,
    pub pid: i32,
    /// `backend_start`, in microseconds since the epoch.
    pub started: i64,
}

/// Ends a tenant's backend from outside, which no exception handler of the tenant's
/// catches: what the data API asks of the cluster's adapter for a connection it let go of
/// before the server had answered (a request dropped, or past its deadline).
#[async_trait]
pub trait TenantBackends: Send + Sync + Debug {
    /// Terminates `backend` if it is still that session of that role, and waits a little
    /// for it to be gone; whether there was one to end.
    ///
    /// # Errors
    /// The cluster failed.
    async fn terminate(&self, backend: &TenantBackend) -> Result<bool, InfraError>;
}

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
    /// the first sign-up's link is dead. One statement, so racing sign-ups of one address
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

    /// Applies `change` to user `id`; `None` when there is no such user.
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

    /// Every user, newest first, at most `limit`, and how many there are.
    ///
    /// # Errors
    /// Storage failures.
    async fn list_users(&self, limit: u32) -> Result<(Vec<EndUser>, u64), InfraError>;

    /// Deletes user `id` with their sessions; whether there was one.
    ///
    /// # Errors
    /// Storage failures.
    async fn delete_user(&self, id: Uuid) -> Result<bool, InfraError>;
}

/// Why a message to an end user was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndUserMailError {
    /// The account has used its daily quota.
    #[error("the account's email quota is used up")]
    QuotaExceeded,
    /// The message could not be made or its slot held; the text says why (no address, no
    /// message text).
    #[error("the message was not sent: {0}")]
    Failed(String),
}

/// A slot held in an account's daily mail quota for one message, with what the message
/// needs of the account (its address and handle, for Reply-To).
#[derive(Clone, PartialEq, Eq)]
pub struct MailSlot {
    pub mail_id: Uuid,
    pub reply_to: String,
    pub reply_to_name: String,
}

impl Debug for MailSlot {
    /// Without the account's address, which stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSlot")
            .field("mail_id", &self.mail_id)
            .finish_non_exhaustive()
    }
}

/// Email to a database's end users, sent on behalf of the database's account and counted
/// in its quota: a slot is held first, in the request, and the message then leaves off the
/// request path, so that a request that sends and one that does not take the same time.
#[async_trait]
pub trait EndUserMail: Send + Sync + Debug {
    /// Holds a slot for one message in `account`'s daily quota. It stays taken whether or
    /// not a message is sent in it, until [`Self::release`].
    ///
    /// # Errors
    /// `QuotaExceeded`; `Failed` when the quota could not be read (nothing held).
    async fn reserve(&self, account: AccountId) -> Result<MailSlot, EndUserMailError>;

    /// Gives back a slot no message will use.
    ///
    /// # Errors
    /// Storage failures (the slot stays taken: one send counted too many).
    async fn release(&self, slot: &MailSlot) -> Result<(), InfraError>;

    /// Queues `text` under `subject` to `to` in `slot`, from the operator's address with
    /// the account's as Reply-To, and returns at once: it is sent off the request path, and
    /// a relay's failure is logged with the mail id and not retried (its slot stays taken).
    ///
    /// # Errors
    /// `Failed` when the message cannot be made (an address or text the mailer refuses);
    /// nothing is queued.
    fn send(
        &self,
        slot: MailSlot,
        to: &str,
        subject: &str,
        text: &str,
    ) -> Result<(), EndUserMailError>;
}
