//! The data gateway `/db/{slug}/…` row by row: the spec's error table in its order and with
//! its bodies, CORS, the keys of one database reaching nothing of another's, tokens that are
//! not the database's refused, 503 while an instance starts and 502 when its database
//! refuses connections, and what the `anon` role can and cannot do.

use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio_postgres::NoTls;

use crate::databases::{cluster_url, create, enable_data_api, sql, tenant_names, with_cluster};
use crate::harness::{Account, Backend, Server, on_both_backends};

/// A database with the data API on, a table `notes` of two rows that `anon` may read, and
/// its secret.
async fn database(srv: &Server, ann: &Account, slug: &str) -> (String, Value) {
    let made = create(srv, &ann.key, json!({ "slug": slug })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    sql(
        srv,
        &ann.key,
        &id,
        "create table notes (id int primary key, body text);
         insert into notes values (1, 'first'), (2, 'second');
         revoke insert, update, delete on notes from anon;
         create function slow() returns int language sql as $$ select 1 from pg_sleep(10) $$;
         create function remember(body text) returns int language sql
           as $$ insert into notes values (3, body) returning id $$;",
    )
    .await
    .assert_status(200);
    let secret = enable_data_api(srv, &ann.key, &id).await;
    (id, secret)
}

/// A request to the gateway with these headers.
async fn call(
    srv: &Server,
    method: reqwest::Method,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = srv.http.request(method, format!("{}{path}", srv.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("gateway answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, headers, body)
}

fn gateway_error(status: u16, message: &str) -> Value {
    json!({ "message": message, "code": status.to_string(), "hint": null, "details": null })
}

pub(crate) fn signed(secret: &str, claims: &Value) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    the_gateway_answers_its_error_table_in_order,
    one_databases_keys_reach_nothing_of_anothers,
    an_instance_starting_is_503_and_a_refusing_database_502
);

async fn the_gateway_answers_its_error_table_in_order(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "shop").await;
    let anon = secret["anonKey"].as_str().unwrap();
    let with_anon = [("apikey", anon)];

    // 1. An unknown slug, and a database whose data API is off.
    let (status, headers, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/nowhere/rest/v1/notes",
        &with_anon,
    )
    .await;
    assert_eq!(
        (status, body),
        (404, gateway_error(404, "database not found"))
    );
    assert_eq!(headers["access-control-allow-origin"], "*");
    let off = create(&srv, &ann.key, json!({ "slug": "dormant" })).await;
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/dormant/rest/v1/x",
        &with_anon,
    )
    .await;
    assert_eq!(
        (status, body),
        (404, gateway_error(404, "database not found"))
    );
    // 2. A path outside the REST and auth APIs.
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/shop/storage/v1/bucket",
        &with_anon,
    )
    .await;
    assert_eq!((status, body), (404, gateway_error(404, "Not found")));
    // 3. No key, then a key that is not this database's.
    let (status, _, body) = call(&srv, reqwest::Method::GET, "/db/shop/rest/v1/notes", &[]).await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "No API key found in request");
    assert_eq!(body["code"], "401");
    for wrong in ["nonsense", "qk_0000000000000000000000000000000000000000000"] {
        let (status, _, body) = call(
            &srv,
            reqwest::Method::GET,
            "/db/shop/rest/v1/notes",
            &[("apikey", wrong)],
        )
        .await;
        assert_eq!(
            (status, body),
            (401, gateway_error(401, "Invalid API key")),
            "{wrong}"
        );
    }
    // A token of the right shape signed with another secret, even one claiming service_role.
    let forged = signed(
        "not the secret",
        &json!({ "role": "service_role", "exp": 4_000_000_000_i64 }),
    );
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/shop/rest/v1/notes",
        &[("apikey", &forged)],
    )
    .await;
    assert_eq!((status, body), (401, gateway_error(401, "Invalid API key")));
    // A good apikey with a bearer token that is not: tampered, expired, `alg: none`.
    let jwt_secret = secret["jwtSecret"].as_str().unwrap();
    let expired = signed(
        jwt_secret,
        &json!({ "role": "authenticated", "exp": 1_000 }),
    );
    let mut tampered = signed(
        jwt_secret,
        &json!({ "role": "anon", "exp": 4_000_000_000_i64 }),
    );
    // The signature's first character, changed: its top six bits always differ (its last
    // one carries only four, and may already be what it is replaced with).
    let signature_at = tampered.rfind('.').unwrap() + 1;
    let first = if tampered[signature_at..].starts_with('A') {
        "B"
    } else {
        "A"
    };
    tampered.replace_range(signature_at..=signature_at, first);
    let none = format!(
        "{}.{}.",
        base64_url(br#"{"alg":"none","typ":"JWT"}"#),
        base64_url(br#"{"role":"service_role","exp":4000000000}"#)
    );
    for (token, code) in [
        (&expired, "PGRST303"),
        (&tampered, "PGRST301"),
        (&none, "PGRST301"),
    ] {
        let bearer = format!("Bearer {token}");
        let (status, _, body) = call(
            &srv,
            reqwest::Method::GET,
            "/db/shop/rest/v1/notes",
            &[("apikey", anon), ("authorization", &bearer)],
        )
        .await;
        assert_eq!(status, 401, "{body}");
        assert_eq!(body["code"], code, "{body}");
    }
    // 6. The REST answer, CORS open.
    let (status, headers, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/shop/rest/v1/notes?select=body&order=id",
        &with_anon,
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!([{ "body": "first" }, { "body": "second" }]))
    );
    assert_eq!(headers["access-control-allow-origin"], "*");
    let (status, headers, _) = call(
        &srv,
        reqwest::Method::OPTIONS,
        "/db/shop/rest/v1/notes",
        &[
            ("origin", "https://app.example"),
            ("access-control-request-method", "POST"),
        ],
    )
    .await;
    assert_eq!(status, 204);
    assert!(
        headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("apikey")
    );
    // A Quire key with `base` acts as service_role; one without is not a key of this database.
    let (base_key, _) = srv.mint(&ann.key, &["base"], None).await;
    let (status, _, body) = call(
        &srv,
        reqwest::Method::POST,
        "/db/shop/rest/v1/notes",
        &[
            ("apikey", &base_key),
            ("content-type", "application/json"),
            ("prefer", "return=representation"),
        ],
    )
    .await;
    let _ = body;
    assert_eq!(status, 400, "an empty body is no row");
    let (page_key, _) = srv.mint(&ann.key, &["page"], None).await;
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/shop/rest/v1/notes",
        &[("apikey", &page_key)],
    )
    .await;
    assert_eq!((status, body), (401, gateway_error(401, "Invalid API key")));
    // anon may read but not write (its grants), and cannot reach the catalog or functions
    // outside the schema.
    let (status, _, body) = call(
        &srv,
        reqwest::Method::DELETE,
        "/db/shop/rest/v1/notes?id=eq.1",
        &with_anon,
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "42501");
    for path in [
        "/db/shop/rest/v1/pg_authid",
        "/db/shop/rest/v1/rpc/set_config",
    ] {
        let (status, _, body) = call(&srv, reqwest::Method::GET, path, &with_anon).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    the_key_in_the_query_is_no_filter(&srv, anon).await;
    let _ = (id, off);
}

