//! Sign-in for private and allow-list pages: the pages origin sends a visitor here, and a
//! pass for the page goes back only to a top-level navigation.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use quire_serving::{PageCard, PassError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::{Guard, Refusal, SignedIn};
use crate::shared::render::{page, see_other};
use crate::shared::session::{check_origin, form, query, who};

#[derive(Template)]
#[template(path = "visit_confirm.html")]
struct VisitConfirmPage {
    signed_in_as: Option<String>,
    email: String,
    /// The page asked for; `None` when the code names none (the post then says so).
    card: Option<PageCard>,
    page: String,
    next: String,
}

#[derive(Template)]
#[template(path = "visit_denied.html")]
struct VisitDeniedPage {
    signed_in_as: Option<String>,
    /// The page, when there is one (not shared with this account); `None`: no such page.
    card: Option<PageCard>,
    email: String,
}

/// The confirmation button of a hand-off to a page.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct VisitForm {
    page: String,
    next: String,
}

/// Whether the browser says this request is a top-level navigation (Fetch Metadata). A frame,
/// a fetch or an image says otherwise, and a client that sends no metadata proves nothing.
fn top_level_navigation(req: &HttpRequest) -> bool {
    let is = |name: &str, value: &str| {
        req.headers()
            .get(name)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
    };
    is("sec-fetch-dest", "document") && is("sec-fetch-mode", "navigate")
}

/// `GET /visit?page=CODE&next=PATH`: a private or allow-list page sends its visitor here to
/// sign in; a pass for the page comes back in a redirect. Only to a top-level navigation:
/// a page of another owner could otherwise load this in a hidden frame and receive the pass.
/// Anything else gets a button that the person clicks.
pub async fn visit(
    state: web::Data<AppState>,
    req: HttpRequest,
    by: SignedIn,
) -> Result<HttpResponse, ApiError> {
    let q = query(&req);
    let code = q.get("page").map_or("", String::as_str);
    let next = q.get("next").map_or("", String::as_str);
    hand_over(&state, by, code, next, top_level_navigation(&req)).await
}

/// `POST /visit`: the button of the confirmation page, from the dashboard's own origin. Its
/// body is read as actix's `Bytes` (not the dashboard's `Posted`), so the session is asked
/// for here, after the origin and the form.
pub async fn visit_confirmed(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, Refusal> {
    check_origin(&req, &state)?;
    let form: VisitForm = form(&body)?;
    let by = SignedIn::check(&state, &req).await?;
    let dest_ok = req
        .headers()
        .get("sec-fetch-dest")
        .is_none_or(|v| v.as_bytes().eq_ignore_ascii_case(b"document"));
    Ok(hand_over(&state, by, &form.page, &form.next, dest_ok).await?)
}

async fn hand_over(
    state: &AppState,
    SignedIn { session, account }: SignedIn,
    code: &str,
    next: &str,
    navigation: bool,
) -> Result<HttpResponse, ApiError> {
    if !navigation {
        return page(
            state,
            StatusCode::OK,
            &VisitConfirmPage {
                signed_in_as: who(&account),
                email: account.email.as_str().to_owned(),
                card: state.serving.page_card(code).await?,
                page: code.to_owned(),
                next: next.to_owned(),
            },
        );
    }
    let denied = |card: Option<PageCard>| VisitDeniedPage {
        signed_in_as: who(&account),
        card,
        email: account.email.as_str().to_owned(),
    };
    match state
        .serving
        .issue_pass(code, account.id, &account.email, &session.id_hash, next)
        .await
    {
        Ok(url) => Ok(see_other(&url)),
        Err(PassError::Forbidden) => {
            // Named only now, on the refusal: the pass itself costs no extra read.
            let card = state.serving.page_card(code).await?;
            let status = if card.is_some() {
                StatusCode::FORBIDDEN
            } else {
                StatusCode::NOT_FOUND
            };
            page(state, status, &denied(card))
        }
        Err(PassError::NotFound) => page(state, StatusCode::NOT_FOUND, &denied(None)),
        Err(PassError::Infra(e)) => Err(e.into()),
    }
}
