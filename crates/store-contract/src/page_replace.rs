//! Replacing a page's whole manifest: the old files go, the new ones are the page's only
//! files, the totals follow, and the replaced objects are reported for removal.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::{Clock, PageId};
use quire_links::LinkStore;
use quire_pages::validate::LimitKind;
use quire_pages::{AccountDirectory, Limits, PageStore, PageTotals, PutFilesError};
use time::Duration;

use super::support::{file, lease, page_of, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn replace_files_swaps_the_whole_manifest<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let page = page_of(&ann.account, ann.project.id, "site", "RRRRRRRRR1", &clock);
    s.insert_pending(
        &page,
        &[
            file("index.html", 3),
            file("old.css", 4),
            file("same.js", 5),
        ],
        lease(&clock),
    )
    .await
    .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let later = clock.now() + Duration::minutes(1);
    let limits = Limits::default();
    let replaced = s
        .replace_files(
            page.id,
            &[file("index.html", 7), file("same.js", 5)],
            &limits,
            later,
        )
        .await
        .unwrap();
    assert_eq!(
        replaced.totals,
        PageTotals {
            file_count: 2,
            size_bytes: 12
        }
    );
    let mut previous = replaced.previous;
    previous.sort();
    let mut expected = vec![
        file("index.html", 3).sha256,
        file("old.css", 4).sha256,
        file("same.js", 5).sha256,
    ];
    expected.sort();
    assert_eq!(previous, expected, "every replaced file is reported");
    assert_eq!(
        s.files(page.id).await.unwrap(),
        vec![file("index.html", 7), file("same.js", 5)],
        "a file not sent again is gone"
    );
    let stored = s.page(page.id).await.unwrap().unwrap();
    assert_eq!(
        (
            stored.size_bytes,
            stored.file_count,
            stored.updated_at,
            stored.slug
        ),
        (12, 2, later, page.slug.clone()),
        "totals and time follow; the slug stays"
    );

    // Over a limit: refused, nothing changed.
    let tight = Limits {
        max_files: 1,
        max_file_bytes: 100,
        max_page_bytes: 100,
    };
    assert_eq!(
        s.replace_files(page.id, &[file("a", 1), file("b", 1)], &tight, later)
            .await,
        Err(PutFilesError::TooLarge {
            limit: LimitKind::Files,
            files: 2,
            bytes: 2
        })
    );
    assert_eq!(
        s.files(page.id).await.unwrap(),
        vec![file("index.html", 7), file("same.js", 5)]
    );

    // A page that is gone, or not ready yet, takes no files.
    let pending = page_of(
        &ann.account,
        ann.project.id,
        "pending",
        "RRRRRRRRR2",
        &clock,
    );
    s.insert_pending(&pending, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    for id in [PageId::new(), pending.id] {
        assert_eq!(
            s.replace_files(id, &[file("x", 1)], &limits, later).await,
            Err(PutFilesError::NotFound)
        );
    }
    assert_eq!(
        s.files(pending.id).await.unwrap(),
        vec![file("index.html", 3)]
    );
}
