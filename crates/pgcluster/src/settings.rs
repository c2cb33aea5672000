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
    /// `CONNECTION LIMIT` of each database's owner role: its SQL queries and the data API's
    /// connections for the `auth` schema, on every replica together. Set on new roles, and
    /// on existing ones each time the adapter connects.
    pub owner_connection_limit: u32,
    /// Connections to the maintenance database kept for provisioning (each one is opened
    /// when first needed).
    pub admin_connections: usize,
    /// How long opening any connection may take (unless the URL sets `connect_timeout`).
    pub connect_timeout: Duration,
    /// How long one provisioning step (`CREATE DATABASE`, a drop) may take before it is
    /// cancelled and reported as unavailable.
    pub admin_deadline: Duration,
    /// Added to the owner's `statement_timeout` for the client-side deadline of
    /// `run_sql` once connected: the owner can `SET statement_timeout = 0`, so the server's
    /// limit alone does not bound it; past this the run is abandoned, its backend cancelled
    /// and, after `sql_cancel_grace`, terminated.
    pub sql_deadline_margin: Duration,
    /// How long an abandoned owner's session gets, after its cancel, before its backend is
    /// terminated from an admin connection.
    pub sql_cancel_grace: Duration,
    /// `client_connection_check_interval` of the owner's connections (PostgreSQL 14 and
    /// later): how soon a backend running a query notices its client has gone.
    pub client_check_interval: Duration,
    /// Added to the longest an owner's step (or a data API request) may take for the age
    /// past which the sweep ends a session ([`PgClusterSettings::abandoned_after`],
    /// [`PgClusterSettings::data_api_abandoned_after`]).
    pub sweep_margin: Duration,
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
            owner_connection_limit: 10,
            sql_cancel_grace: Duration::from_secs(2),
            client_check_interval: Duration::from_secs(1),
            sweep_margin: Duration::from_secs(10),
        }
    }
}

impl PgClusterSettings {
    /// The client-side deadline of one `run_sql` once connected (statements, typing);
    /// connecting has `connect_timeout` besides.
    #[must_use]
    pub fn sql_deadline(&self) -> Duration {
        self.timeouts.owner + self.sql_deadline_margin
    }

    /// How long an owner's session may have run before the sweep ends it: longer than any
    /// step on an owner's connection may take (each is bounded by [`Self::sql_deadline`]),
    /// its grace, and a margin for clocks and janitors, so that every replica may sweep at
    /// once.
    #[must_use]
    pub fn abandoned_after(&self) -> Duration {
        self.sql_deadline() + self.sql_cancel_grace + self.sweep_margin
    }

    /// The longest `statement_timeout` a data API request runs under (the three shared
    /// roles' and the authenticator's): what its deadline falls back to, and is at most,
    /// whatever a database's catalog says.
    #[must_use]
    pub fn data_api_statement(&self) -> Duration {
        let t = &self.timeouts;
        t.anon
            .max(t.authenticated)
            .max(t.service_role)
            .max(t.authenticator)
    }

    /// How long a session as a database's authenticator may have run before the sweep ends
    /// it: a data API request's deadline (its role's timeout and the margin of the
    /// owner's), the grace after it, and the sweep's margin.
    #[must_use]
    pub fn data_api_abandoned_after(&self) -> Duration {
        self.data_api_statement()
            + self.sql_deadline_margin
            + self.sql_cancel_grace
            + self.sweep_margin
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
