//! URL links as a project's resources, on both databases: listed in `resources.links` (a
//! page's own link is not), moved by assign and by `DELETE project` with `move_to`, counted by
//! `project_not_empty`, and reached by app keys by the project addressing rules.

use serde_json::json;

use crate::harness::{Backend, on_both_backends, setup};

on_both_backends!(links_are_held_moved_and_counted_by_projects);

const PROJECTS: &str = "/api/platform/v1/projects";
const LINKS: &str = "/api/link/v1/links";

async fn links_are_held_moved_and_counted_by_projects(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let (campaign, _) = srv.project(&ann.key, "campaign").await;
    let link = srv
        .post(
            LINKS,
            &ann.key,
            json!({"url": "https://example.com/", "alias": "spring", "project": "campaign"}),
        )
        .await
        .assert_status(201)
        .clone();
    assert_eq!(link["project"], "campaign");
    let id = link["id"].as_str().unwrap().to_owned();
    srv.post(
        "/api/page/v1/pages",
        &ann.key,
        json!({"title": "Home page", "files": [{"path": "index.html", "content": "hi"}]}),
    )
    .await
    .assert_status(201);
    let resources = |project: String| {
        let srv = &srv;
        let key = ann.key.clone();
        async move {
            srv.get(&format!("{PROJECTS}/{project}/resources"), &key)
                .await
                .assert_status(200)["resources"]
                .clone()
        }
    };
    let held = resources(campaign.clone()).await;
    assert_eq!(held["links"].as_array().unwrap().len(), 1, "{held}");
    assert_eq!(held["links"][0]["id"], id.as_str());
    assert_eq!(held["links"][0]["name"], "spring");
    let home = resources(ann.project_id.clone()).await;
    assert_eq!(
        home["links"],
        json!([]),
        "a page's own link is held through its page"
    );
    assert_eq!(home["pages"].as_array().unwrap().len(), 1);

    // An app key reaches the links of its own project only.
    let (home_key, _) = srv.mint(&ann.key, &["link"], None).await;
    srv.get(&format!("{LINKS}?project=campaign"), &home_key)
        .await
        .assert_error(403, "insufficient_scope");
    let (campaign_key, _) = srv.mint(&ann.key, &["link"], Some("campaign")).await;
    let listed = srv
        .get(LINKS, &campaign_key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(listed["links"][0]["id"], id.as_str());
    srv.patch(&format!("{LINKS}/{id}"), &home_key, json!({"title": "x"}))
        .await
        .assert_error(403, "insufficient_scope");

    // A project holding a link is not empty; assign moves it alone.
    let doomed = format!("{PROJECTS}/{campaign}");
    srv.delete(&doomed, &ann.key, Some(json!({"confirm": campaign})))
        .await
        .assert_error(409, "project_not_empty");
    srv.post(
        &format!("{PROJECTS}/{}/assign", ann.project_id),
        &ann.key,
        json!({"resource_type": "link", "resource_id": id}),
    )
    .await
    .assert_status(204);
    assert_eq!(
        srv.get(&format!("{LINKS}/{id}"), &ann.key)
            .await
            .assert_status(200)["project"],
        ann.project_slug.as_str()
    );
    assert_eq!(resources(campaign.clone()).await["links"], json!([]));
    srv.post(
        &format!("{PROJECTS}/{campaign}/assign"),
        &ann.key,
        json!({"resource_type": "link", "resource_id": id}),
    )
    .await
    .assert_status(204);

    // Deleting the project with move_to takes its links along.
    srv.delete(
        &doomed,
        &ann.key,
        Some(json!({"confirm": campaign, "move_to": ann.project_slug})),
    )
    .await
    .assert_status(204);
    let moved = srv
        .get(&format!("{LINKS}/{id}"), &ann.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(moved["project"], ann.project_slug.as_str());
    let followed = crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/s/spring", srv.pages))
        .send()
        .await
        .unwrap();
    assert_eq!(
        followed.status().as_u16(),
        302,
        "a moved link keeps working"
    );
}
