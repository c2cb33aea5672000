//! Client ID Metadata Documents: a client whose `client_id` is an `https` URL, where Quire
//! reads the client's metadata (`client_name`, `redirect_uris`, …) as JSON.
//!
//! The rules here are pure: which URLs may be fetched ([`document_url`]), what a fetched
//! document must say ([`check_document`]), and how long an answer is held
//! ([`cache_lifetime`], [`FAILURE_LIFETIME`]). Fetching, with its address checks, deadline
//! and size cap, is the [`ClientMetadataDocuments`] port's; holding answers is the adapter's.
//! [`MetadataDocuments::resolve`] puts them together for the authorization endpoint.
//!
//! Such a client is public (`token_endpoint_auth_method` `none`: PKCE binds the code), its
//! redirect URIs follow [`RedirectUri::parse_for_agent`], and it is shown as unverified.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use time::OffsetDateTime;
use url::{Host, Url};

use crate::model::{ClientId, ClientType, OAuthClient, Registration};
use crate::ports::{ClientMetadataDocuments, FetchError};
use crate::redirect::{MAX_REDIRECT_URIS, RedirectUri};

/// Longest document URL (a `client_id`), in bytes.
pub const MAX_DOCUMENT_URL_BYTES: usize = 512;
/// Largest document, in bytes; a longer answer is refused.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;
/// A fetch's whole deadline: resolving, connecting, TLS, the answer and its body.
pub const FETCH_DEADLINE: Duration = Duration::from_secs(5);
/// A fetched document is held at least this long, whatever its `Cache-Control` says ...
pub const MIN_CACHE_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// ... and at most this long.
pub const MAX_CACHE_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// A failed fetch is remembered this long before the URL is tried again.
pub const FAILURE_LIFETIME: Duration = Duration::from_secs(60);

/// How long a document is held, from its `Cache-Control: max-age` (none: the minimum).
#[must_use]
pub fn cache_lifetime(max_age: Option<Duration>) -> Duration {
    max_age
        .unwrap_or(MIN_CACHE_LIFETIME)
        .clamp(MIN_CACHE_LIFETIME, MAX_CACHE_LIFETIME)
}

/// Why a metadata document client cannot authorize; each says what was wrong, never what
/// the document held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DocumentRefusal {
    #[error("client metadata documents are turned off on this server")]
    Disabled,
    #[error("the client_id URL is not acceptable: {0}")]
    BadUrl(&'static str),
    #[error("the client metadata document could not be fetched: {0}")]
    Fetch(FetchError),
    #[error("the client metadata document is not acceptable: {0}")]
    BadDocument(&'static str),
}

impl DocumentRefusal {
    /// The sentence the authorization endpoint's error page shows.
    #[must_use]
    pub fn page_message(self) -> &'static str {
        use DocumentRefusal as R;
        use FetchError as F;
        match self {
            R::Disabled => {
                "This server does not accept a URL as client_id (client metadata documents are turned off); the application must register first."
            }
            R::BadUrl(_) => {
                "The client_id URL is not acceptable: it must be an https URL with a path, without fragment, user name or dot segments, in canonical form, at most 512 bytes."
            }
            R::Fetch(F::ForbiddenAddress) => {
                "The client metadata document was not fetched: its host resolves to a loopback, private, link-local or reserved address."
            }
            R::Fetch(F::Unreachable) => {
                "The client metadata document could not be fetched: its host could not be resolved or reached."
            }
            R::Fetch(F::Redirected) => {
                "The client metadata document could not be fetched: its server answered with a redirect, which Quire does not follow."
            }
            R::Fetch(F::Status) => {
                "The client metadata document could not be fetched: its server answered with an error status."
            }
            R::Fetch(F::TimedOut) => {
                "The client metadata document could not be fetched: its server did not answer within 5 seconds."
            }
            R::Fetch(F::TooLarge) => {
                "The client metadata document was refused: it is larger than 16 KiB."
            }
            R::Fetch(F::NotJson) => {
                "The client metadata document was refused: it is not served as application/json."
            }
            R::BadDocument(BAD_JSON) => {
                "The client metadata document was refused: it is not a JSON object of client metadata."
            }
            R::BadDocument(CLIENT_ID_DIFFERS) => {
                "The client metadata document was refused: its client_id is not exactly the URL it was fetched from."
            }
            R::BadDocument(BAD_REDIRECTS) => {
                "The client metadata document was refused: redirect_uris must list 1-10 redirect URIs that follow the rules for agents (https, http on localhost, or an app's own scheme)."
            }
            R::BadDocument(NOT_PUBLIC) => {
                "The client metadata document was refused: its token_endpoint_auth_method must be none (and it must carry no client_secret)."
            }
            R::BadDocument(_) => {
                "The client metadata document was refused: it asks for grant or response types other than authorization_code, refresh_token and code."
            }
        }
    }
}

