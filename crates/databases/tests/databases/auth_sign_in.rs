//! Sign-in by mail and a sign-up's link sent again, on the fakes: a sign-in code confirms
//! an address without the password of whoever signed it up; `otp` makes a user only where
//! allowed, and refuses as GoTrue while that tells nothing new; `resend` gives a pending
//! sign-up a new link; `verify`'s fields read as GoTrue reads them.

use crate::auth_mail::{CLIENT, by_code, code_to};
use crate::support;

use quire_databases::{AuthError, AuthSettings, OtpVerification};
use serde_json::json;
use support::fixture;

#[tokio::test]
async fn a_sign_in_code_confirms_an_address_without_the_password_of_whoever_signed_it_up() {
    let f = fixture().await;
    let confirming = AuthSettings {
        confirm_email: true,
        ..AuthSettings::default()
    };
    let (auth, users, _) = f.auth("club", confirming).await;
    // Someone signs the address up with a password of theirs; its owner signs in by mail.
    auth.sign_up(CLIENT, "cy@example.com", "squatter's password".into(), None)
        .await
        .unwrap();
    auth.sign_in_by_mail(CLIENT, "cy@example.com", true, None, None)
        .await
        .unwrap();
    let code = code_to(&f, "cy@example.com");
    let session = auth
        .verify_otp(CLIENT, by_code("cy@example.com", &code))
        .await
        .unwrap();
    assert!(session.user.email_confirmed_at.is_some());
    assert_eq!(users.all().len(), 1);
    let squatter = auth
        .password_grant(CLIENT, "cy@example.com", "squatter's password".into())
        .await
        .unwrap_err();
    assert_eq!(squatter.error_code(), "invalid_credentials");
}

#[tokio::test]
async fn a_sign_in_mail_makes_a_user_only_where_allowed() {
    let f = fixture().await;
    let (auth, users, _) = f.auth("club", AuthSettings::default()).await;

    // Addresses need no confirmation: GoTrue's refusals (a sign-up tells as much).
    let e = auth
        .sign_in_by_mail(CLIENT, "dee@example.com", false, None, None)
        .await
        .unwrap_err();
    assert_eq!(
        (e.status(), e.error_code(), e.public_message()),
        (
            422,
            "otp_disabled",
            "Signups not allowed for otp".to_owned()
        )
    );
    assert_eq!(
        *f.mail.released.lock().unwrap(),
        *f.mail.held.lock().unwrap(),
        "the slot is given back"
    );
    users.set_settings(AuthSettings {
        disable_signup: true,
        ..AuthSettings::default()
    });
    let e = auth
        .sign_in_by_mail(CLIENT, "eve@example.com", true, None, None)
        .await
        .unwrap_err();
    assert_eq!(e.error_code(), "signup_disabled");
    assert!(users.all().is_empty());

    // While they do, the same requests are answered as a registered address's: nothing
    // made, nothing sent, a slot spent.
    users.set_settings(AuthSettings {
        confirm_email: true,
        ..AuthSettings::default()
    });
    let held = f.mail.held.lock().unwrap().len();
    auth.sign_in_by_mail(CLIENT, "fay@example.com", false, None, None)
        .await
        .unwrap();
    assert!(users.all().is_empty());
    assert!(f.messages().is_empty());
    assert_eq!(f.mail.held.lock().unwrap().len(), held + 1);

    // Allowed: an unconfirmed user with no password and the metadata sent, confirmed by
    // the code.
    auth.sign_in_by_mail(
        CLIENT,
        "gus@example.com",
        true,
        Some(json!({"name": "Gus"})),
        None,
    )
    .await
    .unwrap();
    let made = users.all();
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].user_metadata, json!({"name": "Gus"}));
    assert_eq!(made[0].email_confirmed_at, None);
    let code = code_to(&f, "gus@example.com");
    let session = auth
        .verify_otp(CLIENT, by_code("gus@example.com", &code))
        .await
        .unwrap();
    assert_eq!(session.user.id, made[0].id);
    assert!(session.user.email_confirmed_at.is_some());
    let none = auth
        .password_grant(CLIENT, "gus@example.com", "any password".into())
        .await
        .unwrap_err();
    assert_eq!(
        none.error_code(),
        "invalid_credentials",
        "no password to guess"
    );
}

