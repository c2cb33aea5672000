//! The JSON API, by resource: projects, keys, pages, the device login, health. Each route is
//! written once, on its handler: the actix route macro gives its method and path, and
//! `#[utoipa::path]` its documentation; [`configure`] registers it, which both routes it and
//! adds it to the OpenAPI document (`openapi.rs`). Request bodies are typed beside their
//! handlers and parsed by `json.rs` (a page request's files then read by `files.rs`); `dto.rs`
//! holds the response shapes, `schema.rs` the rules the document states.

pub(crate) mod account;
pub(crate) mod agent_login;
pub(crate) mod auth;
pub(crate) mod dto;
pub(crate) mod email;
pub(crate) mod files;
pub(crate) mod health;
pub(crate) mod json;
pub(crate) mod keys;
pub(crate) mod oauth;
pub(crate) mod oauth_clients;
pub(crate) mod openapi;
pub(crate) mod pages;
pub(crate) mod projects;
pub(crate) mod schema;
pub(crate) mod skeleton;

use actix_web::dev::{HttpServiceFactory, ResourceDef};
use actix_web::{HttpRequest, web};
use quire_kernel::ErrorCode;
use utoipa_actix_web::{OpenApiFactory, scope};
use utoipa_swagger_ui::SwaggerUi;

use crate::common::body::BodyLimit;
use crate::common::routing::{allow_header, asked_method, method_not_allowed};
use crate::error::ApiError;

pub const PLATFORM: &str = "/api/platform/v1";
pub const PAGE: &str = "/api/page/v1";
pub const AGENT_LOGIN: &str = "/api/agent-login";
pub const OAUTH: &str = "/api/oauth";
pub const ACCOUNT: &str = "/api/account";

const OPENAPI_DOCUMENT: &str = "/api/openapi.json";
const SWAGGER_UI: &str = "/api/docs/{_:.*}";

/// Registers the JSON API and its document (`/api/openapi.json`, Swagger UI at `/api/docs/`).
/// Returns the documented paths with their methods, for the origin's 405 answers.
pub(crate) fn configure(cfg: &mut web::ServiceConfig, page_body_limit: usize) -> AllowedMethods {
    cfg.app_data(web::QueryConfig::default().error_handler(|e, _| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("the query string is not valid: {e}"),
        )
        .into()
    }));
    let mut api = Documented::new(cfg, openapi::document());
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
                .service(keys::revoke)
                .service(oauth_clients::list)
                .service(oauth_clients::register)
                .service(oauth_clients::get)
                .service(oauth_clients::delete)
                .service(oauth_clients::rotate_secret)
                .service(email::send),
        )
        .service(
            scope(PAGE)
                .app_data(BodyLimit(page_body_limit))
                .service(pages::list)
                .service(pages::publish)
                .service(pages::get)
                .service(pages::patch)
                .service(pages::delete)
                .service(pages::files)
                .service(pages::add_files)
                .service(pages::shared),
        )
        .service(
            scope(AGENT_LOGIN)
                .service(agent_login::device_authorization)
                .service(agent_login::token)
                .service(crate::dashboard::decision),
        )
        .service(
            scope(OAUTH)
                .service(oauth::token)
                .service(oauth::revoke)
                .service(crate::dashboard::oauth_decision),
        )
        .service(
            scope(ACCOUNT)
                .service(account::status)
                .service(account::captcha)
                .service(account::activate)
                .service(crate::dashboard::create_key),
        )
        .service(oauth::jwks)
        .service(oauth::metadata);
    let (cfg, document) = api.finish();
    let allowed = AllowedMethods::of(&document, &[OPENAPI_DOCUMENT, SWAGGER_UI]);
    cfg.service(SwaggerUi::new(SWAGGER_UI).url(OPENAPI_DOCUMENT, document));
    allowed
}

/// An actix `ServiceConfig` that adds what it registers to an OpenAPI document.
struct Documented<'a> {
    cfg: &'a mut web::ServiceConfig,
    document: utoipa::openapi::OpenApi,
}

impl<'a> Documented<'a> {
    fn new(cfg: &'a mut web::ServiceConfig, document: utoipa::openapi::OpenApi) -> Self {
        Self { cfg, document }
    }

    fn service<F>(&mut self, factory: F) -> &mut Self
    where
        F: HttpServiceFactory + OpenApiFactory + 'static,
    {
        self.document.paths.merge(factory.paths());
        let mut schemas = Vec::new();
        factory.schemas(&mut schemas);
        self.document
            .components
            .get_or_insert_with(Default::default)
            .schemas
            .extend(schemas);
        self.cfg.service(factory);
        self
    }

    /// The config back, and the finished document (its modifiers applied).
    fn finish(self) -> (&'a mut web::ServiceConfig, utoipa::openapi::OpenApi) {
        let mut document = self.document;
        openapi::finish(&mut document);
        (self.cfg, document)
    }
}

/// The methods of every documented path, for 405 answers.
#[derive(Clone)]
pub(crate) struct AllowedMethods(std::sync::Arc<Vec<(ResourceDef, String)>>);

impl AllowedMethods {
    /// The document's paths, and `readable`: paths served outside it, `GET` only.
    fn of(document: &utoipa::openapi::OpenApi, readable: &[&str]) -> Self {
        let readable = readable
            .iter()
            .map(|path| (ResourceDef::new(*path), allow_header(["GET"])));
        let table = document
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let allow = allow_header(
                    [
                        ("GET", &item.get),
                        ("POST", &item.post),
                        ("PUT", &item.put),
                        ("PATCH", &item.patch),
                        ("DELETE", &item.delete),
                    ]
                    .into_iter()
                    .filter(|(_, operation)| operation.is_some())
                    .map(|(method, _)| method),
                );
                (ResourceDef::new(path.as_str()), allow)
            })
            .chain(readable)
            .collect();
        Self(std::sync::Arc::new(table))
    }

    /// 405 with `Allow` on a documented path (RFC 9110), else a JSON 404.
    pub(crate) fn refuse(&self, req: &HttpRequest) -> actix_web::HttpResponse {
        let Some((_, allow)) = self.0.iter().find(|(def, _)| def.is_match(req.path())) else {
            return actix_web::ResponseError::error_response(&ApiError::new(
                ErrorCode::NotFound,
                format!("no route for {} {}", asked_method(req), req.path()),
            ));
        };
        method_not_allowed(req, allow)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use actix_web::{App, test};

    /// The whole document, as clients and Schemathesis read it: an operation, status code or
    /// schema that appears, disappears or changes shows up in review as a snapshot diff.
    #[actix_web::test]
    async fn the_openapi_document_is_the_reviewed_one() {
        let app = test::init_service(App::new().configure(|cfg| {
            super::configure(cfg, 1024);
        }))
        .await;
        let document: serde_json::Value = test::call_and_read_body_json(
            &app,
            test::TestRequest::get()
                .uri("/api/openapi.json")
                .to_request(),
        )
        .await;
        insta::assert_json_snapshot!(document);
    }
}
