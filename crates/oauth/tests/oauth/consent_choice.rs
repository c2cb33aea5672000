//! The consent page's choices against the in-memory world: the project picker (the
//! account's projects, the home project preselected; the grant keeps the one picked, its
//! tokens act there, refreshes keep it; another account's project is refused and nothing is
//! stored) and "read only" (narrows to `page:read`, never widens).

use crate::common;

use common::{Flow, SESSION, query_of};
use quire_kernel::{App, ProjectSlug};
use quire_oauth::{Approve, DecisionError, TokenError, TokenRequest};
use quire_projects::{Project, ProjectStore};
use quire_testkit::World;

async fn flow_with_bob() -> Flow {
    common::flow_in(World::builder().accounts(&["ann", "bob"]).build().await).await
}

/// A second project of ann's, made after her default one.
async fn side_project(f: &Flow) -> Project {
    let mut side = f.w.account("ann").project.clone();
    side.id = quire_kernel::ProjectId::new();
    side.slug = ProjectSlug::parse("ann_side").unwrap();
    side.name = "Side".into();
    side.created_at += time::Duration::seconds(1);
    f.w.store.insert_project(&side).await.unwrap();
    side
}

fn picking(f: &Flow, project: Option<String>, read_only: bool) -> Approve {
    Approve {
        project,
        read_only,
        ..f.approve()
    }
}

#[tokio::test]
async fn the_picked_project_is_where_the_tokens_act_and_refreshes_keep_it() {
    let f = flow_with_bob().await;
    let ann = f.w.account("ann");
    let side = side_project(&f).await;

    // The page offers ann's projects, oldest first, her home (default) one preselected.
    let consent = &f.w.services.oauth_consent;
    let shown = consent
        .begin(&f.request(), ann.account.id, SESSION)
        .await
        .unwrap();
    let offered: Vec<_> = shown.projects.iter().map(|p| p.id).collect();
    assert_eq!(offered, vec![ann.project.id, side.id]);
    assert_eq!(shown.project.id, ann.project.id);
    assert!(shown.offers_read_only());

    let code = f
        .code_choosing(&f.request(), picking(&f, Some(side.id.to_string()), false))
        .await;
    let tokens = f.exchange(&code).await.unwrap();
    let principal = f.authenticate(&tokens.access_token).await.unwrap();
    assert_eq!(principal.home_project_id, side.id);
    assert!(principal.can_write(App::Page));

    let refreshed = f.refresh(tokens.refresh_token.expose()).await.unwrap();
    let principal = f.authenticate(&refreshed.access_token).await.unwrap();
    assert_eq!(principal.home_project_id, side.id);

    // A grant keeping the preselection acts in the home project: one row per project.
    let home = f.exchange(&f.code().await).await.unwrap();
    let principal = f.authenticate(&home.access_token).await.unwrap();
    assert_eq!(principal.home_project_id, ann.project.id);
    let listed =
        f.w.services
            .oauth_agents
            .list(ann.account.id)
            .await
            .unwrap();
    let mut projects: Vec<_> = listed.iter().map(|a| a.project.id).collect();
    projects.sort();
    let mut expected = vec![ann.project.id, side.id];
    expected.sort();
    assert_eq!(projects, expected);
}

#[tokio::test]
async fn a_project_the_account_cannot_use_is_refused_and_nothing_is_stored() {
    let f = flow_with_bob().await;
    let ann = f.w.account("ann").account.id;
    let bob = f.w.account("bob").project.id;
    let consent = &f.w.services.oauth_consent;
    let shown = consent.begin(&f.request(), ann, SESSION).await.unwrap();
    let id = shown.request_id.expose();
    for project in [bob.to_string(), "not-a-project".into()] {
        assert_eq!(
            consent
                .decide(id, SESSION, Some(picking(&f, Some(project), false)))
                .await,
            Err(DecisionError::ProjectRefused)
        );
    }
    // Still pending: the person can pick again.
    let location = consent
        .decide(id, SESSION, Some(f.approve()))
        .await
        .unwrap();
    let tokens = f.exchange(&query_of(&location)["code"]).await.unwrap();
    let principal = f.authenticate(&tokens.access_token).await.unwrap();
    assert_eq!(principal.home_project_id, f.w.account("ann").project.id);
}

#[tokio::test]
async fn read_only_grants_page_read_and_a_refresh_cannot_widen_it() {
    let f = flow_with_bob().await;
    let code = f.code_choosing(&f.request(), picking(&f, None, true)).await;
    let tokens = f.exchange(&code).await.unwrap();
    assert_eq!(tokens.scope, "page:read");
    let principal = f.authenticate(&tokens.access_token).await.unwrap();
    assert!(principal.has_app(App::Page));
    assert!(!principal.can_write(App::Page));
    assert!(!principal.has_app(App::Link));
    assert!(principal.is_oauth_client() && !principal.is_master());

    let widened = f
        .refresh_with(
            tokens.refresh_token.expose(),
            TokenRequest {
                scope: Some("page".into()),
                ..TokenRequest::default()
            },
        )
        .await;
    assert!(matches!(widened, Err(TokenError::InvalidScope(_))));

    // A request without page access: read only would widen it, so it is refused.
    let mut links_only = f.request();
    links_only.scope = Some("link".into());
    let consent = &f.w.services.oauth_consent;
    let shown = consent
        .begin(&links_only, f.w.account("ann").account.id, SESSION)
        .await
        .unwrap();
    assert!(!shown.offers_read_only());
    assert_eq!(
        consent
            .decide(
                shown.request_id.expose(),
                SESSION,
                Some(picking(&f, None, true))
            )
            .await,
        Err(DecisionError::ReadOnlyRefused)
    );
}
