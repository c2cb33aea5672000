//! A page's files: replaced by path with the totals kept, the limits and counters held under
//! concurrent writes, and a write racing the page's delete.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::Clock;
use quire_kernel::PageId;
use quire_links::LinkStore;
use quire_pages::AccountDirectory;
use quire_pages::PageStore;
use quire_pages::validate::LimitKind;
use quire_pages::{Limits, PageTotals, PutFilesError};
use time::Duration;

use super::support::{file, lease, page_of, seed};
use quire_testkit::fixtures::FixedClock;

pub(super) async fn put_files_replaces_by_path_and_sets_totals<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let page = page_of(&ann.account, ann.project.id, "site", "CCCCCCCCC1", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let later = clock.now() + Duration::minutes(1);
    let limits = Limits::default();
    let totals = s
        .put_files(
            page.id,
            &[file("index.html", 7), file("new.js", 2)],
            &limits,
            later,
        )
        .await
        .unwrap();
    assert_eq!(
        totals,
        PageTotals {
            file_count: 2,
            size_bytes: 9
        },
        "a replaced path counts its new size once"
    );
    let files = s.files(page.id).await.unwrap();
    assert_eq!(files, vec![file("index.html", 7), file("new.js", 2)]);
    let stored = s.page(page.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.size_bytes, stored.file_count, stored.updated_at),
        (9, 2, later)
    );

    // Over a limit, counted with the files kept: refused, nothing changed.
    let tight = Limits {
        max_files: 3,
        max_file_bytes: 100,
        max_page_bytes: 20,
    };
    let even_later = later + Duration::minutes(1);
    assert_eq!(
        s.put_files(page.id, &[file("a", 1), file("b", 1)], &tight, even_later)
            .await,
        Err(PutFilesError::TooLarge {
            limit: LimitKind::Files,
            files: 4,
            bytes: 11
        })
    );
    assert_eq!(
        s.put_files(page.id, &[file("new.js", 14)], &tight, even_later)
            .await,
        Err(PutFilesError::TooLarge {
            limit: LimitKind::PageSize,
            files: 2,
            bytes: 21
        })
    );
    assert_eq!(s.files(page.id).await.unwrap(), files);
    let stored = s.page(page.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.size_bytes, stored.file_count, stored.updated_at),
        (9, 2, later)
    );
    // Replacing within the limits: the size by the difference, the count not at all.
    assert_eq!(
        s.put_files(page.id, &[file("new.js", 13)], &tight, even_later)
            .await,
        Ok(PageTotals {
            file_count: 2,
            size_bytes: 20
        })
    );

    // A page that is gone, or not ready yet, takes no files.
    let pending = page_of(
        &ann.account,
        ann.project.id,
        "pending",
        "CCCCCCCCC3",
        &clock,
    );
    s.insert_pending(&pending, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    for id in [PageId::new(), pending.id] {
        assert_eq!(
            s.put_files(id, &[file("x", 1)], &limits, later).await,
            Err(PutFilesError::NotFound)
        );
    }
    assert_eq!(
        s.files(pending.id).await.unwrap(),
        vec![file("index.html", 3)]
    );

    // Manifests larger than one insert statement: 2,345 rows at publish, 1,234 more added,
    // every one stored once, in path order.
    let many: Vec<_> = (0..2_345)
        .map(|n| file(&format!("a/{n:05}.txt"), n))
        .collect();
    let big = page_of(&ann.account, ann.project.id, "big", "CCCCCCCCC2", &clock);
    s.insert_pending(&big, &many, lease(&clock)).await.unwrap();
    s.mark_ready(big.id).await.unwrap();
    let more: Vec<_> = (0..1_234)
        .map(|n| file(&format!("b/{n:05}.txt"), n))
        .collect();
    let roomy = Limits {
        max_files: 10_000,
        ..Limits::default()
    };
    let totals = s.put_files(big.id, &more, &roomy, later).await.unwrap();
    let stored = s.files(big.id).await.unwrap();
    assert_eq!(stored.len(), 3_579);
    assert_eq!(stored[..2_345], many[..]);
    assert_eq!(stored[2_345..], more[..]);
    assert_eq!(
        totals,
        PageTotals {
            file_count: 3_579,
            size_bytes: stored.iter().map(|f| f.size_bytes).sum()
        }
    );
}

/// The page's counters against its manifest.
async fn counters_and_files<S: PageStore>(s: &S, id: PageId) -> ((u64, u64), (u64, u64)) {
    let page = s.page(id).await.unwrap().unwrap();
    let files = s.files(id).await.unwrap();
    (
        (page.file_count, page.size_bytes),
        (files.len() as u64, files.iter().map(|f| f.size_bytes).sum()),
    )
}

