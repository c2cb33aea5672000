//! Redirect URIs: what a client may register (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §2.1)
//! and how a presented URI is matched against them.
//!
//! Registered: an absolute URI without fragment, userinfo or wildcard, whose scheme is
//! - `https`, always;
//! - `http` on a loopback IP literal only (`127.0.0.1`, `[::1]`; not `localhost`, which a
//!   hosts file or DNS can point elsewhere);
//! - a private-use scheme in reverse-DNS form (`com.example.app:/cb`), for public clients
//!   only: a confidential client runs on a server and has an https address.
//!
//! A client that registers itself (RFC 7591, an agent) is held to the rules agents' real
//! callbacks need ([`RedirectUri::parse_for_agent`]): `https` on any host, `http` on
//! `localhost` too (Claude Code's `http://localhost:<port>/callback`), and any private-use
//! scheme but the dangerous ones (Cursor's `cursor://anysphere.cursor-mcp/oauth/callback`).
//!
//! Matched: byte for byte, except that a loopback `http` URI matches on any port, since a
//! native app listens on whatever port it was given (RFC 8252 §7.3).

use url::{Host, Url};

use crate::model::ClientType;

/// Most redirect URIs one client registers.
pub const MAX_REDIRECT_URIS: usize = 10;

/// Longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_LEN: usize = 2000;

/// A registered redirect URI, as the admin wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectUri {
    raw: String,
    /// The URI is `http` on a loopback IP literal: its port is not compared.
    loopback: bool,
}

/// Schemes that run code or read files where a browser lands.
const DANGEROUS_SCHEMES: [&str; 6] = ["javascript", "data", "file", "vbscript", "blob", "about"];

impl RedirectUri {
    /// Checks `raw` as a redirect URI of a `client_type` client.
    ///
    /// # Errors
    /// A message saying which rule `raw` breaks.
    pub fn parse(raw: &str, client_type: ClientType) -> Result<Self, String> {
        Self::parse_with(raw, client_type, false)
    }

    /// Checks `raw` as a redirect URI of a client that registered itself (an agent).
    ///
    /// # Errors
    /// A message saying which rule `raw` breaks.
    pub fn parse_for_agent(raw: &str) -> Result<Self, String> {
        Self::parse_with(raw, ClientType::Public, true)
    }

