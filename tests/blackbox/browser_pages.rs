//! Published pages in headless Chromium, on the default layout of a new machine: each
//! owner's pages on an origin of their own (`http://{handle}.localhost:port`), another site
//! than the dashboard (`127.0.0.1`). A password page (form, wrong then right password,
//! reload keeps access, a new password revokes it), a private page whose owner signs in on
//! the dashboard with a second factor and comes back, an allow-list page opened by a listed
//! and an unlisted account, an expired page, and another owner's page that tries to read,
//! frame and unlock them.

use std::time::Duration;

use quire_accounts::TotpSecret;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Account, Backend, Server, TestDb};

const PAGES: &str = "/api/page/v1/pages";

/// A server on the default layout; ann, bob and cat have passwords.
async fn two_hosts() -> Option<(TestDb, Server, Account)> {
    let db = TestDb::create(Backend::Sqlite).await?;
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    db.create_account("bob", &["--password", PASSWORD]);
    db.create_account("cat", &["--password", PASSWORD]);
    let srv = db.start();
    Some((db, srv, ann))
}

fn site(slug: &str, policy: &Value) -> Value {
    let mut body = json!({
        "title": format!("Page {slug}"),
        "slug": slug,
        "files": [
            {"path": "index.html", "content": "<!doctype html><link rel=\"stylesheet\" href=\"style.css\"><h1 id=\"home\">home</h1>"},
            {"path": "style.css", "content": "h1 { color: rgb(0, 128, 128) }"},
        ]
    });
    for (k, v) in policy.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

async fn publish(srv: &Server, key: &str, body: Value) -> String {
    let r = srv.post(PAGES, key, body).await;
    let p = r.assert_status(201);
    let owner = srv.owner(p["url"].as_str().unwrap()[7..].split('.').next().unwrap());
    assert!(
        owner.contains(".localhost:") && p["url"].as_str().unwrap().starts_with(&owner),
        "each owner's pages on an origin of their own: {p}"
    );
    p["id"].as_str().unwrap().to_owned()
}

impl Driver {
    /// The HTTP status of the document on screen (Navigation Timing).
    pub(crate) async fn status(&self) -> u64 {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({
                "script": "return performance.getEntriesByType('navigation')[0].responseStatus",
                "args": []
            })),
        )
        .await
        .as_u64()
        .unwrap_or(0)
    }

    /// The computed colour of the heading: the stylesheet (an asset) loaded too.
    async fn heading_colour(&self) -> String {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({
                "script": "return getComputedStyle(document.getElementById('home')).color",
                "args": []
            })),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    /// Deletes the cookies of the origin on screen.
    async fn forget_cookies(&self) {
        self.cmd(reqwest::Method::DELETE, "/cookie", None).await;
    }
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_page_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    let id = publish(
        &srv,
        &ann.key,
        site(
            "secret",
            &json!({"access": "password", "password": "open sesame"}),
        ),
    )
    .await;
    let url = srv.page("/ann/secret/");
    browser.go(&url).await;
    assert_eq!(browser.status().await, 401);
    assert!(browser.find("#home").await.is_none());
    browser.screenshot("page-password-form").await;
    browser.fill("#password", "wrong").await;
    browser.click("#unlock").await;
    assert!(browser.text("#error").await.contains("not right"));
    browser.fill("#password", "open sesame").await;
    browser.click("#unlock").await;
    assert_eq!(browser.url().await, url);
    assert_eq!(browser.text("#home").await, "home");
    assert_eq!(browser.heading_colour().await, "rgb(0, 128, 128)");

    // A reload keeps access.
    browser.go(&url).await;
    assert_eq!(browser.status().await, 200);
    assert_eq!(browser.text("#home").await, "home");

    // The owner sets a new password: the visitor is asked again.
    srv.patch(
        &format!("{PAGES}/{id}"),
        &ann.key,
        json!({"password": "new words"}),
    )
    .await
    .assert_status(200);
    browser.go(&url).await;
    assert_eq!(browser.status().await, 401);
    assert!(browser.find("#password").await.is_some());
    assert!(browser.find("#home").await.is_none());
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_and_allow_list_pages_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    publish(&srv, &ann.key, site("mine", &json!({"access": "private"}))).await;
    publish(
        &srv,
        &ann.key,
        site("shared", &json!({"access": "allow_list", "allow": ["bob"]})),
    )
    .await;

    // The owner enrolls a second factor, then signs out.
    browser.go(&format!("{}/login", srv.base)).await;
    browser.sign_in("ann").await;
    browser.go(&format!("{}/account/security", srv.base)).await;
    let secret = TotpSecret::parse(&browser.text("#totp-secret").await).unwrap();
    let now = OffsetDateTime::now_utc();
    browser.fill("#code", &secret.code_at(now)).await;
    browser.click("#enroll").await;
    browser.click("#sign-out").await;

    // The private page says what it is and sends her to the dashboard: password, code,
    // and back to the page.
    let mine = srv.page("/ann/mine/");
    browser.go(&mine).await;
    assert_eq!(browser.status().await, 403);
    assert_eq!(browser.text("#gate-title").await, "Page mine");
    browser.click("#sign-in").await;
    assert!(
        browser
            .url()
            .await
            .starts_with(&format!("{}/login?next=", srv.base)),
        "{}",
        browser.url().await
    );
    browser.sign_in("ann").await;
    assert!(browser.url().await.contains("/login/totp"));
    browser
        .fill("#code", &crate::harness::code_after_enrolling(&secret, now))
        .await;
    browser.click("#submit").await;
    assert_eq!(browser.url().await, mine);
    assert_eq!(browser.text("#home").await, "home");
    assert_eq!(browser.heading_colour().await, "rgb(0, 128, 128)");
    browser.screenshot("page-private-after-sign-in").await;

    // Bob is on the allow list of the other page; cat is not. Ann's sign-out also closes
    // her private page in this browser.
    let shared = srv.page("/ann/shared/");
    browser.go(&format!("{}/account/security", srv.base)).await;
    browser.click("#sign-out").await;
    browser.go(&shared).await;
    browser.click("#sign-in").await;
    browser.sign_in("bob").await;
    assert_eq!(browser.url().await, shared);
    assert_eq!(browser.text("#home").await, "home");
    // ...and bob cannot open ann's private page, which the dashboard names.
    browser.go(&mine).await;
    assert_eq!(browser.status().await, 403);
    browser.click("#sign-in").await;
    assert_eq!(browser.status().await, 403);
    assert_eq!(browser.text("#denied-title").await, "Page mine");
    assert!(browser.find("#home").await.is_none());

    browser.go(&shared).await;
    browser.forget_cookies().await;
    browser.go(&format!("{}/account/security", srv.base)).await;
    browser.click("#sign-out").await;
    browser.go(&shared).await;
    browser.click("#sign-in").await;
    browser.sign_in("cat").await;
    assert_eq!(
        browser.status().await,
        403,
        "{}: {}",
        browser.url().await,
        browser.source().await
    );
    assert!(browser.text("#denied").await.contains("not shared"));
    assert!(
        browser
            .text("#denied-email")
            .await
            .contains("cat@example.com")
    );
    assert!(browser.find("#home").await.is_none());
    browser.screenshot("page-allow-list-refused").await;
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_page_in_chromium_is_gone() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((_db, srv, ann)) = two_hosts().await else {
        return;
    };
    // Long enough for a loaded machine to load the page once before it expires; the wait
    // is until the expiry itself has passed.
    let expiry = OffsetDateTime::now_utc() + time::Duration::seconds(6);
    let soon = expiry
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    publish(
        &srv,
        &ann.key,
        site("brief", &json!({"access": "public", "expiresAt": soon})),
    )
    .await;
    let url = srv.page("/ann/brief/");
    browser.go(&url).await;
    assert_eq!(browser.text("#home").await, "home");
    let left = expiry - OffsetDateTime::now_utc() + time::Duration::milliseconds(500);
    tokio::time::sleep(Duration::try_from(left).unwrap_or_default()).await;
    browser.go(&url).await;
    assert_eq!(browser.status().await, 410);
    assert!(
        browser
            .text("#notice")
            .await
            .contains("no longer available")
    );
    browser.screenshot("page-expired").await;
}

