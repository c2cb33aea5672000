//! The OpenAPI document served at `/api/openapi.json` (and through Swagger UI at
//! `/api/docs/`).

use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::dto;

/// The document's frame: what no route says, and the tags in the order people need them
/// (publishing first, operations last). The paths and their schemas are added as the routes
/// are registered ([`crate::register`], and the dashboard's own), then [`finish`] applies
/// what the path macros cannot say.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "Quire API",
        description = "Page publishing and platform management. Errors are JSON `{error, message}`; see docs/api.md."
    ),
    tags(
        (name = "pages", description = "Publish a folder as a page, change who can open it, its expiry and view budget, add files, archive or delete it."),
        (name = "projects", description = "Group pages, links and keys; grant other accounts read or full access."),
        (name = "keys", description = "API keys: the master key of an account, and app keys limited to a project and its apps."),
        (name = "account", description = "The calling account: its status and activation, and the dashboard's create-key action."),
        (name = "agent-login", description = "The device login (RFC 8628) by which a command-line agent obtains a master key."),
        (name = "oauth", description = "Quire as an OAuth 2 authorization server: tokens, revocation, signing keys, metadata."),
        (name = "oauth-clients", description = "The platform admin's registry of OAuth clients."),
        (name = "email", description = "One plain-text email on the caller's behalf, with a master key, under a rolling quota."),
        (name = "operations", description = "Liveness and readiness for load balancers and orchestrators."),
    ),
    components(schemas(dto::ErrorBody))
)]
pub struct ApiDoc;

/// The frame, to which the routes add themselves.
pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// Applies the modifiers once every route is in.
pub fn finish(document: &mut utoipa::openapi::OpenApi) {
    BearerAuth.modify(document);
    ErrorBodies.modify(document);
    Contract.modify(document);
}

/// Every error answer is an [`dto::ErrorBody`], and every route taking a bearer credential
/// may answer 401 `invalid_api_key` / `invalid_token`: said once here rather than on each
/// route, whose annotation names only the codes that are its own.
#[derive(Debug)]
struct ErrorBodies;

impl Modify for ErrorBodies {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let error_body = || {
            ContentBuilder::new()
                .schema(Some(RefOr::Ref(Ref::from_schema_name("ErrorBody"))))
                .build()
        };
        for item in openapi.paths.paths.values_mut() {
            for op in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.patch,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                let bearer = op.security.as_ref().is_some_and(|s| !s.is_empty());
                let responses = &mut op.responses.responses;
                if bearer && !responses.contains_key("401") {
                    responses.insert(
                        "401".into(),
                        RefOr::T(
                            ResponseBuilder::new()
                                .description("invalid_api_key, invalid_token")
                                .build(),
                        ),
                    );
                }
                for (status, response) in responses.iter_mut() {
                    if let RefOr::T(response) = response
                        && status.starts_with(['4', '5'])
                        && response.content.is_empty()
                    {
                        response
                            .content
                            .insert("application/json".into(), RefOr::T(error_body()));
                    }
                }
            }
        }
    }
}

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
