//! The tables a database leaves open to `anon`: in `public`, the schema the data API
//! exposes, a table without row-level security, or a view that runs as its owner, on which
//! `anon` holds a privilege. Whoever holds the anon key (every visitor of a page linked to
//! the database) reads or writes those through the data API with nothing to stop them.
//!
//! Read as the database's owner: once its SQL has run, on the same connection (so the
//! answer to `POST …/query` says what the SQL left), and on a connection of its own for the
//! database's record, several databases at once.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::StreamExt;
use quire_databases::{ClusterError, OpenTable, TenantAccess};
use tokio_postgres::Row;

use crate::cluster::PgCluster;
use crate::session::OwnerSession;

/// Every name is schema-qualified: the owner's SQL may have changed `search_path` on the
/// connection this runs on. A privilege on some columns counts, as the data API reaches
/// those. A view is open unless `security_invoker` is on (PostgreSQL 15 and later; a view of
/// an older server always runs as its owner, whom row-level security does not stop); a
/// materialized view has no row-level security at all, and can only be read, whatever is
/// granted on it. The cast reads the option as PostgreSQL does (`on`, `true`, `1`).
const OPEN_TABLES: &str = "SELECT name, kind, privileges FROM (
  SELECT c.relname::text AS name,
    CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
      WHEN 'f' THEN 'foreign table' ELSE 'table' END AS kind,
    pg_catalog.array_remove(ARRAY[
      CASE WHEN pg_catalog.has_any_column_privilege('anon', c.oid, 'SELECT') THEN 'select' END,
      CASE WHEN c.relkind <> 'm'
        AND pg_catalog.has_any_column_privilege('anon', c.oid, 'INSERT') THEN 'insert' END,
      CASE WHEN c.relkind <> 'm'
        AND pg_catalog.has_any_column_privilege('anon', c.oid, 'UPDATE') THEN 'update' END,
      CASE WHEN c.relkind <> 'm'
        AND pg_catalog.has_table_privilege('anon', c.oid, 'DELETE') THEN 'delete' END
    ], NULL) AS privileges
  FROM pg_catalog.pg_class c
  WHERE c.relnamespace = 'public'::pg_catalog.regnamespace
    AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    AND pg_catalog.has_schema_privilege('anon', c.relnamespace, 'USAGE')
    AND CASE WHEN c.relkind = 'v' THEN NOT EXISTS (
          SELECT FROM pg_catalog.unnest(c.reloptions) AS o(option)
          WHERE pg_catalog.split_part(o.option, '=', 1) = 'security_invoker'
            AND pg_catalog.split_part(o.option, '=', 2)::pg_catalog.bool)
        ELSE NOT c.relrowsecurity END
) AS reached
WHERE pg_catalog.cardinality(privileges) > 0
ORDER BY name";

/// How long reading them may take: a scan of `pg_class`, far less.
const READ_WITHIN: Duration = Duration::from_secs(5);

/// Databases read at once for one list.
const AT_ONCE: usize = 4;

fn open_table(row: &Row) -> Result<OpenTable, tokio_postgres::Error> {
    Ok(OpenTable {
        name: row.try_get(0)?,
        kind: row.try_get(1)?,
        privileges: row.try_get(2)?,
    })
}

/// The open tables, read on `session` once the owner's SQL has run and the server answered
/// all of it: first a `ROLLBACK`, since a transaction the SQL left open is rolled back when
/// the connection closes (a warning, dropped, when there is none). `None` when they could
/// not be read; a session the server did not answer in time is left unsettled, for its drop
/// to end the backend.
pub(crate) async fn after_sql(session: &mut OwnerSession) -> Option<Vec<OpenTable>> {
    session.begin();
    let client = session.client();
    let read = tokio::time::timeout(READ_WITHIN, async {
        client.batch_execute("ROLLBACK").await?;
        client.query_typed(OPEN_TABLES, &[]).await
    })
    .await;
    let rows = match read {
        Ok(Ok(rows)) => rows,
        // Refused (the owner's SQL may have left a `statement_timeout` of a millisecond):
        // the server answered, the connection is as ready as before.
        Ok(Err(e)) if e.as_db_error().is_some() => {
            session.settle();
            return None;
        }
        _ => return None,
    };
    session.settle();
    rows.iter().map(open_table).collect::<Result<_, _>>().ok()
}

impl PgCluster {
    /// One database's open tables, on a session of their own.
    async fn open_tables_of(&self, tenant: &TenantAccess) -> Result<Vec<OpenTable>, ClusterError> {
        let mut session = self.owner_session(tenant).await?;
        session.begin();
        let client = session.client();
        let rows = tokio::time::timeout(READ_WITHIN, client.query_typed(OPEN_TABLES, &[]))
            .await
            .map_err(|_| {
                ClusterError::Infra(crate::error::timed_out(
                    "reading a database's open tables",
                    READ_WITHIN,
                ))
            })?
            .map_err(|e| {
                ClusterError::Infra(crate::error::infra("reading a database's open tables", &e))
            })?;
        session.settle();
        session.finish().await;
        rows.iter()
            .map(open_table)
            .collect::<Result<_, _>>()
            .map_err(|e| {
                ClusterError::Infra(crate::error::infra("reading a database's open tables", &e))
            })
    }

    /// One database's open tables by its name, or `None`, logged, when they were not read.
    async fn read_one(&self, tenant: &TenantAccess) -> Option<(String, Vec<OpenTable>)> {
        match self.open_tables_of(tenant).await {
            Ok(tables) => Some((tenant.names.database.clone(), tables)),
            Err(e) => {
                tracing::warn!(
                    database = %tenant.names.database,
                    error = %e,
                    "a database's open tables were not read"
                );
                None
            }
        }
    }

    /// Several databases' open tables, [`AT_ONCE`] at a time; those that could not be read
    /// are left out, and logged.
    pub(crate) async fn read_open_tables(
        &self,
        tenants: &[TenantAccess],
    ) -> HashMap<String, Vec<OpenTable>> {
        // The futures are made before the stream: a stream holding the closure that makes
        // them is not seen as `Send` for every lifetime of the tenants (rustc's "FnOnce is
        // not general enough"), which the trait's boxed future needs.
        let reads: Vec<_> = tenants.iter().map(|t| self.read_one(t)).collect();
        futures_util::stream::iter(reads)
            .buffer_unordered(AT_ONCE)
            .filter_map(std::future::ready)
            .collect()
            .await
    }
}