/// What another owner's page manages to read of ann's pages from a visitor's browser.
const ATTACK: &str = r#"<!doctype html><title>Free prizes</title><pre id="result"></pre>
<script>
const out = {};
function frame(src) {
  const f = document.createElement('iframe');
  f.src = src;
  document.body.appendChild(f);
  return f;
}
function read(f) {
  try { return f.contentDocument ? f.contentDocument.documentElement.outerHTML : 'no document'; }
  catch (e) { return 'blocked: ' + e.name; }
}
async function attack() {
  try {
    const r = await fetch(SECRET, { credentials: 'include' });
    out.fetchSecret = await r.text();
  } catch (e) { out.fetchSecret = 'blocked: ' + e.name; }
  const opened = frame(SHARED), never = frame(NEVER), visit = frame(VISIT);
  const form = document.createElement('form');
  form.method = 'post'; form.action = UNLOCK; form.target = 'sink';
  for (const [k, v] of [['handle', 'ann'], ['slug', 'secret'], ['password', 'open sesame'], ['next', '']]) {
    const i = document.createElement('input'); i.name = k; i.value = v; form.appendChild(i);
  }
  const sink = frame('about:blank'); sink.name = 'sink';
  document.body.appendChild(form); form.submit();
  await new Promise(r => setTimeout(r, 3000));
  out.opened = read(opened); out.never = read(never); out.visit = read(visit); out.sink = read(sink);
  document.getElementById('result').textContent = JSON.stringify(out);
}
attack();
</script>"#;

