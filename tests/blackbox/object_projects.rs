//! Objects as a project's resources, on both databases: listed in `resources.objects`, moved
//! with their links by assign and by `DELETE project` with `move_to`, counted by
//! `project_not_empty`, reached by app keys of their project only.

use serde_json::json;

use crate::harness::{Backend, on_both_backends, setup};
use crate::objects::{OBJECTS, Part, upload};

on_both_backends!(objects_are_held_moved_and_counted_by_projects);

async fn objects_are_held_moved_and_counted_by_projects(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    const PROJECTS: &str = "/api/platform/v1/projects";
    let (campaign, _) = srv.project(&ann.key, "campaign").await;
    let made = upload(
        &srv,
        &ann.key,
        &[
            Part::Field("title", "Price list"),
            Part::Field("project", "campaign"),
            Part::File(Some("prices.csv"), b"a,b"),
        ],
    )
    .await;
    let made = made.assert_status(201).clone();
    assert_eq!(made["project"], "campaign");
    let id = made["id"].as_str().unwrap().to_owned();
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
    assert_eq!(held["objects"].as_array().unwrap().len(), 1, "{held}");
    assert_eq!(held["objects"][0]["id"], id.as_str());
    assert_eq!(held["objects"][0]["name"], "Price list");
    assert_eq!(
        held["links"],
        json!([]),
        "an object's link is held through it"
    );

    // An app key reaches the objects of its own project only.
    let (home_key, _) = srv.mint(&ann.key, &["serve"], None).await;
    srv.get(&format!("{OBJECTS}/{id}"), &home_key)
        .await
        .assert_error(403, "insufficient_scope");
    let (campaign_key, _) = srv.mint(&ann.key, &["serve"], Some("campaign")).await;
    srv.get(&format!("{OBJECTS}/{id}"), &campaign_key)
        .await
        .assert_status(200);

    let doomed = format!("{PROJECTS}/{campaign}");
    srv.delete(&doomed, &ann.key, Some(json!({"confirm": campaign})))
        .await
        .assert_error(409, "project_not_empty");
    srv.post(
        &format!("{PROJECTS}/{}/assign", ann.project_id),
        &ann.key,
        json!({"resource_type": "object", "resource_id": id}),
    )
    .await
    .assert_status(204);
    assert_eq!(
        srv.get(&format!("{OBJECTS}/{id}"), &ann.key)
            .await
            .assert_status(200)["project"],
        ann.project_slug.as_str()
    );
    assert_eq!(resources(campaign.clone()).await["objects"], json!([]));
    srv.post(
        &format!("{PROJECTS}/{campaign}/assign"),
        &ann.key,
        json!({"resource_type": "object", "resource_id": uuid::Uuid::new_v4()}),
    )
    .await
    .assert_error(404, "not_found");
    srv.post(
        &format!("{PROJECTS}/{campaign}/assign"),
        &ann.key,
        json!({"resource_type": "object", "resource_id": id}),
    )
    .await
    .assert_status(204);
    srv.delete(
        &doomed,
        &ann.key,
        Some(json!({"confirm": campaign, "move_to": ann.project_slug})),
    )
    .await
    .assert_status(204);
    let moved = srv.get(&format!("{OBJECTS}/{id}"), &ann.key).await;
    assert_eq!(
        moved.assert_status(200)["project"],
        ann.project_slug.as_str()
    );
    assert_eq!(
        resources(ann.project_id.clone()).await["objects"][0]["id"],
        id.as_str()
    );
}
