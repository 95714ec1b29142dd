//! The HTTP server: where it listens, the address it is reached at, what it accepts from a
//! connection, and whom it believes about the client's address.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Server")]
pub struct ServerSettings {
    /// Address to listen on [env: INSIGHT_ADDR].
    #[arg(long, env = "INSIGHT_ADDR", default_value = "127.0.0.1:8000", value_parser = parse_addr)]
    pub addr: SocketAddr,

    /// Public base URL of this service, for links it hands out (interview links) [env: INSIGHT_PUBLIC_URL].
    #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000", value_parser = parse_public_url)]
    pub public_url: String,

    /// Log format: `text` or `json` [env: INSIGHT_LOG_FORMAT]. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "INSIGHT_LOG_FORMAT", default_value = "text", value_parser = parse_log_format)]
    pub log_format: LogFormat,

    /// Largest accepted JSON request body in bytes; larger ones get 413 [env: INSIGHT_MAX_BODY_BYTES].
    #[arg(long, env = "INSIGHT_MAX_BODY_BYTES", default_value_t = 1_048_576, value_parser = parse_max_body_bytes)]
    pub max_body_bytes: u64,

    /// Reverse proxies whose forwarded client address is believed, as comma-separated
    /// addresses or CIDRs (e.g. 127.0.0.1,10.0.0.0/8); unset, forwarding headers are
    /// ignored and the client is the connection's peer [env: INSIGHT_TRUSTED_PROXIES].
    #[arg(long, env = "INSIGHT_TRUSTED_PROXIES", default_value = "", value_parser = parse_trusted_proxies)]
    pub trusted_proxies: TrustedNetworks,

    /// The header trusted proxies name the client in: `x-forwarded-for` or `forwarded`
    /// (RFC 7239) [env: INSIGHT_FORWARDED_HEADER].
    #[arg(long, env = "INSIGHT_FORWARDED_HEADER", default_value = "x-forwarded-for", value_parser = parse_forwarded_header)]
    pub forwarded_header: ForwardedHeader,

    /// A request body must bring INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND in every window
    /// of this many seconds, or it is cut with 408 [env: INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS].
    #[arg(long, env = "INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS", default_value_t = 30, value_parser = parse_body_timeout)]
    pub request_body_timeout_seconds: u64,

    /// The slowest pace a request body may arrive at, averaged over each window of
    /// INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS [env: INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND].
    #[arg(long, env = "INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND", default_value_t = 1024, value_parser = parse_body_min_rate)]
    pub request_body_min_bytes_per_second: u64,

    /// Requests per minute one client address may make to the public interview endpoints and
    /// pages; more get 429 [env: INSIGHT_PUBLIC_RATE_PER_MINUTE].
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_PER_MINUTE", default_value_t = 120, value_parser = parse_public_rate)]
    pub public_rate_per_minute: u32,

    /// Requests one client address may make at once before the per-minute rate applies
    /// [env: INSIGHT_PUBLIC_RATE_BURST].
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_BURST", default_value_t = 30, value_parser = parse_public_rate_burst)]
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
    value.parse().map_err(|_| {
        format!("INSIGHT_ADDR (--addr) must be HOST:PORT with an IP address, e.g. 127.0.0.1:8000, not {value:?}")
    })
}

fn parse_public_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_PUBLIC_URL (--public-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_log_format(value: &str) -> Result<LogFormat, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err(format!(
            "INSIGHT_LOG_FORMAT (--log-format) must be text or json, not {value:?}"
        )),
    }
}

fn parse_max_body_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_BODY_BYTES",
        "--max-body-bytes",
        1024..=1_073_741_824,
    )
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
                format!(
                    "INSIGHT_TRUSTED_PROXIES (--trusted-proxies) must be comma-separated addresses or CIDRs such as \
                     127.0.0.1,10.0.0.0/8 (with no host bits set); {part:?} is not one"
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(TrustedNetworks)
}

fn parse_forwarded_header(value: &str) -> Result<ForwardedHeader, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
        "forwarded" => Ok(ForwardedHeader::Forwarded),
        _ => Err(format!(
            "INSIGHT_FORWARDED_HEADER (--forwarded-header) must be x-forwarded-for or forwarded, not {value:?}"
        )),
    }
}

fn parse_body_timeout(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS",
        "--request-body-timeout-seconds",
        1..=3_600,
    )
}

fn parse_body_min_rate(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND",
        "--request-body-min-bytes-per-second",
        1..=1_073_741_824,
    )
}

fn parse_public_rate(value: &str) -> Result<u32, String> {
    parse_number(
        value,
        "INSIGHT_PUBLIC_RATE_PER_MINUTE",
        "--public-rate-per-minute",
        1..=1_000_000,
    )
}

fn parse_public_rate_burst(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_PUBLIC_RATE_BURST", "--public-rate-burst", 1..=100_000)
}
