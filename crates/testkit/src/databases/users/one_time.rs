//! The fake's one-time codes and links (recovery and sign-in mails) and sign-up links sent
//! again, as the real adapter's statements treat them.

use quire_databases::{CodeTry, EndUser, OneTimeHashes};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{State, Stored};

/// A user's one-time link and code, and the tries made at the code.
#[derive(Debug, Clone)]
pub(super) struct OneTime {
    hashes: OneTimeHashes,
    sent_at: OffsetDateTime,
    tries: u32,
}

impl Stored {
    /// The one-time code and link, if they were made after `since` and `tries` were not
    /// made at the code.
    fn live_one_time(&self, since: OffsetDateTime, tries: u32) -> Option<&OneTime> {
        self.one_time
            .as_ref()
            .filter(|o| o.sent_at > since && o.tries < tries)
    }

    /// Spends the code and link: the address confirmed, and a user it confirms keeps no
    /// password nor sign-up link.
    fn spend_one_time(&mut self, now: OffsetDateTime) -> EndUser {
        self.one_time = None;
        if self.user.email_confirmed_at.is_none() {
            self.password_hash.clear();
            self.confirmation_hash = None;
            self.user.email_confirmed_at = Some(now);
        }
        self.user.updated_at = now;
        self.user.clone()
    }
}

impl State {
    pub(super) fn set_one_time(
        &mut self,
        user: Uuid,
        hashes: &OneTimeHashes,
        now: OffsetDateTime,
    ) -> bool {
        let Some(u) = self.users.iter_mut().find(|u| u.user.id == user) else {
            return false;
        };
        u.one_time = Some(OneTime {
            hashes: hashes.clone(),
            sent_at: now,
            tries: 0,
        });
        true
    }

    pub(super) fn try_code(
        &mut self,
        email: &str,
        code_hash: &str,
        now: OffsetDateTime,
        since: OffsetDateTime,
        tries: u32,
    ) -> CodeTry {
        let Some(i) = self.by_email(email) else {
            return CodeTry::Unknown;
        };
        let u = &mut self.users[i];
        let Some(live) = u.live_one_time(since, tries) else {
            return CodeTry::Unknown;
        };
        if live.hashes.code_hash == code_hash {
            return CodeTry::Verified(u.spend_one_time(now));
        }
        let Some(one_time) = u.one_time.as_mut() else {
            return CodeTry::Unknown;
        };
        one_time.tries += 1;
        CodeTry::Wrong {
            tries_left: tries - one_time.tries,
        }
    }

    pub(super) fn spend_link(
        &mut self,
        token_hash: &str,
        now: OffsetDateTime,
        since: OffsetDateTime,
        tries: u32,
    ) -> Option<EndUser> {
        let u = self.users.iter_mut().find(|u| {
            u.live_one_time(since, tries)
                .is_some_and(|o| o.hashes.token_hash == token_hash)
        })?;
        Some(u.spend_one_time(now))
    }

    pub(super) fn renew_confirmation(
        &mut self,
        email: &str,
        token_hash: &str,
        now: OffsetDateTime,
    ) -> Option<EndUser> {
        let i = self.by_email(email)?;
        let u = &mut self.users[i];
        if u.user.email_confirmed_at.is_some() || u.password_hash.is_empty() {
            return None;
        }
        u.confirmation_hash = Some(token_hash.to_owned());
        u.confirmation_sent_at = Some(now);
        u.confirmation_tries = 0;
        Some(u.user.clone())
    }
}
