//! Which address a request comes from, for rate limits. The TCP peer, unless the peer is a
//! trusted proxy (`QUIRE_TRUSTED_PROXIES`); then the nearest `X-Forwarded-For` entry that is
//! not itself a trusted proxy. A client can put anything in the header, so it is believed
//! only as far as trusted hops wrote it.

use std::net::IpAddr;

/// The proxies whose `X-Forwarded-For` is believed (exact addresses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(pub Vec<IpAddr>);

impl TrustedProxies {
    /// Parses a comma-separated list of IP addresses.
    ///
    /// # Errors
    /// The first entry that is not an IP address.
    pub fn parse(list: &str) -> Result<Self, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().map_err(|_| format!("{s:?} is not an IP address")))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The client address for a peer and the values of its `X-Forwarded-For` headers.
    #[must_use]
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        if !self.0.contains(&peer) {
            return peer;
        }
        let hops: Vec<&str> = forwarded_for
            .iter()
            .flat_map(|h| h.split(','))
            .map(str::trim)
            .collect();
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop.parse::<IpAddr>() {
                Ok(ip) => {
                    client = ip;
                    if !self.0.contains(&ip) {
                        break;
                    }
                }
                // An entry we cannot read ends what we can believe.
                Err(_) => break,
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_header_is_believed_only_from_trusted_peers() {
        let trusted = TrustedProxies::parse("10.0.0.1, 10.0.0.2").unwrap();
        let none = TrustedProxies::default();
        // Untrusted peer: the header is ignored.
        assert_eq!(
            none.client(ip("10.0.0.1"), &["203.0.113.9"]),
            ip("10.0.0.1")
        );
        assert_eq!(
            trusted.client(ip("198.51.100.5"), &["203.0.113.9"]),
            ip("198.51.100.5")
        );
        // Trusted peer: the nearest untrusted hop.
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &["203.0.113.9"]),
            ip("203.0.113.9")
        );
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &["1.2.3.4, 203.0.113.9, 10.0.0.2"]),
            ip("203.0.113.9"),
            "a client-supplied first entry is not believed"
        );
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &["1.2.3.4", "203.0.113.9"]),
            ip("203.0.113.9")
        );
        // Nothing readable: the peer itself.
        assert_eq!(trusted.client(ip("10.0.0.1"), &[]), ip("10.0.0.1"));
        assert_eq!(trusted.client(ip("10.0.0.1"), &["garbage"]), ip("10.0.0.1"));
        assert!(TrustedProxies::parse("10.0.0.1, nope").is_err());
        assert_eq!(
            TrustedProxies::parse("").unwrap(),
            TrustedProxies::default()
        );
    }
}
