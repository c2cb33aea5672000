//! Per-owner origins, against the in-memory fakes: each owner's pages on a host of their
//! own, with cookies and passes that hold on that host only.

use crate::common;

use quire_kernel::Email;
use quire_pages::PageOrigins;
use quire_serving::{Answer, PassError, Unlock, Visitor};

use common::{body, pass_token, world_on};

#[tokio::test]
async fn on_per_owner_origins_each_owner_has_a_host_and_cookies_of_its_own() {
    let w = world_on(PageOrigins::parse("https://{handle}.pages.test").unwrap()).await;
    let public = w.publish("site", |_| {}).await;
    assert_eq!(public.url, "https://ann.pages.test/site/");
    let code = public.link.as_ref().unwrap().public_id.clone();
    assert_eq!(
        public.short_url.as_deref(),
        Some(format!("https://pages.test/s/{code}").as_str())
    );
    assert_eq!(
        body(&w.get_on("ann", "/site/docs/", Visitor::default()).await),
        "<p>docs</p>"
    );
    // Another owner's host does not serve ann's page, and the path no longer names owners.
    assert!(matches!(
        w.get_on("bob", "/site/", Visitor::default()).await,
        Answer::NotFound
    ));
    assert!(matches!(w.get("/ann/site/").await, Answer::NotFound));
    let Answer::Redirect { location, .. } = w.get_on("ann", "/site", Visitor::default()).await
    else {
        panic!("trailing slash")
    };
    assert_eq!(location, "/site/");
    let Answer::Redirect { location, .. } = w
        .serving
        .short_link(quire_serving::LinkVisit::plain(&code))
        .await
        .unwrap()
    else {
        panic!("short link")
    };
    assert_eq!(location, "https://ann.pages.test/site/");

    // Cookies are named for the page, host-only (`__Host-`) and for the whole origin.
    w.publish("brief", |r| {
        r.policy.access = Some("password".into());
        r.policy.password = Some("open sesame".into());
    })
    .await;
    let admitted = w
        .serving
        .unlock(Unlock {
            handle: "ann",
            slug: "brief",
            password: "open sesame",
            next: "",
            client: "203.0.113.9",
        })
        .await
        .unwrap();
    let cookie = admitted.cookie.unwrap();
    assert_eq!(
        (cookie.name.as_str(), cookie.path.as_str()),
        ("__Host-quire_unlock_brief", "/")
    );
    assert_eq!(
        quire_serving::cookie_kind(&cookie.name),
        Some(quire_serving::TokenKind::Unlock)
    );
    assert_eq!(admitted.location, "/brief/");
    let unlocked = Visitor {
        unlock: vec![cookie.value.as_str()],
        ..Visitor::default()
    };
    let Answer::File(file) = w.get_on("ann", "/brief/", unlocked).await else {
        panic!("unlocked")
    };
    assert!(file.guarded, "a password page is guarded from framing");
    assert!(!matches!(
        w.get_on("ann", "/site/", Visitor::default()).await,
        Answer::File(ref f) if f.guarded
    ));

    // A pass is issued for the owner's origin and lands only there.
    let private = w
        .publish("mine", |r| r.policy.access = Some("private".into()))
        .await;
    let code = private.link.as_ref().unwrap().public_id.clone();
    let session = w.session(w.ann.account_id).await;
    let ann_email = Email::parse("ann@example.com").unwrap();
    let url = w
        .serving
        .issue_pass(&code, w.ann.account_id, &ann_email, &session, "")
        .await
        .unwrap();
    assert!(
        url.starts_with("https://ann.pages.test/-/pass?token="),
        "{url}"
    );
    let token = pass_token(&url);
    assert_eq!(
        w.serving
            .accept_pass(Some("bob"), token, "")
            .await
            .unwrap_err(),
        PassError::NotFound,
        "a pass for ann's page does not land on bob's origin"
    );
    // Nor is it spent there: the same pass then works on ann's origin, once.
    let admitted = w.serving.accept_pass(Some("ann"), token, "").await.unwrap();
    assert_eq!(admitted.cookie.unwrap().name, "__Host-quire_access_mine");
    assert_eq!(
        w.serving
            .accept_pass(Some("ann"), token, "")
            .await
            .unwrap_err(),
        PassError::Forbidden
    );
}
