//! Mails that sign a user in: password recovery (`POST recover`), a sign-in code or link
//! (`POST otp`, which may make the user), and a sign-up's confirmation again (`POST
//! resend`); then `POST verify` with the code (and the address) or the link's token
//! (`otp_verify`).
//!
//! Each recovery or sign-in mail holds a 6-digit code and, when the owner has a site, a
//! link to it with a 256-bit token: one pair per user, the latest mail's, spent together,
//! working once within 24 hours, and dead after 5 codes were tried (right or wrong). Only
//! their hashes are stored: the token's SHA-256, and the code's MAC under the database's
//! secret with the address, so the table's rows do not give a code back.
//!
//! Whether a mail is sent must not tell who is registered: `recover` answers `{}` for any
//! address, and holds a slot of the account's mail quota either way, as a sign-up does
//! while confirmations are on; so does `otp` for an address it may not sign up then. The
//! mails are counted per client address, per address (one a minute) and per database (30
//! an hour), whoever the address is.
//!
//! A code confirms its address, so the user it confirms keeps no password: an unconfirmed
//! user's password may be that of whoever signed the address up, not of its owner.

use jsonwebtoken::{Algorithm, EncodingKey};
use quire_kernel::secret::{random_url_token, sha256_hex};
use quire_kernel::{Budget, Email, Take};
use rand::RngExt as _;
use serde_json::Value;
use uuid::Uuid;

use super::redirect::{destination, with_token};
use super::signup::mail_error;
use super::{
    AuthError, EndUser, HOUR, MAIL_INTERVAL, MAIL_REQUESTS_PER_HOUR, MAILS_PER_HOUR, NewEndUser,
    TenantAuth, checked_email, checked_metadata,
};
use crate::ports::{MailSlot, OneTimeHashes, UserWriteError};

/// What the code's MAC covers besides the address and the code, so that no other use of
/// the secret (a JWT's signature, a refresh token's successor) ever equals one.
const CODE_CONTEXT: &str = "quire one-time code\n";

/// What a mail's code or link was sent for, which says its words.
#[derive(Debug, Clone, Copy)]
enum Purpose {
    Recovery,
    SignIn,
}

/// A new one-time code: 6 digits, uniformly drawn.
fn new_code() -> String {
    format!("{:06}", rand::rng().random_range(0..1_000_000u32))
}

/// A link's token and a code, made for a user's mail (their hashes stored).
pub(super) struct OneTime {
    pub token: String,
    pub code: String,
}

impl TenantAuth {
    /// The MAC of `code` sent to `email` (lower-cased), under the database's secret.
    pub(super) fn code_mac(&self, email: &str, code: &str) -> String {
        let message = format!("{CODE_CONTEXT}{}\n{code}", email.to_lowercase());
        jsonwebtoken::crypto::sign(
            message.as_bytes(),
            &EncodingKey::from_secret(self.target().jwt_secret.as_bytes()),
            Algorithm::HS256,
        )
        .unwrap_or_else(|_| unreachable!("HS256 signs any message"))
    }

    /// A new link and code for `user`, stored (the ones before no longer work); `None` when
    /// the user is gone meanwhile.
    pub(super) async fn new_one_time(&self, user: &EndUser) -> Result<Option<OneTime>, AuthError> {
        let token = random_url_token();
        let code = new_code();
        let hashes = OneTimeHashes {
            token_hash: sha256_hex(token.as_bytes()),
            code_hash: self.code_mac(&user.email, &code),
        };
        let stored = self
            .users()
            .set_one_time(user.id, &hashes, self.clock.now())
            .await?;
        Ok(stored.then_some(OneTime { token, code }))
    }

    /// Counts a mail to `email` against the client's, the address's and the database's
    /// limits, then holds its slot in the account's quota: all of it whether or not a mail
    /// then goes, so the answers tell nothing of the address.
    async fn hold_mail(&self, email: &str) -> Result<MailSlot, AuthError> {
        let now = self.clock.now();
        // A sliding minute (a slot kept, never given back), so a mail is never let through
        // a second after another at a window's edge.
        let to_address = self
            .limiter
            .take(
                &self.bucket("mail-to"),
                &sha256_hex(email.as_bytes()),
                &Budget::fixed(1, MAIL_INTERVAL),
                now,
            )
            .await?;
        if let Take::Refused { retry_at } = to_address {
            let wait = (retry_at - now).whole_seconds().max(1);
            return Err(AuthError::MailTooSoon {
                retry_after_secs: u64::try_from(wait).unwrap_or(1),
            });
        }
        let from_database = self
            .limiter
            .hit(&self.bucket("mails"), "all", HOUR, MAILS_PER_HOUR, now)
            .await?;
        if !from_database {
            return Err(AuthError::EmailQuotaExceeded);
        }
        let account = self.target().database.account_id;
        self.mail.reserve(account).await.map_err(mail_error)
    }

