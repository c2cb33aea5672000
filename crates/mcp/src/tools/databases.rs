//! The database tools: list and create databases, run SQL as a database's owner, and hand
//! an agent what a page needs to reach the data API. On the database service's use cases
//! with the REST API's codes; they need `base` in the credential's apps, as the database
//! API does. A database is named by its id or its slug (unique on the server).
//!
//! `database_keys` gives the anon key and never the service role key or the JWT secret:
//! whatever an agent is handed may end up in a page it builds, and a page is public code.
//! `rotate_database_keys` replaces the secret (a leaked key) and hands back the same.
//!
//! The list, `run_sql` and `database_keys` say which tables whoever holds the anon key can
//! reach with no row-level security (`openTables`), and `run_sql`'s text ends with a
//! warning naming them: the agent is the one making tables for pages that hand out that
//! key.

use quire_databases::{DataApiSettings, DatabaseError, DatabaseView, OpenTable, SqlOutcome};
use quire_kernel::DatabaseId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;

use super::common::{Call, ToolError, id_in, refused};

mod text;

pub(super) use text::sql_table;

/// What a rotation's answer tells the model to pass on: the new service role key and JWT
/// secret stay with the person, and what to use instead of a key revoked only by rotation.
const ROTATED_NOTE: &str = "The old anon and service role keys and end users' access tokens \
    no longer work; pages using the old anon key need the new one. The new service role key \
    and JWT secret are for the user alone (quire db secret, or the dashboard). For servers \
    and agents, a Quire key with the base app acts as service_role and is revocable one by one.";

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
    /// PostgREST's off-by-default settings on (`quire db settings`).
    pub data_api_settings: String,
    /// What Supabase's clients take as their URL.
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    pub created_at: String,
    /// Tables and views in `public` that anyone with the anon key can reach with no
    /// row-level security; absent when they could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_tables: Option<Vec<String>>,
}

