//! The auth subset's refusals: every one in GoTrue's shape (`{code, error_code, msg}`) and
//! changing nothing, the owner's settings (sign-up off), the rate limit, and tokens that are
//! not this database's (another database's, service_role under another secret, tampered,
//! expired, unsigned, of a session that never was) refused by both subsets.

use serde_json::{Value, json};

use crate::data_auth::{assert_gotrue, call, database, password_grant, refresh, sign_up};
use crate::data_gateway::signed;
use crate::databases::{sql, with_cluster};
use crate::harness::{Backend, on_both_backends};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    every_refusal_is_in_gotrues_shape,
    tokens_not_of_this_database_are_refused
);

async fn every_refusal_is_in_gotrues_shape(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "shape").await;
    sign_up(&srv, "shape", &secret, "ann@example.com").await;
    let signup = |body: Value| {
        let srv = &srv;
        let secret = &secret;
        async move {
            call(
                srv,
                "POST",
                "shape",
                "auth/v1/signup",
                secret,
                None,
                Some(body),
            )
            .await
        }
    };
    assert_gotrue(
        &signup(json!({"email": "ANN@example.com", "password": "long enough"})).await,
        422,
        "user_already_exists",
    );
    assert_gotrue(
        &signup(json!({"email": "new@example.com", "password": "short"})).await,
        422,
        "weak_password",
    );
    assert_gotrue(
        &signup(json!({"email": "not-an-address", "password": "long enough"})).await,
        400,
        "validation_failed",
    );
    assert_gotrue(
        &signup(json!({"password": "long enough"})).await,
        400,
        "validation_failed",
    );
    assert_gotrue(
        &password_grant(&srv, "shape", &secret, "ann@example.com", "wrong one").await,
        400,
        "invalid_credentials",
    );
    assert_gotrue(
        &password_grant(&srv, "shape", &secret, "nobody@example.com", "wrong one").await,
        400,
        "invalid_credentials",
    );
    let grant = call(
        &srv,
        "POST",
        "shape",
        "auth/v1/token?grant_type=magic",
        &secret,
        None,
        Some(json!({})),
    )
    .await;
    assert_gotrue(&grant, 400, "unsupported_grant_type");
    assert_gotrue(
        &refresh(&srv, "shape", &secret, "no-such-token").await,
        400,
        "refresh_token_not_found",
    );
    let no_bearer = call(&srv, "GET", "shape", "auth/v1/user", &secret, None, None).await;
    // No bearer: no user; the anon key as the bearer names none either.
    assert_gotrue(&no_bearer, 401, "no_authorization");
    let anon = secret["anonKey"].as_str().unwrap();
    assert_gotrue(
        &call(
            &srv,
            "GET",
            "shape",
            "auth/v1/user",
            &secret,
            Some(anon),
            None,
        )
        .await,
        403,
        "bad_jwt",
    );
    let (status, body) = call(&srv, "GET", "shape", "auth/v1/nowhere", &secret, None, None).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("not_found"))
    );
    // The gateway's own checks come first: no key, or another's.
    let response = srv
        .http
        .post(format!("{}/db/shape/auth/v1/signup", srv.base))
        .json(&json!({"email": "x@example.com", "password": "long enough"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // The owner's settings: confirmation asked for, then sign-up off.
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);
    let (status, body) =
        signup(json!({"email": "cy@example.com", "password": "long enough"})).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("access_token").is_none(), "{body}");
    assert!(body["email_confirmed_at"].is_null(), "{body}");
    assert_gotrue(
        &password_grant(&srv, "shape", &secret, "cy@example.com", "long enough").await,
        400,
        "email_not_confirmed",
    );
    let (_, settings) = call(
        &srv,
        "GET",
        "shape",
        "auth/v1/settings",
        &secret,
        None,
        None,
    )
    .await;
    assert_eq!(settings["mailer_autoconfirm"], false);
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set disable_signup = true",
    )
    .await
    .assert_status(200);
    assert_gotrue(
        &signup(json!({"email": "dee@example.com", "password": "long enough"})).await,
        422,
        "signup_disabled",
    );
    let held = sql(&srv, &ann.key, &id, "select count(*)::int from auth.users")
        .await
        .assert_status(200)
        .clone();
    assert_eq!(held["rows"][0][0], 2, "refusals stored nothing: {held}");

    // The rate limit: 30 sign-ups an hour per address (the ones above count).
    let mut last = (0, Value::Null);
    for n in 0..30 {
        last = signup(json!({"email": format!("bad{n}"), "password": "long enough"})).await;
        if last.0 == 429 {
            break;
        }
    }
    assert_gotrue(&last, 429, "over_request_rate_limit");
}

