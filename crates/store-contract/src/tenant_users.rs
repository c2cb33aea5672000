//! The `TenantUsers` port's contract, on the users a data API instance reaches (the
//! testkit's `MemoryRuntime` in this crate's tests, `quire-data-runtime`'s instances on a
//! tenant database in that crate's): the auth settings start open; a confirmed address
//! signs up once, found in any case; an unconfirmed sign-up is replaced in place by the
//! next one of its address, its sessions, its link and its mailed code gone; a
//! confirmation link counts its tries, lapses, and confirms only the password it was
//! checked against, once; refresh tokens rotate, a retry within the grace gets the same
//! successor, and a reuse ends the session; a user's change merges the metadata and keeps
//! an address one user's; sign-outs end the sessions of their scope. The one-time codes and
//! links of recovery and sign-in mails, and sign-up links sent again, in
//! `tenant_users/one_time.rs`; users listed newest first a page at a time, deleted with
//! their sessions, and the admin API's users in `tenant_users/admin.rs`.
//!
//! Listed once in `__tenant_users_list!`, as the store's checks are. Each check has a
//! database of its own.

use std::sync::Arc;
use std::time::Duration;

use quire_databases::{
    AuthSettings, DataApiInstance, NewEndUser, Rotation, SignOutScope, TenantUsers, UserChange,
    UserWriteError,
};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

mod admin;
mod one_time;

use admin::{
    the_owners_key_inserts_users_and_changes_what_users_cannot,
    users_are_listed_newest_first_and_deleted_with_their_sessions,
};
use one_time::{
    a_one_time_code_confirms_its_address_and_drops_a_pending_password,
    one_time_codes_are_counted_and_spent_with_their_link, sign_up_links_are_renewed,
};

