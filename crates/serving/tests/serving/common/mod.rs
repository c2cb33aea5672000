//! The world of the visit tests: ann and bob, a site to publish, and visits as one call each.

#![allow(dead_code)] // each test file uses its own part of it

use std::sync::Arc;

use quire_accounts::{Session, SessionStore};
use quire_kernel::{AccountId, Clock, Email, PageId, Principal};
use quire_pages::{FileInput, PageOrigins, PageService, PageView, PatchRequest, PublishRequest};
use quire_projects::ProjectService;
use quire_serving::{Answer, Conditions, ServingService, Visit, Visitor};
use quire_testkit::{FixedClock, MemoryBundles, MemoryStore};

pub struct World {
    pub store: Arc<MemoryStore>,
    pub bundles: Arc<MemoryBundles>,
    pub clock: Arc<FixedClock>,
    pub pages: PageService,
    pub projects: ProjectService,
    /// The page service of another replica over the same store: its changes reach this
    /// replica's caches only when their time is up.
    pub replica: PageService,
    pub serving: ServingService,
    pub ann: Principal,
    pub bob: Principal,
    pub bob_email: Email,
}

pub async fn world() -> World {
    world_on(PageOrigins::parse("https://pages.test").unwrap()).await
}

pub async fn world_on(origins: PageOrigins) -> World {
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

pub fn file(path: &str, content: &str) -> FileInput {
    FileInput {
        path: path.into(),
        content: Ok(bytes::Bytes::copy_from_slice(content.as_bytes())),
    }
}

pub fn site() -> Vec<FileInput> {
    vec![
        file("index.html", &"<h1>home</h1>\n".repeat(40)),
        file("style.css", "body { color: teal }"),
        file("docs/index.html", "<p>docs</p>"),
        file("404.html", "<p>lost</p>"),
    ]
}

impl World {
    pub async fn publish(&self, slug: &str, extra: impl FnOnce(&mut PublishRequest)) -> PageView {
        let mut req = PublishRequest {
            title: format!("Page {slug}"),
            slug: Some(slug.into()),
            files: site(),
            policy: quire_links::PolicyInput {
                access: Some("public".into()),
                ..quire_links::PolicyInput::default()
            },
            ..PublishRequest::default()
        };
        extra(&mut req);
        self.pages.publish(&self.ann, req).await.unwrap()
    }

    pub async fn patch(&self, id: PageId, patch: PatchRequest) {
        self.pages.update(&self.ann, id, patch).await.unwrap();
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.get_as(path, Visitor::default()).await
    }

    pub async fn get_as(&self, path: &str, visitor: Visitor<'_>) -> Answer {
        self.visit_on(None, path, visitor).await
    }

    /// A visit to `owner`'s own origin (per-owner layout), or to the shared origin (`None`).
    pub async fn project(&self, slug: &str) -> quire_projects::Project {
        self.projects
            .create(
                &self.ann,
                quire_projects::NewProject {
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

    pub async fn get_on(&self, owner: &str, path: &str, visitor: Visitor<'_>) -> Answer {
        self.visit_on(Some(owner), path, visitor).await
    }

    pub async fn visit_on(&self, owner: Option<&str>, path: &str, visitor: Visitor<'_>) -> Answer {
        self.serving
            .visit(Visit {
                owner,
                path,
                query: "",
                head: false,
                visitor,
                conditions: Conditions::default(),
                accepts_gzip: false,
                asker: quire_serving::Asker::default(),
            })
            .await
            .unwrap()
    }

    /// A fully signed-in dashboard session of `account`; returns its id hash.
    pub async fn session(&self, account: AccountId) -> String {
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
    pub async fn view_count(&self, id: PageId) -> u64 {
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
pub fn pass_token(url: &str) -> &str {
    let after = url.split_once("token=").expect("a pass URL").1;
    after.split('&').next().unwrap_or(after)
}

#[track_caller]
pub fn body(answer: &Answer) -> String {
    match answer {
        Answer::File(f) => String::from_utf8(f.body.to_vec()).unwrap(),
        other => panic!("expected a file, got {other:?}"),
    }
}
