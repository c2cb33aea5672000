//! A person's authorization of a client, from the request the consent page shows to the
//! refresh tokens it issues, and the secrets that travel along the way.
//!
//! One grant record carries the whole life of one authorization: pending (the consent
//! page's request, bound to the dashboard session that saw it, 10 minutes), approved (a
//! code was issued, 60 s), redeemed (the code became tokens), revoked (by the client, by a
//! reused code or refresh token, or by deleting the client). Its refresh tokens form one
//! family: revoking the grant revokes them all.

use base64::Engine;
use quire_kernel::secret::{OpaqueToken, TokenPurpose};
use quire_kernel::{AccountId, App, Apps, ProjectId, Resource};
use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

use crate::model::ClientId;

/// How long the consent page's request stays answerable.
pub const REQUEST_LIFETIME: Duration = Duration::minutes(10);
/// How long an authorization code can be redeemed (RFC 6749 §4.1.2 says at most 10 min;
/// Keycloak, rauthy and kanidm use 60 s).
pub const CODE_LIFETIME: Duration = Duration::seconds(60);
/// An access token's lifetime; the token endpoint's `expires_in`.
pub const ACCESS_TOKEN_LIFETIME: Duration = Duration::seconds(900);
/// A refresh token unused this long expires.
pub const REFRESH_IDLE_LIFETIME: Duration = Duration::days(30);
/// No refresh token of a grant outlives this, however often it is used.
pub const GRANT_LIFETIME: Duration = Duration::days(90);
/// A rotated refresh token presented again within this window (a client that lost the
/// answer and retried) is rotated again instead of revoking the family.
pub const REFRESH_REUSE_GRACE: Duration = Duration::seconds(10);

macro_rules! purpose {
    ($(#[$doc:meta])* $purpose:ident, $alias:ident, $name:literal) => {
        #[derive(Debug)]
        pub enum $purpose {}
        impl TokenPurpose for $purpose {
            const NAME: &'static str = $name;
        }
        $(#[$doc])*
        pub type $alias = OpaqueToken<$purpose>;
    };
}

purpose!(
    /// Names a pending request in the consent form; stored as its SHA-256.
    RequestIdPurpose, RequestId, "RequestId"
);
purpose!(
    /// An authorization code: 256 bits, stored as its SHA-256, 60 s, single use.
    CodePurpose, AuthorizationCode, "AuthorizationCode"
);
purpose!(
    /// A refresh token: 256 bits, stored as its SHA-256, rotated on every use.
    RefreshPurpose, RefreshToken, "RefreshToken"
);

/// The scopes a client may ask for: the app vocabulary of keys, and `page:read`.
pub use quire_kernel::Scopes;

/// The known scopes a space-separated `scope` (RFC 6749 §3.3) names; unknown words are
/// dropped, not refused (clients send words of their own: `claudeai`, `offline_access`).
/// `None` when it names none.
#[must_use]
pub fn requested_scopes(raw: Option<&str>) -> Option<Scopes> {
    Scopes::from_words(raw.unwrap_or("").split(' ').filter(|w| !w.is_empty()))
}

/// A request's scopes: [`requested_scopes`], or `page` when it names no known scope.
#[must_use]
pub fn parse_scope(raw: Option<&str>) -> Scopes {
    requested_scopes(raw).unwrap_or_else(default_scopes)
}

/// `page`: what a request that names no scope gets.
#[must_use]
pub fn default_scopes() -> Scopes {
    Apps::new([App::Page])
        .expect("one app is a non-empty set")
        .into()
}

/// What the consent page's "read only" choice grants of `requested`: `page:read`, when the
/// request holds `page` (whole or read-only); `None` when it holds no page scope, since the
/// choice may narrow a request, never widen it.
#[must_use]
pub fn read_only_of(requested: &Scopes) -> Option<Scopes> {
    requested
        .contains(App::Page)
        .then(|| Scopes::from_words(["page:read"]))
        .flatten()
}

/// The space-separated form, as a token's `scope`.
#[must_use]
pub fn scope_string(scopes: &Scopes) -> String {
    scopes.to_scope_string()
}

/// A PKCE code challenge (RFC 7636 §4.2, method S256): 43 base64url characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeChallenge(String);

impl CodeChallenge {
    /// `None` unless it is 43 base64url characters (a SHA-256, unpadded).
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = raw.len() == 43
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        ok.then(|| Self(raw.to_owned()))
    }

    /// As stored (the store hands it back through [`CodeChallenge::parse`]).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `verifier` (RFC 7636 §4.1: 43-128 of `[A-Za-z0-9-._~]`) hashes to this
    /// challenge; compared in constant time.
    #[must_use]
    pub fn verifies(&self, verifier: &str) -> bool {
        let well_formed = (43..=128).contains(&verifier.len())
            && verifier
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
        if !well_formed {
            return false;
        }
        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        subtle::ConstantTimeEq::ct_eq(computed.as_bytes(), self.0.as_bytes()).into()
    }
}

/// Where a grant stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantStage {
    /// Shown on the consent page, not yet decided.
    Pending {
        request_hash: String,
        session_hash: String,
        expires_at: OffsetDateTime,
    },
    /// Approved: a code was issued.
    Approved {
        code_hash: String,
        code_expires_at: OffsetDateTime,
    },
    /// The code was exchanged for tokens.
    Redeemed {
        code_hash: String,
        redeemed_at: OffsetDateTime,
    },
}

