//! `/admin/oauth-clients`: the OAuth client registry: register (a confidential client's
//! secret shown once), list, delete.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_kernel::Principal;
use quire_oauth::ClientError;

use quire_edge::ApiError;
use quire_edge::AppState;

use super::Admin;
use crate::account::keys::day;
use crate::shared::guards::{Posted, SameOrigin};
use crate::shared::nav::{Who, section};
use crate::shared::render::{page, see_other};

const CLIENTS: &str = "/admin/oauth-clients";

struct ClientRow {
    id: String,
    /// The id as one path segment (a metadata document client's id is a URL).
    path: String,
    name: String,
    client_type: &'static str,
    redirect_uris: Vec<String>,
    created: String,
}

/// A client just registered: its id, and its secret if confidential (shown this once).
struct Registered {
    id: String,
    secret: Option<String>,
}

#[derive(Template)]
#[template(path = "admin_clients.html")]
struct ClientsPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    clients: Vec<ClientRow>,
    registered: Option<Registered>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ClientFields {
    name: String,
    client_type: String,
    /// One per line.
    redirect_uris: String,
}

async fn clients_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    status: StatusCode,
    error: Option<String>,
    registered: Option<Registered>,
) -> Result<HttpResponse, ApiError> {
    let clients = state
        .oauth_clients
        .list(principal)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|c| ClientRow {
            id: c.id.as_str().to_owned(),
            path: url::form_urlencoded::byte_serialize(c.id.as_str().as_bytes()).collect(),
            client_type: c.client_type.as_str(),
            redirect_uris: c
                .redirect_uris
                .iter()
                .map(|u| u.as_str().to_owned())
                .collect(),
            created: day(c.created_at),
            name: c.name,
        })
        .collect();
    page(
        state,
        status,
        &ClientsPage {
            signed_in_as: Who::acting(principal, handle, section::ADMIN),
            error,
            clients,
            registered,
        },
    )
}

/// `GET /admin/oauth-clients`.
pub async fn clients(
    state: web::Data<AppState>,
    Admin { account, principal }: Admin,
) -> Result<HttpResponse, ApiError> {
    clients_page(
        &state,
        &principal,
        account.handle.as_str(),
        StatusCode::OK,
        None,
        None,
    )
    .await
}

fn refusal_status(e: &ClientError) -> StatusCode {
    match e {
        ClientError::NotFound => StatusCode::NOT_FOUND,
        ClientError::Forbidden | ClientError::InsufficientScope => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// `POST /admin/oauth-clients`: registers a client.
pub async fn register_client(
    state: web::Data<AppState>,
    Posted(f, Admin { account, principal }): Posted<ClientFields, Admin>,
) -> Result<HttpResponse, ApiError> {
    let uris: Vec<String> = f
        .redirect_uris
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let (status, error, registered) = match state
        .oauth_clients
        .register(&principal, &f.name, &f.client_type, &uris)
        .await
    {
        Ok(r) => (
            StatusCode::OK,
            None,
            Some(Registered {
                id: r.client.id.as_str().to_owned(),
                secret: r.secret.map(|s| s.expose().to_owned()),
            }),
        ),
        Err(ClientError::Infra(cause)) => return Err(cause.into()),
        Err(e) => (refusal_status(&e), Some(e.to_string()), None),
    };
    clients_page(
        &state,
        &principal,
        account.handle.as_str(),
        status,
        error,
        registered,
    )
    .await
}

/// `POST /admin/oauth-clients/{id}/delete`: deletes a client (its tokens stop working).
pub async fn delete_client(
    state: web::Data<AppState>,
    id: web::Path<String>,
    SameOrigin(Admin { account, principal }): SameOrigin<Admin>,
) -> Result<HttpResponse, ApiError> {
    match state.oauth_clients.delete(&principal, &id).await {
        Ok(()) => Ok(see_other(CLIENTS)),
        Err(ClientError::Infra(cause)) => Err(cause.into()),
        Err(e) => {
            clients_page(
                &state,
                &principal,
                account.handle.as_str(),
                refusal_status(&e),
                Some(e.to_string()),
                None,
            )
            .await
        }
    }
}
