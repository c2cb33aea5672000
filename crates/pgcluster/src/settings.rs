//! What an operator may tune about the cluster adapter, with the defaults the research note
//! (services.md §3.3) chose.

use std::time::Duration;

/// Each role's `statement_timeout` inside a tenant database (`ALTER ROLE … IN DATABASE … SET`).
///
/// PostgreSQL applies a role's settings when a session *logs in* as that role, not on `SET
/// ROLE`: the owner and the authenticator get theirs from the server; `anon`, `authenticated`
/// and `service_role` are reached by `SET LOCAL ROLE`, so the data API must read theirs
/// (`pg_db_role_setting`) and `SET LOCAL` them itself, as PostgREST does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleTimeouts {
    pub anon: Duration,
    pub authenticated: Duration,
    /// PostgREST runs `service_role` requests too, so it gets a data API limit.
    pub service_role: Duration,
    /// The owner runs the SQL of `POST …/query`: migrations and bulk loads, hence the most.
    pub owner: Duration,
    pub authenticator: Duration,
}

impl Default for RoleTimeouts {
    fn default() -> Self {
        Self {
            anon: Duration::from_secs(3),
            authenticated: Duration::from_secs(8),
            service_role: Duration::from_secs(8),
            owner: Duration::from_secs(15),
            authenticator: Duration::from_secs(8),
        }
    }
}

/// The adapter's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgClusterSettings {
    pub timeouts: RoleTimeouts,
    /// `CONNECTION LIMIT` of each database's authenticator role: what all replicas' data API
    /// pools together may hold on one database.
    pub authenticator_connection_limit: u32,
    /// Connections to the maintenance database kept for provisioning (each one is opened
    /// when first needed).
    pub admin_connections: usize,
    /// How long opening any connection may take (unless the URL sets `connect_timeout`).
    pub connect_timeout: Duration,
    /// How long one provisioning step (`CREATE DATABASE`, a drop) may take before it is
    /// cancelled and reported as unavailable.
    pub admin_deadline: Duration,
    /// Added to the owner's `statement_timeout` for the client-side deadline of
    /// `run_sql`: the owner can `SET statement_timeout = 0`, so the server's limit alone
    /// does not bound it; past this the query is cancelled from here.
    pub sql_deadline_margin: Duration,
}

impl Default for PgClusterSettings {
    fn default() -> Self {
        Self {
            timeouts: RoleTimeouts::default(),
            authenticator_connection_limit: 20,
            admin_connections: 4,
            connect_timeout: Duration::from_secs(5),
            admin_deadline: Duration::from_secs(60),
            sql_deadline_margin: Duration::from_secs(5),
        }
    }
}

impl PgClusterSettings {
    /// The client-side deadline of one `run_sql` (connection, statements, typing).
    #[must_use]
    pub fn sql_deadline(&self) -> Duration {
        self.connect_timeout + self.timeouts.owner + self.sql_deadline_margin
    }
}

/// A duration as a `statement_timeout` value PostgreSQL takes (`'1500ms'`), at least 1 ms
/// (0 would mean no limit).
pub(crate) fn timeout_literal(d: Duration) -> String {
    let ms = d.as_millis().max(1);
    format!("'{ms}ms'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_milliseconds_and_never_zero() {
        assert_eq!(timeout_literal(Duration::from_secs(3)), "'3000ms'");
        assert_eq!(timeout_literal(Duration::ZERO), "'1ms'");
    }
}
