//! The page details cache as the application wires it (the world's composition root over
//! the in-memory store): a fetch within the TTL reads nothing, every write through this
//! replica shows at once in the next fetch, a write through another replica within the TTL,
//! and pages that do not exist are never held.

use quire_kernel::{PageId, Principal};
use quire_pages::{FileInput, PageError, PageView, PatchRequest, PublishRequest};
use quire_projects::ProjectPatch;
use quire_read_cache::PAGE_READ_TTL;
use quire_testkit::World;
use quire_testkit::memory::Op;

async fn world_with_page() -> (World, Principal, PageView) {
    let w = World::builder().accounts(&["ann"]).build().await;
    let ann = w.master("ann");
    let page = w
        .services
        .pages
        .publish(
            &ann,
            PublishRequest {
                title: "First".into(),
                files: vec![FileInput {
                    path: "index.html".into(),
                    content: Ok("<p>hi</p>".into()),
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .unwrap();
    (w, ann, page)
}

fn titled(title: &str) -> PatchRequest {
    PatchRequest {
        title: Some(title.into()),
        ..PatchRequest::default()
    }
}

#[tokio::test]
async fn a_fresh_fetch_reads_nothing_and_local_writes_show_at_once() {
    let (w, ann, page) = world_with_page().await;
    let id = page.page.id;
    w.services.pages.get(&ann, id).await.unwrap();
    w.store.record_calls();
    w.services.pages.get(&ann, id).await.unwrap();
    assert_eq!(w.store.calls(), Vec::<Op>::new(), "served from memory");

    // The record, the link (its policy) and the project, each changed here, show at once.
    w.services
        .pages
        .update(&ann, id, titled("Second"))
        .await
        .unwrap();
    assert_eq!(
        w.services.pages.get(&ann, id).await.unwrap().page.title,
        "Second"
    );
    let public = PatchRequest {
        policy: quire_links::PolicyPatch {
            access: Some("public".into()),
            ..quire_links::PolicyPatch::default()
        },
        ..PatchRequest::default()
    };
    w.services.pages.update(&ann, id, public).await.unwrap();
    let fetched = w.services.pages.get(&ann, id).await.unwrap();
    assert_eq!(fetched.link.unwrap().policy.access.as_str(), "public");
    w.services
        .projects
        .update(
            &ann,
            page.page.project_id,
            ProjectPatch {
                slug: Some("renamed".into()),
                ..ProjectPatch::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        w.services
            .pages
            .get(&ann, id)
            .await
            .unwrap()
            .project_slug
            .as_str(),
        "renamed"
    );
    w.services.pages.delete(&ann, id).await.unwrap();
    assert!(matches!(
        w.services.pages.get(&ann, id).await,
        Err(PageError::NotFound)
    ));
}

#[tokio::test]
async fn another_replica_s_write_shows_within_the_ttl() {
    let (w, ann, page) = world_with_page().await;
    let id = page.page.id;
    w.services.pages.get(&ann, id).await.unwrap();
    w.replica()
        .pages
        .update(&ann, id, titled("From elsewhere"))
        .await
        .unwrap();
    assert_eq!(
        w.services.pages.get(&ann, id).await.unwrap().page.title,
        "First",
        "held for the TTL"
    );
    w.clock.advance(
        time::Duration::try_from(PAGE_READ_TTL).unwrap() + time::Duration::milliseconds(100),
    );
    assert_eq!(
        w.services.pages.get(&ann, id).await.unwrap().page.title,
        "From elsewhere"
    );
}

#[tokio::test]
async fn unknown_pages_are_asked_every_time() {
    let (w, ann, _) = world_with_page().await;
    let unknown = PageId::new();
    for _ in 0..2 {
        w.store.record_calls();
        assert!(matches!(
            w.services.pages.get(&ann, unknown).await,
            Err(PageError::NotFound)
        ));
        assert_eq!(w.store.calls(), vec![Op::PageDetails]);
    }
}
