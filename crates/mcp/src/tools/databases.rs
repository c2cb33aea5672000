//! The database tools: list and create databases, run SQL as a database's owner, and hand
//! an agent what a page needs to reach the data API. On the database service's use cases
//! with the REST API's codes; they need `base` in the credential's apps, as the database
//! API does. A database is named by its id or its slug (unique on the server).
//!
//! `database_keys` gives the anon key and never the service role key or the JWT secret:
//! whatever an agent is handed may end up in a page it builds, and a page is public code.
//! `rotate_database_keys` replaces the secret (a leaked key) and hands back the same.

use quire_databases::{DatabaseError, DatabaseView, SqlOutcome};
use quire_edge::AppState;
use quire_kernel::DatabaseId;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;

use super::calls::{json, parse};
use super::{Kind, READ, ToolError, refused, tool};
use crate::transport::Caller;

/// Longest cell of the text table, in characters: the whole value is in the structured
/// content; the table is for reading.
const MAX_CELL_CHARS: usize = 200;

/// What a rotation's answer tells the model to pass on: the new service role key and JWT
/// secret stay with the person, and what to use instead of a key revoked only by rotation.
const ROTATED_NOTE: &str = "The old anon and service role keys and end users' access tokens \
    no longer work; pages using the old anon key need the new one. The new service role key \
    and JWT secret are for the user alone (quire db secret, or the dashboard). For servers \
    and agents, a Quire key with the base app acts as service_role and is revocable one by one.";

