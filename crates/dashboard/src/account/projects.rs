//! The Projects page: the account's projects; creating, renaming, archiving and restoring
//! one, through the same use cases as the API.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_kernel::{Principal, ProjectId};
use quire_projects::{NewProject, ProjectPatch, WriteProjectError};

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::account::keys::day;
use crate::shared::guards::{Owner, Posted};
use crate::shared::nav::{Who, section};
use crate::shared::render::{page, see_other};

const PROJECTS: &str = "/account/projects";

struct ProjectRow {
    id: String,
    name: String,
    slug: String,
    status: &'static str,
    created: String,
    default: bool,
}

#[derive(Template)]
#[template(path = "projects.html")]
struct ProjectsPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    projects: Vec<ProjectRow>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ProjectFields {
    name: String,
    slug: String,
    status: String,
}

async fn projects_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    status: StatusCode,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let projects = state
        .projects
        .list(principal)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|p| ProjectRow {
            id: p.id.0.to_string(),
            default: p.id == principal.home_project_id,
            slug: p.slug.as_str().to_owned(),
            status: p.status.as_str(),
            created: day(p.created_at),
            name: p.name,
        })
        .collect();
    page(
        state,
        status,
        &ProjectsPage {
            signed_in_as: Who::acting(principal, handle, section::PROJECTS),
            error,
            projects,
        },
    )
}

/// `GET /account/projects`.
pub async fn projects(
    state: web::Data<AppState>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    projects_page(
        &state,
        &principal,
        account.handle.as_str(),
        StatusCode::OK,
        None,
    )
    .await
}

fn refusal_status(e: &WriteProjectError) -> StatusCode {
    match e {
        WriteProjectError::NotFound => StatusCode::NOT_FOUND,
        WriteProjectError::SlugTaken | WriteProjectError::ClientAlreadyAttached => {
            StatusCode::CONFLICT
        }
        _ => StatusCode::BAD_REQUEST,
    }
}

async fn answer(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    result: Result<quire_projects::Project, WriteProjectError>,
) -> Result<HttpResponse, ApiError> {
    match result {
        Ok(_) => Ok(see_other(PROJECTS)),
        Err(WriteProjectError::Infra(e)) => Err(e.into()),
        Err(e) => {
            projects_page(
                state,
                principal,
                handle,
                refusal_status(&e),
                Some(e.to_string()),
            )
            .await
        }
    }
}

/// `POST /account/projects`: a new project.
pub async fn create_project(
    state: web::Data<AppState>,
    Posted(f, Owner { account, principal }): Posted<ProjectFields, Owner>,
) -> Result<HttpResponse, ApiError> {
    let result = state
        .projects
        .create(
            &principal,
            NewProject {
                name: f.name,
                tag: String::new(),
                color: "gray".into(),
                slug: f.slug,
                oauth_client_id: None,
            },
        )
        .await;
    answer(&state, &principal, account.handle.as_str(), result).await
}

/// `POST /account/projects/{id}/rename` and `…/status`: one field of the project.
pub async fn change_project(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    Posted(f, Owner { account, principal }): Posted<ProjectFields, Owner>,
) -> Result<HttpResponse, ApiError> {
    let (id, change) = path.into_inner();
    let patch = match change.as_str() {
        "rename" => ProjectPatch {
            name: Some(f.name),
            ..ProjectPatch::default()
        },
        _ => ProjectPatch {
            status: Some(f.status),
            ..ProjectPatch::default()
        },
    };
    let result = match uuid::Uuid::parse_str(&id) {
        Ok(id) => {
            state
                .projects
                .update(&principal, ProjectId(id), patch)
                .await
        }
        Err(_) => Err(WriteProjectError::NotFound),
    };
    answer(&state, &principal, account.handle.as_str(), result).await
}
