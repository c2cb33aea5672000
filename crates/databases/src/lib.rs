//! `quire-databases`: the database service's domain. A Quire database is a PostgreSQL
//! database of its own on an operator's cluster, with an owner role that runs the account's
//! SQL and an authenticator role that the data API's requests switch from (to `anon`,
//! `authenticated` or `service_role`, the shared roles Supabase's SQL names). This crate
//! holds the records' rules (slug, name, expiry, the `provisioning → ready → deleting`
//! states), the use cases (create all-or-nothing, list, get, delete, SQL as the owner, the
//! data API's switch, secret, keys and reload, the janitor's sweep) and the data API's keys
//! (HS256 JWTs under a per-database secret, as Supabase makes them).
//!
//! The data API's requests are use cases here too, so the gateway only extracts, calls and
//! maps: a REST request (`service::rest`: the database, the keys, the instance, the plan
//! with one schema reload, the run, the answer or PostgreSQL's error in PostgREST's words,
//! planned and answered by the pure `quire-dataapi`), and the auth subset's (`auth`): the
//! database's end users, GoTrue's sign-up, grants and sessions, over the tenant's `auth`
//! schema ([`ports::TenantUsers`]).
//!
//! Pure domain: it depends on `quire-kernel`, `quire-projects` (the addressing rules),
//! `quire-accounts` (the sealing key that keeps role passwords and JWT secrets encrypted at
//! rest), `quire-dataapi` and small pure crates (jsonwebtoken, serde_json, rand). Its
//! ports: [`ports::DatabaseRecords`] (the metadata), [`ports::Cluster`] (the PostgreSQL
//! cluster), [`runtime::DataApiRuntime`] (this replica's data API instances, which hear
//! what [`ports::DataApiSignals`] says), [`ports::TenantBackends`] (ending a tenant's
//! backend from outside, for the data API), [`ports::QuireKeys`] (who a Quire key
//! presented to the data API is) and [`ports::EndUserMail`] (end users' confirmation,
//! recovery and sign-in emails). Their fakes are in `quire-testkit`.

pub mod auth;
pub mod keys;
pub mod model;
pub mod ports;
pub mod runtime;
pub mod service;
pub mod settings;

pub use auth::{
    AUTH_SCHEMA_SQL, Admin, AdminUser, AuthError, AuthSession, AuthSettings, Bearer, EndUser,
    GeneratedLink, LinkRequest, NewEndUser, OtpVerification, SignOutScope, SignedUp, TenantAuth,
    UserChange, UsersPage, plausible_link_token,
};
pub use keys::{ApiKeys, KeyRole, TokenClaims, TokenError, sign_token, verify_token};
pub use model::{Database, DatabaseStatus, TenantAccess, TenantNames};
pub use ports::{
    BACKEND_IDENTITY_SQL, Cluster, ClusterError, CodeTry, ConfirmationTry, DataApiSignals,
    DatabaseRecords, EndUserMail, EndUserMailError, InsertDatabaseError, MailSlot, OneTimeHashes,
    OpenTable, QuireKeys, Rotation, SqlOutcome, SqlRefusal, TenantBackend, TenantBackends,
    TenantUsers, UserWriteError,
};
pub use runtime::{
    DataApiInstance, DataApiRuntime, GatewayTarget, InstanceError, Missing, NoRuntime, PgRefusal,
    Respond, RunError,
};
pub use service::{
    Acting, Credentials, DataApiSecret, DatabaseConfig, DatabaseError, DatabasePorts,
    DatabaseService, DatabaseView, GatewayError, NewDatabase, Reach, Swept,
};
pub use settings::{DataApiSettings, SettingsPatch};
