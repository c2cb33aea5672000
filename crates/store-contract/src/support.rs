//! What the checks share: seeded accounts and the records they write.

use std::sync::Arc;

use quire_accounts::Account;
use quire_accounts::AccountStore;
use quire_device_auth::{DeviceGrant, GrantState};
use quire_kernel::{App, Apps, Clock, Color, ProjectId, ProjectSlug, Tier};
use quire_kernel::{LinkId, PageId};
use quire_keys::{KeyRecord, PlaintextKey, new_key};
use quire_links::{Access, Link, Policy, RedirectStatus, Target};
use quire_oauth::{ClientId, ClientSecret, ClientType, OAuthClient, RedirectUri};
use quire_pages::{FileEntry, Page, PageStatus, PageStore};
use quire_projects::{Project, ProjectStatus};
use time::{Duration, OffsetDateTime};

use quire_testkit::fixtures::FixedClock;

pub(super) struct Seeded {
    pub(super) account: Account,
    pub(super) project: Project,
    pub(super) master_key: PlaintextKey,
}

pub(super) async fn seed<S: AccountStore + 'static>(
    s: &Arc<S>,
    clock: &Arc<FixedClock>,
    handle: &str,
) -> Seeded {
    clock.advance(Duration::seconds(1));
    let created = quire_testkit::fixtures::create_account(s.clone(), clock.clone(), handle).await;
    Seeded {
        account: created.account,
        project: created.project,
        master_key: created.master_key,
    }
}

pub(super) fn project_of(account: &Account, slug: &str, clock: &FixedClock) -> Project {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Project {
        id: ProjectId::new(),
        account_id: account.id,
        name: format!("Project {slug}"),
        tag: "t".into(),
        color: Color::Teal,
        slug: ProjectSlug::parse(slug).expect("valid slug"),
        oauth_client_id: None,
        status: ProjectStatus::Active,
        created_at: now,
        updated_at: now,
    }
}

/// A confidential client registered now, with one redirect URI.
pub(super) fn client_of(name: &str, clock: &FixedClock) -> OAuthClient {
    clock.advance(Duration::seconds(1));
    OAuthClient {
        id: ClientId::generate(),
        name: name.into(),
        client_type: ClientType::Confidential,
        redirect_uris: vec![RedirectUri::stored("https://app.example/cb")],
        secret_hash: Some(ClientSecret::generate().hash()),
        created_at: clock.now(),
        deleted_at: None,
        registration: quire_oauth::Registration::Admin,
        last_used_at: None,
    }
}

pub(super) fn app_key_in(
    account: &Account,
    project: ProjectId,
    clock: &FixedClock,
) -> (PlaintextKey, KeyRecord) {
    clock.advance(Duration::seconds(1));
    new_key(
        account.id,
        "ci".into(),
        Tier::App(Apps::new([App::Page, App::Link]).expect("apps")),
        Some(project),
        clock.now(),
    )
}

pub(super) fn page_of(
    account: &Account,
    project: ProjectId,
    slug: &str,
    public_id: &str,
    clock: &FixedClock,
) -> Page {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Page {
        id: PageId::new(),
        public_id: public_id.into(),
        account_id: account.id,
        project_id: project,
        slug: slug.into(),
        title: format!("Title {slug}"),
        entrypoint: "index.html".into(),
        status: PageStatus::Active,
        size_bytes: 3,
        file_count: 1,
        created_at: now,
        updated_at: now,
        archived_at: None,
        database: None,
    }
}

pub(super) fn file(path: &str, size: u64) -> FileEntry {
    FileEntry {
        path: path.into(),
        size_bytes: size,
        content_type: "text/html; charset=utf-8".into(),
        sha256: format!("{:0>64}", size),
    }
}

pub(super) fn link_for(page: &Page, alias: Option<&str>, clock: &FixedClock) -> Link {
    let now = clock.now();
    Link {
        alias: alias.map(str::to_owned),
        ..Link::of_page(
            page.id,
            page.account_id,
            page.project_id,
            page.public_id.clone(),
            Policy {
                access: Access::Public,
                expires_at: None,
                max_views: None,
                allow: vec![],
            },
            now,
        )
    }
}

/// A publish lease a minute from the clock's now.
/// A public URL link of `account` in `project`.
pub(super) fn url_link(
    account: &Account,
    project: ProjectId,
    url: &str,
    public_id: &str,
    alias: Option<&str>,
    clock: &FixedClock,
) -> Link {
    let now = clock.now();
    Link {
        id: LinkId::new(),
        target: Target::Url(url.into()),
        account_id: account.id,
        project_id: project,
        public_id: public_id.into(),
        alias: alias.map(str::to_owned),
        title: Some(format!("to {url}")),
        policy: Policy {
            access: Access::Public,
            expires_at: None,
            max_views: None,
            allow: vec![],
        },
        password_hash: None,
        view_count: 0,
        expired_url: None,
        redirect: RedirectStatus::Found,
        archived_at: None,
        last_viewed_at: None,
        created_at: now,
        updated_at: now,
    }
}

pub(super) fn lease(clock: &FixedClock) -> OffsetDateTime {
    clock.now() + Duration::minutes(1)
}

pub(super) fn grant(user_code: &str, device_hash: &str, clock: &FixedClock) -> DeviceGrant {
    let now = clock.now();
    DeviceGrant {
        id: uuid::Uuid::new_v4(),
        device_code_hash: device_hash.into(),
        user_code: user_code.into(),
        client_name: "cli".into(),
        state: GrantState::Pending,
        created_at: now,
        expires_at: now + Duration::seconds(600),
        interval_secs: 3,
        last_polled_at: None,
        decided_at: None,
    }
}

/// Stores `page` as a ready page with one file.
pub(super) async fn ready<S: PageStore>(s: &S, page: &Page) {
    s.insert_pending(page, &[file("index.html", 1)], lease_at(page))
        .await
        .unwrap();
    s.mark_ready(page.id).await.unwrap();
}

fn lease_at(page: &Page) -> OffsetDateTime {
    page.created_at + Duration::minutes(1)
}
