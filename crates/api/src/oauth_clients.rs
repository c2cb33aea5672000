//! `/api/platform/v1/oauth-clients…`: the OAuth client registry, for the platform admin
//! account's master keys.

use actix_web::web;
use actix_web::{delete, get, post};
use quire_kernel::Paged;
use quire_oauth::{ClientService, OAUTH_CLIENTS_LIST};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::dto::{OAuthClientDto, OAuthClientEnvelope, OAuthClientList};
use crate::{PLATFORM, schema};
use quire_edge::ApiError;
use quire_edge::AppState;
use quire_edge::answer::{Answer, Created, NoContent, NoStore};
use quire_edge::auth::Authenticated;
use quire_edge::body::Body;
use quire_edge::json::{RequestBody, parse};
use quire_edge::paging::PagingQuery;
use quire_edge::refusals::AdminRefusals;

/// List the live clients.
///
/// Oldest first: all of them, or a page of them with `limit` and `cursor`.
#[utoipa::path(tag = "oauth-clients",
    security(("bearer" = [])),
    params(PagingQuery),
    responses(
        (status = 200, body = OAuthClientList),
        (status = 400, description = "invalid_limit, invalid_cursor"),
        (status = 403, description = "insufficient_scope (not a master key), forbidden (not the platform admin account), not_activated")))]
#[get("/oauth-clients")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Authenticated,
    paging: web::Query<PagingQuery>,
) -> Result<Answer<OAuthClientList>, ApiError> {
    let page = match paging.paging(OAUTH_CLIENTS_LIST)? {
        Some(paging) => state.oauth_clients.list_page(&auth.0, &paging).await?,
        None => Paged {
            items: state.oauth_clients.list(&auth.0).await?,
            next_cursor: None,
        },
    };
    Ok(Answer::ok(OAuthClientList {
        clients: page
            .items
            .into_iter()
            .map(|c| OAuthClientDto::new(c, None))
            .collect(),
        next_cursor: page.next_cursor,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = crate::examples::register_client_request)]
pub struct RegisterClientRequest {
    /// Trimmed when stored.
    #[schema(schema_with = schema::oauth_client_name)]
    pub name: String,
    /// Absolute URIs: https; http on 127.0.0.1 or [::1] only (any port when matched); a
    /// reverse-DNS private scheme for public clients. No fragment, user name or wildcard.
    #[schema(schema_with = schema::redirect_uris)]
    pub redirect_uris: Vec<String>,
    #[schema(schema_with = schema::oauth_client_type)]
    pub client_type: String,
}

impl RequestBody for RegisterClientRequest {}

/// Register a client. A confidential client's `client_secret` is in this response only.
#[utoipa::path(tag = "oauth-clients",
    security(("bearer" = [])),
    request_body = RegisterClientRequest,
    responses(
        (status = 201, body = OAuthClientEnvelope,
            headers(("Location" = String, description = "The client's URL: `/api/platform/v1/oauth-clients/{client_id}`"))),
        (status = 400, description = "invalid_json; invalid_body naming the field (name, client_type, redirect_uris[i])"),
        AdminRefusals))]
#[post("/oauth-clients")]
pub async fn register(
    state: web::Data<AppState>,
    auth: Authenticated,
    body: Body,
) -> Result<NoStore<Created<OAuthClientEnvelope>>, ApiError> {
    ClientService::authorize(&auth.0)?;
    let body: RegisterClientRequest = parse(&body.0)?;
    let registered = state
        .oauth_clients
        .register(&auth.0, &body.name, &body.client_type, &body.redirect_uris)
        .await?;
    let location = format!("{PLATFORM}/oauth-clients/{}", registered.client.id.as_str());
    Ok(NoStore(Created::at(
        location,
        OAuthClientEnvelope {
            client: OAuthClientDto::new(registered.client, registered.secret.as_ref()),
        },
    )))
}

/// One live client.
#[utoipa::path(tag = "oauth-clients",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = OAuthClientEnvelope),
        AdminRefusals,
        (status = 404, description = "not_found (unknown or deleted)")))]
#[get("/oauth-clients/{id}")]
pub async fn get(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<Answer<OAuthClientEnvelope>, ApiError> {
    let client = state.oauth_clients.get(&auth.0, &id).await?;
    Ok(Answer::ok(OAuthClientEnvelope {
        client: OAuthClientDto::new(client, None),
    }))
}

/// Delete a client: its id is never reused, and projects naming it forget it.
#[utoipa::path(tag = "oauth-clients",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        AdminRefusals,
        (status = 404, description = "not_found (unknown or already deleted)")))]
#[delete("/oauth-clients/{id}")]
pub async fn delete(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<NoContent, ApiError> {
    state.oauth_clients.delete(&auth.0, &id).await?;
    Ok(NoContent)
}

/// Give a confidential client a new secret (in this response only); the old one stops
/// working at once.
#[utoipa::path(tag = "oauth-clients",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, body = OAuthClientEnvelope),
        (status = 400, description = "invalid_body (a public client has no secret)"),
        AdminRefusals,
        (status = 404, description = "not_found")))]
#[post("/oauth-clients/{id}/secret")]
pub async fn rotate_secret(
    state: web::Data<AppState>,
    auth: Authenticated,
    id: web::Path<String>,
) -> Result<NoStore<Answer<OAuthClientEnvelope>>, ApiError> {
    let rotated = state.oauth_clients.rotate_secret(&auth.0, &id).await?;
    Ok(NoStore(Answer::ok(OAuthClientEnvelope {
        client: OAuthClientDto::new(rotated.client, rotated.secret.as_ref()),
    })))
}
