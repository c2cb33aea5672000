//! The rules a URL link's target (and its `expiredUrl`) meets: http or https, at most
//! 8 KiB, no credentials, not one of this instance's own short links, not on a host the
//! operator denies; the host normalised (lower case, IDN as punycode) by the URL parser.
//!
//! Hosts are judged as a browser would reach them: an IPv6 address that carries an IPv4
//! one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible
//! `::a.b.c.d`, NAT64's well-known prefix `64:ff9b::a.b.c.d`) is that IPv4 address, for the
//! deny list and the loop check alike.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

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

/// A host as it is judged: a name (lower case, no trailing dot) or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Judged {
    Name(String),
    Ip(IpAddr),
}

impl Judged {
    fn of(host: &Host<&str>) -> Self {
        match *host {
            Host::Domain(name) => Self::Name(name.trim_end_matches('.').to_ascii_lowercase()),
            Host::Ipv4(v4) => Self::Ip(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Self::Ip(embedded_ipv4(v6).map_or(IpAddr::V6(v6), IpAddr::V4)),
        }
    }

    /// `localhost` and the names under it, which browsers resolve to loopback themselves.
    fn is_loopback_name(&self) -> bool {
        matches!(self, Self::Name(n) if n == "localhost" || n.ends_with(".localhost"))
    }
}

/// The IPv4 address an IPv6 one carries, in any spelling: a packet sent to it may reach
/// that IPv4 host, so it is judged as that host.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    quire_kernel::ip::ipv4_inside(v6).map(|(_, v4)| v4)
}

/// The hosts that URLs may not name, as the operator set them (`QUIRE_LINK_DENY_HOSTS`):
/// each name denies itself and every name under it; an address denies itself, in any of
/// the IPv6 spellings that carry it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DenyHosts(Vec<Judged>);

