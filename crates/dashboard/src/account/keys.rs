//! The Keys page: every key of the account with its tier, apps, project and prefix; creating
//! an app key (shown once) and revoking a key, through the same use cases as the API.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_kernel::{App, KeyId, Principal, Tier};
use quire_keys::{MintError, MintRequest, RevokeError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::{Owner, Posted, SameOrigin};
use crate::shared::nav::{Who, project_slugs, section};
use crate::shared::render::{page, see_other};
use crate::shared::when::minute;

const KEYS: &str = "/account/keys";

/// A key as the table shows it.
struct KeyRow {
    id: String,
    name: String,
    tier: &'static str,
    apps: String,
    project: String,
    prefix: String,
    created: String,
    /// The minute, in UTC; `never` for a key not used yet.
    last_used: String,
    revoked: bool,
}

#[derive(Template)]
#[template(path = "keys.html")]
struct KeysPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    keys: Vec<KeyRow>,
    apps: Vec<&'static str>,
    projects: Vec<String>,
}

#[derive(Template)]
#[template(path = "key_created.html")]
struct AppKeyCreated<'a> {
    signed_in_as: Option<Who>,
    master: bool,
    name: &'a str,
    key: &'a str,
}

/// The create-app-key form: a checkbox per app (`app_page=on`), and a project slug.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct AppKeyFields {
    name: String,
    app_page: Option<String>,
    app_serve: Option<String>,
    app_link: Option<String>,
    app_base: Option<String>,
    project: String,
}

pub(crate) fn day(t: time::OffsetDateTime) -> String {
    t.date().to_string()
}

async fn keys_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    status: StatusCode,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let listed = state.keys.list(principal).await.map_err(ApiError::from)?;
    let keys = listed
        .into_iter()
        .map(|k| KeyRow {
            id: k.record.id.0.to_string(),
            tier: k.record.tier.name(),
            apps: match &k.record.tier {
                Tier::Master => "all".into(),
                Tier::App(apps) => apps.to_csv(),
            },
            project: k
                .home_project
                .map(|(_, slug)| slug.as_str().to_owned())
                .unwrap_or_default(),
            prefix: k.record.key_prefix.clone(),
            created: day(k.record.created_at),
            last_used: k
                .record
                .last_used_at
                .map_or_else(|| "never".to_owned(), minute),
            revoked: k.record.revoked_at.is_some(),
            name: k.record.name,
        })
        .collect();
    let projects = project_slugs(state, principal).await?;
    page(
        state,
        status,
        &KeysPage {
            signed_in_as: Who::acting(principal, handle, section::KEYS),
            error,
            keys,
            apps: App::ALL.iter().map(|a| a.as_str()).collect(),
            projects,
        },
    )
}

/// `GET /account/keys`.
pub async fn keys(
    state: web::Data<AppState>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    keys_page(
        &state,
        &principal,
        account.handle.as_str(),
        StatusCode::OK,
        None,
    )
    .await
}

/// `POST /account/keys`: an app key, shown once on the answer page (`no-store`).
pub async fn create_app_key(
    state: web::Data<AppState>,
    Posted(f, Owner { account, principal }): Posted<AppKeyFields, Owner>,
) -> Result<HttpResponse, ApiError> {
    let apps = [
        (App::Page, &f.app_page),
        (App::Serve, &f.app_serve),
        (App::Link, &f.app_link),
        (App::Base, &f.app_base),
    ]
    .into_iter()
    .filter(|(_, on)| on.is_some())
    .map(|(app, _)| app.as_str().to_owned())
    .collect();
    let request = MintRequest {
        name: f.name.clone(),
        apps,
        project: Some(f.project.clone()).filter(|p| !p.is_empty()),
    };
    match state.keys.mint(&principal, request).await {
        Ok(minted) => {
            tracing::info!(key_id = %minted.record.id.0, "app key created from the dashboard");
            page(
                &state,
                StatusCode::OK,
                &AppKeyCreated {
                    signed_in_as: Who::of(&account, section::KEYS),
                    master: false,
                    name: &minted.record.name,
                    key: minted.plaintext.expose(),
                },
            )
        }
        Err(MintError::Infra(e)) => Err(e.into()),
        Err(e) => {
            keys_page(
                &state,
                &principal,
                account.handle.as_str(),
                StatusCode::BAD_REQUEST,
                Some(e.to_string()),
            )
            .await
        }
    }
}

/// `POST /account/keys/{id}/revoke`.
pub async fn revoke_key(
    state: web::Data<AppState>,
    id: web::Path<String>,
    SameOrigin(Owner { account, principal }): SameOrigin<Owner>,
) -> Result<HttpResponse, ApiError> {
    let Ok(id) = uuid::Uuid::parse_str(&id) else {
        return keys_page(
            &state,
            &principal,
            account.handle.as_str(),
            StatusCode::NOT_FOUND,
            Some(RevokeError::NotFound.to_string()),
        )
        .await;
    };
    match state.keys.revoke(&principal, KeyId(id)).await {
        Ok(()) => {
            tracing::info!(key_id = %id, "key revoked from the dashboard");
            Ok(see_other(KEYS))
        }
        Err(RevokeError::Infra(e)) => Err(e.into()),
        Err(e) => {
            keys_page(
                &state,
                &principal,
                account.handle.as_str(),
                StatusCode::NOT_FOUND,
                Some(e.to_string()),
            )
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_people_write_them_in_utc() {
        let t = time::macros::datetime!(2026-12-01 0:00:00.000_001 +01:30);
        assert_eq!(minute(t), "2026-11-30 22:30 UTC");
        assert_eq!(day(t), "2026-12-01");
    }
}
