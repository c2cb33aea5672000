//! Guarded objects to visitors, on both databases: the pages' password form and the
//! dashboard's sign-in pass let people in, each setting a cookie for that one object, and a
//! budgeted object's view cookie makes the later ranges of a counted download free, one
//! file length in all, while a range without it is a download of its own.

use crate::dashboard::{Browser, PASSWORD};
use crate::harness::{Backend, Server, TestDb, on_both_backends, setup};
use crate::objects::{Part, upload};
use crate::serving::{header, reply, set_cookie, visitor};
use crate::serving_visitors::sign_in_link;

on_both_backends!(
    a_password_object_takes_the_password_for_itself_alone,
    private_and_allow_list_objects_open_through_the_dashboard,
    a_view_cookie_frees_the_later_ranges_of_its_download_only,
    a_view_cookie_gives_one_file_length_in_all,
);

async fn made(srv: &Server, key: &str, parts: &[Part<'_>]) -> serde_json::Value {
    upload(srv, key, parts).await.assert_status(201).clone()
}

async fn fetch(url: &str, headers: &[(&str, &str)]) -> crate::harness::Reply {
    let mut req = visitor().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    reply(req.send().await.unwrap()).await
}

async fn unlock(srv: &Server, slug: &str, password: &str) -> crate::harness::Reply {
    let origin = srv.owner("ann");
    let form = serde_urlencoded::to_string([
        ("handle", "ann"),
        ("slug", slug),
        ("next", ""),
        ("password", password),
    ])
    .unwrap();
    let resp = visitor()
        .post(format!("{origin}/-/unlock"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", &origin)
        .body(form)
        .send()
        .await
        .unwrap();
    reply(resp).await
}

async fn a_password_object_takes_the_password_for_itself_alone(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "password"),
            Part::Field("password", "open sesame"),
            Part::Field("slug", "report"),
            Part::File(Some("report.pdf"), b"%PDF-1.7 the report"),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap();
    let r = fetch(url, &[]).await;
    assert_eq!(r.status, 401);
    assert!(r.text.contains("action=\"/-/unlock\""), "{}", r.text);
    assert!(r.text.contains("value=\"report\""), "{}", r.text);
    assert!(
        !r.text.contains("the report"),
        "no bytes before the password"
    );
    assert_eq!(header(&r, "cache-control"), "private, no-store");

    let wrong = unlock(&srv, "report", "not it").await;
    assert_eq!(wrong.status, 401);
    assert!(set_cookie(&wrong, "quire_unlock_report").is_none());
    let right = unlock(&srv, "report", "open sesame").await;
    assert_eq!((right.status, header(&right, "location")), (303, "/report"));
    let (cookie, attrs) = set_cookie(&right, "quire_unlock_report").expect("unlock cookie");
    assert!(
        attrs.contains("HttpOnly") && attrs.contains("Path=/;"),
        "{attrs}"
    );
    let r = fetch(url, &[("cookie", &cookie)]).await;
    assert_eq!((r.status, r.text.as_str()), (200, "%PDF-1.7 the report"));
    assert!(header(&r, "content-disposition").starts_with("attachment;"));

    // The cookie is the object's: another password object of the same owner stays shut.
    let other = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "password"),
            Part::Field("password", "open sesame"),
            Part::Field("slug", "other"),
            Part::File(Some("other.txt"), b"other"),
        ],
    )
    .await;
    let renamed = cookie.replacen("quire_unlock_report", "quire_unlock_other", 1);
    let r = fetch(other["url"].as_str().unwrap(), &[("cookie", &renamed)]).await;
    assert_eq!(r.status, 401);

    // A new password revokes the cookie.
    let id = object["id"].as_str().unwrap();
    srv.patch(
        &format!("/api/object/v1/objects/{id}"),
        &ann.key,
        serde_json::json!({"password": "a new secret"}),
    )
    .await
    .assert_status(200);
    assert_eq!(fetch(url, &[("cookie", &cookie)]).await.status, 401);
    // No object at the slug: the form's post is a 404.
    assert_eq!(unlock(&srv, "nothing", "x").await.status, 404);
}