const BAD_JSON: &str = "it is not a JSON object of client metadata";
const CLIENT_ID_DIFFERS: &str = "its client_id is not exactly the URL it was fetched from";
const BAD_REDIRECTS: &str = "redirect_uris must list 1-10 redirect URIs for agents";
const NOT_PUBLIC: &str = "token_endpoint_auth_method must be none, without client_secret";
const BAD_TYPES: &str = "only authorization_code, refresh_token and code are supported";

/// Checks `raw` as a document URL: `https` (or, with `allow_loopback_http`, a test server's
/// `http` on a loopback IP literal or `localhost`), a host, a path other than `/`, no
/// fragment, user name, password or dot segment, at most [`MAX_DOCUMENT_URL_BYTES`], and
/// written as the URL parser writes it back (so the exact comparison with the document's
/// `client_id` means what it says).
///
/// # Errors
/// [`DocumentRefusal::BadUrl`] naming the rule.
pub fn document_url(raw: &str, allow_loopback_http: bool) -> Result<Url, DocumentRefusal> {
    let bad = DocumentRefusal::BadUrl;
    if raw.len() > MAX_DOCUMENT_URL_BYTES {
        return Err(bad("it is longer than 512 bytes"));
    }
    if raw.contains('#') {
        return Err(bad("it has a fragment"));
    }
    let url = Url::parse(raw).map_err(|_| bad("it is not an absolute URL"))?;
    if url.as_str() != raw {
        return Err(bad("it is not in canonical form"));
    }
    let loopback = match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(d)) => d == "localhost",
        None => return Err(bad("it has no host")),
    };
    match url.scheme() {
        "https" => {}
        "http" if allow_loopback_http && loopback => {}
        _ => return Err(bad("it is not https")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("it carries a user name or password"));
    }
    // The parser resolves dot segments, so the canonical check above refuses them already;
    // an encoded one (`%2e`) is refused here.
    let path = url.path();
    if path == "/" || path.is_empty() {
        return Err(bad("it has no path"));
    }
    if path
        .split('/')
        .any(|s| s.eq_ignore_ascii_case("%2e") || s.eq_ignore_ascii_case("%2e%2e"))
    {
        return Err(bad("it has a dot segment"));
    }
    Ok(url)
}

/// The document's fields Quire reads; the rest is ignored.
#[derive(Debug, Deserialize)]
struct Document {
    client_id: String,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    client_secret: Option<serde_json::Value>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
}

/// Checks a fetched document against the URL `url` it came from and makes the client it
/// describes (registered at `now`, as far as this request knows).
///
/// # Errors
/// [`DocumentRefusal::BadDocument`] naming the rule.
pub fn check_document(
    url: &str,
    body: &[u8],
    now: OffsetDateTime,
) -> Result<OAuthClient, DocumentRefusal> {
    let bad = DocumentRefusal::BadDocument;
    let doc: Document = serde_json::from_slice(body).map_err(|_| bad(BAD_JSON))?;
    if doc.client_id != url {
        return Err(bad(CLIENT_ID_DIFFERS));
    }
    let id = ClientId::parse(url).ok_or(bad(CLIENT_ID_DIFFERS))?;
    if doc.client_secret.is_some()
        || doc.token_endpoint_auth_method.as_deref().unwrap_or("none") != "none"
    {
        return Err(bad(NOT_PUBLIC));
    }
    let allowed = |values: Option<&Vec<String>>, allowed: &[&str]| {
        values
            .into_iter()
            .flatten()
            .all(|v| allowed.contains(&v.as_str()))
    };
    if !allowed(
        doc.grant_types.as_ref(),
        &["authorization_code", "refresh_token"],
    ) || !allowed(doc.response_types.as_ref(), &["code"])
    {
        return Err(bad(BAD_TYPES));
    }
    if doc.redirect_uris.is_empty() || doc.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(bad(BAD_REDIRECTS));
    }
    let mut redirect_uris = Vec::with_capacity(doc.redirect_uris.len());
    for raw in &doc.redirect_uris {
        let uri = RedirectUri::parse_for_agent(raw).map_err(|_| bad(BAD_REDIRECTS))?;
        if !redirect_uris.contains(&uri) {
            redirect_uris.push(uri);
        }
    }
    Ok(OAuthClient {
        id,
        name: crate::dynamic::shown_name(doc.client_name.as_deref()),
        client_type: ClientType::Public,
        redirect_uris,
        secret_hash: None,
        created_at: now,
        deleted_at: None,
        registration: Registration::MetadataDocument,
        last_used_at: None,
    })
}

