//! Database records: every field kept as written, one slug per instance whatever the
//! account or state (decided by the write, so racing creates make one record), state
//! changes only from the state each starts from, the project list of ready records newest
//! first, and the janitor's three kinds of due record and nothing else.

use std::sync::Arc;

use quire_accounts::{AccountStore, SealedSecret};
use quire_databases::{Database, DatabaseRecords, DatabaseStatus, InsertDatabaseError};
use quire_kernel::{Clock, DatabaseId, ProjectId, ProjectSlug};
use quire_projects::ProjectStore;
use quire_testkit::fixtures::FixedClock;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::support::{Seeded, project_of, seed};

/// A provisioning record of `owner` in `project`, created a second after the last, with a
/// two-minute lease.
pub(super) fn database_in(
    owner: &Seeded,
    project: ProjectId,
    slug: &str,
    clock: &FixedClock,
) -> Database {
    clock.advance(Duration::seconds(1));
    let now = clock.now();
    Database {
        id: DatabaseId(Uuid::now_v7()),
        account_id: owner.account.id,
        project_id: project,
        slug: ProjectSlug::parse(slug).expect("valid slug"),
        name: format!("Database {slug}"),
        status: DatabaseStatus::Provisioning,
        lease_until: Some(now + Duration::minutes(2)),
        expires_at: None,
        owner_secret: SealedSecret::stored(format!("v1.owner-{slug}")),
        authenticator_secret: SealedSecret::stored(format!("v1.auth-{slug}")),
        jwt_secret: None,
        data_api_enabled: false,
        data_api_settings: quire_databases::DataApiSettings::default(),
        created_at: now,
        updated_at: now,
    }
}

/// Stores `d` and marks it ready now; the record as it then reads.
pub(super) async fn ready_database<S: DatabaseRecords>(
    s: &S,
    d: &Database,
    clock: &FixedClock,
) -> Database {
    s.insert_database(d).await.unwrap();
    marked_ready(s, d, clock).await
}

/// Marks the stored `d` ready now; the record as it then reads.
async fn marked_ready<S: DatabaseRecords>(s: &S, d: &Database, clock: &FixedClock) -> Database {
    let at = clock.now();
    assert!(s.mark_ready(d.id, at).await.unwrap());
    Database {
        status: DatabaseStatus::Ready,
        lease_until: None,
        updated_at: at,
        ..d.clone()
    }
}

pub(super) async fn database_records_keep_every_field<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let mut shop = database_in(&ann, ann.project.id, "shop_db", &clock);
    shop.name = "Café ☕ « orders »".into();
    shop.expires_at = Some(clock.now() + Duration::days(1) + Duration::microseconds(123_457));
    shop.lease_until = Some(clock.now() + Duration::microseconds(90_000_001));
    s.insert_database(&shop).await.unwrap();
    assert_eq!(s.database(shop.id).await.unwrap(), Some(shop.clone()));
    assert_eq!(
        s.database_by_slug("shop_db").await.unwrap(),
        Some(shop.clone())
    );
    assert_eq!(s.database(DatabaseId(Uuid::now_v7())).await.unwrap(), None);
    assert_eq!(s.database_by_slug("no_such_db").await.unwrap(), None);

    clock.advance(Duration::microseconds(1_000_001));
    let shop = marked_ready(s.as_ref(), &shop, &clock).await;
    assert_eq!(s.database(shop.id).await.unwrap(), Some(shop.clone()));

    clock.advance(Duration::seconds(1));
    let jwt = SealedSecret::stored("v1.jwt-sealed".into());
    let at = clock.now();
    assert!(s.set_data_api(shop.id, true, Some(&jwt), at).await.unwrap());
    let enabled = Database {
        jwt_secret: Some(jwt.clone()),
        data_api_enabled: true,
        updated_at: at,
        ..shop.clone()
    };
    assert_eq!(s.database(shop.id).await.unwrap(), Some(enabled.clone()));
    assert_eq!(
        s.database_by_slug("shop_db").await.unwrap(),
        Some(enabled.clone())
    );
    // Turned off, the secret stays, so the same keys work again once it is back on.
    clock.advance(Duration::seconds(1));
    let at = clock.now();
    assert!(s.set_data_api(shop.id, false, None, at).await.unwrap());
    let disabled = Database {
        data_api_enabled: false,
        updated_at: at,
        ..enabled
    };
    assert_eq!(s.database(shop.id).await.unwrap(), Some(disabled.clone()));
    assert!(s.set_data_api(shop.id, true, None, at).await.unwrap());
    assert_eq!(
        s.database(shop.id).await.unwrap().unwrap().jwt_secret,
        Some(jwt)
    );
}

