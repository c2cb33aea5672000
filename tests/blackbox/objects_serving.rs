//! Objects served to visitors at `/{slug}` of their owner's origin, on both databases: the
//! bytes whole and in ranges against RFC 9110's answers, conditional requests, every type
//! not known to be inert sent as a sandboxed attachment, and exact download budgets that
//! ranged follow-ups, browsers' first requests and previews never spend.

use futures_util::future::join_all;

use crate::harness::{Backend, Server, on_both_backends, setup};
use crate::links::no_redirects;
use crate::objects::{Part, upload};

on_both_backends!(
    objects_are_served_whole_in_ranges_and_conditionally,
    active_content_is_a_sandboxed_attachment_and_guarded_objects_open_to_keys,
    a_download_budget_is_exact_under_concurrency_and_ranges_are_free,
);

async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    get_as("GET", url, headers).await
}

async fn get_as(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req =
        no_redirects().request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.unwrap().to_vec())
}

fn text(h: &reqwest::header::HeaderMap, name: &str) -> String {
    h.get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

async fn made(srv: &Server, key: &str, parts: &[Part<'_>]) -> serde_json::Value {
    upload(srv, key, parts).await.assert_status(201).clone()
}

async fn objects_are_served_whole_in_ranges_and_conditionally(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 256) as u8).collect();
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("slug", "data"),
            Part::File(Some("data.bin"), &bytes),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap().to_owned();
    assert_eq!(url, format!("{}/data", srv.owner("ann")));
    let etag = format!("\"{}\"", object["sha256"].as_str().unwrap());

    let (status, h, body) = get(&url, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes);
    assert_eq!(text(&h, "content-length"), "10000");
    assert_eq!(text(&h, "etag"), etag);
    assert_eq!(text(&h, "accept-ranges"), "bytes");
    assert_eq!(text(&h, "x-content-type-options"), "nosniff");
    assert_eq!(text(&h, "content-type"), "application/octet-stream");
    // Not a type known to be inert: a download, whatever a browser would make of it.
    assert!(text(&h, "content-disposition").starts_with("attachment; filename=\"data.bin\""));

    let (status, h, body) = get_as("HEAD", &url, &[]).await;
    assert_eq!((status, body.len()), (200, 0));
    assert_eq!(text(&h, "content-length"), "10000");

    // The range matrix (RFC 9110 §14).
    for (range, start, end) in [
        ("bytes=0-", 0, 9_999),
        ("bytes=0-0", 0, 0),
        ("bytes=-500", 9_500, 9_999),
        ("bytes=9990-20000", 9_990, 9_999),
        ("bytes=100-199", 100, 199),
    ] {
        let (status, h, body) = get(&url, &[("range", range)]).await;
        assert_eq!(status, 206, "{range}");
        assert_eq!(
            text(&h, "content-range"),
            format!("bytes {start}-{end}/10000"),
            "{range}"
        );
        assert_eq!(body, bytes[start..=end], "{range}");
    }
    let (status, h, _) = get(&url, &[("range", "bytes=10000-")]).await;
    assert_eq!(status, 416);
    assert_eq!(text(&h, "content-range"), "bytes */10000");
    // Several ranges (overlapping or not) are answered whole: RFC 9110 allows it.
    for many in ["bytes=0-1,5-6", "bytes=0-100,50-150"] {
        let (status, _, body) = get(&url, &[("range", many)]).await;
        assert_eq!((status, body.len()), (200, 10_000), "{many}");
    }
    // If-Range: a stale validator gets the whole; the current one the part.
    let (status, _, body) = get(&url, &[("range", "bytes=0-9"), ("if-range", "\"stale\"")]).await;
    assert_eq!((status, body.len()), (200, 10_000));
    let (status, _, body) = get(&url, &[("range", "bytes=0-9"), ("if-range", &etag)]).await;
    assert_eq!((status, body.len()), (206, 10));
    let (status, h, body) = get(&url, &[("if-none-match", &etag)]).await;
    assert_eq!((status, body.len()), (304, 0));
    assert_eq!(text(&h, "etag"), etag);

    // Its short link leads to its address, where its policy applies.
    let code = object["public_id"].as_str().unwrap();
    let (status, h, _) = get(&format!("{}/s/{code}", srv.pages), &[]).await;
    assert_eq!((status, text(&h, "location")), (302, url.clone()));
    // Nothing below the object's path; pages keep their own paths.
    assert_eq!(get(&format!("{url}/"), &[]).await.0, 404);
    assert_eq!(get(&format!("{url}/x"), &[]).await.0, 404);
    // Archived: gone from its address.
    let id = object["id"].as_str().unwrap();
    srv.patch(
        &format!("{}/{id}", crate::objects::OBJECTS),
        &ann.key,
        serde_json::json!({"status": "archived"}),
    )
    .await
    .assert_status(200);
    assert_eq!(get(&url, &[]).await.0, 404);
}