/// The database tools, in the catalogue's order.
pub(super) fn catalogue() -> [Tool; 5] {
    [
        tool::<ListDatabasesArgs, DatabasesOut>(
            "list_databases",
            "List a project's PostgreSQL databases, newest first, with size and whether the data API is on; available is false when the server has no database service. Read-only.",
            READ,
        ),
        tool::<CreateDatabaseArgs, DatabaseOut>(
            "create_database",
            "Create a PostgreSQL database (slug unique on the server); expiresAt makes a scratch one, dropped then. Then use run_sql on it.",
            Kind {
                read_only: false,
                destructive: false,
                idempotent: false,
            },
        ),
        tool::<RunSqlArgs, SqlOut>(
            "run_sql",
            "Run SQL on a database (id or slug) as its owner; returns the last statement's columns, rows (at most 1,000) and rowCount. A PostgreSQL error is a tool error with its SQLSTATE. Ask the user before SQL that drops or deletes data.",
            Kind {
                read_only: false,
                destructive: true,
                idempotent: false,
            },
        ),
        tool::<DatabaseArgs, KeysOut>(
            "database_keys",
            "The url, restUrl and anon key a page needs to use a database (id or slug) with Supabase's clients, turning its data API on if off. Only the anon key, never the service role key. It is public: give every table row-level security policies before real data goes in.",
            Kind {
                read_only: false,
                destructive: false,
                idempotent: true,
            },
        ),
        tool::<DatabaseArgs, RotatedOut>(
            "rotate_database_keys",
            "Replace a database's (id or slug) keys after a leak: the old anon and service role keys and users' tokens stop working at once. Returns the new anon key. Ask the user first.",
            Kind {
                read_only: false,
                destructive: true,
                idempotent: false,
            },
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDatabasesArgs {
    /// Project slug; default: the home project.
    pub project: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDatabaseArgs {
    /// 3-30 lowercase letters, digits or underscores, unique on the server.
    pub slug: String,
    /// 1-100 characters; default the slug.
    pub name: Option<String>,
    /// Project slug; default: the home project.
    pub project: Option<String>,
    /// RFC 3339, in the future: the database is dropped then.
    #[serde(rename = "expiresAt", alias = "expires_at")]
    pub expires_at: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSqlArgs {
    /// The database: id or slug.
    pub database: String,
    /// One statement or several (at most 1 MiB); the answer is the last one's result.
    pub sql: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatabaseArgs {
    /// The database: id or slug.
    pub database: String,
}

/// A database as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseOut {
    pub id: String,
    pub slug: String,
    pub name: String,
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    pub data_api_enabled: bool,
    /// What Supabase's clients take as their URL.
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    pub created_at: String,
}

impl From<DatabaseView> for DatabaseOut {
    fn from(v: DatabaseView) -> Self {
        let d = v.database;
        Self {
            id: d.id.0.to_string(),
            slug: d.slug.as_str().to_owned(),
            name: d.name,
            project: v.project_slug.as_str().to_owned(),
            size_bytes: v.size_bytes,
            data_api_enabled: d.data_api_enabled,
            url: v.api_url,
            expires_at: d.expires_at.and_then(|t| t.format(&Rfc3339).ok()),
            created_at: d.created_at.format(&Rfc3339).unwrap_or_default(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DatabasesOut {
    pub databases: Vec<DatabaseOut>,
    pub project: String,
    /// `false`: this server has no database service (the operator must turn it on).
    pub available: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SqlOut {
    pub columns: Vec<String>,
    /// At most 1,000 rows, values in column order.
    #[schemars(schema_with = "rows_schema")]
    pub rows: Vec<Vec<Value>>,
    /// Rows returned or changed (all of them when more than 1,000 were returned).
    pub row_count: u64,
}

/// Rows of values of any type. Written out: schemars says "any" as a bare `true`, which
/// clients that map schemas onto a stricter dialect refuse (the Inspector's `--strict`).
fn rows_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "array", "items": {}}
    })
}

/// What a page needs to reach the data API, and nothing more.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeysOut {
    pub url: String,
    pub rest_url: String,
    pub anon_key: String,
}

/// A rotation's answer: the new anon key and where it works, and what else changed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotatedOut {
    pub url: String,
    pub rest_url: String,
    pub anon_key: String,
    pub note: String,
}

/// A refusal as the model reads it; PostgreSQL's with its SQLSTATE and what else it said.
fn database_refused(e: DatabaseError) -> ToolError {
    let DatabaseError::Sql(r) = e else {
        return refused(e);
    };
    let mut message = format!("{} (SQLSTATE {})", r.message, r.sqlstate);
    if let Some(position) = r.position {
        message.push_str(&format!(" at character {position}"));
    }
    if let Some(detail) = r.detail {
        message.push_str(&format!("; detail: {detail}"));
    }
    if let Some(hint) = r.hint {
        message.push_str(&format!("; hint: {hint}"));
    }
    ToolError::new("sql_error", message)
}

/// The database named by its id, or by its slug among the databases the credential reaches:
/// the home project's first, then (for a credential that may list projects) the others'.
async fn find(state: &AppState, caller: &Caller, name: &str) -> Result<DatabaseView, ToolError> {
    let name = name.trim();
    if let Ok(id) = uuid::Uuid::parse_str(name) {
        return state
            .databases
            .get(&caller.principal, DatabaseId(id))
            .await
            .map_err(database_refused);
    }
    let not_found = || {
        ToolError::new(
            "not_found",
            format!("no database is named {name:?} in the credential's projects"),
        )
    };
    if !state.databases.available() {
        return Err(refused(DatabaseError::Unavailable));
    }
    let (home, home_slug) = state
        .databases
        .list(&caller.principal, None)
        .await
        .map_err(database_refused)?;
    if let Some(view) = home.into_iter().find(|v| v.database.slug.as_str() == name) {
        return Ok(view);
    }
    let Ok(projects) = state.projects.list(&caller.principal).await else {
        return Err(not_found());
    };
    for project in projects.into_iter().filter(|p| p.slug != home_slug) {
        let Ok((views, _)) = state
            .databases
            .list(&caller.principal, Some(project.slug.as_str()))
            .await
        else {
            continue;
        };
        if let Some(view) = views.into_iter().find(|v| v.database.slug.as_str() == name) {
            return Ok(view);
        }
    }
    Err(not_found())
}

pub(super) async fn list_databases(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
) -> Result<Value, ToolError> {
    let sent: ListDatabasesArgs = parse(args)?;
    let (views, project) = state
        .databases
        .list(&caller.principal, sent.project.as_deref())
        .await
        .map_err(database_refused)?;
    json(&DatabasesOut {
        databases: views.into_iter().map(DatabaseOut::from).collect(),
        project: project.as_str().to_owned(),
        available: state.databases.available(),
    })
}

pub(super) async fn create_database(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<Value, ToolError> {
    let sent: CreateDatabaseArgs = parse(args)?;
    let view = state
        .databases
        .create(
            &caller.principal,
            quire_databases::NewDatabase {
                slug: sent.slug,
                name: sent.name,
                project: sent.project,
                expires_at: sent.expires_at,
            },
        )
        .await
        .map_err(database_refused)?;
    *target = Some(view.database.id.0.to_string());
    json(&DatabaseOut::from(view))
}

pub(super) async fn run_sql(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<Value, ToolError> {
    let sent: RunSqlArgs = parse(args)?;
    let id = find(state, caller, &sent.database).await?.database.id;
    *target = Some(id.0.to_string());
    let SqlOutcome {
        columns,
        rows,
        row_count,
    } = state
        .databases
        .query(&caller.principal, id, &sent.sql)
        .await
        .map_err(database_refused)?;
    json(&SqlOut {
        columns,
        rows,
        row_count,
    })
}

pub(super) async fn database_keys(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<Value, ToolError> {
    let sent: DatabaseArgs = parse(args)?;
    let view = find(state, caller, &sent.database).await?;
    let id = view.database.id;
    *target = Some(id.0.to_string());
    if !view.database.data_api_enabled {
        state
            .databases
            .enable_data_api(&caller.principal, id)
            .await
            .map_err(database_refused)?;
    }
    let secret = state
        .databases
        .secret(&caller.principal, id)
        .await
        .map_err(database_refused)?;
    // The anon key alone: the service role key and the JWT secret stay with the person.
    json(&KeysOut {
        url: secret.api_url,
        rest_url: secret.rest_url,
        anon_key: secret.keys.anon,
    })
}

pub(super) async fn rotate_database_keys(
    state: &AppState,
    caller: &Caller,
    args: Option<JsonObject>,
    target: &mut Option<String>,
) -> Result<Value, ToolError> {
    let sent: DatabaseArgs = parse(args)?;
    let id = find(state, caller, &sent.database).await?.database.id;
    *target = Some(id.0.to_string());
    let secret = state
        .databases
        .rotate_secret(&caller.principal, id)
        .await
        .map_err(database_refused)?;
    // As `database_keys`: the anon key alone.
    json(&RotatedOut {
        url: secret.api_url,
        rest_url: secret.rest_url,
        anon_key: secret.keys.anon,
        note: ROTATED_NOTE.to_owned(),
    })
}

/// Why a credential may not call `name`: for the database tools, the app it lacks.
pub(super) fn scope_refusal(name: &str) -> String {
    let database =
        super::DATABASE_WRITE_TOOLS.contains(&name) || super::DATABASE_READ_TOOLS.contains(&name);
    if database {
        format!("this credential may not call {name}: the database tools need `base` in its apps")
    } else {
        format!("this credential may not call {name}")
    }
}

/// A tool's result: its value as structured content, and as text its JSON, but for
/// `run_sql`, whose text is a table for the model to read (the values themselves are in the
/// structured content).
pub(super) fn answer(tool: &str, value: Value) -> CallToolResult {
    let table = (tool == "run_sql")
        .then(|| serde_json::from_value::<SqlOutput>(value.clone()).ok())
        .flatten()
        .map(|out| text_table(&out.columns, &out.rows, out.row_count));
    let mut result = CallToolResult::structured(value);
    if let Some(table) = table {
        result.content = vec![ContentBlock::text(table)];
    }
    result
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SqlOutput {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
    row_count: u64,
}

fn cell(value: &Value) -> String {
    let text = match value {
        Value::Null => "NULL".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = text
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', " ");
    if text.chars().count() > MAX_CELL_CHARS {
        let cut: String = text.chars().take(MAX_CELL_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Columns and rows aligned as psql prints them, then the count.
fn text_table(columns: &[String], rows: &[Vec<Value>], row_count: u64) -> String {
    let plural = |n: u64| if n == 1 { "row" } else { "rows" };
    if columns.is_empty() {
        return format!("OK: {row_count} {} affected", plural(row_count));
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(cell).collect())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .filter_map(|row| row.get(i))
                .map(|s| s.chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: &mut dyn Iterator<Item = &String>| {
        let padded: Vec<String> = values
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        padded.join(" | ").trim_end().to_owned()
    };
    let mut text = line(&mut columns.iter());
    text.push('\n');
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    text.push_str(&rule.join("-+-"));
    text.push('\n');
    for row in &cells {
        text.push_str(&line(&mut row.iter()));
        text.push('\n');
    }
    let shown = rows.len() as u64;
    if shown < row_count {
        text.push_str(&format!(
            "({row_count} {}; the first {shown} are shown)",
            plural(row_count)
        ));
    } else {
        text.push_str(&format!("({row_count} {})", plural(row_count)));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_result_reads_as_an_aligned_table_with_its_count() {
        let columns = vec!["id".to_owned(), "name".to_owned()];
        let rows = vec![vec![json!(1), json!("tea")], vec![json!(10), Value::Null]];
        assert_eq!(
            text_table(&columns, &rows, 2),
            "id | name\n---+-----\n1  | tea\n10 | NULL\n(2 rows)"
        );
        assert_eq!(text_table(&[], &[], 1), "OK: 1 row affected");
        let long = json!("x".repeat(300));
        let cut = text_table(&["v".to_owned()], &[vec![long]], 5000);
        assert!(cut.contains(&format!("{}…", "x".repeat(200))), "{cut}");
        assert!(cut.ends_with("(5000 rows; the first 1 are shown)"), "{cut}");
    }

    #[test]
    fn a_sql_refusal_names_its_sqlstate_detail_and_hint() {
        let e = database_refused(DatabaseError::Sql(quire_databases::SqlRefusal {
            message: "relation \"nope\" does not exist".into(),
            sqlstate: "42P01".into(),
            detail: None,
            hint: Some("check the name".into()),
            position: Some(15),
        }));
        assert_eq!(e.code, "sql_error");
        assert_eq!(
            e.message,
            "relation \"nope\" does not exist (SQLSTATE 42P01) at character 15; hint: check the name"
        );
    }
}
