//! What the cluster is kept to across restarts: every owner role's connection limit, and
//! no tenant's session older than any request could be waiting for.
//!
//! Both work on all tenant roles at once, found by their names (`q_<32 hex>_owner` and
//! `q_<32 hex>_auth`, which only Quire makes). The sweep ends sessions that are running
//! something, or hold a transaction open (an idle one is the data API's pool, or about to
//! end), and began it longer ago than any request may take: for the owner,
//! [`PgClusterSettings::abandoned_after`] (its SQL, and the data API's short statements on
//! the `auth` schema); for the authenticator, [`PgClusterSettings::data_api_abandoned_after`]
//! (the data API's requests). No replica's request can still be waiting for them, so every
//! replica may sweep at any time. The application name is the tenant's to set, so it
//! exempts nothing.

use quire_kernel::InfraError;

use crate::conn::AdminPool;
use crate::quote::ident;
use crate::settings::PgClusterSettings;

/// The names of tenant owner roles, as a regular expression.
const OWNER_ROLES: &str = "^q_[0-9a-f]{32}_owner$";

/// The names of tenant authenticator roles, as a regular expression.
const AUTHENTICATOR_ROLES: &str = "^q_[0-9a-f]{32}_auth$";

/// Whether `role` is one of a tenant's two login roles.
pub(crate) fn tenant_role(role: &str) -> bool {
    let Some(hex) = role
        .strip_prefix("q_")
        .and_then(|r| r.strip_suffix("_owner").or_else(|| r.strip_suffix("_auth")))
    else {
        return false;
    };
    hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Ends abandoned tenants' sessions; the count of those ended. Without the privileges of a
/// tenant role (membership, or `pg_read_all_stats`), its sessions' `state` and starts read
/// as null, so a session the admin could not end is not tried.
const SWEEP: &str = "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) \
     FROM pg_stat_activity \
     WHERE backend_type = 'client backend' AND state <> 'idle' \
       AND ((usename ~ $1 \
             AND coalesce(xact_start, query_start) < now() - make_interval(secs => $2)) \
         OR (usename ~ $3 \
             AND coalesce(xact_start, query_start) < now() - make_interval(secs => $4)))";

/// Ends the tenants' sessions left running longer than any request could be waiting.
pub(crate) async fn end_abandoned(
    admin: &AdminPool,
    settings: &PgClusterSettings,
) -> Result<u64, InfraError> {
    let owner = settings.abandoned_after().as_secs_f64();
    let data_api = settings.data_api_abandoned_after().as_secs_f64();
    let mut conn = admin.get().await?;
    let rows = conn
        .query(
            "ending abandoned tenants' sessions",
            SWEEP,
            &[&OWNER_ROLES, &owner, &AUTHENTICATOR_ROLES, &data_api],
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

#[cfg(test)]
mod tests {
    use super::tenant_role;

    #[test]
    fn tenant_roles_by_their_names() {
        let hex = "0123456789abcdef0123456789abcdef";
        assert!(tenant_role(&format!("q_{hex}_owner")));
        assert!(tenant_role(&format!("q_{hex}_auth")));
        for other in [
            "postgres".to_owned(),
            "anon".to_owned(),
            format!("q_{hex}"),
            format!("q_{hex}_other"),
            format!("q_{}_auth", hex.to_uppercase()),
            format!("q_{hex}0_owner"),
        ] {
            assert!(!tenant_role(&other), "{other}");
        }
    }
}
