//! Guessing passwords locks no one out: the dashboard's sign-in (its password and its
//! second-factor code) and a page's password count failures only, per account or page and
//! per client address, and refuse a spent budget only to the addresses that failed. Keys open guarded pages only with an app that serves them; a
//! sign-in pass shown to the wrong owner's host is not spent. Client addresses are loopback
//! addresses of their own (127.0.0.x).

use quire_accounts::TotpSecret;
use serde_json::json;
use time::OffsetDateTime;

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::harness::{Backend, Reply, Server, TestDb, on_both_backends, setup};
use crate::security::recovery_codes;
use crate::serving::{
    header, publish, publish_guarded_pair, reply, set_cookie, site, visit, visit_with, visitor,
    with,
};
use crate::serving_visitors::sign_in_link;

on_both_backends!(
    sign_in_guesses_lock_no_owner_out,
    second_factor_guesses_lock_no_owner_out,
    page_password_guesses_are_budgeted_per_page_across_addresses,
    link_only_keys_open_no_guarded_page,
    a_pass_shown_to_the_wrong_host_is_not_spent,
);

fn sign_in_form<'f>(login: &'f str, password: &'f str) -> [(&'f str, &'f str); 3] {
    [("login", login), ("password", password), ("next", "/")]
}

async fn sign_in_guesses_lock_no_owner_out(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    let mut guesser = Browser::from_address(&srv, "127.0.0.1");
    for _ in 0..10 {
        let r = guesser
            .post("/login", &sign_in_form("bob", "wrong password xx"))
            .await;
        assert_eq!(r.status, 401, "{}", r.text);
        assert!(
            r.text.contains("wrong email, handle or password"),
            "{}",
            r.text
        );
    }
    // Bob's budget is spent, by his handle and his email alike, for the address that failed.
    for login in ["bob", "bob@example.com"] {
        let r = guesser.post("/login", &sign_in_form(login, PASSWORD)).await;
        assert_eq!(r.status, 429, "{login}: {}", r.text);
        assert!(r.text.contains("too many sign-in attempts"), "{}", r.text);
        let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=900).contains(&retry), "{retry}");
    }
    // Bob, elsewhere, signs in.
    let mut bob = Browser::from_address(&srv, "127.0.0.2");
    location(&bob.post("/login", &sign_in_form("bob", PASSWORD)).await);
    // A browser holding bob's session gets past from the address that failed, too.
    let mut bob = bob.at_address("127.0.0.1");
    location(&bob.post("/login", &sign_in_form("bob", PASSWORD)).await);

    // Right passwords never count: more of them than the budget holds, from one address.
    for _ in 0..12 {
        let mut fresh = Browser::from_address(&srv, "127.0.0.3");
        location(&fresh.post("/login", &sign_in_form("cat", PASSWORD)).await);
    }
}

async fn second_factor_guesses_lock_no_owner_out(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("bob", &["--password", PASSWORD]);
    let srv = db.start();
    let mut bob = Browser::from_address(&srv, "127.0.0.2");
    location(&bob.post("/login", &sign_in_form("bob", PASSWORD)).await);
    let page = bob.get("/account/security").await;
    let secret = TotpSecret::parse(&element(&page.text, "totp-secret").unwrap()).unwrap();
    let done = bob
        .post(
            "/account/security",
            &[("code", &secret.code_at(OffsetDateTime::now_utc()))],
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.text);
    let codes = recovery_codes(&done.text);
    assert_eq!(codes.len(), 10, "{}", done.text);

    // Someone who knows the password spends bob's budget of codes from a sign-in of theirs.
    let mut guesser = Browser::from_address(&srv, "127.0.0.1");
    let r = guesser.post("/login", &sign_in_form("bob", PASSWORD)).await;
    assert!(location(&r).starts_with("/login/totp"));
    let totp_form = [("code", "999999"), ("next", "/")];
    for _ in 0..10 {
        let r = guesser.post("/login/totp", &totp_form).await;
        assert_eq!(r.status, 401, "{}", r.text);
    }
    let r = guesser.post("/login/totp", &totp_form).await;
    assert_eq!(r.status, 429, "{}", r.text);
    assert!(r.text.contains("too many codes tried"), "{}", r.text);

    // Bob, elsewhere, gets in with the right code, again and again: right codes never count.
    for code in &codes[..3] {
        let mut fresh = Browser::from_address(&srv, "127.0.0.2");
        let r = fresh.post("/login", &sign_in_form("bob", PASSWORD)).await;
        assert!(location(&r).starts_with("/login/totp"));
        let r = fresh
            .post("/login/totp", &[("code", code), ("next", "/account/keys")])
            .await;
        assert_eq!(location(&r), "/account/keys", "{}", r.text);
    }
    // The guesser is still refused.
    let r = guesser.post("/login/totp", &totp_form).await;
    assert_eq!(r.status, 429, "{}", r.text);
}

