//! The mails that sign end users in, and the admin API, over HTTP on both metadata
//! databases, as GoTrue answers: `recover`, `otp`, `resend` answer `{}` and put a code (and
//! a link to the owner's site) in the outbox, kept in the database only as hashes; `verify`
//! with JSON spends it for a session, and takes the key as any call (only the sign-up
//! link's form is open without one); one mail a minute per address, the same answer for an
//! unknown address; the admin API for the service role alone, paged with `Link` and
//! `X-Total-Count`. Each refusal with its status and body.

use serde_json::{Value, json};

use crate::data_auth::{assert_gotrue, call, database, sign_up};
use crate::databases::{sql, with_cluster};
use crate::harness::{Backend, Server, on_both_backends};
use crate::signup::mail_to;

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    a_mailed_code_signs_in_once_and_only_its_hash_is_kept,
    the_admin_api_answers_the_service_role_alone
);

/// A request to `/db/{slug}/auth/v1/{path}` with `apikey` and `bearer` as given: the status,
/// the headers asked for, the body.
async fn with_key(
    srv: &Server,
    method: &str,
    path: &str,
    apikey: Option<&str>,
    bearer: Option<&str>,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = srv
        .http
        .request(method, format!("{}/db/flows/auth/v1/{path}", srv.base));
    if let Some(key) = apikey {
        request = request.header("apikey", key);
    }
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("gateway answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn code_in(mail: &str) -> String {
    let at = mail.find("Your code: ").expect("a code") + "Your code: ".len();
    mail[at..at + 6].to_owned()
}

async fn a_mailed_code_signs_in_once_and_only_its_hash_is_kept(b: Backend) {
    let (db, srv, ann) = with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "flows").await;
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set site_url = 'https://app.example.com',
             uri_allow_list = '{https://app.example.com/auth/*}'",
    )
    .await
    .assert_status(200);
    sign_up(&srv, "flows", &secret, "ada@example.com").await;
    let post = async |path: &str, body: Value| {
        call(&srv, "POST", "flows", path, &secret, None, Some(body)).await
    };

    // Known or not, the same answer.
    for email in ["ada@example.com", "nobody@example.com"] {
        let (status, body) = post(
            "auth/v1/recover?redirect_to=https://app.example.com/auth/reset",
            json!({"email": email}),
        )
        .await;
        assert_eq!((status, body), (200, json!({})), "{email}");
    }
    let (status, headers, body) = with_key(
        &srv,
        "POST",
        "recover",
        secret["anonKey"].as_str(),
        None,
        Some(json!({"email": "ada@example.com"})),
    )
    .await;
    assert_gotrue(&(status, body), 429, "over_email_send_rate_limit");
    let wait: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");

    let mail = mail_to(db.dir.path(), "ada@example.com", 0).await;
    assert!(mail.contains("Reply-To: "), "the account answers: {mail}");
    let code = code_in(&mail);
    let at = mail
        .find("https://app.example.com/auth/reset?token_hash=")
        .expect("a link to the allowed address");
    let link = mail[at..].split_whitespace().next().unwrap().to_owned();
    let token = link
        .split("token_hash=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .to_owned();
    // Stored as hashes: neither the code nor the link's token.
    let held = sql(
        &srv,
        &ann.key,
        &id,
        "select recovery_token_hash, recovery_code_hash from auth.users where email = 'ada@example.com'",
    )
    .await
    .assert_status(200)
    .clone();
    let stored = held["rows"][0].to_string();
    assert!(
        !stored.contains(&token) && !stored.contains(&format!("\"{code}\"")),
        "{stored}"
    );
    assert_eq!(held["rows"][0][0].as_str().unwrap().len(), 64, "a SHA-256");

    // `verify` with JSON needs the key; the sign-up link's form alone is open.
    let (status, _, _) = with_key(
        &srv,
        "POST",
        "verify",
        None,
        None,
        Some(json!({"type": "recovery", "token_hash": token})),
    )
    .await;
    assert_eq!(status, 401);
    let wrong = if code == "000000" { "111111" } else { "000000" };
    let refused = post(
        "auth/v1/verify",
        json!({"type": "recovery", "email": "ada@example.com", "token": wrong}),
    )
    .await;
    assert_gotrue(&refused, 403, "otp_expired");
    assert_eq!(refused.1["msg"], "Token has expired or is invalid");
    let (status, session) = post(
        "auth/v1/verify",
        json!({"type": "recovery", "email": "ada@example.com", "token": code}),
    )
    .await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["token_type"], "bearer");
    assert_eq!(session["user"]["identities"][0]["provider"], "email");
    let spent = post(
        "auth/v1/verify",
        json!({"type": "recovery", "token_hash": token}),
    )
    .await;
    assert_gotrue(&spent, 403, "otp_expired");
    assert_eq!(spent.1["msg"], "Email link is invalid or has expired");

    for (body, msg) in [
        (
            json!({"type": "recovery", "email": "ada@example.com"}),
            "Verify requires either a token or a token hash",
        ),
        (
            json!({"type": "signup", "token_hash": token}),
            "A sign-up is confirmed with the button of its email's link, with the password chosen at sign-up",
        ),
    ] {
        let refused = post("auth/v1/verify", body).await;
        assert_gotrue(&refused, 400, "validation_failed");
        assert_eq!(refused.1["msg"], msg);
    }
    let otp = post(
        "auth/v1/otp",
        json!({"email": "new@example.com", "create_user": false}),
    )
    .await;
    assert_gotrue(&otp, 422, "otp_disabled");
    assert_eq!(otp.1["msg"], "Signups not allowed for otp");
    let resend = post(
        "auth/v1/resend",
        json!({"type": "sms", "phone": "+15550100"}),
    )
    .await;
    assert_gotrue(&resend, 400, "validation_failed");

    // A sign-in code makes its user, confirmed by the code.
    let (status, body) = post("auth/v1/otp", json!({"email": "bo@example.com"})).await;
    assert_eq!((status, body), (200, json!({})));
    let code = code_in(&mail_to(db.dir.path(), "bo@example.com", 0).await);
    let (status, session) = post(
        "auth/v1/verify",
        json!({"type": "email", "email": "bo@example.com", "token": code}),
    )
    .await;
    assert_eq!(status, 200, "{session}");
    assert!(session["user"]["email_confirmed_at"].is_string());
}