/// Another owner's page, opened by a visitor who is signed in on the dashboard and has
/// opened two of ann's protected pages, tries to read them (fetch and frames), to get a pass
/// for a page the visitor never opened (a frame through `/visit`), and to unlock ann's
/// password page from its own origin. It reads nothing, and no pass is handed over.
#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_owners_page_reads_nothing_of_anns_pages_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some((db, srv, ann)) = two_hosts().await else {
        return;
    };
    let bob = db.create_account("eve", &[]);
    publish(
        &srv,
        &ann.key,
        site(
            "secret",
            &json!({"access": "password", "password": "open sesame"}),
        ),
    )
    .await;
    publish(
        &srv,
        &ann.key,
        site("shared", &json!({"access": "allow_list", "allow": ["cat"]})),
    )
    .await;
    let never = srv
        .post(
            PAGES,
            &ann.key,
            site("never", &json!({"access": "allow_list", "allow": ["cat"]})),
        )
        .await;
    let never_code = never.assert_status(201)["public_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (secret, shared) = (srv.page("/ann/secret/"), srv.page("/ann/shared/"));
    let script = ATTACK
        .replace("SECRET", &format!("{secret:?}"))
        .replace("SHARED", &format!("{shared:?}"))
        .replace("NEVER", &format!("{:?}", srv.page("/ann/never/")))
        .replace(
            "VISIT",
            &format!(
                "{:?}",
                format!("{}/visit?page={never_code}&next=", srv.base)
            ),
        )
        .replace(
            "UNLOCK",
            &format!("{:?}", format!("{}/-/unlock", srv.owner("ann"))),
        );
    let attack = srv
        .post(
            PAGES,
            &bob.key,
            json!({"title": "Prizes", "slug": "prizes", "access": "public",
                   "files": [{"path": "index.html", "content": script}]}),
        )
        .await;
    attack.assert_status(201);

    // The visitor: cat, signed in, has opened ann's shared page and unlocked her secret one.
    browser.go(&shared).await;
    browser.click("#sign-in").await;
    browser.sign_in("cat").await;
    assert_eq!(browser.url().await, shared);
    assert_eq!(browser.text("#home").await, "home");
    browser.go(&secret).await;
    browser.fill("#password", "open sesame").await;
    browser.click("#unlock").await;
    assert_eq!(browser.text("#home").await, "home");

    browser.go(&srv.page("/eve/prizes/")).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let result = loop {
        let text = browser.text("#result").await;
        if !text.is_empty() {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the attack page never finished"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    browser.screenshot("page-attacker").await;
    let out: Value = serde_json::from_str(&result).unwrap();
    for field in ["fetchSecret", "opened", "never", "visit", "sink"] {
        let seen = out[field].as_str().unwrap_or_default();
        assert!(
            !seen.contains("id=\"home\"") && !seen.contains("open-page"),
            "{field} read ann's page: {seen}"
        );
    }
    assert!(
        out["fetchSecret"].as_str().unwrap().starts_with("blocked"),
        "{result}"
    );
    for frame in ["opened", "never", "visit"] {
        let seen = out[frame].as_str().unwrap();
        assert!(
            seen.starts_with("blocked") || seen == "no document",
            "{frame} is another origin's document: {result}"
        );
    }

    // No pass reached ann's origin for the page the visitor never opened.
    browser.go(&format!("{}/-/healthz", srv.owner("ann"))).await;
    let cookies = browser.cmd(reqwest::Method::GET, "/cookie", None).await;
    let names: Vec<&str> = cookies
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"quire_access_shared"), "{names:?}");
    assert!(!names.contains(&"quire_access_never"), "{names:?}");
}
