//! The pages origin's guarded pages over HTTP: the password form (and a new password revoking
//! the old), private and allow-list pages through the dashboard's sign-in hand-off, keys that
//! can read the project.

use serde_json::json;

use crate::dashboard::{Browser, PASSWORD};
use crate::harness::{Account, Backend, Server, TestDb, on_both_backends, setup};
use crate::serving::{
    PAGES, header, publish, reply, set_cookie, site, visit, visit_with, visitor, with,
};
use crate::serving_visitors::sign_in_link;

on_both_backends!(
    password_pages_take_the_password_and_a_new_one_revokes_it,
    private_and_allow_list_pages_go_through_the_dashboard,
    keys_that_can_read_the_project_are_let_in,
);

async fn password_pages_take_the_password_and_a_new_one_revokes_it(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    let page = publish(&srv, &ann.key, body).await;
    let r = visit(&srv, "/ann/secret/docs/").await;
    assert_eq!(r.status, 401);
    assert!(r.text.contains("action=\"/-/unlock\""), "{}", r.text);
    assert!(
        r.text.contains("value=\"docs/\""),
        "returns to the asked path"
    );
    assert!(
        !r.text.contains("id=\"docs\""),
        "no content before the password"
    );
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    assert_eq!(visit(&srv, "/ann/secret/style.css").await.status, 401);

    let post = |password: &str, origin: &str| {
        visitor()
            .post(format!("{}/-/unlock", srv.owner("ann")))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", origin)
            .body(
                serde_urlencoded::to_string([
                    ("handle", "ann"),
                    ("slug", "secret"),
                    ("next", "docs/"),
                    ("password", password),
                ])
                .unwrap(),
            )
            .send()
    };
    // A form posted from an owner's own origin to that origin.
    let post_on = |owner: &str, form: &'static str| {
        let origin = srv.owner(owner);
        visitor()
            .post(format!("{origin}/-/unlock"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("origin", origin)
            .body(form)
            .send()
    };
    // A form for a page that does not exist.
    let r = reply(
        post_on("ann", "handle=ann&slug=nothing&password=x&next=")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 404);
    // From another origin: refused, whatever the password.
    let r = reply(post("open sesame", "http://evil.test").await.unwrap()).await;
    assert_eq!(r.status, 403);
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());
    // Nor from another owner's pages, a sibling origin of the same domain.
    let r = reply(post("open sesame", &srv.owner("bob")).await.unwrap()).await;
    assert_eq!(r.status, 403);
    // A page's own origin cannot post guesses for another owner's page: the host names the
    // owner, never the form.
    let r = reply(
        post_on("bob", "handle=ann&slug=secret&password=open+sesame&next=")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 404, "bob has no page secret");

    let r = reply(post("wrong", &srv.owner("ann")).await.unwrap()).await;
    assert_eq!(r.status, 401);
    assert!(r.text.contains("not right"), "{}", r.text);
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());

    let r = reply(post("open sesame", &srv.owner("ann")).await.unwrap()).await;
    assert_eq!((r.status, header(&r, "location")), (303, "/secret/docs/"));
    let (cookie, attrs) = set_cookie(&r, "quire_unlock_secret").expect("unlock cookie");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/;", "Max-Age="] {
        assert!(attrs.contains(attr), "{attr} in {attrs}");
    }
    assert!(!attrs.contains("Secure"), "plain http here");
    let r = visit_with(&srv, "/ann/secret/docs/", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"docs\""));
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    // A guarded page may be framed and embedded by its own origin only.
    assert_eq!(
        header(&r, "content-security-policy"),
        "frame-ancestors 'self'"
    );
    assert_eq!(header(&r, "x-frame-options"), "SAMEORIGIN");
    assert_eq!(header(&r, "cross-origin-resource-policy"), "same-origin");
    assert_eq!(
        visit_with(&srv, "/ann/secret/style.css", &[("cookie", &cookie)])
            .await
            .status,
        200
    );
    // A forged cookie does nothing.
    let forged = format!("{}x", cookie);
    assert_eq!(
        visit_with(&srv, "/ann/secret/", &[("cookie", &forged)])
            .await
            .status,
        401
    );

    // A new password: the old cookie stops working at once on this replica.
    let id = page["id"].as_str().unwrap();
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"password": "new words"}),
    )
    .await
    .assert_status(200);
    assert_eq!(
        visit_with(&srv, "/ann/secret/", &[("cookie", &cookie)])
            .await
            .status,
        401
    );

    // Wrong passwords are throttled per page and client: five free (one was made above), then
    // waits from 1 s that double, so a refusal comes within the next five.
    let mut refused = None;
    for _ in 0..5 {
        let r = reply(post("guess", &srv.owner("ann")).await.unwrap()).await;
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.status, 401);
    }
    let r = refused.expect("throttled");
    let retry: u64 = header(&r, "retry-after").parse().unwrap();
    assert!((1..=900).contains(&retry), "{retry}");
    assert!(set_cookie(&r, "quire_unlock_secret").is_none());
}

