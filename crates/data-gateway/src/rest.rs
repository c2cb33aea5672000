//! One request through the gateway, the spec's checks in order: the database (404
//! `database not found`), the path (404 `Not found`), the keys (401), the instance (503
//! `database starting` or too many connections, 502 `upstream unavailable`), then the REST
//! or the auth subset.

use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use quire_dataapi::{RestRequest, from_pg_error, plan, respond};
use quire_databases::{DatabaseError, GatewayError, InstanceError, KeyRole, RunError};
use quire_edge::{ApiError, AppState};

use crate::credentials::{Refused, checked_key, settle, without_apikey};
use crate::errors::{GatewayRefusal, cors, preflight, rest};

/// Where a path under `/db/{slug}/` leads.
enum Route<'a> {
    /// The REST subset; the path after `/rest/v1/`, still percent-encoded.
    Rest(&'a str),
    /// The auth subset; the path after `/auth/v1/`.
    Auth(&'a str),
    Elsewhere,
}

fn route(tail: &str) -> Route<'_> {
    if let Some(rest) = tail.strip_prefix("rest/v1/") {
        Route::Rest(rest)
    } else if let Some(auth) = tail.strip_prefix("auth/v1/") {
        Route::Auth(auth)
    } else {
        Route::Elsewhere
    }
}

fn header_str(req: &HttpRequest, name: header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

fn instance_refusal(e: &InstanceError) -> GatewayRefusal {
    GatewayRefusal::from(e)
}

/// PostgREST's codes for a table, function or column not in the schema cache.
fn names_unknown(code: &str) -> bool {
    matches!(code, "PGRST205" | "PGRST202" | "PGRST204")
}

/// Every method under `/db/{slug}/`.
pub async fn serve(
    state: web::Data<AppState>,
    req: HttpRequest,
    slug: web::Path<(String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    if req.method() == Method::OPTIONS {
        return preflight();
    }
    let (slug, _) = slug.into_inner();
    let reach = match state.databases.data_api(&slug).await {
        Ok(reach) => reach,
        Err(GatewayError::NotFound) => return GatewayRefusal::DatabaseNotFound.answer(),
        Err(GatewayError::Service(DatabaseError::Unavailable)) => {
            return cors(ApiError::from(DatabaseError::Unavailable).error_response());
        }
        Err(GatewayError::Instance(e)) => return instance_refusal(&e).answer(),
        Err(GatewayError::Service(e)) => {
            tracing::error!(error = %e, "data gateway could not read a database");
            return GatewayRefusal::Internal.answer();
        }
    };
    // The raw path, so the REST grammar sees what the client encoded.
    let raw = req.uri().path();
    let tail = raw
        .strip_prefix(crate::PREFIX)
        .and_then(|p| p.strip_prefix('/'))
        .and_then(|p| p.split_once('/'))
        .map_or("", |(_, tail)| tail);
    let rest_path = match route(tail) {
        Route::Rest(path) => path,
        Route::Auth(path) => {
            // The confirmation link (its page and its button) is opened from an email,
            // with no key: as behind Supabase's Kong, it alone is open.
            let open = crate::auth::is_link(&req, path);
            if open && let Some(refusal) = crate::auth::refused_link(&state, &req, &body) {
                // Nothing this gateway sent, or a post from elsewhere: no instance is
                // started for it.
                return refusal;
            }
            if open {
                // Counted before the instance is reached, so a client past the link's
                // limit never wakes it.
                let client = quire_kernel::address_key(&quire_edge::client_ip::of(
                    &req,
                    &state.trusted_proxies,
                ));
                let database = reach.target().database.id;
                if let Err(e) = state.databases.admit_link(database, &client).await {
                    return crate::auth::link_refusal(&e);
                }
            }
            if !open && let Err(refusal) = checked_key(&state, &req, reach.target()).await {
                return refusal.answer();
            }
            return match state.databases.serve_data_api(reach).await {
                Ok(instance) => {
                    let auth = state.databases.tenant_auth(instance);
                    crate::auth::serve(&state, &req, auth, path, &body).await
                }
                Err(GatewayError::Instance(e)) => instance_refusal(&e).answer(),
                Err(e) => {
                    tracing::error!(error = %e, "data gateway could not start an instance");
                    GatewayRefusal::Internal.answer()
                }
            };
        }
        Route::Elsewhere => return GatewayRefusal::PathNotFound.answer(),
    };
    let acting = match settle(&state, &req, reach.target()).await {
        Ok(acting) => acting,
        Err(Refused::Gateway(refusal)) => return refusal.answer(),
        Err(Refused::Token(e)) => return rest(e.to_answer()),
    };
    let instance = match state.databases.serve_data_api(reach).await {
        Ok(instance) => instance,
        Err(GatewayError::Instance(e)) => return instance_refusal(&e).answer(),
        Err(e) => {
            tracing::error!(error = %e, "data gateway could not start an instance");
            return GatewayRefusal::Internal.answer();
        }
    };
    let query = without_apikey(req.query_string());
    let request = RestRequest {
        method: req.method().as_str(),
        path: rest_path,
        query: &query,
        prefer: header_str(&req, header::HeaderName::from_static("prefer")),
        accept: header_str(&req, header::ACCEPT),
        range: header_str(&req, header::RANGE),
        content_type: header_str(&req, header::CONTENT_TYPE),
        body: &body,
    };
    let planned = match plan(&request, &instance.schema()) {
        Ok(planned) => planned,
        // A name the cache lacks may be one the DDL just made, before its notification
        // came: the schema is loaded again (at most once a second) and the plan retried.
        Err(e) if names_unknown(&e.code) && instance.reload_schema().await => {
            match plan(&request, &instance.schema()) {
                Ok(planned) => planned,
                Err(e) => return rest(e.to_answer()),
            }
        }
        Err(e) => return rest(e.to_answer()),
    };
    match instance.run(acting.role, &acting.claims, &planned).await {
        Ok(row) => match respond(&planned, row) {
            Ok(answer) => rest(answer),
            Err(e) => rest(e.to_answer()),
        },
        Err(RunError::Refused(pg)) => rest(
            from_pg_error(
                &pg.sqlstate,
                &pg.message,
                pg.detail.as_deref(),
                pg.hint.as_deref(),
                acting.role == KeyRole::Anon,
            )
            .to_answer(),
        ),
        Err(RunError::Instance(e)) => instance_refusal(&e).answer(),
        Err(RunError::Infra(e)) => {
            tracing::error!(error = %e, "data gateway request failed");
            GatewayRefusal::Internal.answer()
        }
    }
}
