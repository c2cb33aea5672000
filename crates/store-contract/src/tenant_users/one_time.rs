//! A user's one-time code and link (recovery and sign-in mails): given anew over the one
//! before, each try at the code counted (the code and its link dead once the tries are
//! used up), the right code or the link spending both, lapsing after their lifetime; a code
//! confirms its address, and a user it confirms keeps no password nor sign-up link; a new
//! password spends them. And a
//! pending sign-up's link given anew (`resend`), only for a user who chose a password.

use quire_databases::{CodeTry, OneTimeHashes, TenantUsers, UserChange};
use uuid::Uuid;

use super::{HOUR, sign_up, t};

fn hashes(token: &str, code: &str) -> OneTimeHashes {
    OneTimeHashes {
        token_hash: token.to_owned(),
        code_hash: code.to_owned(),
    }
}

fn verified(tried: CodeTry) -> quire_databases::EndUser {
    match tried {
        CodeTry::Verified(user) => user,
        other => panic!("not verified: {other:?}"),
    }
}

pub(super) async fn one_time_codes_are_counted_and_spent_with_their_link(users: &dyn TenantUsers) {
    let ann = users
        .sign_up_user(&sign_up("ann@example.com", "hash-a", None, 0))
        .await
        .unwrap();
    let set = async |token: &str, code: &str, at: i64| {
        users
            .set_one_time(ann.id, &hashes(token, code), t(at))
            .await
            .unwrap()
    };
    let code = async |code: &str, at: i64| {
        users
            .try_code("ANN@example.com", code, t(at), HOUR, 3)
            .await
            .unwrap()
    };
    let link = async |token: &str, at: i64| users.spend_link(token, t(at), HOUR, 3).await.unwrap();
    assert!(
        !users
            .set_one_time(Uuid::new_v4(), &hashes("x", "y"), t(0))
            .await
            .unwrap()
    );
    assert_eq!(code("code-1", 1).await, CodeTry::Unknown, "none sent yet");

    assert!(set("tok-1", "code-1", 1).await);
    assert_eq!(code("wrong", 2).await, CodeTry::Wrong { tries_left: 2 });
    assert_eq!(code("wrong", 2).await, CodeTry::Wrong { tries_left: 1 });
    let spent = verified(code("code-1", 3).await);
    assert_eq!(spent.id, ann.id);
    assert_eq!(
        (spent.email_confirmed_at, spent.updated_at),
        (Some(t(0)), t(3)),
        "confirmed before, and still since then"
    );
    assert_eq!(code("code-1", 4).await, CodeTry::Unknown, "spent");
    assert_eq!(link("tok-1", 4).await, None, "spent with its code");
    let (_, hash) = users
        .user_by_email("ann@example.com")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hash, "hash-a", "a confirmed user keeps their password");

    // The link spends the code too.
    set("tok-2", "code-2", 10).await;
    assert_eq!(link("tok-2", 11).await.map(|u| u.id), Some(ann.id));
    assert_eq!(code("code-2", 12).await, CodeTry::Unknown);
    assert_eq!(link("tok-2", 12).await, None);

    // Lapsed after their lifetime.
    set("tok-3", "code-3", 20).await;
    assert_eq!(code("code-3", 20 + 3600).await, CodeTry::Unknown);
    assert_eq!(link("tok-3", 20 + 3600).await, None);

    // Tries used up: the right code and the link no longer work either.
    set("tok-4", "code-4", 30).await;
    for left in [2, 1, 0] {
        assert_eq!(code("wrong", 31).await, CodeTry::Wrong { tries_left: left });
    }
    assert_eq!(code("code-4", 32).await, CodeTry::Unknown);
    assert_eq!(link("tok-4", 32).await, None);

    // A new one replaces the one before, its tries afresh.
    set("tok-5", "code-5", 40).await;
    code("wrong", 41).await;
    set("tok-6", "code-6", 42).await;
    assert_eq!(link("tok-5", 43).await, None);
    assert_eq!(code("code-5", 43).await, CodeTry::Wrong { tries_left: 2 });
    verified(code("code-6", 44).await);

    // A new password spends what was mailed before it.
    set("tok-7", "code-7", 50).await;
    let change = UserChange {
        password_hash: Some("hash-a2".into()),
        ..UserChange::default()
    };
    users.update_user(ann.id, &change, t(51)).await.unwrap();
    assert_eq!(code("code-7", 52).await, CodeTry::Unknown);
    assert_eq!(link("tok-7", 52).await, None);
}

pub(super) async fn a_one_time_code_confirms_its_address_and_drops_a_pending_password(
    users: &dyn TenantUsers,
) {
    for (email, by_link) in [("cy@example.com", false), ("dee@example.com", true)] {
        let pending = users
            .sign_up_user(&sign_up(email, "hash-squatter", Some(email), 0))
            .await
            .unwrap();
        users
            .set_one_time(pending.id, &hashes(&format!("tok-{email}"), "code"), t(1))
            .await
            .unwrap();
        let confirmed = if by_link {
            users
                .spend_link(&format!("tok-{email}"), t(2), HOUR, 5)
                .await
                .unwrap()
                .unwrap()
        } else {
            verified(users.try_code(email, "code", t(2), HOUR, 5).await.unwrap())
        };
        assert_eq!(confirmed.id, pending.id);
        assert_eq!(confirmed.email_confirmed_at, Some(t(2)), "{email}");
        let (_, hash) = users.user_by_email(email).await.unwrap().unwrap();
        assert_eq!(hash, "", "{email}: no password of whoever signed up");
        let link = users.confirmation_pending(email, t(3), HOUR, 5);
        assert!(!link.await.unwrap(), "{email}: the sign-up's link is dead");
    }
}

pub(super) async fn sign_up_links_are_renewed(users: &dyn TenantUsers) {
    let eve = users
        .sign_up_user(&sign_up("eve@example.com", "hash-e", Some("link-1"), 0))
        .await
        .unwrap();
    users
        .try_confirmation("link-1", t(1), HOUR, 5)
        .await
        .unwrap();
    let renewed = users
        .renew_confirmation("EVE@example.com", "link-2", t(100))
        .await
        .unwrap();
    assert_eq!(renewed.map(|u| u.id), Some(eve.id));
    let pending = |link: &'static str| users.confirmation_pending(link, t(101), HOUR, 5);
    assert!(!pending("link-1").await.unwrap(), "the link before is dead");
    assert!(pending("link-2").await.unwrap());
    let tried = users
        .try_confirmation("link-2", t(101), HOUR, 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tried.tries_left, 4, "its tries afresh");
    // 3600 s after the renewal, not after the sign-up.
    let late = users.confirmation_pending("link-2", t(100 + 3599), HOUR, 5);
    assert!(late.await.unwrap());

    // Nothing for a confirmed user, one with no password, or no user.
    users
        .sign_up_user(&sign_up("fay@example.com", "hash-f", None, 0))
        .await
        .unwrap();
    users
        .sign_up_user(&sign_up("gus@example.com", "", Some("link-g"), 0))
        .await
        .unwrap();
    for email in ["fay@example.com", "gus@example.com", "nobody@example.com"] {
        let renewed = users
            .renew_confirmation(email, "link-x", t(5))
            .await
            .unwrap();
        assert_eq!(renewed, None, "{email}");
    }
    assert!(
        !users
            .confirmation_pending("link-x", t(6), HOUR, 5)
            .await
            .unwrap()
    );
}