/// Signs `login` in on the dashboard (no second factor), as a cookie-keeping client.
async fn signed_in<'a>(srv: &'a Server, login: &str) -> Browser<'a> {
    let mut browser = Browser::new(srv);
    let r = browser.sign_in(login).await;
    assert_eq!(r.status, 303, "{}", r.text);
    browser
}

async fn private_and_allow_list_pages_go_through_the_dashboard(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    let page = publish(
        &srv,
        &ann.key,
        with(site("mine"), "access", json!("private")),
    )
    .await;
    let code = page["public_id"].as_str().unwrap().to_owned();

    // Unsigned: a page that links to the dashboard, which sends to sign-in.
    let r = visit(&srv, "/ann/mine/docs/").await;
    let to_dashboard = sign_in_link(&r);
    assert_eq!(
        to_dashboard,
        format!("{}/visit?page={code}&next=docs%2F", srv.base)
    );
    assert_eq!(header(&r, "cache-control"), "private, no-store");
    let mut anon = Browser::new(&srv);
    let r = anon.get_url(&to_dashboard).await;
    assert_eq!(r.status, 303);
    assert!(
        header(&r, "location").starts_with("/login?next=%2Fvisit"),
        "{:?}",
        r.headers
    );

    // The owner comes back with a pass that becomes the page's cookie.
    let mut ann_browser = signed_in(&srv, "ann").await;
    let cookie = hand_off(&mut ann_browser, &to_dashboard, "/mine/docs/").await;
    let r = visit_with(&srv, "/ann/mine/docs/", &[("cookie", &cookie)]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"docs\""));
    assert_eq!(header(&r, "cache-control"), "private, no-store");

    // Bob is not the owner: a 403 page on the dashboard, no pass.
    let mut bob = signed_in(&srv, "bob").await;
    let r = bob.navigate(&to_dashboard).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("bob@example.com"), "{}", r.text);
    assert!(
        r.text.contains("id=\"denied-title\">Site mine<"),
        "the page named: {}",
        r.text
    );
    assert!(!r.text.contains("id=\"docs\""));

    // Shared with bob (by handle) and cat (by email): both get in, bob's cookie stops
    // working when he is taken off the list; a stale pass is refused.
    let id = page["id"].as_str().unwrap();
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"access": "allow_list", "allow": ["bob", "cat@example.com"]}),
    )
    .await
    .assert_status(200);
    let bob_cookie = hand_off(&mut bob, &to_dashboard, "/mine/docs/").await;
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &bob_cookie)])
            .await
            .status,
        200
    );
    let mut cat = signed_in(&srv, "cat").await;
    let cat_cookie = hand_off(&mut cat, &to_dashboard, "/mine/docs/").await;
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cat_cookie)])
            .await
            .status,
        200
    );
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)])
            .await
            .status,
        200,
        "the owner stays in"
    );
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"allow": ["cat@example.com"]}),
    )
    .await
    .assert_status(200);
    let r = visit_with(&srv, "/ann/mine/", &[("cookie", &bob_cookie)]).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("bob@example.com"), "{}", r.text);
    assert!(
        r.text.contains("id=\"gate-title\">Site mine<"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("id=\"home\""));

    // The button's post is the dashboard's own: from another site it is refused.
    let r = srv
        .http
        .post(format!("{}/visit", srv.base))
        .header("origin", srv.owner("eve"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("page={code}&next="))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(!r.text().await.unwrap().contains("/-/pass"));
    let r = bob
        .navigate(&format!("{}/visit?page=NoSuchCode&next=", srv.base))
        .await;
    assert_eq!(r.status, 404);
    assert!(r.text.contains("no page"), "{}", r.text);
    let r = reply(
        visitor()
            .get(format!(
                "{}/-/pass?token=forged.token&next=",
                srv.owner("ann")
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("expired"), "{}", r.text);
    // A cookie of one page opens no other page of the owner.
    let other = publish(
        &srv,
        &ann.key,
        with(site("other"), "access", json!("private")),
    )
    .await;
    assert!(other["id"].is_string());
    assert_eq!(
        visit_with(&srv, "/ann/other/", &[("cookie", &cookie)])
            .await
            .status,
        403
    );

    // Signing out on the dashboard closes the pages that session opened.
    assert_eq!(
        visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)])
            .await
            .status,
        200
    );
    let r = ann_browser.post("/logout", &[]).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let r = visit_with(&srv, "/ann/mine/", &[("cookie", &cookie)]).await;
    assert!(sign_in_link(&r).starts_with(&format!("{}/visit?page=", srv.base)));
}

