//! Upload URLs on the in-memory fakes: the fields checked when the URL is made, the bytes
//! taken once (on either of two replicas), within the URL's time and cap, and nothing left
//! of a URL that expired or whose upload was refused once the janitor has run.

use bytes::Bytes;
use quire_kernel::Clock;
use quire_objects::{NewObject, ObjectError, ObjectService, UploadOffer};
use quire_testkit::World;
use time::Duration;

async fn world() -> World {
    World::builder()
        .accounts(&["ann"])
        .settings(|s| s.objects.max_bytes = 1_000)
        .build()
        .await
}

fn objects(w: &World) -> &ObjectService {
    &w.services.objects
}

fn report() -> NewObject {
    NewObject {
        filename: Some("report.pdf".into()),
        policy: quire_links::PolicyInput {
            access: Some("password".into()),
            password: Some("correct horse".into()),
            max_views: Some(2),
            alias: Some("q3-report".into()),
            ..quire_links::PolicyInput::default()
        },
        ..NewObject::default()
    }
}

async fn offered(w: &World, max_bytes: Option<u64>) -> UploadOffer {
    objects(w)
        .offer_upload(&w.master("ann"), report(), max_bytes)
        .await
        .unwrap()
}

/// Nothing of any object stays: no record, no link of an object, no bytes.
fn assert_no_trace(w: &World) {
    let state = w.store.snapshot();
    assert!(state.objects.is_empty(), "{:?}", state.objects);
    assert!(state.links.iter().all(|l| l.object().is_none()));
    assert!(w.object_bytes.stored().is_empty());
}

#[tokio::test]
async fn a_url_takes_its_bytes_once_with_the_policy_given_when_it_was_made() {
    let w = world().await;
    let ann = w.master("ann");
    let offer = offered(&w, Some(100)).await;
    assert_eq!(offer.max_bytes, 100);
    assert_eq!(offer.expires_at, w.clock.now() + Duration::minutes(15));
    // Waiting for its bytes: invisible, but its slug and alias are taken.
    assert!(
        objects(&w)
            .list(&ann, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    let again = objects(&w).offer_upload(&ann, report(), None).await;
    assert_eq!(again.unwrap_err(), ObjectError::AliasConflict);

    let mut upload = objects(&w)
        .accept_offer(offer.token.expose(), Some(8))
        .await
        .unwrap();
    upload.write(Bytes::from_static(b"%PDF-1.7")).await.unwrap();
    let view = upload.finish().await.unwrap();
    assert_eq!(view.object.id, offer.view.object.id);
    assert_eq!(view.object.size_bytes, 8);
    assert_eq!(view.object.content_type, "application/pdf");
    assert_eq!(view.link.policy.max_views, Some(2));
    assert!(view.link.password_hash.is_some());
    assert_eq!(view.link.alias.as_deref(), Some("q3-report"));
    let (listed, _) = objects(&w).list(&ann, None, None).await.unwrap();
    assert_eq!(listed.len(), 1);

    // A replay, here or on another replica, is refused and changes nothing.
    let replayed = objects(&w).accept_offer(offer.token.expose(), None).await;
    assert_eq!(replayed.unwrap_err(), ObjectError::UploadUrlUsed);
    let elsewhere = w.replica();
    let replayed = elsewhere
        .objects
        .accept_offer(offer.token.expose(), None)
        .await;
    assert_eq!(replayed.unwrap_err(), ObjectError::UploadUrlUsed);
    assert_eq!(
        objects(&w)
            .get(&ann, view.object.id)
            .await
            .unwrap()
            .object
            .size_bytes,
        8
    );
}

#[tokio::test]
async fn a_second_use_while_the_first_runs_is_refused_on_another_replica() {
    let w = world().await;
    let offer = offered(&w, None).await;
    let first = objects(&w)
        .accept_offer(offer.token.expose(), None)
        .await
        .unwrap();
    let elsewhere = w.replica();
    let second = elsewhere
        .objects
        .accept_offer(offer.token.expose(), None)
        .await;
    assert_eq!(second.unwrap_err(), ObjectError::UploadUrlUsed);
    first.finish().await.unwrap();
}

#[tokio::test]
async fn an_expired_url_is_refused_and_the_janitor_clears_it() {
    let w = world().await;
    let offer = offered(&w, None).await;
    w.clock.advance(Duration::minutes(16));
    let late = objects(&w).accept_offer(offer.token.expose(), None).await;
    assert_eq!(late.unwrap_err(), ObjectError::UploadUrlExpired);
    let swept = objects(&w)
        .sweep(std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(swept.dead_uploads, 1);
    assert_no_trace(&w);
    let cleared = objects(&w).accept_offer(offer.token.expose(), None).await;
    assert_eq!(cleared.unwrap_err(), ObjectError::UploadUrlUnknown);
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_and_nothing_stays() {
    let w = world().await;
    // Declared: refused before a byte is stored.
    let offer = offered(&w, Some(4)).await;
    let declared = objects(&w)
        .accept_offer(offer.token.expose(), Some(5))
        .await;
    assert_eq!(declared.unwrap_err(), ObjectError::TooLarge { limit: 4 });
    assert_no_trace(&w);
    let spent = objects(&w)
        .accept_offer(offer.token.expose(), Some(4))
        .await;
    assert_eq!(spent.unwrap_err(), ObjectError::UploadUrlUnknown);
    // Streamed: refused when the bytes pass the cap.
    let offer = offered(&w, Some(4)).await;
    let mut upload = objects(&w)
        .accept_offer(offer.token.expose(), None)
        .await
        .unwrap();
    upload.write(Bytes::from_static(b"1234")).await.unwrap();
    let over = upload.write(Bytes::from_static(b"5")).await;
    assert_eq!(over.unwrap_err(), ObjectError::TooLarge { limit: 4 });
    assert_no_trace(&w);
}

#[tokio::test]
async fn fields_are_checked_when_the_url_is_made_and_unknown_tokens_refused() {
    let w = world().await;
    let ann = w.master("ann");
    let no_password = NewObject {
        policy: quire_links::PolicyInput {
            password: None,
            ..report().policy
        },
        ..report()
    };
    let refused = objects(&w).offer_upload(&ann, no_password, None).await;
    assert_eq!(refused.unwrap_err(), ObjectError::PasswordRequired);
    for cap in [0, 1_001] {
        let refused = objects(&w).offer_upload(&ann, report(), Some(cap)).await;
        assert!(
            matches!(refused, Err(ObjectError::Invalid(ref m)) if m.contains("maxBytes")),
            "{refused:?}"
        );
    }
    assert_no_trace(&w);
    for token in [
        "",
        "short",
        &"A".repeat(43),
        &format!("{}/", "A".repeat(42)),
    ] {
        let unknown = objects(&w).accept_offer(token, None).await;
        assert_eq!(unknown.unwrap_err(), ObjectError::UploadUrlUnknown);
    }
}
