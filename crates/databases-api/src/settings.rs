//! `PATCH /api/database/v1/databases/{id}/data-api`: the data API's settings that PostgREST
//! leaves off by default, changed by the database's owner (the equivalent of PostgREST's
//! `ALTER ROLE authenticator SET pgrst.…`, which an owner here cannot run).

use actix_web::{patch, web};
use quire_databases::SettingsPatch;
use quire_edge::answer::Answer;
use quire_edge::auth::{BaseApp, Scoped};
use quire_edge::body::Body;
use quire_edge::json::{MaxViews, RequestBody, nullable, parse};
use quire_edge::refusals::ScopeRefusals;
use quire_edge::{ApiError, AppState};
use quire_kernel::ErrorCode;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::DatabaseDto;
use crate::routes::database_id;

/// The settings to change; a field left out keeps its value. Every one is off by default,
/// as in PostgREST, and applies whether the data API is on or off.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = crate::examples::settings_body)]
pub struct DataApiSettingsBody {
    /// The schemas requests reach, the default first (PostgREST's `db-schemas`): 1 to 16
    /// names as PostgreSQL writes them unquoted (letters, digits, `_`, `$`), none twice,
    /// not `auth`, `information_schema` or `pg_…`. `public` need not be among them. A
    /// schema the database lacks is accepted and named in `dataApi.missingSchemas`.
    #[serde(default)]
    #[schema(min_items = 1, max_items = 16)]
    pub exposed_schemas: Option<Vec<String>>,
    /// Most rows a read or a returned representation answers (`db-max-rows`), 1 to
    /// 1,000,000; `null` removes the cap.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<u64>, minimum = 1, maximum = 1_000_000)]
    pub max_rows: Option<Option<MaxViews>>,
    /// `count()`, `sum()`, `avg()`, `min()`, `max()` in `select` (`db-aggregates-enabled`).
    #[serde(default)]
    pub aggregates: Option<bool>,
    /// A request's plan through `Accept: application/vnd.pgrst.plan` (`db-plan-enabled`).
    #[serde(default)]
    pub explain: Option<bool>,
    /// `Prefer: tx=rollback` honoured (`db-tx-end = commit-allow-override`).
    #[serde(default)]
    pub tx_rollback: Option<bool>,
}

impl RequestBody for DataApiSettingsBody {
    const CODE: ErrorCode = ErrorCode::InvalidRequest;
}

/// Change the data API's settings. This replica takes them at once, the others within a
/// second. Answers the database, with the exposed schemas it does not have yet.
#[utoipa::path(tag = "databases",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    request_body = DataApiSettingsBody,
    responses(
        (status = 200, body = DatabaseDto),
        (status = 400, description = "invalid_json, invalid_request (the field and its rule; nothing changed)"),
        ScopeRefusals,
        (status = 404, description = "not_found"),
        (status = 503, description = "database_service_unavailable")))]
#[patch("/databases/{id}/data-api")]
pub async fn set_data_api_settings(
    state: web::Data<AppState>,
    auth: Scoped<BaseApp>,
    id: web::Path<String>,
    body: Body,
) -> Result<Answer<DatabaseDto>, ApiError> {
    let id = database_id(&id)?;
    if !state.databases.available() {
        return Err(quire_databases::DatabaseError::Unavailable.into());
    }
    let sent: DataApiSettingsBody = parse(&body.0)?;
    let patch = SettingsPatch {
        exposed_schemas: sent.exposed_schemas,
        max_rows: sent.max_rows.map(|m| m.map(MaxViews::get)),
        aggregates: sent.aggregates,
        explain: sent.explain,
        tx_rollback: sent.tx_rollback,
    };
    let view = state
        .databases
        .set_data_api_settings(&auth.0, id, patch)
        .await?;
    Ok(Answer::ok(DatabaseDto::from(view)))
}
