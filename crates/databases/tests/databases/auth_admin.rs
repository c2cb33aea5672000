//! The admin API's use cases, on the fakes: only the database's `service_role` (its key,
//! or a Quire key acting as it) gets them; users created, listed a page at a time, read,
//! changed (a new password ending their sessions) and deleted, with GoTrue's refusals;
//! links generated for the owner's own mail, which send nothing; and every user shown
//! with GoTrue's `email` identity.

use crate::support;

use quire_databases::{
    AdminUser, AuthError, AuthSettings, Credentials, LinkRequest, OtpVerification, SignedUp,
    TenantAuth,
};
use serde_json::json;
use support::fixture;
use uuid::Uuid;

const CLIENT: &str = "192.0.2.1";

fn attributes(value: serde_json::Value) -> AdminUser {
    serde_json::from_value(value).unwrap()
}

fn link(value: serde_json::Value) -> LinkRequest {
    serde_json::from_value(value).unwrap()
}

#[tokio::test]
async fn the_admin_api_is_the_service_roles_alone() {
    let f = fixture().await;
    let (auth, _, secret) = f.auth("club", AuthSettings::default()).await;
    let keys = f.keys();
    let acting = async |apikey: &str, bearer: &str| {
        let credentials = Credentials {
            apikey: Some(apikey),
            bearer: Some(bearer),
        };
        Some(f.service.acting(auth.target(), credentials, &keys).await)
    };
    let (anon, service) = (&secret.keys.anon, &secret.keys.service_role);
    let session = match auth
        .sign_up(CLIENT, "ann@example.com", "long enough".into(), None)
        .await
        .unwrap()
    {
        SignedUp::Session(s) => s,
        SignedUp::Unconfirmed(_) => unreachable!("no confirmation asked"),
    };

    assert!(auth.admin(acting(anon, service).await).is_ok());
    assert!(auth.admin(acting(service, service).await).is_ok());
    for (apikey, bearer, code, status) in [
        (anon.as_str(), anon.as_str(), "not_admin", 403),
        (
            anon.as_str(),
            session.access_token.as_str(),
            "not_admin",
            403,
        ),
        (anon.as_str(), "not.a.jwt", "bad_jwt", 403),
        (anon.as_str(), "qk_not_a_key", "not_admin", 403),
    ] {
        let e = auth.admin(acting(apikey, bearer).await).unwrap_err();
        assert_eq!((e.status(), e.error_code()), (status, code), "{bearer}");
    }
    let none = auth.admin(None).unwrap_err();
    assert_eq!(
        (none.status(), none.error_code()),
        (401, "no_authorization")
    );
    let e = auth.admin(acting(anon, anon).await).unwrap_err();
    assert_eq!(e.public_message(), "User not allowed");
    // A Quire key with `base`, the database's account's, acts as the service role.
    let quire_key = f.world.key("ann");
    assert!(auth.admin(acting(&quire_key, &quire_key).await).is_ok());
}

