//! `quire-api`: the platform's JSON API, by resource: projects, keys, OAuth clients, email,
//! the device login, OAuth tokens and dynamic client registration, health; and the OpenAPI
//! document every surface registers on, its frame and its modifiers ([`openapi`]), served
//! with Swagger UI once all have ([`publish`]). Each route is written once, on its handler:
//! the actix route macro gives its method and path, and `#[utoipa::path]` its documentation;
//! [`register`] registers it through `quire-edge`'s `Documented`, which both routes it and
//! adds it to the document. Request bodies are typed beside their handlers and parsed by
//! `quire-edge`'s `json`; `dto.rs` holds the response shapes, `schema.rs` the rules the
//! document states, `examples.rs` an example of every body. The refusals many routes
//! document alike, the paging of lists and the schema blocks are `quire-edge`'s, shared
//! with the sibling surfaces (pages, links, objects, databases).
//!
//! It depends on `quire-edge`, the application and domain crates, actix-web, utoipa and
//! Swagger UI; never on another surface crate (the architecture test says so). `quire-http`
//! mounts it.

pub(crate) mod agent_login;
pub(crate) mod dto;
pub(crate) mod email;
pub(crate) mod examples;
pub(crate) mod health;
pub(crate) mod keys;
pub(crate) mod oauth;
pub(crate) mod oauth_clients;
pub(crate) mod oauth_register;
pub mod openapi;
pub(crate) mod projects;
pub(crate) mod schema;

use actix_web::web;
use quire_edge::ApiError;
use quire_edge::documented::AllowedMethods;
use quire_edge::documented::Documented;
use quire_kernel::ErrorCode;
use utoipa_actix_web::scope;
use utoipa_swagger_ui::SwaggerUi;

pub const PLATFORM: &str = "/api/platform/v1";
pub const AGENT_LOGIN: &str = "/api/agent-login";
pub const OAUTH: &str = "/api/oauth";

const OPENAPI_DOCUMENT: &str = "/api/openapi.json";
const SWAGGER_UI: &str = "/api/docs/{_:.*}";
/// The documentation's address as people type it; Swagger UI lives under the slash.
const DOCS: &str = "/api/docs";
/// The guide for connecting agents, which the agent endpoint's resource metadata names as
/// its documentation: `docs/agents.md`, as written in the repository.
const AGENTS_GUIDE: &str = "/docs/agents";

/// Registers the platform API on `api`, each route with its documentation. The dashboard's
/// form posts under these prefixes (`/api/agent-login/decision`, `/api/oauth/decision`) must
/// be registered before it: an actix scope answers every path under its prefix. The query
/// strings' refusal set here is the whole origin's, so every surface's lists refuse alike.
pub fn register(api: &mut Documented<'_>) {
    api.config()
        .app_data(web::QueryConfig::default().error_handler(|e, _| {
            ApiError::new(
                ErrorCode::InvalidRequest,
                format!("the query string is not valid: {e}"),
            )
            .into()
        }));
    api.service(health::healthz)
        .service(health::readyz)
        .service(
            scope(PLATFORM)
                .service(projects::list)
                .service(projects::create)
                .service(projects::get)
                .service(projects::patch)
                .service(projects::delete)
                .service(projects::resources)
                .service(projects::assign)
                .service(projects::unassign)
                .service(projects::put_grant)
                .service(projects::delete_grant)
                .service(keys::list)
                .service(keys::mint)
                // Before `/keys/{id}`, which would take `current` for an id.
                .service(keys::revoke_current)
                .service(keys::revoke)
                .service(oauth_clients::list)
                .service(oauth_clients::register)
                .service(oauth_clients::get)
                .service(oauth_clients::delete)
                .service(oauth_clients::rotate_secret)
                .service(email::send),
        )
        .service(
            scope(AGENT_LOGIN)
                .service(agent_login::device_authorization)
                .service(agent_login::token),
        )
        .service(
            scope(OAUTH)
                .service(oauth::token)
                .service(oauth::revoke)
                .service(oauth_register::register)
                .service(oauth_register::registered),
        )
        .service(oauth::jwks)
        .service(oauth::metadata)
        .service(oauth::protected_resource);
}

/// Serves the finished document (`/api/openapi.json`, Swagger UI at `/api/docs/`) once every
/// surface has registered its routes on it. Returns the documented paths with their
/// methods, for the origin's 405 answers.
pub fn publish(
    cfg: &mut web::ServiceConfig,
    mut document: utoipa::openapi::OpenApi,
) -> AllowedMethods {
    openapi::finish(&mut document);
    let allowed = AllowedMethods::of(
        &document,
        &[OPENAPI_DOCUMENT, SWAGGER_UI, DOCS, AGENTS_GUIDE],
    );
    cfg.service(SwaggerUi::new(SWAGGER_UI).url(OPENAPI_DOCUMENT, document))
        .route(
            DOCS,
            web::get().to(|| async {
                actix_web::HttpResponse::MovedPermanently()
                    .insert_header((actix_web::http::header::LOCATION, "/api/docs/"))
                    .finish()
            }),
        )
        .route(
            AGENTS_GUIDE,
            web::get().to(|| async {
                actix_web::HttpResponse::Ok()
                    .content_type("text/markdown; charset=utf-8")
                    .body(include_str!("../../../docs/agents.md"))
            }),
        );
    allowed
}