/// Signs `login` in, follows the hand-off of `to_dashboard`, and returns the access cookie
/// the object's origin set.
async fn pass_cookie(srv: &Server, login: &str, to_dashboard: &str, slug: &str) -> String {
    let mut browser = Browser::new(srv);
    assert_eq!(browser.sign_in(login).await.status, 303);
    let r = browser.navigate(to_dashboard).await;
    assert_eq!(r.status, 303, "{}", r.text);
    let pass_url = header(&r, "location").to_owned();
    assert!(
        pass_url.starts_with("http://ann.localhost:") && pass_url.contains("/-/pass?token="),
        "the pass lands on the owner's origin: {pass_url}"
    );
    let r = browser.get_url(&pass_url).await;
    assert_eq!(
        (r.status, header(&r, "location")),
        (303, format!("/{slug}").as_str())
    );
    assert_eq!(
        browser.get_url(&pass_url).await.status,
        403,
        "a pass works once"
    );
    set_cookie(&r, &format!("quire_access_{slug}"))
        .expect("access cookie")
        .0
}

async fn private_and_allow_list_objects_open_through_the_dashboard(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("title", "The plans"),
            Part::Field("slug", "plans"),
            Part::File(Some("plans.txt"), b"the plans"),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap();
    let code = object["public_id"].as_str().unwrap();
    let r = fetch(url, &[]).await;
    let to_dashboard = sign_in_link(&r);
    assert_eq!(to_dashboard, format!("{}/visit?page={code}", srv.base));
    assert!(!r.text.contains("the plans"));

    let cookie = pass_cookie(&srv, "ann", &to_dashboard, "plans").await;
    let r = fetch(url, &[("cookie", &cookie)]).await;
    assert_eq!((r.status, r.text.as_str()), (200, "the plans"));

    // Bob is refused on the dashboard until the object is shared with him.
    let mut bob = Browser::new(&srv);
    assert_eq!(bob.sign_in("bob").await.status, 303);
    let r = bob.navigate(&to_dashboard).await;
    assert_eq!(r.status, 403);
    assert!(r.text.contains("The plans"), "the object named: {}", r.text);
    let id = object["id"].as_str().unwrap();
    srv.patch(
        &format!("/api/object/v1/objects/{id}"),
        &ann.key,
        serde_json::json!({"access": "allow_list", "allow": ["bob"]}),
    )
    .await
    .assert_status(200);
    let bob_cookie = pass_cookie(&srv, "bob", &to_dashboard, "plans").await;
    assert_eq!(fetch(url, &[("cookie", &bob_cookie)]).await.status, 200);
    // Cat signs in but is not on the list: told so, with no bytes.
    let mut cat = Browser::new(&srv);
    assert_eq!(cat.sign_in("cat").await.status, 303);
    assert_eq!(cat.navigate(&to_dashboard).await.status, 403);
    // Bob taken off the list: his cookie opens nothing.
    srv.patch(
        &format!("/api/object/v1/objects/{id}"),
        &ann.key,
        serde_json::json!({"allow": ["cat@example.com"]}),
    )
    .await
    .assert_status(200);
    let r = fetch(url, &[("cookie", &bob_cookie)]).await;
    assert_eq!(r.status, 403);
    assert!(!r.text.contains("the plans"));
}

