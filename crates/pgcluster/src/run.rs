//! A database owner's SQL: run on a connection of its own as the owner role, the last
//! statement's result returned.
//!
//! The SQL goes to the server as one simple-protocol query, so several statements run in
//! order, in one implicit transaction unless they manage their own (`BEGIN` … `COMMIT`
//! inside work; a transaction still open at the end is rolled back when the connection
//! closes, as with `psql -c`). Rows arrive as text and are counted as they stream, only the
//! first `max_rows` of the last statement kept, and no more of them than
//! [`MAX_KEPT_BYTES`] of values hold. The simple protocol gives no column types,
//! so once it has run, the last statement (found by [`crate::split`]) is prepared again on
//! the same connection, which describes its columns without running it; when that fails or
//! describes other columns, every value stays text.

use std::time::Duration;

use futures_util::StreamExt;
use quire_databases::{ClusterError, SqlOutcome, SqlRefusal};
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::error::{cluster_trouble, infra, refusal};
use crate::session::OwnerSession;
use crate::split::last_statement;
use crate::values::{ValueKind, row_to_json};

/// Runs `sql` on the owner's `session` within `deadline`. The session is left settled when
/// the server answered everything (the SQL's result or its refusal); otherwise (the
/// deadline, a broken or confused connection) it is left for its drop to end the backend.
pub(crate) async fn run_sql(
    session: &mut OwnerSession,
    sql: &str,
    max_rows: usize,
    deadline: Duration,
) -> Result<SqlOutcome, ClusterError> {
    session.begin();
    let ran = tokio::time::timeout(deadline, execute(session.client(), sql, max_rows)).await;
    match ran {
        Ok(Ok(outcome)) => {
            session.settle();
            Ok(outcome)
        }
        Ok(Err(Stop::Refused(r))) => {
            session.settle();
            Err(ClusterError::Refused(r))
        }
        Ok(Err(Stop::Broken(e))) => Err(e),
        // The owner may have lifted its own statement_timeout: the session's drop cancels
        // the query, then terminates the backend if the cancel did not end it.
        Err(_) => Err(ClusterError::Refused(SqlRefusal {
            message: format!(
                "canceling statement: it ran longer than Quire allows ({} s)",
                deadline.as_secs()
            ),
            sqlstate: "57014".into(),
            detail: None,
            hint: None,
            position: None,
        })),
    }
}

/// Why a run stopped short.
#[derive(Debug)]
enum Stop {
    /// The server refused the SQL and is ready for more.
    Refused(SqlRefusal),
    /// The connection cannot be trusted to be ready: the cluster failed, or answered what
    /// a simple query cannot take.
    Broken(ClusterError),
}

/// Most bytes of values kept from the last statement's rows: a few rows of large values
/// (`repeat('x', 300000000)`) would otherwise be held whole, and then again as JSON. A row
/// is kept whole or not at all, and none after the first that does not fit.
pub(crate) const MAX_KEPT_BYTES: usize = 8 << 20;

/// A statement's result as it streams in.
#[derive(Debug, Default)]
struct Answer {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
    kept_bytes: usize,
    /// A row did not fit in [`MAX_KEPT_BYTES`]: later ones are only counted.
    full: bool,
}

async fn execute(client: &Client, sql: &str, max_rows: usize) -> Result<SqlOutcome, Stop> {
    let stream = client
        .simple_query_raw(sql)
        .await
        .map_err(|e| sql_error(&e))?;
    futures_util::pin_mut!(stream);
    let mut current = Answer::default();
    let mut last: Option<(Answer, u64)> = None;
    while let Some(message) = stream.next().await {
        match message.map_err(|e| sql_error(&e))? {
            SimpleQueryMessage::RowDescription(columns) => {
                current = Answer {
                    columns: columns.iter().map(|c| c.name().to_owned()).collect(),
                    ..Answer::default()
                };
            }
            // Rows past the limits are only counted (by the server, in CommandComplete).
            SimpleQueryMessage::Row(row) if !current.full && current.rows.len() < max_rows => {
                // Measured before anything is copied: the driver holds the row once already.
                let size: usize = (0..row.len())
                    .filter_map(|i| row.get(i))
                    .map(str::len)
                    .sum();
                if current.kept_bytes + size <= MAX_KEPT_BYTES {
                    current.kept_bytes += size;
                    current.rows.push(
                        (0..row.len())
                            .map(|i| row.get(i).map(str::to_owned))
                            .collect(),
                    );
                } else {
                    current.full = true;
                }
            }
            SimpleQueryMessage::CommandComplete(count) => {
                last = Some((std::mem::take(&mut current), count));
            }
            _ => {}
        }
    }
    let Some((result, row_count)) = last else {
        // Nothing but blanks and comments.
        return Ok(SqlOutcome {
            columns: Vec::new(),
            rows: Vec::new(),
            row_count: 0,
            open_tables: None,
        });
    };
    let kinds = if result.columns.is_empty() {
        Vec::new()
    } else {
        column_kinds(client, sql, &result.columns).await
    };
    Ok(SqlOutcome {
        rows: result
            .rows
            .iter()
            .map(|texts| row_to_json(&kinds, texts))
            .collect(),
        columns: result.columns,
        row_count,
        // Read by the caller once the session is settled.
        open_tables: None,
    })
}

/// The last statement's column kinds, or none (every value text) when preparing it again
/// does not describe the columns that came back.
async fn column_kinds(client: &Client, sql: &str, columns: &[String]) -> Vec<ValueKind> {
    let Some(statement) = last_statement(sql) else {
        return Vec::new();
    };
    let Ok(prepared) = client.prepare(statement).await else {
        return Vec::new();
    };
    let described = prepared.columns();
    let same = described.len() == columns.len()
        && described.iter().zip(columns).all(|(d, c)| d.name() == c);
    if !same {
        return Vec::new();
    }
    described.iter().map(|c| ValueKind::of(c.type_())).collect()
}

/// A failure while the SQL ran: PostgreSQL refusing it, the cluster failing, or the
/// server answering with a message a simple query does not take (copy data: a `COPY` that
/// [`crate::copy`] did not see), which is the owner's doing, not the cluster's.
fn sql_error(e: &tokio_postgres::Error) -> Stop {
    match e.as_db_error() {
        Some(db) if !cluster_trouble(db.code().code()) => Stop::Refused(refusal(db)),
        Some(_) => Stop::Broken(ClusterError::Infra(infra("running a database's SQL", e))),
        None if e.to_string().starts_with("unexpected message") => {
            Stop::Broken(ClusterError::Refused(crate::copy::unexpected()))
        }
        None => Stop::Broken(ClusterError::Infra(infra("running a database's SQL", e))),
    }
}
