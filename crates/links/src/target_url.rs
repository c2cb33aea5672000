//! The rules a URL link's target (and its `expiredUrl`) meets: http or https, at most
//! 8 KiB, no credentials, not one of this instance's own short links, not on a host the
//! operator denies; the host normalised (lower case, IDN as punycode) by the URL parser.

use url::Url;

/// Longest URL a link may lead to, in bytes.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// Why a URL was refused; each has a stable error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    #[error("is not an absolute http or https URL with a host")]
    Invalid,
    #[error("is longer than 8 KiB")]
    TooLong,
    #[error("carries a user name or password; links never hold credentials")]
    Credentials,
    #[error("is a short link of this server; a link cannot lead to another")]
    Loop,
    #[error("is on a host this server does not link to")]
    Denied,
}

/// The hosts that URLs may not name, as the operator set them (`QUIRE_LINK_DENY_HOSTS`):
/// each denies itself and every name under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DenyHosts(Vec<String>);

impl DenyHosts {
    /// # Errors
    /// Naming the first entry that is not a host name.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut hosts = Vec::new();
        for entry in entries.into_iter().map(str::trim).filter(|e| !e.is_empty()) {
            let host = Url::parse(&format!("http://{}/", entry.trim_start_matches('.')))
                .ok()
                .and_then(|u| u.host_str().map(str::to_owned))
                .filter(|h| !h.is_empty() && !h.contains('/'))
                .ok_or_else(|| format!("{entry:?} is not a host name"))?;
            hosts.push(host);
        }
        Ok(Self(hosts))
    }

    fn denies(&self, host: &str) -> bool {
        self.0.iter().any(|d| {
            host == d
                || host
                    .strip_suffix(d.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        })
    }
}

/// What a URL is judged against: where this instance's short links live, and the
/// operator's deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRules {
    /// The origin of short links (`/s/{code}`), as `scheme://host[:port]`.
    pub links_origin: String,
    pub deny: DenyHosts,
}

impl UrlRules {
    /// The URL as it will be stored and redirected to.
    ///
    /// # Errors
    /// The [`UrlRefusal`] of the first rule it breaks, in the order of the module's summary.
    pub fn check(&self, raw: &str) -> Result<String, UrlRefusal> {
        if raw.len() > MAX_URL_BYTES {
            return Err(UrlRefusal::TooLong);
        }
        let url = Url::parse(raw.trim()).map_err(|_| UrlRefusal::Invalid)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlRefusal::Invalid);
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(UrlRefusal::Invalid);
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefusal::Credentials);
        }
        let host = host.trim_end_matches('.').to_owned();
        if self.deny.denies(&host) {
            return Err(UrlRefusal::Denied);
        }
        // By host alone: the other scheme or port of the same host is this server too, or
        // sends there.
        let own = Url::parse(&self.links_origin)
            .is_ok_and(|links| links.host_str() == Some(host.as_str()));
        if own && (url.path().starts_with("/s/") || url.path() == "/s") {
            return Err(UrlRefusal::Loop);
        }
        let out = url.to_string();
        if out.len() > MAX_URL_BYTES {
            return Err(UrlRefusal::TooLong);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(deny: &[&str]) -> UrlRules {
        UrlRules {
            links_origin: "https://quire.example".into(),
            deny: DenyHosts::parse(deny.iter().copied()).expect("deny list"),
        }
    }

    #[test]
    fn urls_are_normalised() {
        let r = rules(&[]);
        assert_eq!(
            r.check("https://EXAMPLE.com/a b?q=1#f").as_deref(),
            Ok("https://example.com/a%20b?q=1#f")
        );
        assert_eq!(
            r.check("http://bücher.example/").as_deref(),
            Ok("http://xn--bcher-kva.example/")
        );
        assert_eq!(
            r.check("https://quire.example/docs").as_deref(),
            Ok("https://quire.example/docs")
        );
    }

    #[test]
    fn each_rule_refuses_with_its_own_reason() {
        let r = rules(&["bad.example", ".evil.test"]);
        let refused = |u: &str| r.check(u).err();
        assert_eq!(refused("ftp://example.com/"), Some(UrlRefusal::Invalid));
        assert_eq!(refused("javascript:alert(1)"), Some(UrlRefusal::Invalid));
        assert_eq!(refused("/relative"), Some(UrlRefusal::Invalid));
        assert_eq!(refused("https://"), Some(UrlRefusal::Invalid));
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(refused(&long), Some(UrlRefusal::TooLong));
        assert_eq!(
            refused("https://user:pw@example.com/"),
            Some(UrlRefusal::Credentials)
        );
        assert_eq!(
            refused("https://user@example.com/"),
            Some(UrlRefusal::Credentials)
        );
        assert_eq!(
            refused("https://quire.example/s/abc"),
            Some(UrlRefusal::Loop)
        );
        assert_eq!(
            refused("https://QUIRE.example:443/s/x"),
            Some(UrlRefusal::Loop)
        );
        assert_eq!(refused("https://bad.example/x"), Some(UrlRefusal::Denied));
        assert_eq!(
            refused("https://a.b.bad.example./x"),
            Some(UrlRefusal::Denied)
        );
        assert_eq!(refused("http://x.evil.test/"), Some(UrlRefusal::Denied));
        assert_eq!(
            refused("http://quire.example:8081/s/abc"),
            Some(UrlRefusal::Loop)
        );
        assert_eq!(refused("https://notbad.example/"), None);
    }

    #[test]
    fn deny_entries_must_be_hosts() {
        assert!(DenyHosts::parse(["a b"]).is_err());
        assert_eq!(
            DenyHosts::parse(["Bücher.Example", " "]),
            Ok(DenyHosts(vec!["xn--bcher-kva.example".into()]))
        );
    }
}
