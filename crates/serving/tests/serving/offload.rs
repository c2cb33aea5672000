//! The pages origin verifies a page password on the offload, and its async worker serves
//! other tasks meanwhile: argon2id there would hold every connection the worker serves.

use crate::common;

use std::sync::Arc;

use quire_pages::{PageOrigins, PublishRequest};
use quire_serving::{Unlock, UnlockError};
use quire_testkit::{Heartbeats, World};

use common::site;

// `tokio::test` runs on one worker thread: the heartbeat and the unlock share it.
#[tokio::test]
async fn a_page_password_is_verified_off_the_async_worker() {
    let offload = Arc::new(Heartbeats::new());
    let w = World::builder()
        .accounts(&["ann"])
        .origins(&PageOrigins::parse("https://pages.test").unwrap())
        .offload(offload.clone())
        .build()
        .await;
    let request = PublishRequest {
        title: "Secret".into(),
        files: site(),
        slug: Some("secret".into()),
        policy: quire_links::PolicyInput {
            access: Some("password".into()),
            password: Some("open sesame".into()),
            ..quire_links::PolicyInput::default()
        },
        ..PublishRequest::default()
    };
    let ann = w.master("ann");
    let (published, ()) = tokio::join!(w.services.pages.publish(&ann, request), offload.beat());
    published.unwrap();
    assert_eq!(offload.jobs(), 1, "the page password, hashed");

    let attempt = |password| Unlock {
        handle: "ann",
        slug: "secret",
        password,
        next: "",
        client: "198.51.100.7",
    };
    let (wrong, ()) = tokio::join!(w.services.serving.unlock(attempt("guess")), offload.beat());
    assert!(matches!(wrong, Err(UnlockError::Wrong(_))));
    let (right, ()) = tokio::join!(
        w.services.serving.unlock(attempt("open sesame")),
        offload.beat()
    );
    assert_eq!(right.unwrap().location, "/ann/secret/");
    assert_eq!(offload.jobs(), 3);
}
