//! What `GET /oauth/authorize` receives, and its refusals: an error page, or an error sent
//! back on the client's redirect URI (RFC 6749 §4.1.2.1, with RFC 9207 `iss`).

use quire_kernel::InfraError;

/// The query of `GET /oauth/authorize`, as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizeRequest {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    /// RFC 8707: the resource the tokens are for.
    pub resource: Option<String>,
}

/// An error sent back to the client on its redirect URI (RFC 6749 §4.1.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectedError {
    /// The authorization server's issuer, sent as `iss` (RFC 9207).
    pub issuer: String,
    pub redirect_uri: String,
    pub error: &'static str,
    pub description: String,
    pub state: Option<String>,
}

impl RedirectedError {
    /// The URL the browser is sent to.
    #[must_use]
    pub fn location(&self) -> String {
        let mut pairs = vec![
            ("error", self.error.to_owned()),
            ("error_description", self.description.clone()),
        ];
        if let Some(state) = &self.state {
            pairs.push(("state", state.clone()));
        }
        pairs.push(("iss", self.issuer.clone()));
        with_query(&self.redirect_uri, &pairs)
    }
}

/// Why an authorization request cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizeError {
    /// The client or redirect URI cannot be trusted: an error page, never a redirect.
    #[error("{0}")]
    NotRedirectable(&'static str),
    /// Anything else: back to the client.
    #[error("{}", .0.description)]
    Redirect(RedirectedError),
    #[error(transparent)]
    Infra(#[from] InfraError),
}

/// `base` with the pairs added to its query.
pub(crate) fn with_query(base: &str, pairs: &[(&str, String)]) -> String {
    let encoded = serde_urlencoded::to_string(pairs).unwrap_or_default();
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}{encoded}")
}
