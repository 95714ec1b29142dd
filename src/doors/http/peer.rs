//! Who a request comes from. Behind a reverse proxy every connection comes from the
//! proxy; the proxy names the client in `X-Forwarded-For` (or `Forwarded`). That header
//! is believed only from the proxies the operator lists in `INSIGHT_TRUSTED_PROXIES`,
//! and only as far back as it passes through them: a client can write anything into it,
//! but it cannot make a trusted proxy's own entry say something else.

use std::net::IpAddr;

use axum::http::HeaderMap;
use ip_network::IpNetwork;

pub use crate::domain::ClientAddr;

pub use crate::config::ForwardedHeader;

/// The proxies whose word on the client's address is taken.
#[derive(Debug, Clone)]
pub struct TrustedProxies {
    networks: Vec<IpNetwork>,
    header: ForwardedHeader,
}

impl TrustedProxies {
    pub fn new(networks: Vec<IpNetwork>, header: ForwardedHeader) -> Self {
        Self { networks, header }
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.networks.iter().any(|network| network.contains(ip))
    }

    /// The client of a request that came from `peer`: `peer` itself unless it is a
    /// trusted proxy; then, walking the forwarded chain from the nearest hop back, the
    /// first address that is not a trusted proxy (or the last readable one).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if self.networks.is_empty() || !self.trusts(peer) {
            return peer;
        }
        let hops = match self.header {
            ForwardedHeader::XForwardedFor => x_forwarded_for(headers),
            ForwardedHeader::Forwarded => forwarded(headers),
        };
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            let Some(hop) = hop else { break };
            client = canonical(hop);
            if !self.trusts(client) {
                break;
            }
        }
        client
    }
}

/// An IPv4 address written as IPv6 (`::ffff:192.0.2.1`, as a dual-stack socket reports
/// it) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The hops of every `X-Forwarded-For` header, leftmost (the farthest) first; `None`
/// where a hop is not an address.
fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|value| value.to_str().unwrap_or("?").split(','))
        .map(|hop| address(hop.trim()))
        .collect()
}

/// The `for=` of every element of every `Forwarded` header, leftmost first.
fn forwarded(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("forwarded")
        .iter()
        .flat_map(|value| value.to_str().unwrap_or("for=?").split(','))
        .map(|element| {
            element
                .split(';')
                .filter_map(|pair| pair.split_once('='))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
                .and_then(|(_, value)| address(value.trim().trim_matches('"')))
        })
        .collect()
}

/// An address as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1` or
/// `[2001:db8::1]:4711`. `unknown` and obfuscated names are no address.
fn address(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split_once(']').and_then(|(ip, _)| ip.parse().ok());
    }
    text.rsplit_once(':').and_then(|(ip, port)| {
        port.parse::<u16>().ok()?;
        ip.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn proxies(cidrs: &[&str], header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies::new(cidrs.iter().map(|c| c.parse().expect("a CIDR")).collect(), header)
    }

    fn headers(name: &'static str, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(name, HeaderValue::from_str(value).expect("a header value"));
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let forged = headers("x-forwarded-for", &["203.0.113.9"]);
        let none = proxies(&[], ForwardedHeader::XForwardedFor);
        assert_eq!(none.client(ip("198.51.100.7"), &forged), ip("198.51.100.7"));
        let other = proxies(&["10.0.0.0/8"], ForwardedHeader::XForwardedFor);
        assert_eq!(other.client(ip("198.51.100.7"), &forged), ip("198.51.100.7"));
    }

    #[test]
    fn a_trusted_proxy_names_the_client_but_not_beyond_what_it_added() {
        let trusted = proxies(&["10.0.0.0/8", "192.168.1.1/32"], ForwardedHeader::XForwardedFor);
        // The client forged the first hop; the proxy appended the real address.
        let chain = headers("x-forwarded-for", &["1.2.3.4, 203.0.113.9"]);
        assert_eq!(trusted.client(ip("10.0.0.2"), &chain), ip("203.0.113.9"));
        // Two trusted proxies in a row, the chain split over two headers.
        let two = headers("x-forwarded-for", &["203.0.113.9, 192.168.1.1", "10.1.1.1"]);
        assert_eq!(trusted.client(ip("10.0.0.2"), &two), ip("203.0.113.9"));
        // Nothing forwarded: the proxy itself; an unreadable hop stops the walk.
        assert_eq!(trusted.client(ip("10.0.0.2"), &HeaderMap::new()), ip("10.0.0.2"));
        let odd = headers("x-forwarded-for", &["203.0.113.9, garbage, 10.1.1.1"]);
        assert_eq!(trusted.client(ip("10.0.0.2"), &odd), ip("10.1.1.1"));
        // A dual-stack socket's mapped peer is the IPv4 proxy.
        let mapped = headers("x-forwarded-for", &["203.0.113.9"]);
        assert_eq!(trusted.client(ip("::ffff:10.0.0.2"), &mapped), ip("203.0.113.9"));
    }

    #[test]
    fn forwarded_elements_are_read_with_ports_and_quotes() {
        let trusted = proxies(&["10.0.0.0/8"], ForwardedHeader::Forwarded);
        let chain = headers(
            "forwarded",
            &["for=\"[2001:db8:cafe::17]:4711\";proto=https, For=10.0.0.5:80;by=10.0.0.1"],
        );
        assert_eq!(trusted.client(ip("10.0.0.2"), &chain), ip("2001:db8:cafe::17"));
        let hidden = headers("forwarded", &["for=_hidden, for=10.0.0.5"]);
        assert_eq!(trusted.client(ip("10.0.0.2"), &hidden), ip("10.0.0.5"));
        // The other header is not read.
        let wrong = headers("x-forwarded-for", &["203.0.113.9"]);
        assert_eq!(trusted.client(ip("10.0.0.2"), &wrong), ip("10.0.0.2"));
    }
}
