//! The platform admin's pages over HTTP on both databases: accounts activated and
//! deactivated by hand (and their keys answering accordingly), the invitation list (all or
//! none, normalised, removal), the OAuth client registry (a secret shown once, delete), and
//! every other account turned away.

use crate::dashboard::{Browser, PASSWORD, element};
use crate::harness::{Backend, TestDb, on_both_backends};

const PROJECTS_API: &str = "/api/platform/v1/projects";

async fn the_platform_admin_manages_accounts_invitations_and_clients(b: Backend) {
    let Some(db) = TestDb::create(b).await else {
        return;
    };
    db.create_account("root", &["--password", PASSWORD, "--platform-admin"]);
    let ann = db.create_account("ann", &["--password", PASSWORD]);
    let dormant = db.create_account("dormant", &["--not-activated"]);
    let srv = db.start();

    // Anyone else is turned away, from every admin page and post.
    let mut other = Browser::new(&srv);
    other.sign_in("ann").await;
    for path in [
        "/admin/accounts",
        "/admin/invitations",
        "/admin/oauth-clients",
    ] {
        let r = other.get(path).await;
        assert_eq!(r.status, 403, "{path}");
    }
    let r = other
        .post("/admin/invitations", &[("numbers", "+447400123456")])
        .await;
    assert_eq!(r.status, 403);

    let mut admin = Browser::new(&srv);
    admin.sign_in("root").await;
    let home = admin.get("/account/security").await;
    assert!(element(&home.text, "admin-links").is_some());
    assert!(element(&other.get("/account/security").await.text, "admin-links").is_none());
    // Admin is in the navigation of the platform admin only.
    let pages = admin.get("/account/pages").await;
    assert_eq!(element(&pages.text, "nav-admin").unwrap(), "Admin");
    let theirs = other.get("/account/pages").await;
    assert_eq!(theirs.status, 200, "{}", theirs.text);
    assert!(theirs.text.contains("aria-current=\"page\">Pages</a>"));
    assert!(element(&theirs.text, "nav-admin").is_none());

    // Accounts: activating the dormant account makes its key work; deactivating stops it.
    srv.get(PROJECTS_API, &dormant.key)
        .await
        .assert_error(403, "not_activated");
    let list = admin.get("/admin/accounts").await;
    assert_eq!(list.status, 200, "{}", list.text);
    assert_eq!(
        element(&list.text, "activated-dormant").as_deref(),
        Some("no")
    );
    assert!(list.text.contains("ann@example.com"));
    let r = admin
        .post(
            &format!("/admin/accounts/{}", dormant.account_id),
            &[("activated", "yes")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.text);
    assert_eq!(srv.get(PROJECTS_API, &dormant.key).await.status, 200);
    let list = admin.get("/admin/accounts").await;
    assert_ne!(
        element(&list.text, "activated-dormant").as_deref(),
        Some("no")
    );
    let r = admin
        .post(
            &format!("/admin/accounts/{}", ann.account_id),
            &[("activated", "no")],
        )
        .await;
    assert_eq!(r.status, 303);
    // Keys are looked up at most once a second per replica; a fixed wait just past that
    // bound, since the bound is what is checked (a poll would pass however late it came).
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    srv.get(PROJECTS_API, &ann.key)
        .await
        .assert_error(403, "not_activated");
    let root_id = {
        let list = admin.get("/admin/accounts").await;
        let row = list.text.find("id=\"account-root\"").unwrap();
        let action = list.text[row..].find("/admin/accounts/").unwrap() + row;
        list.text[action + 16..action + 52].to_owned()
    };
    let r = admin
        .post(
            &format!("/admin/accounts/{root_id}"),
            &[("activated", "no")],
        )
        .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        element(&r.text, "error").as_deref(),
        Some("you cannot deactivate your own account")
    );
    let r = admin
        .post(
            &format!("/admin/accounts/{}", uuid::Uuid::new_v4()),
            &[("activated", "yes")],
        )
        .await;
    assert_eq!(r.status, 404);

    // Invitations: one bad line adds nothing; then all are added, normalised.
    let r = admin
        .post(
            "/admin/invitations",
            &[("numbers", "07400 123456\nnot a number"), ("region", "GB")],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(element(&r.text, "error").unwrap().contains("line 2"));
    assert!(!r.text.contains("<code>+447400123456</code>"));
    let r = admin
        .post(
            "/admin/invitations",
            &[
                ("numbers", "07400 123456\n+1 202 555 0143\n"),
                ("region", "gb"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("<code>+447400123456</code>"));
    assert!(r.text.contains("<code>+12025550143</code>"));
    let r = admin
        .post("/admin/invitations", &[("numbers", "+447400123456")])
        .await;
    assert_eq!(
        element(&r.text, "notice").as_deref(),
        Some("0 of 1 number added; the others were on the list already.")
    );
    let r = admin
        .post("/admin/invitations", &[("numbers", "1"), ("region", "ZZZ")])
        .await;
    assert_eq!(r.status, 400);
    let r = admin
        .post("/admin/invitations/remove", &[("number", "+12025550143")])
        .await;
    assert_eq!(r.status, 200);
    assert!(!r.text.contains("<code>+12025550143</code>"));
    let r = admin
        .post("/admin/invitations/remove", &[("number", "+12025550143")])
        .await;
    assert_eq!(r.status, 404);

    // OAuth clients: a confidential client's secret once; refusals name the field; delete.
    let r = admin
        .post(
            "/admin/oauth-clients",
            &[
                ("name", "Reports"),
                ("client_type", "confidential"),
                ("redirect_uris", "javascript:alert(1)"),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(element(&r.text, "error").is_some());
    let r = admin
        .post(
            "/admin/oauth-clients",
            &[
                ("name", "Reports"),
                ("client_type", "confidential"),
                ("redirect_uris", "https://reports.example/callback\n"),
            ],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let id = element(&r.text, "client-id").unwrap();
    let secret = element(&r.text, "client-secret").unwrap();
    assert!(secret.len() >= 32, "{secret}");
    let list = admin.get("/admin/oauth-clients").await;
    assert!(list.text.contains(&id));
    assert!(!list.text.contains(&secret), "the secret is shown once");
    let r = admin
        .post(&format!("/admin/oauth-clients/{id}/delete"), &[])
        .await;
    assert_eq!(r.status, 303);
    assert!(!admin.get("/admin/oauth-clients").await.text.contains(&id));
    let r = admin
        .post(&format!("/admin/oauth-clients/{id}/delete"), &[])
        .await;
    assert_eq!(r.status, 404);

    // A cross-site post is refused before anything else.
    admin.origin = Some("http://evil.example".into());
    admin
        .post(
            &format!("/admin/accounts/{}", ann.account_id),
            &[("activated", "yes")],
        )
        .await
        .assert_error(403, "invalid origin");
    srv.get(PROJECTS_API, &ann.key)
        .await
        .assert_error(403, "not_activated");
}

on_both_backends!(the_platform_admin_manages_accounts_invitations_and_clients);