/// The authorization endpoint's view of metadata document clients: the operator's switches
/// and the fetching port.
#[derive(Debug, Clone)]
pub struct MetadataDocuments {
    port: Arc<dyn ClientMetadataDocuments>,
    enabled: bool,
    allow_loopback_http: bool,
}

impl MetadataDocuments {
    /// `enabled`: the operator's switch. `allow_loopback_http`: documents on a loopback
    /// `http` server may be fetched (test servers only; the wiring decides when).
    #[must_use]
    pub fn new(
        port: Arc<dyn ClientMetadataDocuments>,
        enabled: bool,
        allow_loopback_http: bool,
    ) -> Self {
        Self {
            port,
            enabled,
            allow_loopback_http,
        }
    }

    /// Whether a URL may be a `client_id` here (the RFC 8414 document says so).
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The client the document at `id` describes, fetched through the port (which may hold
    /// answers; see [`cache_lifetime`]).
    ///
    /// # Errors
    /// [`DocumentRefusal`]: turned off, a bad URL, a failed fetch, a bad document.
    pub async fn resolve(
        &self,
        id: &ClientId,
        now: OffsetDateTime,
    ) -> Result<OAuthClient, DocumentRefusal> {
        if !self.enabled {
            return Err(DocumentRefusal::Disabled);
        }
        let url = document_url(id.as_str(), self.allow_loopback_http)?;
        let fetched = self
            .port
            .fetch(&url)
            .await
            .map_err(DocumentRefusal::Fetch)?;
        check_document(id.as_str(), &fetched.body, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::MAX_NAME_CHARS;

    const URL: &str = "https://app.example/oauth/client.json";

    #[test]
    fn document_urls_follow_the_rules() {
        assert!(document_url(URL, false).is_ok());
        assert!(document_url("https://app.example/c?v=1", false).is_ok());
        let refused = |raw: &str| match document_url(raw, false) {
            Err(DocumentRefusal::BadUrl(why)) => why,
            other => panic!("{raw}: {other:?}"),
        };
        assert_eq!(refused("http://app.example/c"), "it is not https");
        assert_eq!(refused("https://app.example/c#x"), "it has a fragment");
        assert_eq!(refused("https://app.example/"), "it has no path");
        assert_eq!(
            refused("https://app.example"),
            "it is not in canonical form"
        );
        assert_eq!(
            refused("https://u:p@app.example/c"),
            "it carries a user name or password"
        );
        assert_eq!(
            refused("https://app.example/a/../c"),
            "it is not in canonical form"
        );
        assert!(document_url("https://app.example/a/%2e%2e/c", false).is_err());
        assert!(document_url("https://app.example/a/%2E/c", false).is_err());
        assert_eq!(
            refused("HTTPS://App.Example/c"),
            "it is not in canonical form"
        );
        assert_eq!(
            refused(&format!("https://app.example/{}", "x".repeat(500))),
            "it is longer than 512 bytes"
        );
        assert_eq!(
            refused("https://app.example:443/c"),
            "it is not in canonical form"
        );
    }

    #[test]
    fn loopback_http_only_with_the_test_switch() {
        let raw = "http://127.0.0.1:8123/client.json";
        assert!(document_url(raw, false).is_err());
        assert!(document_url(raw, true).is_ok());
        assert!(document_url("http://localhost:8123/c", true).is_ok());
        assert!(document_url("http://10.0.0.1/c", true).is_err());
        assert!(document_url("http://app.example/c", true).is_err());
    }

    fn doc(fields: &str) -> Vec<u8> {
        format!(r#"{{"client_id":"{URL}",{fields}}}"#).into_bytes()
    }

    #[test]
    fn a_good_document_makes_a_public_unverified_client() {
        let body = doc(
            r#""client_name":"Claude Code","redirect_uris":["http://localhost:3118/callback","https://app.example/cb"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"logo_uri":"https://app.example/l.png""#,
        );
        let client = check_document(URL, &body, OffsetDateTime::UNIX_EPOCH).unwrap();
        assert_eq!(client.id.as_str(), URL);
        assert_eq!(client.name, "Claude Code");
        assert_eq!(client.client_type, ClientType::Public);
        assert_eq!(client.registration, Registration::MetadataDocument);
        assert!(client.is_unverified());
        assert!(
            client
                .redirect_for("http://localhost:5000/callback")
                .is_some()
        );
        assert_eq!(client.redirect_uris.len(), 2);
    }

    #[test]
    fn bad_documents_say_which_rule() {
        let refused = |body: &[u8]| match check_document(URL, body, OffsetDateTime::UNIX_EPOCH) {
            Err(DocumentRefusal::BadDocument(why)) => why,
            other => panic!("{other:?}"),
        };
        let uris = r#""redirect_uris":["https://app.example/cb"]"#;
        assert_eq!(refused(b"[]"), BAD_JSON);
        assert_eq!(refused(b"{\"client_name\":\"x\"}"), BAD_JSON);
        let other = format!(r#"{{"client_id":"{URL}/x",{uris}}}"#);
        assert_eq!(refused(other.as_bytes()), CLIENT_ID_DIFFERS);
        let trailing = format!(r#"{{"client_id":"{URL}/",{uris}}}"#);
        assert_eq!(refused(trailing.as_bytes()), CLIENT_ID_DIFFERS);
        assert_eq!(refused(&doc(r#""redirect_uris":[]"#)), BAD_REDIRECTS);
        assert_eq!(
            refused(&doc(r#""redirect_uris":["javascript:alert(1)"]"#)),
            BAD_REDIRECTS
        );
        let secret = format!(r#"{uris},"client_secret":"s""#);
        assert_eq!(refused(&doc(&secret)), NOT_PUBLIC);
        let basic = format!(r#"{uris},"token_endpoint_auth_method":"client_secret_basic""#);
        assert_eq!(refused(&doc(&basic)), NOT_PUBLIC);
        let implicit = format!(r#"{uris},"grant_types":["implicit"]"#);
        assert_eq!(refused(&doc(&implicit)), BAD_TYPES);
        for why in [
            BAD_JSON,
            CLIENT_ID_DIFFERS,
            BAD_REDIRECTS,
            NOT_PUBLIC,
            BAD_TYPES,
        ] {
            assert!(DocumentRefusal::BadDocument(why).page_message().len() > 40);
        }
    }

    #[test]
    fn names_are_bounded() {
        let long = format!(
            r#""client_name":"{}","redirect_uris":["https://app.example/cb"]"#,
            "n".repeat(300)
        );
        let client = check_document(URL, &doc(&long), OffsetDateTime::UNIX_EPOCH).unwrap();
        assert_eq!(client.name.chars().count(), MAX_NAME_CHARS);
    }

    #[test]
    fn lifetimes_are_bounded() {
        assert_eq!(cache_lifetime(None), MIN_CACHE_LIFETIME);
        assert_eq!(cache_lifetime(Some(Duration::ZERO)), MIN_CACHE_LIFETIME);
        assert_eq!(
            cache_lifetime(Some(Duration::from_secs(3600))),
            Duration::from_secs(3600)
        );
        assert_eq!(
            cache_lifetime(Some(Duration::from_secs(10 * 86_400))),
            MAX_CACHE_LIFETIME
        );
    }
}
