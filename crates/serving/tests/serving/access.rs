//! Who may visit, against the in-memory fakes: private and allow-list pages through the
//! dashboard's pass, keys that can read the project, and pages moved between projects
//! (passwords are in `passwords.rs`, per-owner origins in `origins.rs`).

use crate::common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use quire_accounts::SessionStore;
use quire_kernel::{App, Apps, Email, KeyId, Principal, PrincipalKind};
use quire_pages::PatchRequest;
use quire_projects::ResourceType;
use quire_serving::{ACCESS_COOKIE, Answer, PassError, Visitor};
use quire_testkit::fixtures::app_key;

use common::{body, pass_token, world};

#[tokio::test]
async fn private_and_allow_list_pages_hand_visitors_to_the_dashboard_and_back() {
    let w = world().await;
    let page = w
        .publish("mine", |r| r.policy.access = Some("private".into()))
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
        .publish("gone", |r| r.policy.access = Some("private".into()))
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
            policy: quire_links::PolicyPatch {
                access: Some("allow_list".into()),
                allow: Some(vec![w.bob_email.as_str().to_owned()]),
                ..quire_links::PolicyPatch::default()
            },
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
            policy: quire_links::PolicyPatch {
                allow: Some(vec!["ann".into()]),
                ..quire_links::PolicyPatch::default()
            },
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
    w.publish("mine", |r| r.policy.access = Some("private".into()))
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
    w.publish("mine", |r| r.policy.access = Some("private".into()))
        .await;
    w.publish("secret", |r| {
        r.policy.access = Some("password".into());
        r.policy.password = Some("open sesame".into());
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
        .publish("mine", |r| r.policy.access = Some("private".into()))
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
        r.policy.access = Some("private".into());
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
