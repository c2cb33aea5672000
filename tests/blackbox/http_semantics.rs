//! HTTP semantics of the API origin against RFC 9110: `HEAD` wherever `GET` is (same status
//! and headers, no content) and in every `Allow` beside it; `no-store` on the answers to a
//! request with a credential and `nosniff` on every answer; a `Location` on every 201 that
//! names what was made; and a key sent twice in a body refused in serde's words.

use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::dashboard::{Browser, with_password};
use crate::harness::{Backend, Server, TestDb, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";
const PROJECTS: &str = "/api/platform/v1/projects";
const KEYS: &str = "/api/platform/v1/keys";

on_both_backends!(
    head_answers_as_get_does_without_content,
    head_sends_no_content_on_the_wire,
    allow_names_head_beside_get,
    credentialed_answers_are_no_store_and_every_answer_is_nosniff,
    every_201_names_what_it_made_in_location,
    a_key_sent_twice_is_named,
);

fn page(title: &str) -> Value {
    json!({"title": title, "access": "public",
           "files": [{"path": "index.html", "content": "<p>hi</p>"}]})
}

/// A request of `method` to `path`, with `key` as a bearer when given.
async fn send(srv: &Server, method: &str, path: &str, key: Option<&str>) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = srv.http.request(method, format!("{}{path}", srv.base));
    if let Some(key) = key {
        req = req.header("authorization", format!("Bearer {key}"));
    }
    req.send().await.unwrap()
}

/// The headers of an answer but `Date`, which moves between two requests.
fn dateless(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    all.sort();
    all
}

async fn head_answers_as_get_does_without_content(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let id = srv
        .post(PAGES, &ann.key, page("Head"))
        .await
        .assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let no_redirects = crate::harness::client()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for (path, key, status) in [
        ("/healthz", None, 200),
        ("/readyz", None, 200),
        ("/api/openapi.json", None, 200),
        ("/api/docs/", None, 200),
        ("/api/docs", None, 301),
        ("/login", None, 200),
        ("/", None, 303),
        ("/.well-known/jwks.json", None, 200),
        ("/.well-known/oauth-authorization-server", None, 200),
        (PAGES, Some(ann.key.as_str()), 200),
        (&format!("{PAGES}/{id}"), Some(ann.key.as_str()), 200),
        (PROJECTS, Some(ann.key.as_str()), 200),
        (KEYS, Some(ann.key.as_str()), 200),
        // An error answers HEAD as it answers GET.
        ("/api/page/v1/pages/not-a-page", Some(ann.key.as_str()), 404),
        (PAGES, None, 401),
    ] {
        let request = |method: reqwest::Method| {
            let mut req = no_redirects.request(method, format!("{}{path}", srv.base));
            if let Some(key) = key {
                req = req.header("authorization", format!("Bearer {key}"));
            }
            req
        };
        let get = request(reqwest::Method::GET).send().await.unwrap();
        let head = request(reqwest::Method::HEAD).send().await.unwrap();
        assert_eq!(get.status(), status, "GET {path}");
        assert_eq!(head.status(), status, "HEAD {path}");
        let (get_headers, head_headers) = (dateless(get.headers()), dateless(head.headers()));
        let get_body = get.bytes().await.unwrap();
        // The length of the content a GET sends, which HEAD announces and does not send.
        assert_eq!(
            head.headers()["content-length"],
            get_body.len().to_string().as_str(),
            "HEAD {path}"
        );
        assert_eq!(head_headers, get_headers, "HEAD {path}");
        assert!(head.bytes().await.unwrap().is_empty(), "HEAD {path}");
    }
}

