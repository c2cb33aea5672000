//! The pages origin's HTTP semantics against the RFCs' answers: one `Host` (RFC 9112 §3.2),
//! 304s with the 200's validators (RFC 9110 §15.4.5), single byte ranges and `If-Range`
//! (§14), `If-Match`/`If-Unmodified-Since` (§13.1), the password form's challenge (§15.5.2),
//! and headers a browser may carry: 100 lines, 64 KiB, and other hosts' cookies.

use base64::Engine;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Backend, Server, on_both_backends, setup};
use crate::serving::{header, publish, site, visit_with, visitor, with};

on_both_backends!(
    a_request_names_one_host,
    not_modified_carries_what_the_200_would,
    byte_ranges_and_preconditions_of_a_page_file,
    the_password_form_challenges_and_hides_the_file,
    large_heads_and_other_hosts_cookies,
);

/// 3,000 bytes that do not compress (served as `application/octet-stream`, no gzip variant).
fn data() -> Vec<u8> {
    let mut x: u32 = 0x9E37_79B9;
    (0..3000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn site_with_data(slug: &str) -> Value {
    let mut body = site(slug);
    body["files"].as_array_mut().unwrap().push(json!({
        "path": "data.bin",
        "content": base64::engine::general_purpose::STANDARD.encode(data()),
        "encoding": "base64",
    }));
    body
}

/// Sends `request` as written and reads the whole answer (the server closes after it).
async fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
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

async fn bytes_of(
    srv: &Server,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = visitor().get(srv.page(path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.unwrap().to_vec())
}

fn get<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers.get(name).map_or("", |v| v.to_str().unwrap())
}

async fn a_request_names_one_host(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    db.create_account("bob", &[]);
    publish(&srv, &ann.key, site("site")).await;
    let port = srv.pages_addr.rsplit_once(':').unwrap().1;
    let (ann_host, bob_host) = (
        format!("ann.localhost:{port}"),
        format!("bob.localhost:{port}"),
    );
    let addr = &srv.pages_addr;
    let ok =
        format!("GET /site/style.css HTTP/1.1\r\nHost: {ann_host}\r\nConnection: close\r\n\r\n");
    assert_eq!(raw(addr, &ok).await.0, 200);
    for request in [
        "GET /site/style.css HTTP/1.1\r\nConnection: close\r\n\r\n".to_owned(),
        format!("GET /site/style.css HTTP/1.1\r\nHost: {ann_host}\r\nHost: {bob_host}\r\n\r\n"),
        format!("GET /site/style.css HTTP/1.1\r\nHost: {bob_host}\r\nHost: {ann_host}\r\n\r\n"),
        format!("GET /site/style.css HTTP/1.1\r\nHost: bob@{ann_host}\r\n\r\n"),
        format!("GET http://{bob_host}/site/style.css HTTP/1.1\r\nHost: {ann_host}\r\n\r\n"),
    ] {
        let (status, text) = raw(addr, &request).await;
        assert_eq!(status, 400, "{request}\n{text}");
        assert!(!text.contains("teal"), "{text}");
    }
    // An absolute-form target whose host is the Host's is served.
    let absolute = format!(
        "GET http://{ann_host}/site/style.css HTTP/1.1\r\nHost: {ann_host}\r\nConnection: close\r\n\r\n"
    );
    let (status, text) = raw(addr, &absolute).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("body { color: teal }"), "{text}");
}

async fn not_modified_carries_what_the_200_would(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    publish(&srv, &ann.key, site("site")).await;
    let gz = [("accept-encoding", "gzip")];
    let r = visit_with(&srv, "/ann/site/", &gz).await;
    assert_eq!(header(&r, "content-encoding"), "gzip");
    let (gz_tag, modified) = (
        header(&r, "etag").to_owned(),
        header(&r, "last-modified").to_owned(),
    );
    assert!(gz_tag.ends_with("-gz\""), "{gz_tag}");
    assert!(modified.ends_with(" GMT"), "{modified}");
    let identity_tag = format!("{}\"", gz_tag.trim_end_matches("-gz\""));
    for inm in [gz_tag.as_str(), identity_tag.as_str()] {
        let r = visit_with(
            &srv,
            "/ann/site/",
            &[("accept-encoding", "gzip"), ("if-none-match", inm)],
        )
        .await;
        assert_eq!((r.status, r.text.as_str()), (304, ""), "{inm}");
        assert_eq!(
            header(&r, "etag"),
            gz_tag,
            "the 200's tag, asked with {inm}"
        );
        assert_eq!(header(&r, "vary"), "Accept-Encoding");
        assert_eq!(header(&r, "cache-control"), "max-age=0, must-revalidate");
        assert_eq!(header(&r, "last-modified"), modified);
    }
    // Without gzip: the identity tag; still Vary, since the answer depends on it.
    let r = visit_with(&srv, "/ann/site/", &[("if-none-match", &gz_tag)]).await;
    assert_eq!(r.status, 304);
    assert_eq!(header(&r, "etag"), identity_tag);
    assert_eq!(header(&r, "vary"), "Accept-Encoding");
    // If-Modified-Since the Last-Modified: 304 too.
    let r = visit_with(&srv, "/ann/site/", &[("if-modified-since", &modified)]).await;
    assert_eq!(r.status, 304);
    // A file with no gzip variant: no Vary on its 304.
    let r = visit_with(&srv, "/ann/site/logo.png", &[]).await;
    let tag = header(&r, "etag").to_owned();
    let r = visit_with(&srv, "/ann/site/logo.png", &[("if-none-match", &tag)]).await;
    assert_eq!((r.status, header(&r, "vary")), (304, ""));
}

async fn byte_ranges_and_preconditions_of_a_page_file(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    publish(&srv, &ann.key, site_with_data("site")).await;
    let data = data();
    let path = "/ann/site/data.bin";
    let (status, headers, body) = bytes_of(&srv, path, &[]).await;
    assert_eq!((status, body.len()), (200, 3000));
    assert_eq!(get(&headers, "accept-ranges"), "bytes");
    let etag = get(&headers, "etag").to_owned();
    let modified = get(&headers, "last-modified").to_owned();

    for (range, start, end) in [
        ("bytes=0-99", 0, 99),
        ("bytes=2990-", 2990, 2999),
        ("bytes=-100", 2900, 2999),
        ("bytes=2000-9999", 2000, 2999),
    ] {
        let (status, headers, body) = bytes_of(&srv, path, &[("range", range)]).await;
        assert_eq!(status, 206, "{range}");
        assert_eq!(
            get(&headers, "content-range"),
            format!("bytes {start}-{end}/3000")
        );
        assert_eq!(
            get(&headers, "content-length"),
            (end - start + 1).to_string()
        );
        assert_eq!(get(&headers, "etag"), etag);
        assert_eq!(body, &data[start..=end], "{range}");
    }
    let (status, headers, _) = bytes_of(&srv, path, &[("range", "bytes=3000-")]).await;
    assert_eq!(
        (status, get(&headers, "content-range")),
        (416, "bytes */3000")
    );
    // Several ranges, or an If-Range that no longer holds: the whole file.
    for extra in [
        [("range", "bytes=0-9,20-29"), ("x-none", "")],
        [("range", "bytes=0-9"), ("if-range", "\"old\"")],
        [
            ("range", "bytes=0-9"),
            ("if-range", "Mon, 01 Jan 2001 00:00:00 GMT"),
        ],
    ] {
        let (status, headers, body) = bytes_of(&srv, path, &extra).await;
        assert_eq!((status, body.len()), (200, 3000), "{extra:?}");
        assert_eq!(get(&headers, "content-range"), "");
    }
    for if_range in [etag.as_str(), modified.as_str()] {
        let (status, _, body) = bytes_of(
            &srv,
            path,
            &[("range", "bytes=0-9"), ("if-range", if_range)],
        )
        .await;
        assert_eq!((status, body.as_slice()), (206, &data[..10]), "{if_range}");
    }
    // HEAD takes no range.
    let resp = visitor()
        .head(srv.page(path))
        .header("range", "bytes=0-9")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-length"], "3000");

    // A range of a file with a gzip variant is of its identity bytes, even if gzip is taken.
    let (_, _, whole) = bytes_of(&srv, "/ann/site/", &[]).await;
    let (status, headers, body) = bytes_of(
        &srv,
        "/ann/site/",
        &[("range", "bytes=10-19"), ("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(status, 206);
    assert_eq!(get(&headers, "content-encoding"), "");
    assert_eq!(get(&headers, "vary"), "Accept-Encoding");
    assert_eq!(body, &whole[10..20]);

    // Preconditions: 412 when false, the file when true.
    for (name, value, expected) in [
        ("if-match", "\"nope\"", 412),
        ("if-match", etag.as_str(), 200),
        ("if-match", "*", 200),
        ("if-unmodified-since", "Mon, 01 Jan 2001 00:00:00 GMT", 412),
        ("if-unmodified-since", modified.as_str(), 200),
    ] {
        let (status, _, _) = bytes_of(&srv, path, &[(name, value)]).await;
        assert_eq!(status, expected, "{name}: {value}");
    }
    let (status, _, _) = bytes_of(
        &srv,
        path,
        &[("if-match", "\"nope\""), ("range", "bytes=0-9")],
    )
    .await;
    assert_eq!(status, 412, "the precondition before the range");
}

async fn the_password_form_challenges_and_hides_the_file(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let body = with(
        with(site_with_data("secret"), "access", json!("password")),
        "password",
        json!("open sesame"),
    );
    publish(&srv, &ann.key, body).await;
    for headers in [
        &[][..],
        &[("range", "bytes=999999-")],
        &[("if-match", "\"nope\"")],
        &[("if-none-match", "*")],
    ] {
        let (status, h, body) = bytes_of(&srv, "/ann/secret/data.bin", headers).await;
        assert_eq!(status, 401, "{headers:?}");
        assert_eq!(
            get(&h, "www-authenticate"),
            "QuirePassword realm=\"ann/secret\""
        );
        assert_eq!(get(&h, "content-range"), "", "no size of the file");
        assert!(String::from_utf8_lossy(&body).contains("password"));
    }
}

async fn large_heads_and_other_hosts_cookies(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    publish(&srv, &ann.key, site("site")).await;
    let css = |r: &crate::harness::Reply| (r.status, r.text.clone());
    let teal = (200, "body { color: teal }".to_owned());

    // 100 header lines in all.
    let port = srv.pages_addr.rsplit_once(':').unwrap().1;
    let mut request = format!("GET /site/style.css HTTP/1.1\r\nHost: ann.localhost:{port}\r\n");
    for i in 0..98 {
        request.push_str(&format!("X-Extra-{i}: 1\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    let (status, text) = raw(&srv.pages_addr, &request).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("teal }"), "{text}");

    // 60 KiB of headers, and beside them 40 KiB of cookies a sibling host set on the domain.
    let pad = "p".repeat(60 * 1024);
    let bomb: Vec<String> = (0..10)
        .map(|i| format!("bomb{i}={}", "b".repeat(4000)))
        .collect();
    let cookies = bomb.join("; ");
    let r = visit_with(
        &srv,
        "/ann/site/style.css",
        &[("x-pad", &pad), ("cookie", &cookies)],
    )
    .await;
    assert_eq!(css(&r), teal);

    // The origin's own cookies count: 70 KiB of them is 431.
    let own = format!("quire_unlock_site={}", "o".repeat(70 * 1024));
    let r = visit_with(&srv, "/ann/site/style.css", &[("cookie", &own)]).await;
    assert_eq!(r.status, 431);
}