pub(super) async fn database_states_change_only_from_their_own<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let d = database_in(&ann, ann.project.id, "stateful", &clock);
    s.insert_database(&d).await.unwrap();
    let jwt = SealedSecret::stored("v1.jwt".into());
    let later = clock.now() + Duration::seconds(5);

    // Provisioning: neither its data API nor a delete applies; nothing changes.
    assert!(!s.set_data_api(d.id, true, Some(&jwt), later).await.unwrap());
    assert!(!s.mark_deleting(d.id, later).await.unwrap());
    assert_eq!(s.database(d.id).await.unwrap(), Some(d.clone()));

    let ready = marked_ready(s.as_ref(), &d, &clock).await;
    assert!(
        !s.mark_ready(d.id, later).await.unwrap(),
        "ready once: a second mark finds no provisioning record"
    );
    assert_eq!(s.database(d.id).await.unwrap(), Some(ready.clone()));

    assert!(s.mark_deleting(d.id, later).await.unwrap());
    let deleting = Database {
        status: DatabaseStatus::Deleting,
        updated_at: later,
        ..ready
    };
    assert_eq!(s.database(d.id).await.unwrap(), Some(deleting.clone()));
    let after = later + Duration::seconds(1);
    assert!(!s.mark_deleting(d.id, after).await.unwrap());
    assert!(!s.mark_ready(d.id, after).await.unwrap());
    assert!(!s.set_data_api(d.id, true, Some(&jwt), after).await.unwrap());
    assert_eq!(s.database(d.id).await.unwrap(), Some(deleting));

    // No record: every change is `false`.
    let none = DatabaseId(Uuid::now_v7());
    assert!(!s.mark_ready(none, after).await.unwrap());
    assert!(!s.mark_deleting(none, after).await.unwrap());
    assert!(!s.set_data_api(none, false, None, after).await.unwrap());

    // Deleting is idempotent.
    s.delete_database(d.id).await.unwrap();
    assert_eq!(s.database(d.id).await.unwrap(), None);
    s.delete_database(d.id).await.unwrap();
    s.delete_database(none).await.unwrap();
}

