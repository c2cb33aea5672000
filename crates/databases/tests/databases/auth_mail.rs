//! Password recovery by mail, on the fakes: its code signs in once and a new password then
//! ends the other sessions; an unknown address is answered as a registered one, holding a
//! slot of the quota; one mail a minute per address; the link leads to the owner's site (or
//! an address they allow), and spends the code with it; five wrong codes kill the code, and
//! a day lapses it. Sign-in by mail and `resend` in `auth_sign_in.rs`.

use crate::support;

use quire_databases::{AuthError, AuthSettings, OtpVerification, SignedUp, TenantAuth};
use support::{Fixture, fixture};

pub(crate) const CLIENT: &str = "192.0.2.1";

/// The 6-digit code in the latest message to `to`.
pub(crate) fn code_to(f: &Fixture, to: &str) -> String {
    let (_, _, text) = f
        .messages()
        .into_iter()
        .rev()
        .find(|(m, _, _)| m == to)
        .unwrap_or_else(|| panic!("no message to {to}"));
    let at = text.find("Your code: ").expect("a code") + "Your code: ".len();
    text[at..at + 6].to_owned()
}

pub(crate) fn by_code(email: &str, code: &str) -> OtpVerification {
    OtpVerification::Code {
        email: email.into(),
        code: code.into(),
    }
}

async fn signed_up(auth: &TenantAuth, email: &str, password: &str) -> quire_databases::AuthSession {
    match auth
        .sign_up(CLIENT, email, password.into(), None)
        .await
        .unwrap()
    {
        SignedUp::Session(session) => session,
        SignedUp::Unconfirmed(user) => panic!("no session: {user:?}"),
    }
}