/// Runs `tasks` concurrently, each released at once by a barrier, and returns their results.
async fn all_at_once<T, F>(tasks: Vec<F>) -> Vec<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(tokio::sync::Barrier::new(tasks.len()));
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                task.await
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

pub(super) async fn concurrent_put_files_keep_the_limits_and_counters<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let limits = Limits {
        max_files: 1_000,
        max_file_bytes: 10 << 20,
        max_page_bytes: 50 << 20,
    };
    let later = clock.now() + Duration::minutes(1);

    // Eight batches of 999 new files into a page of one, under a limit of 1,000 files.
    let page = page_of(&ann.account, ann.project.id, "count", "KKKKKKKKK1", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let tasks = (0..8)
        .map(|t| {
            let s = s.clone();
            let batch: Vec<_> = (0..999)
                .map(|n| file(&format!("t{t}/{n:03}.txt"), 1))
                .collect();
            async move { s.put_files(page.id, &batch, &limits, later).await }
        })
        .collect::<Vec<_>>();
    let results = all_at_once(tasks).await;
    let added = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(added, 1, "{results:?}");
    for r in &results {
        assert!(
            matches!(
                r,
                Ok(_)
                    | Err(PutFilesError::TooLarge {
                        limit: LimitKind::Files,
                        ..
                    })
            ),
            "{r:?}"
        );
    }
    let (counters, files) = counters_and_files(&*s, page.id).await;
    assert_eq!(files, (1_000, 1_002));
    assert_eq!(counters, files);

    // Eight files of 9 MiB into a page of 3 bytes, under a limit of 50 MiB: five fit.
    let page = page_of(&ann.account, ann.project.id, "size", "KKKKKKKKK2", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let tasks = (0..8)
        .map(|t| {
            let s = s.clone();
            let batch = vec![file(&format!("big{t}.bin"), 9 << 20)];
            async move { s.put_files(page.id, &batch, &limits, later).await }
        })
        .collect::<Vec<_>>();
    let results = all_at_once(tasks).await;
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        5,
        "{results:?}"
    );
    let (counters, files) = counters_and_files(&*s, page.id).await;
    assert_eq!(files, (6, 3 + 5 * (9 << 20)));
    assert_eq!(counters, files);

    // Sixteen batches that add one file each and replace a shared one: every file counted
    // once, the shared one at the size that committed last.
    let page = page_of(&ann.account, ann.project.id, "mixed", "KKKKKKKKK3", &clock);
    s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
    let tasks = (0..16)
        .map(|t| {
            let s = s.clone();
            let batch = vec![file("index.html", 10 + t), file(&format!("f{t}.txt"), 100)];
            async move { s.put_files(page.id, &batch, &limits, later).await }
        })
        .collect::<Vec<_>>();
    for r in all_at_once(tasks).await {
        r.unwrap();
    }
    let (counters, files) = counters_and_files(&*s, page.id).await;
    assert_eq!(files.0, 17);
    assert_eq!(counters, files);
}

pub(super) async fn put_files_racing_a_delete_is_not_found_and_leaves_nothing<
    S: AccountStore + PageStore + LinkStore + AccountDirectory + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let limits = Limits::default();
    let later = clock.now() + Duration::minutes(1);
    for round in 0..4 {
        let page = page_of(
            &ann.account,
            ann.project.id,
            &format!("gone-{round}"),
            &format!("LLLLLLLLL{round}"),
            &clock,
        );
        s.insert_pending(&page, &[file("index.html", 3)], lease(&clock))
            .await
            .unwrap();
        s.mark_ready(page.id).await.unwrap();
        // Eight add files, and a delete among them.
        let tasks = (0..9)
            .map(|t| {
                let s = s.clone();
                let batch: Vec<_> = (0..50)
                    .map(|n| file(&format!("t{t}/{n:02}.txt"), 1))
                    .collect();
                async move {
                    if t == 4 {
                        s.delete_page(page.id).await.unwrap();
                        return Ok(());
                    }
                    s.put_files(page.id, &batch, &limits, later)
                        .await
                        .map(|_| ())
                }
            })
            .collect::<Vec<_>>();
        for r in all_at_once(tasks).await {
            assert!(matches!(r, Ok(()) | Err(PutFilesError::NotFound)), "{r:?}");
        }
        assert!(!s.page_exists(page.id).await.unwrap());
        assert!(s.files(page.id).await.unwrap().is_empty(), "no rows left");
        assert_eq!(
            s.put_files(page.id, &[file("late.txt", 1)], &limits, later)
                .await,
            Err(PutFilesError::NotFound)
        );
        assert!(s.files(page.id).await.unwrap().is_empty());
    }
}
