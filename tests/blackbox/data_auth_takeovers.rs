//! End users' accounts that nobody else can take, on both metadata databases: the
//! confirmation link opens a page that asks for the password chosen at sign-up and whose
//! button confirms (a `GET` changes nothing, a cross-origin post is refused), so a victim who
//! presses the button of a mail an attacker's sign-up caused confirms nothing; wrong passwords
//! count against the link until it is dead; a new sign-up of an unconfirmed address replaces
//! the pending one (its link dies, the new password signs in), sign-up answers alike whether
//! or not an address is registered while confirmations are on (and the registered owner
//! keeps their password), addresses the mailer would refuse are a 400 that stores nothing,
//! and twenty concurrent refreshes of one token all succeed with tokens that refresh again.

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

/// Presses the page's button with `password` typed in: its form posted, from `origin` (the
/// browser's `Origin`), to the address the form names, relative to the link's.
pub(crate) async fn press(
    srv: &Server,
    link: &str,
    page: &str,
    origin: Option<&str>,
    password: &str,
) -> LinkPage {
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
        ("password", password),
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

/// Opens the link, types `password` and presses its button from the gateway's own origin.
pub(crate) async fn confirm(srv: &Server, link: &str, password: &str) -> LinkPage {
    let page = open_link(srv, link).await;
    if page.status != 200 {
        return page;
    }
    press(srv, link, &page.text, Some(&srv.base), password).await
}

/// Whether the page asks for the sign-up's password, labelled, as a password manager fills it.
fn asks_for_the_password(page: &str) -> bool {
    page.contains("<label for=\"password\"")
        && page.contains("id=\"password\" name=\"password\" type=\"password\"")
        && page.contains("autocomplete=\"current-password\"")
        && page.contains("<button")
}

/// The token in a link.
fn token_of(link: &str) -> &str {
    let start = link.find("token=").unwrap() + 6;
    let end = link[start..].find('&').map_or(link.len(), |e| start + e);
    &link[start..end]
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

/// Turns on confirmations for database `id`.
async fn confirmations_on(srv: &Server, key: &str, id: &str) {
    sql(
        srv,
        key,
        id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);
}

async fn end_user_sign_ups_cannot_be_taken_over(b: Backend) {
    let (db, srv, ann) = crate::databases::with_cluster(b, &[]).await;
    let (id, secret) = database(&srv, &ann, "keep").await;
    confirmations_on(&srv, &ann.key, &id).await;
    let dir = db.dir.path();
    let victim = "vic@example.com";

    // The victim signs up; an attacker then signs the same address up with a password of
    // their own, which replaces the pending sign-up (the victim's link dies) and sends the
    // victim a second, genuine mail.
    let (status, first) = sign_up_as(&srv, &secret, victim, "victim pass 22").await;
    assert_eq!(status, 200, "{first}");
    let victims_first = link_in(&mail_to(dir, victim, 0).await, "/db/keep/auth/v1/verify");
    let (status, second) = sign_up_as(&srv, &secret, victim, "attacker pass 1").await;
    assert_eq!(status, 200, "the pending sign-up is replaced: {second}");
    let attackers = link_in(&mail_to(dir, victim, 1).await, "/db/keep/auth/v1/verify");
    assert_ne!(victims_first, attackers);
    assert_eq!(users(&srv, &ann.key, &id).await, json!([[victim, false]]));
    let dead = open_link(&srv, &victims_first).await;
    assert_eq!(dead.status, 403, "{}", dead.text);
    assert!(dead.text.contains("Link expired"), "{}", dead.text);

    // The link opens a page asking for the sign-up's password: a GET (a mail scanner's)
    // confirms nothing, however often.
    for _ in 0..2 {
        let page = open_link(&srv, &attackers).await;
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
        assert!(asks_for_the_password(&page.text), "{}", page.text);
    }

    // The victim presses the button of the attacker's mail with their own password: the
    // page again, saying why, and nothing confirmed.
    let page = open_link(&srv, &attackers).await;
    let wrong = press(
        &srv,
        &attackers,
        &page.text,
        Some(&srv.base),
        "victim pass 22",
    )
    .await;
    assert_eq!(wrong.status, 400, "{}", wrong.text);
    assert!(
        wrong
            .text
            .contains("not the password this address signed up with"),
        "{}",
        wrong.text
    );
    assert!(wrong.text.contains("4 tries left"), "{}", wrong.text);
    assert!(wrong.text.contains("sign up again"), "{}", wrong.text);
    assert!(asks_for_the_password(&wrong.text), "{}", wrong.text);
    assert_eq!(wrong.headers["referrer-policy"], "same-origin");
    assert_eq!(wrong.headers["cache-control"], "no-store");
    assert_eq!(users(&srv, &ann.key, &id).await, json!([[victim, false]]));
    for password in ["victim pass 22", "attacker pass 1"] {
        assert_gotrue(
            &password_grant(&srv, "keep", &secret, victim, password).await,
            400,
            if password.starts_with("victim") {
                "invalid_credentials"
            } else {
                "email_not_confirmed"
            },
        );
    }

    // So the victim signs up again, and gets a link for their own password (the attacker's
    // link dies).
    let (status, again) = sign_up_as(&srv, &secret, victim, "victim pass 22").await;
    assert_eq!(status, 200, "{again}");
    let victims = link_in(&mail_to(dir, victim, 2).await, "/db/keep/auth/v1/verify");
    let dead = open_link(&srv, &attackers).await;
    assert_eq!(dead.status, 403, "{}", dead.text);
    // A dead token in a live link's form is refused, even with its own password.
    let page = open_link(&srv, &victims).await;
    let forged = page
        .text
        .replace(field(&page.text, "token"), token_of(&attackers));
    let refused = press(&srv, &victims, &forged, Some(&srv.base), "attacker pass 1").await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    // A post from another origin, or from none, confirms nothing.
    for origin in [Some("https://evil.example"), Some("null"), None] {
        let refused = press(&srv, &victims, &page.text, origin, "victim pass 22").await;
        assert_eq!(refused.status, 403, "{origin:?}: {}", refused.text);
        assert_eq!(refused.headers["cache-control"], "no-store");
    }
    assert_eq!(users(&srv, &ann.key, &id).await, json!([[victim, false]]));

    // The button with the sign-up's password confirms, once.
    let done = press(
        &srv,
        &victims,
        &page.text,
        Some(&srv.base),
        "victim pass 22",
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.text);
    assert!(done.text.contains("Address confirmed"), "{}", done.text);
    assert_eq!(done.headers["referrer-policy"], "no-referrer");
    assert_eq!(done.headers["cache-control"], "no-store");
    let again = confirm(&srv, &victims, "victim pass 22").await;
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
    // (Mail leaves off the request path: the later sign-up's message is there first.)
    mail_to(dir, "new@example.com", 0).await;
    assert_eq!(mails_to(dir, victim), 3, "no mail for a registered address");
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

    wrong_passwords_use_up_a_link(&srv, &ann, dir).await;
}

/// Wrong passwords on a link's page count against it: after five tries it is dead, for the
/// right password too, and only a new sign-up sends a working one. (A database of its own,
/// so its links' limit per client is its own.)
async fn wrong_passwords_use_up_a_link(
    srv: &Server,
    ann: &crate::harness::Account,
    dir: &std::path::Path,
) {
    let (id, secret) = database(srv, ann, "tries").await;
    confirmations_on(srv, &ann.key, &id).await;
    let email = "tri@example.com";
    let (status, body) = call(
        srv,
        "POST",
        "tries",
        "auth/v1/signup",
        &secret,
        None,
        Some(json!({ "email": email, "password": "the right one" })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let link = link_in(&mail_to(dir, email, 0).await, "/db/tries/auth/v1/verify");
    // Each wrong try answers the form again, which the next try is typed into.
    let mut page = open_link(srv, &link).await.text;
    for left in (1..5).rev() {
        let wrong = press(srv, &link, &page, Some(&srv.base), "a wrong one").await;
        assert_eq!(wrong.status, 400, "{}", wrong.text);
        let said = if left == 1 {
            "1 try left".to_owned()
        } else {
            format!("{left} tries left")
        };
        assert!(wrong.text.contains(&said), "{said}: {}", wrong.text);
        page = wrong.text;
    }
    let last = press(srv, &link, &page, Some(&srv.base), "a wrong one").await;
    assert_eq!(last.status, 403, "{}", last.text);
    assert!(last.text.contains("Too many tries"), "{}", last.text);
    let right = press(srv, &link, &page, Some(&srv.base), "the right one").await;
    assert_eq!(
        right.status, 403,
        "dead for the right password: {}",
        right.text
    );
    let reopened = open_link(srv, &link).await;
    assert_eq!(reopened.status, 403, "{}", reopened.text);
    assert_gotrue(
        &password_grant(srv, "tries", &secret, email, "the right one").await,
        400,
        "email_not_confirmed",
    );
    let (status, body) = call(
        srv,
        "POST",
        "tries",
        "auth/v1/signup",
        &secret,
        None,
        Some(json!({ "email": email, "password": "the right one" })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fresh = link_in(&mail_to(dir, email, 1).await, "/db/tries/auth/v1/verify");
    let done = confirm(srv, &fresh, "the right one").await;
    assert_eq!(
        done.status, 200,
        "a new link has tries of its own: {}",
        done.text
    );
    let (status, session) = password_grant(srv, "tries", &secret, email, "the right one").await;
    assert_eq!(status, 200, "{session}");
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