async fn a_view_cookie_frees_the_later_ranges_of_its_download_only(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("maxViews", "2"),
            Part::Field("slug", "two"),
            Part::File(Some("two.bin"), &bytes),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap();
    let first = fetch(url, &[("range", "bytes=0-99")]).await;
    assert_eq!(first.status, 206);
    let (cookie, attrs) = set_cookie(&first, "quire_view_two").expect("view cookie");
    assert!(attrs.contains("HttpOnly"), "{attrs}");
    // More of that download, in as many requests as it takes, is free.
    for range in ["bytes=100-1099", "bytes=1100-2099"] {
        let r = fetch(url, &[("range", range), ("cookie", &cookie)]).await;
        assert_eq!(r.status, 206, "{range}");
        assert!(set_cookie(&r, "quire_view_two").is_none());
    }
    // A later range without the cookie is a second download: the last view.
    let second = fetch(url, &[("range", "bytes=2000-2099")]).await;
    assert_eq!(second.status, 206);
    assert_eq!(fetch(url, &[]).await.status, 410, "the budget is spent");
    assert_eq!(
        fetch(url, &[("range", "bytes=3000-")]).await.status,
        410,
        "no range of it without a counted download"
    );
    // The counted download may still finish: its cookie has the rest of one length.
    let r = fetch(url, &[("range", "bytes=2100-"), ("cookie", &cookie)]).await;
    assert_eq!(
        (r.status, header(&r, "content-range")),
        (206, "bytes 2100-4095/4096")
    );
    // Past one length it is a download of its own, and none is left.
    let r = fetch(url, &[("range", "bytes=4000-"), ("cookie", &cookie)]).await;
    assert_eq!(r.status, 410);
    assert!(r.text.contains("no longer available"), "{}", r.text);
    // Its cookie starts no new download.
    assert_eq!(fetch(url, &[("cookie", &cookie)]).await.status, 410);
}

/// Status, `Content-Range` and the bytes of a GET of `url` with a view cookie and a range;
/// a body cut short counts what arrived.
async fn ranged(url: &str, cookie: &str, range: &str) -> (u16, String, Vec<u8>) {
    let mut resp = visitor()
        .get(url)
        .header("cookie", cookie)
        .header("range", range)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let content_range = resp
        .headers()
        .get("content-range")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let mut body = Vec::new();
    while let Ok(Some(piece)) = resp.chunk().await {
        body.extend_from_slice(&piece);
    }
    (status, content_range, body)
}

/// One counted byte buys the rest of the file once, not ten minutes of downloads for
/// whoever the cookie is passed to; ranges sent at once share that one length.
async fn a_view_cookie_gives_one_file_length_in_all(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let bytes: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 253) as u8).collect();
    let length = bytes.len();
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("maxViews", "1"),
            Part::Field("slug", "once"),
            Part::File(Some("once.bin"), &bytes),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap();
    let first = fetch(url, &[("range", "bytes=0-0")]).await;
    assert_eq!(first.status, 206);
    let (cookie, _) = set_cookie(&first, "quire_view_once").expect("view cookie");
    assert_eq!(fetch(url, &[]).await.status, 410, "the budget is spent");

    let (status, content_range, body) = ranged(url, &cookie, "bytes=1-").await;
    assert_eq!(
        (status, content_range.as_str()),
        (206, format!("bytes 1-{}/{length}", length - 1).as_str())
    );
    assert!(body == bytes[1..], "the rest of the file, once");
    for range in ["bytes=1-", "bytes=1-1", "bytes=500000-"] {
        let r = fetch(url, &[("range", range), ("cookie", &cookie)]).await;
        assert_eq!(r.status, 410, "{range}");
        assert!(r.text.contains("no longer available"), "{}", r.text);
        assert!(set_cookie(&r, "quire_view_once").is_none());
    }

    // Another object, a cookie passed to four at once: one length between them.
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("maxViews", "1"),
            Part::Field("slug", "shared"),
            Part::File(Some("shared.bin"), &bytes),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap().to_owned();
    let first = fetch(&url, &[("range", "bytes=0-0")]).await;
    let (cookie, _) = set_cookie(&first, "quire_view_shared").expect("view cookie");
    let answers = futures_util::future::join_all((0..4).map(|_| {
        let (url, cookie) = (url.clone(), cookie.clone());
        tokio::spawn(async move { ranged(&url, &cookie, "bytes=1-").await })
    }))
    .await;
    let mut received = 0;
    for answer in answers {
        let (status, _, body) = answer.unwrap();
        assert!(status == 206 || status == 410, "{status}");
        if status == 206 {
            assert!(body == bytes[1..1 + body.len()], "a prefix of the rest");
            received += body.len();
        }
    }
    assert!(
        received > 0 && received < length,
        "{received} bytes for one length of {length}, the counted byte included"
    );
}
