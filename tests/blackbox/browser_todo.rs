//! The to-do example (`examples/todo`) driven in headless Chromium by two browser profiles,
//! as its README has a person set it up: a database with the data API on, `schema.sql` run
//! as the owner (the `todos` table under its row-level security policy), and the example's
//! site published with `database: todo`, supabase-js's browser build in its own bundle
//! (fetched by `examples/todo/fetch-supabase-js.sh`, as `.ci/run` does). Two people, each in
//! a profile of their own (cookies and localStorage apart), sign up, add, tick and delete
//! to-dos and each sees only their own; a reload keeps the session, signing out shows the
//! form again, a taken address and a wrong password show GoTrue's words. The page passes the
//! audit (axe-core, 390 px with no sideways scroll) and leaves a phone-sized screenshot,
//! `target/debug/screenshots/todo-example-phone.png`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::audit::PHONE_WIDTH;
use crate::browser::Driver;
use crate::databases::{create, enable_data_api, sql, with_cluster};
use crate::harness::{Backend, Server};

const PAGES: &str = "/api/page/v1/pages";
const PASSWORD: &str = "correct horse battery";

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/todo")
}

/// The example's site folder as a publish body's `files`, as `quire publish` sends them.
fn site_files(dir: &Path) -> Vec<Value> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the example's site folder") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || !path.is_file() {
            continue;
        }
        let content = std::fs::read_to_string(&path).expect("the example's files are text");
        files.push(json!({ "path": name, "content": content }));
    }
    files
}

impl Driver {
    /// Clicks something that loads no page.
    async fn press(&self, css: &str) {
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }

