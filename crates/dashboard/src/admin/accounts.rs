//! `/admin/accounts`: every account, with its standing and its use of each quota (marked
//! when near: 80 % or more), and activation by hand.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_accounts::AdminAccountsError;
use quire_kernel::{AccountId, ErrorCode, Principal};

use quire_edge::ApiError;
use quire_edge::AppState;

use super::Admin;
use crate::account::keys::day;
use crate::shared::guards::Posted;
use crate::shared::nav::{Who, section};
use crate::shared::quota_view::{self, QuotaFigure};
use crate::shared::render::{page, see_other};

const ACCOUNTS: &str = "/admin/accounts";

struct AccountRow {
    id: String,
    handle: String,
    email: String,
    verified: bool,
    activated: Option<String>,
    second_factor: bool,
    admin: bool,
    created: String,
    databases: QuotaFigure,
    database_bytes: QuotaFigure,
    object_bytes: QuotaFigure,
}

#[derive(Template)]
#[template(path = "admin_accounts.html")]
struct AccountsPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    accounts: Vec<AccountRow>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ActivationField {
    activated: String,
}

async fn accounts_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    status: StatusCode,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let accounts = match state.accounts.list(principal).await {
        Ok(all) => all,
        Err(AdminAccountsError::Infra(cause)) => return Err(cause.into()),
        Err(e) => return Err(ApiError::new(ErrorCode::Forbidden, e.to_string())),
    };
    let objects = state.objects.usage_by_account().await?;
    // A cluster that does not answer leaves its figures unknown, not the page.
    let databases = state.databases.usage_by_account().await;
    let of_account = |id| match &databases {
        Ok(all) => Some(all.get(&id).copied().unwrap_or(state.databases.unused())),
        Err(_) => None,
    };
    let unknown = || QuotaFigure {
        text: "unknown".into(),
        near: false,
    };
    let rows = accounts
        .into_iter()
        .map(|a| AccountRow {
            databases: of_account(a.id).map_or_else(unknown, |u| quota_view::count(u.databases)),
            database_bytes: of_account(a.id).map_or_else(unknown, |u| quota_view::bytes(u.bytes)),
            object_bytes: quota_view::bytes(
                objects
                    .get(&a.id)
                    .copied()
                    .unwrap_or(state.objects.unused()),
            ),
            id: a.id.0.to_string(),
            handle: a.handle.as_str().to_owned(),
            email: a.email.as_str().to_owned(),
            verified: a.email_verified_at.is_some(),
            activated: a.activated_at.map(day),
            second_factor: a.totp_secret.is_some(),
            admin: a.is_platform_admin,
            created: day(a.created_at),
        })
        .collect();
    page(
        state,
        status,
        &AccountsPage {
            signed_in_as: Who::acting(principal, handle, section::ADMIN),
            error,
            accounts: rows,
        },
    )
}

/// `GET /admin/accounts`.
pub async fn accounts(
    state: web::Data<AppState>,
    Admin { account, principal }: Admin,
) -> Result<HttpResponse, ApiError> {
    accounts_page(
        &state,
        &principal,
        account.handle.as_str(),
        StatusCode::OK,
        None,
    )
    .await
}

/// `POST /admin/accounts/{id}`: `activated` is `yes` or `no`.
pub async fn change_account(
    state: web::Data<AppState>,
    id: web::Path<String>,
    Posted(f, Admin { account, principal }): Posted<ActivationField, Admin>,
) -> Result<HttpResponse, ApiError> {
    let activated = match f.activated.as_str() {
        "yes" => true,
        "no" => false,
        _ => {
            return Err(ApiError::new(
                ErrorCode::InvalidBody,
                "activated must be yes or no",
            ));
        }
    };
    let result = match uuid::Uuid::parse_str(&id) {
        Ok(id) => {
            state
                .accounts
                .set_activated_by_admin(&principal, AccountId(id), activated)
                .await
        }
        Err(_) => Err(AdminAccountsError::NotFound),
    };
    let status = match result {
        Ok(_) => return Ok(see_other(ACCOUNTS)),
        Err(AdminAccountsError::Infra(cause)) => return Err(cause.into()),
        Err(AdminAccountsError::NotFound) => StatusCode::NOT_FOUND,
        Err(AdminAccountsError::Forbidden) => StatusCode::FORBIDDEN,
        Err(AdminAccountsError::OwnAccount) => StatusCode::CONFLICT,
    };
    let error = result.err().map(|e| e.to_string());
    accounts_page(&state, &principal, account.handle.as_str(), status, error).await
}
