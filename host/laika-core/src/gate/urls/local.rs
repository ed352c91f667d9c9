//! Local destinations: addresses on the user's own machine or network,
//! where a page would reach services that trust their neighbours (a
//! router's admin page, a debugging port, a printer). The URL parser has
//! already normalised every spelling browsers accept (decimal, octal and
//! hex IPv4, IPv4-mapped IPv6, percent-encoded and IDN host names), so the
//! host is judged as the browser will dial it. Names are judged by what
//! they say: the gate resolves nothing, so a public name that resolves to
//! a local address is left to the browser's own private-network rules.

use std::net::{Ipv4Addr, Ipv6Addr};
use url::{Host, Url};

/// What kind of local address `url` points at, for the verdict's sentence;
/// `None` for a public one.
pub(super) fn kind(url: &Url) -> Option<&'static str> {
    match url.host() {
        // An http(s) URL always has a host; without one, nothing says it is public.
        None => Some("a destination without a host"),
        Some(Host::Ipv4(ip)) => v4(ip),
        Some(Host::Ipv6(ip)) => v6(ip),
        Some(Host::Domain(name)) => domain(name),
    }
}

fn v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("this computer (loopback)")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("an address on a private network")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if ip.is_multicast() || ip.is_broadcast() {
        Some("a multicast or broadcast address")
    } else if a == 0 || a >= 240 || (a == 192 && b == 0 && c == 0) {
        Some("an unspecified or reserved address")
    } else {
        None
    }
}

fn v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    // Forms that carry an IPv4 address: mapped (::ffff:a.b.c.d), compatible
    // (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::).
    let low = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    if let Some(inner) = ip.to_ipv4_mapped() {
        return v4(inner);
    }
    if ip.is_loopback() {
        return Some("this computer (loopback)");
    }
    if ip.is_unspecified() {
        return Some("an unspecified or reserved address");
    }
    if s[..6] == [0; 6] || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return v4(low);
    }
    if s[0] == 0x2002 {
        return v4(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => Some("an address on a private network"),
        x if x & 0xffc0 == 0xfe80 || x & 0xffc0 == 0xfec0 => Some("a link-local address"),
        x if x & 0xff00 == 0xff00 => Some("a multicast or broadcast address"),
        _ => None,
    }
}

/// Names reserved for local use, and single-label names (an intranet host
/// the system's search domain completes).
const LOCAL_SUFFIXES: &[&str] = &[
    "localhost",
    "local",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "home.arpa",
];

fn domain(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        return Some("this computer (localhost)");
    }
    if !name.contains('.') {
        return Some("a name on the local network");
    }
    if LOCAL_SUFFIXES
        .iter()
        .any(|s| name == *s || name.ends_with(&format!(".{s}")))
    {
        return Some("a name on the local network");
    }
    embedded_v4(&name).and_then(v4)
}

/// An IPv4 address spelled inside a name, as wildcard DNS services resolve
/// them (`127.0.0.1.nip.io`, `192-168-1-1.sslip.io`).
fn embedded_v4(name: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = name.split(['.', '-']).collect();
    parts.windows(4).find_map(|w| {
        let mut octets = [0u8; 4];
        for (octet, part) in octets.iter_mut().zip(w) {
            let all_digits =
                !part.is_empty() && part.len() <= 3 && part.bytes().all(|b| b.is_ascii_digit());
            *octet = if all_digits {
                part.parse().ok()?
            } else {
                return None;
            };
        }
        let ip = Ipv4Addr::from(octets);
        v4(ip).map(|_| ip)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(raw: &str) -> bool {
        kind(&Url::parse(raw).unwrap()).is_some()
    }

    #[test]
    fn every_spelling_of_a_local_address_is_local() {
        for raw in [
            "http://127.0.0.1:9222/json",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://app.localhost:3000/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://%31%32%37.0.0.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:c0a8:101]/",
            "http://[64:ff9b::a00:1]/",
            "http://[2002:c0a8:101::1]/",
            "http://[fd12:3456::1]/",
            "http://[fe80::1]/",
            "http://[ff02::1]/",
            "http://[::]/",
            "http://0.0.0.0:8080/",
            "http://192.168.1.1/",
            "http://10.0.0.7/admin",
            "http://172.20.3.4/",
            "http://100.100.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://224.0.0.251/",
            "http://255.255.255.255/",
            "http://router/",
            "http://printer.local/",
            "http://nas.home.arpa/",
            "http://git.corp/",
            "http://127.0.0.1.nip.io/",
            "http://192-168-1-1.sslip.io/",
            "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/",
        ] {
            assert!(local(raw), "{raw}");
        }
    }

    #[test]
    fn public_addresses_are_not() {
        for raw in [
            "https://example.com/",
            "https://shop.example/product/42",
            "http://93.184.216.34/",
            "http://[2606:2800:220:1::1]/",
            "http://172.32.0.1/",
            "http://100.128.0.1/",
            "https://1-2-3.example.com/",
            "https://v2.api.example.org/",
        ] {
            assert!(!local(raw), "{raw}");
        }
    }
}
