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
    assert!(out.status.success());
    user
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

/// Runs `quire ARGS` on a pseudo-terminal (util-linux `script`) fed `input`; `None` when
/// `script` is not installed.
fn on_a_terminal(user: &User, args: &str, input: &[u8]) -> Option<std::process::Output> {
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
        .ok()?;
    child.stdin.take().unwrap().write_all(input).unwrap();
    Some(child.wait_with_output().unwrap())
}

async fn delete_asks_on_a_terminal(b: Backend) {
    let Some((_db, srv)) = with_password(b).await else {
        return;
    };
    let user = signed_in(&srv).await;
    let dir = user.home.path().join("doomed");
    site(&dir);
    user.ok(&["publish", dir.to_str().unwrap()]);

    let Some(kept) = on_a_terminal(&user, "pages delete doomed", b"n\n") else {
        eprintln!("skipped: no `script` to make a terminal");
        return;
    };
    let shown = String::from_utf8_lossy(&kept.stdout);
    assert!(shown.contains("Delete page doomed? [y/N]"), "{shown}");
    assert_eq!(kept.status.code(), Some(2), "{shown}");
    user.ok(&["pages", "get", "doomed"]);

    let gone = on_a_terminal(&user, "pages delete doomed", b"y\n").unwrap();
    let shown = String::from_utf8_lossy(&gone.stdout);
    assert!(gone.status.success(), "{shown}");
    assert!(shown.contains("Deleted doomed."), "{shown}");
    let (_, err) = user.fails(&["pages", "get", "doomed"]);
    assert!(err.contains("no page named doomed"), "{err}");
}

on_both_backends!(publish_names_and_describes_pages, delete_asks_on_a_terminal);
