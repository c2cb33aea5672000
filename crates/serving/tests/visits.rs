//! Visits against the in-memory fakes: every answer of the pages origin, the policy checks,
//! exact view budgets under racing claims, and failures that must not count or lose a view.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::sync::Arc;
use std::time::Duration;

use quire_accounts::{Session, SessionStore};
use quire_kernel::{AccountId, App, Clock, Email, KeyId, PageId, Principal};
use quire_pages::{FileInput, PageOrigins, PageService, PageView, PatchRequest, PublishRequest};
use quire_projects::{NewProject, ProjectService, ResourceType};
use quire_serving::{
    ACCESS_COOKIE, Answer, CacheRule, PassError, ServingService, UNLOCK_COOKIE, Unlock,
    UnlockError, VIEW_COOKIE, Visit, Visitor,
};
use quire_testkit::fixtures::app_key;
use quire_testkit::memory::Op;
use quire_testkit::{FixedClock, MemoryBundles, MemoryStore};

struct World {
    store: Arc<MemoryStore>,
    bundles: Arc<MemoryBundles>,
    clock: Arc<FixedClock>,
    pages: PageService,
    projects: ProjectService,
    /// The page service of another replica over the same store: its changes reach this
    /// replica's caches only when their time is up.
    replica: PageService,
    serving: ServingService,
    ann: Principal,
    bob: Principal,
    bob_email: Email,
}

async fn world() -> World {
    world_on(PageOrigins::parse("https://pages.test").unwrap()).await
}

async fn world_on(origins: PageOrigins) -> World {
    let w = quire_testkit::World::builder()
        .accounts(&["ann", "bob"])
        .origins(&origins)
        .build()
        .await;
    World {
        replica: w.replica().pages,
        ann: w.master("ann"),
        bob: w.master("bob"),
        bob_email: w.account("bob").account.email.clone(),
        store: w.store,
        bundles: w.bundles,
        clock: w.clock,
        pages: w.services.pages,
        projects: w.services.projects,
        serving: w.services.serving,
    }
}

fn file(path: &str, content: &str) -> FileInput {
    FileInput {
        path: path.into(),
        content: content.into(),
        encoding: None,
    }
}

fn site() -> Vec<FileInput> {
    vec![
        file("index.html", &"<h1>home</h1>\n".repeat(40)),
        file("style.css", "body { color: teal }"),
        file("docs/index.html", "<p>docs</p>"),
        file("404.html", "<p>lost</p>"),
    ]
}

impl World {
    async fn publish(&self, slug: &str, extra: impl FnOnce(&mut PublishRequest)) -> PageView {
        let mut req = PublishRequest {
            title: format!("Page {slug}"),
            slug: Some(slug.into()),
            access: Some("public".into()),
            files: site(),
            ..PublishRequest::default()
        };
        extra(&mut req);
        self.pages.publish(&self.ann, req).await.unwrap()
    }

    async fn patch(&self, id: PageId, patch: PatchRequest) {
        self.pages.update(&self.ann, id, patch).await.unwrap();
    }

    async fn get(&self, path: &str) -> Answer {
        self.get_as(path, Visitor::default()).await
    }

    async fn get_as(&self, path: &str, visitor: Visitor<'_>) -> Answer {
        self.visit_on(None, path, visitor).await
    }

    /// A visit to `owner`'s own origin (per-owner layout), or to the shared origin (`None`).
    async fn visit_on(&self, owner: Option<&str>, path: &str, visitor: Visitor<'_>) -> Answer {
        self.serving
            .visit(Visit {
                owner,
                path,
                query: "",
                head: false,
                visitor,
                if_none_match: None,
                accepts_gzip: false,
            })
            .await
            .unwrap()
    }

    /// A fully signed-in dashboard session of `account`; returns its id hash.
    async fn session(&self, account: AccountId) -> String {
        let now = self.clock.now();
        let id_hash = quire_kernel::secret::sha256_hex(uuid::Uuid::new_v4().as_bytes());
        self.store
            .insert_session(&Session {
                id_hash: id_hash.clone(),
                account_id: account,
                mfa_satisfied: true,
                created_at: now,
                expires_at: now + time::Duration::hours(12),
                pending_totp: None,
            })
            .await
            .unwrap();
        id_hash
    }

    /// The page's count as stored (views wait in memory until a flush).
    async fn view_count(&self, id: PageId) -> u64 {
        self.pages
            .get(&self.ann, id)
            .await
            .unwrap()
            .link
            .unwrap()
            .view_count
    }
}

