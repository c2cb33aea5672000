//! Sign-up and the confirmation link, so that nobody takes an address they do not receive
//! mail at: a new sign-up of an unconfirmed address replaces the pending one (its link
//! dies); while the database asks for confirmed addresses, a registered address gets the
//! answer a new one gets (GoTrue's obfuscated user, in the same time: a slot of the mail
//! quota held either way, the message sent off the request path) and its owner loses
//! nothing; the link opens a page (nothing spent) whose button confirms with the password
//! chosen at sign-up, so the victim of a sign-up in their name, pressing the button of the
//! mail it caused, confirms nothing.

use quire_kernel::offloaded;
use quire_kernel::password::verify_password;
use quire_kernel::secret::{random_url_token, sha256_hex};
use serde_json::{Value, json};
use uuid::Uuid;

use super::{
    AuthError, CONFIRMATION_LIFETIME, CONFIRMATION_TRIES, EndUser, FIVE_MINUTES, HOUR, NewEndUser,
    SIGN_UPS_PER_HOUR, TenantAuth, VERIFY_PER_5_MIN, checked_email, checked_metadata,
    plausible_link_token,
};
use crate::auth::AuthSession;
use crate::ports::{EndUserMailError, MailSlot, UserWriteError};

/// A sign-up's answer: a session when the user may sign in at once, else the user alone
/// (their address is to be confirmed, or it is registered and this is its stand-in).
#[derive(Debug, Clone)]
pub enum SignedUp {
    Session(AuthSession),
    Unconfirmed(EndUser),
}

/// The user a sign-up of a registered address answers with while confirmations are on:
/// shaped as a new unconfirmed user of that address (a fresh id, created now, the metadata
/// sent), so the answer says nothing of who is registered.
fn stand_in(email: String, user_metadata: Value, now: time::OffsetDateTime) -> EndUser {
    EndUser {
        id: Uuid::new_v4(),
        email,
        email_confirmed_at: None,
        user_metadata,
        app_metadata: json!({"provider": "email", "providers": ["email"]}),
        created_at: now,
        updated_at: now,
        last_sign_in_at: None,
    }
}

pub(super) fn mail_error(e: EndUserMailError) -> AuthError {
    match e {
        EndUserMailError::QuotaExceeded => AuthError::EmailQuotaExceeded,
        EndUserMailError::Failed(cause) => AuthError::EmailNotSent(cause),
    }
}

impl TenantAuth {
    /// `POST signup`: a new user, signed in at once unless the database asks for
    /// confirmed addresses. An unconfirmed user of the address is replaced (new password,
    /// new link, the old link dead). A confirmed one is `UserExists` when addresses need
    /// no confirmation (as GoTrue), and otherwise answered as a new address would be, with
    /// nothing changed and nothing sent.
    ///
    /// While confirmations are on, a slot of the account's mail quota is held before the
    /// address is looked at, for a registered address as for a new one (which then fills
    /// it with its message, sent off the request path): the two take the same time, and a
    /// used-up quota refuses both alike.
    ///
    /// # Errors
    /// `RateLimited`, `SignupDisabled`, `Validation` (an address the mailer would refuse
    /// among them, before anything is stored), `WeakPassword`, `UserExists`,
    /// `EmailQuotaExceeded`, `EmailNotSent`.
    pub async fn sign_up(
        &self,
        client: &str,
        email: &str,
        password: String,
        data: Option<Value>,
    ) -> Result<SignedUp, AuthError> {
        self.admit("signup", client, HOUR, SIGN_UPS_PER_HOUR)
            .await?;
        let settings = self.users().settings().await?;
        if settings.disable_signup {
            return Err(AuthError::SignupDisabled);
        }
        let email = checked_email(email)?;
        let metadata = Value::Object(checked_metadata(data)?.unwrap_or_default());
        // Hashed whether or not the address is registered: the two answers cost alike.
        let password_hash = self.hash(password).await?;
        let account = self.instance.target().database.account_id;
        let slot = if settings.confirm_email {
            Some(self.mail.reserve(account).await.map_err(mail_error)?)
        } else {
            None
        };
        let now = self.clock.now();
        let confirmation = slot.as_ref().map(|_| random_url_token());
        let stored = self
            .users()
            .sign_up_user(&NewEndUser {
                id: Uuid::new_v4(),
                email: email.clone(),
                password_hash,
                user_metadata: metadata.clone(),
                email_confirmed_at: (!settings.confirm_email).then_some(now),
                confirmation_hash: confirmation.as_deref().map(|t| sha256_hex(t.as_bytes())),
                now,
            })
            .await;
        let user = match stored {
            Ok(user) => user,
            // The slot stays spent, as the message of a new address spends it.
            Err(UserWriteError::EmailTaken) if settings.confirm_email => {
                return Ok(SignedUp::Unconfirmed(stand_in(email, metadata, now)));
            }
            Err(e) => {
                self.give_back(slot.as_ref()).await;
                return Err(e.into());
            }
        };
        let (Some(token), Some(slot)) = (confirmation, slot) else {
            return Ok(SignedUp::Session(
                self.open_session(&user, "password").await?,
            ));
        };
        if let Err(e) = self.send_confirmation(slot.clone(), &user, &token) {
            // A user whose link never left cannot confirm: nothing of the sign-up stays,
            // and the address may sign up again.
            self.give_back(Some(&slot)).await;
            self.users().delete_user(user.id).await?;
            return Err(e);
        }
        Ok(SignedUp::Unconfirmed(user))
    }

