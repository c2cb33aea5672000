//! `/api/platform/v1/keys…`

use actix_web::web;
use actix_web::{delete, get, post};
use quire_kernel::{ErrorCode, KeyId, Paged};
use quire_keys::{KEYS_LIST, MintRequest};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{KeyDto, KeyList, MintedKeyDto};
use crate::projects::path_id;
use crate::{PLATFORM, schema};
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, Created, NoContent, NoStore};
use quire_edge::auth::Authenticated;
use quire_edge::body::Body;
use quire_edge::json::{RequestBody, parse, present};
use quire_edge::paging::PagingQuery;
use quire_edge::refusals::ScopeRefusals;

/// List every key of the account (never a plaintext or hash).
///
/// Oldest first: all of them, or a page of them with `limit` and `cursor`.
#[utoipa::path(tag = "keys",
    security(("bearer" = [])),
    params(PagingQuery),
    responses(
        (status = 200, body = KeyList),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        ScopeRefusals))]
#[get("/keys")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Authenticated,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<KeyList>, ApiError> {
    let page = match paging.paging(KEYS_LIST)? {
        Some(paging) => state.keys.list_page(&auth.0, &paging).await?,
        None => Paged {
            items: state.keys.list(&auth.0).await?,
            next_cursor: None,
        },
    };
    Ok(Answer::ok(KeyList {
        keys: page.items.into_iter().map(KeyDto::from).collect(),
        next_cursor: page.next_cursor,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::mint_key_request)]
pub struct MintKeyRequest {
    /// Trimmed when stored.
    #[schema(schema_with = schema::key_name)]
    pub name: String,
    #[schema(schema_with = schema::apps)]
    pub apps: Vec<String>,
    /// Home project slug; default: the account's default project.
    #[serde(default)]
    #[schema(schema_with = schema::project_slug_optional)]
    pub project: Option<String>,
    /// Refused: keys are scoped with `apps` now.
    #[serde(default, deserialize_with = "present")]
    #[schema(ignore)]
    pub app_id: bool,
}

impl RequestBody for MintKeyRequest {
    /// The spec gives `name` and `apps` mistakes a prose `error`.
    fn refuse(field: &str, message: String) -> ApiError {
        if field == "name" {
            ApiError::prose("name must be a string of 1-60 characters")
        } else if field == "apps" {
            ApiError::prose("apps must be a non-empty array of: page, serve, link, base")
        } else if field.starts_with("apps[") {
            ApiError::prose("apps must be an array of strings")
        } else {
            ApiError::new(ErrorCode::InvalidBody, message)
        }
    }
}

/// Mint an app key. The plaintext `key` is in this response only.
#[utoipa::path(tag = "keys",
    security(("bearer" = [])),
    request_body = MintKeyRequest,
    responses(
        (status = 201, body = MintedKeyDto,
            headers(("Location" = String, description = "The key's URL, where it is revoked: `/api/platform/v1/keys/{keyId}`"))),
        (status = 400, description = "invalid_json; invalid_body (project or app_id); for name/apps, `error` is prose"),
        ScopeRefusals))]
#[post("/keys")]
pub async fn mint(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: Body,
) -> Result<NoStore<Created<MintedKeyDto>>, ApiError> {
    let body: MintKeyRequest = parse(&body.0)?;
    if body.app_id {
        return Err(ApiError::new(
            ErrorCode::InvalidBody,
            "app_id is no longer accepted; scope keys with apps",
        ));
    }
    let minted = state
        .keys
        .mint(
            &auth.0,
            MintRequest {
                name: body.name,
                apps: body.apps,
                project: body.project,
            },
        )
        .await?;
    // The plaintext key is in this answer only: no cache may keep it.
    Ok(NoStore(Created::at(
        format!("{PLATFORM}/keys/{}", minted.record.id.0),
        MintedKeyDto::from(minted),
    )))
}

/// Revoke the API key making this call (any tier): how a client signs out. Revoking it
/// again is impossible, since a revoked key authenticates nothing (401 `invalid_api_key`).
#[utoipa::path(tag = "keys",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Revoked: the key authenticates nothing from now on"),
        (status = 400, description = "invalid_request: the credential is an OAuth access token, not an API key")))]
#[delete("/keys/current")]
pub async fn revoke_current(
    state: web::Data<AppState>,
    auth: Authenticated,
) -> Result<NoContent, ApiError> {
    state.keys.revoke_current(&auth.0).await?;
    Ok(NoContent)
}

/// Revoke a key of the account (not the one making this call).
#[utoipa::path(tag = "keys",
    security(("bearer" = [])),
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "cannot_revoke_current_key"),
        ScopeRefusals,
        (status = 404)))]
#[delete("/keys/{id}")]
pub async fn revoke(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    let id = KeyId(path_id(&id, "key")?);
    state.keys.revoke(&auth.0, id).await?;
    Ok(NoContent)
}
