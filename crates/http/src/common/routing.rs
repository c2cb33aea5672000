//! Routes written once with their methods: any other method on a known path is 405 with
//! `Allow` naming them (RFC 9110), as JSON like every error.

use actix_web::http::Method;
use actix_web::{HttpRequest, Resource, Route, web};
use quire_kernel::ErrorCode;

use crate::error::ApiError;

pub(crate) fn to<F, Args>(handler: F) -> Route
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::route().to(handler)
}

/// A dashboard path with its methods, each written once: any other method on it is 405
/// with `Allow` naming them (RFC 9110), as JSON like every error.
pub(crate) fn resource<const N: usize>(path: &str, routes: [(Method, Route); N]) -> Resource {
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
        async move { method_not_allowed(&req, &allow) }
    }))
}

pub(crate) fn method_not_allowed(req: &HttpRequest, allow: &str) -> actix_web::HttpResponse {
    let mut response = actix_web::ResponseError::error_response(&ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{} is not allowed here; use {allow}", req.method()),
    ));
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(allow) {
        response
            .headers_mut()
            .insert(actix_web::http::header::ALLOW, value);
    }
    response
}
