//! The dashboard's Files page over HTTP on both databases, as its upload script and its
//! forms speak to it: a file sent as the raw body of `PUT /account/files`, listed, its
//! detail (address, short link, type, size, SHA-256, the downloads chart), its settings
//! changed (title, file name, alias, access, password, allow list, budget), archived,
//! restored and deleted; and the refusals: a post or upload from another site, another
//! account's object, a signed-out upload, and files over the cap, which leave nothing stored.

use crate::dashboard::{Browser, PASSWORD, element, location};
use crate::harness::{Backend, EVENTUALLY_WITHIN, Reply, TestDb, on_both_backends, sha256sum};
use crate::objects::stored_files;

on_both_backends!(
    files_are_uploaded_listed_changed_and_deleted_in_the_dashboard,
    the_files_page_refuses_other_sites_other_accounts_and_files_over_the_cap,
);

/// The value of an attribute of the element with this id.
fn attribute(html: &str, id: &str, name: &str) -> Option<String> {
    let start = html.find(&format!("id=\"{id}\""))?;
    let tag_start = html[..start].rfind('<')?;
    let tag = &html[tag_start..tag_start + html[tag_start..].find('>')?];
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[at..at + tag[at..].find('"')?].to_owned())
}

async fn upload(browser: &mut Browser<'_>, query: &str, kind: &str, bytes: &[u8]) -> Reply {
    browser
        .put(
            &format!("/account/files?{query}"),
            Some(kind),
            reqwest::Body::from(bytes.to_vec()),
        )
        .await
}

