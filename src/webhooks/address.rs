//! Where webhooks may go: `https://` URLs (plain `http://` when allowed) on public
//! addresses. A name is checked on what it resolves to at the moment of delivery (the
//! resolver below drops private answers), so it cannot be pointed inside the network
//! after it was registered.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether an address is on the public internet: not loopback, private, link-local,
/// shared (CGNAT), unspecified, multicast, broadcast or reserved for documentation.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || first == 0x2001 && ip.segments()[1] == 0x0db8
        || ip.to_ipv4().is_some_and(|v4| !is_public_v4(v4)))
}

/// Checks a webhook URL; the reason, in a sentence, when it may not be used.
pub fn check_url(url: &str, allow_http: bool, allow_private: bool) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|error| format!("not a valid URL ({error})"))?;
    match parsed.scheme() {
        "https" => {}
        "http" if allow_http => {}
        "http" => {
            return Err("must be https:// (plain http:// needs INSIGHT_WEBHOOKS_ALLOW_HTTP=true)".into());
        }
        other => return Err(format!("must be https://, not {other}://")),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not hold a user name or password".into());
    }
    let host = parsed.host().ok_or("has no host")?;
    let literal = match host {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(name) if name.eq_ignore_ascii_case("localhost") || name.ends_with(".localhost") => {
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        }
        url::Host::Domain(_) => None,
    };
    if let Some(ip) = literal
        && !allow_private
        && !is_public(ip)
    {
        return Err(format!(
            "points at {ip}, a private, loopback or link-local address (allowed only with INSIGHT_WEBHOOKS_ALLOW_PRIVATE=true)"
        ));
    }
    Ok(parsed)
}

/// Resolves names for deliveries, keeping only addresses deliveries may go to.
pub struct CheckedResolver {
    pub allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|address| allow_private || is_public(address.ip()))
                .collect();
            if allowed.is_empty() {
                let shown: Vec<String> = found.iter().map(|address| address.ip().to_string()).collect();
                return Err(format!(
                    "{host} resolves only to private, loopback or link-local addresses ({}); deliveries there need \
                     INSIGHT_WEBHOOKS_ALLOW_PRIVATE=true",
                    shown.join(", ")
                )
                .into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn urls_must_be_https_and_public_unless_allowed() {
        assert!(check_url("https://hooks.example.com/insight", false, false).is_ok());
        assert!(
            check_url("http://hooks.example.com/x", false, false)
                .unwrap_err()
                .contains("ALLOW_HTTP")
        );
        assert!(check_url("http://hooks.example.com/x", true, false).is_ok());
        assert!(check_url("ftp://x.example.com", true, true).is_err());
        assert!(check_url("not a url", true, true).is_err());
        assert!(check_url("https://user:pw@example.com/", false, false).is_err());
        for private in [
            "https://127.0.0.1/",
            "https://[::1]:8443/",
            "https://localhost/",
            "https://169.254.169.254/",
        ] {
            assert!(
                check_url(private, false, false).unwrap_err().contains("ALLOW_PRIVATE"),
                "{private}"
            );
            assert!(check_url(private, false, true).is_ok(), "{private}");
        }
    }

    #[tokio::test]
    async fn the_resolver_drops_private_answers() {
        let refused = CheckedResolver { allow_private: false }
            .resolve("localhost".parse().unwrap())
            .await;
        let error = refused.err().expect("localhost is refused").to_string();
        assert!(error.contains("ALLOW_PRIVATE"), "{error}");
        let allowed = CheckedResolver { allow_private: true }
            .resolve("localhost".parse().unwrap())
            .await
            .expect("allowed");
        assert!(allowed.count() >= 1);
    }
}
