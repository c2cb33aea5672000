//! `/admin/invitations`: the numbers that may activate an account, adding many at once (one
//! per line, all or none, as `admin invite import` does) and taking one off.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_accounts::{InviteError, Region};

use quire_edge::ApiError;
use quire_edge::AppState;

use super::Admin;
use crate::account::keys::day;
use crate::shared::guards::Posted;
use crate::shared::nav::Who;
use crate::shared::render::page;

struct InvitationRow {
    number: String,
    added: String,
    bound_to: Option<String>,
}

#[derive(Template)]
#[template(path = "admin_invitations.html")]
struct InvitationsPage {
    signed_in_as: Option<Who>,
    notice: Option<String>,
    error: Option<String>,
    invitations: Vec<InvitationRow>,
    /// What was typed, kept when the list was refused.
    numbers: String,
    region: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct InviteFields {
    numbers: String,
    number: String,
    region: String,
}

struct Outcome {
    status: StatusCode,
    notice: Option<String>,
    error: Option<String>,
    numbers: String,
    region: String,
}

impl Outcome {
    fn ok() -> Self {
        Self {
            status: StatusCode::OK,
            notice: None,
            error: None,
            numbers: String::new(),
            region: String::new(),
        }
    }
}

async fn invitations_page(
    state: &AppState,
    handle: &str,
    outcome: Outcome,
) -> Result<HttpResponse, ApiError> {
    let invitations = state
        .invitations
        .list()
        .await?
        .into_iter()
        .map(|i| InvitationRow {
            number: i.number.as_str().to_owned(),
            added: day(i.added_at),
            bound_to: i.bound_to.map(|(_, h)| h.as_str().to_owned()),
        })
        .collect();
    page(
        state,
        outcome.status,
        &InvitationsPage {
            signed_in_as: Who::platform_admin(handle),
            notice: outcome.notice,
            error: outcome.error,
            invitations,
            numbers: outcome.numbers,
            region: outcome.region,
        },
    )
}

fn region(raw: &str) -> Result<Option<Region>, String> {
    match raw.trim() {
        "" => Ok(None),
        code => code.parse().map(Some),
    }
}

fn refused(e: &impl ToString, f: InviteFields) -> Outcome {
    Outcome {
        status: StatusCode::BAD_REQUEST,
        error: Some(e.to_string()),
        numbers: f.numbers,
        region: f.region,
        ..Outcome::ok()
    }
}

/// `GET /admin/invitations`.
pub async fn invitations(
    state: web::Data<AppState>,
    Admin { account, .. }: Admin,
) -> Result<HttpResponse, ApiError> {
    invitations_page(&state, account.handle.as_str(), Outcome::ok()).await
}

/// `POST /admin/invitations`: `numbers`, one per line, read in `region` when written
/// without a country code.
pub async fn invite(
    state: web::Data<AppState>,
    Posted(f, Admin { account, .. }): Posted<InviteFields, Admin>,
) -> Result<HttpResponse, ApiError> {
    let outcome = match region(&f.region) {
        Err(e) => refused(&e, f),
        Ok(region) => match state.invitations.import(&f.numbers, region).await {
            Ok((listed, added)) => Outcome {
                notice: Some(format!(
                    "{added} of {listed} number{} added; the others were on the list already.",
                    if listed == 1 { "" } else { "s" }
                )),
                ..Outcome::ok()
            },
            Err(InviteError::Infra(cause)) => return Err(cause.into()),
            Err(e) => refused(&e, f),
        },
    };
    invitations_page(&state, account.handle.as_str(), outcome).await
}

/// `POST /admin/invitations/remove`: takes `number` off the list (an account it activated
/// stays activated).
pub async fn uninvite(
    state: web::Data<AppState>,
    Posted(f, Admin { account, .. }): Posted<InviteFields, Admin>,
) -> Result<HttpResponse, ApiError> {
    let outcome = match state.invitations.remove(&f.number, None).await {
        Ok((number, true)) => Outcome {
            notice: Some(format!("{number} is off the list.")),
            ..Outcome::ok()
        },
        Ok((number, false)) => Outcome {
            status: StatusCode::NOT_FOUND,
            error: Some(format!("{number} was not on the list.")),
            ..Outcome::ok()
        },
        Err(InviteError::Infra(cause)) => return Err(cause.into()),
        Err(e) => refused(&e, f),
    };
    invitations_page(&state, account.handle.as_str(), outcome).await
}
