//! Which addresses a client metadata document may be fetched from: public unicast only.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use quire_kernel::ip::{Ipv4Inside, ipv4_inside};

/// Whether the server may connect to `ip` for a client metadata document. Refused: the
/// unspecified, loopback (unless `allow_loopback`, the test switch), private (RFC 1918),
/// shared (CGNAT, RFC 6598), link-local, protocol-assignment, benchmarking,
/// documentation, multicast, reserved and broadcast IPv4 ranges; in IPv6 everything outside
/// global unicast (`2000::/3`) but for IPv4-mapped and NAT64 addresses (judged by the IPv4
/// address they carry, `quire_kernel::ip`; the IPv4-compatible and IPv4-translated
/// spellings are refused, whatever they carry), and in it documentation, Teredo and 6to4.
#[must_use]
pub fn admitted(ip: IpAddr, allow_loopback: bool) -> bool {
    match ip {
        IpAddr::V4(v4) => admitted_v4(v4, allow_loopback),
        IpAddr::V6(v6) => admitted_v6(v6, allow_loopback),
    }
}

fn admitted_v4(ip: Ipv4Addr, allow_loopback: bool) -> bool {
    if ip.is_loopback() {
        return allow_loopback;
    }
    let [a, b, c, _] = ip.octets();
    let refused = a == 0 // "this network", the unspecified address
        || a == 10 // RFC 1918
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local
        || (a == 172 && (16..32).contains(&b)) // RFC 1918
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 192 && b == 168) // RFC 1918
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224; // multicast, reserved, broadcast
    !refused
}

fn admitted_v6(ip: Ipv6Addr, allow_loopback: bool) -> bool {
    if ip.is_loopback() {
        return allow_loopback;
    }
    match ipv4_inside(ip) {
        // The IPv4 address they reach decides.
        Some((Ipv4Inside::Mapped, v4)) => return admitted_v4(v4, allow_loopback),
        Some((Ipv4Inside::Nat64, v4)) => return admitted_v4(v4, false),
        // No public host is reached this way (outside global unicast, as below).
        Some((Ipv4Inside::Compatible | Ipv4Inside::Translated, _)) => return false,
        None => {}
    }
    let s = ip.segments();
    let global_unicast = s[0] & 0xe000 == 0x2000;
    let documentation = s[0] == 0x2001 && s[1] == 0x0db8;
    let teredo = s[0] == 0x2001 && s[1] == 0;
    let six_to_four = s[0] == 0x2002;
    global_unicast && !documentation && !teredo && !six_to_four
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> bool {
        admitted(raw.parse().unwrap(), false)
    }

    #[test]
    fn public_addresses_are_admitted() {
        for raw in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(ok(raw), "{raw}");
        }
    }

    #[test]
    fn private_and_reserved_addresses_are_refused() {
        for raw in [
            "0.0.0.0",
            "127.0.0.1",
            "127.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001:0::1",
            "2002:a00:1::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "::a00:1",
            "::ffff:0:a00:1",
            // The compatible and translated spellings, even of a public address.
            "::8.8.8.8",
            "::ffff:0:8.8.8.8",
        ] {
            assert!(!ok(raw), "{raw}");
        }
    }

    #[test]
    fn the_test_switch_admits_loopback_only() {
        assert!(admitted("127.0.0.1".parse().unwrap(), true));
        assert!(admitted("::1".parse().unwrap(), true));
        assert!(admitted("::ffff:127.0.0.1".parse().unwrap(), true));
        // Through NAT64 or the older spellings, loopback is another host's.
        assert!(!admitted("64:ff9b::7f00:1".parse().unwrap(), true));
        assert!(!admitted("::127.0.0.2".parse().unwrap(), true));
        assert!(!admitted("::ffff:0:127.0.0.1".parse().unwrap(), true));
        assert!(!admitted("10.0.0.1".parse().unwrap(), true));
        assert!(!admitted("fe80::1".parse().unwrap(), true));
    }
}
