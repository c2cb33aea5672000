//! Visits against the in-memory fakes: every answer of the pages origin, exact view budgets
//! under racing claims, failures that must not count or lose a view, and how long a stale
//! policy lasts.

use crate::common;

use quire_kernel::Clock;
use quire_pages::PatchRequest;
use quire_serving::{Answer, CacheRule, Conditions, LinkVisit, VIEW_COOKIE, Visit, Visitor};
use quire_testkit::memory::Op;

use common::{body, world};

#[tokio::test]
async fn a_public_page_serves_its_files_and_redirects_to_directories() {
    let w = world().await;
    w.publish("site", |_| {}).await;

    assert!(body(&w.get("/ann/site/").await).starts_with("<h1>home</h1>"));
    assert_eq!(body(&w.get("/ann/site/docs/").await), "<p>docs</p>");
    match w.get("/ann/site/style.css").await {
        Answer::File(f) => {
            assert_eq!(f.content_type, "text/css; charset=utf-8");
            assert!(f.found);
            assert_eq!(f.cache, CacheRule::Revalidate);
            assert!(f.etag.starts_with('"') && f.etag.len() == 34, "{}", f.etag);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        w.get("/ann/site").await,
        Answer::Redirect { ref location, permanent: true } if location == "/ann/site/"
    ));
    assert!(matches!(
        w.get("/ann/site/docs").await,
        Answer::Redirect { ref location, permanent: false } if location == "/ann/site/docs/"
    ));
    match w.get("/ann/site/nothing.png").await {
        Answer::File(f) => {
            assert!(!f.found, "the page's own 404.html, sent as a 404");
            assert_eq!(&f.body[..], b"<p>lost</p>");
        }
        other => panic!("{other:?}"),
    }
    for unknown in ["/ann/other/", "/zed/site/", "/ann/site/%2e%2e/x", "/"] {
        assert!(
            matches!(w.get(unknown).await, Answer::NotFound),
            "{unknown}"
        );
    }
}

#[tokio::test]
async fn etags_give_304s_and_gzip_is_offered_for_text() {
    let w = world().await;
    w.publish("site", |_| {}).await;
    let visit = |inm: Option<&'static str>, gz: bool| Visit {
        owner: None,
        path: "/ann/site/",
        query: "",
        head: false,
        visitor: Visitor::default(),
        conditions: Conditions {
            if_none_match: inm,
            ..Conditions::default()
        },
        accepts_gzip: gz,
        asker: quire_serving::Asker::default(),
    };
    let Answer::File(plain) = w.serving.visit(visit(None, false)).await.unwrap() else {
        panic!()
    };
    let Answer::File(gz) = w.serving.visit(visit(None, true)).await.unwrap() else {
        panic!()
    };
    assert!(gz.gzip && gz.varies && gz.body.len() < plain.body.len() / 4);
    assert_eq!(
        gz.etag.trim_end_matches("-gz\""),
        plain.etag.trim_end_matches('"')
    );
    assert_eq!(plain.last_modified, gz.last_modified);
    let etag: &'static str = Box::leak(plain.etag.clone().into_boxed_str());
    // A 304 carries what its 200 would: the ETag of the coding asked for, and Vary.
    match w.serving.visit(visit(Some(etag), false)).await.unwrap() {
        Answer::NotModified {
            etag: tag,
            varies,
            last_modified,
            cache,
        } => {
            assert_eq!((tag.as_str(), varies), (etag, true));
            assert_eq!(
                (last_modified, cache),
                (plain.last_modified.clone(), plain.cache)
            );
        }
        other => panic!("{other:?}"),
    }
    let gz_etag: &'static str = Box::leak(format!("W/{}", gz.etag).into_boxed_str());
    for inm in [gz_etag, etag] {
        match w.serving.visit(visit(Some(inm), true)).await.unwrap() {
            Answer::NotModified { etag, varies, .. } => {
                assert_eq!((etag.as_str(), varies), (gz.etag.as_str(), true), "{inm}");
            }
            other => panic!("{other:?}"),
        }
    }
    // A file without a gzip variant: its 304 has no Vary.
    let Answer::File(css) = w.get("/ann/site/style.css").await else {
        panic!()
    };
    assert!(!css.varies);
    let css_etag: &'static str = Box::leak(css.etag.clone().into_boxed_str());
    let css_304 = w
        .serving
        .visit(Visit {
            path: "/ann/site/style.css",
            ..visit(Some(css_etag), true)
        })
        .await
        .unwrap();
    assert!(
        matches!(css_304, Answer::NotModified { varies: false, ref etag, .. } if etag == css_etag),
        "{css_304:?}"
    );
    assert!(matches!(
        w.serving
            .visit(visit(Some("\"other\""), false))
            .await
            .unwrap(),
        Answer::File(_)
    ));
}

#[tokio::test]
async fn views_count_documents_only_and_reach_the_store_on_flush() {
    let w = world().await;
    let page = w.publish("site", |_| {}).await;
    w.get("/ann/site/").await;
    w.get("/ann/site/docs/").await;
    w.get("/ann/site/style.css").await; // an asset: not a view
    w.get("/ann/site/missing").await; // a 404: not a view
    w.serving
        .visit(Visit {
            owner: None,
            path: "/ann/site/",
            query: "",
            head: true, // HEAD: not a view
            visitor: Visitor::default(),
            conditions: Conditions::default(),
            accepts_gzip: false,
            asker: quire_serving::Asker::default(),
        })
        .await
        .unwrap();
    assert_eq!(w.view_count(page.page.id).await, 0, "aggregated in memory");

    // A failed flush keeps the counts for the next one.
    w.store.fail(Op::AddViews);
    assert!(w.serving.flush_views().await.is_err());
    w.store.heal();
    assert_eq!(w.serving.flush_views().await.unwrap(), 2);
    assert_eq!(w.view_count(page.page.id).await, 2);
    assert_eq!(w.serving.flush_views().await.unwrap(), 0);
}