/// One authorization of one client by one account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// 256-bit random, base64url.
    pub id: String,
    pub client_id: ClientId,
    pub account_id: AccountId,
    /// The requested scopes while pending; the approved ones (never wider) after.
    pub scopes: Scopes,
    /// The project its tokens act in, picked at consent. `None` while pending, and for
    /// grants approved before the consent page had a picker: those act in the client's home
    /// project ([`crate::consent::home_project`]).
    pub project_id: Option<ProjectId>,
    /// The resource its tokens are for (RFC 8707): their `aud`.
    pub resource: Resource,
    /// The redirect URI as the request presented it (the token request must repeat it).
    pub redirect_uri: String,
    /// The client's `state`, echoed on the redirect.
    pub state: Option<String>,
    pub code_challenge: CodeChallenge,
    pub stage: GrantStage,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

/// What approving a pending grant stores with it, in the same write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// SHA-256 (hex) of the code issued.
    pub code_hash: String,
    pub code_expires_at: OffsetDateTime,
    /// The project the person picked, checked to be one the account may act in.
    pub project_id: ProjectId,
    /// The scopes approved: the requested ones, or fewer (the read-only choice).
    pub scopes: Scopes,
}

/// A stored refresh token of a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRecord {
    pub token_hash: String,
    pub grant_id: String,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    /// When it was exchanged for its successor.
    pub rotated_at: Option<OffsetDateTime>,
}

/// A grant that still issues tokens, and when it last did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGrant {
    pub grant: Grant,
    /// When its newest refresh token was issued: the code's redemption or the last refresh.
    pub last_issued_at: OffsetDateTime,
}

impl RefreshRecord {
    /// A fresh refresh token for `grant` and its record: idle lifetime from `now`, never past
    /// the grant's absolute lifetime.
    #[must_use]
    pub fn issue(grant: &Grant, now: OffsetDateTime) -> (RefreshToken, Self) {
        let token = RefreshToken::generate();
        let record = Self {
            token_hash: token.hash(),
            grant_id: grant.id.clone(),
            created_at: now,
            expires_at: (now + REFRESH_IDLE_LIFETIME).min(grant.created_at + GRANT_LIFETIME),
            rotated_at: None,
        };
        (token, record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7636_example_verifier_matches_its_challenge() {
        // RFC 7636 Appendix B.
        let challenge = CodeChallenge::parse("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        let challenge = challenge.expect("43 base64url characters");
        assert!(challenge.verifies("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        assert!(!challenge.verifies("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj"));
        // Too short, or outside the verifier alphabet, never matches.
        assert!(!challenge.verifies("short"));
        assert!(!challenge.verifies(&format!("{}!", "a".repeat(43))));
        assert_eq!(CodeChallenge::parse("plain-challenge"), None);
        assert_eq!(CodeChallenge::parse(&"a".repeat(44)), None);
    }

    #[test]
    fn scopes_are_the_app_words_and_default_to_page() {
        assert_eq!(scope_string(&parse_scope(None)), "page");
        assert_eq!(scope_string(&parse_scope(Some("link  page"))), "page link");
        assert_eq!(scope_string(&parse_scope(Some("page admin"))), "page");
        assert_eq!(scope_string(&parse_scope(Some("claudeai"))), "page");
        assert_eq!(scope_string(&parse_scope(Some("page:read"))), "page:read");
        assert_eq!(requested_scopes(Some("claudeai offline_access")), None);
    }

    #[test]
    fn the_read_only_choice_narrows_to_page_read_and_never_widens() {
        let read = |raw: &str| read_only_of(&parse_scope(Some(raw))).map(|s| scope_string(&s));
        assert_eq!(read("page").as_deref(), Some("page:read"));
        assert_eq!(read("page link").as_deref(), Some("page:read"));
        assert_eq!(read("page:read").as_deref(), Some("page:read"));
        assert_eq!(read("link"), None);
    }
}
