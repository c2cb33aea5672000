//! Page use cases against the in-memory fakes, with failures injected at every step of
//! every multi-step write: whatever fails, the stores hold exactly what they held before.

#[allow(dead_code)] // the lease tests' clock and timer are not used here
use crate::common;

use quire_pages::{FileInput, PageError, PatchRequest, PublishRequest, Readers};
use quire_testkit::memory::Op;

use common::{World, publish, world, world_of};

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
        .publish(
            &w.ann,
            PublishRequest {
                policy: quire_links::PolicyInput {
                    alias: Some("taken".into()),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("First")
            },
        )
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

#[tokio::test]
async fn a_failed_link_update_reverts_the_page_record() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("Original")).await.unwrap();
    w.pages
        .publish(
            &w.ann,
            PublishRequest {
                policy: quire_links::PolicyInput {
                    alias: Some("taken".into()),
                    ..quire_links::PolicyInput::default()
                },
                ..publish("Other")
            },
        )
        .await
        .unwrap();
    let before = w.store.snapshot();
    let patch = || PatchRequest {
        title: Some("Renamed".into()),
        slug: Some("renamed".into()),
        status: Some("archived".into()),
        policy: quire_links::PolicyPatch {
            access: Some("public".into()),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    w.store.fail(Op::UpdateLink);
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch()).await,
        Err(PageError::Infra(_))
    ));
    w.store.heal();
    assert_eq!(w.store.snapshot(), before, "record not reverted");
    let conflict = PatchRequest {
        policy: quire_links::PolicyPatch {
            alias: Some(Some("taken".into())),
            ..patch().policy
        },
        ..patch()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, conflict)
            .await
            .unwrap_err(),
        PageError::AliasConflict
    );
    assert_eq!(w.store.snapshot(), before);
    let updated = w.pages.update(&w.ann, view.page.id, patch()).await.unwrap();
    assert_eq!(updated.page.title, "Renamed");
    assert!(updated.page.archived_at.is_some());
    assert_eq!(
        updated.link.unwrap().policy.access,
        quire_links::Access::Public
    );
}

#[tokio::test]
async fn password_rules_on_patch() {
    let w = world().await;
    let view = w.pages.publish(&w.ann, publish("P")).await.unwrap();
    let to_password = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, to_password)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
    let with = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            password: Some(Some("open sesame".into())),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    let v = w.pages.update(&w.ann, view.page.id, with).await.unwrap();
    assert!(v.link.unwrap().has_password());
    let stored = w.store.snapshot().links[0].password_hash.clone().unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("open sesame"));
    let clear = PatchRequest {
        policy: quire_links::PolicyPatch {
            password: Some(None),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert_eq!(
        w.pages
            .update(&w.ann, view.page.id, clear)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
}

/// Of several bad policy fields, a page is told of the first in its order: on publish the
/// allow list is checked last, after the password; on patch after the alias.
#[tokio::test]
async fn several_bad_policy_fields_are_refused_in_the_pages_order() {
    let w = world().await;
    let bad_alias_and_allow = PublishRequest {
        policy: quire_links::PolicyInput {
            alias: Some("a".into()),
            allow: vec!["nobody_here".into()],
            ..quire_links::PolicyInput::default()
        },
        ..publish("Doubly bad")
    };
    assert!(matches!(
        w.pages.publish(&w.ann, bad_alias_and_allow).await.unwrap_err(),
        PageError::Invalid(m) if m.starts_with("alias ")
    ));
    let no_password_and_bad_allow = PublishRequest {
        policy: quire_links::PolicyInput {
            access: Some("password".into()),
            allow: vec!["nobody_here".into()],
            ..quire_links::PolicyInput::default()
        },
        ..publish("Doubly bad")
    };
    assert_eq!(
        w.pages
            .publish(&w.ann, no_password_and_bad_allow)
            .await
            .unwrap_err(),
        PageError::PasswordRequired
    );
    let view = w.pages.publish(&w.ann, publish("P")).await.unwrap();
    let patch = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("password".into()),
            alias: Some(Some("a".into())),
            allow: Some(vec!["nobody_here".into()]),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch.clone()).await.unwrap_err(),
        PageError::Invalid(m) if m.starts_with("alias ")
    ));
    let patch = PatchRequest {
        policy: quire_links::PolicyPatch {
            alias: None,
            ..patch.policy
        },
        ..patch
    };
    assert!(matches!(
        w.pages.update(&w.ann, view.page.id, patch).await.unwrap_err(),
        PageError::Invalid(m) if m.contains("nobody_here")
    ));
}

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
