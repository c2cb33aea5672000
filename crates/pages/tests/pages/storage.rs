//! What a page's files leave in storage, against the in-memory fakes: a delete whose
//! cleanups failed, files added or replaced (and what a failed add keeps), and the janitor
//! removing what no manifest names once it was kept long enough.

#[allow(dead_code)] // the lease tests' clock and timer are not used here
use crate::common;

use quire_pages::{FileInput, PageError, Readers};
use quire_testkit::memory::Op;

use common::{World, publish, world};

#[tokio::test]
async fn delete_reports_cleanups_that_failed_but_always_removes_the_record() {
    let w = world().await;
    let a = w.pages.publish(&w.ann, publish("A")).await.unwrap();
    let b = w.pages.publish(&w.ann, publish("B")).await.unwrap();
    let c = w.pages.publish(&w.ann, publish("C")).await.unwrap();

    w.bundles.fail(Op::DeletePage);
    assert_eq!(
        w.pages.delete(&w.ann, a.page.id).await.unwrap_err(),
        PageError::StorageCleanupFailed
    );
    w.bundles.heal();
    w.store.fail(Op::DeleteLinkOfPage);
    assert_eq!(
        w.pages.delete(&w.ann, b.page.id).await.unwrap_err(),
        PageError::LinkCleanupFailed
    );
    w.store.heal();
    for id in [a.page.id, b.page.id] {
        assert_eq!(
            w.pages.get(&w.ann, id).await.unwrap_err(),
            PageError::NotFound
        );
    }
    w.pages.delete(&w.ann, c.page.id).await.unwrap();
    assert!(w.bundles.keys().iter().all(|(p, _)| *p != c.page.id));
    assert!(
        w.store
            .snapshot()
            .links
            .iter()
            .all(|l| l.page() != Some(c.page.id))
    );
    // The janitor removes what the failed cleanups left.
    let swept = w.pages.sweep().await.unwrap();
    assert_eq!(swept.orphaned_bundles, 1);
    assert!(w.bundles.keys().is_empty());
}

/// A publish's objects go into a page still pending, and added files' objects are ones its
/// manifest does not name yet: nobody reads either while they are written, so a store may
/// write them in place. Objects the manifest already names are not written again.
#[tokio::test]
async fn objects_no_manifest_names_yet_are_written_with_no_readers() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("Site")).await.unwrap();
    let added = vec![
        FileInput {
            path: "more.html".into(),
            content: Ok("<p>more</p>".into()),
        },
        // The same bytes as the published `assets/f1.txt`: its object is already named.
        FileInput {
            path: "copy.txt".into(),
            content: Ok("file 1".into()),
        },
    ];
    w.pages
        .add_files(&w.ann, view.page.id, added)
        .await
        .unwrap();

    let batches = w.bundles.batches();
    let written: Vec<(Readers, Vec<&str>)> = batches
        .iter()
        .map(|b| {
            assert_eq!(b.page, view.page.id);
            (b.readers, b.paths.iter().map(String::as_str).collect())
        })
        .collect();
    assert_eq!(
        written,
        [
            (
                Readers::NoneYet,
                vec!["index.html", "assets/f1.txt", "assets/f2.txt"]
            ),
            (Readers::NoneYet, vec!["more.html"]),
        ]
    );
    // The copy's entry names the object written by the publish, which is still there.
    let listed = w.pages.files(&w.ann, view.page.id).await.unwrap();
    let copy = listed.iter().find(|f| f.path == "copy.txt").unwrap();
    assert!(
        w.bundles
            .keys()
            .contains(&(view.page.id, copy.sha256.clone()))
    );
}

