//! Webhook deliveries: where they may go, how often they are tried, how many at once.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Webhooks")]
pub struct WebhooksSettings {
    /// Allow webhook endpoints on plain `http://` URLs (default: https only) [env: INSIGHT_WEBHOOKS_ALLOW_HTTP].
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_HTTP", default_value_t = false, value_parser = parse_webhooks_allow_http, action = clap::ArgAction::Set)]
    pub webhooks_allow_http: bool,

    /// Allow webhook deliveries to loopback, private and link-local addresses (default: refused,
    /// checked on the address each delivery connects to) [env: INSIGHT_WEBHOOKS_ALLOW_PRIVATE].
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_PRIVATE", default_value_t = false, value_parser = parse_webhooks_allow_private, action = clap::ArgAction::Set)]
    pub webhooks_allow_private: bool,

    /// Seconds between a failed webhook delivery and each retry, comma-separated; after the last
    /// the delivery fails and its endpoint is marked failing [env: INSIGHT_WEBHOOKS_RETRY_SCHEDULE].
    #[arg(long, env = "INSIGHT_WEBHOOKS_RETRY_SCHEDULE", default_value = "5,300,1800,7200,18000,36000,36000", value_parser = parse_retry_schedule)]
    pub webhooks_retry_schedule: RetrySchedule,

    /// Longest wait for a webhook receiver's answer, in seconds [env: INSIGHT_WEBHOOKS_TIMEOUT_SECONDS].
    #[arg(long, env = "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS", default_value_t = 15, value_parser = parse_webhooks_timeout)]
    pub webhooks_timeout_seconds: u64,

    /// Webhook deliveries this instance sends at once [env: INSIGHT_WEBHOOKS_CONCURRENCY].
    #[arg(long, env = "INSIGHT_WEBHOOKS_CONCURRENCY", default_value_t = 32, value_parser = parse_webhooks_concurrency)]
    pub webhooks_concurrency: usize,
}

/// Delays between a failed delivery and its retries.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule(pub Vec<std::time::Duration>);

fn parse_webhooks_allow_http(value: &str) -> Result<bool, String> {
    parse_flag(value, "INSIGHT_WEBHOOKS_ALLOW_HTTP", "--webhooks-allow-http")
}

fn parse_webhooks_allow_private(value: &str) -> Result<bool, String> {
    parse_flag(value, "INSIGHT_WEBHOOKS_ALLOW_PRIVATE", "--webhooks-allow-private")
}

fn parse_retry_schedule(value: &str) -> Result<RetrySchedule, String> {
    let bad = || {
        format!(
            "INSIGHT_WEBHOOKS_RETRY_SCHEDULE (--webhooks-retry-schedule) must be 1 to 20 comma-separated delays in \
             seconds, each from 0.01 to 86400, e.g. 5,300,1800; not {value:?}"
        )
    };
    let delays = value
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|seconds| (0.01..=86_400.0).contains(seconds))
                .map(std::time::Duration::from_secs_f64)
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if delays.is_empty() || delays.len() > 20 {
        return Err(bad());
    }
    Ok(RetrySchedule(delays))
}

fn parse_webhooks_timeout(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS",
        "--webhooks-timeout-seconds",
        1..=300,
    )
}

fn parse_webhooks_concurrency(value: &str) -> Result<usize, String> {
    parse_number(
        value,
        "INSIGHT_WEBHOOKS_CONCURRENCY",
        "--webhooks-concurrency",
        1..=1024,
    )
}
