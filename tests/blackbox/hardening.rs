//! Defects found by probing the release build, each with the request that found it: an
//! allow list too long, control characters that PostgreSQL cannot store, input echoed into
//! error bodies and logs, an over-long page password, a repeated query parameter and
//! methods a path does not take. Every refusal changes nothing, on both databases.

use serde_json::{Value, json};

use crate::harness::{Backend, Server, on_both_backends, setup};

const PAGES: &str = "/api/page/v1/pages";
const PROJECTS: &str = "/api/platform/v1/projects";

on_both_backends!(
    allow_lists_are_capped_and_deduplicated,
    control_characters_are_refused_with_the_field_named,
    errors_and_logs_do_not_echo_huge_input,
    page_passwords_over_256_characters_are_a_clear_400,
    a_repeated_query_parameter_is_a_json_400,
    other_methods_on_a_known_path_are_405_with_allow,
    what_the_openapi_document_calls_valid_is_taken,
);

fn page(title: &str) -> Value {
    json!({"title": title, "access": "public",
           "files": [{"path": "index.html", "content": "<p>hi</p>"}]})
}

async fn page_count(srv: &Server, key: &str) -> usize {
    srv.get(PAGES, key).await.assert_status(200)["pages"]
        .as_array()
        .map_or(0, Vec::len)
}

async fn allow_lists_are_capped_and_deduplicated(b: Backend) {
    let Some((db, srv, ann)) = setup(b).await else {
        return;
    };
    db.create_account("bob", &[]);
    let too_many: Vec<String> = (0..1001).map(|i| format!("u{i}@example.com")).collect();
    let mut body = page("Wide");
    body["access"] = json!("allow_list");
    body["allow"] = json!(too_many);
    let r = srv.post(PAGES, &ann.key, body.clone()).await;
    r.assert_error(400, "invalid_request");
    assert!(
        r.body["message"].as_str().unwrap().contains("1000"),
        "{}",
        r.text
    );
    assert_eq!(page_count(&srv, &ann.key).await, 0);

    // A thousand entries, handles among them, with repeats: kept once each, in order.
    let mut entries: Vec<String> = (0..997).map(|i| format!("u{i}@example.com")).collect();
    entries.extend(["bob".into(), "bob".into(), "u0@example.com".into()]);
    body["allow"] = json!(entries);
    let r = srv.post(PAGES, &ann.key, body.clone()).await;
    r.assert_status(201);
    body["allow"] = json!(["nobody_here"]);
    srv.post(PAGES, &ann.key, body)
        .await
        .assert_error(400, "invalid_request");
    assert_eq!(page_count(&srv, &ann.key).await, 1);
}

