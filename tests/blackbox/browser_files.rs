//! The Files page and uploaded files in headless Chromium. A person signs in, uploads a file
//! through the page's file input (the progress bar fills, the row appears), drops another on
//! the drop zone with its settings filled in, sees a file over the cap refused (by the page,
//! and by the server when the page's own check is bypassed), opens a file, changes who may
//! download it and deletes it; each page passes the audit (axe-core, 390 px). And uploaded
//! HTML and SVG whose script would set the title, a cookie and call out run nothing when
//! opened, navigated to or framed on the owner's origin: they are sandboxed attachments,
//! which Chromium downloads instead of rendering.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::Driver;
use crate::dashboard::PASSWORD;
use crate::harness::{Backend, TestDb};

impl Driver {
    /// Runs `script` (its `arguments[0]` is `arg`) in the page and returns its value.
    async fn run(&self, script: &str, arg: Value) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": [arg] })),
        )
        .await
    }

    /// Waits until the browser shows a URL containing `part`.
    async fn wait_for_url(&self, part: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let url = self.url().await;
            let ready = self.run("return document.readyState", Value::Null).await;
            if url.contains(part) && ready == "complete" {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "never reached {part}: at {url}\n{}",
                self.source().await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Records every value the upload's progress bar and status line take, in this tab's
    /// session storage (it outlives the navigation that follows a finished upload).
    async fn watch_progress(&self) {
        self.run(
            "sessionStorage.setItem('progress', '[]'); \
             const note = () => { const seen = JSON.parse(sessionStorage.getItem('progress')); \
               seen.push([document.getElementById('upload-progress').value, \
                          document.getElementById('upload-text').textContent]); \
               sessionStorage.setItem('progress', JSON.stringify(seen)); }; \
             const watch = new MutationObserver(note); \
             watch.observe(document.getElementById('upload-progress'), { attributes: true }); \
             watch.observe(document.getElementById('upload-text'), { childList: true, characterData: true, subtree: true });",
            Value::Null,
        )
        .await;
    }

    async fn progress_seen(&self) -> Vec<(u64, String)> {
        let seen = self
            .run("return sessionStorage.getItem('progress')", Value::Null)
            .await;
        serde_json::from_str::<Vec<(f64, String)>>(seen.as_str().unwrap_or("[]"))
            .unwrap()
            .into_iter()
            .map(|(v, t)| (v as u64, t))
            .collect()
    }
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_uploads_changes_and_deletes_a_file_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    db.create_account("ann", &["--password", PASSWORD]);
    let srv = db.start_with(&[("QUIRE_MAX_OBJECT_BYTES", "400000")]);
    let base = srv.base.clone();
    browser.go(&format!("{base}/login")).await;
    browser.sign_in("ann").await;
    browser.go(&format!("{base}/account/files")).await;
    assert_eq!(
        browser.text("nav.site-nav a[aria-current=page]").await,
        "Files"
    );
    assert!(browser.find("#empty").await.is_some());
    browser.audit("files-empty").await;

    // Through the file input, as a keyboard user or a test chooses a file: the upload starts,
    // the bar fills, and the list shows the new row.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("quarterly-report.pdf");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&report, &bytes).unwrap();
    browser.watch_progress().await;
    browser.fill("#file", &report.display().to_string()).await;
    browser.wait_for_url("uploaded=").await;
    let seen = browser.progress_seen().await;
    assert!(
        seen.iter()
            .any(|(v, t)| *v == 100 && t.contains("Uploaded quarterly-report.pdf (293.0 KiB)")),
        "the bar filled and the upload was reported: {seen:?}"
    );
    assert!(
        seen.iter().any(|(_, t)| t.contains("of 293.0 KiB")),
        "{seen:?}"
    );
    assert!(
        browser
            .text("#uploaded")
            .await
            .contains("quarterly-report.pdf")
    );
    let rows = browser.text("#files").await;
    assert!(
        rows.contains("quarterly-report.pdf") && rows.contains("293.0 KiB"),
        "{rows}"
    );
    browser.audit("files").await;

    // Dropped on the zone, with a title and access filled in first: they are saved on the
    // new file, which opens on its page.
    browser.click_only("#upload-form summary").await;
    browser.fill("#title", "Launch plan").await;
    browser
        .run(
            "document.getElementById('access').value = arguments[0]",
            json!("public"),
        )
        .await;
    browser
        .run(
            "const data = new DataTransfer(); \
             data.items.add(new File([arguments[0]], 'plan.txt', { type: 'text/plain' })); \
             document.getElementById('drop-zone').dispatchEvent( \
               new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));",
            json!("the launch plan"),
        )
        .await;
    browser.wait_for_url("/account/files/").await;
    assert_eq!(browser.text("h1").await, "Launch plan Public active");
    assert_eq!(browser.text("#file-filename").await, "plan.txt");
    assert_eq!(browser.text("#file-type").await, "text/plain");
    let plan_url = browser.text("#file-url").await;
    let visitor = crate::harness::client().build().unwrap();
    let r = visitor.get(&plan_url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "the launch plan");

    // Over the cap: the page refuses it without sending it; and when its check is bypassed,
    // the server's 413 is shown as clearly.
    browser.go(&format!("{base}/account/files")).await;
    let big = dir.path().join("huge.bin");
    std::fs::write(&big, vec![0u8; 500_000]).unwrap();
    browser.fill("#file", &big.display().to_string()).await;
    let said = browser.text("#upload-error").await;
    assert!(
        said.contains("huge.bin") && said.contains("at most 390.6 KiB"),
        "{said}"
    );
    browser
        .run(
            "document.getElementById('upload-form').removeAttribute('data-max-bytes')",
            Value::Null,
        )
        .await;
    let big = dir.path().join("huge-again.bin");
    std::fs::write(&big, vec![0u8; 500_000]).unwrap();
    browser.fill("#file", &big.display().to_string()).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let said = loop {
        let said = browser
            .run(
                "const e = document.getElementById('upload-error'); return e.hidden ? '' : e.textContent;",
                Value::Null,
            )
            .await;
        if said.as_str().is_some_and(|s| !s.is_empty()) {
            break said.as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no refusal shown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        said.contains("huge-again.bin is too large") && said.contains("400000 bytes"),
        "{said}"
    );
    assert_eq!(
        browser
            .script("return document.querySelectorAll('#files tbody tr').length")
            .await,
        2
    );

    // The detail: change who may download it, then delete it.
    let id = browser
        .run(
            "return [...document.querySelectorAll('#files tbody tr')] \
               .find(row => row.textContent.includes(arguments[0])).id.slice(5)",
            json!("quarterly-report.pdf"),
        )
        .await
        .as_str()
        .unwrap()
        .to_owned();
    browser.click(&format!("#open-{id}")).await;
    assert!(browser.text("#file-sha256").await.len() == 64);
    browser.audit("file-detail").await;
    browser
        .run(
            "document.getElementById('access').value = arguments[0]",
            json!("public"),
        )
        .await;
    browser.fill("#max_views", "3").await;
    browser.click("#save").await;
    assert_eq!(
        browser.text("#file-access").await,
        "Anyone with the link (public)"
    );
    assert_eq!(browser.text("#file-views").await, "0 of 3");
    browser.click_only("#confirm-delete").await;
    browser.click("#delete").await;
    assert_eq!(
        browser.url().await,
        format!("{base}/account/files?project=ann")
    );
    let rows = browser.text("#files").await;
    assert!(
        !rows.contains("quarterly-report.pdf") && rows.contains("Launch plan"),
        "{rows}"
    );
}

impl Driver {
    /// Clicks something that loads no page (a checkbox, a summary).
    async fn click_only(&self, css: &str) {
        let id = self.element(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            Some(json!({})),
        )
        .await;
    }
}

/// A listener that notes the path of every request it gets: what a script that ran would
/// have called.
async fn beacon() -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let noted = heard.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 8192];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            if let Some(path) = head.split_whitespace().nth(1) {
                noted.lock().unwrap().push(path.to_owned());
            }
            let _ = sock
                .write_all(
                    b"HTTP/1.1 204 No Content\r\naccess-control-allow-origin: *\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    });
    (format!("http://{addr}"), heard)
}

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploaded_html_and_svg_run_no_script_on_the_owner_origin_in_chromium() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let Some(db) = TestDb::create(Backend::Sqlite).await else {
        return;
    };
    let ann = db.create_account("ann", &[]);
    let srv = db.start();
    let (listener, heard) = beacon().await;

    // A page of ann's whose script runs (the control: the listener hears it), and two
    // objects whose scripts would, each with its own marker.
    let page = srv
        .post(
            "/api/page/v1/pages",
            &ann.key,
            json!({"title": "Home", "slug": "home", "access": "public", "files": [{
                "path": "index.html",
                "content": format!("<!doctype html><title>Home</title><h1>Home</h1>\
                    <script>document.title = 'page ran'; new Image().src = '{listener}/page';</script>")
            }]}),
        )
        .await;
    let home = page.assert_status(201)["url"].as_str().unwrap().to_owned();
    let would_run = |marker: &str| {
        format!(
            "document.title = '{marker} ran'; document.cookie = '{marker}=ran; path=/'; \
             fetch('{listener}/{marker}', {{ mode: 'no-cors' }}); new Image().src = '{listener}/{marker}-image';"
        )
    };
    let mut objects = Vec::new();
    for (filename, kind, body) in [
        (
            "evil.html",
            "text/html",
            format!(
                "<!doctype html><title>evil</title><script>{}</script><img src=\"{listener}/html-tag\">",
                would_run("html")
            ),
        ),
        (
            "evil.svg",
            "image/svg+xml",
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"{}\"><script>{}</script>\
                 <image href=\"{listener}/svg-tag\"/></svg>",
                would_run("svgload").replace('\'', "&apos;"),
                would_run("svg")
            ),
        ),
    ] {
        let r = srv
            .http
            .put(format!(
                "{}/api/object/v1/objects?filename={filename}&access=public",
                srv.base
            ))
            .bearer_auth(&ann.key)
            .header("content-type", kind)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let made: Value = r.json().await.unwrap();
        let url = made["url"].as_str().unwrap().to_owned();
        // What the owner's origin answers, as any client sees it.
        let r = srv.http.get(&url).send().await.unwrap();
        let h = r.headers();
        assert!(
            h["content-disposition"]
                .to_str()
                .unwrap()
                .starts_with("attachment;")
        );
        assert!(
            h["content-security-policy"]
                .to_str()
                .unwrap()
                .starts_with("sandbox")
        );
        assert_eq!(h["x-content-type-options"], "nosniff");
        objects.push(url);
    }

    browser.go(&home).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !heard.lock().unwrap().contains(&"/page".to_owned()) {
        assert!(
            Instant::now() < deadline,
            "the control page's script did not run"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        browser.run("return document.title", Value::Null).await,
        "page ran"
    );

    for url in &objects {
        // Framed by a page of the same origin: the frame gets no document of it.
        browser
            .run(
                "const f = document.createElement('iframe'); f.src = arguments[0]; \
                 document.body.appendChild(f);",
                json!(url),
            )
            .await;
        // Navigated to from a page of the same origin, as a link would: Chromium takes an
        // attachment as a download, and the page that asked stays.
        browser
            .run("location.href = arguments[0]", json!(url))
            .await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(
            browser.url().await,
            home,
            "no document of the object committed"
        );
        assert_eq!(
            browser.run("return document.title", Value::Null).await,
            "page ran"
        );
    }
    // Opened by typing its address (WebDriver's navigation): a download too; the home page
    // stays on screen, as it was.
    for url in &objects {
        browser.go(url).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(browser.url().await, home, "{url} committed a document");
        assert_eq!(
            browser.run("return document.title", Value::Null).await,
            "page ran",
            "{url} rendered"
        );
    }
    browser.go(&home).await;
    let cookies = browser.run("return document.cookie", Value::Null).await;
    assert!(
        !cookies.as_str().unwrap().contains("=ran"),
        "a cookie was set: {cookies}"
    );
    // Give a late request time to arrive, then: the control only.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard.iter().all(|p| p == "/page"),
        "a script or tag of an object ran: {heard:?}"
    );
}
