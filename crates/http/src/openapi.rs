//! The OpenAPI document served at `/api/openapi.json` (and through Swagger UI at
//! `/api/docs/`).

use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Required};
use utoipa::{Modify, OpenApi};

use crate::dto;
use crate::routes::{agent_login, dashboard, health, keys, pages, projects};

#[derive(Debug, OpenApi)]
#[openapi(
    info(title = "Quire API", description = "Page publishing and platform management. Errors are JSON `{error, message}`; see docs/api.md."),
    paths(
        health::healthz, health::readyz,
        projects::list, projects::create, projects::get, projects::patch, projects::delete,
        projects::resources, projects::assign, projects::unassign,
        projects::put_grant, projects::delete_grant,
        keys::list, keys::mint, keys::revoke,
        pages::list, pages::publish, pages::get, pages::patch, pages::delete,
        pages::files, pages::add_files, pages::shared,
        agent_login::device_authorization, agent_login::token, dashboard::decision,
    ),
    components(schemas(
        dto::ProjectDto, dto::ProjectEnvelope, dto::ProjectList, dto::ResourcesEnvelope,
        dto::ResourcesDto, dto::ResourceDto, dto::GrantEnvelope, dto::GrantDto, dto::KeyList,
        dto::KeyDto, dto::MintedKeyDto, dto::ErrorBody, dto::Health,
        projects::CreateProjectRequest, projects::PatchProjectRequest,
        projects::DeleteProjectRequest, projects::AssignRequest, projects::GrantRequest,
        projects::RevokeGrantRequest, keys::MintKeyRequest,
        dto::PageDto, dto::PageList, dto::PublishedDto, dto::FileDto, dto::FileList,
        dto::FilesAddedDto, dto::SharedPageDto, dto::SharedList, pages::FileBody,
        pages::PublishBody, pages::PatchPageBody, pages::AddFilesBody,
        agent_login::DeviceAuthorizationRequest, agent_login::TokenRequest,
        agent_login::DeviceAuthorization, agent_login::DeviceToken,
    )),
    modifiers(&BearerAuth, &Contract),
)]
pub struct ApiDoc;

/// What the path macros cannot say: a device login may start with no body at all, and a
/// grant just made is revoked by naming its key (a link, so that clients and Schemathesis's
/// stateful phase pair the two).
#[derive(Debug)]
struct Contract;

impl Modify for Contract {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let paths = &mut openapi.paths.paths;
        if let Some(RefOr::T(body)) = paths
            .get_mut("/api/agent-login/device_authorization")
            .and_then(|item| item.post.as_mut())
            .and_then(|op| op.request_body.as_mut())
        {
            body.required = Some(Required::False);
        }
        if let Some(RefOr::T(created)) = paths
            .get_mut("/api/platform/v1/projects/{id}/grants")
            .and_then(|item| item.post.as_mut())
            .and_then(|op| op.responses.responses.get_mut("201"))
        {
            created.links.insert(
                "RevokeGrant".into(),
                RefOr::T(
                    LinkBuilder::new()
                        .operation_id("delete_grant")
                        .parameter("path.id", "$request.path.id")
                        .request_body(Some(
                            serde_json::json!({"key_id": "$response.body#/grant/keyId"}),
                        ))
                        .build(),
                ),
            );
        }
    }
}

#[derive(Debug)]
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key (`qk_…`) or an OAuth bearer token"))
                    .build(),
            ),
        );
    }
}