/// The `apikey` query parameter (Kong's key-auth reads it) authenticates and is then taken
/// out of the query: the REST grammar never reads it, and no refusal quotes it.
async fn the_key_in_the_query_is_no_filter(srv: &Server, anon: &str) {
    let (status, _, body) = call(
        srv,
        reqwest::Method::GET,
        &format!("/db/shop/rest/v1/notes?id=eq.2&apikey={anon}"),
        &[],
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!([{ "id": 2, "body": "second" }]))
    );
    // With the key in the header, a second one in the query (after `;`, which the grammar
    // also splits on) is taken out as well.
    let (status, _, body) = call(
        srv,
        reqwest::Method::GET,
        &format!("/db/shop/rest/v1/notes?select=id&id=eq.1;apikey={anon}"),
        &[("apikey", anon)],
    )
    .await;
    assert_eq!((status, body), (200, json!([{ "id": 1 }])));
    for query in [
        format!("id=nonsense&apikey={anon}"),
        format!("apikey={anon}&id=eq.1&order=id.sideways"),
        format!("select=id,(&apikey={anon}"),
    ] {
        let (status, _, body) = call(
            srv,
            reqwest::Method::GET,
            &format!("/db/shop/rest/v1/notes?{query}"),
            &[],
        )
        .await;
        assert_eq!((status, &body["code"]), (400, &json!("PGRST100")), "{body}");
        assert!(!body.to_string().contains(anon), "{query}: {body}");
    }
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