async fn files_are_uploaded_listed_changed_and_deleted_in_the_dashboard(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    let srv = db.start();
    let mut browser = Browser::new(&srv);
    browser.sign_in("ann").await;

    let empty = browser.get("/account/files").await;
    assert_eq!(empty.status, 200, "{}", empty.text);
    assert!(element(&empty.text, "empty").is_some(), "{}", empty.text);
    assert!(
        empty
            .text
            .contains("<a href=\"/account/files\" aria-current=\"page\">Files</a>"),
        "the Files section is current in the navigation"
    );
    // The upload script sends the file to this origin, which the page's CSP allows; it is
    // served from this origin too.
    let csp = empty.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("connect-src 'self'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(
        empty
            .text
            .contains("<script src=\"/assets/files.js\" defer>")
    );
    let script = browser.get("/assets/files.js").await;
    assert_eq!(script.status, 200);
    assert!(script.text.contains("xhr.upload.onprogress"));

    let body = b"hello world, from the Files page";
    let made = upload(
        &mut browser,
        "filename=notes.txt&project=ann",
        "text/plain",
        body,
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text);
    let id = made.body["id"].as_str().unwrap().to_owned();
    let detail_path = format!("/account/files/{id}");
    assert_eq!(made.body["detail"], detail_path.as_str());
    assert_eq!(made.headers["location"], detail_path.as_str());
    assert_eq!(made.body["sizeBytes"], body.len());
    assert_eq!(
        made.body["list"],
        format!("/account/files?project=ann&uploaded={id}").as_str()
    );

    let list = browser.get(made.body["list"].as_str().unwrap()).await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert!(
        element(&list.text, "uploaded")
            .unwrap()
            .contains("Uploaded")
    );
    assert_eq!(
        element(&list.text, &format!("open-{id}")).unwrap(),
        "notes.txt"
    );
    assert_eq!(element(&list.text, &format!("size-{id}")).unwrap(), "32 B");
    assert_eq!(element(&list.text, &format!("views-{id}")).unwrap(), "0");
    assert!(
        list.text.contains("notes.txt · text/plain"),
        "{}",
        list.text
    );

    let detail = browser.get(&detail_path).await;
    assert_eq!(detail.status, 200, "{}", detail.text);
    let url = element(&detail.text, "file-url").unwrap();
    assert!(url.starts_with(&srv.owner("ann")), "{url}");
    assert!(
        element(&detail.text, "short-url")
            .unwrap()
            .starts_with(&format!("{}/s/", srv.pages))
    );
    assert_eq!(element(&detail.text, "file-type").unwrap(), "text/plain");
    assert_eq!(
        attribute(&detail.text, "file-size", "data-bytes").unwrap(),
        body.len().to_string()
    );
    assert_eq!(
        element(&detail.text, "file-sha256").unwrap(),
        sha256sum(body)
    );
    assert_eq!(
        attribute(&detail.text, "file-access", "data-access").as_deref(),
        Some("private")
    );
    assert!(detail.text.contains("<svg class=\"qr\""), "the QR code");
    assert!(detail.text.contains("id=\"views-chart\""), "the chart");
    assert!(element(&detail.text, "active-content").is_none());
    // Private: a visitor gets no bytes.
    let visitor = crate::harness::client().build().unwrap();
    let r = visitor.get(&url).send().await.unwrap();
    assert_ne!(r.status(), 200);
    assert!(!r.text().await.unwrap().contains("hello world"));

    // A password access without a password is refused, with the API's status.
    let refused = browser
        .post(
            &detail_path,
            &[("action", "settings"), ("access", "password")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(
        element(&refused.text, "error")
            .unwrap()
            .contains("password")
    );
    let unknown = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("access", "allow_list"),
                ("allow", "nobody-here"),
            ],
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.text);

    let changed = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("title", "Meeting notes"),
                ("filename", "notes-v2.txt"),
                ("alias", "ann-notes"),
                ("access", "public"),
                ("allow", ""),
                ("expires_at", ""),
                ("max_views", "2"),
            ],
        )
        .await;
    assert_eq!(location(&changed), detail_path);
    let detail = browser.get(&detail_path).await;
    assert_eq!(
        attribute(&detail.text, "file-access", "data-access").as_deref(),
        Some("public")
    );
    assert_eq!(
        element(&detail.text, "short-url").unwrap(),
        format!("{}/s/ann-notes", srv.pages)
    );
    assert_eq!(
        element(&detail.text, "file-filename").unwrap(),
        "notes-v2.txt"
    );
    assert_eq!(element(&detail.text, "file-views").unwrap(), "0 of 2");
    // Public now: the download is counted, saved under the new file name.
    let r = visitor.get(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let disposition = r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(disposition.contains("notes-v2.txt"), "{disposition}");
    assert_eq!(r.bytes().await.unwrap().as_ref(), body);
    // Views are flushed to the database every second.
    let deadline = std::time::Instant::now() + EVENTUALLY_WITHIN;
    loop {
        let d = browser.get(&detail_path).await;
        if element(&d.text, "file-views").as_deref() == Some("1 of 2")
            && attribute(&d.text, "views-chart", "data-total").as_deref() == Some("1")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the download is not counted on the detail and its chart: {}",
            d.text
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Shared with people by name: the list comes back as typed.
    let shared = browser
        .post(
            &detail_path,
            &[
                ("action", "settings"),
                ("access", "allow_list"),
                ("allow", "bob\r\ncat@example.com"),
                ("max_views", ""),
            ],
        )
        .await;
    assert_eq!(location(&shared), detail_path);
    let detail = browser.get(&detail_path).await;
    assert_eq!(
        element(&detail.text, "allow").unwrap(),
        "bob\ncat@example.com"
    );
    assert_eq!(element(&detail.text, "file-views").unwrap(), "1");

    browser.post(&detail_path, &[("action", "archive")]).await;
    let detail = browser.get(&detail_path).await;
    assert_eq!(element(&detail.text, "file-status").unwrap(), "archived");
    let shelf = browser.get("/account/files?status=archived").await;
    assert!(shelf.text.contains(&format!("file-{id}")), "{}", shelf.text);
    let active = browser.get("/account/files").await;
    assert!(!active.text.contains(&format!("file-{id}")));
    let restored = browser.post(&detail_path, &[("action", "restore")]).await;
    assert_eq!(location(&restored), detail_path);

    // Active content is said to be served as a sandboxed download.
    let page = upload(
        &mut browser,
        "filename=page.html",
        "text/html",
        b"<!doctype html><script>document.title='ran'</script>",
    )
    .await;
    assert_eq!(page.status, 201, "{}", page.text);
    let html_path = page.body["detail"].as_str().unwrap().to_owned();
    let detail = browser.get(&html_path).await;
    assert!(element(&detail.text, "active-content").is_some());
    assert_eq!(element(&detail.text, "file-type").unwrap(), "text/html");

    let unconfirmed = browser.post(&detail_path, &[("action", "delete")]).await;
    assert_eq!(unconfirmed.status, 400);
    assert!(
        element(&unconfirmed.text, "error")
            .unwrap()
            .contains("delete")
    );
    for path in [&detail_path, &html_path] {
        let gone = browser
            .post(path, &[("action", "delete"), ("confirm", "yes")])
            .await;
        assert_eq!(location(&gone), "/account/files?project=ann");
        assert_eq!(browser.get(path).await.status, 404);
    }
    assert!(stored_files(&db).is_empty(), "{:?}", stored_files(&db));
    let list = browser.get("/account/files").await;
    assert!(element(&list.text, "empty").is_some());
}

async fn the_files_page_refuses_other_sites_other_accounts_and_files_over_the_cap(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    let srv = db.start_with(&[("QUIRE_MAX_OBJECT_BYTES", "1000")]);
    let mut ann = Browser::new(&srv);
    ann.sign_in("ann").await;
    let made = upload(&mut ann, "filename=plans.txt", "text/plain", b"the plans").await;
    assert_eq!(made.status, 201, "{}", made.text);
    let detail_path = made.body["detail"].as_str().unwrap().to_owned();
    let stored = stored_files(&db);
    assert_eq!(stored.len(), 1, "{stored:?}");
    let listed = |html: &str| html.matches("<tr id=\"file-").count();

    // Another site: its script's upload and its form's post carry its own Origin. Both are
    // refused before anything is read or changed.
    ann.origin = Some("http://evil.example".into());
    let cross = upload(&mut ann, "filename=evil.txt", "text/plain", b"evil").await;
    cross.assert_error(403, "invalid origin");
    let cross = ann
        .post(&detail_path, &[("action", "delete"), ("confirm", "yes")])
        .await;
    cross.assert_error(403, "invalid origin");
    // No Origin and no Referer: a same-origin request is not shown, so it is refused too.
    ann.origin = None;
    upload(&mut ann, "filename=bare.txt", "text/plain", b"bare")
        .await
        .assert_error(403, "invalid origin");
    ann.origin = Some(srv.base.clone());
    assert_eq!(ann.get(&detail_path).await.status, 200);
    assert_eq!(listed(&ann.get("/account/files").await.text), 1);

    // Another account: ann's object does not exist for bob, to read or to change.
    let mut bob = Browser::new(&srv);
    bob.sign_in("bob").await;
    assert_eq!(bob.get(&detail_path).await.status, 404);
    for action in [
        &[("action", "delete"), ("confirm", "yes")][..],
        &[("action", "settings"), ("access", "public")][..],
    ] {
        bob.post(&detail_path, action)
            .await
            .assert_error(404, "not_found");
    }
    assert_eq!(listed(&bob.get("/account/files").await.text), 0);
    // Nor can bob upload into ann's project.
    let theirs = upload(&mut bob, "filename=x.txt&project=ann", "text/plain", b"x").await;
    assert_eq!(theirs.status, 403, "{}", theirs.text);
    assert_eq!(ann.get(&detail_path).await.status, 200);

    // Signed out: sent to sign in, nothing stored.
    let mut stranger = Browser::new(&srv);
    let out = upload(&mut stranger, "filename=anon.txt", "text/plain", b"anon").await;
    assert!(location(&out).starts_with("/login?next="), "{out:?}");

    // Over the cap: refused from the declared length, and as streamed bytes pass it.
    let big = vec![7u8; 1500];
    let declared = upload(
        &mut ann,
        "filename=big.bin",
        "application/octet-stream",
        &big,
    )
    .await;
    declared.assert_error(413, "payload_too_large");
    assert!(declared.body["message"].as_str().unwrap().contains("1000"));
    let streamed = ann
        .put(
            "/account/files?filename=big.bin",
            None,
            reqwest::Body::wrap_stream(futures_util::stream::iter(
                (0..3).map(|_| Ok::<_, std::io::Error>(vec![1u8; 600])),
            )),
        )
        .await;
    streamed.assert_error(413, "payload_too_large");
    // No file name: refused before anything is stored.
    upload(&mut ann, "project=ann", "text/plain", b"x")
        .await
        .assert_error(400, "invalid_request");
    assert_eq!(stored_files(&db), stored, "nothing refused left bytes");
    assert_eq!(listed(&ann.get("/account/files").await.text), 1);
    // The cap itself is allowed, and named on the page for the script.
    let exact = upload(
        &mut ann,
        "filename=exact.bin",
        "application/octet-stream",
        &[1u8; 1000],
    )
    .await;
    assert_eq!(exact.status, 201, "{}", exact.text);
    let page = ann.get("/account/files").await;
    assert_eq!(
        attribute(&page.text, "upload-form", "data-max-bytes").as_deref(),
        Some("1000")
    );
    assert_eq!(listed(&page.text), 2);
}
