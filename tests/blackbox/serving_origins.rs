//! What reaches the pages origin byte for byte: path traversal sent raw, never leaving the
//! page; and behind TLS, an HTTPS origin per owner with host-only cookies.

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Backend, TestDb, on_both_backends, setup};
use crate::serving::{publish, site, with};

on_both_backends!(
    path_traversal_never_leaves_the_page,
    behind_tls_each_owner_has_an_https_origin_and_host_cookies,
);

/// Sends one request line exactly as written (no client normalises it).
async fn raw_get(addr: &str, host: &str, target: &str) -> (u16, String) {
    raw(
        addr,
        &format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n"),
        "",
    )
    .await
}

/// Sends `head` (request line and headers, each ending in CRLF), then `body`; reads the
/// whole answer.
async fn raw(addr: &str, head: &str, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let length = if body.is_empty() {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    let request = format!("{head}{length}Connection: close\r\n\r\n{body}");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

async fn path_traversal_never_leaves_the_page(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    publish(&srv, &ann.key, site("site")).await;
    let other = json!({
        "title": "Other",
        "slug": "other",
        "access": "password",
        "password": "pw-other-9",
        "files": [{"path": "index.html", "content": "TOP-SECRET-PAGE"}],
    });
    publish(&srv, &ann.key, other).await;
    std::fs::write(db.dir.path().join("secret.txt"), "TOP-SECRET-FILE").unwrap();
    let targets = [
        "/ann/site/../other/index.html",
        "/ann/site/..%2fother%2findex.html",
        "/ann/site/%2e%2e/other/index.html",
        "/ann/site/%2E%2E/%2E%2E/secret.txt",
        "/ann/site/.%2e/other/",
        "/ann/site/%2e%2e%2fother%2f",
        "/ann/site/..\\other\\index.html",
        "/ann/site/..%5cother%5cindex.html",
        "/ann/site/%2fetc%2fpasswd",
        "/ann/site//etc/passwd",
        "/ann/site/../../../etc/passwd",
        "/ann/site/%00index.html",
        "/ann/site/index.html%00.png",
        "/ann/%2e%2e/ann/other/",
        "/ann/site/./../other/",
        "//etc/passwd",
        "/etc/passwd",
        "/../../secret.txt",
        "/ann/site/%252e%252e/other/",
        "http://evil.test/ann/other/",
    ];
    let port = srv.pages_addr.rsplit_once(':').unwrap().1;
    let (owner_host, bare_host) = (format!("ann.localhost:{port}"), format!("localhost:{port}"));
    for (host, target) in targets
        .iter()
        .map(|t| (owner_host.as_str(), t.strip_prefix("/ann").unwrap_or(t)))
        .chain(targets.iter().map(|t| (bare_host.as_str(), *t)))
    {
        let (status, text) = raw_get(&srv.pages_addr, host, target).await;
        assert!(
            !text.contains("TOP-SECRET") && !text.contains("root:"),
            "{target} leaked: {text}"
        );
        assert!(
            matches!(status, 400 | 404 | 401),
            "{target}: {status}\n{text}"
        );
    }
    // The path rules refuse before any lookup; a plain file of the page still opens.
    let (status, text) = raw_get(&srv.pages_addr, &owner_host, "/site/style.css").await;
    assert_eq!(status, 200);
    assert!(text.ends_with("body { color: teal }"));
}

/// The per-owner https layout (`https://{handle}.pages.test`, TLS ended by a proxy in front):
/// the listener routes by `Host`, the pass is a `__Host-` cookie named for the page (Secure,
/// no Domain, `Path=/`), a sibling owner's origin can neither post guesses nor reuse it, and
/// guarded answers refuse other origins' frames.
async fn behind_tls_each_owner_has_an_https_origin_and_host_cookies(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let bob = db.create_account("bob", &[]);
    let srv = db.start_with(&[
        ("QUIRE_PAGES_URL", "https://{handle}.pages.test"),
        ("QUIRE_BASE_URL", "https://quire.test"),
    ]);
    for (who, password) in [(&ann, "open sesame"), (&bob, "bobs secret")] {
        let body = with(
            with(site("secret"), "access", json!("password")),
            "password",
            json!(password),
        );
        let page = publish(&srv, &who.key, body).await;
        assert!(
            page["url"].as_str().unwrap().starts_with("https://"),
            "{page}"
        );
    }
    let addr = srv.pages_addr.clone();
    let get = |host: &'static str, cookie: String| {
        let addr = addr.clone();
        async move {
            let cookie = if cookie.is_empty() {
                cookie
            } else {
                format!("Cookie: {cookie}\r\n")
            };
            raw(
                &addr,
                &format!("GET /secret/ HTTP/1.1\r\nHost: {host}\r\n{cookie}"),
                "",
            )
            .await
        }
    };
    let unlock = |host: &'static str, origin: &'static str, form: &'static str| {
        let addr = addr.clone();
        async move {
            raw(
                &addr,
                &format!(
                    "POST /-/unlock HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\n\
                     Content-Type: application/x-www-form-urlencoded\r\n"
                ),
                form,
            )
            .await
        }
    };
    let (status, locked) = get("ann.pages.test", String::new()).await;
    assert_eq!(status, 401, "{locked}");
    let lower = locked.to_ascii_lowercase();
    assert!(lower.contains("frame-ancestors 'none'"), "{locked}");
    assert!(lower.contains("x-frame-options: deny"), "{locked}");

    // A guess posted from bob's origin to ann's: refused before the password is looked at.
    let (status, _) = unlock(
        "ann.pages.test",
        "https://bob.pages.test",
        "slug=secret&password=open+sesame&next=",
    )
    .await;
    assert_eq!(status, 403);

    let (status, answer) = unlock(
        "ann.pages.test",
        "https://ann.pages.test",
        "slug=secret&password=open+sesame&next=",
    )
    .await;
    assert_eq!(status, 303, "{answer}");
    let set_cookie = answer
        .lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie: __host-quire_unlock_secret=")
        })
        .unwrap_or_else(|| panic!("no __Host- pass cookie:\n{answer}"))
        .to_owned();
    let attrs = set_cookie.to_ascii_lowercase();
    assert!(
        attrs.contains("; secure") && attrs.contains("; path=/"),
        "{set_cookie}"
    );
    assert!(!attrs.contains("domain="), "host-only: {set_cookie}");
    let pass = set_cookie["set-cookie: ".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_owned();

    let (status, page) = get("ann.pages.test", pass.clone()).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("id=\"home\""), "{page}");
    let lower = page.to_ascii_lowercase();
    assert!(lower.contains("frame-ancestors 'self'"), "{page}");
    assert!(
        lower.contains("cross-origin-resource-policy: same-origin"),
        "{page}"
    );
    // The same cookie on bob's origin (were a browser to send it) opens nothing there.
    let (status, other) = get("bob.pages.test", pass).await;
    assert_eq!(status, 401, "{other}");
}