async fn one_databases_keys_reach_nothing_of_anothers(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    let (_, first) = database(&srv, &ann, "first").await;
    let (_, second) = database(&srv, &ann, "second").await;
    for key in ["anonKey", "serviceRoleKey"] {
        let theirs = first[key].as_str().unwrap();
        let (status, _, body) = call(
            &srv,
            reqwest::Method::GET,
            "/db/second/rest/v1/notes",
            &[("apikey", theirs)],
        )
        .await;
        assert_eq!(
            (status, body),
            (401, gateway_error(401, "Invalid API key")),
            "{key}"
        );
        // As the bearer beside the right apikey, too.
        let bearer = format!("Bearer {theirs}");
        let (status, _, _) = call(
            &srv,
            reqwest::Method::GET,
            "/db/second/rest/v1/notes",
            &[
                ("apikey", second["anonKey"].as_str().unwrap()),
                ("authorization", &bearer),
            ],
        )
        .await;
        assert_eq!(status, 401, "{key} as bearer");
    }
    // Another account's Quire key reaches nothing either.
    let bob = db.create_account("bob", &[]);
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/second/rest/v1/notes",
        &[("apikey", &bob.key)],
    )
    .await;
    assert_eq!((status, body), (401, gateway_error(401, "Invalid API key")));
    // anon's statements are cut by its timeout (3 s), with PostgREST's answer to 57014.
    let started = std::time::Instant::now();
    let (status, _, body) = call(
        &srv,
        reqwest::Method::POST,
        "/db/second/rest/v1/rpc/slow",
        &[
            ("apikey", second["anonKey"].as_str().unwrap()),
            ("content-type", "application/json"),
        ],
    )
    .await;
    assert_eq!(body["code"], "57014", "{body}");
    assert!(status >= 500, "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "anon's 3 s, not the authenticator's 8 s"
    );
    // A read runs under the same timeout, in a read-only transaction: a function that
    // writes is refused on GET (PostgREST's 405 for 25006) and changes nothing, and the
    // connection serves the next request; on POST it writes.
    let anon = [("apikey", second["anonKey"].as_str().unwrap())];
    let started = std::time::Instant::now();
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/second/rest/v1/rpc/slow",
        &anon,
    )
    .await;
    assert_eq!((status, &body["code"]), (500, &json!("57014")), "{body}");
    assert!(started.elapsed() < Duration::from_secs(6));
    let service = [("apikey", second["serviceRoleKey"].as_str().unwrap())];
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/second/rest/v1/rpc/remember?body=third",
        &service,
    )
    .await;
    assert_eq!((status, &body["code"]), (405, &json!("25006")), "{body}");
    let ids = || {
        call(
            &srv,
            reqwest::Method::GET,
            "/db/second/rest/v1/notes?select=id&order=id",
            &service,
        )
    };
    for _ in 0..3 {
        let (status, _, body) = ids().await;
        assert_eq!((status, body), (200, json!([{ "id": 1 }, { "id": 2 }])));
    }
    let written = srv
        .http
        .post(format!("{}/db/second/rest/v1/rpc/remember", srv.base))
        .header("apikey", service[0].1)
        .json(&json!({ "body": "third" }))
        .send()
        .await
        .unwrap();
    assert_eq!(written.status().as_u16(), 200);
    assert_eq!(written.json::<Value>().await.unwrap(), json!(3));
    let (status, _, body) = ids().await;
    assert_eq!(
        (status, body),
        (200, json!([{ "id": 1 }, { "id": 2 }, { "id": 3 }]))
    );
}

async fn an_instance_starting_is_503_and_a_refusing_database_502(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "busy").await;
    let anon = secret["anonKey"].as_str().unwrap().to_owned();
    let (database_name, _, _) = tenant_names(&id);
    // Hold the catalog the schema cache is read from: the instance cannot finish starting.
    let mut config: tokio_postgres::Config = cluster_url().parse().unwrap();
    config.dbname(&database_name);
    let (mut admin, conn) = config.connect(NoTls).await.unwrap();
    tokio::spawn(conn);
    let lock = admin.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE pg_catalog.pg_proc IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let (status, headers, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/busy/rest/v1/notes",
        &[("apikey", &anon)],
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["message"], "database starting");
    assert_eq!(body["code"], "503");
    assert_eq!(headers["retry-after"], "1");
    lock.rollback().await.unwrap();
    crate::harness::eventually("the instance is up once the catalog is free", || {
        let srv = &srv;
        let anon = anon.clone();
        async move {
            call(
                srv,
                reqwest::Method::GET,
                "/db/busy/rest/v1/notes",
                &[("apikey", &anon)],
            )
            .await
            .0 == 200
        }
    })
    .await;

    // A database that refuses its authenticator (as a cluster that is down would): 502.
    let (other_id, other) = database(&srv, &ann, "closed").await;
    let (other_name, _, _) = tenant_names(&other_id);
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {other_name} ALLOW_CONNECTIONS false"
        ))
        .await
        .unwrap();
    let (status, _, body) = call(
        &srv,
        reqwest::Method::GET,
        "/db/closed/rest/v1/notes",
        &[("apikey", other["anonKey"].as_str().unwrap())],
    )
    .await;
    assert_eq!(
        (status, body),
        (502, gateway_error(502, "upstream unavailable"))
    );
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {other_name} ALLOW_CONNECTIONS true"
        ))
        .await
        .unwrap();
}