/// Reads answers off one connection until it closes.
async fn on_one_connection(srv: &Server, requests: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(&srv.addr).await.unwrap();
    stream.write_all(requests.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8(answer).unwrap()
}

/// A client reading the wire finds the head of a HEAD's answer and then the next answer:
/// not a byte of content between them.
async fn head_sends_no_content_on_the_wire(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let host = &srv.addr;
    let answers = on_one_connection(
        &srv,
        &format!(
            "HEAD /api/openapi.json HTTP/1.1\r\nHost: {host}\r\n\r\n\
             HEAD {PAGES} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\r\n\
             GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
            ann.key
        ),
    )
    .await;
    // Three heads, then the one content: the health check's.
    let parts: Vec<&str> = answers.split("\r\n\r\n").collect();
    assert_eq!(parts.len(), 4, "{answers}");
    assert!(parts[0].starts_with("HTTP/1.1 200 OK\r\n"), "{answers}");
    let length: usize = parts[0]
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(length > 10_000, "the document's length: {length}");
    assert!(parts[1].starts_with("HTTP/1.1 200 OK\r\n"), "{answers}");
    assert!(parts[2].starts_with("HTTP/1.1 200 OK\r\n"), "{answers}");
    assert_eq!(
        serde_json::from_str::<Value>(parts[3]).unwrap()["status"],
        "ok"
    );
}

async fn allow_names_head_beside_get(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (method, path, allow) in [
        ("PUT", "/healthz", "GET, HEAD"),
        ("DELETE", "/.well-known/jwks.json", "GET, HEAD"),
        ("PUT", "/api/openapi.json", "GET, HEAD"),
        ("POST", "/api/docs/", "GET, HEAD"),
        ("POST", "/api/docs", "GET, HEAD"),
        ("PATCH", "/account/security", "GET, HEAD, POST"),
        (
            "PUT",
            "/api/page/v1/pages/00000000-0000-0000-0000-000000000000",
            "GET, HEAD, PATCH, DELETE",
        ),
    ] {
        let r = srv.call(method, path, Some(&ann.key), None).await;
        r.assert_error(405, "method_not_allowed");
        assert_eq!(r.headers["allow"], allow, "{method} {path}");
    }
    // HEAD where only POST is: 405 naming the method sent, and no content.
    let r = send(&srv, "HEAD", "/api/agent-login/token", None).await;
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "POST");
    assert!(r.bytes().await.unwrap().is_empty());
    let r = srv.call("GET", "/logout", None, None).await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.headers["allow"], "POST");
    assert_eq!(
        r.body["message"], "GET is not allowed here; use POST",
        "{}",
        r.text
    );
}

#[track_caller]
fn assert_header(headers: &HeaderMap, name: &str, value: &str, what: &str) {
    assert_eq!(
        headers.get(name).map(|v| v.to_str().unwrap()),
        Some(value),
        "{name} of {what}"
    );
}

async fn credentialed_answers_are_no_store_and_every_answer_is_nosniff(b: Backend) {
    let Some((db, srv)) = with_password(b).await else {
        return;
    };
    let ann = db.create_account("ann_api", &[]);
    let made = srv.post(PAGES, &ann.key, page("Stored")).await;
    made.assert_status(201);
    assert_header(&made.headers, "cache-control", "no-store", "POST /pages");
    assert_header(
        &made.headers,
        "x-content-type-options",
        "nosniff",
        "POST /pages",
    );
    let id = made.body["id"].as_str().unwrap();
    for path in [
        PAGES.to_owned(),
        format!("{PAGES}/{id}"),
        format!("{PAGES}/{id}/files"),
        PROJECTS.to_owned(),
        KEYS.to_owned(),
    ] {
        let r = srv.get(&path, &ann.key).await;
        r.assert_status(200);
        assert_header(&r.headers, "cache-control", "no-store", &path);
        assert_header(&r.headers, "x-content-type-options", "nosniff", &path);
    }
    // Without a credential: nosniff still, and no policy where the answer is everyone's.
    for (path, status) in [
        ("/healthz", 200),
        ("/api/openapi.json", 200),
        ("/no/such/route", 404),
        (PAGES, 401),
    ] {
        let r = send(&srv, "GET", path, None).await;
        assert_eq!(r.status(), status, "{path}");
        assert_header(r.headers(), "x-content-type-options", "nosniff", path);
    }
    let r = send(&srv, "GET", "/healthz", None).await;
    assert!(r.headers().get("cache-control").is_none());
    // A handler's own policy stands, credential or not: the signing keys are everyone's.
    let r = send(&srv, "GET", "/.well-known/jwks.json", Some(&ann.key)).await;
    assert_header(r.headers(), "cache-control", "public, max-age=60", "jwks");
    assert_header(r.headers(), "x-content-type-options", "nosniff", "jwks");

    // A dashboard session is a credential too: even its redirects are kept by no cache.
    let mut browser = Browser::new(&srv);
    let signed_in = browser.sign_in("ann").await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.text);
    let home = browser.get("/").await;
    assert_eq!(home.status, 303, "{}", home.text);
    assert_header(&home.headers, "cache-control", "no-store", "/ signed in");
    assert_header(
        &home.headers,
        "x-content-type-options",
        "nosniff",
        "/ signed in",
    );
}