async fn the_admin_api_answers_the_service_role_alone(b: Backend) {
    let (_db, srv, ann) = with_cluster(b, &[]).await;
    let (_, secret) = database(&srv, &ann, "flows").await;
    let (anon, service) = (
        secret["anonKey"].as_str().unwrap(),
        secret["serviceRoleKey"].as_str().unwrap(),
    );
    let user = sign_up(&srv, "flows", &secret, "ada@example.com").await;
    let access = user["access_token"].as_str().unwrap();

    for (bearer, status, code, msg) in [
        (
            None,
            401,
            "no_authorization",
            "This endpoint requires a Bearer token",
        ),
        (Some(anon), 403, "not_admin", "User not allowed"),
        (Some(access), 403, "not_admin", "User not allowed"),
        (Some("not.a.jwt"), 403, "bad_jwt", ""),
    ] {
        let (got, _, body) = with_key(&srv, "GET", "admin/users", Some(anon), bearer, None).await;
        assert_gotrue(&(got, body.clone()), status, code);
        if !msg.is_empty() {
            assert_eq!(body["msg"], msg);
        }
    }
    let admin = async |method: &str, path: &str, body: Option<Value>| {
        with_key(&srv, method, path, Some(service), Some(service), body).await
    };
    let (status, _, made) = admin(
        "POST",
        "admin/users",
        Some(json!({"email": "bo@example.com", "password": "long enough", "email_confirm": true})),
    )
    .await;
    assert_eq!(status, 200, "{made}");
    assert_eq!(
        made["identities"][0]["identity_data"]["email_verified"],
        true
    );
    let (status, _, body) = admin(
        "POST",
        "admin/users",
        Some(json!({"email": "BO@example.com"})),
    )
    .await;
    assert_gotrue(&(status, body), 422, "email_exists");
    for email in ["cy", "di"] {
        admin(
            "POST",
            "admin/users",
            Some(json!({"email": format!("{email}@example.com")})),
        )
        .await;
    }

    let (status, headers, page) = admin("GET", "admin/users?per_page=2&page=1", None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["aud"], "authenticated");
    assert_eq!(page["users"].as_array().unwrap().len(), 2);
    assert_eq!(headers["x-total-count"], "4");
    assert_eq!(
        headers["link"],
        "</db/flows/auth/v1/admin/users?per_page=2&page=2>; rel=\"next\", \
         </db/flows/auth/v1/admin/users?per_page=2&page=2>; rel=\"last\""
    );
    let (status, _, body) = admin("GET", "admin/users?per_page=5000", None).await;
    assert_gotrue(&(status, body), 400, "validation_failed");

    let path = format!("admin/users/{}", made["id"].as_str().unwrap());
    let (status, _, got) = admin("GET", &path, None).await;
    assert_eq!((status, &got["email"]), (200, &json!("bo@example.com")));
    let (status, _, changed) =
        admin("PUT", &path, Some(json!({"app_metadata": {"plan": "pro"}}))).await;
    assert_eq!(
        (status, &changed["app_metadata"]["plan"]),
        (200, &json!("pro"))
    );
    let (status, _, body) = admin("GET", "admin/users/not-an-id", None).await;
    assert_gotrue(&(status, body.clone()), 404, "validation_failed");
    assert_eq!(body["msg"], "user_id must be an UUID");
    let (status, _, link) = admin(
        "POST",
        "admin/generate_link",
        Some(json!({"type": "recovery", "email": "nobody@example.com"})),
    )
    .await;
    assert_gotrue(&(status, link.clone()), 404, "user_not_found");
    assert_eq!(link["msg"], "User with this email not found");
    let (status, _, link) = admin(
        "POST",
        "admin/generate_link",
        Some(json!({"type": "magiclink", "email": "bo@example.com"})),
    )
    .await;
    assert_eq!(status, 200, "{link}");
    assert_eq!(
        (link["email"].as_str(), link["action_link"].as_str()),
        (Some("bo@example.com"), Some(""))
    );
    let (status, session) = call(
        &srv,
        "POST",
        "flows",
        "auth/v1/verify",
        &secret,
        None,
        Some(json!({"type": "magiclink", "token_hash": link["hashed_token"]})),
    )
    .await;
    assert_eq!(
        (status, &session["user"]["email"]),
        (200, &json!("bo@example.com"))
    );

    let (status, _, body) = admin("DELETE", &path, None).await;
    assert_eq!((status, body), (200, json!({})));
    let (status, _, body) =
        admin("DELETE", &path, Some(json!({"should_soft_delete": false}))).await;
    assert_gotrue(&(status, body.clone()), 404, "user_not_found");
    assert_eq!(body["msg"], "User not found");
    let (status, _, body) = admin("GET", "admin/nowhere", None).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("not_found"))
    );
    // A Quire key with `base` acts as the service role here too.
    let (status, _, _) = with_key(
        &srv,
        "GET",
        "admin/users",
        Some(&ann.key),
        Some(&ann.key),
        None,
    )
    .await;
    assert_eq!(status, 200);
}
