//! Who may visit, against the in-memory fakes: passwords and their throttle, private and
//! allow-list pages through the dashboard's pass, keys that can read the project, and pages moved
//! between projects (per-owner origins are in `origins.rs`).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use quire_accounts::SessionStore;
use quire_kernel::{App, Apps, Clock, Email, KeyId, Principal, PrincipalKind};
use quire_pages::PatchRequest;
use quire_projects::ResourceType;
use quire_serving::{
    ACCESS_COOKIE, Answer, PassError, UNLOCK_COOKIE, Unlock, UnlockError, Visitor,
};
use quire_testkit::fixtures::app_key;

use common::{body, pass_token, world};

#[tokio::test]
async fn a_short_password_stored_before_the_minimum_still_unlocks() {
    let w = world().await;
    let page = w
        .publish("old", |r| {
            r.access = Some("password".into());
            r.password = Some("open sesame".into());
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
            r.access = Some("password".into());
            r.password = Some("open sesame".into());
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
            r.access = Some("password".into());
            r.password = Some("open sesame".into());
        })
        .await;
    assert!(matches!(
        w.get_as("/ann/other/", visitor.clone()).await,
        Answer::Password(_)
    ));

    w.patch(
        page.page.id,
        PatchRequest {
            password: Some(Some("new words".into())),
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
        r.access = Some("password".into());
        r.password = Some("open sesame".into());
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
        r.access = Some("password".into());
        r.password = Some("open sesame".into());
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
            r.access = Some("password".into());
            r.password = Some("pw-brief-9".into());
            r.expires_at = Some(soon);
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

#[tokio::test]
async fn private_and_allow_list_pages_hand_visitors_to_the_dashboard_and_back() {
    let w = world().await;
    let page = w
        .publish("mine", |r| r.access = Some("private".into()))
        .await;
    let Answer::SignIn(prompt) = w.get("/ann/mine/docs/").await else {
        panic!("sign in")
    };
    assert!(!prompt.shared, "a private page is not shared");
    let location = prompt.location;
    let code = page.link.as_ref().unwrap().public_id.clone();
    let ann_session = w.session(w.ann.account_id).await;
    let bob_session = w.session(w.bob.account_id).await;
    assert_eq!(
        location,
        format!("https://quire.test/visit?page={code}&next=docs%2F")
    );

    // The owner gets a pass; bob does not.
    let ann_email = Email::parse("ann@example.com").unwrap();
    let url = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &ann_session, "docs/")
        .await
        .unwrap();
    assert!(url.starts_with("https://pages.test/-/pass?token="), "{url}");
    assert_eq!(
        w.serving
            .issue_pass(&code, w.bob.account_id, &w.bob_email, &bob_session, "")
            .await
            .unwrap_err(),
        PassError::Forbidden
    );
    let token = pass_token(&url);
    let admitted = w.serving.accept_pass(None, token, "docs/").await.unwrap();
    assert_eq!(admitted.location, "/ann/mine/docs/");
    assert_eq!(
        w.serving
            .accept_pass(None, token, "docs/")
            .await
            .unwrap_err(),
        PassError::Forbidden,
        "a pass works once"
    );
    let access = admitted.cookie.unwrap();
    assert_eq!(
        (access.name.as_str(), access.path.as_str()),
        (ACCESS_COOKIE, "/ann/mine/")
    );
    let ann = Visitor {
        access: vec![access.value.as_str()],
        ..Visitor::default()
    };
    assert_eq!(body(&w.get_as("/ann/mine/docs/", ann).await), "<p>docs</p>");

    // A pass for a page deleted meanwhile leads nowhere.
    let gone = w
        .publish("gone", |r| r.access = Some("private".into()))
        .await;
    let gone_code = gone.link.as_ref().unwrap().public_id.clone();
    let url = w
        .serving
        .issue_pass(&gone_code, w.ann.account_id, &ann_email, &ann_session, "")
        .await
        .unwrap();
    w.pages.delete(&w.ann, gone.page.id).await.unwrap();
    let stale = pass_token(&url);
    assert_eq!(
        w.serving.accept_pass(None, stale, "").await.unwrap_err(),
        PassError::NotFound
    );
    assert_eq!(
        w.serving
            .issue_pass(&gone_code, w.ann.account_id, &ann_email, &ann_session, "")
            .await
            .unwrap_err(),
        PassError::NotFound
    );

    // A pass is short-lived and cannot be forged.
    assert_eq!(
        w.serving.accept_pass(None, "x.y", "").await.unwrap_err(),
        PassError::Forbidden
    );
    let unused = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &ann_session, "")
        .await
        .unwrap();
    let unused = pass_token(&unused);
    w.clock.advance(time::Duration::seconds(61));
    assert_eq!(
        w.serving.accept_pass(None, unused, "").await.unwrap_err(),
        PassError::Forbidden
    );

    // Allow list: bob by email; his access cookie stops working when he is taken off.
    w.patch(
        page.page.id,
        PatchRequest {
            access: Some("allow_list".into()),
            allow: Some(vec![w.bob_email.as_str().to_owned()]),
            ..PatchRequest::default()
        },
    )
    .await;
    let Answer::SignIn(prompt) = w.get("/ann/mine/").await else {
        panic!("sign in")
    };
    assert!(
        prompt.shared,
        "an allow-list page is shared with named people"
    );
    let card = w.serving.page_card(&code).await.unwrap().expect("the page");
    assert_eq!(card.title, prompt.title);
    assert!(card.url.ends_with("/mine/"), "{}", card.url);
    assert_eq!(w.serving.page_card("NoSuchCode").await.unwrap(), None);
    let url = w
        .serving
        .issue_pass(&code, w.bob.account_id, &w.bob_email, &bob_session, "")
        .await
        .unwrap();
    let token = pass_token(&url);
    let bob_cookie = w
        .serving
        .accept_pass(None, token, "")
        .await
        .unwrap()
        .cookie
        .unwrap();
    // Signed, not encrypted: neither the pass (in a URL) nor the cookie names the email,
    // only the account; the allow list's email is matched against the account's own.
    for signed in [token, bob_cookie.value.as_str()] {
        let payload = signed.split('.').next().unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert!(!claims.to_string().contains('@'), "{claims}");
        assert_eq!(claims["a"], w.bob.account_id.0.to_string());
    }
    let bob = Visitor {
        access: vec![bob_cookie.value.as_str()],
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", bob.clone()).await,
        Answer::File(_)
    ));
    w.patch(
        page.page.id,
        PatchRequest {
            allow: Some(vec!["ann".into()]),
            ..PatchRequest::default()
        },
    )
    .await;
    assert!(matches!(
        w.get_as("/ann/mine/", bob).await,
        Answer::Forbidden { email: Some(ref e), .. } if e == "bob@example.com"
    ));

    // Signing out of the dashboard ends the access that session gave.
    let ann_again = Visitor {
        access: vec![access.value.as_str()],
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", ann_again.clone()).await,
        Answer::File(_)
    ));
    w.store.delete_session(&ann_session).await.unwrap();
    w.serving.forget_session(&ann_session).await;
    assert!(matches!(
        w.get_as("/ann/mine/", ann_again).await,
        Answer::SignIn(_)
    ));
}

