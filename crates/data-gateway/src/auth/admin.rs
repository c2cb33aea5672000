//! The admin API, `/admin/users` and `/admin/generate_link`, for the database's
//! `service_role` key (or a Quire key that acts as it) as the bearer, as GoTrue's: the
//! bearer read as the REST subset reads it, the decision the domain's
//! ([`TenantAuth::admin`]). The list pages as GoTrue's (`page`, `per_page`, `Link` and
//! `X-Total-Count`).

use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use quire_databases::{
    Admin, AdminUser, AuthError, Credentials, LinkRequest, TenantAuth, UsersPage,
};
use quire_edge::AppState;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{answer, body, json_answer, not_found, query_value, refused};
use crate::credentials::{StateKeys, apikey, bearer, without_apikey};

/// `DELETE admin/users/{id}`'s body, which may be empty.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DeleteBody {
    should_soft_delete: bool,
}

/// One request under `admin/`; `route` is the path from `admin` on.
pub(super) async fn serve(
    state: &AppState,
    req: &HttpRequest,
    auth: &TenantAuth,
    route: &str,
    raw: &[u8],
) -> HttpResponse {
    let acting = match bearer(req) {
        None => None,
        Some(token) => {
            let apikey = apikey(req);
            let credentials = Credentials {
                apikey: apikey.as_deref(),
                bearer: Some(&token),
            };
            Some(
                state
                    .databases
                    .acting(auth.target(), credentials, &StateKeys(state))
                    .await,
            )
        }
    };
    let admin = match auth.admin(acting) {
        Ok(admin) => admin,
        Err(e) => return refused(&e),
    };
    let method = req.method();
    match (method, route) {
        (&Method::GET, "admin/users") => match list(admin, req).await {
            Ok(page) => listed(req, &page),
            Err(e) => refused(&e),
        },
        (&Method::POST, "admin/users") => answer(create(admin, raw).await),
        (&Method::POST, "admin/generate_link") => answer(generate_link(admin, req, raw).await),
        (_, route) => match route.strip_prefix("admin/users/") {
            Some(id) if !id.contains('/') => user(admin, method, id, raw).await,
            _ => not_found(),
        },
    }
}

/// `GET`, `PUT` and `DELETE admin/users/{id}`.
async fn user(admin: Admin<'_>, method: &Method, id: &str, raw: &[u8]) -> HttpResponse {
    match *method {
        Method::GET => answer(admin.get(id).await.map(|u| u.to_json())),
        Method::PUT => answer(update(admin, id, raw).await),
        Method::DELETE => {
            let deleted = async {
                let body: DeleteBody = if raw.iter().all(u8::is_ascii_whitespace) {
                    DeleteBody::default()
                } else {
                    body(raw)?
                };
                admin.delete(id, body.should_soft_delete).await
            };
            answer(deleted.await.map(|()| json!({})))
        }
        _ => not_found(),
    }
}

fn page_number(req: &HttpRequest, name: &str) -> Result<Option<u64>, AuthError> {
    query_value(req, name)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<u64>().map_err(|_| {
                AuthError::Validation(format!("Bad Pagination Parameters: {name} is not a number"))
            })
        })
        .transpose()
}

async fn list(admin: Admin<'_>, req: &HttpRequest) -> Result<UsersPage, AuthError> {
    admin
        .list(page_number(req, "page")?, page_number(req, "per_page")?)
        .await
}

/// `{users, aud}`, with GoTrue's `X-Total-Count` and `Link` (`next` while there is a page
/// after this one, and `last`), each link this path and query with another `page`.
fn listed(req: &HttpRequest, page: &UsersPage) -> HttpResponse {
    let users: Vec<Value> = page.users.iter().map(|u| u.to_json()).collect();
    let mut response = json_answer(
        StatusCode::OK,
        &json!({"users": users, "aud": "authenticated"}),
    );
    let query = without_apikey(req.query_string());
    let at_page = |n: u64| {
        let mut kept = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            if name != "page" {
                kept.append_pair(&name, &value);
            }
        }
        kept.append_pair("page", &n.to_string());
        format!("<{}?{}>", req.path(), kept.finish())
    };
    let last = page.last_page();
    let mut links = Vec::new();
    if page.page < last {
        links.push(format!("{}; rel=\"next\"", at_page(page.page + 1)));
    }
    links.push(format!("{}; rel=\"last\"", at_page(last)));
    for (name, value) in [
        ("link", links.join(", ")),
        ("x-total-count", page.total.to_string()),
    ] {
        if let Ok(value) = header::HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(header::HeaderName::from_static(name), value);
        }
    }
    response
}

async fn create(admin: Admin<'_>, raw: &[u8]) -> Result<Value, AuthError> {
    let attributes: AdminUser = body(raw)?;
    Ok(admin.create(attributes).await?.to_json())
}

async fn update(admin: Admin<'_>, id: &str, raw: &[u8]) -> Result<Value, AuthError> {
    let attributes: AdminUser = body(raw)?;
    Ok(admin.update(id, attributes).await?.to_json())
}

async fn generate_link(
    admin: Admin<'_>,
    req: &HttpRequest,
    raw: &[u8],
) -> Result<Value, AuthError> {
    let request: LinkRequest = body(raw)?;
    let redirect_to = query_value(req, "redirect_to");
    Ok(admin
        .generate_link(request, redirect_to.as_deref())
        .await?
        .to_json())
}
