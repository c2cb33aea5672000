//! The tests of an update: each field set and cleared, a password kept under `password`
//! access, nothing touched on a refusal, and the order of the checks.

use std::sync::atomic::{AtomicBool, Ordering};

use quire_kernel::{AccountId, Email, PageId, ProjectId};
use time::macros::datetime;

use super::*;
use crate::policy::{AllowEntry, Policy};
use crate::policy_input::tests::{
    BAD_ACCESS, BAD_ALIAS, Directory, NO_BOB, NOW, SHORT_PASSWORD, Site, refused,
};

fn link(access: Access, password_hash: Option<&str>) -> Link {
    Link {
        alias: Some("old-alias".into()),
        password_hash: password_hash.map(str::to_owned),
        ..Link::of_page(
            PageId::new(),
            AccountId::new(),
            ProjectId::new(),
            "abcdefghij".into(),
            Policy {
                access,
                expires_at: Some(datetime!(2030-06-01 00:00 UTC)),
                max_views: Some(10),
                allow: vec![AllowEntry::Email(Email::parse("x@y.example").unwrap())],
            },
            NOW,
        )
    }
}

#[tokio::test]
async fn an_empty_patch_changes_nothing() {
    let before = link(Access::Password, Some("$hash"));
    let mut after = before.clone();
    let password = PolicyPatch::default()
        .apply(&mut after, NOW, &Directory::up())
        .await
        .unwrap();
    assert_eq!((password, after), (None, before));
}

#[tokio::test]
async fn a_patch_sets_and_clears_each_field() {
    let directory = Directory::up();
    let mut l = link(Access::Public, Some("$hash"));
    let password = PolicyPatch {
        access: Some("allow_list".into()),
        expires_at: Some(Some("2031-01-01T00:00:00Z".into())),
        max_views: Some(Some(3)),
        alias: Some(Some("new-alias".into())),
        allow: Some(vec!["alice".into()]),
        password: Some(Some("correct horse".into())),
    }
    .apply(&mut l, NOW, &directory)
    .await
    .unwrap();
    assert_eq!(password.as_deref(), Some("correct horse"));
    assert_eq!(
        l.policy,
        Policy {
            access: Access::AllowList,
            expires_at: Some(datetime!(2031-01-01 00:00 UTC)),
            max_views: Some(3),
            allow: vec![AllowEntry::Account(directory.alice)],
        }
    );
    assert_eq!(l.alias.as_deref(), Some("new-alias"));
    // The new password is the caller's to hash: the old hash stays until then.
    assert_eq!(l.password_hash.as_deref(), Some("$hash"));

    let password = PolicyPatch {
        expires_at: Some(None),
        max_views: Some(None),
        alias: Some(None),
        allow: Some(vec![]),
        password: Some(None),
        ..PolicyPatch::default()
    }
    .apply(&mut l, NOW, &directory)
    .await
    .unwrap();
    assert_eq!(password, None);
    assert_eq!(
        (l.policy.expires_at, l.policy.max_views, &l.policy.allow),
        (None, None, &vec![])
    );
    assert_eq!((l.alias, l.password_hash), (None, None));
}

#[tokio::test]
async fn an_empty_password_clears_it() {
    let mut l = link(Access::Public, Some("$hash"));
    PolicyPatch {
        password: Some(Some(String::new())),
        ..PolicyPatch::default()
    }
    .apply(&mut l, NOW, &Directory::up())
    .await
    .unwrap();
    assert_eq!(l.password_hash, None);
}

#[tokio::test]
async fn password_access_keeps_a_password() {
    let directory = Directory::up();
    // Its stored password is kept.
    let mut l = link(Access::Public, Some("$hash"));
    let kept = PolicyPatch {
        access: Some("password".into()),
        ..PolicyPatch::default()
    }
    .apply(&mut l, NOW, &directory)
    .await;
    assert_eq!(kept, Ok(None));
    assert_eq!(l.policy.access, Access::Password);
    // None to keep, none sent; cleared while access stays password.
    for (access, hash, patch) in [
        (
            Access::Public,
            None,
            PolicyPatch {
                access: Some("password".into()),
                ..PolicyPatch::default()
            },
        ),
        (
            Access::Password,
            Some("$hash"),
            PolicyPatch {
                password: Some(None),
                ..PolicyPatch::default()
            },
        ),
    ] {
        let before = link(access, hash);
        let mut after = before.clone();
        let refused = patch.apply(&mut after, NOW, &directory).await;
        assert_eq!(refused, Err(PolicyError::PasswordRequired));
        assert_eq!(after, before);
    }
}