async fn tokens_not_of_this_database_are_refused(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (_, one) = database(&srv, &ann, "one").await;
    let (_, two) = database(&srv, &ann, "two").await;
    let user = sign_up(&srv, "one", &one, "ida@example.com").await;
    let token = user["access_token"].as_str().unwrap();
    // One database's user token at the other's gateway.
    let (status, body) = call(&srv, "GET", "two", "rest/v1/todos", &two, Some(token), None).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("PGRST301")),
        "{body}"
    );
    assert_gotrue(
        &call(&srv, "GET", "two", "auth/v1/user", &two, Some(token), None).await,
        403,
        "bad_jwt",
    );
    // service_role claimed under another secret; tampered; expired; unsigned.
    let forged = signed(
        "not-the-secret",
        &json!({"role": "service_role", "exp": 4_000_000_000_i64}),
    );
    let (status, _) = call(
        &srv,
        "GET",
        "one",
        "rest/v1/todos",
        &one,
        Some(&forged),
        None,
    )
    .await;
    assert_eq!(status, 401);
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let claims = String::from_utf8(base64_url(&parts[1]))
        .unwrap()
        .replace("\"authenticated\"", "\"service_role\"");
    parts[1] = base64_url_encode(claims.as_bytes());
    let tampered = parts.join(".");
    let (status, _) = call(
        &srv,
        "GET",
        "one",
        "rest/v1/todos",
        &one,
        Some(&tampered),
        None,
    )
    .await;
    assert_eq!(status, 401);
    assert_gotrue(
        &call(
            &srv,
            "GET",
            "one",
            "auth/v1/user",
            &one,
            Some(&tampered),
            None,
        )
        .await,
        403,
        "bad_jwt",
    );
    let one_secret = one["jwtSecret"].as_str().unwrap();
    let expired = signed(
        one_secret,
        &json!({"role": "authenticated", "sub": user["user"]["id"], "session_id": "00000000-0000-0000-0000-000000000000", "exp": 1_000_000_000_i64}),
    );
    let (status, body) = call(
        &srv,
        "GET",
        "one",
        "rest/v1/todos",
        &one,
        Some(&expired),
        None,
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (401, Some("PGRST303")));
    assert_gotrue(
        &call(
            &srv,
            "GET",
            "one",
            "auth/v1/user",
            &one,
            Some(&expired),
            None,
        )
        .await,
        403,
        "bad_jwt",
    );
    let unsigned = format!(
        "{}.{}.",
        base64_url_encode(br#"{"alg":"none","typ":"JWT"}"#),
        base64_url_encode(br#"{"role":"service_role","exp":4000000000}"#)
    );
    let (status, _) = call(
        &srv,
        "GET",
        "one",
        "rest/v1/todos",
        &one,
        Some(&unsigned),
        None,
    )
    .await;
    assert_eq!(status, 401);
    // A token of a session that never existed names no user.
    let orphan = signed(
        one_secret,
        &json!({"role": "authenticated", "sub": user["user"]["id"], "session_id": "00000000-0000-0000-0000-000000000000", "exp": 4_000_000_000_i64}),
    );
    assert_gotrue(
        &call(
            &srv,
            "GET",
            "one",
            "auth/v1/user",
            &one,
            Some(&orphan),
            None,
        )
        .await,
        403,
        "session_not_found",
    );
}

fn base64_url(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .unwrap()
}

fn base64_url_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
