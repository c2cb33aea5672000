//! Publishes remembered by request id: recalled per caller (a credential) and id from a
//! given time on, the first page remembered kept, forgotten before a time by the sweep.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, PageId};
use quire_pages::{Page, PageStore, PublishRequests};
use time::Duration;

use super::support::{file, page_of, seed};
use quire_testkit::fixtures::FixedClock;

async fn ready<S: PageStore>(s: &S, page: &Page) {
    s.insert_pending(
        page,
        &[file("index.html", 1)],
        page.created_at + Duration::minutes(1),
    )
    .await
    .unwrap();
    s.mark_ready(page.id).await.unwrap();
}

pub(super) async fn publishes_are_recalled_per_caller_and_id_first_page_kept<
    S: AccountStore + PageStore + PublishRequests + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let first = page_of(&ann.account, ann.project.id, "first", "pubreq0001", &clock);
    let second = page_of(&ann.account, ann.project.id, "second", "pubreq0002", &clock);
    ready(s.as_ref(), &first).await;
    ready(s.as_ref(), &second).await;
    // Microseconds, as both databases keep them.
    let at = clock.now() + Duration::microseconds(123_457);
    let key = "key:0b5e";

    assert_eq!(s.recall(key, "req-1", at).await.unwrap(), None);
    s.remember(key, "req-1", first.id, at).await.unwrap();
    assert_eq!(s.recall(key, "req-1", at).await.unwrap(), Some(first.id));
    // Remembered "at or after since": the same instant counts, a microsecond later not.
    assert_eq!(
        s.recall(key, "req-1", at - Duration::hours(24))
            .await
            .unwrap(),
        Some(first.id)
    );
    assert_eq!(
        s.recall(key, "req-1", at + Duration::microseconds(1))
            .await
            .unwrap(),
        None
    );

    // A second publish with the same id (a race lost) keeps the page named first.
    s.remember(key, "req-1", second.id, at + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(s.recall(key, "req-1", at).await.unwrap(), Some(first.id));

    // The same request id from another credential is another request; another id of the
    // same credential too.
    assert_eq!(s.recall("key:other", "req-1", at).await.unwrap(), None);
    assert_eq!(s.recall(key, "req-2", at).await.unwrap(), None);
    s.remember("key:other", "req-1", second.id, at)
        .await
        .unwrap();
    s.remember(key, "req-2", second.id, at).await.unwrap();
    assert_eq!(
        s.recall("key:other", "req-1", at).await.unwrap(),
        Some(second.id)
    );
    assert_eq!(s.recall(key, "req-1", at).await.unwrap(), Some(first.id));
    assert_eq!(s.recall(key, "req-2", at).await.unwrap(), Some(second.id));
}

pub(super) async fn remembered_publishes_are_forgotten_before_a_time<
    S: AccountStore + PageStore + PublishRequests + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let bob = seed(&s, &clock, "bob").await;
    let page = page_of(&bob.account, bob.project.id, "kept", "pubreq0003", &clock);
    ready(s.as_ref(), &page).await;
    let t0 = clock.now();
    let day = Duration::hours(24);
    let ids: [(&str, time::OffsetDateTime); 3] = [
        ("old", t0 - day - Duration::seconds(1)),
        ("edge", t0 - day),
        ("new", t0),
    ];
    for (id, at) in ids {
        s.remember("oauth:c1", id, page.id, at).await.unwrap();
    }
    let since = |at: time::OffsetDateTime| at - Duration::days(365);
    // Strictly before: the one remembered exactly at the cut stays.
    assert_eq!(s.forget_before(t0 - day).await.unwrap(), 1);
    let recalled = |id: &'static str, at| {
        let s = s.clone();
        async move { s.recall("oauth:c1", id, since(at)).await.unwrap() }
    };
    assert_eq!(recalled("old", t0).await, None);
    assert_eq!(recalled("edge", t0).await, Some(page.id));
    assert_eq!(recalled("new", t0).await, Some(page.id));
    // Nothing left before the cut; the rest goes when the cut passes it.
    assert_eq!(s.forget_before(t0 - day).await.unwrap(), 0);
    assert_eq!(
        s.forget_before(t0 + Duration::microseconds(1))
            .await
            .unwrap(),
        2
    );
    assert_eq!(recalled("new", t0).await, None::<PageId>);
    // A forgotten id may be remembered again, for another page.
    s.remember("oauth:c1", "old", page.id, t0).await.unwrap();
    assert_eq!(recalled("old", t0).await, Some(page.id));
}
