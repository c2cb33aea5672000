//! A database owner's SQL: run on a connection of its own as the owner role, the last
//! statement's result returned.
//!
//! The SQL goes to the server as one simple-protocol query, so several statements run in
//! order, in one implicit transaction unless they manage their own (`BEGIN` … `COMMIT`
//! inside work; a transaction still open at the end is rolled back when the connection
//! closes, as with `psql -c`). Rows arrive as text and are counted as they stream, only the
//! first `max_rows` of the last statement kept. The simple protocol gives no column types,
//! so once it has run, the last statement (found by [`crate::split`]) is prepared again on
//! the same connection, which describes its columns without running it; when that fails or
//! describes other columns, every value stays text.

use std::time::Duration;

use futures_util::StreamExt;
use quire_databases::{ClusterError, SqlOutcome, SqlRefusal};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use crate::error::{cluster_trouble, infra, refusal};
use crate::split::last_statement;
use crate::values::{ValueKind, row_to_json};

/// Runs `sql` on `client` (the owner's own connection, closed by the caller after), within
/// `left` of the whole `limit`.
pub(crate) async fn run_sql(
    client: &Client,
    sql: &str,
    max_rows: usize,
    left: Duration,
    limit: Duration,
) -> Result<SqlOutcome, ClusterError> {
    match tokio::time::timeout(left, execute(client, sql, max_rows)).await {
        Ok(outcome) => outcome,
        Err(_) => {
            // The owner may have lifted its own statement_timeout; stop the query on the
            // server rather than leave it running there.
            let _ = client.cancel_token().cancel_query(NoTls).await;
            Err(ClusterError::Refused(SqlRefusal {
                message: format!(
                    "canceling statement: it ran longer than Quire allows ({} s)",
                    limit.as_secs()
                ),
                sqlstate: "57014".into(),
                detail: None,
                hint: None,
                position: None,
            }))
        }
    }
}

/// A statement's result as it streams in.
#[derive(Debug, Default)]
struct Answer {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

async fn execute(client: &Client, sql: &str, max_rows: usize) -> Result<SqlOutcome, ClusterError> {
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
                    rows: Vec::new(),
                };
            }
            // Rows past the limit are only counted (by the server, in CommandComplete).
            SimpleQueryMessage::Row(row) if current.rows.len() < max_rows => {
                current.rows.push(
                    (0..row.len())
                        .map(|i| row.get(i).map(str::to_owned))
                        .collect(),
                );
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

/// A failure while the SQL ran: PostgreSQL refusing it, or the cluster failing.
fn sql_error(e: &tokio_postgres::Error) -> ClusterError {
    match e.as_db_error() {
        Some(db) if !cluster_trouble(db.code().code()) => ClusterError::Refused(refusal(db)),
        _ => ClusterError::Infra(infra("running a database's SQL", e)),
    }
}