    /// Sends `user` a new code (and a link to `to`, when there is one) in `slot`. A user
    /// gone meanwhile gets nothing and the slot stays spent.
    async fn send_one_time(
        &self,
        slot: MailSlot,
        user: &EndUser,
        purpose: Purpose,
        to: Option<&str>,
    ) -> Result<(), AuthError> {
        let made = match self.new_one_time(user).await {
            Ok(made) => made,
            Err(e) => {
                self.give_back(Some(&slot)).await;
                return Err(e);
            }
        };
        let Some(made) = made else {
            return Ok(());
        };
        let kind = match purpose {
            Purpose::Recovery => "recovery",
            Purpose::SignIn => "email",
        };
        let link = to.map(|to| with_token(to, &made.token, kind));
        let (subject, text) = self.one_time_message(purpose, &made.code, link.as_deref());
        if let Err(e) = self.mail.send(slot.clone(), &user.email, &subject, &text) {
            self.give_back(Some(&slot)).await;
            return Err(mail_error(e));
        }
        Ok(())
    }

    fn one_time_message(
        &self,
        purpose: Purpose,
        code: &str,
        link: Option<&str>,
    ) -> (String, String) {
        let name = &self.target().database.name;
        let (subject, asked, open, not_you) = match purpose {
            Purpose::Recovery => (
                format!("Reset your password for {name}"),
                format!("Someone asked to reset the password for this address at {name}."),
                "Or open this link to choose a new password:",
                "nothing changes without the code",
            ),
            Purpose::SignIn => (
                format!("Your sign-in code for {name}"),
                format!("Someone asked to sign in to {name} with this address."),
                "Or open this link to sign in:",
                "nobody signs in without the code",
            ),
        };
        let link = link.map_or_else(String::new, |link| format!("{open}\n{link}\n\n"));
        let text = format!(
            "{asked}\n\nYour code: {code}\n\n{link}The code works once, within 24 hours; \
             only the latest one works. If it was not you, ignore this message: {not_you}.\n"
        );
        (subject, text)
    }

    /// `POST recover`: a recovery mail to the user of `email`, if there is one; `{}` either
    /// way. Its link leads to `redirect_to` when the owner allows it, else to the site.
    ///
    /// # Errors
    /// `RateLimited` (the client's requests), `Validation` (an address the mailer would
    /// refuse), `MailTooSoon` (a mail to the address within the minute),
    /// `EmailQuotaExceeded` (the database's mails in the hour, or the account's quota),
    /// `EmailNotSent`.
    pub async fn recover(
        &self,
        client: &str,
        email: &str,
        redirect_to: Option<&str>,
    ) -> Result<(), AuthError> {
        self.admit("mail", client, HOUR, MAIL_REQUESTS_PER_HOUR)
            .await?;
        let email = checked_email(email)?;
        let settings = self.users().settings().await?;
        let slot = self.hold_mail(&email).await?;
        let found = match self.users().user_by_email(&email).await {
            Ok(found) => found,
            Err(e) => {
                self.give_back(Some(&slot)).await;
                return Err(e.into());
            }
        };
        // An unknown address (or one stored under an older rule the mailer refuses): the
        // slot stays spent, as a mail would spend it.
        let Some((user, _)) = found.filter(|(u, _)| Email::parse(&u.email).is_ok()) else {
            return Ok(());
        };
        let to = destination(&settings, redirect_to);
        self.send_one_time(slot, &user, Purpose::Recovery, to.as_deref())
            .await
    }