#[tokio::test]
async fn a_refused_patch_changes_nothing() {
    let good = PolicyPatch {
        access: Some("public".into()),
        expires_at: Some(None),
        max_views: Some(Some(99)),
        alias: Some(Some("new-alias".into())),
        allow: Some(vec!["alice".into()]),
        password: Some(None),
    };
    let cases = [
        (
            PolicyPatch {
                access: Some("friends".into()),
                ..good.clone()
            },
            refused(BAD_ACCESS),
        ),
        (
            PolicyPatch {
                expires_at: Some(Some("2020-01-01T00:00:00Z".into())),
                ..good.clone()
            },
            refused("expiresAt must be in the future"),
        ),
        (
            PolicyPatch {
                max_views: Some(Some(-1)),
                ..good.clone()
            },
            refused("maxViews must be a positive integer"),
        ),
        (
            PolicyPatch {
                alias: Some(Some("no spaces".into())),
                ..good.clone()
            },
            refused(BAD_ALIAS),
        ),
        (
            PolicyPatch {
                allow: Some(vec!["bob".into()]),
                ..good.clone()
            },
            refused(NO_BOB),
        ),
        (
            PolicyPatch {
                password: Some(Some("short".into())),
                ..good.clone()
            },
            refused(SHORT_PASSWORD),
        ),
    ];
    for (patch, expected) in cases {
        let before = link(Access::Password, Some("$hash"));
        let mut after = before.clone();
        let result = patch.clone().apply(&mut after, NOW, &Directory::up()).await;
        assert_eq!(result, Err(expected), "{patch:?}");
        assert_eq!(after, before, "{patch:?}");
    }
    let before = link(Access::Public, None);
    let mut after = before.clone();
    let down = good.apply(&mut after, NOW, &Directory::down()).await;
    assert!(matches!(down, Err(PolicyError::Infra(_))), "{down:?}");
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_patch_is_checked_in_field_order_with_the_own_checks_after_the_alias() {
    let directory = Directory::up();
    let before = link(Access::Public, None);
    let all_bad = PolicyPatch {
        alias: Some(Some("a".into())),
        allow: Some(vec!["bob".into()]),
        password: Some(Some("short".into())),
        ..PolicyPatch::default()
    };
    let mut after = before.clone();
    let polled = AtomicBool::new(false);
    let first = all_bad
        .clone()
        .apply_with(&mut after, NOW, &directory, async {
            polled.store(true, Ordering::SeqCst);
            Err::<(), Site>(Site::Own)
        })
        .await;
    assert_eq!(first, Err(Site::Policy(refused(BAD_ALIAS))));
    assert!(!polled.load(Ordering::SeqCst), "own ran after a refusal");

    let own_first = PolicyPatch {
        alias: None,
        ..all_bad.clone()
    }
    .apply_with(&mut after, NOW, &directory, async {
        Err::<(), Site>(Site::Own)
    })
    .await;
    assert_eq!(own_first, Err(Site::Own));

    let allow_next = PolicyPatch {
        alias: None,
        ..all_bad
    }
    .apply(&mut after, NOW, &directory)
    .await;
    assert_eq!(allow_next, Err(refused(NO_BOB)));
    assert_eq!(after, before);

    let (password, own) = PolicyPatch {
        alias: Some(Some("new-alias".into())),
        ..PolicyPatch::default()
    }
    .apply_with(&mut after, NOW, &directory, async { Ok::<_, Site>("own") })
    .await
    .unwrap();
    assert_eq!((password, own), (None, "own"));
    assert_eq!(after.alias.as_deref(), Some("new-alias"));
}
