//! IPv4 addresses inside IPv6 ones: the spellings an IPv6 address may carry an IPv4 one in,
//! so that every rule judging an address (the link deny list, the loop check, which hosts a
//! client metadata document may come from) judges them alike.

use std::net::{Ipv4Addr, Ipv6Addr};

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ipv4Inside {
    /// IPv4-mapped, `::ffff:a.b.c.d` (RFC 4291): a dual-stack socket reaches the IPv4 host.
    Mapped,
    /// IPv4-translated, `::ffff:0:a.b.c.d` (RFC 2765, SIIT).
    Translated,
    /// IPv4-compatible, `::a.b.c.d` (deprecated by RFC 4291), but `::` and `::1`.
    Compatible,
    /// NAT64's well-known prefix, `64:ff9b::a.b.c.d` (RFC 6052): a NAT64 gateway reaches
    /// the IPv4 host.
    Nat64,
}

/// The IPv4 address `v6` carries, and how; `None` for any other address.
#[must_use]
pub fn ipv4_inside(v6: Ipv6Addr) -> Option<(Ipv4Inside, Ipv4Addr)> {
    let s = v6.segments();
    let [a, b] = s[6].to_be_bytes();
    let [c, d] = s[7].to_be_bytes();
    let low = Ipv4Addr::new(a, b, c, d);
    let how = match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Ipv4Inside::Mapped,
        [0, 0, 0, 0, 0xffff, 0, _, _] => Ipv4Inside::Translated,
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Ipv4Inside::Nat64,
        // The unspecified and loopback addresses are IPv6's own.
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => return None,
        [0, 0, 0, 0, 0, 0, _, _] => Ipv4Inside::Compatible,
        _ => return None,
    };
    Some((how, low))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(raw: &str) -> Option<(Ipv4Inside, Ipv4Addr)> {
        ipv4_inside(raw.parse().unwrap())
    }

    fn v4(raw: &str) -> Ipv4Addr {
        raw.parse().unwrap()
    }

    #[test]
    fn every_spelling_carries_its_ipv4_address() {
        for (raw, how, carried) in [
            ("::ffff:10.0.0.1", Ipv4Inside::Mapped, "10.0.0.1"),
            ("::ffff:a00:1", Ipv4Inside::Mapped, "10.0.0.1"),
            ("::FFFF:127.0.0.1", Ipv4Inside::Mapped, "127.0.0.1"),
            (
                "::ffff:0:169.254.169.254",
                Ipv4Inside::Translated,
                "169.254.169.254",
            ),
            ("::ffff:0:808:808", Ipv4Inside::Translated, "8.8.8.8"),
            ("::10.0.0.1", Ipv4Inside::Compatible, "10.0.0.1"),
            ("::a00:1", Ipv4Inside::Compatible, "10.0.0.1"),
            ("::0.0.0.2", Ipv4Inside::Compatible, "0.0.0.2"),
            ("64:ff9b::8.8.8.8", Ipv4Inside::Nat64, "8.8.8.8"),
            ("64:ff9b::a00:1", Ipv4Inside::Nat64, "10.0.0.1"),
            ("0064:FF9B:0:0:0:0:7f00:1", Ipv4Inside::Nat64, "127.0.0.1"),
        ] {
            assert_eq!(inside(raw), Some((how, v4(carried))), "{raw}");
        }
    }

    #[test]
    fn other_addresses_carry_none() {
        for raw in [
            "::",
            "::1",
            "2001:db8::1",
            "fe80::1",
            "::1:0:0:1",
            "::fffe:a00:1",
            "::ffff:1:a00:1",
            "64:ff9b:1::a00:1",
            "64:ff9a::a00:1",
            "2002:a00:1::1",
        ] {
            assert_eq!(inside(raw), None, "{raw}");
        }
    }
}
