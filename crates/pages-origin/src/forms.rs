//! The origin's own endpoints under `/-/`: the password form's post, the landing of the
//! dashboard's sign-in pass, and the health check.

use std::collections::HashMap;
use std::time::Duration;

use quire_serving::{Admitted, LinkUnlock, PassError, Unlock, UnlockError};

use super::PagesState;
use super::answers::{
    gone, infra_failure, not_found, notice, password_form, plain, redirect, with_cookie,
};
use quire_wire::origin::sent_from;
use quire_wire::{Request, Response};

/// The password form's post carries three short fields and a password.
pub(super) const FORM_LIMIT: usize = 16 * 1024;

/// The password form; a field it lacks is empty. `handle` counts only on the shared
/// origin: on an owner's origin the host names the owner. A URL link's form sends its
/// `code` instead of `handle`, `slug` and `next`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct UnlockForm {
    handle: String,
    slug: String,
    password: String,
    next: String,
    code: String,
}

/// The client address an attempt is counted against.
fn client_of(state: &PagesState, request: &Request<'_>) -> String {
    let forwarded: Vec<&str> = request.all("x-forwarded-for").collect();
    state
        .trusted_proxies
        .client(request.peer, &forwarded)
        .to_string()
}

/// `POST /s/{code}`: the continue page's button of a budgeted link, from its own page only
/// (a page elsewhere cannot spend the link's views).
pub(super) async fn confirm(state: &PagesState, request: &Request<'_>, code: &str) -> Response {
    let origin = state.origins().links_origin();
    if !sent_from(request.header("origin"), request.header("referer"), &origin) {
        return notice(
            403,
            "Refused",
            "A link's views can only be spent from its own continue page.",
        );
    }
    super::visit::short_link(state, request, code, true).await
}

/// Whether a post is a continue page's (its one field, `continue=1`): any other post to a
/// page's address is refused as before (405).
pub(super) fn is_continue(request: &Request<'_>) -> bool {
    request.body == b"continue=1"
}

/// `POST` of a budgeted page's address from its continue page: the view is spent and the
/// page sent, from the page's own origin only.
pub(super) async fn confirm_page(state: &PagesState, request: &Request<'_>) -> Response {
    let origin = match state.page_owner(request) {
        Some(Some(handle)) => state.origins().owner_origin(&handle),
        Some(None) => state.origins().links_origin(),
        None => return not_found(),
    };
    if !sent_from(request.header("origin"), request.header("referer"), &origin) {
        return notice(
            403,
            "Refused",
            "A page's views can only be spent from its own continue page.",
        );
    }
    super::visit::visit(state, request, true).await
}

/// The password form of a URL link, on the links origin.
async fn unlock_link(state: &PagesState, request: &Request<'_>, f: &UnlockForm) -> Response {
    let client = client_of(state, request);
    let attempt = LinkUnlock {
        code: &f.code,
        password: &f.password,
        client: &client,
    };
    answer_unlock(state, state.serving.unlock_link(attempt).await)
}

/// `POST /-/unlock`: the password form.
pub(super) async fn unlock(state: &PagesState, request: &Request<'_>) -> Response {
    // On a per-owner origin the host names the page's owner, never the form: a page could
    // otherwise post guesses for another owner's page from its own origin.
    let Some(owner) = state.page_owner(request) else {
        return not_found();
    };
    let origin = match &owner {
        Some(handle) => state.origins().owner_origin(handle),
        None => state.origins().links_origin(),
    };
    if !sent_from(request.header("origin"), request.header("referer"), &origin) {
        return notice(
            403,
            "Refused",
            "A page's password can only be sent from that page's own form.",
        );
    }
    let Ok(f) = serde_urlencoded::from_bytes::<UnlockForm>(request.body) else {
        return notice(400, "Bad request", "The form could not be read.");
    };
    if owner.is_none() && !f.code.is_empty() {
        return unlock_link(state, request, &f).await;
    }
    // The bare domain serves no page, so it takes no page's password.
    if matches!(state.target(request), super::Target::Links) {
        return not_found();
    }
    if !quire_pages::validate::is_slug(&f.slug) {
        return notice(400, "Bad request", "The form's slug is not a page's slug.");
    }
    let client = client_of(state, request);
    let attempt = Unlock {
        handle: owner.as_deref().unwrap_or(&f.handle),
        slug: &f.slug,
        password: &f.password,
        next: &f.next,
        client: &client,
    };
    answer_unlock(state, state.serving.unlock(attempt).await)
}

fn answer_unlock(state: &PagesState, result: Result<Admitted, UnlockError>) -> Response {
    let https = state.origins().https();
    match result {
        Ok(admitted) => with_cookie(
            redirect(303, &admitted.location),
            https,
            admitted.cookie.as_ref(),
        ),
        Err(UnlockError::Wrong(prompt)) => {
            password_form(401, &prompt, Some("That password is not right."))
        }
        Err(UnlockError::Throttled { retry_after_secs }) => {
            let minutes = Duration::from_secs(retry_after_secs).as_secs().div_ceil(60);
            notice(
                429,
                "Too many attempts",
                &format!(
                    "Too many passwords were tried for this page from your network. \
                     Try again in {minutes} minute(s)."
                ),
            )
            .header("retry-after", retry_after_secs.to_string())
        }
        Err(UnlockError::NotFound) => not_found(),
        Err(UnlockError::Gone) => gone(),
        Err(UnlockError::Infra(e)) => infra_failure(&e),
    }
}

/// `GET /-/pass?token=…&next=…`: the dashboard's hand-off for private and allow-list pages.
pub(super) async fn pass(state: &PagesState, request: &Request<'_>) -> Response {
    let q: HashMap<String, String> =
        serde_urlencoded::from_str::<Vec<(String, String)>>(request.query)
            .map(|pairs| pairs.into_iter().collect())
            .unwrap_or_default();
    let token = q.get("token").map_or("", String::as_str);
    let next = q.get("next").map_or("", String::as_str);
    let Some(owner) = state.page_owner(request) else {
        return not_found();
    };
    match state
        .serving
        .accept_pass(owner.as_deref(), token, next)
        .await
    {
        Ok(admitted) => with_cookie(
            redirect(303, &admitted.location),
            state.origins().https(),
            admitted.cookie.as_ref(),
        )
        .set_header("referrer-policy", "no-referrer"),
        Err(PassError::Forbidden) => notice(
            403,
            "This sign-in link has expired",
            "Sign-in links work once, within a minute. Open the page's address again to get a new one.",
        ),
        Err(PassError::NotFound) => not_found(),
        Err(PassError::Infra(e)) => infra_failure(&e),
    }
}

pub(super) fn healthz() -> Response {
    plain(200, "ok")
}