    /// An unconfirmed user of `email` with `password` and a confirmation link (the admin
    /// API's `generate_link` of a sign-up, which sends nothing): the link's token, and the
    /// user, replacing an unconfirmed one of the address as a sign-up does.
    ///
    /// # Errors
    /// `WeakPassword`, `EmailExists` (a confirmed user has the address).
    pub(super) async fn pending_sign_up(
        &self,
        email: String,
        password: String,
        metadata: Value,
    ) -> Result<(EndUser, String), AuthError> {
        let password_hash = self.hash(password).await?;
        let token = random_url_token();
        let user = self
            .users()
            .sign_up_user(&NewEndUser {
                id: Uuid::new_v4(),
                email,
                password_hash,
                user_metadata: metadata,
                email_confirmed_at: None,
                confirmation_hash: Some(sha256_hex(token.as_bytes())),
                now: self.clock.now(),
            })
            .await
            .map_err(|e| match e {
                UserWriteError::EmailTaken => AuthError::EmailExists,
                other => other.into(),
            })?;
        Ok((user, token))
    }

    /// Gives back a slot no message will use. A failure leaves it taken: one send counted
    /// too many, never a message lost, so the sign-up's own answer stands.
    pub(super) async fn give_back(&self, slot: Option<&MailSlot>) {
        if let Some(slot) = slot {
            self.mail.release(slot).await.ok();
        }
    }

    /// Queues the confirmation message; it leaves off the request path.
    pub(super) fn send_confirmation(
        &self,
        slot: MailSlot,
        user: &EndUser,
        token: &str,
    ) -> Result<(), AuthError> {
        let database = &self.instance.target().database;
        let subject = format!("Confirm your address for {}", database.name);
        let text = format!(
            "Someone signed up for {name} with this address.\n\n\
             To confirm it, open this link within 24 hours, enter the password you chose \
             when you signed up and press the button:\n\
             {issuer}/verify?token={token}&type=signup\n\n\
             Only the latest sign-up's link works. If it was not you, ignore this message: \
             nothing happens without the button and that password.\n",
            name = database.name,
            issuer = self.issuer,
        );
        self.mail
            .send(slot, &user.email, &subject, &text)
            .map_err(mail_error)
    }

    /// `GET verify?type=signup&token=…`, the link of the confirmation email: whether its
    /// token awaits the button. Nothing is spent, so a mail scanner that fetches links
    /// confirms nothing.
    ///
    /// # Errors
    /// `RateLimited`; `LinkInvalid` for an unknown, spent or expired token, or one whose
    /// tries are used up.
    pub async fn confirmation_page(&self, client: &str, token: &str) -> Result<(), AuthError> {
        self.admit("verify", client, FIVE_MINUTES, VERIFY_PER_5_MIN)
            .await?;
        if !plausible_link_token(token) {
            return Err(AuthError::LinkInvalid);
        }
        let pending = self
            .users()
            .confirmation_pending(
                &sha256_hex(token.as_bytes()),
                self.clock.now(),
                CONFIRMATION_LIFETIME,
                CONFIRMATION_TRIES,
            )
            .await?;
        if pending {
            Ok(())
        } else {
            Err(AuthError::LinkInvalid)
        }
    }

    /// `POST verify`, the button of the link's page with the password typed on it: when it
    /// is the one chosen at the sign-up that sent the link, the address is confirmed and
    /// the token spent. Every try counts against the link ([`CONFIRMATION_TRIES`]) as well
    /// as against the client's limit, and the password is checked with argon2id off the
    /// async workers.
    ///
    /// # Errors
    /// `RateLimited`; `LinkInvalid` for an unknown, spent or expired token, or one whose
    /// tries are used up; `LinkPasswordWrong` with the tries left.
    pub async fn verify(
        &self,
        client: &str,
        token: &str,
        password: String,
    ) -> Result<EndUser, AuthError> {
        self.admit("verify", client, FIVE_MINUTES, VERIFY_PER_5_MIN)
            .await?;
        if !plausible_link_token(token) {
            return Err(AuthError::LinkInvalid);
        }
        let token_hash = sha256_hex(token.as_bytes());
        let attempt = self
            .users()
            .try_confirmation(
                &token_hash,
                self.clock.now(),
                CONFIRMATION_LIFETIME,
                CONFIRMATION_TRIES,
            )
            .await?
            .ok_or(AuthError::LinkInvalid)?;
        let stored = attempt.password_hash.clone();
        let matches = offloaded(self.offload.as_ref(), move || {
            verify_password(&password, &stored)
        })
        .await?;
        if !matches {
            return Err(AuthError::LinkPasswordWrong {
                tries_left: attempt.tries_left,
            });
        }
        // Confirmed only if the password is still the one checked: a sign-up since would
        // have replaced the token as well.
        self.users()
            .confirm_email(
                &token_hash,
                &attempt.password_hash,
                self.clock.now(),
                CONFIRMATION_LIFETIME,
            )
            .await?
            .ok_or(AuthError::LinkInvalid)
    }
}