pub(super) async fn jwt_secrets_rotate_from_the_secret_read<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let d = database_in(&ann, ann.project.id, "rotating", &clock);
    let first = SealedSecret::stored("v1.jwt-first".into());
    let second = SealedSecret::stored("v1.jwt-second".into());
    let third = SealedSecret::stored("v1.jwt-third".into());
    let at = clock.now() + Duration::seconds(5);

    // Provisioning, then ready but never enabled: nothing to rotate.
    s.insert_database(&d).await.unwrap();
    assert!(
        !s.rotate_jwt_secret(d.id, &first, &second, at)
            .await
            .unwrap()
    );
    let ready = marked_ready(s.as_ref(), &d, &clock).await;
    assert!(
        !s.rotate_jwt_secret(d.id, &first, &second, at)
            .await
            .unwrap()
    );
    assert_eq!(s.database(d.id).await.unwrap(), Some(ready.clone()));

    assert!(s.set_data_api(d.id, true, Some(&first), at).await.unwrap());
    // Off or on, the secret rotates; the switch stays as it was.
    assert!(s.set_data_api(d.id, false, None, at).await.unwrap());
    let later = at + Duration::microseconds(1_500_001);
    assert!(
        s.rotate_jwt_secret(d.id, &first, &second, later)
            .await
            .unwrap()
    );
    let rotated = Database {
        jwt_secret: Some(second.clone()),
        data_api_enabled: false,
        updated_at: later,
        ..ready.clone()
    };
    assert_eq!(s.database(d.id).await.unwrap(), Some(rotated.clone()));
    // A rotation from a secret read before another rotation changes nothing.
    assert!(
        !s.rotate_jwt_secret(d.id, &first, &third, later)
            .await
            .unwrap()
    );
    assert_eq!(s.database(d.id).await.unwrap(), Some(rotated));
    // Re-enabling keeps the rotated secret.
    assert!(s.set_data_api(d.id, true, None, later).await.unwrap());
    assert_eq!(
        s.database(d.id).await.unwrap().unwrap().jwt_secret,
        Some(second.clone())
    );

    // Two racing rotations from one secret: one wins, and its secret is the one kept.
    let (a, b) = (s.clone(), s.clone());
    let (x, y) = (third.clone(), SealedSecret::stored("v1.jwt-fourth".into()));
    let (from_a, from_b) = (second.clone(), second.clone());
    let (to_a, to_b) = (x.clone(), y.clone());
    let (r1, r2) = tokio::join!(
        async move { a.rotate_jwt_secret(d.id, &from_a, &to_a, later).await },
        async move { b.rotate_jwt_secret(d.id, &from_b, &to_b, later).await },
    );
    let kept = match (r1.unwrap(), r2.unwrap()) {
        (true, false) => x,
        (false, true) => y,
        other => panic!("one rotation wins: {other:?}"),
    };
    assert_eq!(
        s.database(d.id).await.unwrap().unwrap().jwt_secret,
        Some(kept.clone())
    );

    // Deleting: no rotation.
    assert!(s.mark_deleting(d.id, later).await.unwrap());
    let fifth = SealedSecret::stored("v1.jwt-fifth".into());
    assert!(
        !s.rotate_jwt_secret(d.id, &kept, &fifth, later)
            .await
            .unwrap()
    );
    assert!(
        !s.rotate_jwt_secret(DatabaseId(Uuid::now_v7()), &kept, &fifth, later)
            .await
            .unwrap()
    );
}

pub(super) async fn database_slugs_are_held_across_accounts_and_states<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let bob = seed(&s, &clock, "bob").await;
    let taken =
        |r: &Result<(), InsertDatabaseError>| matches!(r, Err(InsertDatabaseError::SlugTaken));

    let provisioning = database_in(&ann, ann.project.id, "held_a", &clock);
    s.insert_database(&provisioning).await.unwrap();
    let ready = database_in(&ann, ann.project.id, "held_b", &clock);
    ready_database(s.as_ref(), &ready, &clock).await;
    let deleting = database_in(&ann, ann.project.id, "held_c", &clock);
    ready_database(s.as_ref(), &deleting, &clock).await;
    assert!(s.mark_deleting(deleting.id, clock.now()).await.unwrap());
    for slug in ["held_a", "held_b", "held_c"] {
        let bobs = database_in(&bob, bob.project.id, slug, &clock);
        assert!(
            taken(&s.insert_database(&bobs).await),
            "{slug} is held for every account"
        );
        let anns = database_in(&ann, ann.project.id, slug, &clock);
        assert!(taken(&s.insert_database(&anns).await), "{slug}");
        assert_eq!(s.database(bobs.id).await.unwrap(), None);
    }
    assert_eq!(
        s.database_by_slug("held_a").await.unwrap(),
        Some(provisioning.clone())
    );
    // Gone, the record frees its slug at once.
    s.delete_database(deleting.id).await.unwrap();
    let again = database_in(&bob, bob.project.id, "held_c", &clock);
    s.insert_database(&again).await.unwrap();
    assert_eq!(s.database_by_slug("held_c").await.unwrap(), Some(again));

    // Racing creates of one slug make one record.
    for round in 0..3 {
        let slug = format!("race_{round}");
        let one = database_in(&ann, ann.project.id, &slug, &clock);
        let two = database_in(&bob, bob.project.id, &slug, &clock);
        let (a, b) = (s.clone(), s.clone());
        let (first, second) = (one.clone(), two.clone());
        let (r1, r2) = tokio::join!(async move { a.insert_database(&first).await }, async move {
            b.insert_database(&second).await
        },);
        let won = match (r1, r2) {
            (Ok(()), r) if taken(&r) => one,
            (r, Ok(())) if taken(&r) => two,
            (r1, r2) => panic!("one create wins a slug: {r1:?}, {r2:?}"),
        };
        assert_eq!(s.database_by_slug(&slug).await.unwrap(), Some(won));
    }
}