fn claims(token: &str) -> serde_json::Value {
    let payload = token.split('.').nth(1).unwrap();
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn a_recovery_code_signs_in_once_and_a_new_password_ends_the_other_sessions() {
    let f = fixture().await;
    let (auth, _, _) = f.auth("club", AuthSettings::default()).await;
    let first = signed_up(&auth, "ann@example.com", "first password").await;

    auth.recover(CLIENT, "Ann@Example.com", None).await.unwrap();
    let messages = f.messages();
    assert_eq!(messages.len(), 1);
    let (to, subject, text) = &messages[0];
    assert_eq!(to, "ann@example.com");
    assert!(subject.starts_with("Reset your password"), "{subject}");
    assert!(!text.contains("http"), "no site, no link: {text}");
    let code = code_to(&f, "ann@example.com");
    assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");

    let wrong = if code == "000000" { "111111" } else { "000000" };
    let refused = auth
        .verify_otp(CLIENT, by_code("ann@example.com", wrong))
        .await
        .unwrap_err();
    assert_eq!(
        (
            refused.status(),
            refused.error_code(),
            refused.public_message()
        ),
        (
            403,
            "otp_expired",
            "Token has expired or is invalid".to_owned()
        )
    );
    let recovered = auth
        .verify_otp(CLIENT, by_code("ANN@example.com", &code))
        .await
        .unwrap();
    assert_eq!(recovered.user.email, "ann@example.com");
    assert_eq!(claims(&recovered.access_token)["amr"][0]["method"], "otp");
    let again = auth
        .verify_otp(CLIENT, by_code("ann@example.com", &code))
        .await;
    assert!(
        matches!(again, Err(AuthError::TokenInvalid)),
        "spent: {again:?}"
    );

    auth.update_user(
        Some(&recovered.access_token),
        None,
        Some("second password".into()),
        None,
    )
    .await
    .unwrap();
    // The session the old password began ends; the recovery's goes on.
    let ended = auth.user(Some(&first.access_token)).await.unwrap_err();
    assert_eq!(ended.error_code(), "session_not_found");
    auth.user(Some(&recovered.access_token)).await.unwrap();
    let old = auth
        .password_grant(CLIENT, "ann@example.com", "first password".into())
        .await
        .unwrap_err();
    assert_eq!(old.error_code(), "invalid_credentials");
    auth.password_grant(CLIENT, "ann@example.com", "second password".into())
        .await
        .unwrap();
}

#[tokio::test]
async fn recovery_answers_an_unknown_address_as_a_registered_one() {
    let f = fixture().await;
    let (auth, _, _) = f.auth("club", AuthSettings::default()).await;
    signed_up(&auth, "ann@example.com", "first password").await;

    auth.recover(CLIENT, "nobody@example.com", None)
        .await
        .unwrap();
    assert!(f.messages().is_empty(), "nothing sent");
    assert_eq!(
        f.mail.held.lock().unwrap().len(),
        1,
        "a slot spent all the same"
    );
    assert!(f.mail.released.lock().unwrap().is_empty());

    f.mail.full.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut refusals = Vec::new();
    for email in ["ann@example.com", "other@example.com"] {
        let e = auth.recover(CLIENT, email, None).await.unwrap_err();
        refusals.push((e.status(), e.error_code(), e.public_message()));
    }
    assert_eq!(refusals[0].1, "over_email_send_rate_limit");
    assert_eq!(refusals[0], refusals[1]);
    let bad = auth
        .recover(CLIENT, "not an address", None)
        .await
        .unwrap_err();
    assert_eq!((bad.status(), bad.error_code()), (400, "validation_failed"));
}

#[tokio::test]
async fn one_mail_a_minute_goes_to_an_address() {
    let f = fixture().await;
    let (auth, _, _) = f.auth("club", AuthSettings::default()).await;
    signed_up(&auth, "ann@example.com", "first password").await;

    auth.recover(CLIENT, "ann@example.com", None).await.unwrap();
    for (email, from) in [
        ("ann@example.com", CLIENT),
        ("ANN@example.com", "198.51.100.7"),
    ] {
        let e = auth.recover(from, email, None).await.unwrap_err();
        assert!(
            matches!(
                e,
                AuthError::MailTooSoon {
                    retry_after_secs: 60
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            (e.status(), e.error_code()),
            (429, "over_email_send_rate_limit")
        );
    }
    let e = auth
        .sign_in_by_mail(CLIENT, "ann@example.com", true, None, None)
        .await
        .unwrap_err();
    assert_eq!(
        e.error_code(),
        "over_email_send_rate_limit",
        "every mail counts"
    );
    // An unknown address is counted as a known one, and another address is free.
    auth.recover(CLIENT, "nobody@example.com", None)
        .await
        .unwrap();
    let e = auth
        .recover(CLIENT, "nobody@example.com", None)
        .await
        .unwrap_err();
    assert!(matches!(e, AuthError::MailTooSoon { .. }));
    f.world.clock.advance(time::Duration::seconds(60));
    auth.recover(CLIENT, "ann@example.com", None).await.unwrap();
    assert_eq!(f.messages().len(), 2);
}

#[tokio::test]
async fn the_link_leads_to_the_owners_site_and_spends_the_code_with_it() {
    let f = fixture().await;
    let settings = AuthSettings {
        site_url: Some("https://app.example.com".into()),
        uri_allow_list: vec!["https://other.example.com/auth/*".into()],
        ..AuthSettings::default()
    };
    let (auth, _, _) = f.auth("club", settings).await;
    signed_up(&auth, "ann@example.com", "first password").await;
    signed_up(&auth, "bob@example.com", "first password").await;

    auth.recover(CLIENT, "ann@example.com", Some("https://evil.test/steal"))
        .await
        .unwrap();
    auth.recover(
        CLIENT,
        "bob@example.com",
        Some("https://other.example.com/auth/done"),
    )
    .await
    .unwrap();
    let texts: Vec<String> = f.messages().into_iter().map(|(_, _, t)| t).collect();
    let link_in = |text: &str, start: &str| {
        let at = text
            .find(start)
            .unwrap_or_else(|| panic!("no {start} in {text}"));
        text[at..].split_whitespace().next().unwrap().to_owned()
    };
    let ann_link = link_in(&texts[0], "https://app.example.com?token_hash=");
    assert!(ann_link.ends_with("&type=recovery"), "{ann_link}");
    assert!(!texts[0].contains("evil.test"));
    let bob_link = link_in(&texts[1], "https://other.example.com/auth/done?token_hash=");

    let token = |link: &str| {
        let start = link.find("token_hash=").unwrap() + "token_hash=".len();
        link[start..].split('&').next().unwrap().to_owned()
    };
    let session = auth
        .verify_otp(
            CLIENT,
            OtpVerification::Link {
                token: token(&ann_link),
            },
        )
        .await
        .unwrap();
    assert_eq!(session.user.email, "ann@example.com");
    let code = code_to(&f, "ann@example.com");
    let spent = auth
        .verify_otp(CLIENT, by_code("ann@example.com", &code))
        .await;
    assert!(matches!(spent, Err(AuthError::TokenInvalid)), "{spent:?}");
    let again = auth
        .verify_otp(
            CLIENT,
            OtpVerification::Link {
                token: token(&ann_link),
            },
        )
        .await
        .unwrap_err();
    assert_eq!((again.status(), again.error_code()), (403, "otp_expired"));
    // Bob's code works, and then his link does not.
    let code = code_to(&f, "bob@example.com");
    auth.verify_otp(CLIENT, by_code("bob@example.com", &code))
        .await
        .unwrap();
    let dead = auth
        .verify_otp(
            CLIENT,
            OtpVerification::Link {
                token: token(&bob_link),
            },
        )
        .await;
    assert!(matches!(dead, Err(AuthError::LinkInvalid)), "{dead:?}");
}

#[tokio::test]
async fn five_wrong_codes_kill_the_code_and_a_day_lapses_it() {
    let f = fixture().await;
    let (auth, _, _) = f.auth("club", AuthSettings::default()).await;
    signed_up(&auth, "ann@example.com", "first password").await;
    auth.recover(CLIENT, "ann@example.com", None).await.unwrap();
    let code = code_to(&f, "ann@example.com");
    let wrong = if code == "000000" { "111111" } else { "000000" };
    for _ in 0..5 {
        auth.verify_otp(CLIENT, by_code("ann@example.com", wrong))
            .await
            .unwrap_err();
    }
    let dead = auth
        .verify_otp(CLIENT, by_code("ann@example.com", &code))
        .await;
    assert!(matches!(dead, Err(AuthError::TokenInvalid)), "{dead:?}");
    // Not a code's shape: refused without a try counted.
    let odd = auth
        .verify_otp(CLIENT, by_code("ann@example.com", "12ab56"))
        .await;
    assert!(matches!(odd, Err(AuthError::TokenInvalid)));

    f.world.clock.advance(time::Duration::seconds(60));
    auth.recover(CLIENT, "ann@example.com", None).await.unwrap();
    let code = code_to(&f, "ann@example.com");
    f.world.clock.advance(time::Duration::hours(24));
    let lapsed = auth
        .verify_otp(CLIENT, by_code("ann@example.com", &code))
        .await;
    assert!(matches!(lapsed, Err(AuthError::TokenInvalid)), "{lapsed:?}");
}