#[tokio::test]
async fn the_owner_creates_lists_changes_and_deletes_users() {
    let f = fixture().await;
    let (auth, users, _) = f.auth("club", AuthSettings::default()).await;
    let admin = auth.admin(Some(Ok(service_role()))).unwrap();

    let made = admin
        .create(attributes(json!({
            "email": "Ann@Example.com",
            "password": "long enough",
            "email_confirm": true,
            "user_metadata": {"name": "Ann"},
            "app_metadata": {"plan": "pro"},
        })))
        .await
        .unwrap();
    assert_eq!(made.email, "ann@example.com");
    assert!(made.email_confirmed_at.is_some());
    assert_eq!(made.app_metadata["plan"], "pro");
    assert_eq!(made.app_metadata["provider"], "email");
    let shown = made.to_json();
    let identity = &shown["identities"][0];
    assert_eq!(identity["provider"], "email");
    assert_eq!(identity["user_id"], json!(made.id));
    assert_eq!(identity["identity_data"]["email"], "ann@example.com");
    assert_eq!(identity["identity_data"]["email_verified"], true);
    assert_eq!(identity["identity_data"]["sub"], json!(made.id));
    assert_ne!(identity["identity_id"], json!(made.id));
    assert_eq!(
        identity["identity_id"],
        made.to_json()["identities"][0]["identity_id"]
    );
    auth.password_grant(CLIENT, "ann@example.com", "long enough".into())
        .await
        .unwrap();

    for (body, code, status) in [
        (json!({"email": "ANN@example.com"}), "email_exists", 422),
        (json!({"password": "long enough"}), "validation_failed", 400),
        (
            json!({"email": "x@example.com", "password": "short"}),
            "weak_password",
            422,
        ),
        (
            json!({"email": "x@example.com", "phone": "+15550100"}),
            "validation_failed",
            400,
        ),
        (
            json!({"email": "x@example.com", "role": "admin"}),
            "validation_failed",
            400,
        ),
        (
            json!({"email": "x@example.com", "ban_duration": "24h"}),
            "validation_failed",
            400,
        ),
        (
            json!({"email": "x@example.com", "id": "nope"}),
            "validation_failed",
            400,
        ),
        (
            json!({"email": "x@example.com", "app_metadata": [1]}),
            "validation_failed",
            400,
        ),
    ] {
        let e = admin.create(attributes(body.clone())).await.unwrap_err();
        assert_eq!((e.status(), e.error_code()), (status, code), "{body}");
    }
    let chosen = Uuid::new_v4();
    let bob = admin
        .create(attributes(
            json!({"email": "bob@example.com", "id": chosen}),
        ))
        .await
        .unwrap();
    assert_eq!((bob.id, bob.email_confirmed_at), (chosen, None));
    for i in 0..2 {
        f.world.clock.advance(time::Duration::seconds(1));
        admin
            .create(attributes(json!({"email": format!("u{i}@example.com")})))
            .await
            .unwrap();
    }

    let first = admin.list(Some(1), Some(3)).await.unwrap();
    assert_eq!(
        (first.users.len(), first.total, first.last_page()),
        (3, 4, 2)
    );
    let second = admin.list(Some(2), Some(3)).await.unwrap();
    assert_eq!(second.users.len(), 1);
    let default = admin.list(None, None).await.unwrap();
    assert_eq!(
        (default.page, default.per_page, default.users.len()),
        (1, 50, 4)
    );
    for (page, per_page) in [(Some(0), None), (None, Some(0)), (None, Some(1001))] {
        let e = admin.list(page, per_page).await.unwrap_err();
        assert_eq!(e.error_code(), "validation_failed");
    }

    assert_eq!(admin.get(&bob.id.to_string()).await.unwrap(), bob);
    let e = admin.get("nope").await.unwrap_err();
    assert_eq!((e.status(), e.error_code()), (404, "validation_failed"));
    let e = admin.get(&Uuid::new_v4().to_string()).await.unwrap_err();
    assert_eq!(
        (e.status(), e.error_code(), e.public_message()),
        (404, "user_not_found", "User not found".to_owned())
    );

    // A new password ends every session of the user.
    let signed_in = auth
        .password_grant(CLIENT, "ann@example.com", "long enough".into())
        .await
        .unwrap();
    let changed = admin
        .update(
            &made.id.to_string(),
            attributes(json!({"password": "a new one", "user_metadata": {"plan": "x"}})),
        )
        .await
        .unwrap();
    assert_eq!(changed.user_metadata, json!({"name": "Ann", "plan": "x"}));
    let ended = auth.user(Some(&signed_in.access_token)).await.unwrap_err();
    assert_eq!(ended.error_code(), "session_not_found");
    auth.password_grant(CLIENT, "ann@example.com", "a new one".into())
        .await
        .unwrap();
    let confirmed = admin
        .update(
            &bob.id.to_string(),
            attributes(json!({"email_confirm": true})),
        )
        .await
        .unwrap();
    assert!(confirmed.email_confirmed_at.is_some());
    let e = admin
        .update(
            &bob.id.to_string(),
            attributes(json!({"email": "ann@example.com"})),
        )
        .await
        .unwrap_err();
    assert_eq!((e.status(), e.error_code()), (422, "email_exists"));
    let e = admin
        .update(&Uuid::new_v4().to_string(), AdminUser::default())
        .await
        .unwrap_err();
    assert_eq!(e.error_code(), "user_not_found");

    let e = admin.delete(&bob.id.to_string(), true).await.unwrap_err();
    assert_eq!(e.error_code(), "validation_failed", "no soft delete");
    admin.delete(&bob.id.to_string(), false).await.unwrap();
    let e = admin.delete(&bob.id.to_string(), false).await.unwrap_err();
    assert_eq!(e.error_code(), "user_not_found");
    assert_eq!(users.all().len(), 3);
}

