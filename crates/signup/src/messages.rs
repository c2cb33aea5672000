//! The messages the account flows send. Every link is built on the configured base URL,
//! never on a request's Host header (which an attacker chooses: "reset poisoning").

use quire_accounts::Account;
use quire_kernel::Email;
use quire_mail::{OutboundMail, Recipient};
use uuid::Uuid;

use crate::tokens::LinkToken;

/// Where links point and who the mail is from.
#[derive(Debug, Clone, Default)]
pub struct Letterhead {
    /// The dashboard's public origin (`QUIRE_BASE_URL`), without a trailing slash.
    pub base_url: String,
    /// The operator's address (`QUIRE_MAIL_FROM`), also the Reply-To.
    pub mail_from: String,
}

impl Letterhead {
    #[must_use]
    pub fn link(&self, path: &str, token: &LinkToken) -> String {
        format!(
            "{}{path}?token={}",
            self.base_url.trim_end_matches('/'),
            token.expose()
        )
    }

    fn page(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }

    /// The message; `None` when the address is not one a relay takes (the sign-up checks
    /// this before it stores anything, so only an account stored otherwise gets here).
    fn letter(&self, to: &Email, subject: &str, text: String) -> Option<OutboundMail> {
        Some(OutboundMail {
            mail_id: Uuid::now_v7(),
            to: Recipient::parse(to.as_str()).ok()?,
            reply_to: self.mail_from.clone(),
            reply_to_name: "Quire".into(),
            subject: subject.into(),
            text,
        })
    }

    pub(crate) fn verify_email(
        &self,
        account: &Account,
        token: &LinkToken,
    ) -> Option<OutboundMail> {
        let link = self.link(crate::VERIFY_PATH, token);
        self.letter(
            &account.email,
            "Confirm your email address for Quire",
            format!(
                "Hello {handle},\n\n\
                 Someone (we hope you) created the Quire account \"{handle}\" with this address.\n\
                 To confirm the address, open this link within 24 hours and press \"Confirm\":\n\n\
                 {link}\n\n\
                 If you did not sign up, ignore this message: the account stays unusable.\n",
                handle = account.handle
            ),
        )
    }

    pub(crate) fn already_registered(&self, account: &Account) -> Option<OutboundMail> {
        self.letter(
            &account.email,
            "Someone tried to sign up to Quire with your address",
            format!(
                "Hello {handle},\n\n\
                 Someone tried to create a new Quire account with this address, which already\n\
                 belongs to your account \"{handle}\". Nothing was changed.\n\n\
                 If it was you, sign in at {login}\n\
                 or, if you forgot your password, reset it at {reset}\n\n\
                 If it was not you, you can ignore this message.\n",
                handle = account.handle,
                login = self.page("/login"),
                reset = self.page(crate::RESET_PATH),
            ),
        )
    }

    pub(crate) fn reset_password(
        &self,
        account: &Account,
        token: &LinkToken,
    ) -> Option<OutboundMail> {
        let link = self.link(crate::NEW_PASSWORD_PATH, token);
        self.letter(
            &account.email,
            "Reset your Quire password",
            format!(
                "Hello {handle},\n\n\
                 Someone (we hope you) asked to reset the password of your Quire account.\n\
                 To choose a new one, open this link within an hour:\n\n\
                 {link}\n\n\
                 If you did not ask, ignore this message: your password stays as it is.\n",
                handle = account.handle
            ),
        )
    }

    pub(crate) fn password_changed(&self, account: &Account) -> Option<OutboundMail> {
        self.letter(
            &account.email,
            "Your Quire password was changed",
            format!(
                "Hello {handle},\n\n\
                 The password of your Quire account was just reset, and every session of the\n\
                 account was signed out.\n\n\
                 If you did not do this, reset it again at {reset}\n\
                 and tell the operator of this server.\n",
                handle = account.handle,
                reset = self.page(crate::RESET_PATH),
            ),
        )
    }

    pub(crate) fn password_changed_by_owner(&self, account: &Account) -> Option<OutboundMail> {
        self.letter(
            &account.email,
            "Your Quire password was changed",
            format!(
                "Hello {handle},\n\n\
                 The password of your Quire account was just changed from the dashboard, and\n\
                 every other session of the account was signed out.\n\n\
                 If you did not do this, reset it at {reset}\n\
                 and tell the operator of this server.\n",
                handle = account.handle,
                reset = self.page(crate::RESET_PATH),
            ),
        )
    }
}