/// The token of a pass URL (`…/-/pass?token=T&next=…`).
fn pass_token(url: &str) -> &str {
    let after = url.split_once("token=").expect("a pass URL").1;
    after.split('&').next().unwrap_or(after)
}

#[track_caller]
fn body(answer: &Answer) -> String {
    match answer {
        Answer::File(f) => String::from_utf8(f.body.to_vec()).unwrap(),
        other => panic!("expected a file, got {other:?}"),
    }
}

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
        if_none_match: inm,
        accepts_gzip: gz,
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
    let etag: &'static str = Box::leak(plain.etag.clone().into_boxed_str());
    assert!(matches!(
        w.serving.visit(visit(Some(etag), false)).await.unwrap(),
        Answer::NotModified { .. }
    ));
    let gz_etag: &'static str = Box::leak(format!("W/{}", gz.etag).into_boxed_str());
    assert!(matches!(
        w.serving.visit(visit(Some(gz_etag), true)).await.unwrap(),
        Answer::NotModified { .. }
    ));
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
            if_none_match: None,
            accepts_gzip: false,
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
    let page = w.publish("site", |r| r.alias = Some("launch".into())).await;
    assert!(matches!(
        w.serving.short_link("launch").await.unwrap(),
        Answer::Redirect { ref location, permanent: false } if location == "https://pages.test/ann/site/"
    ));
    assert!(matches!(
        w.serving.short_link("nope").await.unwrap(),
        Answer::NotFound
    ));
    assert!(matches!(
        w.serving.short_link("../x").await.unwrap(),
        Answer::NotFound
    ));

    let soon = (w.clock.now() + time::Duration::seconds(60))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    w.patch(
        page.page.id,
        PatchRequest {
            expires_at: Some(Some(soon)),
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
        w.serving.short_link("launch").await.unwrap(),
        Answer::Gone
    ));

    w.patch(
        page.page.id,
        PatchRequest {
            expires_at: Some(None),
            status: Some("archived".into()),
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(w.get("/ann/site/").await, Answer::NotFound));
    assert!(matches!(
        w.serving.short_link("launch").await.unwrap(),
        Answer::NotFound
    ));
}

