//! `quire-pgcluster`: the adapter of `quire-databases`' `Cluster` port on one PostgreSQL
//! cluster, through tokio-postgres (no libpq). [`PgCluster`] provisions each database as
//! its own PostgreSQL database with two login roles (the owner, and the `NOINHERIT`
//! authenticator the data API connects as), on the cluster-wide `anon`, `authenticated`
//! and `service_role` roles it makes sure exist; runs the owner's SQL on a connection of its
//! own as the owner (never `SET ROLE` from an admin connection, which `RESET ROLE` would
//! undo), returning the last statement's result as JSON and the tables it left open to
//! `anon` (`open.rs`); announces schema reloads to the data API (`NOTIFY pgrst`); reads
//! sizes; and drops a database with its roles.
//! [`LocalCluster`] runs a private cluster as Quire's child process for
//! `QUIRE_DATABASES=local`.
//!
//! Whatever the owner's SQL does, its backend ends with its request: `COPY` to or from the
//! client is refused before anything runs, an owner's connection is driven by a task that
//! ends with it, and a session abandoned before the server answered (the deadline, an error,
//! the request dropped) is cancelled and then terminated from an admin connection; the same
//! terminate ends the data API's backends its requests left (`TenantBackends`). Owner
//! roles have a connection limit, and [`PgCluster`]'s sweep ends what a stopped replica
//! left running, the owners' sessions and the authenticators' alike.
//!
//! Secrets: role passwords reach the cluster as SCRAM verifiers made here, so no statement
//! text holds one (tokio-postgres logs statements at debug); errors carry PostgreSQL's
//! SQLSTATE and message, never a statement; the notices tenants' SQL raises are dropped, not
//! logged. A role may change its own password, so the owner's password is put back from the
//! stored one when the owner is refused it ([`PgCluster::restore_passwords`]). TLS to the
//! cluster is not supported yet (a URL with `sslmode=require` is refused): use a unix socket
//! or loopback.
//!
//! With a non-superuser admin role (`CREATEDB CREATEROLE`), the shared roles must have been
//! made once by a superuser (`connect` prints the SQL), the admin becomes a member of each
//! database's two roles to act for them, and databases get no DDL event trigger: their data
//! API then loads a new schema only on request (`POST …/reload`) or when a request names
//! what its cache lacks. Membership (with the role attribute `INHERIT`, the default) is
//! also what lets it read the owners' sessions and terminate them.
//!
//! An adapter: it may depend on `quire-databases` (the port) and `quire-kernel`, tokio,
//! tokio-postgres and postgres-protocol (SCRAM), rustix (signals, the root check),
//! serde_json and tracing.

mod cluster;
mod conn;
mod copy;
mod error;
mod local;
mod notify;
mod open;
mod provision;
mod quote;
mod roles;
mod run;
mod session;
mod settings;
mod split;
mod sweep;
mod values;

pub use cluster::{PgCluster, TenantRole};
pub use local::{LocalCluster, find_binaries};
pub use notify::{RELOAD_CHANNEL, RELOAD_PAYLOAD};
pub use settings::{PgClusterSettings, RoleTimeouts};
