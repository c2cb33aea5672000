//! The bounded load sent through nginx: publishers, visitors of a public page (and its short
//! link), of a password page and of a budgeted page, and device logins. Every request is
//! timed and kept; what a worker finds wrong other than a 5xx or a lost connection (judged
//! later, against the time of the kill) is kept as a problem.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serving::PAGES;

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Publish,
    Public,
    ShortLink,
    Unlock,
    Password,
    Budget,
    DeviceStart,
    SignIn,
    Decision,
    Token,
    KeyUse,
}

/// One request: when it was sent, when its answer (or failure) came, and its status (`None`:
/// no answer, the connection failed).
#[derive(Debug)]
pub struct Sample {
    pub kind: Kind,
    pub start: Instant,
    pub end: Instant,
    pub status: Option<u16>,
    pub error: String,
}

/// A page whose publish was acknowledged (201), or was sent and never answered.
#[derive(Debug, Clone)]
pub struct Publish {
    pub slug: String,
    pub id: Option<String>,
    pub index: String,
}

pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

/// The shared state of the load run.
pub struct Load {
    pub http: reqwest::Client,
    /// `https://quire.example.test:port`, `https://ann.pages.example.test:port` and the bare
    /// pages domain, all through nginx.
    pub api: String,
    pub pages: String,
    pub links: String,
    pub key: String,
    pub password: String,
    pub home: String,
    pub until: Instant,
    pub samples: Mutex<Vec<Sample>>,
    pub problems: Mutex<Vec<String>>,
    pub acked: Mutex<Vec<Publish>>,
    pub unanswered: Mutex<Vec<Publish>>,
    pub logins: AtomicUsize,
}

impl Load {
    fn running(&self) -> bool {
        Instant::now() < self.until
    }

    async fn send(&self, kind: Kind, req: reqwest::RequestBuilder) -> Option<Answer> {
        let start = Instant::now();
        let answer = async {
            let resp = req.send().await?;
            let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
            Ok::<_, reqwest::Error>(Answer {
                status,
                headers,
                text: resp.text().await?,
            })
        }
        .await;
        let (status, error) = match &answer {
            Ok(a) => (Some(a.status), String::new()),
            Err(e) => (None, format!("{e:?}")),
        };
        self.samples.lock().unwrap().push(Sample {
            kind,
            start,
            end: Instant::now(),
            status,
            error,
        });
        answer.ok()
    }

    /// `answer` when it has one of the `expected` statuses; a 5xx or a lost connection is
    /// judged later; anything else is a problem.
    fn expect(&self, what: &str, answer: Option<Answer>, expected: &[u16]) -> Option<Answer> {
        let a = answer?;
        if expected.contains(&a.status) {
            return Some(a);
        }
        if a.status < 500 {
            let text: String = a.text.chars().take(300).collect();
            self.problem(format!("{what}: {} {text}", a.status));
        }
        None
    }

    fn problem(&self, what: String) {
        self.problems.lock().unwrap().push(what);
    }

    fn form(&self, url: &str, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
        self.http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap())
    }
}

/// The `name=value` of the first cookie an answer sets.
fn cookie(a: &Answer) -> String {
    let set = a
        .headers
        .get("set-cookie")
        .map_or("", |v| v.to_str().unwrap());
    set.split(';').next().unwrap_or_default().to_owned()
}

/// Publishes new pages of two files until the run ends.
pub async fn publisher(load: &Load, worker: usize) {
    let mut n = 0;
    while load.running() {
        n += 1;
        let slug = format!("w{worker}-{n}");
        let index = format!(
            "<!doctype html><title>{slug}</title><p>{}</p>",
            uuid::Uuid::new_v4()
        );
        let body = json!({
            "title": slug, "slug": slug, "access": "public",
            "files": [
                {"path": "index.html", "content": index},
                {"path": "notes/a.txt", "content": slug.repeat(200)},
            ],
        });
        let req = load
            .http
            .post(format!("{}{PAGES}", load.api))
            .bearer_auth(&load.key)
            .json(&body);
        let answer = load.send(Kind::Publish, req).await;
        let lost = answer.as_ref().is_none_or(|a| a.status >= 500);
        let published = Publish {
            slug,
            id: None,
            index,
        };
        if lost {
            load.unanswered.lock().unwrap().push(published);
        } else if let Some(a) = load.expect("publish", answer, &[201]) {
            let v: Value = serde_json::from_str(&a.text).unwrap();
            let id = v["id"].as_str().map(str::to_owned);
            load.acked.lock().unwrap().push(Publish { id, ..published });
        }
    }
}

