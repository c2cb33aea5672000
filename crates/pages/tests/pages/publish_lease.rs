//! The publish lease against the in-memory fakes: a running publish renews it and keeps its
//! slug; a dead one frees the slug once the lease lapses, and is swept without a trace.

use crate::common;

use quire_kernel::PageId;
use quire_pages::{PageError, PublishRequest};
use quire_testkit::memory::Op;

use common::{World, publish, world};

/// Waits (yielding to spawned tasks, never sleeping) until `done` holds; panics after
/// 10,000 turns.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if done() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("never happened: {what}");
}

/// Starts a publish of `slug` whose upload stalls, and returns once its pending record is
/// stored.
async fn stalled_publish(
    w: &World,
    slug: &str,
) -> (tokio::task::JoinHandle<Result<PageId, PageError>>, PageId) {
    w.bundles.stall_puts(true);
    let pages = w.pages.clone();
    let ann = w.ann.clone();
    let req = PublishRequest {
        slug: Some(slug.into()),
        ..publish("Stalled")
    };
    let known: Vec<PageId> = w.store.snapshot().pages.iter().map(|p| p.0.id).collect();
    let task = tokio::spawn(async move { pages.publish(&ann, req).await.map(|v| v.page.id) });
    until("the pending record", || {
        w.store.snapshot().pages.len() > known.len()
    })
    .await;
    let id = w
        .store
        .snapshot()
        .pages
        .iter()
        .map(|p| p.0.id)
        .find(|id| !known.contains(id))
        .unwrap();
    (task, id)
}

/// The one page left is `survivor`, read back under `slug`, and every stored object is its
/// own: the publish `gone` (reclaimed or undone) left no record and no object.
async fn assert_sole_page(w: &World, survivor: PageId, gone: PageId, slug: &str) {
    let state = w.store.snapshot();
    assert_eq!(state.pages.len(), 1, "{gone} left its record");
    assert!(state.pages.iter().all(|p| p.0.id != gone));
    let keys = w.bundles.keys();
    assert!(keys.iter().all(|(owner, _)| *owner == survivor), "{keys:?}");
    assert_eq!(w.pages.get(&w.ann, survivor).await.unwrap().page.slug, slug);
}

fn with_slug(slug: &str) -> PublishRequest {
    PublishRequest {
        slug: Some(slug.into()),
        ..publish("Again")
    }
}

#[tokio::test]
async fn a_dead_publish_frees_its_slug_once_its_lease_lapses() {
    let w = world().await;
    let (task, dead) = stalled_publish(&w, "site").await;
    task.abort(); // the process died mid-upload: nothing renews the lease any more
    let _ = task.await;
    w.bundles.stall_puts(false);

    w.clock.advance(time::Duration::seconds(59));
    assert_eq!(
        w.pages
            .publish(&w.ann, with_slug("site"))
            .await
            .unwrap_err(),
        PageError::SlugConflict,
        "within the lease the slug stays held"
    );
    w.clock.advance(time::Duration::seconds(2));
    let view = w.pages.publish(&w.ann, with_slug("site")).await.unwrap();

    assert_eq!(view.page.slug, "site");
    assert_sole_page(&w, view.page.id, dead, "site").await;
}

#[tokio::test]
async fn a_running_publish_renews_its_lease_and_keeps_its_slug() {
    let w = world().await;
    let (task, running) = stalled_publish(&w, "site").await;
    for _ in 0..4 {
        w.clock.advance(time::Duration::seconds(30));
        let before = w.store.snapshot().leases[&running];
        w.timer.fire();
        until("the lease renewed", || {
            w.store.snapshot().leases[&running] > before
        })
        .await;
    }
    assert_eq!(
        w.pages
            .publish(&w.ann, with_slug("site"))
            .await
            .unwrap_err(),
        PageError::SlugConflict,
        "two minutes in, but renewed: the publish still holds its slug"
    );
    assert_eq!(w.pages.sweep().await.unwrap().pending_pages, 0);

    w.bundles.stall_puts(false);
    assert_eq!(task.await.unwrap().unwrap(), running);
    assert_eq!(
        w.pages.get(&w.ann, running).await.unwrap().page.slug,
        "site"
    );
    assert!(
        w.store.snapshot().leases.is_empty(),
        "ready pages hold no lease"
    );
}

#[tokio::test]
async fn a_renewal_that_fails_is_retried_and_does_not_stop_the_publish() {
    let w = world().await;
    let (task, running) = stalled_publish(&w, "site").await;
    let granted = w.store.snapshot().leases[&running];
    w.store.fail(Op::RenewLease);
    w.timer.fire();
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(w.store.snapshot().leases[&running], granted, "not renewed");
    w.store.heal();
    w.clock.advance(time::Duration::seconds(30));
    w.timer.fire();
    until("the retried renewal", || {
        w.store.snapshot().leases[&running] > granted
    })
    .await;
    w.bundles.stall_puts(false);
    assert_eq!(task.await.unwrap().unwrap(), running);
}

#[tokio::test]
async fn a_publish_that_lost_its_lease_fails_and_leaves_the_new_page_alone() {
    let w = world().await;
    let (task, stalled) = stalled_publish(&w, "site").await;
    w.clock.advance(time::Duration::seconds(61)); // stalled past its lease, not renewed
    w.bundles.stall_puts(false);
    let winner = w.pages.publish(&w.ann, with_slug("site")).await.unwrap();
    w.timer.fire();

    let err = task.await.unwrap().unwrap_err();

    assert!(matches!(err, PageError::Infra(_)), "{err:?}");
    assert_sole_page(&w, winner.page.id, stalled, "site").await;
    assert_eq!(w.store.snapshot().links.len(), 1);
    assert!(!w.bundles.keys().is_empty());
}

#[tokio::test]
async fn interrupted_publishes_are_invisible_and_swept_once_their_lease_lapses() {
    let w = world().await;
    // Simulate a crash after the record and one object: the fake keeps what was written.
    w.store.fail(Op::MarkReady);
    w.store.fail(Op::DeletePage);
    w.bundles.fail(Op::DeletePage);
    assert!(w.pages.publish(&w.ann, publish("Crashed")).await.is_err());
    w.store.heal();
    w.bundles.heal();
    let state = w.store.snapshot();
    assert_eq!(state.pages.len(), 1);
    let crashed: PageId = state.pages[0].0.id;
    assert_eq!(
        w.pages.get(&w.ann, crashed).await.unwrap_err(),
        PageError::NotFound
    );
    let (_, listed) = w.pages.list(&w.ann, None, None).await.unwrap();
    assert!(listed.is_empty());

    assert_eq!(
        w.pages.sweep().await.unwrap().pending_pages,
        0,
        "leased: perhaps still running"
    );
    w.clock.advance(time::Duration::seconds(61));
    assert_eq!(w.pages.sweep().await.unwrap().pending_pages, 1);
    assert!(w.store.snapshot().pages.is_empty());
    assert!(w.bundles.keys().is_empty());
}
