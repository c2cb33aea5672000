//! Typed success answers, so a handler's return type names its body: [`Answer`] (200, or the
//! status given, with a JSON body), [`Created`] (201 with its `Location`), [`NoContent`]
//! (204), [`Done`] (200 with no body); and the caching a success may carry, wrapped around
//! any of them: [`NoStore`] and [`Cached`]. Refusals stay [`ApiError`]s.

use actix_web::body::BoxBody;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, Responder};
use serde::Serialize;

use crate::error::ApiError;

/// `body` as JSON, with `status` (200 unless said).
#[derive(Debug)]
pub struct Answer<T> {
    status: StatusCode,
    body: T,
}

impl<T: Serialize> Answer<T> {
    /// 200 with `body`.
    pub fn ok(body: T) -> Self {
        Self::with_status(StatusCode::OK, body)
    }

    pub fn with_status(status: StatusCode, body: T) -> Self {
        Self { status, body }
    }
}

impl<T: Serialize> Responder for Answer<T> {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::build(self.status).json(self.body)
    }
}

/// 201: `body` as JSON, and where the new resource lives (`Location`).
#[derive(Debug)]
pub struct Created<T> {
    location: String,
    body: T,
}

impl<T: Serialize> Created<T> {
    pub fn at(location: String, body: T) -> Self {
        Self { location, body }
    }
}

impl<T: Serialize> Responder for Created<T> {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::Created()
            .insert_header((header::LOCATION, self.location))
            .json(self.body)
    }
}

/// 204, no body.
#[derive(Debug, Clone, Copy)]
pub struct NoContent;

impl Responder for NoContent {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::NoContent().finish()
    }
}

/// 200 with no body: done, and nothing to say (a token revocation, RFC 7009).
#[derive(Debug, Clone, Copy)]
pub struct Done;

impl Responder for Done {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok().finish()
    }
}

/// `R` with `Cache-Control: no-store`: an answer holding a secret, or one an OAuth client
/// must not cache (RFC 6749 §5.1).
#[derive(Debug)]
pub struct NoStore<R>(pub R);

impl<R: Responder> Responder for NoStore<R> {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        with_cache_control(
            self.0.respond_to(req).map_into_boxed_body(),
            HeaderValue::from_static("no-store"),
        )
    }
}

/// `R`, public and fresh for `max_age` seconds.
#[derive(Debug)]
pub struct Cached<R> {
    max_age: u32,
    answer: R,
}

impl<R: Responder> Cached<R> {
    pub fn for_seconds(max_age: u32, answer: R) -> Self {
        Self { max_age, answer }
    }
}

impl<R: Responder> Responder for Cached<R> {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let directive = format!("public, max-age={}", self.max_age);
        match HeaderValue::try_from(directive) {
            Ok(value) => {
                with_cache_control(self.answer.respond_to(req).map_into_boxed_body(), value)
            }
            Err(e) => actix_web::ResponseError::error_response(&ApiError::internal(&e)),
        }
    }
}

/// `R` readable by a script on any origin (`Access-Control-Allow-Origin: *`): the public
/// discovery documents, which browser-based OAuth clients fetch across origins.
#[derive(Debug)]
pub struct AnyOrigin<R>(pub R);

impl<R: Responder> Responder for AnyOrigin<R> {
    type Body = BoxBody;

    fn respond_to(self, req: &HttpRequest) -> HttpResponse {
        let mut response = self.0.respond_to(req).map_into_boxed_body();
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        response
    }
}

fn with_cache_control(mut response: HttpResponse, value: HeaderValue) -> HttpResponse {
    response.headers_mut().insert(header::CACHE_CONTROL, value);
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use actix_web::body::to_bytes;
    use actix_web::test::TestRequest;

    use super::*;

    async fn answered(
        answer: impl Responder<Body = BoxBody>,
    ) -> (StatusCode, Vec<(String, String)>, Vec<u8>) {
        let response = answer.respond_to(&TestRequest::default().to_http_request());
        let status = response.status();
        let mut headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        headers.sort();
        let body = to_bytes(response.into_body()).await.unwrap().to_vec();
        (status, headers, body)
    }

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[actix_web::test]
    async fn each_answer_is_the_response_it_names() {
        let json = ("content-type", "application/json");
        assert_eq!(
            answered(Answer::ok(serde_json::json!({"b": 1, "a": 2}))).await,
            (
                StatusCode::OK,
                headers(&[json]),
                br#"{"a":2,"b":1}"#.to_vec()
            ),
        );
        assert_eq!(
            answered(Answer::with_status(StatusCode::SERVICE_UNAVAILABLE, "x")).await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                headers(&[json]),
                br#""x""#.to_vec()
            ),
        );
        assert_eq!(
            answered(NoStore(Created::at("/things/1".into(), [1]))).await,
            (
                StatusCode::CREATED,
                headers(&[
                    ("cache-control", "no-store"),
                    json,
                    ("location", "/things/1")
                ]),
                b"[1]".to_vec(),
            ),
        );
        assert_eq!(
            answered(NoContent).await,
            (StatusCode::NO_CONTENT, vec![], vec![])
        );
        assert_eq!(
            answered(NoStore(Done)).await,
            (
                StatusCode::OK,
                headers(&[("cache-control", "no-store")]),
                vec![]
            ),
        );
        assert_eq!(
            answered(Cached::for_seconds(60, Answer::ok(true))).await,
            (
                StatusCode::OK,
                headers(&[("cache-control", "public, max-age=60"), json]),
                b"true".to_vec(),
            ),
        );
    }
}
