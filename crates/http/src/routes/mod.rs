//! Route registration: every path of the API origin, in one place.

pub(crate) mod agent_login;
pub(crate) mod dashboard;
pub(crate) mod health;
pub(crate) mod keys;
pub(crate) mod pages;
pub(crate) mod projects;

use actix_web::http::Method;
use actix_web::{HttpRequest, Resource, Route, web};
use quire_kernel::ErrorCode;
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

use crate::error::ApiError;
use crate::json::BodyLimit;
use crate::openapi::ApiDoc;

pub const PLATFORM: &str = "/api/platform/v1";
pub const PAGE: &str = "/api/page/v1";

pub fn register(cfg: &mut web::ServiceConfig, page_body_limit: usize) {
    use Method as M;
    cfg.app_data(web::QueryConfig::default().error_handler(|e, _| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!("the query string is not valid: {e}"),
        )
        .into()
    }))
    .service(resource("/healthz", [(M::GET, to(health::healthz))]))
    .service(resource("/readyz", [(M::GET, to(health::readyz))]))
    .service(SwaggerUi::new("/api/docs/{_:.*}").url("/api/openapi.json", ApiDoc::openapi()))
    .service(
        web::scope(PLATFORM)
            .service(resource(
                "/projects",
                [
                    (M::GET, to(projects::list)),
                    (M::POST, to(projects::create)),
                ],
            ))
            .service(resource(
                "/projects/{id}",
                [
                    (M::GET, to(projects::get)),
                    (M::PATCH, to(projects::patch)),
                    (M::DELETE, to(projects::delete)),
                ],
            ))
            .service(resource(
                "/projects/{id}/resources",
                [(M::GET, to(projects::resources))],
            ))
            .service(resource(
                "/projects/{id}/assign",
                [(M::POST, to(projects::assign))],
            ))
            .service(resource(
                "/projects/{id}/unassign",
                [(M::POST, to(projects::unassign))],
            ))
            .service(resource(
                "/projects/{id}/grants",
                [
                    (M::POST, to(projects::put_grant)),
                    (M::DELETE, to(projects::delete_grant)),
                ],
            ))
            .service(resource(
                "/keys",
                [(M::GET, to(keys::list)), (M::POST, to(keys::mint))],
            ))
            .service(resource("/keys/{id}", [(M::DELETE, to(keys::revoke))])),
    )
    .service(
        web::scope("/api/agent-login")
            .service(resource(
                "/device_authorization",
                [(M::POST, to(agent_login::device_authorization))],
            ))
            .service(resource("/token", [(M::POST, to(agent_login::token))]))
            .service(resource("/decision", [(M::POST, to(dashboard::decision))])),
    )
    .service(resource(
        "/login",
        [
            (M::GET, to(dashboard::login_form)),
            (M::POST, to(dashboard::login)),
        ],
    ))
    .service(resource(
        "/login/totp",
        [
            (M::GET, to(dashboard::totp_form)),
            (M::POST, to(dashboard::totp)),
        ],
    ))
    .service(resource("/logout", [(M::POST, to(dashboard::logout))]))
    .service(resource(
        "/account/security",
        [
            (M::GET, to(dashboard::security)),
            (M::POST, to(dashboard::enroll)),
        ],
    ))
    .service(resource(
        "/authorize-agent",
        [(M::GET, to(dashboard::consent))],
    ))
    .service(resource(
        "/visit",
        [
            (M::GET, to(dashboard::visit)),
            (M::POST, to(dashboard::visit_confirmed)),
        ],
    ))
    .service(resource("/", [(M::GET, to(dashboard::home))]))
    .service(
        web::scope(PAGE)
            .app_data(BodyLimit(page_body_limit))
            .service(resource(
                "/pages",
                [(M::GET, to(pages::list)), (M::POST, to(pages::publish))],
            ))
            .service(resource(
                "/pages/{id}",
                [
                    (M::GET, to(pages::get)),
                    (M::PATCH, to(pages::patch)),
                    (M::DELETE, to(pages::delete)),
                ],
            ))
            .service(resource(
                "/pages/{id}/files",
                [(M::GET, to(pages::files)), (M::POST, to(pages::add_files))],
            ))
            .service(resource("/shared", [(M::GET, to(pages::shared))])),
    )
    .default_service(web::to(no_route));
}

fn to<F, Args>(handler: F) -> Route
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::route().to(handler)
}

/// A path with its methods, each written once: any other method on it is 405 with `Allow`
/// naming them (RFC 9110), as JSON like every error.
fn resource<const N: usize>(path: &str, routes: [(Method, Route); N]) -> Resource {
    let allow = routes
        .iter()
        .map(|(m, _)| m.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut resource = web::resource(path);
    for (method, route) in routes {
        resource = resource.route(route.method(method));
    }
    resource.default_service(web::to(move |req: HttpRequest| {
        let allow = allow.clone();
        async move {
            let mut response = actix_web::ResponseError::error_response(&ApiError::new(
                ErrorCode::MethodNotAllowed,
                format!("{} is not allowed here; use {allow}", req.method()),
            ));
            if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&allow) {
                response
                    .headers_mut()
                    .insert(actix_web::http::header::ALLOW, value);
            }
            response
        }
    }))
}

/// Any path or method without a route: a JSON 404, like every other error.
async fn no_route(req: HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::new(
        ErrorCode::NotFound,
        format!("no route for {} {}", req.method(), req.path()),
    ))
}
