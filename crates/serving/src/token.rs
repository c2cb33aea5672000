//! Signed tokens: the visitor cookies of the pages origin and the sign-in pass the
//! dashboard hands to it. A token is `base64url(JSON claims) "." base64url(HMAC-SHA256)`,
//! keyed by a secret every replica shares; checking compares the MAC in constant time and
//! then the expiry. Tokens carry no secret: only what the pages origin needs to decide.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use time::OffsetDateTime;
use uuid::Uuid;

type HmacSha256 = Hmac<Sha256>;

/// What a token lets its holder do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TokenKind {
    /// The password of a page was given (cookie).
    #[serde(rename = "pw")]
    Unlock,
    /// An account signed in on the dashboard for a page (cookie).
    #[serde(rename = "acc")]
    Access,
    /// The short-lived hand-off from the dashboard to the pages origin (URL).
    #[serde(rename = "pass")]
    Pass,
    /// One counted view of a page with a budget: its assets may still load (cookie).
    #[serde(rename = "view")]
    View,
}

/// The claims of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    #[serde(rename = "k")]
    pub kind: TokenKind,
    /// The page it is for.
    #[serde(rename = "p")]
    pub page: Uuid,
    /// Expiry, unix seconds.
    #[serde(rename = "x")]
    pub expires: i64,
    /// The signed-in account (access, pass). Only its id: a token is signed, not
    /// encrypted, so it carries nothing personal (allow lists that name an email are checked
    /// against the account's current one).
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// A fingerprint of the page's password hash: a new password voids old cookies.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The dashboard session the account signed in with (its id hash): signing out there
    /// ends the access it gave (access, pass).
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Random, so that two passes are never the same token (each is used once).
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
}

/// Signs and checks tokens with one shared key.
#[derive(Clone)]
pub struct Signer {
    key: Vec<u8>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(..)")
    }
}

impl Signer {
    #[must_use]
    pub fn new(key: &[u8]) -> Self {
        Self { key: key.to_vec() }
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length.
        <HmacSha256 as KeyInit>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!())
    }

    #[must_use]
    pub fn sign(&self, claims: &Claims) -> String {
        let body = serde_json::to_vec(claims).unwrap_or_default();
        let body = URL_SAFE_NO_PAD.encode(body);
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{body}.{tag}")
    }

    /// The claims of a token signed with this key, of `kind`, for `page`, not expired at
    /// `now`; `None` otherwise.
    #[must_use]
    pub fn check(
        &self,
        token: &str,
        kind: TokenKind,
        page: Uuid,
        now: OffsetDateTime,
    ) -> Option<Claims> {
        let (body, tag) = token.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        mac.verify_slice(&tag).ok()?;
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()?;
        let fresh = now.unix_timestamp() < claims.expires;
        (claims.kind == kind && claims.page == page && fresh).then_some(claims)
    }

    /// Like [`Signer::check`] for a token whose page is not known beforehand (a pass).
    #[must_use]
    pub fn check_any_page(
        &self,
        token: &str,
        kind: TokenKind,
        now: OffsetDateTime,
    ) -> Option<Claims> {
        let (body, _) = token.split_once('.')?;
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()?;
        self.check(token, kind, claims.page, now)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn claims(kind: TokenKind, page: Uuid, expires: i64) -> Claims {
        Claims {
            kind,
            page,
            expires,
            account: None,
            fingerprint: Some("abc".into()),
            session: None,
            nonce: None,
        }
    }

    #[test]
    fn a_token_is_accepted_only_as_signed() {
        let signer = Signer::new(b"k1");
        let page = Uuid::new_v4();
        let now = OffsetDateTime::from_unix_timestamp(1_000).unwrap();
        let token = signer.sign(&claims(TokenKind::Unlock, page, 1_060));
        assert_eq!(
            signer.check(&token, TokenKind::Unlock, page, now),
            Some(claims(TokenKind::Unlock, page, 1_060))
        );
        // Another key, kind, page or an expired token: refused.
        assert_eq!(
            Signer::new(b"k2").check(&token, TokenKind::Unlock, page, now),
            None
        );
        assert_eq!(signer.check(&token, TokenKind::Access, page, now), None);
        assert_eq!(
            signer.check(&token, TokenKind::Unlock, Uuid::new_v4(), now),
            None
        );
        let later = OffsetDateTime::from_unix_timestamp(1_060).unwrap();
        assert_eq!(signer.check(&token, TokenKind::Unlock, page, later), None);
        // Claims changed after signing: refused.
        let (_, tag) = token.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&claims(TokenKind::Unlock, page, 9_999_999)).unwrap());
        assert_eq!(
            signer.check(&format!("{forged}.{tag}"), TokenKind::Unlock, page, now),
            None
        );
        assert_eq!(signer.check("garbage", TokenKind::Unlock, page, now), None);
        assert_eq!(
            signer
                .check_any_page(&token, TokenKind::Unlock, now)
                .unwrap()
                .page,
            page
        );
    }
}
