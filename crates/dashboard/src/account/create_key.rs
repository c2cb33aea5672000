//! `POST /api/account/keys`: the dashboard's create-key action, the one way besides the
//! device login to obtain a master key. The key is shown once, on the answer page itself
//! (`no-store`): never in a redirect, a cookie or a log.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, post, web};
use askama::Template;
use quire_kernel::ErrorCode;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::nav::{Who, section};
use crate::shared::render::page;
use quire_accounts::Account;

use crate::shared::guards::{Decider, Guard, Posted, Refusal};

#[derive(Template)]
#[template(path = "key_created.html")]
struct KeyCreatedPage<'a> {
    signed_in_as: Option<Who>,
    master: bool,
    name: &'a str,
    key: &'a str,
}

/// The create-key form.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct CreateKeyForm {
    name: String,
}

/// Who may create a master key: a [`Decider`] whose account is activated.
#[derive(Debug)]
struct KeyCreator(Account);

impl Guard for KeyCreator {
    async fn check(state: &AppState, req: &HttpRequest) -> Result<Self, Refusal> {
        let Decider { account, .. } = Decider::check(state, req).await?;
        if account.activated_at.is_none() {
            return Err(ApiError::new(
                ErrorCode::NotActivated,
                "activate the account before creating keys",
            )
            .into());
        }
        Ok(KeyCreator(account))
    }
}

/// Create a master key from the dashboard.
#[utoipa::path(tag = "account",
    request_body(content_type = "application/x-www-form-urlencoded", description = "`name` (1-60 characters; default `dashboard`); sent by the dashboard's form with its session cookie", example = json!({"name": "laptop"})),
    responses(
        (status = 200, description = "an HTML page showing the new master key once (`Cache-Control: no-store`)"),
        (status = 400, description = "a name that is blank or over 60 characters"),
        (status = 401, description = "`not signed in`"),
        (status = 403, description = "`invalid origin` (cross-site post), mfa_required, not_activated")))]
#[post("/keys")]
pub async fn create_key(
    state: web::Data<AppState>,
    Posted(f, KeyCreator(account)): Posted<CreateKeyForm, KeyCreator>,
) -> Result<HttpResponse, ApiError> {
    let name = if f.name.trim().is_empty() {
        "dashboard"
    } else {
        f.name.as_str()
    };
    let (plaintext, record) = state.keys.mint_master(account.id, name).await?;
    tracing::info!(key_id = %record.id.0, "master key created from the dashboard");
    page(
        &state,
        StatusCode::OK,
        &KeyCreatedPage {
            signed_in_as: Who::of(&account, section::KEYS),
            master: true,
            name: &record.name,
            key: plaintext.expose(),
        },
    )
}
