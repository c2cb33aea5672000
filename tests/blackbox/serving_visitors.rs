//! The pages origin's own pages over HTTP: the stylesheet it serves them, and what a visitor
//! without access to a private or allow-list page is shown (which page, who may open it, a
//! link to sign in that brings them back, nothing of the page's content).

use serde_json::json;

use crate::harness::{Backend, Reply, Server, on_both_backends, setup};
use crate::serving::{header, publish, reply, site, visit, visitor, with};

on_both_backends!(
    the_stylesheet_is_served_by_the_pages_origin_itself,
    an_anonymous_visitor_of_a_private_page_is_told_what_it_is_and_how_to_get_in,
    an_anonymous_visitor_of_an_allow_list_page_is_told_it_is_shared_with_named_people,
);

/// The stylesheet's path as a visitor page names it (`<link rel="stylesheet" href=…>`).
fn stylesheet_of(page: &Reply) -> String {
    let (_, after) = page
        .text
        .split_once("<link rel=\"stylesheet\" href=\"")
        .unwrap_or_else(|| panic!("a stylesheet: {}", page.text));
    after.split('"').next().unwrap().to_owned()
}

/// The dashboard link of the sign-in page `r` (a 403), its HTML escapes undone.
pub(crate) fn sign_in_link(r: &Reply) -> String {
    assert_eq!(r.status, 403, "the sign-in page: {}", r.text);
    let (_, after) = r
        .text
        .split_once("id=\"sign-in\" href=\"")
        .unwrap_or_else(|| panic!("a sign-in link: {}", r.text));
    unescape(after.split('"').next().unwrap())
}

