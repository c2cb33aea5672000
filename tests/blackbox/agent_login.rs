//! The device login endpoints an agent calls, over HTTP: both body encodings, every error
//! they can give before a person decides, and rate limits shared by two servers.

use serde_json::{Value, json};

use crate::harness::{Backend, Server, TestDb, on_both_backends, setup};

const START: &str = "/api/agent-login/device_authorization";
const TOKEN: &str = "/api/agent-login/token";
const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

async fn form(srv: &Server, path: &str, body: &str) -> crate::harness::Reply {
    let resp = srv
        .http
        .post(format!("{}{path}", srv.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    crate::harness::Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        headers,
    }
}

fn no_store(r: &crate::harness::Reply) {
    assert_eq!(r.headers["cache-control"], "no-store", "{}", r.text);
}

async fn start_with_form_or_json(b: Backend) {
    let Some((_db, srv, _ann)) = setup(b).await else {
        return;
    };
    let r = form(&srv, START, "client_name=my+laptop").await;
    let s = r.assert_status(200).clone();
    no_store(&r);
    let user_code = s["user_code"].as_str().unwrap();
    assert_eq!(user_code.len(), 9);
    assert_eq!(&user_code[4..5], "-");
    assert_eq!(s["device_code"].as_str().unwrap().len(), 43);
    assert_eq!(
        s["verification_uri"],
        format!("{}/authorize-agent", srv.base),
        "without QUIRE_BASE_URL the links name the listener"
    );
    assert_eq!(
        s["verification_uri_complete"],
        format!("{}/authorize-agent?code={user_code}", srv.base)
    );
    assert_eq!(
        (s["expires_in"].as_u64(), s["interval"].as_u64()),
        (Some(600), Some(3))
    );

    let r = srv
        .call(
            "POST",
            START,
            None,
            Some(&json!({"client_name": "ci"}).to_string()),
        )
        .await;
    r.assert_status(200);
    let r = srv.call("POST", START, None, None).await;
    r.assert_status(200);

    for bad in [
        json!({"client_name": ""}),
        json!({"client_name": "x".repeat(61)}),
        json!({"client_name": 5}),
        json!([1]),
        // An empty array fills no field, and is still not the object the route takes.
        json!([]),
        json!(["ci"]),
    ] {
        let r = srv.call("POST", START, None, Some(&bad.to_string())).await;
        r.assert_error(400, "invalid_request");
        no_store(&r);
    }
    let r = srv.call("POST", START, None, Some("{not json")).await;
    r.assert_error(400, "invalid_request");
}

async fn token_errors_before_a_decision(b: Backend) {
    let Some((_db, srv, _ann)) = setup(b).await else {
        return;
    };
    let s = form(&srv, START, "").await.body.clone();
    let device_code = s["device_code"].as_str().unwrap();
    let user_code = s["user_code"].as_str().unwrap();

    let r = form(
        &srv,
        TOKEN,
        &format!("grant_type=password&device_code={device_code}"),
    )
    .await;
    r.assert_error(400, "unsupported_grant_type");
    no_store(&r);
    form(&srv, TOKEN, &format!("device_code={device_code}"))
        .await
        .assert_error(400, "invalid_request");
    form(&srv, TOKEN, &format!("grant_type={GRANT}"))
        .await
        .assert_error(400, "invalid_request");
    form(&srv, TOKEN, "%%%")
        .await
        .assert_error(400, "invalid_request");
    form(
        &srv,
        TOKEN,
        &format!("grant_type={GRANT}&device_code=unknown"),
    )
    .await
    .assert_error(400, "invalid_grant");
    // The user code can never claim.
    form(
        &srv,
        TOKEN,
        &format!("grant_type={GRANT}&device_code={user_code}"),
    )
    .await
    .assert_error(400, "invalid_grant");

    let poll = format!("grant_type={GRANT}&device_code={device_code}");
    form(&srv, TOKEN, &poll)
        .await
        .assert_error(400, "authorization_pending");
    let r = form(&srv, TOKEN, &poll).await;
    r.assert_error(400, "slow_down");
    assert_eq!(r.body["interval"], 8);
    // JSON works the same way.
    let r = srv
        .call(
            "POST",
            TOKEN,
            None,
            Some(&json!({"grant_type": GRANT, "device_code": device_code}).to_string()),
        )
        .await;
    r.assert_error(400, "slow_down");
    assert_eq!(r.body["interval"], 13);
}

async fn rate_limits_are_shared_by_replicas(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let one = db.start();
    let two = db.start();
    for i in 0..10 {
        let srv = if i % 2 == 0 { &one } else { &two };
        form(srv, START, "").await.assert_status(200);
    }
    let r = form(&one, START, "").await;
    r.assert_error(429, "rate_limited");
    no_store(&r);
    form(&two, START, "")
        .await
        .assert_error(429, "rate_limited");
}

async fn start_from(srv: &Server, forwarded_for: &str) -> u16 {
    srv.http
        .post(format!("{}{START}", srv.base))
        .header("x-forwarded-for", forwarded_for)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn forwarded_clients_count_separately_only_behind_trusted_proxies(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    let behind_proxy = db.start_with(&[("QUIRE_TRUSTED_PROXIES", "127.0.0.1")]);
    for _ in 0..10 {
        assert_eq!(start_from(&behind_proxy, "203.0.113.1").await, 200);
    }
    assert_eq!(start_from(&behind_proxy, "203.0.113.1").await, 429);
    // Another client behind the same proxy has its own budget; a forged first entry is not
    // believed (the proxy appended the real address last).
    assert_eq!(
        start_from(&behind_proxy, "203.0.113.1, 203.0.113.2").await,
        200
    );
    drop(behind_proxy);

    // Without trust the header is ignored: everyone here is 127.0.0.1, with a fresh budget.
    let direct = db.start();
    for i in 0..10 {
        assert_eq!(start_from(&direct, &format!("198.51.100.{i}")).await, 200);
    }
    assert_eq!(start_from(&direct, "198.51.100.99").await, 429);
}

on_both_backends!(
    forwarded_clients_count_separately_only_behind_trusted_proxies,
    start_with_form_or_json,
    token_errors_before_a_decision,
    rate_limits_are_shared_by_replicas,
);
