//! Password pages against the in-memory fakes: unlocking, new passwords voiding old
//! cookies, and the wrong-password budgets per address and per page.
use crate::common;

use quire_kernel::Clock;
use quire_pages::PatchRequest;
use quire_serving::{Answer, UNLOCK_COOKIE, Unlock, UnlockError, Visitor};

use common::{body, world};

#[tokio::test]
async fn a_short_password_stored_before_the_minimum_still_unlocks() {
    let w = world().await;
    let page = w
        .publish("old", |r| {
            r.policy.access = Some("password".into());
            r.policy.password = Some("open sesame".into());
        })
        .await;
    // As stored before new passwords needed 8 characters: only its hash is kept.
    let mut link = page.link.unwrap();
    link.password_hash = Some(quire_kernel::password::hash_password_unchecked("pw").unwrap());
    quire_links::LinkStore::update_link(&*w.store, &link)
        .await
        .unwrap();
    w.serving.forget(page.page.id);
    let admitted = w
        .serving
        .unlock(Unlock {
            handle: "ann",
            slug: "old",
            password: "pw",
            next: "",
            client: "198.51.100.7",
        })
        .await
        .unwrap();
    assert_eq!(admitted.location, "/ann/old/");
}

#[tokio::test]
async fn a_password_page_takes_its_password_and_a_new_password_voids_old_cookies() {
    let w = world().await;
    let page = w
        .publish("secret", |r| {
            r.policy.access = Some("password".into());
            r.policy.password = Some("open sesame".into());
        })
        .await;
    let Answer::Password(prompt) = w.get("/ann/secret/docs/").await else {
        panic!("the form")
    };
    assert_eq!((prompt.next.as_str(), prompt.wrong), ("docs/", false));

    let attempt = |password: &'static str| Unlock {
        handle: "ann",
        slug: "secret",
        password,
        next: "docs/",
        client: "198.51.100.7",
    };
    assert!(matches!(
        w.serving.unlock(attempt("wrong")).await.unwrap_err(),
        UnlockError::Wrong(ref p) if p.wrong && p.next == "docs/"
    ));
    let admitted = w.serving.unlock(attempt("open sesame")).await.unwrap();
    assert_eq!(admitted.location, "/ann/secret/docs/");
    let unlock = admitted.cookie.unwrap();
    assert_eq!(
        (unlock.name.as_str(), unlock.path.as_str()),
        (UNLOCK_COOKIE, "/ann/secret/")
    );
    let visitor = Visitor {
        unlock: vec![unlock.value.as_str()],
        ..Visitor::default()
    };
    assert_eq!(
        body(&w.get_as("/ann/secret/docs/", visitor.clone()).await),
        "<p>docs</p>"
    );
    // A cookie of another page does nothing here.
    let other = w
        .publish("other", |r| {
            r.policy.access = Some("password".into());
            r.policy.password = Some("open sesame".into());
        })
        .await;
    assert!(matches!(
        w.get_as("/ann/other/", visitor.clone()).await,
        Answer::Password(_)
    ));

    w.patch(
        page.page.id,
        PatchRequest {
            policy: quire_links::PolicyPatch {
                password: Some(Some("new words".into())),
                ..quire_links::PolicyPatch::default()
            },
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(
        w.get_as("/ann/secret/", visitor).await,
        Answer::Password(_)
    ));
    assert!(other.link.is_some());
}