#[tokio::test]
async fn exactly_max_views_succeed_however_many_race() {
    let w = world().await;
    let page = w.publish("once", |r| r.max_views = Some(5)).await;
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
                    if_none_match: None,
                    accepts_gzip: false,
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
    let page = w.publish("once", |r| r.max_views = Some(1)).await;
    w.bundles.fail(Op::Get);
    assert!(
        w.serving
            .visit(Visit {
                owner: None,
                path: "/ann/once/",
                query: "",
                head: false,
                visitor: Visitor::default(),
                if_none_match: None,
                accepts_gzip: false,
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
async fn a_password_page_takes_its_password_and_a_new_password_voids_old_cookies() {
    let w = world().await;
    let page = w
        .publish("secret", |r| {
            r.access = Some("password".into());
            r.password = Some("open sesame".into());
        })
        .await;
    let Answer::Password(prompt) = w.get("/ann/secret/docs/").await else {
        panic!("the form")
    };
    assert_eq!((prompt.next.as_str(), prompt.wrong), ("docs/", false));

    let attempt = |password: &'static str| Unlock {
        handle: "ann",
        slug: "secret",
        password,
        next: "docs/",
        client: "198.51.100.7",
    };
    assert!(matches!(
        w.serving.unlock(attempt("wrong")).await.unwrap_err(),
        UnlockError::Wrong(ref p) if p.wrong && p.next == "docs/"
    ));
    let admitted = w.serving.unlock(attempt("open sesame")).await.unwrap();
    assert_eq!(admitted.location, "/ann/secret/docs/");
    let unlock = admitted.cookie.unwrap();
    assert_eq!(
        (unlock.name.as_str(), unlock.path.as_str()),
        (UNLOCK_COOKIE, "/ann/secret/")
    );
    let visitor = Visitor {
        unlock: vec![unlock.value.as_str()],
        ..Visitor::default()
    };
    assert_eq!(
        body(&w.get_as("/ann/secret/docs/", visitor.clone()).await),
        "<p>docs</p>"
    );
    // A cookie of another page does nothing here.
    let other = w
        .publish("other", |r| {
            r.access = Some("password".into());
            r.password = Some("open sesame".into());
        })
        .await;
    assert!(matches!(
        w.get_as("/ann/other/", visitor.clone()).await,
        Answer::Password(_)
    ));

    w.patch(
        page.page.id,
        PatchRequest {
            password: Some(Some("new words".into())),
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(
        w.get_as("/ann/secret/", visitor).await,
        Answer::Password(_)
    ));
    assert!(other.link.is_some());
}

#[tokio::test]
async fn password_attempts_are_throttled_per_page_and_client() {
    let w = world().await;
    w.publish("secret", |r| {
        r.access = Some("password".into());
        r.password = Some("open sesame".into());
    })
    .await;
    let attempt = |password: &'static str, client: &'static str| Unlock {
        handle: "ann",
        slug: "secret",
        password,
        next: "",
        client,
    };
    for _ in 0..10 {
        assert!(matches!(
            w.serving.unlock(attempt("guess", "203.0.113.1")).await,
            Err(UnlockError::Wrong(_))
        ));
    }
    let UnlockError::Throttled { retry_after_secs } = w
        .serving
        .unlock(attempt("open sesame", "203.0.113.1"))
        .await
        .unwrap_err()
    else {
        panic!("throttled")
    };
    assert!((1..=900).contains(&retry_after_secs));
    // Another client is not held back.
    assert!(
        w.serving
            .unlock(attempt("open sesame", "203.0.113.2"))
            .await
            .is_ok()
    );

    // An expired page and an unknown one take no password.
    let soon = (w.clock.now() + time::Duration::seconds(60))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let brief = w
        .publish("brief", |r| {
            r.access = Some("password".into());
            r.password = Some("pw".into());
            r.expires_at = Some(soon);
        })
        .await;
    let unlock_brief = |client: &'static str| Unlock {
        handle: "ann",
        slug: "brief",
        password: "pw",
        next: "",
        client,
    };
    assert!(w.serving.unlock(unlock_brief("203.0.113.3")).await.is_ok());
    w.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        w.serving
            .unlock(unlock_brief("203.0.113.3"))
            .await
            .unwrap_err(),
        UnlockError::Gone
    );
    assert!(brief.link.is_some());
    assert_eq!(
        w.serving
            .unlock(Unlock {
                slug: "nothing",
                ..unlock_brief("203.0.113.3")
            })
            .await
            .unwrap_err(),
        UnlockError::NotFound
    );
}

#[tokio::test]
async fn private_and_allow_list_pages_hand_visitors_to_the_dashboard_and_back() {
    let w = world().await;
    let page = w
        .publish("mine", |r| r.access = Some("private".into()))
        .await;
    let Answer::SignIn { location } = w.get("/ann/mine/docs/").await else {
        panic!("sign in")
    };
    let code = page.link.as_ref().unwrap().public_id.clone();
    let ann_session = w.session(w.ann.account_id).await;
    let bob_session = w.session(w.bob.account_id).await;
    assert_eq!(
        location,
        format!("https://quire.test/visit?page={code}&next=docs%2F")
    );

    // The owner gets a pass; bob does not.
    let ann_email = Email::parse("ann@example.com").unwrap();
    let url = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &ann_session, "docs/")
        .await
        .unwrap();
    assert!(url.starts_with("https://pages.test/-/pass?token="), "{url}");
    assert_eq!(
        w.serving
            .issue_pass(&code, w.bob.account_id, &w.bob_email, &bob_session, "")
            .await
            .unwrap_err(),
        PassError::Forbidden
    );
    let token = pass_token(&url);
    let admitted = w.serving.accept_pass(None, token, "docs/").await.unwrap();
    assert_eq!(admitted.location, "/ann/mine/docs/");
    assert_eq!(
        w.serving
            .accept_pass(None, token, "docs/")
            .await
            .unwrap_err(),
        PassError::Forbidden,
        "a pass works once"
    );
    let access = admitted.cookie.unwrap();
    assert_eq!(
        (access.name.as_str(), access.path.as_str()),
        (ACCESS_COOKIE, "/ann/mine/")
    );
    let ann = Visitor {
        access: vec![access.value.as_str()],
        ..Visitor::default()
    };
    assert_eq!(body(&w.get_as("/ann/mine/docs/", ann).await), "<p>docs</p>");

    // A pass for a page deleted meanwhile leads nowhere.
    let gone = w
        .publish("gone", |r| r.access = Some("private".into()))
        .await;
    let gone_code = gone.link.as_ref().unwrap().public_id.clone();
    let url = w
        .serving
        .issue_pass(&gone_code, w.ann.account_id, &ann_email, &ann_session, "")
        .await
        .unwrap();
    w.pages.delete(&w.ann, gone.page.id).await.unwrap();
    let stale = pass_token(&url);
    assert_eq!(
        w.serving.accept_pass(None, stale, "").await.unwrap_err(),
        PassError::NotFound
    );
    assert_eq!(
        w.serving
            .issue_pass(&gone_code, w.ann.account_id, &ann_email, &ann_session, "")
            .await
            .unwrap_err(),
        PassError::NotFound
    );

    // A pass is short-lived and cannot be forged.
    assert_eq!(
        w.serving.accept_pass(None, "x.y", "").await.unwrap_err(),
        PassError::Forbidden
    );
    let unused = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &ann_session, "")
        .await
        .unwrap();
    let unused = pass_token(&unused);
    w.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        w.serving.accept_pass(None, unused, "").await.unwrap_err(),
        PassError::Forbidden
    );

    // Allow list: bob by email; his access cookie stops working when he is taken off.
    w.patch(
        page.page.id,
        PatchRequest {
            access: Some("allow_list".into()),
            allow: Some(vec![w.bob_email.as_str().to_owned()]),
            ..PatchRequest::default()
        },
    )
    .await;
    let url = w
        .serving
        .issue_pass(&code, w.bob.account_id, &w.bob_email, &bob_session, "")
        .await
        .unwrap();
    let token = pass_token(&url);
    let bob_cookie = w
        .serving
        .accept_pass(None, token, "")
        .await
        .unwrap()
        .cookie
        .unwrap();
    let bob = Visitor {
        access: vec![bob_cookie.value.as_str()],
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", bob.clone()).await,
        Answer::File(_)
    ));
    w.patch(
        page.page.id,
        PatchRequest {
            allow: Some(vec!["ann".into()]),
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(
        w.get_as("/ann/mine/", bob).await,
        Answer::Forbidden { email: Some(ref e) } if e == "bob@example.com"
    ));

    // Signing out of the dashboard ends the access that session gave.
    let ann_again = Visitor {
        access: vec![access.value.as_str()],
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", ann_again.clone()).await,
        Answer::File(_)
    ));
    w.store.delete_session(&ann_session).await.unwrap();
    w.serving.forget_session(&ann_session).await;
    assert!(matches!(
        w.get_as("/ann/mine/", ann_again).await,
        Answer::SignIn { .. }
    ));
}