async fn control_characters_are_refused_with_the_field_named(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let r = srv.post(PAGES, &ann.key, page("bad\u{0}title")).await;
    r.assert_error(400, "invalid_request");
    assert!(
        r.body["message"].as_str().unwrap().contains("title"),
        "{}",
        r.text
    );
    assert_eq!(page_count(&srv, &ann.key).await, 0);

    for (field, code) in [("name", "invalid_project"), ("tag", "invalid_project")] {
        let mut body = json!({"name": "Fine", "tag": "t", "color": "blue", "slug": "fine"});
        body[field] = json!("a\u{0}b");
        let r = srv.post(PROJECTS, &ann.key, body).await;
        r.assert_error(400, code);
        assert!(
            r.body["message"].as_str().unwrap().contains(field),
            "{}",
            r.text
        );
    }
    let projects = srv.get(PROJECTS, &ann.key).await;
    assert_eq!(
        projects.assert_status(200)["projects"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let r = srv
        .post(
            "/api/platform/v1/keys",
            &ann.key,
            json!({"name": "k\u{0}", "apps": ["page"]}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.text.contains("name"), "{}", r.text);

    // No key needed: the dashboard's sign-in and a page's password form.
    let r = srv
        .http
        .post(format!("{}/login", srv.base))
        .header("origin", &srv.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("login=ann%00&password=whatever&next=%2F")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("control characters"));
    let owner = srv.owner("ann");
    let r = srv
        .http
        .post(format!("{owner}/-/unlock"))
        .header("origin", &owner)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("handle=ann&slug=a%00b&password=x&next=")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(!srv.logs().contains("internal error"), "{}", srv.logs());
}

async fn errors_and_logs_do_not_echo_huge_input(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let long = format!("{}\u{0}", "a".repeat(2_000_000));
    let body = json!({"title": "Echo", "files": [{"path": long, "content": "x"}]});
    let r = srv.post(PAGES, &ann.key, body).await;
    r.assert_error(400, "invalid_request");
    assert!(r.text.len() < 1_000, "error body of {} bytes", r.text.len());
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("2000001 characters"),
        "{}",
        r.text
    );
    let r = srv
        .post(
            "/api/platform/v1/keys",
            &ann.key,
            json!({"name": "k", "apps": ["a".repeat(50_000)]}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.text.len() < 1_000, "error body of {} bytes", r.text.len());
    // The log names the status and code of each refusal, never the input.
    crate::harness::eventually("the last refusal in the log", || async {
        srv.logs().lines().any(|l| {
            l.contains("answered") && l.contains("/api/platform/v1/keys") && l.contains("400")
        })
    })
    .await;
    let logs = srv.logs();
    assert!(
        !logs.contains(&"a".repeat(100)),
        "{} bytes of log",
        logs.len()
    );
    assert!(logs.len() < 100_000, "{} bytes of log", logs.len());
}

/// 256 characters: within the hasher's 1,024 bytes even at four bytes each.
async fn page_passwords_over_256_characters_are_a_clear_400(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let mut body = page("Locked");
    body["access"] = json!("password");
    body["password"] = json!("p".repeat(257));
    let r = srv.post(PAGES, &ann.key, body.clone()).await;
    r.assert_error(400, "invalid_request");
    assert!(
        r.body["message"].as_str().unwrap().contains("256"),
        "{}",
        r.text
    );
    assert_eq!(page_count(&srv, &ann.key).await, 0);
    body["password"] = json!("🔑".repeat(256)); // 1,024 bytes
    let created = srv.post(PAGES, &ann.key, body).await;
    let id = created.assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = srv
        .patch(
            &format!("{PAGES}/{id}"),
            &ann.key,
            json!({"password": "q".repeat(5000)}),
        )
        .await;
    r.assert_error(400, "invalid_request");
}

async fn a_repeated_query_parameter_is_a_json_400(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for query in ["status=active&status=archived", "project=a&project=b"] {
        let r = srv.get(&format!("{PAGES}?{query}"), &ann.key).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{query}"
        );
    }
}

async fn other_methods_on_a_known_path_are_405_with_allow(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (method, path, allow) in [
        ("TRACE", PROJECTS, "GET, HEAD, POST"),
        ("PUT", PAGES, "GET, HEAD, POST"),
        ("POST", "/healthz", "GET, HEAD"),
        ("GET", "/api/agent-login/token", "POST"),
        ("TRACE", "/login", "GET, HEAD, POST"),
    ] {
        let r = srv.call(method, path, Some(&ann.key), None).await;
        r.assert_error(405, "method_not_allowed");
        assert_eq!(r.headers["allow"], allow, "{method} {path}");
    }
    srv.call("GET", "/api/no/such/route", Some(&ann.key), None)
        .await
        .assert_error(404, "not_found");
    let r = srv
        .http
        .request(
            reqwest::Method::from_bytes(b"TRACE").unwrap(),
            format!("{}/", srv.owner("ann")),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "GET, HEAD");
}

/// Requests Schemathesis generated from the document that the service refused: a budget
/// written `5.0` (an integer in JSON Schema), a `null` optional field of the device login,
/// a name with surrounding spaces at the length limit (limits count what was sent).
async fn what_the_openapi_document_calls_valid_is_taken(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let mut body = page("Budget");
    body["maxViews"] = json!(5.0);
    let created = srv.post(PAGES, &ann.key, body).await;
    let id = created.assert_status(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let got = srv.get(&format!("{PAGES}/{id}"), &ann.key).await;
    assert_eq!(got.assert_status(200)["maxViews"], 5);
    let patched = srv
        .patch(&format!("{PAGES}/{id}"), &ann.key, json!({"maxViews": 1e3}))
        .await;
    assert_eq!(patched.assert_status(200)["maxViews"], 1000);
    srv.patch(&format!("{PAGES}/{id}"), &ann.key, json!({"maxViews": 2.5}))
        .await
        .assert_error(400, "invalid_request");

    let started = srv
        .call(
            "POST",
            "/api/agent-login/device_authorization",
            None,
            Some(r#"{"client_name": null}"#),
        )
        .await;
    assert!(started.assert_status(200)["device_code"].is_string());

    let name = format!(" {} ", "n".repeat(98)); // 100 characters sent, 98 kept
    let made = srv
        .post(
            PROJECTS,
            &ann.key,
            json!({"name": name, "tag": "", "color": "gray", "slug": "spaced"}),
        )
        .await;
    assert_eq!(made.assert_status(201)["project"]["name"], "n".repeat(98));
    srv.post(
        PROJECTS,
        &ann.key,
        json!({"name": format!(" {} ", "n".repeat(99)), "tag": "", "color": "gray", "slug": "over"}),
    )
    .await
    .assert_error(400, "invalid_project");
}
