//! Routes written once with their methods: any other method on a known path is 405 with
//! `Allow` naming them (RFC 9110), as JSON like every error. `HEAD` is answered wherever
//! `GET` is ([`head_as_get`]), and named beside it in every `Allow`.

use actix_web::body::{BodySize, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, Resource, Route, web};
use quire_kernel::ErrorCode;

use crate::error::ApiError;

pub fn to<F, Args>(handler: F) -> Route
where
    F: actix_web::Handler<Args>,
    Args: actix_web::FromRequest + 'static,
    F::Output: actix_web::Responder + 'static,
{
    web::route().to(handler)
}

/// A dashboard path with its methods, each written once: any other method on it is 405
/// with `Allow` naming them (RFC 9110), as JSON like every error.
pub fn resource<const N: usize>(path: &str, routes: [(Method, Route); N]) -> Resource {
    let allow = allow_header(routes.iter().map(|(m, _)| m.as_str()));
    let mut resource = web::resource(path);
    for (method, route) in routes {
        resource = resource.route(route.method(method));
    }
    resource.default_service(web::to(move |req: HttpRequest| {
        let allow = allow.clone();
        async move { method_not_allowed(&req, &allow) }
    }))
}

/// The `Allow` value of a path served with `methods`: `HEAD` follows `GET`, since
/// [`head_as_get`] answers it wherever `GET` is.
pub fn allow_header<'a>(methods: impl IntoIterator<Item = &'a str>) -> String {
    let mut allow = Vec::new();
    for method in methods {
        allow.push(method);
        if method == Method::GET.as_str() {
            allow.push(Method::HEAD.as_str());
        }
    }
    allow.join(", ")
}

/// Marks a request that came as `HEAD` and is routed as `GET`.
#[derive(Debug, Clone, Copy)]
struct AskedHead;

/// Middleware: a `HEAD` request is routed as the `GET` of the same target, so that every
/// `GET` route answers `HEAD` with the same status and headers (RFC 9110 §9.3.2) without a
/// route of its own.
///
/// The answer's content is replaced by none, its `Content-Length` kept. actix drops the
/// content of a `HEAD`'s answer itself, but by the method of the last request it has read
/// off the connection: a client that pipelines `HEAD` then `GET` would get the `HEAD`'s
/// content, and read it as the start of the next answer.
///
/// It rewrites the method in place, which needs the only handle on the request: the
/// middlewares around it must keep none.
///
/// # Errors
/// Those of the wrapped service, unchanged.
pub async fn head_as_get(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, Error> {
    let asked_head = req.method() == Method::HEAD;
    if asked_head {
        req.head_mut().method = Method::GET;
        req.extensions_mut().insert(AskedHead);
    }
    let response = next.call(req).await?;
    Ok(response.map_body(|head, body| match body.size() {
        BodySize::Sized(length) if asked_head && length > 0 => {
            // A length that no body gives, sent as it is (not chunked, not recounted).
            head.no_chunking(true);
            head.headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
            EitherBody::right(NoContent)
        }
        _ => EitherBody::left(body),
    }))
}

/// The content of a `HEAD`'s answer: none, whatever length its headers give.
#[derive(Debug)]
struct NoContent;

impl MessageBody for NoContent {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        // Not `Sized(0)`, which would send `Content-Length: 0`.
        BodySize::Stream
    }

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<actix_web::web::Bytes, Self::Error>>> {
        std::task::Poll::Ready(None)
    }
}

/// The method the client sent: `HEAD` for a request [`head_as_get`] routes as `GET`.
pub fn asked_method(req: &HttpRequest) -> Method {
    if req.extensions().get::<AskedHead>().is_some() {
        Method::HEAD
    } else {
        req.method().clone()
    }
}

pub fn method_not_allowed(req: &HttpRequest, allow: &str) -> actix_web::HttpResponse {
    let mut response = actix_web::ResponseError::error_response(&ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{} is not allowed here; use {allow}", asked_method(req)),
    ));
    if let Ok(value) = actix_web::http::header::HeaderValue::from_str(allow) {
        response
            .headers_mut()
            .insert(actix_web::http::header::ALLOW, value);
    }
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test};

    use super::*;

    fn value<B>(r: &ServiceResponse<B>, name: header::HeaderName) -> &str {
        r.headers().get(name).unwrap().to_str().unwrap()
    }

    const CONTENT: &str = r#"{"status":"ok"}"#;

    #[actix_web::test]
    async fn head_is_the_get_without_its_content_and_allow_names_it() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(head_as_get))
                .service(resource(
                    "/thing",
                    [
                        (
                            Method::GET,
                            to(|| async {
                                HttpResponse::Ok()
                                    .content_type("application/json")
                                    .body(CONTENT)
                            }),
                        ),
                        (
                            Method::POST,
                            to(|| async { HttpResponse::Created().finish() }),
                        ),
                    ],
                ))
                .service(resource(
                    "/only-post",
                    [(Method::POST, to(|| async { HttpResponse::Ok().finish() }))],
                )),
        )
        .await;

        let head = test::call_service(
            &app,
            test::TestRequest::default()
                .method(Method::HEAD)
                .uri("/thing")
                .to_request(),
        )
        .await;
        assert_eq!(head.status(), 200);
        assert_eq!(
            value(&head, header::CONTENT_LENGTH),
            CONTENT.len().to_string().as_str()
        );
        assert_eq!(value(&head, header::CONTENT_TYPE), "application/json");
        assert!(test::read_body(head).await.is_empty());

        let refused = test::call_service(
            &app,
            test::TestRequest::default()
                .method(Method::PUT)
                .uri("/thing")
                .to_request(),
        )
        .await;
        assert_eq!(refused.status(), 405);
        assert_eq!(value(&refused, header::ALLOW), "GET, HEAD, POST");

        // Where there is no GET, HEAD is refused under its own name.
        let refused = test::call_service(
            &app,
            test::TestRequest::default()
                .method(Method::HEAD)
                .uri("/only-post")
                .to_request(),
        )
        .await;
        assert_eq!(refused.status(), 405);
        assert_eq!(value(&refused, header::ALLOW), "POST");
        assert!(test::read_body(refused).await.is_empty());
        let refused: serde_json::Value = test::call_and_read_body_json(
            &app,
            test::TestRequest::get().uri("/only-post").to_request(),
        )
        .await;
        assert_eq!(refused["message"], "GET is not allowed here; use POST");
    }
}