/// Follows the dashboard's hand-off as a browser would; returns the page's access cookie.
/// A pass comes only to a top-level navigation: a frame, a fetch or a client that says
/// nothing gets the button instead, and the button's post hands over.
async fn hand_off(browser: &mut Browser<'_>, to_dashboard: &str, landing: &str) -> String {
    for headers in [
        &[][..],
        &[("sec-fetch-dest", "iframe"), ("sec-fetch-mode", "navigate")][..],
        &[("sec-fetch-dest", "empty"), ("sec-fetch-mode", "cors")][..],
    ] {
        let r = browser.get_url_with(to_dashboard, headers).await;
        assert_eq!(r.status, 200, "{headers:?}: {}", r.text);
        assert!(r.text.contains("id=\"open-page\""), "{}", r.text);
        assert!(!r.text.contains("/-/pass"), "no pass without a navigation");
    }
    let r = browser.navigate(to_dashboard).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let pass_url = header(&r, "location").to_owned();
    assert!(pass_url.contains("/-/pass?token="), "{pass_url}");
    assert!(
        pass_url.starts_with("http://ann.localhost:"),
        "the pass lands on the owner's origin: {pass_url}"
    );
    // The button: a same-origin post hands over too.
    let query = to_dashboard.split_once('?').unwrap().1;
    let fields: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap();
    let form: Vec<(&str, &str)> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let posted = browser.post("/visit", &form).await;
    assert_eq!(posted.status, 303, "{}", posted.text);
    assert!(header(&posted, "location").contains("/-/pass?token="));
    let r = browser.get_url(&pass_url).await;
    assert_eq!((r.status, header(&r, "location")), (303, landing));
    assert_eq!(header(&r, "referrer-policy"), "no-referrer");
    let replay = browser.get_url(&pass_url).await;
    assert_eq!(replay.status, 403, "a pass works once");
    let (cookie, attrs) = set_cookie(&r, "quire_access_mine").expect("access cookie");
    assert!(
        attrs.contains("HttpOnly") && attrs.contains("Path=/;"),
        "{attrs}"
    );
    cookie
}

async fn keys_that_can_read_the_project_are_let_in(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    let bob: Account = db.create_account("bob", &[]);
    publish(
        &srv,
        &ann.key,
        with(site("mine"), "access", json!("private")),
    )
    .await;
    let bearer = |key: &str| format!("Bearer {key}");
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", &bearer(&ann.key))]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("id=\"home\""));
    let (app_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let r = visit_with(
        &srv,
        "/ann/mine/docs/",
        &[("authorization", &bearer(&app_key))],
    )
    .await;
    assert_eq!(r.status, 200);
    // Another account's key reads nothing here; a bad key is refused outright.
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", &bearer(&bob.key))]).await;
    assert_eq!(r.status, 403);
    assert!(!r.text.contains("id=\"home\""));
    let r = visit_with(&srv, "/ann/mine/", &[("authorization", "Bearer qk_nope")]).await;
    r.assert_error(401, "invalid_api_key");
}
