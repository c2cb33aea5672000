//! The object use cases on the in-memory fakes: every step of an upload, a replacement and a
//! delete made to fail in turn, and what stays afterwards (nothing, or what the janitor
//! then removes).

use bytes::Bytes;
use quire_objects::{NewObject, ObjectError, ObjectService};
use quire_testkit::World;
use quire_testkit::memory::Op;
use time::Duration;

async fn world(failing: &[Op]) -> World {
    let mut builder = World::builder()
        .accounts(&["ann"])
        .settings(|s| s.objects.max_bytes = 1_000);
    for op in failing {
        builder = builder.failing(*op);
    }
    builder.build().await
}

fn objects(w: &World) -> &ObjectService {
    &w.services.objects
}

fn named(title: &str) -> NewObject {
    NewObject {
        title: Some(title.into()),
        policy: quire_links::PolicyInput {
            access: Some("public".into()),
            max_views: Some(3),
            ..quire_links::PolicyInput::default()
        },
        ..NewObject::default()
    }
}

/// Nothing of any object stays: no record, no link of an object, no bytes.
fn assert_no_trace(w: &World) {
    let state = w.store.snapshot();
    assert!(state.objects.is_empty(), "{:?}", state.objects);
    assert!(state.object_leases.is_empty());
    assert!(state.links.iter().all(|l| l.object().is_none()));
    assert!(
        w.object_bytes.stored().is_empty(),
        "{:?}",
        w.object_bytes.stored()
    );
}

#[tokio::test]
async fn an_upload_stores_bytes_link_and_record_in_that_order() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let mut upload = objects(&w)
        .begin(&ann, named("Deck"), Some("deck.pdf"))
        .await
        .unwrap();
    // Pending: invisible, no link yet.
    assert!(
        objects(&w)
            .list(&ann, None, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
    assert!(w.store.snapshot().links.is_empty());
    upload.write(Bytes::from_static(b"%PDF-")).await.unwrap();
    upload.write(Bytes::from_static(b"1.7")).await.unwrap();
    let view = upload.finish().await.unwrap();
    assert_eq!(view.object.size_bytes, 8);
    assert_eq!(
        view.object.sha256,
        quire_kernel::secret::sha256_hex(b"%PDF-1.7")
    );
    assert_eq!(view.object.filename, "deck.pdf");
    assert_eq!(view.object.content_type, "application/pdf");
    assert_eq!(view.link.object(), Some(view.object.id));
    assert_eq!(view.link.policy.max_views, Some(3));
    assert_eq!(view.link.public_id, view.object.public_id);
    assert_eq!(
        w.object_bytes.stored(),
        vec![(view.object.id, view.object.blob.clone(), 8)]
    );
    let listed = objects(&w).list(&ann, None, None).await.unwrap().0;
    assert_eq!(listed, vec![view]);
}

#[tokio::test]
async fn a_failed_step_of_an_upload_leaves_no_trace() {
    for op in [Op::InsertLink, Op::MarkReady] {
        let w = world(&[op]).await;
        let ann = w.master("ann");
        let mut upload = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
        upload.write(Bytes::from_static(b"bytes")).await.unwrap();
        assert!(upload.finish().await.is_err(), "{op:?}");
        assert_no_trace(&w);
    }
    // The record itself cannot be stored: nothing is started.
    let w = world(&[Op::InsertObject]).await;
    assert!(
        objects(&w)
            .begin(&w.master("ann"), named("Deck"), None)
            .await
            .is_err()
    );
    assert_no_trace(&w);
    // The bytes cannot be written.
    let w = world(&[]).await;
    w.object_bytes.fail(Op::Put);
    let mut upload = objects(&w)
        .begin(&w.master("ann"), named("Deck"), None)
        .await
        .unwrap();
    assert!(upload.write(Bytes::from_static(b"bytes")).await.is_err());
    assert_no_trace(&w);
}

#[tokio::test]
async fn the_cap_is_kept_as_bytes_arrive_and_declared_lengths_are_refused_first() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let declared = NewObject {
        declared_size: Some(1_001),
        ..named("Big")
    };
    assert_eq!(
        objects(&w).begin(&ann, declared, None).await.unwrap_err(),
        ObjectError::TooLarge { limit: 1_000 }
    );
    assert_no_trace(&w);
    let mut upload = objects(&w).begin(&ann, named("Big"), None).await.unwrap();
    upload.write(Bytes::from(vec![0u8; 600])).await.unwrap();
    assert_eq!(
        upload.write(Bytes::from(vec![0u8; 401])).await.unwrap_err(),
        ObjectError::TooLarge { limit: 1_000 }
    );
    assert_no_trace(&w);
    let mut exact = objects(&w).begin(&ann, named("Exact"), None).await.unwrap();
    exact.write(Bytes::from(vec![0u8; 1_000])).await.unwrap();
    assert_eq!(exact.finish().await.unwrap().object.size_bytes, 1_000);
}

