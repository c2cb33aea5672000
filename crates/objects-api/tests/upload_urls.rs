//! An upload URL's route before its body is read, on the real HTTP edge in process over the
//! in-memory fakes: the token is looked up before the body takes a place among the bodies in
//! flight, so a made-up token is told 404 even when the server has no room, and never holds
//! a share of its own; a real one without room is refused 503 and stays unspent.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;

use actix_web::{App, test, web};
use quire_edge::documented::Documented;
use quire_edge::in_flight::BodiesInFlight;
use quire_objects::NewObject;
use quire_testkit::World;
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A `PUT` of a 2 MiB body (long enough to be counted) to the upload URL of `token`.
fn put(token: &str) -> test::TestRequest {
    test::TestRequest::put()
        .uri(&format!("/api/object/v1/uploads/{token}"))
        .insert_header(("content-type", "application/octet-stream"))
        .set_payload(vec![7u8; 2 * MIB as usize])
}

#[actix_web::test]
async fn a_token_is_looked_up_before_its_body_takes_room() {
    let w = World::builder().accounts(&["ann"]).build().await;
    let bound = web::Data::new(BodiesInFlight::new(4 * MIB, 2 * MIB));
    let state = web::Data::new(w.app_state());
    let app = test::init_service(
        App::new()
            .app_data(bound.clone())
            .app_data(state)
            .configure(|cfg| {
                let mut api = Documented::new(cfg, utoipa::openapi::OpenApi::default());
                quire_objects_api::register(&mut api);
            }),
    )
    .await;
    let call = async |req: test::TestRequest| {
        let resp = test::call_service(&app, req.to_request()).await;
        let status = resp.status().as_u16();
        let retry = resp.headers().get("retry-after").cloned();
        let body: Value = test::read_body_json(resp).await;
        (status, body, retry)
    };
    let offer = w
        .services
        .objects
        .offer_upload(&w.master("ann"), NewObject::default(), None)
        .await
        .unwrap();

    // Other bodies hold the server's whole bound.
    let bound: Arc<BodiesInFlight> = bound.into_inner();
    let others = bound.admit(Some(b"Bearer other"), 4 * MIB).unwrap();
    for made_up in ["A".repeat(43), "not-a-token".to_owned()] {
        let (status, body, _) = call(put(&made_up)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("not_found")),
            "{body}"
        );
    }
    let (status, body, retry) = call(put(offer.token.expose())).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "server_busy");
    assert_eq!(body["limit"], "bodies_in_flight");
    assert_eq!(retry.unwrap(), "5");

    // With room, the URL refused for room takes its bytes, once.
    drop(others);
    let (status, body, _) = call(put(offer.token.expose())).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["sizeBytes"], 2 * MIB);
    assert_eq!(bound.held(), 0, "the place went with the body");
    let (status, body, _) = call(put(offer.token.expose())).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
}
