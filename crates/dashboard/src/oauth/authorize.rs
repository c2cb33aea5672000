//! The OAuth authorization endpoint (`GET /oauth/authorize`), its consent page, and the
//! decision endpoint the page posts to.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, post, web};
use askama::Template;
use quire_kernel::App;
use quire_oauth::{Approve, AuthorizeError, AuthorizeRequest, ConsentRequest};

use quire_edge::AppState;
use quire_edge::{ApiError, SessionRefusal};

use crate::shared::guards::{Decider, Guard, Posted, Refusal, SignedIn};
use crate::shared::render::{page_posting_to, see_other};
use crate::shared::session::{approves, query, who};

struct ConsentView {
    request_id: String,
    client_name: String,
    client_id: String,
    client_type: &'static str,
    redirect_host: String,
    redirect_is_local: bool,
    /// The client registered itself (RFC 7591) or names its own metadata document: nobody
    /// vetted its name.
    unverified: bool,
    /// The host of the client's metadata document (its `client_id` is that URL): who
    /// vouches for the name, shown large.
    document_host: Option<String>,
    account: String,
    /// The projects the person may pick, the preselected one marked.
    projects: Vec<ProjectOption>,
    scopes: Vec<&'static str>,
    /// The request may write pages: the page offers "read only".
    offers_read_only: bool,
}

/// One project of the consent page's picker.
struct ProjectOption {
    id: String,
    slug: String,
    name: String,
    selected: bool,
}

#[derive(Template)]
#[template(path = "oauth_consent.html")]
struct ConsentPage {
    signed_in_as: Option<String>,
    error: Option<String>,
    request: Option<ConsentView>,
    /// The account is not activated: the page says to activate first, with no buttons;
    /// this is where to come back to afterwards (the same authorization request).
    activate_first: Option<String>,
}

fn scope_words(app: App, writable: bool) -> &'static str {
    match app {
        App::Page if !writable => "read pages and their files, without changing anything",
        App::Page => "publish, change and delete pages",
        App::Link => "create and change short links",
        App::Serve => "serve files",
        App::Base => "use databases",
    }
}

fn authorize_request(req: &HttpRequest) -> AuthorizeRequest {
    let mut q = query(req);
    AuthorizeRequest {
        response_type: q.remove("response_type"),
        client_id: q.remove("client_id"),
        redirect_uri: q.remove("redirect_uri"),
        scope: q.remove("scope"),
        state: q.remove("state"),
        code_challenge: q.remove("code_challenge"),
        code_challenge_method: q.remove("code_challenge_method"),
        resource: q.remove("resource"),
    }
}

/// The form-action source that lets the decision's redirect reach the client: its origin,
/// or its scheme for a private-use scheme.
fn redirect_source(uri: &str) -> String {
    match url::Url::parse(uri) {
        Ok(u) if u.has_host() => u.origin().ascii_serialization(),
        Ok(u) => format!("{}:", u.scheme()),
        Err(_) => String::new(),
    }
}

fn error_page(
    state: &AppState,
    status: StatusCode,
    message: &str,
    signed_in_as: Option<String>,
) -> Result<HttpResponse, ApiError> {
    page_posting_to(
        state,
        status,
        &ConsentPage {
            signed_in_as,
            error: Some(message.to_owned()),
            request: None,
            activate_first: None,
        },
        "",
    )
}

