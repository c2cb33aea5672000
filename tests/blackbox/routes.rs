//! The route table as a whole: unknown routes, unparseable bodies, the OpenAPI document.

use serde_json::{Value, json};

use crate::harness::{Backend, on_both_backends, setup};

/// Every route of the platform API this server implements, as (method, OpenAPI path).
const ROUTES: &[(&str, &str)] = &[
    ("get", "/api/platform/v1/projects"),
    ("post", "/api/platform/v1/projects"),
    ("get", "/api/platform/v1/projects/{id}"),
    ("patch", "/api/platform/v1/projects/{id}"),
    ("delete", "/api/platform/v1/projects/{id}"),
    ("get", "/api/platform/v1/projects/{id}/resources"),
    ("post", "/api/platform/v1/projects/{id}/assign"),
    ("post", "/api/platform/v1/projects/{id}/unassign"),
    ("post", "/api/platform/v1/projects/{id}/grants"),
    ("delete", "/api/platform/v1/projects/{id}/grants"),
    ("get", "/api/platform/v1/keys"),
    ("post", "/api/platform/v1/keys"),
    ("delete", "/api/platform/v1/keys/{id}"),
    ("get", "/api/page/v1/pages"),
    ("post", "/api/page/v1/pages"),
    ("get", "/api/page/v1/pages/{id}"),
    ("patch", "/api/page/v1/pages/{id}"),
    ("delete", "/api/page/v1/pages/{id}"),
    ("get", "/api/page/v1/pages/{id}/files"),
    ("post", "/api/page/v1/pages/{id}/files"),
    ("get", "/api/page/v1/shared"),
];

/// Routes that need no credential.
const OPEN_ROUTES: &[(&str, &str)] = &[
    ("post", "/api/agent-login/device_authorization"),
    ("post", "/api/agent-login/token"),
];

async fn unknown_routes_are_json_404(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for (method, path) in [
        ("GET", "/nothing/here"),
        ("GET", "/api/platform/v1/widgets"),
        ("POST", "/api/platform/v2/projects"),
    ] {
        let r = srv.call(method, path, Some(&ann.key), None).await;
        r.assert_error(404, "not_found");
        assert!(
            r.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{method} {path}"
        );
    }
}

async fn every_post_and_patch_rejects_unparseable_json(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let id = ann.project_id.clone();
    for (method, path) in ROUTES {
        if !matches!(*method, "post" | "patch") {
            continue;
        }
        let path = path.replace("{id}", &id);
        for body in ["", "{", "{\"a\":}", "\u{1F600}"] {
            srv.call(&method.to_uppercase(), &path, Some(&ann.key), Some(body))
                .await
                .assert_error(400, "invalid_json");
        }
    }
}