#[tokio::test]
async fn a_failed_add_files_keeps_the_previous_files() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("Site")).await.unwrap();
    let before = (w.store.snapshot(), w.bundles.keys());
    let batch = || {
        vec![
            FileInput {
                path: "index.html".into(),
                content: Ok("<h1>v2</h1>".into()),
            },
            FileInput {
                path: "new/a.css".into(),
                content: Ok("a{}".into()),
            },
            FileInput {
                path: "new/b.css".into(),
                content: Ok("b{}".into()),
            },
        ]
    };
    for (step, fail) in [
        (
            "first upload",
            (|w: &World| w.bundles.fail_puts_after(0)) as fn(&World),
        ),
        ("second upload", |w| w.bundles.fail_puts_after(1)),
        ("manifest", |w| w.store.fail(Op::PutFiles)),
    ] {
        fail(&w);
        assert!(
            matches!(
                w.pages.add_files(&w.ann, view.page.id, batch()).await,
                Err(PageError::Infra(_))
            ),
            "{step}"
        );
        w.store.heal();
        w.bundles.heal();
        assert_eq!((w.store.snapshot(), w.bundles.keys()), before, "{step}");
    }
    let bad = vec![
        FileInput {
            path: "ok.txt".into(),
            content: Ok("x".into()),
        },
        FileInput {
            path: "../escape".into(),
            content: Ok("x".into()),
        },
    ];
    assert!(matches!(
        w.pages.add_files(&w.ann, view.page.id, bad).await,
        Err(PageError::Invalid(_))
    ));
    assert_eq!((w.store.snapshot(), w.bundles.keys()), before);

    let added = w
        .pages
        .add_files(&w.ann, view.page.id, batch())
        .await
        .unwrap();
    assert_eq!(added.file_count, 5);
    let listed = w.pages.files(&w.ann, view.page.id).await.unwrap();
    let index = listed.iter().find(|f| f.path == "index.html").unwrap();
    assert_eq!(index.size_bytes, 11);
    // The replaced index.html content stays until the janitor finds it kept long enough.
    assert_eq!(w.bundles.keys().len(), 6);
    w.clock.advance(time::Duration::minutes(11));
    assert_eq!(w.pages.sweep().await.unwrap().replaced_files, 1);
    assert_eq!(w.bundles.keys().len(), 5);
}

fn file(path: &str, content: &str) -> FileInput {
    FileInput {
        path: path.into(),
        content: Ok(content.to_owned().into()),
    }
}

/// A replace marks the objects only the old manifest named rather than removing them, so a
/// backup that read the old manifest still finds them; the janitor removes them once they
/// were kept ten minutes, unless a later write named them again.
#[tokio::test]
async fn replaced_objects_stay_until_the_janitor_removes_them_after_the_delay() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("Site")).await.unwrap();
    let id = view.page.id;
    let published = w.bundles.keys();
    // The index changes, f1 stays, f2 goes.
    let first = vec![
        file("index.html", "<h1>v2</h1>"),
        file("assets/f1.txt", "file 1"),
    ];
    w.pages.replace_files(&w.ann, id, first).await.unwrap();
    let after = w.bundles.keys();
    assert!(published.iter().all(|k| after.contains(k)), "{after:?}");
    assert_eq!(after.len(), 4);
    w.clock.advance(time::Duration::minutes(9));
    assert_eq!(w.pages.sweep().await.unwrap().replaced_files, 0);
    assert_eq!(w.bundles.keys().len(), 4, "not kept long enough yet");
    // f2's content comes back before its time is up: it is named again and stays.
    let second = vec![
        file("index.html", "<h1>v3</h1>"),
        file("assets/f2.txt", "file 2"),
    ];
    w.pages.replace_files(&w.ann, id, second).await.unwrap();
    w.clock.advance(time::Duration::minutes(2));
    assert_eq!(w.pages.sweep().await.unwrap().replaced_files, 1, "v1 only");
    assert_eq!(w.bundles.keys().len(), 4);
    w.clock.advance(time::Duration::minutes(9));
    assert_eq!(
        w.pages.sweep().await.unwrap().replaced_files,
        2,
        "v2 and f1"
    );
    let named: Vec<String> = w
        .pages
        .files(&w.ann, id)
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.sha256)
        .collect();
    let mut stored: Vec<String> = w.bundles.keys().into_iter().map(|(_, s)| s).collect();
    stored.sort();
    let mut named = named;
    named.sort();
    assert_eq!(stored, named, "storage holds what the manifest names");
    assert_eq!(w.pages.sweep().await.unwrap().replaced_files, 0);
}
