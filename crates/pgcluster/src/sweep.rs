//! What the cluster is kept to across restarts: every owner role's connection limit, and
//! no owner's session older than any request could be waiting for.
//!
//! Both work on all tenant owner roles at once, found by their names (`q_<32 hex>_owner`,
//! which only Quire makes). The sweep ends sessions that are running something (an idle
//! one is the data API's pool, or about to end) and started it longer ago than
//! [`PgClusterSettings::abandoned_after`]: no replica's request can still be waiting for
//! them, so every replica may sweep at any time. The data API's own connections as the
//! owner (`quire data api…` application names) are never touched. A session the owner
//! renamed to look like one of those escapes the sweep, not the terminate of the request
//! that ran it ([`crate::session`]).

use quire_kernel::InfraError;

use crate::conn::AdminPool;
use crate::quote::ident;
use crate::settings::PgClusterSettings;

/// The names of tenant owner roles, as a regular expression.
const OWNER_ROLES: &str = "^q_[0-9a-f]{32}_owner$";

/// Ends abandoned owners' sessions; the count of those ended. Without the privileges of an
/// owner role (membership, or `pg_read_all_stats`), its sessions' `query_start` reads as
/// null, so a session the admin could not end is not tried.
const SWEEP: &str = "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) \
     FROM pg_stat_activity \
     WHERE backend_type = 'client backend' AND usename ~ $1 \
       AND application_name NOT LIKE 'quire data api%' \
       AND state <> 'idle' \
       AND query_start < now() - make_interval(secs => $2)";

/// Ends the owners' sessions left running longer than any request could be waiting.
pub(crate) async fn end_abandoned(
    admin: &AdminPool,
    settings: &PgClusterSettings,
) -> Result<u64, InfraError> {
    let after = settings.abandoned_after().as_secs_f64();
    let mut conn = admin.get().await?;
    let rows = conn
        .query(
            "ending abandoned owners' sessions",
            SWEEP,
            &[&OWNER_ROLES, &after],
        )
        .await?;
    let ended: i64 = rows.first().map_or(0, |r| r.get(0));
    Ok(u64::try_from(ended).unwrap_or(0))
}

/// Gives every owner role the configured connection limit where it has another (roles made
/// before there was one, or under another setting). A role that cannot be changed (dropped
/// meanwhile) is left for the next start.
pub(crate) async fn keep_connection_limits(
    admin: &AdminPool,
    settings: &PgClusterSettings,
) -> Result<usize, InfraError> {
    let limit = i32::try_from(settings.owner_connection_limit).unwrap_or(i32::MAX);
    let mut conn = admin.get().await?;
    let rows = conn
        .query(
            "reading owners' connection limits",
            "SELECT rolname::text FROM pg_roles WHERE rolname ~ $1 AND rolconnlimit <> $2",
            &[&OWNER_ROLES, &limit],
        )
        .await?;
    let mut changed = 0;
    for row in rows {
        let role: String = row.get(0);
        let sql = format!("ALTER ROLE {} CONNECTION LIMIT {limit}", ident(&role)?);
        match conn
            .batch("setting an owner's connection limit", &sql)
            .await
        {
            Ok(()) => changed += 1,
            Err(e) => tracing::warn!(
                role = %role,
                error = %e,
                "an owner role's connection limit was not brought up to date"
            ),
        }
    }
    Ok(changed)
}
