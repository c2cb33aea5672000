//! Roles: the cluster-wide shared ones every database's data API switches to, and each
//! database's owner and authenticator.

use postgres_protocol::password::scram_sha_256;
use quire_databases::TenantAccess;
use quire_kernel::InfraError;

use crate::conn::AdminConn;
use crate::error::sqlstate_of;
use crate::quote::{ident, literal};
use crate::settings::PgClusterSettings;

/// The roles of Supabase's tutorials, shared by every database of the cluster: `NOLOGIN`,
/// reached only by `SET ROLE` from an authenticator. `service_role` skips row-level security.
const SHARED_ROLES: [(&str, &str); 3] = [
    ("anon", "NOLOGIN"),
    ("authenticated", "NOLOGIN"),
    ("service_role", "NOLOGIN BYPASSRLS"),
];

/// Who the admin connection is.
#[derive(Debug, Clone)]
pub(crate) struct AdminRole {
    pub name: String,
    pub superuser: bool,
    /// The server's `server_version_num` (150004 for 15.4).
    pub server_version: i32,
}

/// Reads the admin role's attributes and refuses one that cannot provision.
pub(crate) async fn inspect_admin(conn: &mut AdminConn<'_>) -> Result<AdminRole, InfraError> {
    let rows = conn
        .query(
            "reading the admin role",
            "SELECT current_user::text, rolsuper, rolcreaterole, rolcreatedb, \
                    current_setting('server_version_num')::int4 \
             FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .await?;
    let row = rows
        .first()
        .ok_or_else(|| InfraError::new("the admin role is not in pg_roles"))?;
    let name: String = row.get(0);
    let superuser: bool = row.get(1);
    let provisions = row.get::<_, bool>(2) && row.get::<_, bool>(3);
    if !(superuser || provisions) {
        return Err(InfraError::new(format!(
            "the role {name} of QUIRE_DATABASES_URL needs CREATEDB and CREATEROLE \
             (ALTER ROLE {name} CREATEDB CREATEROLE, as a superuser)"
        )));
    }
    Ok(AdminRole {
        name,
        superuser,
        server_version: row.get(4),
    })
}

/// What a superuser runs once when the admin role is not one.
pub(crate) fn setup_sql(admin: &str) -> String {
    let mut sql = String::new();
    for (name, attributes) in SHARED_ROLES {
        sql.push_str(&format!("CREATE ROLE {name} {attributes};\n"));
    }
    sql.push_str(&format!(
        "-- PostgreSQL 16 and later: lets {admin} hand them to each database's authenticator\n\
         GRANT anon, authenticated, service_role TO \"{admin}\" WITH ADMIN OPTION;\n"
    ));
    sql
}

/// Creates the shared roles that are missing. Two processes starting at once may both find
/// a role missing; the loser's `CREATE ROLE` fails with `duplicate_object` (or a unique
/// violation on `pg_authid`), which means the role is there.
pub(crate) async fn ensure_shared_roles(
    conn: &mut AdminConn<'_>,
    admin: &AdminRole,
) -> Result<(), InfraError> {
    for (name, attributes) in SHARED_ROLES {
        let rows = conn
            .query(
                "reading the shared roles",
                "SELECT rolcanlogin, rolbypassrls FROM pg_roles WHERE rolname = $1",
                &[&name],
            )
            .await?;
        if let Some(row) = rows.first() {
            let (login, bypass): (bool, bool) = (row.get(0), row.get(1));
            if login || bypass != (name == "service_role") {
                tracing::warn!(
                    role = name,
                    login,
                    bypassrls = bypass,
                    "a shared role of the database service has other attributes than Quire \
                     makes it with ({attributes})"
                );
            }
            continue;
        }
        let create = format!("CREATE ROLE {} {attributes}", ident(name)?);
        match conn.batch("creating a shared role", &create).await {
            Ok(()) => tracing::info!(role = name, "created a shared role of the database service"),
            Err(e) if matches!(sqlstate_of(&e), Some("42710" | "23505")) => {}
            Err(e) if sqlstate_of(&e) == Some("42501") => {
                return Err(InfraError::new(format!(
                    "the role {0} cannot create the shared role {name} ({1}). \
                     Run this once as a PostgreSQL superuser, then start again:\n{2}",
                    admin.name,
                    e,
                    setup_sql(&admin.name)
                )));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The statements of [`crate::PgCluster`]'s `create_roles`, one transaction. Passwords go in
/// as SCRAM-SHA-256 verifiers made here, so the statement's text (which tokio-postgres logs
/// at debug, and a server may log with `log_statement`) never holds one.
pub(crate) fn create_roles_sql(
    tenant: &TenantAccess,
    admin: &AdminRole,
    settings: &PgClusterSettings,
) -> Result<String, InfraError> {
    let owner = ident(&tenant.names.owner_role)?;
    let auth = ident(&tenant.names.authenticator_role)?;
    let owner_verifier = literal(&scram_sha_256(tenant.owner_password.as_bytes()))?;
    let auth_verifier = literal(&scram_sha_256(tenant.authenticator_password.as_bytes()))?;
    let limit = settings.authenticator_connection_limit;
    let owner_limit = settings.owner_connection_limit;
    let mut sql = format!(
        "CREATE ROLE {owner} LOGIN PASSWORD {owner_verifier} CONNECTION LIMIT {owner_limit} \
           NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;\n\
         CREATE ROLE {auth} LOGIN NOINHERIT PASSWORD {auth_verifier} CONNECTION LIMIT {limit} \
           NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;\n\
         GRANT anon, authenticated, service_role TO {auth};\n"
    );
    if !admin.superuser {
        // A non-superuser admin acts on these roles' behalf only as a member of them:
        // `CREATE DATABASE … OWNER` (PostgreSQL 16 asks that it may SET ROLE to the owner),
        // `ALTER DEFAULT PRIVILEGES FOR ROLE`, connecting to a database only its two roles
        // may, and `DROP DATABASE … WITH (FORCE)` ending their sessions. The memberships go
        // with the roles.
        sql.push_str(&format!("GRANT {owner}, {auth} TO CURRENT_USER;\n"));
    }
    Ok(sql)
}

/// Puts both roles' stored passwords back (a role may change its own).
pub(crate) fn restore_passwords_sql(tenant: &TenantAccess) -> Result<String, InfraError> {
    Ok(format!(
        "ALTER ROLE {} PASSWORD {};\nALTER ROLE {} PASSWORD {};",
        ident(&tenant.names.owner_role)?,
        literal(&scram_sha_256(tenant.owner_password.as_bytes()))?,
        ident(&tenant.names.authenticator_role)?,
        literal(&scram_sha_256(tenant.authenticator_password.as_bytes()))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_databases::TenantNames;
    use quire_kernel::DatabaseId;

    fn tenant() -> TenantAccess {
        TenantAccess {
            names: TenantNames::of(DatabaseId(uuid::Uuid::nil())),
            owner_password: "owner-secret-pw".into(),
            authenticator_password: "auth-secret-pw".into(),
        }
    }

    #[test]
    fn passwords_never_appear_in_the_statements() {
        let admin = AdminRole {
            name: "quire".into(),
            superuser: false,
            server_version: 150_000,
        };
        let sql =
            create_roles_sql(&tenant(), &admin, &PgClusterSettings::default()).unwrap_or_default();
        assert!(sql.contains("SCRAM-SHA-256$4096:"), "{sql}");
        assert!(!sql.contains("owner-secret-pw") && !sql.contains("auth-secret-pw"));
        assert!(sql.contains("CONNECTION LIMIT 20"));
        assert!(sql.contains("_owner\" LOGIN PASSWORD 'SCRAM"), "{sql}");
        assert!(sql.contains("CONNECTION LIMIT 10 NOSUPERUSER"), "{sql}");
        assert!(sql.contains("_auth\" TO CURRENT_USER;"), "{sql}");
    }

    #[test]
    fn a_superuser_admin_takes_no_membership() {
        let admin = AdminRole {
            name: "postgres".into(),
            superuser: true,
            server_version: 150_000,
        };
        let sql =
            create_roles_sql(&tenant(), &admin, &PgClusterSettings::default()).unwrap_or_default();
        assert!(!sql.contains("CURRENT_USER"));
    }

    #[test]
    fn the_setup_sql_names_every_shared_role() {
        let sql = setup_sql("quire");
        assert!(sql.contains("CREATE ROLE service_role NOLOGIN BYPASSRLS;"));
        assert!(sql.contains("TO \"quire\" WITH ADMIN OPTION"));
    }
}
