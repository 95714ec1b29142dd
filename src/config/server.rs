//! The HTTP server: where it listens, the address it is reached at, what it accepts from a
//! connection, and whom it believes about the client's address.

use clap::Args;

use super::check::{checked, parse_http_url, ranged};
use super::*;

/// The address the service listens on and is reached at, what it takes from a request,
/// whom it believes about the client's address, and how hard the public interview
/// endpoints (the join flow and the respondent page `/interview/{access_token}`, which need
/// no token) may be called.
///
/// Log levels are not a setting of Insight's own: `RUST_LOG` (no flag, default `info`)
/// sets them, e.g. `insight=debug,tower_http=debug`. At `debug` (`RUST_LOG=info,insight=debug`)
/// each request's span names the method, the route's template (never the path, which can
/// hold an interview link) and the client address.
///
/// Not a setting: a user has at most 4 chat or research assistant answers in the making at
/// once, per instance (answers go on when their client leaves); a fifth question gets 429
/// with `Retry-After`. Other fixed limits are listed under
/// [connections and limits](deployment.md#connections-and-limits).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Server", verbatim_doc_comment)]
pub struct ServerSettings {
    /// Address to listen on, `IP:PORT` with an IP address (not a host name); port 0 picks a
    /// free one.
    ///
    /// To be reachable from other machines, listen on `0.0.0.0:8000` or, better, keep
    /// loopback and put a reverse proxy in front
    /// ([deployment](deployment.md#behind-a-reverse-proxy)).
    #[arg(long, env = "INSIGHT_ADDR", default_value = "127.0.0.1:8000", value_parser = checked(parse_addr))]
    pub addr: SocketAddr,

    /// Public base URL of this service (a trailing `/` is dropped), for the links it hands
    /// out and the addresses it gives providers to call back.
    ///
    /// An interview room's `url` is `INSIGHT_PUBLIC_URL/interview/{access_token}`, so set it to
    /// the address respondents reach (your reverse proxy), or the links point at loopback.
    ///
    /// Speech-to-text callbacks (AssemblyAI, Deepgram) are used only when this is an address
    /// the provider can reach: not loopback, a private, shared (100.64.0.0/10) or link-local
    /// network, or a host name without a domain (`http://insight:8000`, `*.localhost`,
    /// `*.local`, `*.internal`, `*.lan`, `*.home.arpa`). See [Speech-to-text](#speech-to-text).
    #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000", value_parser = checked(parse_http_url))]
    pub public_url: String,

    /// Log format on stderr: `text` or `json`. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "INSIGHT_LOG_FORMAT", default_value = "text", value_parser = checked(parse_log_format))]
    pub log_format: LogFormat,

    /// Largest accepted JSON request body in bytes; larger ones get 413.
    ///
    /// Record uploads have their own limit, `INSIGHT_MAX_UPLOAD_BYTES`.
    #[arg(long, env = "INSIGHT_MAX_BODY_BYTES", default_value_t = 1_048_576, value_parser = ranged::<u64>(1024..=1_073_741_824))]
    pub max_body_bytes: u64,

    /// Reverse proxies whose forwarded client address is believed, as comma-separated
    /// addresses or CIDRs (e.g. 127.0.0.1,10.0.0.0/8); unset, forwarding headers are
    /// ignored and the client is the connection's peer.
    ///
    /// The client address is what the rate limits and the request log use. See
    /// [behind a reverse proxy](deployment.md#behind-a-reverse-proxy).
    #[arg(long, env = "INSIGHT_TRUSTED_PROXIES", default_value = "", value_parser = checked(parse_trusted_proxies))]
    pub trusted_proxies: TrustedNetworks,

    /// The header trusted proxies name the client in: `x-forwarded-for` or `forwarded`
    /// (RFC 7239).
    ///
    /// The other is never read. Has no effect without `INSIGHT_TRUSTED_PROXIES`.
    #[arg(long, env = "INSIGHT_FORWARDED_HEADER", default_value = "x-forwarded-for", value_parser = checked(parse_forwarded_header))]
    pub forwarded_header: ForwardedHeader,

    /// A request body must bring INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND in every window
    /// of this many seconds, or it is cut with 408 and the connection closed.
    #[arg(long, env = "INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS", default_value_t = 30, value_parser = ranged::<u64>(1..=3_600))]
    pub request_body_timeout_seconds: u64,

    /// The slowest pace a request body may arrive at, averaged over each window of
    /// INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS.
    ///
    /// A 1 GB upload at any usable speed goes through, a body that trickles a byte a second
    /// does not. The pace counts, not the total time.
    #[arg(long, env = "INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND", default_value_t = 1024, value_parser = ranged::<u64>(1..=1_073_741_824))]
    pub request_body_min_bytes_per_second: u64,

    /// Requests per minute one client address may make to the public interview endpoints and
    /// pages; more get 429 with `Retry-After`.
    ///
    /// The limits are kept per instance: behind a load balancer with several instances a
    /// client gets that many times the rate (guessing a 192-bit link stays hopeless). Behind
    /// a reverse proxy, set `INSIGHT_TRUSTED_PROXIES`, or every respondent shares the proxy's
    /// address and its limit.
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_PER_MINUTE", default_value_t = 120, value_parser = ranged::<u32>(1..=1_000_000))]
    pub public_rate_per_minute: u32,

    /// Requests one client address may make at once before the per-minute rate applies.
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_BURST", default_value_t = 30, value_parser = ranged::<u32>(1..=100_000))]
    pub public_rate_burst: u32,
}

/// The networks of `INSIGHT_TRUSTED_PROXIES`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustedNetworks(pub Vec<ip_network::IpNetwork>);

/// Which header a trusted proxy names the client in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`, as nginx, HAProxy, Caddy and most
    /// balancers write it.
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

fn parse_addr(value: &str) -> Result<SocketAddr, String> {
    value
        .parse()
        .map_err(|_| "must be HOST:PORT with an IP address, e.g. 127.0.0.1:8000".into())
}

fn parse_log_format(value: &str) -> Result<LogFormat, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err("must be text or json".into()),
    }
}

fn parse_trusted_proxies(value: &str) -> Result<TrustedNetworks, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let network = if part.contains('/') {
                part.parse::<ip_network::IpNetwork>().ok()
            } else {
                part.parse::<std::net::IpAddr>().ok().map(ip_network::IpNetwork::from)
            };
            network.ok_or_else(|| {
                "must be comma-separated addresses or CIDRs such as 127.0.0.1,10.0.0.0/8 (with no host bits set)"
                    .to_owned()
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(TrustedNetworks)
}

fn parse_forwarded_header(value: &str) -> Result<ForwardedHeader, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
        "forwarded" => Ok(ForwardedHeader::Forwarded),
        _ => Err("must be x-forwarded-for or forwarded".into()),
    }
}
