//! `quire-documents`: the `ClientMetadataDocuments` adapter of `quire-oauth`. It fetches an
//! OAuth client metadata document over HTTPS with reqwest, guarded against server-side
//! request forgery, and holds the answers. It depends on `quire-oauth` (the port),
//! `quire-kernel` (the IPv4 addresses IPv6 ones carry), reqwest, url, tokio and tracing;
//! nothing else of Quire.
//!
//! - The host is resolved here, every address it resolves to is checked ([`address`]), and
//!   the connection goes only to those addresses (the client is built with them), so a
//!   second DNS answer cannot switch it to an inner address.
//! - No proxy, no redirect followed (a 3xx is refused), one deadline for the whole fetch,
//!   a body cap checked on the announced length and again while reading, and a JSON
//!   content type.
//! - A document is held for its `Cache-Control: max-age` bounded to 5 minutes .. 24 hours,
//!   a failure for a minute; at most [`HELD`] answers (all forgotten when full).
//! - Whoever opens the consent page chooses the URL, so a fetch that fails is logged at
//!   info, never as an error: a connection's cause (a certificate refused, a reset) is the
//!   one thing the error page does not say.

pub mod address;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use quire_oauth::metadata_document::{
    FAILURE_LIFETIME, FETCH_DEADLINE, MAX_DOCUMENT_BYTES, cache_lifetime,
};
use quire_oauth::{ClientMetadataDocuments, FetchError, FetchedDocument};
use url::{Host, Url};

/// Most answers held at once.
pub const HELD: usize = 1024;

type Answer = Result<FetchedDocument, FetchError>;

/// Fetches client metadata documents.
#[derive(Debug)]
pub struct DocumentFetcher {
    /// The test switch: loopback addresses (and so `http` test servers) are admitted.
    allow_loopback: bool,
    held: Mutex<HashMap<String, (Instant, Answer)>>,
}

impl DocumentFetcher {
    #[must_use]
    pub fn new(allow_loopback: bool) -> Self {
        Self {
            allow_loopback,
            held: Mutex::new(HashMap::new()),
        }
    }

    fn held(&self, url: &str) -> Option<Answer> {
        let held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.get(url)
            .filter(|(until, _)| Instant::now() < *until)
            .map(|(_, answer)| answer.clone())
    }

    fn hold(&self, url: &str, answer: &Answer) {
        let lifetime = match answer {
            Ok(document) => cache_lifetime(document.max_age),
            Err(_) => FAILURE_LIFETIME,
        };
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.len() >= HELD {
            let now = Instant::now();
            held.retain(|_, (until, _)| now < *until);
            if held.len() >= HELD {
                held.clear();
            }
        }
        held.insert(url.to_owned(), (Instant::now() + lifetime, answer.clone()));
    }

    /// The addresses `url`'s host stands for, each one checked.
    async fn addresses(&self, url: &Url) -> Result<Vec<SocketAddr>, FetchError> {
        let port = url.port_or_known_default().ok_or(FetchError::Unreachable)?;
        let addresses: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => vec![SocketAddr::new(ip.into(), port)],
            Some(Host::Ipv6(ip)) => vec![SocketAddr::new(ip.into(), port)],
            Some(Host::Domain(domain)) => tokio::net::lookup_host((domain, port))
                .await
                .map_err(|_| FetchError::Unreachable)?
                .collect(),
            None => return Err(FetchError::Unreachable),
        };
        if addresses.is_empty() {
            return Err(FetchError::Unreachable);
        }
        if addresses
            .iter()
            .any(|a| !address::admitted(a.ip(), self.allow_loopback))
        {
            return Err(FetchError::ForbiddenAddress);
        }
        Ok(addresses)
    }

    async fn fetch_now(&self, url: &Url) -> Answer {
        let addresses = self.addresses(url).await?;
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_DEADLINE)
            .user_agent(concat!("Quire/", env!("CARGO_PKG_VERSION")));
        if let Some(Host::Domain(domain)) = url.host() {
            builder = builder.resolve_to_addrs(domain, &addresses);
        }
        let client = builder.build().map_err(|e| {
            // Nothing of the URL's: the machine's TLS set-up, for the operator.
            tracing::warn!(error = %causes(&e), "no HTTP client for client metadata documents");
            FetchError::Unreachable
        })?;
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                FetchError::TimedOut
            } else {
                tracing::info!(
                    host = url.host_str().unwrap_or_default(),
                    cause = %causes(&e.without_url()),
                    "client metadata document not fetched"
                );
                FetchError::Unreachable
            }
        };
        let mut response = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        if status.is_redirection() {
            return Err(FetchError::Redirected);
        }
        if !status.is_success() {
            return Err(FetchError::Status);
        }
        let headers = response.headers();
        if !is_json(
            headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
        ) {
            return Err(FetchError::NotJson);
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(FetchError::TooLarge);
        }
        let max_age = max_age(
            headers
                .get(reqwest::header::CACHE_CONTROL)
                .and_then(|v| v.to_str().ok()),
        );
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(FetchedDocument { body, max_age })
    }
}

#[async_trait]
impl ClientMetadataDocuments for DocumentFetcher {
    async fn fetch(&self, url: &Url) -> Answer {
        if let Some(answer) = self.held(url.as_str()) {
            return answer;
        }
        let answer = tokio::time::timeout(FETCH_DEADLINE, self.fetch_now(url))
            .await
            .unwrap_or(Err(FetchError::TimedOut));
        self.hold(url.as_str(), &answer);
        answer
    }
}

/// `e` and its sources, one after another: reqwest's own words ("error sending request")
/// say nothing of a certificate refused three sources down.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `application/json` or a `+json` type, parameters aside.
fn is_json(content_type: Option<&str>) -> bool {
    let Some(raw) = content_type else {
        return false;
    };
    let essence = raw
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// `Cache-Control`'s `max-age`; `no-store` and `no-cache` count as zero.
fn max_age(cache_control: Option<&str>) -> Option<Duration> {
    let mut age = None;
    for directive in cache_control?.split(',') {
        let directive = directive.trim().to_ascii_lowercase();
        if directive == "no-store" || directive == "no-cache" {
            return Some(Duration::ZERO);
        }
        if let Some(secs) = directive.strip_prefix("max-age=") {
            age = secs.trim_matches('"').parse().ok().map(Duration::from_secs);
        }
    }
    age
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_types() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(is_json(Some("application/oauth-client+json")));
        assert!(!is_json(Some("text/html")));
        assert!(!is_json(Some("text/json+json")));
        assert!(!is_json(None));
    }

    #[test]
    fn cache_control() {
        assert_eq!(max_age(None), None);
        assert_eq!(
            max_age(Some("public, max-age=3600")),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(max_age(Some("max-age=60, no-store")), Some(Duration::ZERO));
        assert_eq!(max_age(Some("max-age=x")), None);
    }

    #[tokio::test]
    async fn private_hosts_are_refused_before_connecting() {
        let fetcher = DocumentFetcher::new(false);
        for raw in [
            "https://127.0.0.1/c.json",
            "https://10.1.2.3/c.json",
            "https://[::1]/c.json",
            "https://169.254.169.254/latest",
            "https://localhost/c.json",
        ] {
            let url = Url::parse(raw).unwrap();
            assert_eq!(
                fetcher.fetch(&url).await,
                Err(FetchError::ForbiddenAddress),
                "{raw}"
            );
        }
    }
}
