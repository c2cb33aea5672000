//! The OAuth client registry: ids unique for ever, live listing, secret rotation, and a
//! delete that leaves a tombstone and detaches the client from every project at once.

use std::sync::Arc;

use quire_accounts::AccountStore;
use quire_kernel::Clock;
use quire_oauth::{ClientId, ClientStore, InsertClientError};
use quire_projects::ProjectStore;

use super::support::{client_of, project_of, seed};
use crate::fixtures::FixedClock;

pub(super) async fn clients_are_listed_rotated_and_deleted_as_tombstones<
    S: AccountStore + ClientStore + ProjectStore + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let first = client_of("First", &clock);
    let mut second = client_of("Second", &clock);
    second.redirect_uris = vec![
        quire_oauth::RedirectUri::stored("http://127.0.0.1/cb"),
        quire_oauth::RedirectUri::stored("https://b.example/cb?x=1"),
    ];
    second.secret_hash = None;
    s.insert_client(&second).await.unwrap();
    s.insert_client(&first).await.unwrap();
    assert_eq!(
        s.insert_client(&first).await.unwrap_err(),
        InsertClientError::IdTaken
    );
    // Oldest first, every field as stored, loopback URIs still matching any port.
    let live = s.live_clients().await.unwrap();
    assert_eq!(live, vec![first.clone(), second.clone()]);
    let read = s.client(&second.id).await.unwrap().unwrap();
    assert!(read.redirect_uris[0].matches("http://127.0.0.1:49152/cb"));
    assert_eq!(s.client(&ClientId::generate()).await.unwrap(), None);

    assert!(s.set_client_secret(&first.id, "ab").await.unwrap());
    assert_eq!(
        s.client(&first.id)
            .await
            .unwrap()
            .unwrap()
            .secret_hash
            .as_deref(),
        Some("ab")
    );

    let mut home_of_ann = project_of(&ann.account, "ann_app", &clock);
    home_of_ann.oauth_client_id = Some(first.id.as_str().to_owned());
    s.insert_project(&home_of_ann).await.unwrap();
    let mut home_of_bob = project_of(&bob.account, "bob_app", &clock);
    home_of_bob.oauth_client_id = Some(first.id.as_str().to_owned());
    s.insert_project(&home_of_bob).await.unwrap();

    clock.advance(time::Duration::seconds(5));
    let at = clock.now();
    assert!(s.delete_client(&first.id, at).await.unwrap());
    let tomb = s.client(&first.id).await.unwrap().unwrap();
    assert_eq!(tomb.deleted_at, Some(at));
    assert!(!tomb.is_live());
    assert_eq!(s.live_clients().await.unwrap(), vec![second.clone()]);
    for p in [home_of_ann.id, home_of_bob.id] {
        let p = s.project_by_id(p).await.unwrap().unwrap();
        assert_eq!(p.oauth_client_id, None, "{}", p.slug.as_str());
    }
    // A tombstone is deleted once, rotates nothing, keeps its id, and cannot be attached.
    assert!(!s.delete_client(&first.id, at).await.unwrap());
    assert!(!s.set_client_secret(&first.id, "cd").await.unwrap());
    assert_eq!(
        s.insert_client(&first).await.unwrap_err(),
        InsertClientError::IdTaken
    );
    assert_eq!(
        s.update_project(&home_of_ann).await.unwrap_err(),
        quire_projects::ProjectWriteError::UnknownClient
    );
}