pub(super) async fn project_databases_are_the_ready_ones_newest_first<
    S: AccountStore + ProjectStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let other = project_of(&ann.account, "ann_other", &clock);
    s.insert_project(&other).await.unwrap();
    let p = ann.project.id;
    let mut listed = Vec::new();
    let tie = clock.now() + Duration::seconds(30) + Duration::microseconds(7);
    for n in 0..4 {
        let mut d = database_in(&ann, p, &format!("list_{n}"), &clock);
        if n >= 2 {
            d.created_at = tie;
            d.updated_at = tie;
        }
        listed.push(ready_database(s.as_ref(), &d, &clock).await);
    }
    let pending = database_in(&ann, p, "list_pending", &clock);
    s.insert_database(&pending).await.unwrap();
    let going = database_in(&ann, p, "list_going", &clock);
    ready_database(s.as_ref(), &going, &clock).await;
    assert!(s.mark_deleting(going.id, clock.now()).await.unwrap());
    let elsewhere = database_in(&ann, other.id, "list_else", &clock);
    let elsewhere = ready_database(s.as_ref(), &elsewhere, &clock).await;

    listed.sort_by_key(|d| std::cmp::Reverse((d.created_at, d.id.0)));
    assert_eq!(s.project_databases(p).await.unwrap(), listed);
    assert_eq!(
        s.project_databases(other.id).await.unwrap(),
        vec![elsewhere]
    );
    assert!(
        s.project_databases(ProjectId::new())
            .await
            .unwrap()
            .is_empty()
    );
}

pub(super) async fn janitor_finds_lapsed_creations_deletes_and_ends<
    S: AccountStore + DatabaseRecords + 'static,
>(
    s: Arc<S>,
) {
    let clock = Arc::new(FixedClock::new());
    let ann = seed(&s, &clock, "ann").await;
    let p = ann.project.id;
    let now = clock.now() + Duration::hours(1);
    let provisioning = |slug: &str, lease: OffsetDateTime, expires: Option<OffsetDateTime>| {
        let mut d = database_in(&ann, p, slug, &clock);
        d.lease_until = Some(lease);
        d.expires_at = expires;
        d
    };
    let lapsed = provisioning("lease_lapsed", now - Duration::microseconds(1), None);
    let at_lease = provisioning("lease_now", now, None);
    let leased = provisioning(
        "lease_live",
        now + Duration::minutes(1),
        Some(now - Duration::minutes(1)),
    );
    for d in [&lapsed, &at_lease, &leased] {
        s.insert_database(d).await.unwrap();
    }
    let going = database_in(&ann, p, "going", &clock);
    let mut going = ready_database(s.as_ref(), &going, &clock).await;
    assert!(s.mark_deleting(going.id, clock.now()).await.unwrap());
    going.status = DatabaseStatus::Deleting;
    let mut due = vec![lapsed, going];
    for (slug, expires, is_due) in [
        ("ended", Some(now - Duration::seconds(1)), true),
        ("ends_now", Some(now), true),
        ("ends_later", Some(now + Duration::microseconds(1)), false),
        ("forever", None, false),
    ] {
        let mut d = database_in(&ann, p, slug, &clock);
        d.expires_at = expires;
        let d = ready_database(s.as_ref(), &d, &clock).await;
        if is_due {
            due.push(d);
        }
    }

    let mut found = s.janitor_due(now).await.unwrap();
    found.sort_by_key(|d| d.id.0);
    due.sort_by_key(|d| d.id.0);
    assert_eq!(found, due);
    assert!(
        s.janitor_due(clock.now())
            .await
            .unwrap()
            .iter()
            .all(|d| d.status == DatabaseStatus::Deleting),
        "before any lease or end, only the unfinished delete is due"
    );
}
