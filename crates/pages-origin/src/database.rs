//! `GET /-/db.json`: where the database a page names is, and its anon key, for the page's
//! own scripts (supabase-js' `createClient(url, anonKey)`), so no key is written into a page.
//!
//! A page asks at `/{slug}/-/db.json` (`/{handle}/{slug}/-/db.json` on a shared origin),
//! or at `/-/db.json` of its origin, where the page is the one the request's `Referer` names
//! on the same host (a browser's `fetch('/-/db.json')` from the page sends it). Either way
//! the page's own access rule decides, as for any of its files: a password page gives its
//! form to a visitor without its cookie, a private page its sign-in page. The answer is
//! never stored (`no-store`): the key goes only to whom the page admits now.

use std::borrow::Cow;

use quire_databases::DatabaseService;
use quire_kernel::ErrorCode;
use quire_serving::{PageDatabase, TokenKind, Visitor};
use quire_wire::{Request, Response};

use super::answers::{infra_failure, respond};
use super::visit::{cookie_values, principal};
use super::{PagesState, Target, request_host};

/// The path of the origin's own endpoint, and its suffix under a page.
pub(super) const DB_JSON: &str = "/-/db.json";

/// Whether `path` asks for a `/-/db.json` (the origin's or a page's).
pub(super) fn is_db_json(path: &str) -> bool {
    path.ends_with(DB_JSON)
}

/// The raw path of the page a `/-/db.json` request is for: before the suffix, or (the
/// origin's own) the page the same host's `Referer` names.
fn page_path<'a>(state: &PagesState, request: &Request<'a>) -> Option<Cow<'a, str>> {
    let before = request.path.strip_suffix(DB_JSON)?;
    if !before.is_empty() {
        return Some(Cow::Borrowed(before));
    }
    let referer = request.header("referer")?;
    let rest = referer
        .strip_prefix("https://")
        .or_else(|| referer.strip_prefix("http://"))?;
    let (host, path) = rest.split_at(rest.find('/')?);
    if !host.eq_ignore_ascii_case(request_host(request)) {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    // The page's own segments: `/{slug}`, or `/{handle}/{slug}` on a shared origin.
    let segments = if state.origins().per_owner() { 1 } else { 2 };
    let end = path
        .match_indices('/')
        .nth(segments)
        .map_or(path.len(), |(i, _)| i);
    Some(Cow::Owned(path[..end].to_owned()))
}

fn json(status: u16, body: &serde_json::Value) -> Response {
    Response::new(status)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .header("x-content-type-options", "nosniff")
        .body(body.to_string())
}

fn no_database() -> Response {
    json(
        404,
        &serde_json::json!({
            "error": ErrorCode::NotFound.as_str(),
            "message": "this page names no database whose data API is on",
        }),
    )
}

/// `GET`/`HEAD` of `/-/db.json`.
pub(super) async fn db_json(
    state: &PagesState,
    databases: &DatabaseService,
    request: &Request<'_>,
) -> Response {
    let owner = match state.target(request) {
        Target::Owner(handle) => Some(handle),
        Target::Shared => None,
        Target::Links | Target::Unknown => return no_database(),
    };
    let Some(path) = page_path(state, request) else {
        return no_database();
    };
    let principal = match principal(state, request).await {
        Ok(p) => p,
        Err(refusal) => return refusal,
    };
    let visitor = Visitor {
        principal: principal.as_ref(),
        unlock: cookie_values(request, TokenKind::Unlock),
        access: cookie_values(request, TokenKind::Access),
        view: cookie_values(request, TokenKind::View),
    };
    let gate = state
        .serving
        .page_database(owner.as_deref(), &path, &visitor)
        .await;
    let (account, project, slug) = match gate {
        Ok(PageDatabase::Open {
            account,
            project,
            database: Some(slug),
        }) => (account, project, slug),
        Ok(PageDatabase::Open { database: None, .. }) => return no_database(),
        Ok(PageDatabase::Refused(answer)) => {
            return respond(answer, state.origins().https())
                .set_header("cache-control", "no-store");
        }
        Err(e) => return infra_failure(&e),
    };
    match databases.page_client(account, project, &slug).await {
        Ok(Some(client)) => json(
            200,
            &serde_json::json!({
                "url": client.api_url,
                "restUrl": client.rest_url,
                "authUrl": client.auth_url,
                "anonKey": client.anon_key,
            }),
        ),
        Ok(None) => no_database(),
        Err(e) => infra_failure(&e),
    }
}
