//! Databases as a project's resources: listed while ready, assigned to another project of
//! their account, moved with a deleted project's contents, and holding their project (in any
//! state) against a delete without `move_to`.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_databases::{Database, DatabaseRecords};
use quire_kernel::{Clock, DatabaseId};
use quire_projects::{
    AssignStoreError, DeleteProjectStoreError, ProjectStore, ResourceEntry, ResourceType,
};
use quire_testkit::fixtures::FixedClock;
use uuid::Uuid;

use super::databases::{database_in, ready_database};
use super::support::{project_of, seed};

fn entry(d: &Database) -> ResourceEntry {
    ResourceEntry {
        id: d.id.0,
        name: d.name.clone(),
        created_at: d.created_at,
    }
}

pub(super) async fn projects_hold_assign_and_move_databases<
    S: AccountStore + ProjectStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let doomed = project_of(&ann.account, "doomed", &clock);
    s.insert_project(&doomed).await.unwrap();
    let dest = project_of(&ann.account, "dest", &clock);
    s.insert_project(&dest).await.unwrap();
    let ready = database_in(&ann, doomed.id, "held_ready", &clock);
    let ready = ready_database(s.as_ref(), &ready, &clock).await;
    let pending = database_in(&ann, doomed.id, "held_pending", &clock);
    s.insert_database(&pending).await.unwrap();

    // Only a ready database is a project's resource.
    let held = s.resources(doomed.id).await.unwrap();
    assert_eq!(held.databases, vec![entry(&ready)]);
    assert_eq!(
        s.resources_after(doomed.id, ResourceType::Database, None, 10)
            .await
            .unwrap(),
        vec![entry(&ready)]
    );

    let now = clock.now();
    let assign =
        |account, id: Uuid, to| s.assign_resource(account, ResourceType::Database, id, to, now);
    assign(ann.account.id, ready.id.0, dest.id).await.unwrap();
    assert_eq!(
        s.database(ready.id).await.unwrap().unwrap().project_id,
        dest.id
    );
    assert_eq!(
        s.resources(dest.id).await.unwrap().databases,
        vec![entry(&ready)]
    );
    assert!(s.resources(doomed.id).await.unwrap().databases.is_empty());
    for (account, id, what) in [
        (bob.account.id, ready.id, "another account's"),
        (ann.account.id, pending.id, "a provisioning one"),
        (ann.account.id, DatabaseId(Uuid::now_v7()), "an unknown one"),
    ] {
        assert_eq!(
            assign(account, id.0, ann.project.id).await.unwrap_err(),
            AssignStoreError::NotFound,
            "{what}"
        );
    }
    assert_eq!(s.database(pending.id).await.unwrap(), Some(pending.clone()));

    // A database being created holds its project, and moves with its contents.
    assert_eq!(
        s.delete_project(&doomed, None).await.unwrap_err(),
        DeleteProjectStoreError::NotEmpty
    );
    assert_eq!(
        s.project_by_id(doomed.id).await.unwrap(),
        Some(doomed.clone())
    );
    s.delete_project(&doomed, Some(ann.project.id))
        .await
        .unwrap();
    assert_eq!(
        s.database(pending.id).await.unwrap().unwrap().project_id,
        ann.project.id
    );

    // So does one being dropped, until its record is gone.
    assert!(s.mark_deleting(ready.id, clock.now()).await.unwrap());
    assert!(s.resources(dest.id).await.unwrap().databases.is_empty());
    assert_eq!(
        s.delete_project(&dest, None).await.unwrap_err(),
        DeleteProjectStoreError::NotEmpty
    );
    s.delete_database(ready.id).await.unwrap();
    s.delete_project(&dest, None).await.unwrap();
    assert_eq!(s.project_by_id(dest.id).await.unwrap(), None);
}