#[tokio::test]
async fn a_key_that_can_read_the_project_is_let_in_and_others_are_not() {
    let w = world().await;
    w.publish("mine", |r| r.access = Some("private".into()))
        .await;
    let ann = Visitor {
        principal: Some(&w.ann),
        ..Visitor::default()
    };
    assert!(matches!(w.get_as("/ann/mine/", ann).await, Answer::File(_)));
    let bob = Visitor {
        principal: Some(&w.bob),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", bob).await,
        Answer::SignIn { .. }
    ));
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
                access: Some("private".into()),
                ..PatchRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(matches!(w.get("/ann/site/").await, Answer::File(_)));
    // ...until the entry's time is up.
    tokio::time::sleep(w.serving.config().policy_ttl + Duration::from_millis(50)).await;
    assert!(matches!(w.get("/ann/site/").await, Answer::SignIn { .. }));
}

impl World {
    async fn get_on(&self, owner: &str, path: &str, visitor: Visitor<'_>) -> Answer {
        self.visit_on(Some(owner), path, visitor).await
    }
}

#[tokio::test]
async fn on_per_owner_origins_each_owner_has_a_host_and_cookies_of_its_own() {
    let w = world_on(PageOrigins::parse("https://{handle}.pages.test").unwrap()).await;
    let public = w.publish("site", |_| {}).await;
    assert_eq!(public.url, "https://ann.pages.test/site/");
    let code = public.link.as_ref().unwrap().public_id.clone();
    assert_eq!(
        public.short_url.as_deref(),
        Some(format!("https://pages.test/s/{code}").as_str())
    );
    assert_eq!(
        body(&w.get_on("ann", "/site/docs/", Visitor::default()).await),
        "<p>docs</p>"
    );
    // Another owner's host does not serve ann's page, and the path no longer names owners.
    assert!(matches!(
        w.get_on("bob", "/site/", Visitor::default()).await,
        Answer::NotFound
    ));
    assert!(matches!(w.get("/ann/site/").await, Answer::NotFound));
    let Answer::Redirect { location, .. } = w.get_on("ann", "/site", Visitor::default()).await
    else {
        panic!("trailing slash")
    };
    assert_eq!(location, "/site/");
    let Answer::Redirect { location, .. } = w.serving.short_link(&code).await.unwrap() else {
        panic!("short link")
    };
    assert_eq!(location, "https://ann.pages.test/site/");

    // Cookies are named for the page, host-only (`__Host-`) and for the whole origin.
    w.publish("brief", |r| {
        r.access = Some("password".into());
        r.password = Some("open sesame".into());
    })
    .await;
    let admitted = w
        .serving
        .unlock(Unlock {
            handle: "ann",
            slug: "brief",
            password: "open sesame",
            next: "",
            client: "203.0.113.9",
        })
        .await
        .unwrap();
    let cookie = admitted.cookie.unwrap();
    assert_eq!(
        (cookie.name.as_str(), cookie.path.as_str()),
        ("__Host-quire_unlock_brief", "/")
    );
    assert_eq!(
        quire_serving::cookie_kind(&cookie.name),
        Some(quire_serving::TokenKind::Unlock)
    );
    assert_eq!(admitted.location, "/brief/");
    let unlocked = Visitor {
        unlock: vec![cookie.value.as_str()],
        ..Visitor::default()
    };
    let Answer::File(file) = w.get_on("ann", "/brief/", unlocked).await else {
        panic!("unlocked")
    };
    assert!(file.guarded, "a password page is guarded from framing");
    assert!(!matches!(
        w.get_on("ann", "/site/", Visitor::default()).await,
        Answer::File(ref f) if f.guarded
    ));

    // A pass is issued for the owner's origin and lands only there.
    let private = w
        .publish("mine", |r| r.access = Some("private".into()))
        .await;
    let code = private.link.as_ref().unwrap().public_id.clone();
    let session = w.session(w.ann.account_id).await;
    let ann_email = Email::parse("ann@example.com").unwrap();
    let url = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &session, "")
        .await
        .unwrap();
    assert!(
        url.starts_with("https://ann.pages.test/-/pass?token="),
        "{url}"
    );
    let token = pass_token(&url);
    assert_eq!(
        w.serving
            .accept_pass(Some("bob"), token, "")
            .await
            .unwrap_err(),
        PassError::NotFound,
        "a pass for ann's page does not land on bob's origin"
    );
    let url = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &session, "")
        .await
        .unwrap();
    let admitted = w
        .serving
        .accept_pass(Some("ann"), pass_token(&url), "")
        .await
        .unwrap();
    assert_eq!(admitted.cookie.unwrap().name, "__Host-quire_access_mine");
}