#[tokio::test]
async fn resend_gives_a_pending_sign_up_a_new_link() {
    let f = fixture().await;
    let confirming = AuthSettings {
        confirm_email: true,
        ..AuthSettings::default()
    };
    let (auth, _, _) = f.auth("club", confirming).await;
    auth.sign_up(CLIENT, "eve@example.com", "long enough".into(), None)
        .await
        .unwrap();
    f.world.clock.advance(time::Duration::seconds(60));
    auth.resend(CLIENT, Some("signup"), Some("eve@example.com"))
        .await
        .unwrap();
    let links: Vec<String> = f
        .messages()
        .into_iter()
        .map(|(_, _, text)| {
            let at = text.find("token=").unwrap() + "token=".len();
            text[at..at + 43].to_owned()
        })
        .collect();
    assert_eq!(links.len(), 2);
    let old = auth.confirmation_page(CLIENT, &links[0]).await;
    assert!(matches!(old, Err(AuthError::LinkInvalid)), "{old:?}");
    auth.confirmation_page(CLIENT, &links[1]).await.unwrap();
    let confirmed = auth
        .verify(CLIENT, &links[1], "long enough".into())
        .await
        .unwrap();
    assert!(confirmed.email_confirmed_at.is_some());

    // Nothing for a confirmed address, an unknown one, or an address change (never
    // pending here); a slot spent for the addresses all the same.
    let held = f.mail.held.lock().unwrap().len();
    f.world.clock.advance(time::Duration::seconds(60));
    for email in ["eve@example.com", "nobody@example.com"] {
        auth.resend(CLIENT, Some("signup"), Some(email))
            .await
            .unwrap();
    }
    auth.resend(CLIENT, Some("email_change"), Some("eve@example.com"))
        .await
        .unwrap();
    assert_eq!(f.messages().len(), 2);
    assert_eq!(f.mail.held.lock().unwrap().len(), held + 2);
    for (kind, email) in [
        (Some("sms"), Some("eve@example.com")),
        (Some("signup"), None),
    ] {
        let e = auth.resend(CLIENT, kind, email).await.unwrap_err();
        assert_eq!(
            (e.status(), e.error_code()),
            (400, "validation_failed"),
            "{kind:?}"
        );
    }
}

#[test]
fn verify_requests_are_read_as_gotrue_reads_them() {
    let parse = OtpVerification::parse;
    assert_eq!(
        parse(
            Some("email"),
            Some("123456"),
            None,
            Some("a@example.com"),
            None
        )
        .unwrap(),
        OtpVerification::Code {
            email: "a@example.com".into(),
            code: "123456".into()
        }
    );
    assert_eq!(
        parse(Some("recovery"), None, Some("tok"), None, None).unwrap(),
        OtpVerification::Link {
            token: "tok".into()
        }
    );
    for (kind, token, hash, email, phone, says) in [
        (
            None,
            Some("1"),
            None,
            Some("a@x.io"),
            None,
            "Verify requires a verification type",
        ),
        (
            Some("email"),
            None,
            None,
            Some("a@x.io"),
            None,
            "Verify requires either a token or a token hash",
        ),
        (
            Some("email"),
            Some("1"),
            Some("t"),
            None,
            None,
            "Verify requires either a token or a token hash",
        ),
        (
            Some("email"),
            Some("1"),
            None,
            None,
            None,
            "Only an email address or phone number should be provided on verify",
        ),
        (
            Some("email"),
            None,
            Some("t"),
            Some("a@x.io"),
            None,
            "Only the token_hash and type should be provided",
        ),
        (
            Some("sms"),
            Some("1"),
            None,
            None,
            Some("+15550100"),
            "Phone numbers are not offered",
        ),
        (
            Some("nonsense"),
            Some("1"),
            None,
            Some("a@x.io"),
            None,
            "Unsupported verification type",
        ),
    ] {
        let e = parse(kind, token, hash, email, phone).unwrap_err();
        assert_eq!(
            (e.error_code(), e.public_message()),
            ("validation_failed", says.to_owned())
        );
    }
    let signup = parse(Some("signup"), None, Some("t"), None, None).unwrap_err();
    assert_eq!(signup.error_code(), "validation_failed");
    let change = parse(Some("email_change"), None, Some("t"), None, None).unwrap_err();
    assert_eq!((change.status(), change.error_code()), (403, "otp_expired"));
}
