//! The one-time links: what each is for, how long it lives, and what the store keeps of it.

use quire_kernel::AccountId;
use quire_kernel::secret::{OpaqueToken, TokenPurpose};
use time::{Duration, OffsetDateTime};

/// What a link does when it is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPurpose {
    /// Creates the first account (a platform admin) on a server with none.
    Setup,
    /// Confirms that the account holds its email address.
    VerifyEmail,
    /// Sets a new password.
    ResetPassword,
}

impl LinkPurpose {
    /// How long a link lives: a day to confirm an address (OWASP, and the mail may sit in an
    /// inbox overnight), an hour to reset a password (it is a credential), a day for the
    /// setup link (a restart prints a new one).
    #[must_use]
    pub const fn lifetime(self) -> Duration {
        match self {
            Self::Setup | Self::VerifyEmail => Duration::hours(24),
            Self::ResetPassword => Duration::hours(1),
        }
    }

    /// The name stored with a token.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Setup => "setup",
            Self::VerifyEmail => "verify_email",
            Self::ResetPassword => "reset_password",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Setup, Self::VerifyEmail, Self::ResetPassword]
            .into_iter()
            .find(|p| p.as_str() == s)
    }
}

/// The secret of an emailed (or logged) link.
#[derive(Debug)]
pub enum LinkSecret {}

impl TokenPurpose for LinkSecret {
    const NAME: &'static str = "LinkToken";
}

/// 32 random bytes, base64url, in the link; the store keeps its SHA-256.
pub type LinkToken = OpaqueToken<LinkSecret>;

/// What the store keeps of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountToken {
    pub hash: String,
    /// The account it acts on; `None` for the setup link.
    pub account_id: Option<AccountId>,
    pub purpose: LinkPurpose,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

impl AccountToken {
    /// A new link for `purpose`, and its stored form.
    #[must_use]
    pub fn issue(
        purpose: LinkPurpose,
        account_id: Option<AccountId>,
        now: OffsetDateTime,
    ) -> (LinkToken, Self) {
        let token = LinkToken::generate();
        let stored = Self {
            hash: token.hash(),
            account_id,
            purpose,
            created_at: now,
            expires_at: now + purpose.lifetime(),
        };
        (token, stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_round_trip_and_lifetimes_follow_the_notes() {
        for p in [
            LinkPurpose::Setup,
            LinkPurpose::VerifyEmail,
            LinkPurpose::ResetPassword,
        ] {
            assert_eq!(LinkPurpose::parse(p.as_str()), Some(p));
        }
        assert_eq!(LinkPurpose::parse("other"), None);
        assert_eq!(LinkPurpose::VerifyEmail.lifetime(), Duration::hours(24));
        assert_eq!(LinkPurpose::ResetPassword.lifetime(), Duration::hours(1));
    }

    #[test]
    fn a_link_is_stored_as_its_hash() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let (token, stored) = AccountToken::issue(LinkPurpose::ResetPassword, None, now);
        assert_eq!(token.expose().len(), 43);
        assert_eq!(stored.hash, token.hash());
        assert_ne!(stored.hash, token.expose());
        assert_eq!(stored.expires_at, now + Duration::hours(1));
    }
}