    /// `POST otp`: a sign-in mail to the user of `email`, made for it (with `data` as their
    /// metadata, unconfirmed until the code is used) when there is none and `create_user`
    /// and the settings allow. An address that may not be made a user is refused as GoTrue
    /// refuses it while addresses need no confirmation (a sign-up says who is registered
    /// then), and answered `{}` with nothing sent while they do (a sign-up hides it then).
    ///
    /// # Errors
    /// As [`Self::recover`]; `OtpDisabled`, `SignupDisabled` for an unknown address while
    /// confirmations are off.
    pub async fn sign_in_by_mail(
        &self,
        client: &str,
        email: &str,
        create_user: bool,
        data: Option<Value>,
        redirect_to: Option<&str>,
    ) -> Result<(), AuthError> {
        self.admit("mail", client, HOUR, MAIL_REQUESTS_PER_HOUR)
            .await?;
        let email = checked_email(email)?;
        let metadata = Value::Object(checked_metadata(data)?.unwrap_or_default());
        let settings = self.users().settings().await?;
        let slot = self.hold_mail(&email).await?;
        let user = match self
            .user_for_sign_in(&email, create_user, &settings, metadata)
            .await
        {
            Ok(Some(user)) => user,
            Ok(None) => return Ok(()),
            Err(e) => {
                self.give_back(Some(&slot)).await;
                return Err(e);
            }
        };
        let to = destination(&settings, redirect_to);
        self.send_one_time(slot, &user, Purpose::SignIn, to.as_deref())
            .await
    }

    /// The user a sign-in mail goes to: the address's, or one made for it; `None` when
    /// nothing is to be sent and nothing told.
    async fn user_for_sign_in(
        &self,
        email: &str,
        create_user: bool,
        settings: &super::AuthSettings,
        metadata: Value,
    ) -> Result<Option<EndUser>, AuthError> {
        if let Some((user, _)) = self.users().user_by_email(email).await? {
            return Ok(Some(user).filter(|u| Email::parse(&u.email).is_ok()));
        }
        let refusal = if !create_user {
            Some(AuthError::OtpDisabled)
        } else if settings.disable_signup {
            Some(AuthError::SignupDisabled)
        } else {
            None
        };
        if let Some(refusal) = refusal {
            return if settings.confirm_email {
                Ok(None)
            } else {
                Err(refusal)
            };
        }
        let made = self
            .users()
            .sign_up_user(&NewEndUser {
                id: Uuid::new_v4(),
                email: email.to_owned(),
                password_hash: String::new(),
                user_metadata: metadata,
                email_confirmed_at: None,
                confirmation_hash: None,
                now: self.clock.now(),
            })
            .await;
        match made {
            Ok(user) => Ok(Some(user)),
            // Confirmed by someone else meanwhile: theirs is the address.
            Err(UserWriteError::EmailTaken) => {
                Ok(self.users().user_by_email(email).await?.map(|(u, _)| u))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `POST resend`: a new confirmation link for the unconfirmed sign-up of `email`
    /// (`type: signup`); the one before no longer works. `{}` whether or not there is one,
    /// a slot of the quota held either way. `email_change` is answered `{}` at once: an
    /// address change is never pending here.
    ///
    /// # Errors
    /// As [`Self::recover`]; `Validation` for another type, or no address.
    pub async fn resend(
        &self,
        client: &str,
        kind: Option<&str>,
        email: Option<&str>,
    ) -> Result<(), AuthError> {
        self.admit("mail", client, HOUR, MAIL_REQUESTS_PER_HOUR)
            .await?;
        match kind.unwrap_or_default() {
            "signup" => {}
            "email_change" => return Ok(()),
            _ => {
                return Err(AuthError::Validation(
                    "Missing one of these types: signup, email_change".into(),
                ));
            }
        }
        let Some(email) = email.filter(|e| !e.is_empty()) else {
            return Err(AuthError::Validation(
                "Type provided requires an email address".into(),
            ));
        };
        let email = checked_email(email)?;
        let slot = self.hold_mail(&email).await?;
        let token = random_url_token();
        let renewed = self
            .users()
            .renew_confirmation(&email, &sha256_hex(token.as_bytes()), self.clock.now())
            .await;
        let user = match renewed {
            Ok(Some(user)) if Email::parse(&user.email).is_ok() => user,
            Ok(_) => return Ok(()),
            Err(e) => {
                self.give_back(Some(&slot)).await;
                return Err(e.into());
            }
        };
        if let Err(e) = self.send_confirmation(slot.clone(), &user, &token) {
            self.give_back(Some(&slot)).await;
            return Err(e);
        }
        Ok(())
    }
}
