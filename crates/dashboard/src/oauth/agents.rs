//! The Agents page: the agents the account connected through OAuth (MCP clients such as
//! Claude, ChatGPT, Cursor or VS Code, and any other OAuth application), one row per client
//! and project with its scopes, when it was connected and when it last took a token, and a
//! button that disconnects it (every grant behind the row revoked, so its refresh tokens
//! with them); where to connect one when there is none; and the way in for a command-line
//! agent's device login.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use quire_kernel::{Principal, ProjectId};
use quire_oauth::DisconnectError;

use quire_edge::ApiError;
use quire_edge::AppState;

use crate::shared::guards::{Owner, Posted};
use crate::shared::nav::{Who, section};
use crate::shared::render::{page, see_other};
use crate::shared::when::When;

const AGENTS: &str = "/account/agents";

/// A connected agent as the table shows it.
struct AgentRow {
    client_id: String,
    /// The id as one path segment (a metadata document client's id is a URL).
    client_path: String,
    name: String,
    project_id: String,
    project: String,
    scopes: Vec<String>,
    connected: When,
    last_used: When,
}

#[derive(Template)]
#[template(path = "agents.html")]
struct AgentsPage {
    signed_in_as: Option<Who>,
    error: Option<String>,
    agents: Vec<AgentRow>,
    /// The MCP endpoint an agent is given: `{base}/mcp`.
    mcp_url: String,
}

/// The disconnect button's form: the project the row is for.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct DisconnectFields {
    project: String,
}

async fn agents_page(
    state: &AppState,
    principal: &Principal,
    handle: &str,
    status: StatusCode,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let now = state.pages.now();
    let agents = state
        .oauth_agents
        .list(principal.account_id)
        .await
        .map_err(ApiError::from)?
        .into_iter()
        .map(|a| AgentRow {
            client_id: a.client_id.as_str().to_owned(),
            client_path: url::form_urlencoded::byte_serialize(a.client_id.as_str().as_bytes())
                .collect(),
            name: a.client_name,
            project_id: a.project.id.0.to_string(),
            project: a.project.slug.as_str().to_owned(),
            scopes: a.scopes,
            connected: When::new(a.connected_at, now),
            last_used: When::new(a.last_used_at, now),
        })
        .collect();
    page(
        state,
        status,
        &AgentsPage {
            signed_in_as: Who::acting(principal, handle, section::AGENT),
            error,
            agents,
            mcp_url: format!("{}/mcp", state.base_url.trim_end_matches('/')),
        },
    )
}

/// `GET /account/agents`.
pub async fn agents(
    state: web::Data<AppState>,
    Owner { account, principal }: Owner,
) -> Result<HttpResponse, ApiError> {
    agents_page(
        &state,
        &principal,
        account.handle.as_str(),
        StatusCode::OK,
        None,
    )
    .await
}

/// `POST /account/agents/{client}/disconnect`: ends the agent's grants in the posted
/// project; back to the page, or the page again with why not (404, nothing changed).
pub async fn disconnect(
    state: web::Data<AppState>,
    client: web::Path<String>,
    Posted(f, Owner { account, principal }): Posted<DisconnectFields, Owner>,
) -> Result<HttpResponse, ApiError> {
    let result = match uuid::Uuid::parse_str(&f.project) {
        Ok(project) => {
            state
                .oauth_agents
                .disconnect(principal.account_id, &client, ProjectId(project))
                .await
        }
        Err(_) => Err(DisconnectError::NotConnected),
    };
    match result {
        Ok(ended) => {
            tracing::info!(
                client_id = %ended.client_id.as_str(),
                project_id = %ended.project.id.0,
                grants = ended.grant_ids.len(),
                "agent disconnected from the dashboard"
            );
            Ok(see_other(AGENTS))
        }
        Err(DisconnectError::Infra(e)) => Err(e.into()),
        Err(e) => {
            agents_page(
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