/// `text` with its HTML character references (`&amp;`, `&#38;`, `&#x2f;`) replaced.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('&') {
        out.push_str(before);
        let (entity, tail) = after.split_once(';').expect("a terminated reference");
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => entity
                .strip_prefix("#x")
                .map_or_else(
                    || entity[1..].parse().ok(),
                    |hex| u32::from_str_radix(hex, 16).ok(),
                )
                .and_then(char::from_u32)
                .unwrap_or_else(|| panic!("an unknown reference &{entity};")),
        };
        out.push(c);
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The headers every page of the origin's own carries.
fn assert_own_page(r: &Reply) {
    assert_eq!(header(r, "cache-control"), "private, no-store");
    assert_eq!(header(r, "x-frame-options"), "DENY");
    assert_eq!(header(r, "x-content-type-options"), "nosniff");
    assert_eq!(header(r, "content-type"), "text/html; charset=utf-8");
    let csp = header(r, "content-security-policy");
    assert!(csp.contains("style-src 'self'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(
        !csp.contains("unsafe-inline"),
        "no inline style is left: {csp}"
    );
    assert!(!r.text.contains("<style"), "no inline style: {}", r.text);
    assert!(
        !r.text.contains(" style=\""),
        "no style attribute: {}",
        r.text
    );
    assert!(r.text.contains("<body class=\"visitor\">"), "{}", r.text);
    assert!(r.text.contains("Published with Quire"), "{}", r.text);
}

async fn get(url: &str) -> Reply {
    reply(visitor().get(url).send().await.unwrap()).await
}

async fn the_stylesheet_is_served_by_the_pages_origin_itself(b: Backend) {
    let Some((_db, srv, _ann)) = setup(b).await else {
        return;
    };
    let lost = visit(&srv, "/ann/nothing/").await;
    assert_eq!(lost.status, 404);
    assert_own_page(&lost);
    let path = stylesheet_of(&lost);
    assert!(
        path.starts_with("/.quire/quire.") && path.ends_with(".css"),
        "{path}"
    );
    // The same stylesheet as the dashboard's, on the owner's origin and on the short-link host.
    let dashboard = get(&format!(
        "{}/assets/{}",
        srv.base,
        &path["/.quire/".len()..]
    ))
    .await;
    assert_eq!(dashboard.status, 200);
    for origin in [srv.owner("ann"), srv.pages.clone()] {
        let r = get(&format!("{origin}{path}")).await;
        assert_eq!(r.status, 200, "{origin}");
        assert_eq!(header(&r, "content-type"), "text/css; charset=utf-8");
        assert_eq!(
            header(&r, "cache-control"),
            "public, max-age=31536000, immutable"
        );
        assert_eq!(header(&r, "x-content-type-options"), "nosniff");
        assert!(r.text.contains("body.visitor"));
        assert_eq!(r.text, dashboard.text);
        let head = reply(
            visitor()
                .head(format!("{origin}{path}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(head.status, 200);
        assert!(head.text.is_empty());
        assert_eq!(
            header(&head, "content-length"),
            r.text.len().to_string(),
            "HEAD says the length GET sends"
        );
    }
    // Another name (a stale or made-up hash) is not found; the path takes no post.
    let r = get(&format!("{}/.quire/quire.0000000000.css", srv.owner("ann"))).await;
    assert_eq!(r.status, 404);
    assert!(!r.text.contains("body.visitor"));
    let r = reply(
        visitor()
            .post(format!("{}{path}", srv.owner("ann")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.status, 405);
}

/// `srv`'s private page `mine` (titled "Site mine"), its short-link code.
async fn private_page(srv: &Server, key: &str, access: serde_json::Value) -> String {
    let mut body = with(site("mine"), "access", access);
    body["allow"] = json!(["cat@example.com", "dan@example.com"]);
    if body["access"] != json!("allow_list") {
        body.as_object_mut().unwrap().remove("allow");
    }
    let page = publish(srv, key, body).await;
    page["public_id"].as_str().unwrap().to_owned()
}

async fn an_anonymous_visitor_of_a_private_page_is_told_what_it_is_and_how_to_get_in(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let code = private_page(&srv, &ann.key, json!("private")).await;
    let r = visit(&srv, "/ann/mine/docs/").await;
    assert_own_page(&r);
    assert!(
        r.headers.get("www-authenticate").is_none(),
        "no challenge a browser would act on"
    );
    assert!(
        r.text
            .contains("id=\"gate-title\" class=\"break\">Site mine</h1>"),
        "{}",
        r.text
    );
    assert!(r.text.contains("<title>Site mine</title>"), "{}", r.text);
    assert!(r.text.contains("only its owner can open it"), "{}", r.text);
    assert!(r.text.contains("No account?"), "{}", r.text);
    assert!(!r.text.contains("id=\"docs\""), "no content of the page");
    // The link goes to the dashboard's hand-off for this page, which returns to this path.
    assert_eq!(
        sign_in_link(&r),
        format!("{}/visit?page={code}&next=docs%2F", srv.base)
    );
    // Every file of the page is gated the same way, none leaks.
    for path in [
        "/ann/mine/style.css",
        "/ann/mine/logo.png",
        "/ann/mine/missing",
    ] {
        let r = visit(&srv, path).await;
        assert_eq!(r.status, 403, "{path}");
        assert!(
            !r.text.contains("teal") && !r.text.contains("lost"),
            "{path}: {}",
            r.text
        );
    }
    // What the visitor's path carries is escaped in the page and encoded in the link.
    let r = visit(&srv, "/ann/mine/%22%3E%3Cscript%3Ex").await;
    assert!(!r.text.contains("\"><script>"), "{}", r.text);
    let link = sign_in_link(&r);
    assert!(
        link.starts_with(&format!("{}/visit?page={code}&next=", srv.base)),
        "{link}"
    );
    assert!(!link.contains('"') && !link.contains('<'), "{link}");
    // HEAD: the same status and headers, no body.
    let head = reply(
        visitor()
            .head(srv.page("/ann/mine/docs/"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(head.status, 403);
    assert!(head.text.is_empty());
    assert_eq!(header(&head, "cache-control"), "private, no-store");
    // The short link leads to the page, which says the same.
    let r = visit(&srv, &format!("/s/{code}")).await;
    assert_eq!(r.status, 302);
    assert_eq!(header(&r, "location"), srv.page("/ann/mine/"));
}

async fn an_anonymous_visitor_of_an_allow_list_page_is_told_it_is_shared_with_named_people(
    b: Backend,
) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let code = private_page(&srv, &ann.key, json!("allow_list")).await;
    let r = visit(&srv, "/ann/mine/").await;
    assert_own_page(&r);
    assert!(r.text.contains(">Site mine</h1>"), "{}", r.text);
    assert!(
        r.text.contains("shared with people its owner named"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("share it with your email address"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("only its owner"), "{}", r.text);
    assert!(
        !r.text.contains("example.com"),
        "the list is not shown: {}",
        r.text
    );
    assert!(!r.text.contains("id=\"home\""), "no content of the page");
    assert_eq!(
        sign_in_link(&r),
        format!("{}/visit?page={code}&next=", srv.base)
    );
}