/// The `Location` of a 201, checked to be a path of this API.
#[track_caller]
fn location(headers: &HeaderMap) -> String {
    let location = headers
        .get("location")
        .expect("a 201 has a Location")
        .to_str()
        .unwrap();
    assert!(location.starts_with("/api/"), "{location}");
    location.to_owned()
}

async fn every_201_names_what_it_made_in_location(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let root = db.create_account("root", &["--platform-admin"]);
    let srv = db.start();

    let made = srv.post(PAGES, &root.key, page("Located")).await;
    let id = made.assert_status(201)["id"].as_str().unwrap().to_owned();
    let at = location(&made.headers);
    assert_eq!(at, format!("{PAGES}/{id}"));
    let fetched = srv.get(&at, &root.key).await;
    assert_eq!(fetched.assert_status(200)["id"], id.as_str());
    assert_eq!(fetched.body["title"], "Located");

    let made = srv
        .post(
            PROJECTS,
            &root.key,
            json!({"name": "Located", "tag": "t", "color": "blue", "slug": "located"}),
        )
        .await;
    let project = made.assert_status(201)["project"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = location(&made.headers);
    assert_eq!(at, format!("{PROJECTS}/{project}"));
    let fetched = srv.get(&at, &root.key).await;
    assert_eq!(fetched.assert_status(200)["project"]["slug"], "located");

    let made = srv
        .post(
            "/api/platform/v1/oauth-clients",
            &root.key,
            json!({"name": "Located", "client_type": "public",
                   "redirect_uris": ["http://127.0.0.1/cb"]}),
        )
        .await;
    let client = made.assert_status(201)["client"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = location(&made.headers);
    assert_eq!(at, format!("/api/platform/v1/oauth-clients/{client}"));
    let fetched = srv.get(&at, &root.key).await;
    assert_eq!(fetched.assert_status(200)["client"]["name"], "Located");

    // A key has no GET of its own: its Location is where it is revoked.
    let made = srv
        .post(
            KEYS,
            &root.key,
            json!({"name": "located", "apps": ["page"]}),
        )
        .await;
    let key = made.assert_status(201)["key"].as_str().unwrap().to_owned();
    let key_id = made.body["keyId"].as_str().unwrap().to_owned();
    let at = location(&made.headers);
    assert_eq!(at, format!("{KEYS}/{key_id}"));
    srv.get(PAGES, &key).await.assert_status(200);

    // A grant is revoked where it was made, naming its key.
    let made = srv
        .post(
            &format!("{PROJECTS}/{project}/grants"),
            &root.key,
            json!({"key_id": key_id, "level": "read"}),
        )
        .await;
    made.assert_status(201);
    let at = location(&made.headers);
    assert_eq!(at, format!("{PROJECTS}/{project}/grants"));
    srv.delete(&at, &root.key, Some(json!({"key_id": key_id})))
        .await
        .assert_status(204);

    srv.delete(&format!("{KEYS}/{key_id}"), &root.key, None)
        .await
        .assert_status(204);
    srv.get(PAGES, &key)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn a_key_sent_twice_is_named(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let twice = r#"{"title":"a","access":"password","password":"secretsecret","access":"public","files":[{"path":"index.html","content":"x"}]}"#;
    let r = srv.call("POST", PAGES, Some(&ann.key), Some(twice)).await;
    r.assert_error(400, "invalid_request");
    assert_eq!(r.body["message"], "duplicate field `access`", "{}", r.text);
    let in_a_file = r#"{"title":"a","files":[{"path":"index.html","content":"x","content":"y"}]}"#;
    let r = srv
        .call("POST", PAGES, Some(&ann.key), Some(in_a_file))
        .await;
    r.assert_error(400, "invalid_request");
    assert_eq!(
        r.body["message"], "files[0]: duplicate field `content`",
        "{}",
        r.text
    );
    let listed = srv.get(PAGES, &ann.key).await;
    assert_eq!(
        listed.assert_status(200)["pages"],
        json!([]),
        "nothing made"
    );

    // On the platform API, with its own code.
    let r = srv
        .call(
            "POST",
            PROJECTS,
            Some(&ann.key),
            Some(r#"{"name":"n","tag":"t","color":"blue","slug":"one","slug":"two"}"#),
        )
        .await;
    r.assert_error(400, "invalid_project");
    assert_eq!(r.body["message"], "duplicate field `slug`", "{}", r.text);
    // What is not an object keeps its message.
    let r = srv
        .call("POST", PROJECTS, Some(&ann.key), Some("[1]"))
        .await;
    r.assert_error(400, "invalid_body");
    assert_eq!(r.body["message"], "request body must be a JSON object");
}