#[tokio::test]
async fn archived_and_expired_pages_are_404_and_410_and_so_are_their_short_links() {
    let w = world().await;
    let page = w
        .publish("site", |r| r.policy.alias = Some("launch".into()))
        .await;
    assert!(matches!(
        w.serving.short_link(LinkVisit::plain("launch")).await.unwrap(),
        Answer::Redirect { ref location, permanent: false } if location == "https://pages.test/ann/site/"
    ));
    assert!(matches!(
        w.serving
            .short_link(LinkVisit::plain("nope"))
            .await
            .unwrap(),
        Answer::NotFound
    ));
    assert!(matches!(
        w.serving
            .short_link(LinkVisit::plain("../x"))
            .await
            .unwrap(),
        Answer::NotFound
    ));

    let soon = (w.clock.now() + time::Duration::seconds(60))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    w.patch(
        page.page.id,
        PatchRequest {
            policy: quire_links::PolicyPatch {
                expires_at: Some(Some(soon)),
                ..quire_links::PolicyPatch::default()
            },
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(w.get("/ann/site/").await, Answer::File(f) if f.cache == CacheRule::NoStore));
    w.clock.advance(time::Duration::seconds(61));
    w.serving.forget(page.page.id);
    assert!(matches!(w.get("/ann/site/").await, Answer::Gone));
    assert!(matches!(w.get("/ann/site/style.css").await, Answer::Gone));
    assert!(matches!(
        w.serving
            .short_link(LinkVisit::plain("launch"))
            .await
            .unwrap(),
        Answer::Gone
    ));

    w.patch(
        page.page.id,
        PatchRequest {
            status: Some("archived".into()),
            policy: quire_links::PolicyPatch {
                expires_at: Some(None),
                ..quire_links::PolicyPatch::default()
            },
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(w.get("/ann/site/").await, Answer::NotFound));
    assert!(matches!(
        w.serving
            .short_link(LinkVisit::plain("launch"))
            .await
            .unwrap(),
        Answer::NotFound
    ));
}

#[tokio::test]
async fn exactly_max_views_succeed_however_many_race() {
    let w = world().await;
    let page = w.publish("once", |r| r.policy.max_views = Some(5)).await;
    let serving = w.serving.clone();
    let tasks: Vec<_> = (0..40)
        .map(|_| {
            let s = serving.clone();
            tokio::spawn(async move {
                s.visit(Visit {
                    owner: None,
                    path: "/ann/once/",
                    query: "",
                    head: false,
                    visitor: Visitor::default(),
                    conditions: Conditions::default(),
                    accepts_gzip: false,
                    asker: quire_serving::Asker::default(),
                })
                .await
                .unwrap()
            })
        })
        .collect();
    let mut served = Vec::new();
    let mut gone = 0;
    for t in tasks {
        match t.await.unwrap() {
            Answer::File(f) => served.push(f),
            Answer::Gone => gone += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((served.len(), gone), (5, 35));
    // Served from leased blocks; the count catches up with the flush (every second).
    w.serving.flush_views().await.unwrap();
    assert_eq!(w.view_count(page.page.id).await, 5);
    assert!(served.iter().all(|f| f.cache == CacheRule::NoStore));

    // The assets of a counted view still load; without that view, they are gone too.
    let view = served[0].cookie.clone().unwrap();
    assert_eq!(view.name, VIEW_COOKIE);
    let with_view = Visitor {
        view: vec![view.value.as_str()],
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/once/style.css", with_view.clone()).await,
        Answer::File(_)
    ));
    assert!(matches!(
        w.get_as("/ann/once/", with_view).await,
        Answer::Gone
    ));
    assert!(matches!(w.get("/ann/once/style.css").await, Answer::Gone));
}

#[tokio::test]
async fn a_view_is_not_counted_when_the_file_cannot_be_read() {
    let w = world().await;
    let page = w.publish("once", |r| r.policy.max_views = Some(1)).await;
    w.bundles.fail(Op::Get);
    assert!(
        w.serving
            .visit(Visit {
                owner: None,
                path: "/ann/once/",
                query: "",
                head: false,
                visitor: Visitor::default(),
                conditions: Conditions::default(),
                accepts_gzip: false,
                asker: quire_serving::Asker::default(),
            })
            .await
            .is_err()
    );
    w.bundles.heal();
    w.serving.flush_views().await.unwrap();
    assert_eq!(w.view_count(page.page.id).await, 0);
    assert!(matches!(w.get("/ann/once/").await, Answer::File(_)));
    w.serving.flush_views().await.unwrap();
    assert_eq!(w.view_count(page.page.id).await, 1);
}

#[tokio::test]
async fn a_stale_policy_lasts_at_most_the_cache_ttl() {
    let w = world().await;
    let page = w.publish("site", |_| {}).await;
    assert!(matches!(w.get("/ann/site/").await, Answer::File(_)));
    // Changed on another replica: still served from memory here...
    w.replica
        .update(
            &w.ann,
            page.page.id,
            PatchRequest {
                policy: quire_links::PolicyPatch {
                    access: Some("private".into()),
                    ..quire_links::PolicyPatch::default()
                },
                ..PatchRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(matches!(w.get("/ann/site/").await, Answer::File(_)));
    // ...until the entry's time is up.
    let ttl = time::Duration::try_from(w.serving.config().policy_ttl).unwrap();
    w.clock.advance(ttl + time::Duration::milliseconds(50));
    assert!(matches!(w.get("/ann/site/").await, Answer::SignIn(_)));
}