/// The data API's settings as a line the model reads (short, as `open_lines`): what differs
/// from PostgREST's defaults, or `defaults`.
fn settings_line(s: &DataApiSettings) -> String {
    let mut parts = Vec::new();
    if s.exposed_schemas != ["public"] {
        parts.push(format!("schemas {}", s.exposed_schemas.join(", ")));
    }
    if let Some(n) = s.max_rows {
        parts.push(format!("max rows {n}"));
    }
    let on: Vec<&str> = [
        (s.aggregates, "aggregates"),
        (s.explain, "explain"),
        (s.tx_rollback, "tx=rollback"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if !on.is_empty() {
        parts.push(format!("{} on", on.join(", ")));
    }
    if parts.is_empty() {
        "defaults".to_owned()
    } else {
        parts.join("; ")
    }
}

/// The tables and views that `anon` reaches with nothing to stop it (row-level security
/// off, or a view that is not `security_invoker`), each as `name (kind: what anon may do)`:
/// a line the model reads, and short, since every database tool's output schema carries it
/// and `tools/list` stays under 25 KiB.
fn open_lines(tables: Option<Vec<OpenTable>>) -> Option<Vec<String>> {
    tables.map(|t| {
        t.into_iter()
            .map(|t| format!("{} ({}: {})", t.name, t.kind, t.privileges.join(", ")))
            .collect()
    })
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
            data_api_settings: settings_line(&d.data_api_settings),
            url: v.api_url,
            expires_at: d.expires_at.and_then(|t| t.format(&Rfc3339).ok()),
            created_at: d.created_at.format(&Rfc3339).unwrap_or_default(),
            open_tables: open_lines(v.open_tables),
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
    /// What the SQL left open to anyone with the anon key, with no row-level security;
    /// absent when it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_tables: Option<Vec<String>>,
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
    /// The tables this key reaches with no row-level security: give them policies before
    /// real data goes in. Absent when they could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_tables: Option<Vec<String>>,
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
async fn find(cx: &Call<'_>, name: &str) -> Result<DatabaseView, ToolError> {
    let (state, principal) = (cx.state, cx.principal());
    let name = name.trim();
    if let Some(id) = id_in(name) {
        return state
            .databases
            .get(principal, DatabaseId(id))
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
        .list(principal, None)
        .await
        .map_err(database_refused)?;
    if let Some(view) = home.into_iter().find(|v| v.database.slug.as_str() == name) {
        return Ok(view);
    }
    let Ok(projects) = state.projects.list(principal).await else {
        return Err(not_found());
    };
    for project in projects.into_iter().filter(|p| p.slug != home_slug) {
        let Ok((views, _)) = state
            .databases
            .list(principal, Some(project.slug.as_str()))
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
    cx: &Call<'_>,
    sent: ListDatabasesArgs,
) -> Result<DatabasesOut, ToolError> {
    let databases = &cx.state.databases;
    let (mut views, project) = databases
        .list(cx.principal(), sent.project.as_deref())
        .await
        .map_err(database_refused)?;
    databases.open_tables_of(&mut views).await;
    Ok(DatabasesOut {
        databases: views.into_iter().map(DatabaseOut::from).collect(),
        project: project.as_str().to_owned(),
        available: databases.available(),
    })
}

pub(super) async fn create_database(
    cx: &Call<'_>,
    sent: CreateDatabaseArgs,
) -> Result<DatabaseOut, ToolError> {
    let view = cx
        .state
        .databases
        .create(
            cx.principal(),
            quire_databases::NewDatabase {
                slug: sent.slug,
                name: sent.name,
                project: sent.project,
                expires_at: sent.expires_at,
            },
        )
        .await
        .map_err(database_refused)?;
    cx.acts_on(view.database.id.0);
    Ok(DatabaseOut::from(view))
}

pub(super) async fn run_sql(cx: &Call<'_>, sent: RunSqlArgs) -> Result<SqlOut, ToolError> {
    let id = find(cx, &sent.database).await?.database.id;
    cx.acts_on(id.0);
    let SqlOutcome {
        columns,
        rows,
        row_count,
        open_tables,
    } = cx
        .state
        .databases
        .query(cx.principal(), id, &sent.sql)
        .await
        .map_err(database_refused)?;
    Ok(SqlOut {
        columns,
        rows,
        row_count,
        open_tables: open_lines(open_tables),
    })
}

pub(super) async fn database_keys(cx: &Call<'_>, sent: DatabaseArgs) -> Result<KeysOut, ToolError> {
    let databases = &cx.state.databases;
    let mut view = find(cx, &sent.database).await?;
    let id = view.database.id;
    cx.acts_on(id.0);
    if !view.database.data_api_enabled {
        databases
            .enable_data_api(cx.principal(), id)
            .await
            .map_err(database_refused)?;
    }
    let secret = databases
        .secret(cx.principal(), id)
        .await
        .map_err(database_refused)?;
    databases
        .open_tables_of(std::slice::from_mut(&mut view))
        .await;
    // The anon key alone: the service role key and the JWT secret stay with the person.
    Ok(KeysOut {
        url: secret.api_url,
        rest_url: secret.rest_url,
        anon_key: secret.keys.anon,
        open_tables: open_lines(view.open_tables),
    })
}

pub(super) async fn rotate_database_keys(
    cx: &Call<'_>,
    sent: DatabaseArgs,
) -> Result<RotatedOut, ToolError> {
    let id = find(cx, &sent.database).await?.database.id;
    cx.acts_on(id.0);
    let secret = cx
        .state
        .databases
        .rotate_secret(cx.principal(), id)
        .await
        .map_err(database_refused)?;
    // As `database_keys`: the anon key alone.
    Ok(RotatedOut {
        url: secret.api_url,
        rest_url: secret.rest_url,
        anon_key: secret.keys.anon,
        note: ROTATED_NOTE.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_line_says_what_differs_from_postgrests_defaults() {
        assert_eq!(settings_line(&DataApiSettings::default()), "defaults");
        let on = DataApiSettings {
            exposed_schemas: vec!["api".into(), "public".into()],
            max_rows: Some(50),
            aggregates: true,
            explain: false,
            tx_rollback: true,
        };
        assert_eq!(
            settings_line(&on),
            "schemas api, public; max rows 50; aggregates, tx=rollback on"
        );
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
