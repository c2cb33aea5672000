//! The `quire` CLI's page commands as a person uses them: publish titled from the site,
//! pages named by slug or short link, one-line updates, and a delete that asks first.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;

use crate::cli::{User, site};
use crate::dashboard::{Browser, DECISION, with_password};
use crate::harness::{Backend, Server, on_both_backends};

/// A CLI user signed in as `ann` through the device login.
async fn signed_in(srv: &Server) -> User {
    let user = User::new(srv);
    log_in(srv, &user).await;
    user
}

/// Runs `quire login` for `user`, approved in the dashboard as `ann`.
async fn log_in(srv: &Server, user: &User) {
    let (child, url) = user.start_login();
    let code = url
        .split("code=")
        .nth(1)
        .expect("code in the link")
        .to_owned();
    let mut browser = Browser::new(srv);
    assert_eq!(browser.sign_in("ann").await.status, 303);
    let r = browser
        .post(DECISION, &[("code", &code), ("decision", "approve")])
        .await;
    assert_eq!(r.status, 303);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn publish_names_and_describes_pages(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = signed_in(&srv).await;
    let whoami = user.ok(&["whoami"]);
    assert!(whoami.contains("ann <ann@example.com>"), "{whoami}");
    let me = user.ok_json(&["whoami"]);
    assert_eq!(
        (me["handle"].as_str(), me["email"].as_str()),
        (Some("ann"), Some("ann@example.com"))
    );

    // The title comes from index.html's <title>, else from the folder's name.
    let titled = user.home.path().join("titled");
    site(&titled);
    std::fs::write(
        titled.join("index.html"),
        "<html><head><title> My &amp; Notes </title></head><body>hi</body></html>",
    )
    .unwrap();
    let text = user.ok(&["publish", titled.to_str().unwrap()]);
    assert!(
        text.starts_with("Published \"My & Notes\" as my-notes"),
        "{text}"
    );
    assert!(
        text.contains("Who can open it: only you (private)"),
        "{text}"
    );
    let last = text.trim_end().lines().last().unwrap();
    assert!(last.starts_with("Short URL: http"), "{text}");
    assert_eq!(
        user.ok_json(&["pages", "get", "my-notes"])["title"],
        "My & Notes"
    );

    let untitled = user.home.path().join("field-guide");
    site(&untitled);
    std::fs::write(untitled.join("index.html"), "<title></title><p>x</p>").unwrap();
    let text = user.ok(&["publish", untitled.to_str().unwrap(), "--access", "public"]);
    assert!(
        text.contains("Who can open it: anyone with the link (public)"),
        "{text}"
    );
    let guide = user.ok_json(&["pages", "get", "field-guide"]);
    assert_eq!(guide["title"], "field-guide");

    // A page by its short link or its code, as by its slug or id.
    let short = guide["shortUrl"].as_str().unwrap().to_owned();
    let code = short.rsplit('/').next().unwrap().to_owned();
    let id = guide["id"].as_str().unwrap().to_owned();
    for name in [&short, &code, &id] {
        assert_eq!(user.ok_json(&["pages", "get", name])["id"], id.as_str());
    }
    assert!(user.ok(&["pages", "files", &code]).contains("css/site.css"));
    // Slugs are found in every project of the account, not just the home one.
    user.ok(&[
        "projects",
        "create",
        "--name",
        "Docs",
        "--slug",
        "docs_site",
    ]);
    let handbook = user.ok_json(&[
        "publish",
        titled.to_str().unwrap(),
        "--new",
        "--project",
        "docs_site",
        "--slug",
        "handbook",
    ]);
    assert_eq!(
        user.ok_json(&["pages", "get", "handbook"])["id"],
        handbook["id"]
    );
    let (_, err) = user.fails(&["pages", "get", "no-such-page"]);
    assert!(err.contains("no page named no-such-page"), "{err}");
    // A slug that is also another page's short code is ambiguous: the id is asked for.
    let other = user.ok_json(&[
        "publish",
        titled.to_str().unwrap(),
        "--new",
        "--title",
        "Other",
        "--alias",
        "my-notes",
    ]);
    let (_, err) = user.fails(&["pages", "get", "my-notes"]);
    assert!(
        err.contains("names 2 pages") && err.contains("give the id"),
        "{err}"
    );
    user.ok(&["pages", "delete", other["id"].as_str().unwrap(), "--yes"]);

    // Update: one line, JSON only with --json; relative expiry and cleared limits.
    let line = user.ok(&[
        "pages",
        "update",
        "my-notes",
        "--access",
        "public",
        "--expires",
        "7d",
        "--max-views",
        "9",
    ]);
    assert!(
        line.starts_with("updated my-notes: access public, expires 20"),
        "{line}"
    );
    assert!(line.trim_end().ends_with("UTC, max views 9"), "{line}");
    assert_eq!(line.trim_end().lines().count(), 1, "{line}");
    let page = user.ok_json(&["pages", "get", "my-notes"]);
    let expires = time::OffsetDateTime::parse(
        page["expiresAt"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let ahead = expires - time::OffsetDateTime::now_utc();
    assert!(
        ahead > time::Duration::days(6) && ahead <= time::Duration::days(7),
        "{ahead}"
    );
    let line = user.ok(&[
        "pages",
        "update",
        "my-notes",
        "--no-expiry",
        "--no-max-views",
    ]);
    assert_eq!(
        line.trim_end(),
        "updated my-notes: no expiry, no view limit"
    );
    let page = user.ok_json(&["pages", "update", "my-notes", "--title", "Notes"]);
    assert_eq!(
        (
            page["title"].as_str(),
            &page["expiresAt"],
            &page["maxViews"]
        ),
        (Some("Notes"), &Value::Null, &Value::Null)
    );

    // The password from standard input, first line only.
    let mut child = user
        .command(&[
            "pages",
            "update",
            "my-notes",
            "--access",
            "password",
            "--password-stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"open sesame\nignored\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        line.trim_end(),
        "updated my-notes: access password, new password"
    );

    // Delete without a terminal needs --yes: exit 2 and nothing deleted.
    let refused = user.run(&["pages", "delete", "my-notes"]);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("not a terminal") && err.contains("--yes"),
        "{err}"
    );
    user.ok(&["pages", "get", "my-notes"]);
    assert!(
        user.ok(&["pages", "delete", "my-notes", "--yes"])
            .contains("Deleted my-notes")
    );
    let (_, err) = user.fails(&["pages", "get", "my-notes"]);
    assert!(err.contains("no page named my-notes"), "{err}");
}

/// Runs `quire ARGS` on a pseudo-terminal (util-linux `script`) fed `input`.
fn on_a_terminal(user: &User, args: &str, input: &[u8]) -> std::process::Output {
    let quire = crate::cli::quire_bin().to_str().unwrap().to_owned();
    let mut child = std::process::Command::new("script")
        .args(["-qec", &format!("{quire} {args}"), "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", user.home.path())
        .env("QUIRE_CONFIG_DIR", user.config_dir())
        .env("QUIRE_URL", &user.server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) is on PATH");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

async fn delete_asks_on_a_terminal(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = signed_in(&srv).await;
    let dir = user.home.path().join("doomed");
    site(&dir);
    user.ok(&["publish", dir.to_str().unwrap()]);

    let kept = on_a_terminal(&user, "pages delete doomed", b"n\n");
    let shown = String::from_utf8_lossy(&kept.stdout);
    assert!(shown.contains("Delete page doomed? [y/N]"), "{shown}");
    assert_eq!(kept.status.code(), Some(2), "{shown}");
    user.ok(&["pages", "get", "doomed"]);

    let gone = on_a_terminal(&user, "pages delete doomed", b"y\n");
    let shown = String::from_utf8_lossy(&gone.stdout);
    assert!(gone.status.success(), "{shown}");
    assert!(shown.contains("Deleted doomed."), "{shown}");
    let (_, err) = user.fails(&["pages", "get", "doomed"]);
    assert!(err.contains("no page named doomed"), "{err}");
}

on_both_backends!(
    publish_names_and_describes_pages,
    publishing_a_folder_again_replaces_its_page,
    logout_and_login_revoke_the_cli_key,
);

/// The test that needs `script`, in a module of its own: each use of the macro makes its
/// `sqlite` and `postgres` modules.
mod terminal {
    use super::delete_asks_on_a_terminal;
    use crate::harness::on_both_backends;

    on_both_backends!(
        #[cfg_attr(
            no_script,
            ignore = "needs util-linux's script: apt-get install util-linux"
        )]
        delete_asks_on_a_terminal
    );
}

/// The stored key of a CLI user.
fn stored_key(user: &User) -> String {
    let stored: Value =
        serde_json::from_slice(&std::fs::read(user.config_dir().join("config.json")).unwrap())
            .unwrap();
    stored["key"].as_str().unwrap_or_default().to_owned()
}

/// Fetches a page's URL: (status, body).
async fn visit(url: &str) -> (u16, String) {
    let r = crate::harness::client()
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn publishing_a_folder_again_replaces_its_page(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = signed_in(&srv).await;
    let dir = user.home.path().join("blog");
    site(&dir);
    let first = user.ok_json(&["publish", dir.to_str().unwrap(), "--access", "public"]);
    let id = first["id"].as_str().unwrap().to_owned();
    let url = first["url"].as_str().unwrap().to_owned();
    let remembered: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".quire/page.json")).unwrap()).unwrap();
    assert_eq!(remembered["pageId"], id.as_str());
    assert_eq!(remembered["server"], srv.base.as_str());
    assert!(!remembered.to_string().contains("qk_"), "{remembered}");

    // New content, a file removed, another added: the same page at the same URL.
    std::fs::write(dir.join("index.html"), "<h1>Second edition</h1>").unwrap();
    std::fs::remove_file(dir.join("logo.bin")).unwrap();
    std::fs::write(dir.join("notes.txt"), "more").unwrap();
    let text = user.ok(&["publish", dir.to_str().unwrap()]);
    assert_eq!(
        text.trim_end(),
        format!(
            "Updated {url} (3 files, {} bytes); who can open it: anyone with the link (public)",
            "<h1>Second edition</h1>".len() + "h1 { color: teal }".len() + 4
        )
    );
    let listed = user.ok_json(&["pages", "list"]);
    let pages = listed["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 1, "one page: {listed}");
    assert_eq!(
        visit(&url).await,
        (200, "<h1>Second edition</h1>".to_owned())
    );
    assert_eq!(visit(&format!("{url}logo.bin")).await.0, 404);
    assert_eq!(visit(&format!("{url}notes.txt")).await.0, 200);
    let files = user.ok(&["pages", "files", &id]);
    assert!(
        !files.contains(".quire"),
        "page.json is not uploaded: {files}"
    );

    // Settings are not taken on a redeploy: refused, nothing changed.
    let (_, err) = user.fails(&["publish", dir.to_str().unwrap(), "--title", "New title"]);
    assert!(err.contains("--title") && err.contains("--new"), "{err}");

    // --new makes another page, and the folder then remembers that one.
    let second = user.ok_json(&["publish", dir.to_str().unwrap(), "--new"]);
    let second_id = second["id"].as_str().unwrap().to_owned();
    assert_ne!(second_id, id);
    assert_eq!(
        user.ok_json(&["pages", "list"])["pages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    user.ok(&["publish", dir.to_str().unwrap()]);
    assert_eq!(
        user.ok_json(&["pages", "list"])["pages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The remembered page deleted: said, and a new page published and remembered.
    user.ok(&["pages", "delete", &second_id, "--yes"]);
    let out = user.run(&["--json", "publish", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is gone") && stderr.contains("publishing a new one"),
        "{stderr}"
    );
    let third: Value = serde_json::from_slice(&out.stdout).unwrap();
    let remembered: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".quire/page.json")).unwrap()).unwrap();
    assert_eq!(remembered["pageId"], third["id"]);
    assert_ne!(third["id"], second_id.as_str());
}

async fn logout_and_login_revoke_the_cli_key(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = signed_in(&srv).await;
    let first = stored_key(&user);
    assert_eq!(srv.get("/api/platform/v1/keys", &first).await.status, 200);
    // A second login replaces the first key: revoked on the server, not kept beside it.
    log_in(&srv, &user).await;
    let second = stored_key(&user);
    assert_ne!(first, second);
    srv.get("/api/platform/v1/keys", &first)
        .await
        .assert_error(401, "invalid_api_key");
    let keys = srv.get("/api/platform/v1/keys", &second).await;
    let live = keys.assert_status(200)["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["revokedAt"].is_null())
        .count();
    let text = user.ok(&["logout"]);
    assert!(text.contains("revoked"), "{text}");
    srv.get("/api/platform/v1/keys", &second)
        .await
        .assert_error(401, "invalid_api_key");
    assert!(stored_key(&user).is_empty());
    assert!(user.ok(&["logout"]).contains("Not logged in"));
    assert_eq!(
        live, 2,
        "the key made at setup and the CLI's one: {}",
        keys.text
    );
}
