//! Publishing a page against the in-memory fakes, with failures injected at every step:
//! whatever fails or is refused, the stores hold exactly what they held before.

#[allow(dead_code)] // the lease tests' clock and timer are not used here
use crate::common;

use quire_pages::{PageError, PublishRequest};
use quire_testkit::memory::Op;

use common::{World, publish, publish_aliased, world, world_of};

#[tokio::test]
async fn publish_stores_record_bundle_and_link() {
    let w = world().await;
    let view = w
        .pages
        .publish(&w.ann, publish("Hello World"))
        .await
        .unwrap();
    assert_eq!(view.page.slug, "hello-world");
    assert_eq!(view.url, "http://ann.localhost:8081/hello-world/");
    assert_eq!(
        view.short_url.unwrap(),
        format!("http://localhost:8081/s/{}", view.page.public_id)
    );
    assert_eq!(view.page.file_count, 3);
    assert_eq!(w.bundles.keys().len(), 3);
    let state = w.store.snapshot();
    assert_eq!(state.links.len(), 1);
    assert!(state.pages[0].1, "ready");
    // A second publish with the same title gets the next slug.
    let again = w
        .pages
        .publish(&w.ann, publish("Hello World"))
        .await
        .unwrap();
    assert_eq!(again.page.slug, "hello-world-2");
}

#[tokio::test]
async fn a_failure_at_any_publish_step_leaves_no_trace() {
    let w = world().await;
    let before = w.store.snapshot();
    type Arm = fn(&World);
    let arms: Vec<(&str, Arm)> = vec![
        ("record", |w| w.store.fail(Op::InsertPending)),
        ("first upload", |w| w.bundles.fail_puts_after(0)),
        ("second upload", |w| w.bundles.fail_puts_after(1)),
        ("link", |w| w.store.fail(Op::InsertLink)),
        ("ready", |w| w.store.fail(Op::MarkReady)),
    ];
    for (step, arm) in arms {
        arm(&w);
        let err = w
            .pages
            .publish(&w.ann, publish("Doomed"))
            .await
            .unwrap_err();
        assert!(matches!(err, PageError::Infra(_)), "{step}: {err:?}");
        w.store.heal();
        w.bundles.heal();
        assert_eq!(
            w.store.snapshot(),
            before,
            "{step}: records or links left behind"
        );
        assert!(w.bundles.keys().is_empty(), "{step}: objects left behind");
    }
    // And the same publish then succeeds.
    w.pages.publish(&w.ann, publish("Doomed")).await.unwrap();
}

#[tokio::test]
async fn refused_publishes_store_nothing() {
    let w = world().await;
    w.pages
        .publish(&w.ann, publish_aliased("First", "taken"))
        .await
        .unwrap();
    let before = (w.store.snapshot(), w.bundles.keys());
    type Expect = fn(&PageError) -> bool;
    let cases: Vec<(PublishRequest, Expect)> = vec![
        (
            PublishRequest {
                policy: quire_links::PolicyInput {
                    alias: Some("taken".into()),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Second")
            },
            |e| matches!(e, PageError::AliasConflict),
        ),
        (
            PublishRequest {
                slug: Some("first".into()),
                ..publish("Second")
            },
            |e| matches!(e, PageError::SlugConflict),
        ),
        (
            PublishRequest {
                policy: quire_links::PolicyInput {
                    access: Some("password".into()),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Second")
            },
            |e| matches!(e, PageError::PasswordRequired),
        ),
        (
            PublishRequest {
                entrypoint: Some("missing.html".into()),
                ..publish("Second")
            },
            |e| matches!(e, PageError::Invalid(m) if m.contains("entrypoint")),
        ),
        (
            PublishRequest {
                policy: quire_links::PolicyInput {
                    allow: vec!["nobody_here".into()],
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Second")
            },
            |e| matches!(e, PageError::Invalid(m) if m.contains("nobody_here")),
        ),
        (
            PublishRequest {
                policy: quire_links::PolicyInput {
                    max_views: Some(0),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Second")
            },
            |e| matches!(e, PageError::Invalid(m) if m.contains("maxViews")),
        ),
        (
            PublishRequest {
                policy: quire_links::PolicyInput {
                    expires_at: Some("2000-01-01T00:00:00Z".into()),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Second")
            },
            |e| matches!(e, PageError::Invalid(m) if m.contains("expiresAt")),
        ),
        (
            PublishRequest {
                project: Some("not_mine".into()),
                ..publish("Second")
            },
            |e| matches!(e, PageError::InsufficientScope),
        ),
    ];
    for (req, check) in cases {
        let err = w.pages.publish(&w.ann, req).await.unwrap_err();
        assert!(check(&err), "{err:?}");
        assert_eq!((w.store.snapshot(), w.bundles.keys()), before);
    }
}

#[tokio::test]
async fn public_ids_that_keep_colliding_exhaust() {
    let w = world_of(quire_testkit::World::builder().public_ids("SAMESAME01")).await;
    w.pages.publish(&w.ann, publish("One")).await.unwrap();
    let err = w.pages.publish(&w.ann, publish("Two")).await.unwrap_err();
    assert_eq!(err, PageError::PublicIdExhausted);
    assert_eq!(w.store.snapshot().pages.len(), 1);
}
