//! The API's fetch of a page: one read of the store for the page, its project, link and
//! owner, and the same refusals as before it was one read.

use quire_kernel::{App, Apps, KeyId, PageId, PrincipalKind, ProjectId, Tier};
use quire_pages::{PageError, PublishRequest};
use quire_testkit::memory::Op;

#[tokio::test]
async fn fetching_a_page_reads_the_store_once() {
    let w = quire_testkit::World::builder()
        .accounts(&["ann", "bob"])
        .build()
        .await;
    let ann = w.master("ann");
    let published = w
        .services
        .pages
        .publish(
            &ann,
            PublishRequest {
                title: "Launch".into(),
                files: vec![quire_pages::FileInput {
                    path: "index.html".into(),
                    content: Ok("<h1>hi</h1>".into()),
                }],
                policy: quire_links::PolicyInput {
                    access: Some("allow_list".into()),
                    allow: vec!["bob".into(), "carol@example.com".into()],
                    max_views: Some(9),
                    ..quire_links::PolicyInput::default()
                },
                ..PublishRequest::default()
            },
        )
        .await
        .unwrap();

    w.store.record_calls();
    let fetched = w.services.pages.get(&ann, published.page.id).await.unwrap();
    assert_eq!(
        w.store.calls(),
        vec![Op::PageDetails],
        "a master key's fetch is one read"
    );
    assert_eq!(fetched, published, "the same view the publish returned");

    // Another account's page, and an unknown one, are not found.
    let bob = w.master("bob");
    for (who, id) in [(&bob, published.page.id), (&ann, PageId::new())] {
        assert!(matches!(
            w.services.pages.get(who, id).await,
            Err(PageError::NotFound)
        ));
    }
    // An app key of another project, without a grant on this one, cannot reach it.
    let mut app_key = ann.clone();
    app_key.kind = PrincipalKind::Key {
        key_id: KeyId::new(),
        tier: Tier::App(Apps::new([App::Page]).unwrap()),
    };
    app_key.home_project_id = ProjectId::new();
    assert!(matches!(
        w.services.pages.get(&app_key, published.page.id).await,
        Err(PageError::InsufficientScope)
    ));
}