fn service_role() -> quire_databases::Acting {
    quire_databases::Acting {
        role: quire_databases::KeyRole::ServiceRole,
        claims: json!({"role": "service_role"}).to_string(),
    }
}

async fn generated(
    auth: &TenantAuth,
    body: serde_json::Value,
) -> Result<quire_databases::GeneratedLink, AuthError> {
    let admin = auth.admin(Some(Ok(service_role()))).unwrap();
    admin.generate_link(link(body), None).await
}

#[tokio::test]
async fn generated_links_work_as_mailed_ones_and_send_nothing() {
    let f = fixture().await;
    let (auth, users, _) = f.auth("club", AuthSettings::default()).await;

    // A magic link for an unknown address makes its user, unconfirmed until it is used.
    let magic = generated(
        &auth,
        json!({"type": "magiclink", "email": "dee@example.com"}),
    )
    .await
    .unwrap();
    assert_eq!(magic.user.email_confirmed_at, None);
    assert_eq!(
        (magic.action_link.as_str(), magic.redirect_to.as_str()),
        ("", ""),
        "no site"
    );
    assert_eq!(magic.email_otp.len(), 6);
    assert_eq!(magic.hashed_token.len(), 43);
    assert_eq!(magic.verification_type, "magiclink");
    let shown = magic.to_json();
    assert_eq!(shown["email"], "dee@example.com");
    assert_eq!(shown["email_otp"], magic.email_otp);
    let session = auth
        .verify_otp(
            CLIENT,
            OtpVerification::Code {
                email: "dee@example.com".into(),
                code: magic.email_otp.clone(),
            },
        )
        .await
        .unwrap();
    assert!(session.user.email_confirmed_at.is_some());
    assert!(f.messages().is_empty(), "nothing sent");
    assert!(f.mail.held.lock().unwrap().is_empty(), "no quota spent");

    let e = generated(
        &auth,
        json!({"type": "recovery", "email": "nobody@example.com"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (e.status(), e.error_code(), e.public_message()),
        (
            404,
            "user_not_found",
            "User with this email not found".to_owned()
        )
    );
    let e = generated(&auth, json!({"type": "invite", "email": "dee@example.com"}))
        .await
        .unwrap_err();
    assert_eq!(e.error_code(), "email_exists", "confirmed");
    let e = generated(
        &auth,
        json!({"type": "email_change_new", "email": "dee@example.com"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.error_code(), "validation_failed");

    // With a site, the link leads there and its token signs in.
    users.set_settings(AuthSettings {
        site_url: Some("https://app.example.com/".into()),
        ..AuthSettings::default()
    });
    let recovery = generated(
        &auth,
        json!({"type": "recovery", "email": "dee@example.com"}),
    )
    .await
    .unwrap();
    assert_eq!(
        recovery.action_link,
        format!(
            "https://app.example.com/?token_hash={}&type=recovery",
            recovery.hashed_token
        )
    );
    assert_eq!(recovery.redirect_to, "https://app.example.com/");
    auth.verify_otp(
        CLIENT,
        OtpVerification::Link {
            token: recovery.hashed_token.clone(),
        },
    )
    .await
    .unwrap();

    // A sign-up's link is its confirmation page, which asks for the password given.
    let e = generated(&auth, json!({"type": "signup", "email": "eve@example.com"}))
        .await
        .unwrap_err();
    assert_eq!(
        e.error_code(),
        "validation_failed",
        "a sign-up needs a password"
    );
    let signup = generated(
        &auth,
        json!({"type": "signup", "email": "eve@example.com", "password": "long enough"}),
    )
    .await
    .unwrap();
    assert!(
        signup.action_link.ends_with(&format!(
            "/verify?token={}&type=signup",
            signup.hashed_token
        )),
        "{}",
        signup.action_link
    );
    assert_eq!(signup.email_otp, "");
    auth.verify(CLIENT, &signup.hashed_token, "long enough".into())
        .await
        .unwrap();
    let e = generated(
        &auth,
        json!({"type": "signup", "email": "eve@example.com", "password": "long enough"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.error_code(), "email_exists");
    let invited = generated(&auth, json!({"type": "invite", "email": "fay@example.com"}))
        .await
        .unwrap();
    assert_eq!(invited.user.email_confirmed_at, None);
    assert!(f.messages().is_empty());
}
