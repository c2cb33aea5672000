//! One request through the gateway, the spec's checks in order: the database (404
//! `database not found`), the path (404 `Not found`), the keys (401), the instance (503
//! `database starting` or too many connections, 502 `upstream unavailable`), then the REST
//! or the auth subset. The checks are the domain's (`DatabaseService::rest` for the REST
//! subset, the same steps one at a time for the auth subset, whose confirmation link is
//! open without a key); this file extracts what they read and maps what they answer.

use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, web};
use quire_dataapi::RestRequest;
use quire_databases::Credentials;
use quire_edge::AppState;

use crate::credentials::{StateKeys, apikey, bearer, without_apikey};
use crate::errors::{GatewayRefusal, preflight, refused, rest};

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
    // The raw path, so the REST grammar sees what the client encoded.
    let raw = req.uri().path();
    let tail = raw
        .strip_prefix(crate::PREFIX)
        .and_then(|p| p.strip_prefix('/'))
        .and_then(|p| p.split_once('/'))
        .map_or("", |(_, tail)| tail);
    match route(tail) {
        Route::Rest(path) => serve_rest(&state, &req, &slug, path, &body).await,
        Route::Auth(path) => serve_auth(&state, &req, &slug, path, &body).await,
        // The database is looked up first: an unknown one is what a wrong path under it
        // answers.
        Route::Elsewhere => match state.databases.data_api(&slug).await {
            Ok(_) => GatewayRefusal::PathNotFound.answer(),
            Err(e) => refused(&e),
        },
    }
}

/// A request of the REST subset; `path` is what follows `/rest/v1/`.
async fn serve_rest(
    state: &AppState,
    req: &HttpRequest,
    slug: &str,
    path: &str,
    body: &[u8],
) -> HttpResponse {
    let query = without_apikey(req.query_string());
    let request = RestRequest {
        method: req.method().as_str(),
        path,
        query: &query,
        prefer: header_str(req, header::HeaderName::from_static("prefer")),
        accept: header_str(req, header::ACCEPT),
        range: header_str(req, header::RANGE),
        content_type: header_str(req, header::CONTENT_TYPE),
        accept_profile: header_str(req, header::HeaderName::from_static("accept-profile")),
        content_profile: header_str(req, header::HeaderName::from_static("content-profile")),
        body,
    };
    let apikey = apikey(req);
    let bearer = bearer(req);
    let credentials = Credentials {
        apikey: apikey.as_deref(),
        bearer: bearer.as_deref(),
    };
    match state
        .databases
        .rest(slug, &request, credentials, &StateKeys(state))
        .await
    {
        Ok(answer) => rest(answer),
        Err(e) => refused(&e),
    }
}

/// A request of the auth subset; `path` is what follows `/auth/v1/`.
async fn serve_auth(
    state: &AppState,
    req: &HttpRequest,
    slug: &str,
    path: &str,
    body: &[u8],
) -> HttpResponse {
    let reach = match state.databases.data_api(slug).await {
        Ok(reach) => reach,
        Err(e) => return refused(&e),
    };
    // The confirmation link (its page and its button) is opened from an email, with no
    // key: as behind Supabase's Kong, it alone is open.
    let open = crate::auth::is_link(req, path);
    if open {
        if let Some(refusal) = crate::auth::refused_link(state, req, body) {
            // Nothing this gateway sent, or a post from elsewhere: no instance is started
            // for it.
            return refusal;
        }
        // Counted before the instance is reached, so a client past the link's limit
        // never wakes it.
        let client =
            quire_kernel::address_key(&quire_edge::client_ip::of(req, &state.trusted_proxies));
        let database = reach.target().database.id;
        if let Err(e) = state.databases.admit_link(database, &client).await {
            return crate::auth::link_refusal(&e);
        }
    } else {
        let apikey = apikey(req);
        let checked = state
            .databases
            .check_key(reach.target(), apikey.as_deref(), &StateKeys(state))
            .await;
        if let Err(e) = checked {
            return refused(&e);
        }
    }
    match state.databases.serve_data_api(reach).await {
        Ok(instance) => {
            let auth = state.databases.tenant_auth(instance);
            crate::auth::serve(state, req, auth, path, body).await
        }
        Err(e) => refused(&e),
    }
}