#[tokio::test]
async fn an_upload_that_dies_is_swept_once_its_lease_lapses_and_frees_its_slug() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let mut dead = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    dead.write(Bytes::from_static(b"half")).await.unwrap();
    drop(dead);
    assert_eq!(w.store.snapshot().objects.len(), 1);
    // Within its lease the slug stays held: the next upload steps past it.
    let second = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    let second = second.finish().await.unwrap();
    assert_eq!(second.object.slug, "deck-2");
    let swept = objects(&w).sweep(std::time::Duration::ZERO).await.unwrap();
    assert_eq!(swept.dead_uploads, 0);
    w.clock.advance(Duration::minutes(2));
    let swept = objects(&w).sweep(std::time::Duration::ZERO).await.unwrap();
    assert_eq!(swept.dead_uploads, 1);
    let state = w.store.snapshot();
    assert_eq!(state.objects.len(), 1);
    assert_eq!(state.objects[0].0.id, second.object.id);
    // Its slug is free again.
    let third = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    assert_eq!(third.finish().await.unwrap().object.slug, "deck");
}

#[tokio::test]
async fn a_replacement_keeps_link_and_counts_and_a_failed_one_keeps_the_old_bytes() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let mut first = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    first.write(Bytes::from_static(b"one")).await.unwrap();
    let first = first.finish().await.unwrap();
    let id = first.object.id;

    w.store.fail(Op::SwapContents);
    let mut failed = objects(&w)
        .begin_replace(&ann, id, Some("two.txt"), None, None)
        .await
        .unwrap();
    failed.write(Bytes::from_static(b"two")).await.unwrap();
    assert!(failed.finish().await.is_err());
    assert_eq!(
        w.object_bytes.stored(),
        vec![(id, first.object.blob.clone(), 3)]
    );
    assert_eq!(objects(&w).get(&ann, id).await.unwrap(), first);
    w.store.heal();

    let mut second = objects(&w)
        .begin_replace(&ann, id, Some("two.txt"), None, None)
        .await
        .unwrap();
    second.write(Bytes::from_static(b"second")).await.unwrap();
    let second = second.finish().await.unwrap();
    assert_eq!(second.object.id, id);
    assert_eq!(second.object.filename, "two.txt");
    assert_eq!(second.object.content_type, "text/plain; charset=utf-8");
    assert_eq!(second.url, first.url);
    assert_eq!(second.short_url, first.short_url);
    assert_eq!(second.link, first.link);
    assert_ne!(second.object.blob, first.object.blob);
    assert_eq!(w.object_bytes.stored(), vec![(id, second.object.blob, 6)]);
}

#[tokio::test]
async fn a_delete_whose_storage_fails_says_so_and_the_janitor_finishes_it() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let mut upload = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    upload.write(Bytes::from_static(b"bytes")).await.unwrap();
    let view = upload.finish().await.unwrap();
    w.object_bytes.fail(Op::Delete);
    assert_eq!(
        objects(&w).delete(&ann, view.object.id).await.unwrap_err(),
        ObjectError::StorageCleanupFailed
    );
    assert_eq!(
        objects(&w).get(&ann, view.object.id).await.unwrap_err(),
        ObjectError::NotFound
    );
    assert_eq!(w.object_bytes.stored().len(), 1);
    w.object_bytes.heal();
    let swept = objects(&w).sweep(std::time::Duration::ZERO).await.unwrap();
    assert_eq!(swept.orphaned, 1);
    assert!(w.object_bytes.stored().is_empty());

    // The link step fails: the record still goes, and the answer says what stayed.
    let mut upload = objects(&w).begin(&ann, named("Deck"), None).await.unwrap();
    upload.write(Bytes::from_static(b"bytes")).await.unwrap();
    let view = upload.finish().await.unwrap();
    w.store.fail(Op::DeleteLink);
    assert_eq!(
        objects(&w).delete(&ann, view.object.id).await.unwrap_err(),
        ObjectError::LinkCleanupFailed
    );
    assert!(w.store.snapshot().objects.is_empty());
}

/// Of several bad policy fields, an object is told of the first in its order: the allow list
/// before the alias, a taken alias before the password.
#[tokio::test]
async fn several_bad_policy_fields_are_refused_in_the_objects_order() {
    let w = world(&[]).await;
    let ann = w.master("ann");
    let bad_allow_and_alias = NewObject {
        policy: quire_links::PolicyInput {
            alias: Some("a".into()),
            allow: vec!["nobody_here".into()],
            ..named("Doubly bad").policy
        },
        ..named("Doubly bad")
    };
    assert!(matches!(
        objects(&w).begin(&ann, bad_allow_and_alias, None).await.err(),
        Some(ObjectError::Invalid(m)) if m.contains("nobody_here")
    ));
    let mut upload = objects(&w)
        .begin(
            &ann,
            NewObject {
                policy: quire_links::PolicyInput {
                    alias: Some("taken".into()),
                    ..named("First").policy
                },
                ..named("First")
            },
            None,
        )
        .await
        .unwrap();
    upload.write(Bytes::from_static(b"bytes")).await.unwrap();
    upload.finish().await.unwrap();
    let taken_and_no_password = NewObject {
        policy: quire_links::PolicyInput {
            alias: Some("taken".into()),
            access: Some("password".into()),
            ..named("Doubly bad").policy
        },
        ..named("Doubly bad")
    };
    assert!(matches!(
        objects(&w)
            .begin(&ann, taken_and_no_password, None)
            .await
            .err(),
        Some(ObjectError::AliasConflict)
    ));
}
