//! End users' accounts that nobody else can take, on both metadata databases: the
//! confirmation link opens a page whose button confirms (a `GET` changes nothing, a
//! cross-origin post is refused), a new sign-up of an unconfirmed address replaces the
//! pending one (its link dies, the new password signs in), sign-up answers alike whether or
//! not an address is registered while confirmations are on (and the registered owner keeps
//! their password), addresses the mailer would refuse are a 400 that stores nothing, and
//! twenty concurrent refreshes of one token all succeed with tokens that refresh again.

use serde_json::{Value, json};

use crate::data_auth::{assert_gotrue, call, database, password_grant, refresh, sign_up};
use crate::databases::sql;
use crate::harness::{Backend, Server, on_both_backends};
use crate::signup::{link_in, mail_to, outbox};

on_both_backends!(
    #[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
    end_user_sign_ups_cannot_be_taken_over,
    concurrent_refreshes_of_one_token_all_succeed
);

/// A page of the confirmation link, as a browser gets it.
pub(crate) struct LinkPage {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

/// Opens `link` (a path and query, or a whole URL) as a mail client's browser would.
pub(crate) async fn open_link(srv: &Server, link: &str) -> LinkPage {
    let path = link.trim_start_matches(&srv.base);
    let response = srv
        .http
        .get(format!("{}{path}", srv.base))
        .send()
        .await
        .unwrap();
    LinkPage {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

/// The value of the hidden field `name` of the page's form.
fn field<'a>(page: &'a str, name: &str) -> &'a str {
    let at = page
        .find(&format!("name=\"{name}\" value=\""))
        .unwrap_or_else(|| panic!("no field {name} in {page}"));
    let rest = &page[at + name.len() + 15..];
    &rest[..rest.find('"').unwrap()]
}

/// Presses the page's button: its form posted, from `origin` (the browser's `Origin`), to
/// the address the form names, relative to the link's.
pub(crate) async fn press(srv: &Server, link: &str, page: &str, origin: Option<&str>) -> LinkPage {
    assert!(page.contains("method=\"post\""), "{page}");
    let action = page
        .split("action=\"")
        .nth(1)
        .and_then(|a| a.split('"').next())
        .unwrap();
    let path = link.trim_start_matches(&srv.base);
    let dir = &path[..path.rfind('/').unwrap() + 1];
    let target = format!("{}{dir}{action}", srv.base);
    let form = serde_urlencoded::to_string([
        ("type", field(page, "type")),
        ("token", field(page, "token")),
    ])
    .unwrap();
    let mut request = srv
        .http
        .post(target)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form);
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.send().await.unwrap();
    LinkPage {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

/// Opens the link and presses its button from the gateway's own origin.
pub(crate) async fn confirm(srv: &Server, link: &str) -> LinkPage {
    let page = open_link(srv, link).await;
    if page.status != 200 {
        return page;
    }
    press(srv, link, &page.text, Some(&srv.base)).await
}

async fn sign_up_as(srv: &Server, secret: &Value, email: &str, password: &str) -> (u16, Value) {
    call(
        srv,
        "POST",
        "keep",
        "auth/v1/signup",
        secret,
        None,
        Some(json!({ "email": email, "password": password, "data": {"plan": "free"} })),
    )
    .await
}

/// How many messages the outbox holds for `to`.
fn mails_to(srv_dir: &std::path::Path, to: &str) -> usize {
    outbox(srv_dir)
        .iter()
        .filter(|m| m.contains(&format!("To: <{to}>")) || m.contains(&format!("To: {to}")))
        .count()
}

/// The keys of a JSON value, recursively, with the type of each leaf: its shape.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

async fn users(srv: &Server, key: &str, id: &str) -> Value {
    sql(
        srv,
        key,
        id,
        "select email, email_confirmed_at is not null as confirmed from auth.users order by email",
    )
    .await
    .assert_status(200)["rows"]
        .clone()
}

async fn end_user_sign_ups_cannot_be_taken_over(b: Backend) {
    let (db, srv, ann) = crate::databases::with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "keep").await;
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);
    let dir = db.dir.path();
    let victim = "vic@example.com";