impl World {
    async fn project(&self, slug: &str) -> quire_projects::Project {
        self.projects
            .create(
                &self.ann,
                NewProject {
                    name: slug.into(),
                    tag: String::new(),
                    color: "blue".into(),
                    slug: slug.into(),
                    oauth_client_id: None,
                },
            )
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_page_moved_to_another_project_is_refused_at_once_to_keys_of_the_old_one() {
    let w = world().await;
    let page = w
        .publish("mine", |r| r.access = Some("private".into()))
        .await;
    let other = w.project("other").await;
    let key = app_key(
        w.ann.account_id,
        KeyId::new(),
        w.ann.home_project_id,
        &[App::Page],
    );
    let visitor = || Visitor {
        principal: Some(&key),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::File(_)
    ));
    w.projects
        .assign(&w.ann, other.id, ResourceType::Page, page.page.id.0)
        .await
        .unwrap();
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::SignIn { .. }
    ));
}

#[tokio::test]
async fn pages_moved_by_a_project_delete_are_let_in_at_once_for_keys_of_their_new_project() {
    let w = world().await;
    let old = w.project("old").await;
    w.publish("mine", |r| {
        r.access = Some("private".into());
        r.project = Some("old".into());
    })
    .await;
    let key = app_key(
        w.ann.account_id,
        KeyId::new(),
        w.ann.home_project_id,
        &[App::Page],
    );
    let visitor = || Visitor {
        principal: Some(&key),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::SignIn { .. }
    ));
    let default = w.projects.get(&w.ann, w.ann.home_project_id).await.unwrap();
    w.projects
        .delete(
            &w.ann,
            old.id,
            &old.id.to_string(),
            Some(default.slug.as_str()),
        )
        .await
        .unwrap();
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::File(_)
    ));
}