/// Posts the password form of ann's page `secret` from `address`.
async fn unlock(srv: &Server, address: &str, password: &str) -> Reply {
    let origin = srv.owner("ann");
    let client = crate::harness::client()
        .local_address(address.parse::<std::net::IpAddr>().ok())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let form =
        serde_urlencoded::to_string([("slug", "secret"), ("next", ""), ("password", password)])
            .unwrap();
    reply(
        client
            .post(format!("{origin}/-/unlock"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", &origin)
            .body(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn page_password_guesses_are_budgeted_per_page_across_addresses(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    publish(&srv, &ann.key, body).await;
    // Right passwords never count: more of them than an address's budget holds.
    for _ in 0..12 {
        let r = unlock(&srv, "127.0.0.3", "open sesame").await;
        assert_eq!((r.status, header(&r, "location")), (303, "/secret/"));
    }
    // Twenty addresses fail once each: the page's free failures.
    for i in 10..30 {
        let r = unlock(&srv, &format!("127.0.0.{i}"), "guess").await;
        assert_eq!(r.status, 401, "{}", r.text);
        assert!(r.text.contains("not right"), "{}", r.text);
    }
    // Then an address that failed is held back by the page's budget though its own has room
    // (five free failures): the page's waits double from 1 s with each failure, so a refusal
    // comes within three tries.
    let mut refused = None;
    for _ in 0..3 {
        let r = unlock(&srv, "127.0.0.10", "guess").await;
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.status, 401, "{}", r.text);
    }
    let r = refused.expect("the page's budget holds back an address that failed");
    let retry: u64 = header(&r, "retry-after").parse().unwrap();
    assert!((1..=900).contains(&retry), "{retry}");
    assert!(r.text.contains("Too many passwords"), "{}", r.text);
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());
    // An address that has not failed on the page opens it.
    let r = unlock(&srv, "127.0.0.40", "open sesame").await;
    assert_eq!(r.status, 303, "{}", r.text);
    assert!(set_cookie(&r, "quire_unlock_secret").is_some());
}

async fn link_only_keys_open_no_guarded_page(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    publish_guarded_pair(&srv, &ann.key).await;
    let get = |path: &'static str, key: String| {
        let srv = &srv;
        async move { visit_with(srv, path, &[("authorization", &format!("Bearer {key}"))]).await }
    };
    for apps in [&["link"][..], &["base", "link"][..]] {
        let (key, _) = srv.mint(&ann.key, apps, None).await;
        let r = get("/ann/mine/", key.clone()).await;
        assert_eq!(r.status, 403, "{apps:?}: {}", r.text);
        assert!(!r.text.contains("id=\"docs\""));
        let r = get("/ann/secret/", key).await;
        assert_eq!(r.status, 401, "{apps:?}");
        assert!(r.text.contains("action=\"/-/unlock\""), "{}", r.text);
    }
    for apps in [&["serve"][..], &["page"][..]] {
        let (key, _) = srv.mint(&ann.key, apps, None).await;
        for path in ["/ann/mine/", "/ann/secret/"] {
            let r = get(path, key.clone()).await;
            assert_eq!(r.status, 200, "{apps:?} {path}: {}", r.text);
            assert_eq!(header(&r, "cache-control"), "private, no-store");
        }
    }
}

async fn a_pass_shown_to_the_wrong_host_is_not_spent(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    let srv = db.start();
    publish(
        &srv,
        &ann.key,
        with(site("mine"), "access", json!("private")),
    )
    .await;
    let to_dashboard = sign_in_link(&visit(&srv, "/ann/mine/").await);
    let mut browser = Browser::new(&srv);
    location(&browser.sign_in("ann").await);
    let r = browser.navigate(&to_dashboard).await;
    let pass = location(&r).to_owned();
    assert!(pass.starts_with("http://ann.localhost:"), "{pass}");

    let get = |url: String| async move { reply(visitor().get(url).send().await.unwrap()).await };
    let r = get(pass.replacen("://ann.", "://bob.", 1)).await;
    assert_eq!(r.status, 404, "{}", r.text);
    assert!(set_cookie(&r, "quire_access_mine").is_none());
    // The pass still works on ann's origin, once.
    let r = get(pass.clone()).await;
    assert_eq!(
        (r.status, header(&r, "location")),
        (303, "/mine/"),
        "{}",
        r.text
    );
    let (cookie, _) = set_cookie(&r, "quire_access_mine").expect("access cookie");
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)])
            .await
            .status,
        200
    );
    let r = get(pass).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("expired"), "{}", r.text);
}
