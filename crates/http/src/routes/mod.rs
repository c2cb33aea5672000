//! Route registration: every path of the API origin, in one place.

pub(crate) mod agent_login;
pub(crate) mod dashboard;
pub(crate) mod health;
pub(crate) mod keys;
pub(crate) mod pages;
pub(crate) mod projects;

use actix_web::{HttpRequest, web};
use quire_kernel::ErrorCode;
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

use crate::error::ApiError;
use crate::json::BodyLimit;
use crate::openapi::ApiDoc;

pub const PLATFORM: &str = "/api/platform/v1";
pub const PAGE: &str = "/api/page/v1";

pub fn register(cfg: &mut web::ServiceConfig, page_body_limit: usize) {
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .service(SwaggerUi::new("/api/docs/{_:.*}").url("/api/openapi.json", ApiDoc::openapi()))
        .service(
            web::scope(PLATFORM)
                .route("/projects", web::get().to(projects::list))
                .route("/projects", web::post().to(projects::create))
                .route("/projects/{id}", web::get().to(projects::get))
                .route("/projects/{id}", web::patch().to(projects::patch))
                .route("/projects/{id}", web::delete().to(projects::delete))
                .route(
                    "/projects/{id}/resources",
                    web::get().to(projects::resources),
                )
                .route("/projects/{id}/assign", web::post().to(projects::assign))
                .route(
                    "/projects/{id}/unassign",
                    web::post().to(projects::unassign),
                )
                .route("/projects/{id}/grants", web::post().to(projects::put_grant))
                .route(
                    "/projects/{id}/grants",
                    web::delete().to(projects::delete_grant),
                )
                .route("/keys", web::get().to(keys::list))
                .route("/keys", web::post().to(keys::mint))
                .route("/keys/{id}", web::delete().to(keys::revoke)),
        )
        .service(
            web::scope("/api/agent-login")
                .route(
                    "/device_authorization",
                    web::post().to(agent_login::device_authorization),
                )
                .route("/token", web::post().to(agent_login::token))
                .route("/decision", web::post().to(dashboard::decision)),
        )
        .route("/login", web::get().to(dashboard::login_form))
        .route("/login", web::post().to(dashboard::login))
        .route("/login/totp", web::get().to(dashboard::totp_form))
        .route("/login/totp", web::post().to(dashboard::totp))
        .route("/logout", web::post().to(dashboard::logout))
        .route("/account/security", web::get().to(dashboard::security))
        .route("/account/security", web::post().to(dashboard::enroll))
        .route("/authorize-agent", web::get().to(dashboard::consent))
        .route("/visit", web::get().to(dashboard::visit))
        .route("/visit", web::post().to(dashboard::visit_confirmed))
        .route("/", web::get().to(dashboard::home))
        .service(
            web::scope(PAGE)
                .app_data(BodyLimit(page_body_limit))
                .route("/pages", web::get().to(pages::list))
                .route("/pages", web::post().to(pages::publish))
                .route("/pages/{id}", web::get().to(pages::get))
                .route("/pages/{id}", web::patch().to(pages::patch))
                .route("/pages/{id}", web::delete().to(pages::delete))
                .route("/pages/{id}/files", web::get().to(pages::files))
                .route("/pages/{id}/files", web::post().to(pages::add_files))
                .route("/shared", web::get().to(pages::shared)),
        )
        .default_service(web::to(no_route));
}

/// Any path or method without a route: a JSON 404, like every other error.
async fn no_route(req: HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::new(
        ErrorCode::NotFound,
        format!("no route for {} {}", req.method(), req.path()),
    ))
}