/// Visits the public page, and every fifth time its short link on the bare pages domain.
pub async fn public_visitor(load: &Load) {
    let page = format!("{}/public/", load.pages);
    let mut n = 0;
    while load.running() {
        n += 1;
        if n % 5 == 0 {
            let req = load.http.get(format!("{}/s/hello", load.links));
            let a = load.send(Kind::ShortLink, req).await;
            if let Some(a) = load.expect("short link", a, &[302])
                && a.headers.get("location").is_none_or(|l| l != page.as_str())
            {
                load.problem(format!("short link to {:?}", a.headers.get("location")));
            }
        }
        let a = load.send(Kind::Public, load.http.get(&page)).await;
        if let Some(a) = load.expect("public page", a, &[200])
            && a.text != load.home
        {
            load.problem(format!("public page: {}", a.text));
        }
    }
}

/// Unlocks the password page through its form, then reads it five times with the cookie.
pub async fn password_visitor(load: &Load) {
    let unlock = format!("{}/-/unlock", load.pages);
    while load.running() {
        let form = [
            ("handle", "ann"),
            ("slug", "secret"),
            ("next", ""),
            ("password", load.password.as_str()),
        ];
        let req = load.form(&unlock, &form).header("origin", &load.pages);
        let Some(a) = load.expect("unlock", load.send(Kind::Unlock, req).await, &[303]) else {
            continue;
        };
        let cookie = cookie(&a);
        for _ in 0..5 {
            let req = load
                .http
                .get(format!("{}/secret/", load.pages))
                .header("cookie", &cookie);
            let a = load.send(Kind::Password, req).await;
            if let Some(a) = load.expect("password page", a, &[200])
                && a.text != load.home
            {
                load.problem(format!("password page: {}", a.text));
            }
        }
    }
}

/// Visits the budgeted page, 200 while its budget lasts and 410 after, a little apart.
pub async fn budget_visitor(load: &Load) {
    let page = format!("{}/budget/", load.pages);
    while load.running() {
        let a = load.send(Kind::Budget, load.http.get(&page)).await;
        if let Some(a) = load.expect("budgeted page", a, &[200, 410])
            && a.status == 200
            && a.text != load.home
        {
            load.problem(format!("budgeted page: {}", a.text));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Device logins (RFC 8628) one after another, a second apart: the agent starts one, the
/// person signs in to the dashboard and approves, the agent claims its key and uses it.
pub async fn device_logins(load: &Load) {
    // The start is limited to ten per client address; stay under it.
    for _ in 0..8 {
        if !load.running() {
            return;
        }
        if device_login(load).await.is_some() {
            load.logins.fetch_add(1, Ordering::Relaxed);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn device_login(load: &Load) -> Option<()> {
    let api = &load.api;
    let start = load.form(
        &format!("{api}/api/agent-login/device_authorization"),
        &[("client_name", "replica test")],
    );
    let a = load.expect(
        "device start",
        load.send(Kind::DeviceStart, start).await,
        &[200],
    )?;
    let grant: Value = serde_json::from_str(&a.text).unwrap();
    let (device_code, user_code) = (
        grant["device_code"].as_str().unwrap(),
        grant["user_code"].as_str().unwrap(),
    );
    let sign_in = load
        .form(
            &format!("{api}/login"),
            &[
                ("login", "ann"),
                ("password", load.password.as_str()),
                ("next", "/authorize-agent"),
            ],
        )
        .header("origin", api);
    let a = load.expect("sign-in", load.send(Kind::SignIn, sign_in).await, &[303])?;
    let session = cookie(&a);
    let decision = load
        .form(
            &format!("{api}/api/agent-login/decision"),
            &[("code", user_code), ("decision", "approve")],
        )
        .header("origin", api)
        .header("cookie", &session);
    load.expect(
        "decision",
        load.send(Kind::Decision, decision).await,
        &[303],
    )?;
    let poll = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("device_code", device_code),
    ];
    let mut key = None;
    for _ in 0..5 {
        let req = load.form(&format!("{api}/api/agent-login/token"), &poll);
        let a = load.expect("token", load.send(Kind::Token, req).await, &[200, 400])?;
        let v: Value = serde_json::from_str(&a.text).unwrap_or(Value::Null);
        if let Some(k) = v["access_token"].as_str() {
            key = Some(k.to_owned());
            break;
        }
        if !matches!(
            v["error"].as_str(),
            Some("authorization_pending" | "slow_down")
        ) {
            load.problem(format!("token: {}", a.text));
            return None;
        }
        let wait = v["interval"].as_u64().unwrap_or(3);
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
    let use_key = load
        .http
        .get(format!("{api}/api/platform/v1/projects"))
        .bearer_auth(key?);
    load.expect(
        "the new key",
        load.send(Kind::KeyUse, use_key).await,
        &[200],
    )?;
    Some(())
}
