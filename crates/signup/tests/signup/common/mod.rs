//! What the flow tests share: an open-sign-up world, a sign-up form and the links in the
//! messages it sends.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use quire_mail::OutboundMail;
use quire_signup::{NewAccount, SignUpMode};
use quire_testkit::World;
use quire_testkit::world::BASE_URL;

pub const PASSWORD: &str = "a long enough sentence";
pub const CLIENT: &str = "203.0.113.7";

pub async fn open_world(handles: &[&str]) -> World {
    World::builder()
        .accounts(handles)
        .settings(|s| {
            s.sign_up = SignUpMode::Open;
            s.mail_from = "quire@quire.test".into();
        })
        .build()
        .await
}

pub fn form(email: &str, handle: &str) -> NewAccount {
    NewAccount {
        email: email.into(),
        handle: handle.into(),
        password: PASSWORD.into(),
    }
}

/// The token of the link to `path` in `mail`.
pub fn token_in(mail: &OutboundMail, path: &str) -> String {
    let prefix = format!("{BASE_URL}{path}?token=");
    let start = mail
        .text
        .find(&prefix)
        .unwrap_or_else(|| panic!("no {path} link in {}", mail.text));
    mail.text[start + prefix.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}
