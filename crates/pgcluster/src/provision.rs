//! A tenant database's statements: create, prepare, drop, and the sizes.

use quire_databases::TenantNames;
use quire_kernel::InfraError;

use crate::quote::ident;
use crate::settings::{RoleTimeouts, timeout_literal};

/// `CREATE DATABASE` (alone: it cannot run inside a transaction block). From `template0`:
/// a tenant gets a pristine database whatever an operator put in `template1`, in the
/// cluster's encoding and locale.
pub(crate) fn create_database_sql(names: &TenantNames) -> Result<String, InfraError> {
    Ok(format!(
        "CREATE DATABASE {} OWNER {} TEMPLATE template0",
        ident(&names.database)?,
        ident(&names.owner_role)?
    ))
}

/// What follows `CREATE DATABASE`, one transaction: `CONNECT` for the two roles alone, and
/// each role's `statement_timeout` in this database.
pub(crate) fn database_access_sql(
    names: &TenantNames,
    timeouts: &RoleTimeouts,
) -> Result<String, InfraError> {
    let db = ident(&names.database)?;
    let owner = ident(&names.owner_role)?;
    let auth = ident(&names.authenticator_role)?;
    let mut sql = format!(
        "REVOKE ALL ON DATABASE {db} FROM PUBLIC;\n\
         GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {owner}, {auth};\n"
    );
    for (role, limit) in [
        ("anon".to_owned(), timeouts.anon),
        ("authenticated".to_owned(), timeouts.authenticated),
        ("service_role".to_owned(), timeouts.service_role),
        (owner, timeouts.owner),
        (auth, timeouts.authenticator),
    ] {
        sql.push_str(&format!(
            "ALTER ROLE {role} IN DATABASE {db} SET statement_timeout = {};\n",
            timeout_literal(limit)
        ));
    }
    Ok(sql)
}

/// Inside the new database, one transaction: the shared roles' grants, as Supabase has them,
/// so tutorial SQL (`create table …` then `to authenticated` policies) works verbatim.
/// Row-level security, not these grants, is what keeps `anon` out of a table the owner
/// enabled it on.
pub(crate) fn grants_sql(names: &TenantNames) -> Result<String, InfraError> {
    let owner = ident(&names.owner_role)?;
    let mut sql = String::from(
        // PostgreSQL 15 already makes a new database's `public` schema so; older ones let
        // every role create in it.
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC;\n\
         GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;\n",
    );
    for kind in ["TABLES", "SEQUENCES", "FUNCTIONS"] {
        sql.push_str(&format!(
            "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA public \
             GRANT ALL ON {kind} TO anon, authenticated, service_role;\n"
        ));
    }
    Ok(sql)
}

/// The event trigger that tells the data API to load the schema again after any DDL
/// (`ddl_command_end` fires for `DROP` too). Event triggers need a superuser.
///
/// The schema `quire` belongs to the admin role, so the database's owner can neither drop
/// nor change it (owning a database does not give its schemas), and only a superuser may
/// alter or drop an event trigger, or set `session_replication_role` to silence one.
/// The function runs as whoever ran the DDL: `NOTIFY` needs no privilege, so a `SECURITY
/// DEFINER` function owned by a superuser would only be one more thing to get right; its
/// `search_path` is pinned all the same.
pub(crate) const EVENT_TRIGGER_SQL: &str = "\
CREATE SCHEMA quire;
REVOKE ALL ON SCHEMA quire FROM PUBLIC;
CREATE FUNCTION quire.announce_ddl() RETURNS event_trigger
  LANGUAGE plpgsql SET search_path = pg_catalog
  AS $$ BEGIN NOTIFY pgrst, 'reload schema'; END $$;
REVOKE ALL ON FUNCTION quire.announce_ddl() FROM PUBLIC;
CREATE EVENT TRIGGER quire_announce_ddl ON ddl_command_end
  EXECUTE FUNCTION quire.announce_ddl();
";

/// Drops the database (ending its sessions), alone: `DROP DATABASE` cannot run in a
/// transaction block. Its per-database role settings go with it.
pub(crate) fn drop_database_sql(names: &TenantNames) -> Result<String, InfraError> {
    Ok(format!(
        "DROP DATABASE IF EXISTS {} WITH (FORCE)",
        ident(&names.database)?
    ))
}

/// Drops both roles, one transaction. They own nothing outside their database (the owner
/// can connect to no other tenant's, and the maintenance database's `public` schema takes
/// no objects from them on PostgreSQL 15), and their memberships go with them.
pub(crate) fn drop_roles_sql(names: &TenantNames) -> Result<String, InfraError> {
    Ok(format!(
        "DROP ROLE IF EXISTS {};\nDROP ROLE IF EXISTS {};",
        ident(&names.authenticator_role)?,
        ident(&names.owner_role)?
    ))
}

/// One query for every size asked.
pub(crate) const SIZES_SQL: &str = "SELECT datname::text, pg_database_size(oid) \
     FROM pg_database WHERE datname = ANY($1) AND datallowconn";

#[cfg(test)]
mod tests {
    use super::*;
    use quire_kernel::DatabaseId;

    fn names() -> TenantNames {
        TenantNames::of(DatabaseId(uuid::Uuid::nil()))
    }

    #[test]
    fn every_role_gets_its_timeout_in_the_database_alone() {
        let sql = database_access_sql(&names(), &RoleTimeouts::default()).unwrap_or_default();
        assert!(sql.contains("ALTER ROLE anon IN DATABASE \"q_00000000000000000000000000000000\" SET statement_timeout = '3000ms'"));
        assert!(sql.contains("_owner\" IN DATABASE \"q_00000000000000000000000000000000\" SET statement_timeout = '15000ms'"));
        assert_eq!(sql.matches("statement_timeout").count(), 5);
    }

    #[test]
    fn drops_tolerate_what_is_missing() {
        assert!(
            drop_database_sql(&names())
                .unwrap_or_default()
                .contains("IF EXISTS")
        );
        assert_eq!(
            drop_roles_sql(&names())
                .unwrap_or_default()
                .matches("IF EXISTS")
                .count(),
            2
        );
    }
}