/// `GET /oauth/authorize`: a request whose client or redirect URI cannot be trusted gets an
/// error page; a visitor not signed in signs in first; other errors go back to the client;
/// a valid request shows the consent page. The client is checked before the session, so
/// the guard is asked here rather than in the signature.
pub async fn authorize(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, Refusal> {
    let request = authorize_request(&req);
    let (client, redirect_uri) = match state.oauth_consent.client_of(&request).await {
        Ok(checked) => checked,
        Err(AuthorizeError::NotRedirectable(message)) => {
            return Ok(error_page(&state, StatusCode::BAD_REQUEST, message, None)?);
        }
        Err(AuthorizeError::Infra(e)) => return Err(ApiError::from(e).into()),
        Err(AuthorizeError::Redirect(e)) => return Ok(see_other(&e.location())),
    };
    let SignedIn { session, account } = SignedIn::check(&state, &req).await?;
    // An OAuth client's token would answer not_activated anyway: activate first, then come
    // back to this same request (nothing is stored for it until then).
    if account.activated_at.is_none() {
        let back = req
            .uri()
            .path_and_query()
            .map_or_else(|| "/oauth/authorize".to_owned(), |p| p.as_str().to_owned());
        return Ok(page_posting_to(
            &state,
            StatusCode::OK,
            &ConsentPage {
                signed_in_as: who(&account),
                error: None,
                request: None,
                activate_first: Some(back),
            },
            "",
        )?);
    }
    let consent = match state
        .oauth_consent
        .begin_for(client, redirect_uri, &request, account.id, &session.id_hash)
        .await
    {
        Ok(c) => c,
        Err(AuthorizeError::Redirect(e)) => return Ok(see_other(&e.location())),
        Err(AuthorizeError::NotRedirectable(message)) => {
            return Ok(error_page(
                &state,
                StatusCode::BAD_REQUEST,
                message,
                who(&account),
            )?);
        }
        Err(AuthorizeError::Infra(e)) => return Err(ApiError::from(e).into()),
    };
    let source = redirect_source(&consent.redirect_uri);
    Ok(page_posting_to(
        &state,
        StatusCode::OK,
        &ConsentPage {
            signed_in_as: who(&account),
            error: None,
            request: Some(view(&consent, account.handle.as_str())),
            activate_first: None,
        },
        &source,
    )?)
}

fn view(consent: &ConsentRequest, account: &str) -> ConsentView {
    ConsentView {
        request_id: consent.request_id.expose().to_owned(),
        client_name: consent.client.name.clone(),
        client_id: consent.client.id.as_str().to_owned(),
        client_type: consent.client.client_type.as_str(),
        redirect_host: consent.redirect_host(),
        redirect_is_local: consent.redirect_is_local(),
        unverified: consent.client.is_unverified(),
        document_host: consent.client_document_host(),
        account: account.to_owned(),
        projects: consent
            .projects
            .iter()
            .map(|p| ProjectOption {
                id: p.id.to_string(),
                slug: p.slug.as_str().to_owned(),
                name: p.name.clone(),
                selected: p.id == consent.project.id,
            })
            .collect(),
        scopes: consent
            .scopes
            .apps()
            .map(|app| scope_words(app, consent.scopes.can_write(app)))
            .collect(),
        offers_read_only: consent.offers_read_only(),
    }
}

/// The consent page's form: its buttons, the project picked and the read-only choice.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct DecisionForm {
    request: String,
    decision: Option<String>,
    /// The picked project's id; absent, the preselected one.
    project: Option<String>,
    /// The "read only" checkbox: present when ticked.
    read_only: Option<String>,
}

/// `POST /api/oauth/decision`: Approve or Deny from the consent page.
#[utoipa::path(tag = "oauth",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`request` (the consent page's request id), `decision` (`approve` or `deny`), `project` (the id of the project the tokens act in: one of the account's; absent, the preselected one) and `read_only` (present: grant `page:read` instead of `page`); sent by the consent page's form with the dashboard session cookie", example = json!({"request": "Hq7vK2mX9pL4wR8t", "decision": "approve", "project": "0b0f7a4e-3c1d-4f5e-9a6b-7c8d9e0f1a2b", "read_only": "true"})),
    responses(
        (status = 303, description = "to the client's redirect URI: with `code` and `state` on approval, `error=access_denied` and `state` on denial"),
        (status = 400, description = "`invalid request`: a missing field, a request that is unknown, expired, already decided or another session's, a project the account cannot act in, or read only for a request without page access (the request stays pending)"),
        (status = 401, description = "`not signed in`"),
        (status = 403, description = "`invalid origin` (cross-site post), or mfa_required")))]
#[post("/api/oauth/decision")]
pub async fn decision(
    state: web::Data<AppState>,
    Posted(f, Decider { session, account }): Posted<DecisionForm, Decider>,
) -> Result<HttpResponse, ApiError> {
    let approve = approves(f.decision.as_deref())?;
    if f.request.is_empty() {
        return Err(ApiError::session(
            SessionRefusal::InvalidRequest,
            "request is required",
        ));
    }
    let location = state
        .oauth_consent
        .decide(
            &f.request,
            &session.id_hash,
            approve.then(|| Approve {
                account: account.id,
                project: f.project.filter(|p| !p.is_empty()),
                read_only: f.read_only.is_some_and(|v| !v.is_empty()),
            }),
        )
        .await?;
    Ok(see_other(&location))
}
