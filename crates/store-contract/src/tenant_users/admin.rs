//! The users as the owner's key sees them (the admin API): listed a page at a time,
//! deleted with their sessions, inserted for any address no user has, and changed where a
//! user cannot change themselves (`app_metadata`, the confirmation).

use quire_databases::{NewEndUser, TenantUsers, UserChange, UserWriteError};
use serde_json::json;
use uuid::Uuid;

use super::{object, sign_up, t};

pub(super) async fn users_are_listed_newest_first_and_deleted_with_their_sessions(
    users: &dyn TenantUsers,
) {
    let mut made = Vec::new();
    for (i, email) in ["kim@example.com", "lea@example.com", "max@example.com"]
        .into_iter()
        .enumerate()
    {
        let at = i64::try_from(i).unwrap();
        made.push(
            users
                .sign_up_user(&sign_up(email, "hash", None, at))
                .await
                .unwrap(),
        );
    }
    let (two, total) = users.list_users(0, 2).await.unwrap();
    assert_eq!(total, 3);
    assert_eq!(two, [made[2].clone(), made[1].clone()]);
    let (rest, total) = users.list_users(2, 2).await.unwrap();
    assert_eq!((rest, total), (vec![made[0].clone()], 3));
    assert!(users.list_users(3, 2).await.unwrap().0.is_empty());
    let (all, _) = users.list_users(0, 10).await.unwrap();
    assert_eq!(all, [made[2].clone(), made[1].clone(), made[0].clone()]);

    let session = Uuid::new_v4();
    users
        .start_session(made[1].id, session, "rl", t(5))
        .await
        .unwrap();
    assert!(users.delete_user(made[1].id).await.unwrap());
    assert!(!users.delete_user(made[1].id).await.unwrap());
    assert!(!users.session_open(session).await.unwrap());
    assert_eq!(users.user(made[1].id).await.unwrap(), None);
    let (left, total) = users.list_users(0, 10).await.unwrap();
    assert_eq!((left, total), (vec![made[2].clone(), made[0].clone()], 2));
}

pub(super) async fn the_owners_key_inserts_users_and_changes_what_users_cannot(
    users: &dyn TenantUsers,
) {
    let pending = users
        .sign_up_user(&sign_up("nia@example.com", "hash-n", Some("link-n"), 0))
        .await
        .unwrap();
    let new = |email: &str, hash: &str| NewEndUser {
        id: Uuid::new_v4(),
        email: email.to_owned(),
        password_hash: hash.to_owned(),
        user_metadata: json!({"name": "Oz"}),
        email_confirmed_at: None,
        confirmation_hash: None,
        now: t(1),
    };
    let oz = new("oz@example.com", "");
    let made = users
        .insert_user(&oz, Some(&object(json!({"plan": "pro"}))))
        .await
        .unwrap();
    assert_eq!((made.id, made.email.as_str()), (oz.id, "oz@example.com"));
    assert_eq!(
        made.app_metadata,
        json!({"provider": "email", "providers": ["email"], "plan": "pro"})
    );
    assert_eq!(
        (
            made.user_metadata.clone(),
            made.email_confirmed_at,
            made.created_at
        ),
        (json!({"name": "Oz"}), None, t(1))
    );
    assert_eq!(
        users.user_by_email("oz@example.com").await.unwrap(),
        Some((made.clone(), String::new()))
    );
    // Any user of the address, an unconfirmed one too, keeps it from the owner's insert.
    for taken in ["OZ@example.com", "nia@example.com"] {
        let refused = users.insert_user(&new(taken, "h"), None).await;
        assert!(
            matches!(refused, Err(UserWriteError::EmailTaken)),
            "{taken}: {refused:?}"
        );
    }
    let mut same_id = new("pia@example.com", "h");
    same_id.id = oz.id;
    let refused = users.insert_user(&same_id, None).await;
    assert!(
        matches!(refused, Err(UserWriteError::Infra(_))),
        "{refused:?}"
    );
    assert_eq!(users.user(pending.id).await.unwrap(), Some(pending.clone()));

    let change = UserChange {
        app_metadata: Some(object(json!({"plan": "free", "seats": 2}))),
        confirmed_at: Some(t(5)),
        ..UserChange::default()
    };
    let changed = users
        .update_user(oz.id, &change, t(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        changed.app_metadata,
        json!({"provider": "email", "providers": ["email"], "plan": "free", "seats": 2})
    );
    assert_eq!(
        (changed.email_confirmed_at, changed.updated_at),
        (Some(t(5)), t(5))
    );
    let again = UserChange {
        confirmed_at: Some(t(9)),
        ..UserChange::default()
    };
    let kept = users
        .update_user(oz.id, &again, t(9))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        kept.email_confirmed_at,
        Some(t(5)),
        "confirmed once, when first"
    );
    // Confirmed by the owner, the sign-up's link is dead.
    users.update_user(pending.id, &again, t(9)).await.unwrap();
    let pending_link = users.confirmation_pending("link-n", t(10), super::HOUR, 5);
    assert!(!pending_link.await.unwrap());
}