#[tokio::test]
async fn a_key_that_can_read_the_project_is_let_in_and_others_are_not() {
    let w = world().await;
    w.publish("mine", |r| r.access = Some("private".into()))
        .await;
    let ann = Visitor {
        principal: Some(&w.ann),
        ..Visitor::default()
    };
    assert!(matches!(w.get_as("/ann/mine/", ann).await, Answer::File(_)));
    let bob = Visitor {
        principal: Some(&w.bob),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", bob).await,
        Answer::SignIn(_)
    ));
}

#[tokio::test]
async fn only_keys_and_tokens_that_serve_or_publish_pages_open_guarded_pages() {
    let w = world().await;
    w.publish("mine", |r| r.access = Some("private".into()))
        .await;
    w.publish("secret", |r| {
        r.access = Some("password".into());
        r.password = Some("open sesame".into());
    })
    .await;
    let key = |apps: &[App]| app_key(w.ann.account_id, KeyId::new(), w.ann.home_project_id, apps);
    let bearer = |apps: &[App]| Principal {
        kind: PrincipalKind::OAuthClient {
            client_id: "client".into(),
            scopes: Apps::new(apps.iter().copied()).unwrap().into(),
        },
        ..w.ann.clone()
    };
    for (principal, opens) in [
        (key(&[App::Link]), false),
        (key(&[App::Base, App::Link]), false),
        (key(&[App::Serve]), true),
        (key(&[App::Page]), true),
        (bearer(&[App::Link]), false),
        (bearer(&[App::Serve]), true),
        (bearer(&[App::Page, App::Base]), true),
    ] {
        let visitor = || Visitor {
            principal: Some(&principal),
            ..Visitor::default()
        };
        let (private, password) = (
            w.get_as("/ann/mine/", visitor()).await,
            w.get_as("/ann/secret/", visitor()).await,
        );
        if opens {
            assert!(matches!(private, Answer::File(_)), "{principal:?}");
            assert!(matches!(password, Answer::File(_)), "{principal:?}");
        } else {
            assert!(matches!(private, Answer::SignIn(_)), "{principal:?}");
            assert!(matches!(password, Answer::Password(_)), "{principal:?}");
        }
    }
}

#[tokio::test]
async fn a_page_moved_to_another_project_is_refused_at_once_to_keys_of_the_old_one() {
    let w = world().await;
    let page = w
        .publish("mine", |r| r.access = Some("private".into()))
        .await;
    let other = w.project("other").await;
    let key = app_key(
        w.ann.account_id,
        KeyId::new(),
        w.ann.home_project_id,
        &[App::Page],
    );
    let visitor = || Visitor {
        principal: Some(&key),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::File(_)
    ));
    w.projects
        .assign(&w.ann, other.id, ResourceType::Page, page.page.id.0)
        .await
        .unwrap();
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::SignIn(_)
    ));
}

#[tokio::test]
async fn pages_moved_by_a_project_delete_are_let_in_at_once_for_keys_of_their_new_project() {
    let w = world().await;
    let old = w.project("old").await;
    w.publish("mine", |r| {
        r.access = Some("private".into());
        r.project = Some("old".into());
    })
    .await;
    let key = app_key(
        w.ann.account_id,
        KeyId::new(),
        w.ann.home_project_id,
        &[App::Page],
    );
    let visitor = || Visitor {
        principal: Some(&key),
        ..Visitor::default()
    };
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::SignIn(_)
    ));
    let default = w.projects.get(&w.ann, w.ann.home_project_id).await.unwrap();
    w.projects
        .delete(
            &w.ann,
            old.id,
            &old.id.to_string(),
            Some(default.slug.as_str()),
        )
        .await
        .unwrap();
    assert!(matches!(
        w.get_as("/ann/mine/", visitor()).await,
        Answer::File(_)
    ));
}