async fn openapi_documents_every_route_with_errors(b: Backend) {
    let Some((_db, srv, _ann)) = setup(b).await else {
        return;
    };
    let doc: Value = srv
        .http
        .get(format!("{}/api/openapi.json", srv.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for (method, path) in ROUTES {
        let op = &doc["paths"][path][method];
        assert!(
            op.is_object(),
            "{method} {path} missing from the OpenAPI document"
        );
        let responses = op["responses"].as_object().unwrap();
        assert!(responses.contains_key("401"), "{method} {path}: no 401");
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{method} {path}: no success response"
        );
        if *method != "get" || path.ends_with("{id}") {
            assert!(
                responses.keys().filter(|s| s.starts_with('4')).count() >= 2,
                "{method} {path}: error responses missing"
            );
        }
    }
    for (method, path) in OPEN_ROUTES {
        let op = &doc["paths"][path][method];
        assert!(
            op["responses"]["400"].is_object() && op["responses"]["429"].is_object(),
            "{method} {path}"
        );
    }
    assert!(doc["components"]["schemas"]["ProjectDto"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());

    // The rules are in the schemas, not only in prose, so generated requests can obey them.
    let schemas = &doc["components"]["schemas"];
    let publish = &schemas["PublishBody"]["properties"];
    assert_eq!(publish["title"]["maxLength"], 200);
    assert_eq!(publish["title"]["minLength"], 1);
    assert!(publish["title"]["pattern"].is_string());
    assert_eq!(publish["maxViews"]["minimum"], 1);
    assert_eq!(
        publish["slug"]["pattern"],
        "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
    );
    assert_eq!(publish["password"]["maxLength"], 256);
    assert_eq!(publish["expiresAt"]["format"], "date-time");
    assert_eq!(
        publish["access"]["enum"],
        json!(["private", "password", "allow_list", "public", null])
    );
    assert_eq!(publish["files"]["minItems"], 1);
    assert!(schemas["FileBody"]["properties"]["path"]["pattern"].is_string());
    let mint = &schemas["MintKeyRequest"]["properties"];
    assert_eq!(mint["apps"]["minItems"], 1);
    assert_eq!(mint["apps"]["uniqueItems"], true);
    assert_eq!(
        mint["apps"]["items"]["enum"],
        json!(["page", "serve", "link", "base"])
    );
    assert_eq!(
        schemas["GrantRequest"]["properties"]["level"]["enum"],
        json!(["read", "full"])
    );
    let token = &doc["paths"]["/api/agent-login/token"]["post"]["requestBody"]["content"];
    let form = &token["application/x-www-form-urlencoded"]["schema"]["$ref"];
    assert_eq!(form, "#/components/schemas/TokenRequest");
    assert_eq!(
        schemas["TokenRequest"]["properties"]["grant_type"]["enum"],
        json!(["urn:ietf:params:oauth:grant-type:device_code"])
    );
    assert_eq!(
        doc["paths"]["/api/agent-login/device_authorization"]["post"]["requestBody"]["required"],
        false
    );

    let ui = srv
        .http
        .get(format!("{}/api/docs/", srv.base))
        .send()
        .await
        .unwrap();
    assert_eq!(ui.status().as_u16(), 200);
    assert!(ui.text().await.unwrap().contains("swagger"));
}

async fn oversized_bodies_get_json_413_and_the_server_carries_on(b: Backend) {
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(70_000));
    for _ in 0..5 {
        // Declared length over the limit: refused while the credential is still being checked.
        let r = srv
            .call(
                "POST",
                "/api/platform/v1/projects",
                Some(&ann.key),
                Some(&big),
            )
            .await;
        r.assert_error(413, "payload_too_large");
        assert!(r.body["message"].as_str().unwrap().contains("65536"));
    }
    // Chunked, with no declared length: refused once the limit is crossed.
    let chunks: Vec<Result<String, std::io::Error>> =
        (0..20).map(|_| Ok("y".repeat(8_192))).collect();
    let resp = srv
        .http
        .post(format!("{}/api/platform/v1/keys", srv.base))
        .header("authorization", format!("Bearer {}", ann.key))
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
    srv.get("/api/platform/v1/projects", &ann.key)
        .await
        .assert_status(200);
    assert!(!srv.logs().contains("panicked"), "{}", srv.logs());
}

async fn clients_that_vanish_mid_request_do_not_hurt_the_server(b: Backend) {
    use std::io::Write;
    let Some((_db, srv, ann)) = setup(b).await else {
        return;
    };
    for i in 0..30 {
        let mut s = std::net::TcpStream::connect(&srv.addr).unwrap();
        let body = r#"{"name":"n","tag":"t","color":"red","slug":"gone_one"}"#;
        let cut = if i % 2 == 0 { body.len() } else { 5 };
        write!(
            s,
            "POST /api/platform/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Length: {}\r\n\r\n{}",
            ann.key,
            body.len(),
            &body[..cut]
        )
        .unwrap();
        drop(s);
    }
    // Every cut connection handled: each sent its whole head, so each request is answered (to
    // no one) and logged as answered; a panic would show in the log instead.
    crate::harness::eventually("the 30 cut requests answered", || async {
        srv.logs()
            .lines()
            .filter(|l| {
                l.contains(r#""message":"answered""#)
                    && l.contains(r#""method":"POST","route":"/api/platform/v1/projects""#)
            })
            .count()
            >= 30
    })
    .await;
    srv.get("/api/platform/v1/projects", &ann.key)
        .await
        .assert_status(200);
    assert!(!srv.logs().contains("panicked"), "{}", srv.logs());
}

on_both_backends!(
    unknown_routes_are_json_404,
    every_post_and_patch_rejects_unparseable_json,
    openapi_documents_every_route_with_errors,
    oversized_bodies_get_json_413_and_the_server_carries_on,
    clients_that_vanish_mid_request_do_not_hurt_the_server,
);