    /// Waits until the script `expr` (an expression) is true in the page, for what the
    /// page's own requests change.
    async fn until(&self, expr: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let seen = self
                .cmd(
                    reqwest::Method::POST,
                    "/execute/sync",
                    Some(json!({ "script": format!("return !!({expr})"), "args": [] })),
                )
                .await;
            if seen == Value::Bool(true) {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "not within 20 s: {expr}\nstatus: {:?}, error: {:?}\n{}",
                    self.script("return document.getElementById('status').textContent")
                        .await,
                    self.script("return document.getElementById('error').textContent")
                        .await,
                    self.source().await
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The to-dos the page lists, `[x] task` when ticked.
    async fn todos(&self) -> Vec<String> {
        let listed = self
            .script(
                "return [...document.querySelectorAll('#list li')].map(li => \
                 (li.querySelector('input').checked ? '[x] ' : '[ ] ') + \
                 li.querySelector('.task').textContent)",
            )
            .await;
        serde_json::from_value(listed).unwrap()
    }

    /// Signs up (or in) through the page's form.
    async fn sign_up_on_page(&self, email: &str, button: &str) {
        self.until("!document.getElementById('auth').hidden").await;
        self.script(
            "document.getElementById('email').value = ''; \
             document.getElementById('password').value = ''; return true",
        )
        .await;
        self.fill("#email", email).await;
        self.fill("#password", PASSWORD).await;
        self.press(button).await;
    }

    /// Waits until the page shows `email` signed in with their list loaded (`N to-dos.`).
    async fn signed_in_as(&self, email: &str) {
        self.until(&format!(
            "!document.getElementById('todos').hidden && \
             document.getElementById('user-email').textContent === {email:?} && \
             /^\\d+ to-dos?\\.$/.test(document.getElementById('status').textContent)"
        ))
        .await;
    }

    async fn add_todo(&self, task: &str) {
        let before = self.todos().await.len();
        self.fill("#task", task).await;
        self.press("#add").await;
        self.until(&format!(
            "document.querySelectorAll('#list li').length === {}",
            before + 1
        ))
        .await;
    }
}

/// The README's steps through the API: the database, its data API, the schema; the page
/// published with `database: todo`. Returns the page's URL, the database's id and its
/// data API's secret.
async fn set_up(srv: &Server, key: &str) -> (String, String, Value) {
    let made = create(srv, key, json!({ "slug": "todo" })).await;
    let id = made["id"].as_str().unwrap().to_owned();
    let secret = enable_data_api(srv, key, &id).await;
    let schema = std::fs::read_to_string(example().join("schema.sql")).unwrap();
    sql(srv, key, &id, &schema).await.assert_status(200);

    let published = srv
        .post(
            PAGES,
            key,
            json!({
                "title": "To-dos",
                "slug": "todo",
                "access": "public",
                "database": "todo",
                "files": site_files(&example().join("site")),
            }),
        )
        .await;
    let url = published.assert_status(201)["url"]
        .as_str()
        .unwrap()
        .to_owned();
    // The data API's instance starts on its first request, and a request during the start
    // answers `503 database starting`, which supabase-js does not retry: start it first.
    let todos = format!(
        "{}/rest/v1/todos?select=id",
        secret["url"].as_str().unwrap()
    );
    let anon = secret["anonKey"].as_str().unwrap().to_owned();
    crate::harness::eventually("the data API has started", || {
        let (todos, anon) = (todos.clone(), anon.clone());
        async move {
            crate::harness::client()
                .build()
                .unwrap()
                .get(&todos)
                .header("apikey", &anon)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        }
    })
    .await;
    (url, id, secret)
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
#[cfg_attr(
    no_supabase_js,
    ignore = "needs supabase-js's browser build: examples/todo/fetch-supabase-js.sh"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_use_the_todo_example_in_chromium_and_see_only_their_own() {
    assert!(
        example().join("site/supabase.js").is_file(),
        "examples/todo/site/supabase.js is missing: run examples/todo/fetch-supabase-js.sh"
    );
    let Some(amy) = Driver::start().await else {
        return;
    };
    let Some(ben) = Driver::start().await else {
        return;
    };
    let (_db, srv, owner) = with_cluster(Backend::Sqlite, &[]).await;
    let (url, id, secret) = set_up(&srv, &owner.key).await;

    // The page knows its database: its own `-/db.json` (what app.js fetches, relative to
    // the page) says where, with the anon key and never the service role key.
    let config = srv
        .http
        .get(format!("{url}-/db.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(config.status(), 200);
    let config: Value = config.json().await.unwrap();
    assert_eq!(config["url"], secret["url"], "{config}");
    assert_eq!(config["anonKey"], secret["anonKey"], "{config}");
    assert!(
        !config
            .to_string()
            .contains(secret["serviceRoleKey"].as_str().unwrap())
    );

    // Amy signs up and adds two to-dos; ticks one.
    amy.go(&url).await;
    amy.until("/Sign in to see/.test(document.getElementById('status').textContent)")
        .await;
    amy.audit("todo-example-sign-in").await;
    amy.sign_up_on_page("amy@example.com", "#sign-up").await;
    amy.signed_in_as("amy@example.com").await;
    assert!(amy.find("#empty").await.is_some());
    assert_eq!(amy.text("#status").await, "0 to-dos.");
    amy.add_todo("Buy oat milk").await;
    amy.add_todo("Call the plumber").await;
    amy.press("#list li:first-child input[type=checkbox]").await;
    amy.until("document.querySelector('#list li:first-child').classList.contains('done')")
        .await;

    // Ben, in a profile of his own, signs up and sees none of Amy's.
    ben.go(&url).await;
    // Amy's address is taken: GoTrue's words on the page.
    ben.sign_up_on_page("amy@example.com", "#sign-up").await;
    ben.until("!document.getElementById('error').hidden").await;
    let taken = ben.text("#error").await;
    assert!(
        taken.starts_with("Sign-up failed: ") && taken.contains("already registered"),
        "{taken}"
    );
    ben.resize(PHONE_WIDTH, 844).await;
    ben.screenshot("todo-example-error-390").await;
    ben.sign_up_on_page("ben@example.com", "#sign-up").await;
    ben.signed_in_as("ben@example.com").await;
    assert!(
        ben.find("#error[hidden]").await.is_some(),
        "the error goes away"
    );
    assert_eq!(ben.todos().await, Vec::<String>::new());
    ben.add_todo("Water the plants").await;
    assert_eq!(ben.todos().await, ["[ ] Water the plants"]);

    // A reload keeps each one's session (supabase-js keeps it in localStorage) and shows
    // each only their own rows, as the policy says.
    amy.go(&url).await;
    amy.signed_in_as("amy@example.com").await;
    assert_eq!(
        amy.todos().await,
        ["[x] Buy oat milk", "[ ] Call the plumber"]
    );
    ben.go(&url).await;
    ben.signed_in_as("ben@example.com").await;
    assert_eq!(ben.todos().await, ["[ ] Water the plants"]);

    // Amy deletes one; the database agrees with both pages.
    amy.press("#list li:last-child .delete").await;
    amy.until("document.querySelectorAll('#list li').length === 1")
        .await;
    let rows = sql(
        &srv,
        &owner.key,
        &id,
        "select u.email, t.task, t.done from todos t join auth.users u on u.id = t.user_id \
         order by t.id",
    )
    .await;
    assert_eq!(
        rows.assert_status(200)["rows"],
        json!([
            ["amy@example.com", "Buy oat milk", true],
            ["ben@example.com", "Water the plants", false]
        ])
    );

    // What a person sees on a phone: the audit (axe-core, no sideways scroll at 390 px)
    // and its screenshots, then one at the phone's width for the docs.
    amy.add_todo("Book the dentist for next Tuesday afternoon, after work")
        .await;
    amy.audit("todo-example").await;
    amy.resize(PHONE_WIDTH, 844).await;
    amy.screenshot("todo-example-390").await;

    // Signing out shows the form again, and a reload keeps it signed out.
    amy.press("#sign-out").await;
    amy.until("!document.getElementById('auth').hidden && document.getElementById('todos').hidden")
        .await;
    assert_eq!(amy.todos().await, Vec::<String>::new());
    amy.go(&url).await;
    amy.until("!document.getElementById('auth').hidden").await;
    assert!(amy.find("#todos[hidden]").await.is_some());
    // A wrong password: GoTrue's words.
    amy.fill("#email", "amy@example.com").await;
    amy.fill("#password", "not the password").await;
    amy.press("#sign-in").await;
    amy.until("!document.getElementById('error').hidden").await;
    let wrong = amy.text("#error").await;
    assert!(
        wrong.starts_with("Sign-in failed: ") && wrong.contains("Invalid login credentials"),
        "{wrong}"
    );
    // Signing in again brings her list back; Ben's profile is still signed in as Ben.
    amy.sign_up_on_page("amy@example.com", "#sign-in").await;
    amy.signed_in_as("amy@example.com").await;
    assert_eq!(amy.todos().await.len(), 2);
    ben.go(&url).await;
    ben.signed_in_as("ben@example.com").await;
    assert_eq!(ben.todos().await, ["[ ] Water the plants"]);
}