/// Every check of the `TenantUsers` contract, once. `$then` is called with `$args` and
/// the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __tenant_users_list {
    ($then:ident $($args:tt)*) => {
        $crate::$then!($($args)* ;
            settings_start_open,
            a_confirmed_address_signs_up_once,
            an_unconfirmed_sign_up_is_replaced_in_place,
            confirmation_links_count_their_tries_and_confirm_their_password,
            refresh_tokens_rotate_with_a_grace_and_a_reuse_ends_the_session,
            users_change_and_an_address_stays_one_users,
            sign_outs_end_the_sessions_of_their_scope,
            users_are_listed_newest_first_and_deleted_with_their_sessions,
            one_time_codes_are_counted_and_spent_with_their_link,
            a_one_time_code_confirms_its_address_and_drops_a_pending_password,
            sign_up_links_are_renewed,
            the_owners_key_inserts_users_and_changes_what_users_cannot
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tenant_users_dispatch {
    (; $($check:ident),+ $(,)?) => {
        /// Runs the contract check `check` (a name from the list) on the users `instance`
        /// reaches.
        ///
        /// # Panics
        /// When the check fails, or no check has that name.
        pub async fn run(check: &str, instance: Arc<dyn DataApiInstance>) {
            let users = instance.users();
            match check {
                $(stringify!($check) => $check(users).await,)+
                other => panic!("no tenant users contract check named {other}"),
            }
        }
    };
}

__tenant_users_list!(__tenant_users_dispatch);

/// Expands one `#[tokio::test]` per check of the `TenantUsers` contract. `$make` is an
/// async fn returning `Option<(Arc<dyn DataApiInstance>, G)>`: the instance of a database
/// of the check's own, and what is kept alive while it runs.
#[macro_export]
macro_rules! tenant_users_contract {
    ($(#[$attr:meta])* $make:path) => {
        $crate::__tenant_users_list!(__tenant_users_tests [$(#[$attr])*] $make);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tenant_users_tests {
    ($attrs:tt $make:path ; $($check:ident),+ $(,)?) => {
        $($crate::__tenant_users_test!($attrs $make, $check);)+
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tenant_users_test {
    ([$(#[$attr:meta])*] $make:path, $check:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $check() {
            if let Some((instance, _guard)) = $make().await {
                $crate::tenant_users::run(stringify!($check), instance).await;
            }
        }
    };
}

/// 2026-01-01T00:00:00Z: the checks' times are this and whole seconds after it, which
/// PostgreSQL keeps exactly.
fn t(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_767_225_600 + seconds).unwrap()
}

const HOUR: Duration = Duration::from_secs(3600);
const GRACE: Duration = Duration::from_secs(10);

/// A sign-up of `email` at `t(at)` with `password_hash`: confirmed at once, or awaiting
/// the link whose token hashes to `link`.
fn sign_up(email: &str, password_hash: &str, link: Option<&str>, at: i64) -> NewEndUser {
    NewEndUser {
        id: Uuid::new_v4(),
        email: email.to_owned(),
        password_hash: password_hash.to_owned(),
        user_metadata: json!({}),
        email_confirmed_at: link.is_none().then(|| t(at)),
        confirmation_hash: link.map(str::to_owned),
        now: t(at),
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn session_of(rotation: &Rotation) -> Option<Uuid> {
    match rotation {
        Rotation::Rotated { session, .. } => Some(*session),
        _ => None,
    }
}

async fn settings_start_open(users: &dyn TenantUsers) {
    assert_eq!(users.settings().await.unwrap(), AuthSettings::default());
}

async fn a_confirmed_address_signs_up_once(users: &dyn TenantUsers) {
    let mut new = sign_up("ann@example.com", "hash-1", None, 0);
    new.user_metadata = json!({"plan": "free"});
    let ann = users.sign_up_user(&new).await.unwrap();
    assert_eq!(
        (ann.id, ann.email.as_str(), ann.email_confirmed_at),
        (new.id, "ann@example.com", Some(t(0)))
    );
    assert_eq!(ann.user_metadata, json!({"plan": "free"}));
    assert_eq!(ann.app_metadata["provider"], "email");
    assert_eq!((ann.created_at, ann.updated_at), (t(0), t(0)));
    assert_eq!(ann.last_sign_in_at, None);
    assert_eq!(users.user(ann.id).await.unwrap(), Some(ann.clone()));
    assert_eq!(
        users.user_by_email("ANN@example.com").await.unwrap(),
        Some((ann.clone(), "hash-1".to_owned()))
    );
    assert_eq!(users.user(Uuid::new_v4()).await.unwrap(), None);
    assert_eq!(users.user_by_email("bob@example.com").await.unwrap(), None);
    for again in [
        sign_up("ann@example.com", "hash-2", None, 1),
        sign_up("ann@example.com", "hash-2", Some("link-ann"), 1),
    ] {
        assert!(matches!(
            users.sign_up_user(&again).await,
            Err(UserWriteError::EmailTaken)
        ));
    }
    assert_eq!(users.user(ann.id).await.unwrap(), Some(ann));
    assert_eq!(users.list_users(0, 10).await.unwrap().1, 1);
}

async fn an_unconfirmed_sign_up_is_replaced_in_place(users: &dyn TenantUsers) {
    let first = users
        .sign_up_user(&sign_up("cy@example.com", "hash-1", Some("link-1"), 0))
        .await
        .unwrap();
    assert_eq!(first.email_confirmed_at, None);
    let session = Uuid::new_v4();
    users
        .start_session(first.id, session, "refresh-1", t(0))
        .await
        .unwrap();
    let code = quire_databases::OneTimeHashes {
        token_hash: "tok-cy".into(),
        code_hash: "code-cy".into(),
    };
    users.set_one_time(first.id, &code, t(1)).await.unwrap();
    let mut next = sign_up("cy@example.com", "hash-2", Some("link-2"), 5);
    next.user_metadata = json!({"v": 2});
    let second = users.sign_up_user(&next).await.unwrap();
    assert_eq!(second.id, first.id, "the id stays");
    assert_eq!(second.user_metadata, json!({"v": 2}));
    assert_eq!((second.created_at, second.last_sign_in_at), (t(5), None));
    assert!(!users.session_open(session).await.unwrap());
    assert!(
        !users
            .confirmation_pending("link-1", t(6), HOUR, 5)
            .await
            .unwrap(),
        "the first link is dead"
    );
    assert!(
        users
            .confirmation_pending("link-2", t(6), HOUR, 5)
            .await
            .unwrap()
    );
    let (_, hash) = users
        .user_by_email("cy@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hash, "hash-2");
    let mailed = users.spend_link("tok-cy", t(6), HOUR, 5).await.unwrap();
    assert_eq!(mailed, None, "the code mailed before is dead");
    assert_eq!(users.list_users(0, 10).await.unwrap().1, 1);
}

async fn confirmation_links_count_their_tries_and_confirm_their_password(users: &dyn TenantUsers) {
    users
        .sign_up_user(&sign_up("dee@example.com", "hash-d", Some("link-d"), 0))
        .await
        .unwrap();
    assert!(
        users
            .confirmation_pending("link-d", t(1), HOUR, 3)
            .await
            .unwrap()
    );
    assert!(
        !users
            .confirmation_pending("link-d", t(3601), HOUR, 3)
            .await
            .unwrap(),
        "lapsed"
    );
    let unknown = users.confirmation_pending("link-x", t(1), HOUR, 3);
    assert!(!unknown.await.unwrap());
    let mut left = Vec::new();
    for _ in 0..4 {
        let tried = users
            .try_confirmation("link-d", t(1), HOUR, 3)
            .await
            .unwrap();
        if let Some(tried) = &tried {
            assert_eq!(tried.password_hash, "hash-d");
        }
        left.push(tried.map(|t| t.tries_left));
    }
    assert_eq!(left, [Some(2), Some(1), Some(0), None]);
    assert!(
        !users
            .confirmation_pending("link-d", t(1), HOUR, 3)
            .await
            .unwrap()
    );

    let eve = users
        .sign_up_user(&sign_up("eve@example.com", "hash-e", Some("link-e"), 0))
        .await
        .unwrap();
    let confirm = |hash: &'static str, at: i64| users.confirm_email("link-e", hash, t(at), HOUR);
    assert_eq!(confirm("hash-other", 1).await.unwrap(), None);
    assert_eq!(confirm("hash-e", 3601).await.unwrap(), None, "lapsed");
    let confirmed = confirm("hash-e", 2).await.unwrap().unwrap();
    assert_eq!(confirmed.id, eve.id);
    assert_eq!(
        (confirmed.email_confirmed_at, confirmed.updated_at),
        (Some(t(2)), t(2))
    );
    assert_eq!(confirm("hash-e", 3).await.unwrap(), None, "spent");
    assert!(
        !users
            .confirmation_pending("link-e", t(3), HOUR, 3)
            .await
            .unwrap()
    );
    assert_eq!(users.user(eve.id).await.unwrap(), Some(confirmed));
}

async fn refresh_tokens_rotate_with_a_grace_and_a_reuse_ends_the_session(users: &dyn TenantUsers) {
    let fay = users
        .sign_up_user(&sign_up("fay@example.com", "hash-f", None, 0))
        .await
        .unwrap();
    let session = Uuid::new_v4();
    let signed_in = users
        .start_session(fay.id, session, "t1", t(1))
        .await
        .unwrap();
    assert_eq!(signed_in.last_sign_in_at, Some(t(1)));
    assert!(users.session_open(session).await.unwrap());

    let rotated = users.rotate("t1", "t2", t(2), GRACE).await.unwrap();
    assert_eq!(session_of(&rotated), Some(session));
    let Rotation::Rotated { user, .. } = rotated else {
        unreachable!()
    };
    assert_eq!(user.id, fay.id);
    // A retry within the grace, its successor unused: that successor, again.
    let again = users.rotate("t1", "t2", t(5), GRACE).await.unwrap();
    assert_eq!(session_of(&again), Some(session));
    // A retry naming another successor cannot be handed one.
    assert_eq!(
        users.rotate("t1", "t9", t(5), GRACE).await.unwrap(),
        Rotation::Unknown
    );
    assert!(users.session_open(session).await.unwrap());
    let next = users.rotate("t2", "t3", t(6), GRACE).await.unwrap();
    assert_eq!(session_of(&next), Some(session));
    // Its successor was used: the first token again is a reuse, and the session ends.
    assert_eq!(
        users.rotate("t1", "t2", t(7), GRACE).await.unwrap(),
        Rotation::Reused
    );
    assert!(!users.session_open(session).await.unwrap());
    assert_eq!(
        users.rotate("t3", "t4", t(8), GRACE).await.unwrap(),
        Rotation::Unknown
    );
    assert_eq!(
        users.rotate("never", "t5", t(8), GRACE).await.unwrap(),
        Rotation::Unknown
    );

    // Past the grace, a rotated token is a reuse though its successor is unused.
    let other = Uuid::new_v4();
    users
        .start_session(fay.id, other, "p1", t(10))
        .await
        .unwrap();
    users.rotate("p1", "p2", t(10), GRACE).await.unwrap();
    assert_eq!(
        users.rotate("p1", "p2", t(21), GRACE).await.unwrap(),
        Rotation::Reused
    );
    assert!(!users.session_open(other).await.unwrap());
}

async fn users_change_and_an_address_stays_one_users(users: &dyn TenantUsers) {
    let mut new = sign_up("gus@example.com", "hash-g", None, 0);
    new.user_metadata = json!({"a": 1, "b": 1});
    let gus = users.sign_up_user(&new).await.unwrap();
    users
        .sign_up_user(&sign_up("hal@example.com", "hash-h", None, 0))
        .await
        .unwrap();

    let merged = users
        .update_user(
            gus.id,
            &UserChange {
                user_metadata: Some(object(json!({"b": 2, "c": 3}))),
                ..UserChange::default()
            },
            t(1),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(merged.user_metadata, json!({"a": 1, "b": 2, "c": 3}));
    assert_eq!(
        (merged.updated_at, merged.email.as_str()),
        (t(1), "gus@example.com")
    );

    let moved = users
        .update_user(
            gus.id,
            &UserChange {
                email: Some("gus2@example.com".into()),
                password_hash: Some("hash-g2".into()),
                ..UserChange::default()
            },
            t(2),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(moved.email, "gus2@example.com");
    assert_eq!(moved.user_metadata, merged.user_metadata);
    assert_eq!(
        users.user_by_email("gus2@example.com").await.unwrap(),
        Some((moved.clone(), "hash-g2".to_owned()))
    );
    assert_eq!(users.user_by_email("gus@example.com").await.unwrap(), None);

    let taken = users
        .update_user(
            gus.id,
            &UserChange {
                email: Some("hal@example.com".into()),
                ..UserChange::default()
            },
            t(3),
        )
        .await;
    assert!(
        matches!(taken, Err(UserWriteError::EmailTaken)),
        "{taken:?}"
    );
    let own = users
        .update_user(
            gus.id,
            &UserChange {
                email: Some("gus2@example.com".into()),
                ..UserChange::default()
            },
            t(3),
        )
        .await
        .unwrap();
    assert!(own.is_some(), "its own address is no other user's");
    assert_eq!(
        users
            .update_user(Uuid::new_v4(), &UserChange::default(), t(3))
            .await
            .unwrap(),
        None
    );
}

async fn sign_outs_end_the_sessions_of_their_scope(users: &dyn TenantUsers) {
    let ida = users
        .sign_up_user(&sign_up("ida@example.com", "hash-i", None, 0))
        .await
        .unwrap();
    let jo = users
        .sign_up_user(&sign_up("jo@example.com", "hash-j", None, 0))
        .await
        .unwrap();
    let sessions: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
    for (i, session) in sessions.iter().take(3).enumerate() {
        users
            .start_session(ida.id, *session, &format!("r{i}"), t(1))
            .await
            .unwrap();
    }
    let jos = Uuid::new_v4();
    users.start_session(jo.id, jos, "rj", t(1)).await.unwrap();
    let open = async |ids: &[Uuid]| {
        let mut open = Vec::new();
        for id in ids {
            open.push(users.session_open(*id).await.unwrap());
        }
        open
    };

    users
        .end_sessions(ida.id, sessions[0], SignOutScope::Others)
        .await
        .unwrap();
    assert_eq!(open(&sessions[..3]).await, [true, false, false]);
    users
        .start_session(ida.id, sessions[3], "r3", t(2))
        .await
        .unwrap();
    users
        .end_sessions(ida.id, sessions[0], SignOutScope::Local)
        .await
        .unwrap();
    assert_eq!(open(&sessions).await, [false, false, false, true]);
    users
        .end_sessions(ida.id, sessions[3], SignOutScope::Global)
        .await
        .unwrap();
    assert_eq!(open(&sessions).await, [false; 4]);
    assert!(users.session_open(jos).await.unwrap(), "another user's");
    assert_eq!(
        users.rotate("r0", "r0b", t(3), GRACE).await.unwrap(),
        Rotation::Unknown
    );
}