impl DenyHosts {
    /// # Errors
    /// Naming the first entry that is not a host name.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut hosts = Vec::new();
        for entry in entries.into_iter().map(str::trim).filter(|e| !e.is_empty()) {
            let host = Url::parse(&format!("http://{}/", entry.trim_start_matches('.')))
                .ok()
                .and_then(|u| u.host().map(|h| Judged::of(&h)))
                .filter(|h| !matches!(h, Judged::Name(n) if n.is_empty()))
                .ok_or_else(|| format!("{entry:?} is not a host name"))?;
            hosts.push(host);
        }
        Ok(Self(hosts))
    }

    fn denies(&self, host: &Judged) -> bool {
        self.0.iter().any(|d| match (host, d) {
            (Judged::Name(host), Judged::Name(d)) => {
                host == d
                    || host
                        .strip_suffix(d.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            (host, d) => host == d,
        })
    }
}

/// What a URL is judged against: where this instance's short links live, the address the
/// pages listener is bound to, and the operator's deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRules {
    /// The origin of short links (`/s/{code}`), as `scheme://host[:port]`.
    pub links_origin: String,
    /// The pages listener's bound address: short links answer there too whatever the
    /// `Host`, and on the loopback names when it listens on loopback or every interface.
    pub listener: Option<SocketAddr>,
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
        let Some(host) = url
            .host()
            .filter(|h| !matches!(h, Host::Domain(d) if d.is_empty()))
        else {
            return Err(UrlRefusal::Invalid);
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefusal::Credentials);
        }
        let host = Judged::of(&host);
        if self.deny.denies(&host) {
            return Err(UrlRefusal::Denied);
        }
        let short_link = url.path().starts_with("/s/") || url.path() == "/s";
        if short_link && self.is_own(&host, url.port_or_known_default()) {
            return Err(UrlRefusal::Loop);
        }
        let out = url.to_string();
        if out.len() > MAX_URL_BYTES {
            return Err(UrlRefusal::TooLong);
        }
        Ok(out)
    }

    /// Whether `host:port` reaches this server's pages listener.
    fn is_own(&self, host: &Judged, port: Option<u16>) -> bool {
        // The pages domain by host alone: the other scheme or port of the same host is this
        // server too, or sends there; so are the owners' hosts under it.
        let links = Url::parse(&self.links_origin)
            .ok()
            .and_then(|u| u.host().map(|h| Judged::of(&h)));
        let on_pages_domain = links.is_some_and(|links| match (host, &links) {
            (Judged::Name(host), Judged::Name(links)) => {
                host == links
                    || host
                        .strip_suffix(links.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            (host, links) => host == links,
        });
        if on_pages_domain {
            return true;
        }
        // The listener's own address, by address and port: another port of the machine may
        // be another server.
        let Some(listener) = self.listener else {
            return false;
        };
        if port != Some(listener.port()) {
            return false;
        }
        let bound = Judged::Ip(match listener.ip() {
            IpAddr::V6(v6) => embedded_ipv4(v6).map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        });
        if *host == bound {
            return true;
        }
        // Every interface, or loopback: the loopback addresses and names reach it as well
        // (and so does the unspecified address, which connects to this machine).
        let local = listener.ip().is_unspecified() || listener.ip().is_loopback();
        local
            && match host {
                Judged::Ip(ip) => ip.is_loopback() || ip.is_unspecified(),
                name => name.is_loopback_name(),
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(deny: &[&str]) -> UrlRules {
        UrlRules {
            links_origin: "https://quire.example".into(),
            listener: None,
            deny: DenyHosts::parse(deny.iter().copied()).expect("deny list"),
        }
    }

    fn listening_on(addr: &str) -> UrlRules {
        UrlRules {
            listener: Some(addr.parse().expect("socket address")),
            ..rules(&[])
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
            Ok(DenyHosts(vec![Judged::Name(
                "xn--bcher-kva.example".into()
            )]))
        );
    }

    #[test]
    fn an_ipv6_address_carrying_a_denied_ipv4_one_is_denied() {
        let r = rules(&["169.254.169.254"]);
        for url in [
            "http://169.254.169.254/latest",
            "http://[::ffff:169.254.169.254]/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://[::FFFF:A9FE:A9FE]:8080/x",
            "http://[::ffff:0:a9fe:a9fe]/",
            "http://[::a9fe:a9fe]/",
            "http://[64:ff9b::169.254.169.254]/",
        ] {
            assert_eq!(r.check(url).err(), Some(UrlRefusal::Denied), "{url}");
        }
        for url in [
            "http://[2001:db8::a9fe:a9fe]/",
            "http://[::1]/",
            "http://[64:ff9b:1::a9fe:a9fe]/",
        ] {
            assert!(r.check(url).is_ok(), "{url}");
        }
        // An entry written as IPv6 denies the IPv4 address it carries, in every spelling.
        let r = rules(&["[::ffff:10.0.0.1]"]);
        assert_eq!(r.check("http://10.0.0.1/").err(), Some(UrlRefusal::Denied));
        assert_eq!(
            r.check("http://[64:ff9b::a00:1]/").err(),
            Some(UrlRefusal::Denied)
        );
        // An address is never a name's suffix.
        assert!(rules(&["2.3.4"]).check("http://1.2.3.4/").is_ok());
    }

    #[test]
    fn the_pages_listener_is_a_loop_by_its_address_and_port() {
        let r = listening_on("127.0.0.1:8081");
        for url in [
            "http://127.0.0.1:8081/s/abc",
            "http://[::ffff:127.0.0.1]:8081/s/abc",
            "http://localhost:8081/s/abc",
            "http://ann.localhost:8081/s/abc",
            "http://[::1]:8081/s/abc",
            "http://0.0.0.0:8081/s/abc",
            "http://127.1:8081/s/abc",
        ] {
            assert_eq!(r.check(url).err(), Some(UrlRefusal::Loop), "{url}");
        }
        for url in [
            "http://127.0.0.1:9000/s/abc",
            "http://127.0.0.1/s/abc",
            "http://127.0.0.1:8081/docs",
            "http://10.0.0.5:8081/s/abc",
        ] {
            assert!(r.check(url).is_ok(), "{url}");
        }
        // On every interface: loopback reaches it; the other addresses are not known.
        let r = listening_on("[::]:8081");
        assert_eq!(
            r.check("http://127.0.0.2:8081/s/x").err(),
            Some(UrlRefusal::Loop)
        );
        assert_eq!(
            r.check("http://localhost:8081/s/x").err(),
            Some(UrlRefusal::Loop)
        );
        // On one address: that address alone.
        let r = listening_on("10.0.0.5:8081");
        assert_eq!(
            r.check("http://10.0.0.5:8081/s/x").err(),
            Some(UrlRefusal::Loop)
        );
        assert_eq!(
            r.check("http://[::ffff:10.0.0.5]:8081/s/x").err(),
            Some(UrlRefusal::Loop)
        );
        assert!(r.check("http://localhost:8081/s/x").is_ok());
        // The owners' hosts under the pages domain are the pages listener too.
        assert_eq!(
            rules(&[]).check("https://ann.quire.example/s/abc").err(),
            Some(UrlRefusal::Loop)
        );
        assert!(rules(&[]).check("https://quire.example.org/s/abc").is_ok());
    }
}