#[tokio::test]
async fn wrong_passwords_are_budgeted_per_address_with_growing_waits() {
    let w = world().await;
    w.publish("secret", |r| {
        r.policy.access = Some("password".into());
        r.policy.password = Some("open sesame".into());
    })
    .await;
    let attempt = |password: &'static str, client: &'static str| Unlock {
        handle: "ann",
        slug: "secret",
        password,
        next: "",
        client,
    };
    let retry = |r: Result<_, UnlockError>| match r {
        Err(UnlockError::Throttled { retry_after_secs }) => retry_after_secs,
        other => panic!("throttled: {other:?}"),
    };
    // Right passwords cost nothing, however many.
    for _ in 0..30 {
        assert!(
            w.serving
                .unlock(attempt("open sesame", "203.0.113.1"))
                .await
                .is_ok()
        );
    }
    for _ in 0..5 {
        assert!(matches!(
            w.serving.unlock(attempt("guess", "203.0.113.1")).await,
            Err(UnlockError::Wrong(_))
        ));
    }
    // Then 1, 2, 4, 8 and 16 s after each failure.
    for wait in [1, 2, 4, 8, 16] {
        assert_eq!(
            retry(
                w.serving
                    .unlock(attempt("open sesame", "203.0.113.1"))
                    .await
            ),
            wait
        );
        w.clock.advance(time::Duration::seconds(wait as i64));
        assert!(matches!(
            w.serving.unlock(attempt("guess", "203.0.113.1")).await,
            Err(UnlockError::Wrong(_))
        ));
    }
    // Ten failures: back when the first is 15 minutes old.
    assert_eq!(
        retry(
            w.serving
                .unlock(attempt("open sesame", "203.0.113.1"))
                .await
        ),
        900 - 31
    );
    // Another address is not held back.
    assert!(
        w.serving
            .unlock(attempt("open sesame", "203.0.113.2"))
            .await
            .is_ok()
    );
    w.clock.advance(time::Duration::seconds(900 - 31));
    assert!(
        w.serving
            .unlock(attempt("open sesame", "203.0.113.1"))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_pages_budget_holds_back_every_address_that_failed_but_none_that_did_not() {
    let w = world().await;
    w.publish("secret", |r| {
        r.policy.access = Some("password".into());
        r.policy.password = Some("open sesame".into());
    })
    .await;
    let w = &w;
    let attempt = |password: &'static str, client: String| async move {
        w.serving
            .unlock(Unlock {
                handle: "ann",
                slug: "secret",
                password,
                next: "",
                client: &client,
            })
            .await
    };
    for i in 1..=20 {
        assert!(matches!(
            attempt("guess", format!("198.51.100.{i}")).await,
            Err(UnlockError::Wrong(_))
        ));
    }
    // Twenty failures on the page: an address that failed waits, though its own budget
    // has room, and each failure doubles the wait.
    assert_eq!(
        attempt("guess", "198.51.100.1".into()).await.unwrap_err(),
        UnlockError::Throttled {
            retry_after_secs: 1
        }
    );
    w.clock.advance(time::Duration::seconds(1));
    assert!(matches!(
        attempt("guess", "198.51.100.1".into()).await,
        Err(UnlockError::Wrong(_))
    ));
    assert_eq!(
        attempt("open sesame", "198.51.100.2".into())
            .await
            .unwrap_err(),
        UnlockError::Throttled {
            retry_after_secs: 2
        }
    );
    // An address with no failure on the page is let try: the right password opens it, and
    // a wrong one spends its try.
    assert!(attempt("open sesame", "203.0.113.7".into()).await.is_ok());
    assert!(matches!(
        attempt("guess", "203.0.113.8".into()).await,
        Err(UnlockError::Wrong(_))
    ));
    assert!(matches!(
        attempt("open sesame", "203.0.113.8".into()).await,
        Err(UnlockError::Throttled { .. })
    ));
}

#[tokio::test]
async fn unlocking_an_expired_or_unknown_page_takes_no_password() {
    let w = world().await;
    // An expired page and an unknown one take no password.
    let soon = (w.clock.now() + time::Duration::seconds(60))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let brief = w
        .publish("brief", |r| {
            r.policy.access = Some("password".into());
            r.policy.password = Some("pw-brief-9".into());
            r.policy.expires_at = Some(soon);
        })
        .await;
    let unlock_brief = |client: &'static str| Unlock {
        handle: "ann",
        slug: "brief",
        password: "pw-brief-9",
        next: "",
        client,
    };
    assert!(w.serving.unlock(unlock_brief("203.0.113.3")).await.is_ok());
    w.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        w.serving
            .unlock(unlock_brief("203.0.113.3"))
            .await
            .unwrap_err(),
        UnlockError::Gone
    );
    assert!(brief.link.is_some());
    assert_eq!(
        w.serving
            .unlock(Unlock {
                slug: "nothing",
                ..unlock_brief("203.0.113.3")
            })
            .await
            .unwrap_err(),
        UnlockError::NotFound
    );
}
