//! Where webhooks may go: `https://` URLs (plain `http://` when allowed) on public
//! addresses. A name is checked on what it resolves to at the moment of delivery (the
//! resolver below drops private answers), so it cannot be pointed inside the network
//! after it was registered.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ip_network::{Ipv4Network, Ipv6Network};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether an address is on the public internet. The IANA special-purpose registries
/// decide (through `ip_network`), plus what they leave to other rules: multicast is never
/// a webhook receiver, and an IPv6 address that carries an IPv4 one (mapped, compatible,
/// NAT64, 6to4) is judged by the IPv4 address it leads to. Forms whose IPv4 address
/// cannot be read off (NAT64's local-use prefix, Teredo) and the discard prefix are
/// refused.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match carried_v4(v6) {
            Carried::V4(v4) => is_public_v4(v4),
            Carried::Unreadable => false,
            Carried::None => !v6.is_multicast() && Ipv6Network::from(v6).is_global(),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    !ip.is_multicast() && Ipv4Network::from(ip).is_global()
}

/// What an IPv6 address says of IPv4.
enum Carried {
    /// It stands for this IPv4 address.
    V4(Ipv4Addr),
    /// It leads to an IPv4 address that cannot be read off it.
    Unreadable,
    /// It is an IPv6 address in its own right.
    None,
}

fn carried_v4(ip: Ipv6Addr) -> Carried {
    let s = ip.segments();
    let v4 = |high: u16, low: u16| Carried::V4(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
    match s {
        // IPv4-mapped ::ffff:0:0/96 and IPv4-compatible ::/96 (which holds :: and ::1 too).
        [0, 0, 0, 0, 0, 0xffff | 0, ..] => v4(s[6], s[7]),
        // NAT64's well-known prefix 64:ff9b::/96 (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => v4(s[6], s[7]),
        // NAT64's local-use prefix 64:ff9b:1::/48 (RFC 8215) puts the address where its
        // operator chooses; Teredo 2001::/32 hides it.
        [0x64, 0xff9b, 1, ..] | [0x2001, 0, ..] => Carried::Unreadable,
        // 6to4 2002::/16 (RFC 3056): the IPv4 address follows the prefix.
        [0x2002, ..] => v4(s[1], s[2]),
        // The discard-only prefix 100::/64 (RFC 6666) leads nowhere.
        [0x100, 0, 0, 0, ..] => Carried::Unreadable,
        _ => Carried::None,
    }
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
        // A name's trailing dot makes it absolute; it names the same host.
        url::Host::Domain(name) if is_localhost(name.trim_end_matches('.')) => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
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

/// `localhost` and its subdomains, which resolve to loopback by rule (RFC 6761).
fn is_localhost(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
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
            "::127.0.0.1",
            "198.18.0.1",
            "198.19.255.254",
            "100.127.255.254",
            "0.1.2.3",
            "240.0.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "192.0.0.8",
            "192.0.2.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::a00:1",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "fc00::1",
            "fdff:ffff::1",
            "ff02::1",
            "ff0e::1",
            "2001:db8::1",
            "100::1",
            "::",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "64:ff9b::101:101",
            "2002:101:101::1",
        ] {
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
            "https://LOCALHOST./",
            "https://localhost../",
            "https://api.localhost./",
            "https://198.18.0.1/",
            "https://[64:ff9b::7f00:1]/",
            "https://[2002:7f00:1::]/",
            "https://[::ffff:7f00:1]/",
            "https://2130706433/",
            "https://0x7f.1/",
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