    // An attacker signs the victim's address up first; the victim signs up after, which
    // replaces the pending sign-up instead of being told the address is taken.
    let (status, first) = sign_up_as(&srv, &secret, victim, "attacker pass 1").await;
    assert_eq!(status, 200, "{first}");
    let attackers_link = link_in(&mail_to(dir, victim, 0).await, "/db/keep/auth/v1/verify");
    let (status, second) = sign_up_as(&srv, &secret, victim, "victim pass 22").await;
    assert_eq!(status, 200, "the pending sign-up is replaced: {second}");
    let victims_link = link_in(&mail_to(dir, victim, 1).await, "/db/keep/auth/v1/verify");
    assert_ne!(attackers_link, victims_link);
    assert_eq!(users(&srv, &ann.key, &id).await, json!([[victim, false]]));

    // The link opens a page: a GET (a mail scanner's) confirms nothing, however often.
    for _ in 0..2 {
        let page = open_link(&srv, &victims_link).await;
        assert_eq!(page.status, 200, "{}", page.text);
        assert_eq!(page.headers["cache-control"], "no-store");
        assert_eq!(page.headers["referrer-policy"], "same-origin");
        assert!(
            page.headers["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("form-action 'self'"),
            "{:?}",
            page.headers
        );
        assert!(page.text.contains("name=\"viewport\""), "fits a phone");
        assert!(page.text.contains("<button"), "{}", page.text);
    }
    assert_gotrue(
        &password_grant(&srv, "keep", &secret, victim, "victim pass 22").await,
        400,
        "email_not_confirmed",
    );
    // The attacker's link is dead: its page says so, and so does its post.
    let dead = open_link(&srv, &attackers_link).await;
    assert_eq!(dead.status, 403, "{}", dead.text);
    assert!(dead.text.contains("Link expired"), "{}", dead.text);
    let page = open_link(&srv, &victims_link).await;
    let forged = page.text.replace(
        field(&page.text, "token"),
        &attackers_link[attackers_link.find("token=").unwrap() + 6
            ..attackers_link.find("&type").unwrap_or(attackers_link.len())],
    );
    let refused = press(&srv, &victims_link, &forged, Some(&srv.base)).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    // A post from another origin, or from none, confirms nothing.
    for origin in [Some("https://evil.example"), Some("null"), None] {
        let refused = press(&srv, &victims_link, &page.text, origin).await;
        assert_eq!(refused.status, 403, "{origin:?}: {}", refused.text);
        assert_eq!(refused.headers["cache-control"], "no-store");
    }
    assert_eq!(users(&srv, &ann.key, &id).await, json!([[victim, false]]));

    // The button confirms, once.
    let done = press(&srv, &victims_link, &page.text, Some(&srv.base)).await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(done.text.contains("Address confirmed"), "{}", done.text);
    assert_eq!(done.headers["referrer-policy"], "no-referrer");
    assert_eq!(done.headers["cache-control"], "no-store");
    let again = confirm(&srv, &victims_link).await;
    assert_eq!(again.status, 403, "a spent link: {}", again.text);
    let (status, session) = password_grant(&srv, "keep", &secret, victim, "victim pass 22").await;
    assert_eq!(status, 200, "{session}");
    assert_gotrue(
        &password_grant(&srv, "keep", &secret, victim, "attacker pass 1").await,
        400,
        "invalid_credentials",
    );

    // A registered address signs up as a new one does: same status, same shape, no session,
    // no mail; its owner's password is untouched.
    let (status, registered) =
        sign_up_as(&srv, &secret, "VIC@example.com", "attacker pass 3").await;
    let (fresh_status, fresh) =
        sign_up_as(&srv, &secret, "new@example.com", "a pass of mine").await;
    assert_eq!((status, fresh_status), (200, 200), "{registered}\n{fresh}");
    assert_eq!(shape(&registered), shape(&fresh), "{registered}\n{fresh}");
    assert_eq!(registered["email"], victim);
    assert!(registered["email_confirmed_at"].is_null(), "{registered}");
    assert_eq!(registered["user_metadata"], json!({"plan": "free"}));
    assert_ne!(
        registered["id"], session["user"]["id"],
        "not the real user's id"
    );
    assert_eq!(mails_to(dir, victim), 2, "no mail for a registered address");
    assert_eq!(mails_to(dir, "new@example.com"), 1);
    let (status, _) = password_grant(&srv, "keep", &secret, victim, "victim pass 22").await;
    assert_eq!(status, 200, "the owner's password is kept");
    assert_gotrue(
        &password_grant(&srv, "keep", &secret, victim, "attacker pass 3").await,
        400,
        "invalid_credentials",
    );
    let (status, _) = call(
        &srv,
        "GET",
        "keep",
        "auth/v1/user",
        &secret,
        session["access_token"].as_str(),
        None,
    )
    .await;
    assert_eq!(status, 200, "the owner's session is kept");

    // Addresses the mailer would refuse: a 400 in GoTrue's shape before anything is stored,
    // with confirmations on (where the mail would fail) and off (where a user would be made).
    let before = users(&srv, &ann.key, &id).await;
    let outbox_before = outbox(dir).len();
    for confirm_email in [true, false] {
        sql(
            &srv,
            &ann.key,
            &id,
            &format!("update auth.settings set confirm_email = {confirm_email}"),
        )
        .await
        .assert_status(200);
        for bad in [
            "a,vic@example.com",
            "b@example.com>",
            "c@[127.0.0.1]",
            "d\u{202e}moc@example.com",
            "e\u{200b}@example.com",
            "f@exa\u{200b}mple.com",
            "\"g h\"@example.com",
        ] {
            let got = sign_up_as(&srv, &secret, bad, "long enough 1").await;
            assert_gotrue(&got, 400, "validation_failed");
            assert_eq!(
                got.1["msg"], "Unable to validate email address: invalid format",
                "{bad:?}"
            );
        }
    }
    assert_eq!(users(&srv, &ann.key, &id).await, before, "nothing stored");
    assert_eq!(outbox(dir).len(), outbox_before, "nothing sent");
}

async fn concurrent_refreshes_of_one_token_all_succeed(b: Backend) {
    const TABS: usize = 20;
    let (_db, srv, ann) = crate::databases::with_cluster(b, &[]).await;
    let (_, secret) = database(&srv, &ann, "tabs").await;
    let user = sign_up(&srv, "tabs", &secret, "tab@example.com").await;
    let mut token = user["refresh_token"].as_str().unwrap().to_owned();
    // Twice: twenty tabs refresh one token at once, then each refreshes what it was given.
    for round in 0..2 {
        let answers = futures_util::future::join_all(
            (0..TABS).map(|_| refresh(&srv, "tabs", &secret, &token)),
        )
        .await;
        for (status, body) in &answers {
            assert_eq!(*status, 200, "round {round}: {body}");
        }
        // Each answer's access token names a live session and reads as the user.
        for (_, body) in &answers {
            let (status, me) = call(
                &srv,
                "GET",
                "tabs",
                "auth/v1/user",
                &secret,
                body["access_token"].as_str(),
                None,
            )
            .await;
            assert_eq!(
                (status, &me["email"]),
                (200, &json!("tab@example.com")),
                "{me}"
            );
        }
        // They hand out the session's one current token.
        let tokens: std::collections::BTreeSet<&str> = answers
            .iter()
            .map(|(_, body)| body["refresh_token"].as_str().unwrap())
            .collect();
        assert_eq!(tokens.len(), 1, "round {round}: {tokens:?}");
        assert!(!tokens.contains(token.as_str()));
        token = (*tokens.first().unwrap()).to_owned();
    }
    let (status, last) = refresh(&srv, "tabs", &secret, &token).await;
    assert_eq!(status, 200, "the session lives on: {last}");
}
