//! An end user's confirmation link in headless Chromium, as a person on a phone opens it
//! from their mail: the page (axe-core, 390 px with no sideways scroll) confirms nothing
//! until the password chosen at sign-up is typed and its button pressed; a wrong password
//! answers the page again (audited too), whose form the browser posts again past the
//! same-origin check; the same form posted from another site's page is refused.

use serde_json::json;

use crate::audit::PHONE_WIDTH;
use crate::browser::{Driver, foreign_site};
use crate::data_auth::{assert_gotrue, call, database, password_grant};
use crate::databases::{sql, with_cluster};
use crate::harness::Backend;
use crate::signup::{link_in, mail_to};

#[cfg_attr(
    no_chromium,
    ignore = "needs /usr/bin/chromium and /usr/bin/chromedriver"
)]
#[cfg_attr(
    all(no_axe, not(no_chromium)),
    ignore = "needs axe-core: npm install --prefix target/axe axe-core"
)]
#[cfg_attr(no_postgres, ignore = "needs PostgreSQL: set QUIRE_TEST_POSTGRES_URL")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_confirms_their_address_with_the_button_on_a_phone() {
    let Some(browser) = Driver::start().await else {
        return;
    };
    let (db, srv, ann) = with_cluster(Backend::Sqlite, &[]).await;
    let (id, secret) = database(&srv, &ann, "club").await;
    sql(
        &srv,
        &ann.key,
        &id,
        "update auth.settings set confirm_email = true",
    )
    .await
    .assert_status(200);
    for email in ["pia@example.com", "rex@example.com"] {
        let (status, body) = call(
            &srv,
            "POST",
            "club",
            "auth/v1/signup",
            &secret,
            None,
            Some(json!({ "email": email, "password": "long enough" })),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let link = |email: &'static str| {
        let dir = db.dir.path().to_owned();
        async move {
            let mail = mail_to(&dir, email, 0).await;
            link_in(&mail, "/db/club/auth/v1/verify")
        }
    };

    // The page: opening it (as a scanner would) confirms nothing.
    let pia = format!("{}{}", srv.base, link("pia@example.com").await);
    browser.go(&pia).await;
    browser.audit("end-user-confirmation").await;
    assert_gotrue(
        &password_grant(&srv, "club", &secret, "pia@example.com", "long enough").await,
        400,
        "email_not_confirmed",
    );

    // On a phone: a wrong password answers the page again, saying so; the right one, typed
    // into that page, confirms.
    browser.resize(PHONE_WIDTH, 844).await;
    browser.fill("#password", "not the one").await;
    browser.click("button[type=submit]").await;
    assert!(
        browser
            .text("[role=alert]")
            .await
            .contains("not the password this address signed up with"),
        "{}",
        browser.source().await
    );
    browser.audit("end-user-confirmation-wrong-password").await;
    assert_gotrue(
        &password_grant(&srv, "club", &secret, "pia@example.com", "long enough").await,
        400,
        "email_not_confirmed",
    );
    browser.fill("#password", "long enough").await;
    browser.click("button[type=submit]").await;
    assert_eq!(browser.text("h1").await, "Address confirmed");
    let (status, session) =
        password_grant(&srv, "club", &secret, "pia@example.com", "long enough").await;
    assert_eq!(status, 200, "{session}");

    // The same form on another site's page, posted by the browser: refused, nothing spent.
    let rex = link("rex@example.com").await;
    let token = &rex[rex.find("token=").unwrap() + 6..rex.find("&type").unwrap()];
    let target = format!("{}/db/club/auth/v1/verify", srv.base);
    let site = foreign_site(format!(
        "<!doctype html><form method=\"post\" action=\"{target}\">\
         <input type=\"hidden\" name=\"type\" value=\"signup\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <input type=\"hidden\" name=\"password\" value=\"long enough\">\
         <button type=\"submit\">Win a prize</button></form>"
    ))
    .await;
    browser.go(&site).await;
    browser.click("button[type=submit]").await;
    assert_eq!(browser.text("h1").await, "Open the link again");
    assert_gotrue(
        &password_grant(&srv, "club", &secret, "rex@example.com", "long enough").await,
        400,
        "email_not_confirmed",
    );
    // The link itself still works for its owner.
    browser.go(&format!("{}{rex}", srv.base)).await;
    browser.fill("#password", "long enough").await;
    browser.click("button[type=submit]").await;
    assert_eq!(browser.text("h1").await, "Address confirmed");
}