    fn parse_with(raw: &str, client_type: ClientType, agent: bool) -> Result<Self, String> {
        if raw.is_empty() {
            return Err("must not be empty".into());
        }
        if raw.len() > MAX_REDIRECT_URI_LEN {
            return Err(format!("must be at most {MAX_REDIRECT_URI_LEN} bytes"));
        }
        // The URL parser drops surrounding spaces and inner tabs and newlines; the registered
        // string must be the one that is compared.
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("must not contain spaces or control characters".into());
        }
        if raw.contains('#') {
            return Err("must not have a fragment".into());
        }
        if raw.contains('*') {
            return Err("must not contain a wildcard".into());
        }
        let url = Url::parse(raw).map_err(|_| "must be an absolute URI".to_owned())?;
        let scheme = url.scheme();
        if DANGEROUS_SCHEMES.contains(&scheme) {
            return Err(format!("must not use the {scheme}: scheme"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not carry a user name or password".into());
        }
        // The parser reads `https:///cb`, `https:/cb` and `https:\\cb` as host `cb`; what was
        // written names no host.
        if matches!(scheme, "https" | "http") {
            let rest = &raw[scheme.len()..];
            if !rest.starts_with("://") || rest[3..].starts_with(['/', '\\']) {
                return Err("must name a host after //".into());
            }
        }
        let loopback = match scheme {
            "https" => {
                if url.host().is_none() {
                    return Err("must name a host".into());
                }
                false
            }
            "http" if agent => {
                if !is_loopback_literal(&url) && url.host_str() != Some("localhost") {
                    return Err("may use http only on localhost, 127.0.0.1 or [::1]".into());
                }
                true
            }
            "http" => {
                if !is_loopback_literal(&url) {
                    return Err(
                        "may use http only on a loopback IP literal (127.0.0.1 or [::1])".into(),
                    );
                }
                true
            }
            _ if agent => false,
            private => {
                if client_type == ClientType::Confidential {
                    return Err(format!(
                        "uses the private scheme {private}:, which only public clients may"
                    ));
                }
                if !private.contains('.') {
                    return Err(format!(
                        "uses the scheme {private}:, which is neither https, loopback http \
                         nor a reverse-DNS private scheme such as com.example.app:"
                    ));
                }
                false
            }
        };
        Ok(Self {
            raw: raw.to_owned(),
            loopback,
        })
    }

    /// A URI the store held (checked when it was registered).
    #[must_use]
    pub fn stored(raw: &str) -> Self {
        let loopback = Url::parse(raw).is_ok_and(|u| {
            u.scheme() == "http" && (is_loopback_literal(&u) || u.host_str() == Some("localhost"))
        });
        Self {
            raw: raw.to_owned(),
            loopback,
        }
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// Whether `presented` (the `redirect_uri` of an authorization request) is this URI:
    /// the same string, or for a loopback URI the same but for the port.
    #[must_use]
    pub fn matches(&self, presented: &str) -> bool {
        if presented == self.raw {
            return true;
        }
        if !self.loopback || presented.contains(['#', '*']) {
            return false;
        }
        let (Ok(ours), Ok(theirs)) = (Url::parse(&self.raw), Url::parse(presented)) else {
            return false;
        };
        theirs.scheme() == "http"
            && theirs.username().is_empty()
            && theirs.password().is_none()
            && theirs.host() == ours.host()
            && theirs.path() == ours.path()
            && theirs.query() == ours.query()
    }
}

fn is_loopback_literal(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        Some(Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_real_callbacks_register_and_loopback_ports_are_ignored() {
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://chatgpt.com/connector/oauth/abc123",
            "http://localhost:8787/callback",
            "http://127.0.0.1:33418/callback",
            "http://[::1]/cb",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "vscode:/callback",
        ] {
            assert!(RedirectUri::parse_for_agent(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://app.example/cb",
            "http://localhost.evil.example/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "vbscript:x",
            "about:blank",
            "https://app.example/cb#f",
            "https://u:p@app.example/cb",
            "relative/cb",
        ] {
            assert!(RedirectUri::parse_for_agent(bad).is_err(), "{bad}");
        }
        let local = RedirectUri::parse_for_agent("http://localhost:8787/callback").unwrap();
        assert!(local.matches("http://localhost:50123/callback"));
        assert!(!local.matches("http://localhost:50123/other"));
        assert!(!local.matches("http://127.0.0.1:8787/callback"));
        let https =
            RedirectUri::parse_for_agent("https://claude.ai/api/mcp/auth_callback").unwrap();
        assert!(!https.matches("https://claude.ai:444/api/mcp/auth_callback"));
        // The admin's rules stay as they were.
        assert!(RedirectUri::parse("http://localhost:8787/callback", P).is_err());
    }

    const C: ClientType = ClientType::Confidential;
    const P: ClientType = ClientType::Public;

    /// (URI, client type, accepted).
    const TABLE: &[(&str, ClientType, bool)] = &[
        ("https://app.example/callback", C, true),
        ("https://app.example/callback?x=1", C, true),
        ("https://app.example:8443/cb", C, true),
        ("https://203.0.113.9/cb", C, true),
        ("https://app.example/callback", P, true),
        ("http://127.0.0.1/cb", P, true),
        ("http://127.0.0.1:8400/cb", P, true),
        ("http://[::1]:8400/cb", P, true),
        ("http://127.0.0.1:8400/cb", C, true),
        ("com.example.app:/oauth/cb", P, true),
        ("com.example.app://cb", P, true),
        ("com.example.app:/oauth/cb", C, false),
        ("myapp:/cb", P, false),
        ("http://localhost:8400/cb", P, false),
        ("http://app.example/cb", C, false),
        ("http://127.0.0.2/cb", P, false),
        ("http://10.0.0.1/cb", C, false),
        ("https://app.example/cb#frag", C, false),
        ("https://app.example/cb#", C, false),
        ("https://user:pw@app.example/cb", C, false),
        ("https://user@app.example/cb", C, false),
        ("http://localhost:80@evil.example/cb", P, false),
        ("https://*.app.example/cb", C, false),
        ("https://app.example/*", C, false),
        ("javascript:alert(1)", P, false),
        ("data:text/html,hi", P, false),
        ("file:///etc/passwd", P, false),
        ("/relative/cb", C, false),
        ("app.example/cb", C, false),
        ("", C, false),
        (" https://app.example/cb", C, false),
        ("https://app.example/c\tb", C, false),
        ("https:///cb", C, false),
        ("https:/cb", C, false),
        ("https:cb", C, false),
        ("https:\\\\cb", C, false),
    ];

    #[test]
    fn the_registration_rules_hold_for_every_row() {
        assert!(TABLE.len() >= 25);
        for (raw, kind, accepted) in TABLE {
            let got = RedirectUri::parse(raw, *kind);
            assert_eq!(got.is_ok(), *accepted, "{raw:?} as {kind:?}: {got:?}");
        }
    }

    #[test]
    fn refusals_say_which_rule() {
        let why = |raw| RedirectUri::parse(raw, C).unwrap_err();
        assert!(why("https://a.example/#x").contains("fragment"));
        assert!(why("http://a.example/").contains("loopback"));
        assert!(why("https://u@a.example/").contains("user name"));
        assert!(why("javascript:x").contains("javascript"));
        assert!(why("com.example.app:/cb").contains("public"));
        assert!(RedirectUri::parse(&format!("https://a.example/{}", "x".repeat(2000)), C).is_err());
    }

    #[test]
    fn matching_is_exact_except_the_loopback_port() {
        let web = RedirectUri::parse("https://app.example/cb", C).unwrap();
        assert!(web.matches("https://app.example/cb"));
        for other in [
            "https://app.example/cb/",
            "https://app.example/cb?x=1",
            "https://APP.example/cb",
            "https://app.example:443/cb",
            "https://app.example/cb#x",
            "https://app.example.evil/cb",
        ] {
            assert!(!web.matches(other), "{other}");
        }
        let native = RedirectUri::parse("http://127.0.0.1/cb", P).unwrap();
        for port in ["", ":1", ":8400", ":65535"] {
            assert!(
                native.matches(&format!("http://127.0.0.1{port}/cb")),
                "{port}"
            );
        }
        for other in [
            "http://127.0.0.1:8400/cb/x",
            "http://127.0.0.1:8400/other",
            "http://127.0.0.1:8400/cb?x=1",
            "http://localhost:8400/cb",
            "http://[::1]:8400/cb",
            "https://127.0.0.1:8400/cb",
            "http://u@127.0.0.1:8400/cb",
            "http://127.0.0.1:8400/cb#x",
        ] {
            assert!(!native.matches(other), "{other}");
        }
        let with_port = RedirectUri::stored("http://[::1]:9000/cb?a=b");
        assert!(with_port.matches("http://[::1]:51234/cb?a=b"));
        assert!(!with_port.matches("http://[::1]:51234/cb?a=c"));
    }
}