async fn active_content_is_a_sandboxed_attachment_and_guarded_objects_open_to_keys(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let page = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("slug", "page-html"),
            Part::File(Some("x.html"), b"<script>document.cookie</script>"),
        ],
    )
    .await;
    let (status, h, _) = get(page["url"].as_str().unwrap(), &[]).await;
    assert_eq!(status, 200);
    assert!(
        text(&h, "content-disposition").starts_with("attachment;"),
        "{h:?}"
    );
    assert!(
        text(&h, "content-security-policy").starts_with("sandbox"),
        "{h:?}"
    );
    let svg = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("contentType", "image/svg+xml"),
            Part::File(Some("logo.svg"), b"<svg onload=\"alert(1)\"/>"),
        ],
    )
    .await;
    let (_, h, _) = get(svg["url"].as_str().unwrap(), &[]).await;
    assert!(text(&h, "content-disposition").starts_with("attachment;"));
    assert!(text(&h, "content-security-policy").starts_with("sandbox"));
    // A type no list of active ones named (XSL runs script in Chromium), and one merely
    // unknown, are attachments in the sandbox too: only known inert types go inline.
    let xsl =
        b"<?xml version=\"1.0\"?><x:stylesheet xmlns:x=\"http://www.w3.org/1999/XSL/Transform\"/>";
    for (slug, content_type, inline) in [
        ("xsl", "text/xsl", false),
        ("mixed", "multipart/x-mixed-replace; boundary=x", false),
        ("unknown", "application/x-whatever", false),
        ("png", "image/png", true),
        ("plain", "text/plain; charset=utf-8", true),
    ] {
        let r = crate::objects::send(
            &srv,
            "PUT",
            &format!(
                "{}?filename=a.txt&access=public&slug={slug}",
                crate::objects::OBJECTS
            ),
            &ann.key,
            content_type,
            xsl.to_vec(),
        )
        .await;
        let url = r.assert_status(201)["url"].as_str().unwrap().to_owned();
        let (status, h, body) = get(&url, &[]).await;
        assert_eq!((status, body.as_slice()), (200, &xsl[..]), "{content_type}");
        assert_eq!(text(&h, "content-type"), content_type);
        assert_eq!(text(&h, "x-content-type-options"), "nosniff");
        let disposition = text(&h, "content-disposition");
        let csp = text(&h, "content-security-policy");
        if inline {
            assert!(disposition.starts_with("inline;"), "{content_type}: {h:?}");
            assert!(!csp.contains("sandbox"), "{content_type}: {h:?}");
        } else {
            assert!(
                disposition.starts_with("attachment;"),
                "{content_type}: {h:?}"
            );
            assert_eq!(csp, "sandbox; default-src 'none'", "{content_type}: {h:?}");
        }
    }

    // A private object sends visitors to sign in (`objects_access`); keys of its project
    // that may serve pages read it.
    let private = made(
        &srv,
        &ann.key,
        &[Part::File(Some("secret.txt"), b"classified")],
    )
    .await;
    let url = private["url"].as_str().unwrap();
    let (status, _, body) = get(url, &[]).await;
    assert_eq!(status, 403);
    assert!(!String::from_utf8_lossy(&body).contains("classified"));
    let (serve_key, _) = srv.mint(&ann.key, &["serve"], None).await;
    let bearer = format!("Bearer {serve_key}");
    let (status, h, body) = get(url, &[("authorization", &bearer)]).await;
    assert_eq!((status, body.as_slice()), (200, &b"classified"[..]));
    assert_eq!(text(&h, "cache-control"), "private, no-store");
    let (link_key, _) = srv.mint(&ann.key, &["link"], None).await;
    let other = format!("Bearer {link_key}");
    assert_eq!(get(url, &[("authorization", &other)]).await.0, 403);
}

async fn a_download_budget_is_exact_under_concurrency_and_ranges_are_free(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let bytes = vec![7u8; 4096];
    let object = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("maxViews", "3"),
            Part::Field("slug", "three"),
            Part::File(Some("three.bin"), &bytes),
        ],
    )
    .await;
    let url = object["url"].as_str().unwrap().to_owned();
    // A browser's first request and a preview see the continue page; neither spends.
    let (status, h, body) = get(
        &url,
        &[("accept", "text/html,*/*"), ("user-agent", "Mozilla/5.0")],
    )
    .await;
    assert_eq!(status, 200);
    assert!(text(&h, "content-type").starts_with("text/html"));
    assert!(
        String::from_utf8_lossy(&body).contains("<form"),
        "the continue page"
    );
    assert_eq!(
        get(&url, &[("user-agent", "Slackbot-LinkExpanding 1.0")])
            .await
            .0,
        200
    );
    // A download from byte 0 is one view; its view cookie frees its later ranges, one
    // file length in all (`objects_access` has the cookie's other rules).
    let (status, h, _) = get(&url, &[("range", "bytes=0-99")]).await;
    assert_eq!(status, 206);
    let cookie = text(&h, "set-cookie");
    let cookie = cookie.split(';').next().unwrap();
    assert!(cookie.starts_with("quire_view_three="), "{cookie}");
    for _ in 0..5 {
        let (status, _, _) = get(&url, &[("range", "bytes=100-199"), ("cookie", cookie)]).await;
        assert_eq!(status, 206);
    }
    assert_eq!(get(&url, &[("range", "bytes=0-99")]).await.0, 206);
    assert_eq!(get(&url, &[]).await.0, 200);
    assert_eq!(get(&url, &[]).await.0, 410);

    // 200 at once for a budget of 20: exactly 20 get the bytes.
    let twenty = made(
        &srv,
        &ann.key,
        &[
            Part::Field("access", "public"),
            Part::Field("maxViews", "20"),
            Part::File(Some("twenty.bin"), &bytes),
        ],
    )
    .await;
    let url = twenty["url"].as_str().unwrap().to_owned();
    let client = no_redirects();
    let answers = join_all((0..200).map(|_| {
        let (client, url) = (client.clone(), url.clone());
        tokio::spawn(async move {
            let resp = client.get(&url).send().await.unwrap();
            let status = resp.status().as_u16();
            (status, resp.bytes().await.unwrap().len())
        })
    }))
    .await;
    let answers: Vec<(u16, usize)> = answers.into_iter().map(Result::unwrap).collect();
    let served = answers
        .iter()
        .filter(|(s, len)| *s == 200 && *len == 4096)
        .count();
    let gone = answers.iter().filter(|(s, _)| *s == 410).count();
    assert_eq!((served, gone), (20, 180), "{answers:?}");
}
