//! The owner's view of a database's end users, over a data API instance of memory: the
//! list with its count, newest first and cut at the limit; deleting one, and `NotFound` for
//! a user that is not there; nothing for another account; refused while the data API is
//! off or was never on; an instance that cannot start is the infrastructure's failure.
//! And a sign-up whose confirmation email cannot be made leaves no user behind and gives
//! its quota slot back; one of a registered address, while confirmations are on, is
//! answered with a stand-in, changes nothing and sends nothing, but holds a slot of the
//! quota as a new address's does, so a used-up quota refuses both alike.

use crate::support;

use std::sync::atomic::Ordering;

use quire_databases::{AuthError, AuthSettings, DatabaseError, InstanceError, SignedUp};
use serde_json::json;
use support::fixture;
use uuid::Uuid;

#[tokio::test]
async fn the_owner_lists_the_users_newest_first_with_their_count() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 3);

    let all = f.service.end_users(&f.ann(), id, 50).await.unwrap();
    assert_eq!(all.total, 3);
    let emails: Vec<_> = all.users.iter().map(|u| u.email.as_str()).collect();
    assert_eq!(
        emails,
        [
            "user-2@example.com",
            "user-1@example.com",
            "user-0@example.com"
        ]
    );
    assert_eq!(all.users[2], made[0]);

    let cut = f.service.end_users(&f.ann(), id, 1).await.unwrap();
    assert_eq!((cut.users.len(), cut.total), (1, 3));
    // The instance is the gateway's, started for the database as a request would start it.
    assert!(
        f.runtime
            .started
            .lock()
            .unwrap()
            .iter()
            .all(|s| s == "shop")
    );
}

#[tokio::test]
async fn the_owner_deletes_a_user_and_a_missing_one_is_not_found() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 2);

    f.service
        .delete_end_user(&f.ann(), id, made[0].id)
        .await
        .unwrap();
    let left = f.service.end_users(&f.ann(), id, 50).await.unwrap();
    assert_eq!(left.total, 1);
    assert_eq!(left.users, vec![made[1].clone()]);

    for missing in [made[0].id, Uuid::new_v4()] {
        assert_eq!(
            f.service.delete_end_user(&f.ann(), id, missing).await,
            Err(DatabaseError::NotFound)
        );
    }
}

#[tokio::test]
async fn another_account_neither_sees_nor_deletes_the_users() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 1);
    let bob = f.world.master("bob");

    assert_eq!(
        f.service.end_users(&bob, id, 50).await,
        Err(DatabaseError::NotFound)
    );
    assert_eq!(
        f.service.delete_end_user(&bob, id, made[0].id).await,
        Err(DatabaseError::NotFound)
    );
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await.unwrap().total,
        1
    );
    assert!(
        f.runtime.started.lock().unwrap().len() <= 1,
        "bob started nothing"
    );
}

