//! The registered client.

use quire_kernel::secret::{OpaqueToken, TokenPurpose, random_url_token, sha256_hex};
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

use crate::redirect::RedirectUri;

/// A client's public identifier: `qc_` and 22 base64url characters (128 bits), drawn by the
/// registry; never reused, since a deleted client stays as a tombstone. Or the URL of a
/// client metadata document (see [`crate::metadata_document`]), which names the client
/// itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(String);

const CLIENT_ID_PREFIX: &str = "qc_";

impl ClientId {
    /// A fresh identifier.
    #[must_use]
    pub fn generate() -> Self {
        Self(format!("{CLIENT_ID_PREFIX}{}", &random_url_token()[..22]))
    }

    /// An identifier as a caller or the store gives it: `[A-Za-z0-9_-]`, 1-100 bytes, or an
    /// `https://` (or `http://`) URL of at most
    /// [`MAX_DOCUMENT_URL_BYTES`](crate::metadata_document::MAX_DOCUMENT_URL_BYTES) printable
    /// ASCII bytes. Whether a client has it (or whether such a URL may be fetched) is the
    /// registry's and the metadata document rules' question.
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        let plain = !raw.is_empty()
            && raw.len() <= 100
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let url = (raw.starts_with("https://") || raw.starts_with("http://"))
            && raw.len() <= crate::metadata_document::MAX_DOCUMENT_URL_BYTES
            && raw.bytes().all(|b| b.is_ascii_graphic());
        (plain || url).then(|| Self(raw.to_owned()))
    }

    /// Whether the id is a client metadata document's URL rather than one the registry drew.
    #[must_use]
    pub fn is_url(&self) -> bool {
        self.0.contains(':')
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ClientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a client can keep a secret (RFC 6749 §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientType {
    /// A server-side application: it authenticates at the token endpoint with its secret.
    Confidential,
    /// An application on the person's device (a CLI, a native or single-page app): no secret,
    /// PKCE alone binds the code to it.
    Public,
}

impl ClientType {
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "confidential" => Some(Self::Confidential),
            "public" => Some(Self::Public),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confidential => "confidential",
            Self::Public => "public",
        }
    }
}

/// How a client came to be registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// By the platform admin (`POST /api/platform/v1/oauth-clients`): a vetted application,
    /// whose tokens are for the REST API unless it asks for another resource.
    Admin,
    /// By the client itself (RFC 7591 dynamic registration): an agent nobody vetted, shown
    /// as unverified at consent, whose tokens are for the agent endpoint unless it asks for
    /// another resource, and forgotten after 30 days unused.
    Dynamic,
    /// Named by its client metadata document's URL, which Quire fetches: unvetted like a
    /// dynamic client (same default resource, shown unverified), stored when an account first
    /// asks to authorize it, never expired (a deletion blocks the URL for good).
    MetadataDocument,
}

impl Registration {
    #[must_use]
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "admin" => Some(Self::Admin),
            "dynamic" => Some(Self::Dynamic),
            "metadata_document" => Some(Self::MetadataDocument),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Dynamic => "dynamic",
            Self::MetadataDocument => "metadata_document",
        }
    }
}

/// What a client secret is for.
#[derive(Debug)]
pub enum ClientSecretPurpose {}

impl TokenPurpose for ClientSecretPurpose {
    const NAME: &'static str = "ClientSecret";
}

/// A confidential client's secret: 256 bits, shown once, stored as its SHA-256.
pub type ClientSecret = OpaqueToken<ClientSecretPurpose>;

/// A registered client, live or deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub id: ClientId,
    pub name: String,
    pub client_type: ClientType,
    pub redirect_uris: Vec<RedirectUri>,
    /// SHA-256 (hex) of the secret; `None` for a public client.
    pub secret_hash: Option<String>,
    pub created_at: OffsetDateTime,
    /// When the admin deleted it; a deleted client authorizes nothing and its tokens fail.
    pub deleted_at: Option<OffsetDateTime>,
    pub registration: Registration,
    /// When it last redeemed a code or refreshed a token (kept for dynamic clients, which
    /// expire unused).
    pub last_used_at: Option<OffsetDateTime>,
}

impl OAuthClient {
    #[must_use]
    pub fn is_live(&self) -> bool {
        self.deleted_at.is_none()
    }

    /// The resource a request that names none is for: the agent endpoint for a client
    /// that registered itself (only agents do), the REST API for the admin's clients.
    #[must_use]
    pub fn default_resource(&self) -> quire_kernel::Resource {
        match self.registration {
            Registration::Admin => quire_kernel::Resource::Api,
            Registration::Dynamic | Registration::MetadataDocument => quire_kernel::Resource::Mcp,
        }
    }

    /// Whether nobody vetted the client (it registered itself or names its own document):
    /// shown as unverified at consent.
    #[must_use]
    pub fn is_unverified(&self) -> bool {
        self.registration != Registration::Admin
    }

    /// Whether `presented` is this client's secret, compared in constant time. A public
    /// client has none, so nothing matches.
    #[must_use]
    pub fn secret_matches(&self, presented: &str) -> bool {
        let Some(stored) = &self.secret_hash else {
            return false;
        };
        let presented = sha256_hex(presented.as_bytes());
        bool::from(presented.as_bytes().ct_eq(stored.as_bytes()))
    }

    /// The registered URI `presented` matches, if any (see [`RedirectUri::matches`]).
    #[must_use]
    pub fn redirect_for(&self, presented: &str) -> Option<&RedirectUri> {
        self.redirect_uris.iter().find(|r| r.matches(presented))
    }
}

/// The registration input, already checked by the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewClient {
    pub name: String,
    pub client_type: ClientType,
    pub redirect_uris: Vec<RedirectUri>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_and_parse_back() {
        let id = ClientId::generate();
        assert!(id.as_str().starts_with("qc_"));
        assert_eq!(id.as_str().len(), 25);
        assert_eq!(ClientId::parse(id.as_str()), Some(id));
        assert_eq!(ClientId::parse(""), None);
        assert_eq!(ClientId::parse("a b"), None);
        assert_eq!(ClientId::parse(&"a".repeat(101)), None);
        let url = ClientId::parse("https://app.example/client.json").unwrap();
        assert!(url.is_url() && !ClientId::generate().is_url());
        assert_eq!(ClientId::parse("https://app.example/a b"), None);
        assert_eq!(ClientId::parse("ftp://app.example/c"), None);
        assert_eq!(
            ClientId::parse(&format!("https://a.example/{}", "x".repeat(2048))),
            None
        );
    }

    #[test]
    fn only_the_secret_itself_matches() {
        let secret = ClientSecret::generate();
        let client = OAuthClient {
            id: ClientId::generate(),
            name: "App".into(),
            client_type: ClientType::Confidential,
            redirect_uris: vec![],
            secret_hash: Some(secret.hash()),
            created_at: OffsetDateTime::UNIX_EPOCH,
            deleted_at: None,
            registration: Registration::Admin,
            last_used_at: None,
        };
        assert!(client.secret_matches(secret.expose()));
        assert!(!client.secret_matches(&format!("{}x", secret.expose())));
        assert!(!client.secret_matches(""));
        let public = OAuthClient {
            secret_hash: None,
            client_type: ClientType::Public,
            ..client
        };
        assert!(!public.secret_matches(secret.expose()));
    }
}
