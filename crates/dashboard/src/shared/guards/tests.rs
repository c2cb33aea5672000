//! The order of a guarded request's refusals, signed out (no session store is asked for a
//! request without a session cookie).

use actix_web::http::{Method, StatusCode, header};
use actix_web::test::{TestRequest, call_service, init_service, read_body};
use actix_web::{App, HttpResponse, ResponseError, web};
use quire_edge::body::BodyLimit;
use quire_testkit::World;

use super::{Decider, Posted, Refusal};
use crate::shared::render::see_other;

const HERE: &str = "https://quire.test";
const ELSEWHERE: &str = "https://evil.example";

#[derive(Debug, serde::Deserialize)]
struct Named {
    name: String,
}

/// The dashboard's answer to `req`: its status, `Location` and body.
async fn answer(req: TestRequest) -> (StatusCode, String, String) {
    let world = World::builder().build().await;
    let app = init_service(
        App::new()
            .app_data(web::Data::new(world.app_state()))
            .app_data(BodyLimit(64))
            .configure(crate::configure)
            .route(
                "/decide",
                web::post().to(|Posted(f, _): Posted<Named, Decider>| async move {
                    HttpResponse::Ok().body(f.name)
                }),
            ),
    )
    .await;
    let res = call_service(&app, req.to_request()).await;
    let status = res.status();
    let location = res
        .headers()
        .get(header::LOCATION)
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&read_body(res).await).into_owned();
    (status, location, body)
}

/// The answer to a form post of `body` to `path` from `origin`.
async fn post(path: &str, origin: &str, body: &str) -> (StatusCode, String, String) {
    answer(
        TestRequest::default()
            .method(Method::POST)
            .uri(path)
            .insert_header((header::ORIGIN, origin))
            .insert_header((header::CONTENT_TYPE, "application/x-www-form-urlencoded"))
            .set_payload(body.to_owned()),
    )
    .await
}

#[actix_web::test]
async fn a_post_is_refused_for_its_size_then_its_origin_then_its_sender_then_its_form() {
    let long = format!("name={}", "a".repeat(100));
    let twice = "name=a&name=b";

    let (status, _, body) = post("/account/keys", ELSEWHERE, &long).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let (status, _, body) = post("/account/keys", ELSEWHERE, twice).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("invalid origin"), "{body}");
    let (status, location, _) = post("/account/keys", HERE, twice).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location, "/login?next=%2Faccount%2Fkeys");

    let (status, _, body) = post("/logout", ELSEWHERE, "").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("invalid origin"), "{body}");
}

#[actix_web::test]
async fn the_security_page_reads_its_form_before_the_session() {
    let (status, _, body) = post("/account/security/off", HERE, "code=1&code=2").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, location, _) = post("/account/security/off", HERE, "code=1").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location, "/login?next=%2Faccount%2Fsecurity%2Foff");
}

#[actix_web::test]
async fn a_decision_is_refused_as_an_api_refusal() {
    let (status, _, body) = post("/decide", ELSEWHERE, "name=a").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body.contains("invalid origin"), "{body}");
    let (status, _, body) = post("/decide", HERE, "name=a&name=b").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("not signed in"), "{body}");
}

#[actix_web::test]
async fn a_page_sends_the_signed_out_to_sign_in_and_back() {
    let (status, location, _) = answer(TestRequest::get().uri("/account/pages?project=home")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location, "/login?next=%2Faccount%2Fpages%3Fproject%3Dhome");
}

#[test]
fn a_refusal_answers_with_the_response_it_was_given() {
    let refusal = Refusal::from(see_other("/login?next=%2F"));
    for _ in 0..2 {
        let answer = refusal.error_response();
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            answer.headers().get(header::LOCATION).unwrap(),
            "/login?next=%2F"
        );
        assert_eq!(
            answer.headers().get(header::CACHE_CONTROL).unwrap(),
            "no-store"
        );
    }
    assert_eq!(refusal.status_code(), StatusCode::SEE_OTHER);
}