#[tokio::test]
async fn the_users_need_the_data_api_on() {
    let f = fixture().await;
    let id = f.database("shop").await;
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await,
        Err(DatabaseError::DataApiNotEnabled)
    );
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    let made = f.users(id, 1);
    f.service.disable_data_api(&f.ann(), id).await.unwrap();
    assert_eq!(
        f.service.end_users(&f.ann(), id, 50).await,
        Err(DatabaseError::DataApiDisabled)
    );
    assert_eq!(
        f.service.delete_end_user(&f.ann(), id, made[0].id).await,
        Err(DatabaseError::DataApiDisabled)
    );
    assert!(f.runtime.started.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_instance_that_cannot_start_is_the_infrastructures_failure() {
    let f = fixture().await;
    let id = f.database("shop").await;
    f.service.enable_data_api(&f.ann(), id).await.unwrap();
    f.runtime.refuse(Some(InstanceError::Unavailable));
    let Err(DatabaseError::Infra(e)) = f.service.end_users(&f.ann(), id, 50).await else {
        panic!("an instance that does not start is Infra");
    };
    assert!(e.to_string().contains("upstream unavailable"), "{e}");
}

#[tokio::test]
async fn a_sign_up_whose_confirmation_cannot_be_made_leaves_no_user_and_no_slot() {
    let f = fixture().await;
    let (auth, users, made) = f.confirming("club").await;
    f.mail.unsendable.store(true, Ordering::SeqCst);

    let refused = auth
        .sign_up("192.0.2.1", "cy@example.com", "long enough".into(), None)
        .await
        .unwrap_err();
    assert!(matches!(refused, AuthError::EmailNotSent(_)), "{refused:?}");
    assert_eq!(
        (refused.status(), refused.error_code()),
        (500, "unexpected_failure")
    );
    assert_eq!(users.all(), made, "the user was undone");
    assert_eq!(
        *f.mail.released.lock().unwrap(),
        *f.mail.held.lock().unwrap(),
        "the slot is given back"
    );
}

#[tokio::test]
async fn a_new_address_signing_up_holds_a_slot_and_queues_its_link() {
    let f = fixture().await;
    let (auth, users, _) = f.confirming("club").await;

    let answer = auth
        .sign_up("192.0.2.1", "cy@example.com", "long enough".into(), None)
        .await
        .unwrap();
    assert!(matches!(answer, SignedUp::Unconfirmed(_)));
    assert_eq!(f.mail.held.lock().unwrap().len(), 1);
    assert!(f.mail.released.lock().unwrap().is_empty());
    assert_eq!(*f.mail.queued.lock().unwrap(), ["cy@example.com"]);
    assert_eq!(users.all().len(), 2);
}

#[tokio::test]
async fn a_registered_address_signing_up_gets_a_stand_in_and_changes_nothing() {
    let f = fixture().await;
    let (auth, users, made) = f.confirming("club").await;

    let answer = auth
        .sign_up(
            "192.0.2.1",
            "USER-0@example.com",
            "another password".into(),
            Some(json!({"plan": "free"})),
        )
        .await
        .unwrap();
    let SignedUp::Unconfirmed(stand_in) = answer else {
        panic!("no session for a registered address: {answer:?}");
    };
    assert_eq!(stand_in.email, "user-0@example.com");
    assert_ne!(stand_in.id, made[0].id);
    assert_eq!(stand_in.email_confirmed_at, None);
    assert_eq!(stand_in.user_metadata, json!({"plan": "free"}));
    assert_eq!(users.all(), made, "the user is as it was");
    // Nothing sent, but a slot spent, as a new address's message spends one.
    assert!(f.mail.queued.lock().unwrap().is_empty());
    assert_eq!(f.mail.held.lock().unwrap().len(), 1);
    assert!(f.mail.released.lock().unwrap().is_empty());
    // With confirmations off, it is GoTrue's refusal, and no mail is involved.
    users.set_settings(AuthSettings::default());
    let refused = auth
        .sign_up(
            "192.0.2.1",
            "user-0@example.com",
            "another password".into(),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(refused.error_code(), "user_already_exists");
    assert_eq!(f.mail.held.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_used_up_quota_refuses_a_registered_and_a_new_address_alike() {
    let f = fixture().await;
    let (auth, users, made) = f.confirming("club").await;
    f.mail.full.store(true, Ordering::SeqCst);

    let mut refusals = Vec::new();
    for email in ["user-0@example.com", "new@example.com"] {
        let refused = auth
            .sign_up("192.0.2.1", email, "long enough".into(), None)
            .await
            .unwrap_err();
        refusals.push((
            refused.status(),
            refused.error_code(),
            refused.public_message(),
        ));
    }
    assert_eq!(
        refusals[0],
        (
            429,
            "over_email_send_rate_limit",
            "Email rate limit exceeded".to_owned()
        )
    );
    assert_eq!(refusals[0], refusals[1]);
    assert_eq!(users.all(), made, "nothing stored");
    assert!(f.mail.queued.lock().unwrap().is_empty());
}
