//! What every answer of the API origin says about itself, written once rather than on each
//! handler: `X-Content-Type-Options: nosniff` on all of them, and `Cache-Control: no-store` on
//! the answers to a request that carried a credential, unless the handler chose a policy.

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;

/// Middleware: adds the headers above to each answer.
///
/// A request carries a credential when it has an `Authorization` header (a key or a bearer)
/// or any cookie (the dashboard's session, or a cookie that stands for one): its answer
/// depends on who asked, and neither a browser nor a shared cache may keep it. A handler
/// that sets `Cache-Control` itself (the published signing keys, the captcha script) answers
/// the same to everyone and keeps its own.
///
/// # Errors
/// Those of the wrapped service, unchanged.
pub async fn answer_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, Error> {
    let credentialed = req.headers().contains_key(header::AUTHORIZATION)
        || req.headers().contains_key(header::COOKIE);
    let mut response = next.call(req).await?;
    let headers = response.headers_mut();
    if !headers.contains_key(header::X_CONTENT_TYPE_OPTIONS) {
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
    }
    if credentialed && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test, web};

    use super::*;

    fn value<B>(r: &ServiceResponse<B>, name: header::HeaderName) -> &str {
        r.headers().get(name).unwrap().to_str().unwrap()
    }

    #[actix_web::test]
    async fn credentialed_answers_are_no_store_and_every_answer_nosniff() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(answer_headers))
                .route(
                    "/mine",
                    web::get().to(|| async { HttpResponse::Ok().body("x") }),
                )
                .route(
                    "/everyones",
                    web::get().to(|| async {
                        HttpResponse::Ok()
                            .insert_header((header::CACHE_CONTROL, "public, max-age=60"))
                            .body("x")
                    }),
                ),
        )
        .await;
        let ask = |path: &str, credential: Option<(header::HeaderName, &str)>| {
            let mut req = test::TestRequest::get().uri(path);
            if let Some(credential) = credential {
                req = req.insert_header(credential);
            }
            req.to_request()
        };
        for credential in [
            (header::AUTHORIZATION, "Bearer qk_x"),
            (header::COOKIE, "quire_session=s"),
        ] {
            let r = test::call_service(&app, ask("/mine", Some(credential))).await;
            assert_eq!(value(&r, header::CACHE_CONTROL), "no-store");
            assert_eq!(value(&r, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        }
        let r = test::call_service(&app, ask("/mine", None)).await;
        assert!(!r.headers().contains_key(header::CACHE_CONTROL));
        assert_eq!(value(&r, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        let r = test::call_service(
            &app,
            ask("/everyones", Some((header::AUTHORIZATION, "Bearer qk_x"))),
        )
        .await;
        assert_eq!(value(&r, header::CACHE_CONTROL), "public, max-age=60");
        let r = test::call_service(&app, ask("/nowhere", None)).await;
        assert_eq!(r.status(), 404);
        assert_eq!(value(&r, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    }
}
