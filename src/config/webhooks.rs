//! Webhook deliveries: where they may go, how often they are tried, how many at once.

use clap::Args;

use super::check::{checked, parse_flag, ranged};

/// Outgoing webhooks tell your systems of finished records, reports and interviews (see
/// the [API guide](api.md#webhooks)). Endpoints' signing secrets derive from
/// `INSIGHT_SECRET_KEY`; the number of endpoints per user is
/// `INSIGHT_QUOTA_WEBHOOK_ENDPOINTS` ([quotas](#quotas)).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Webhooks", verbatim_doc_comment)]
pub struct WebhooksSettings {
    /// Allow webhook endpoints on plain `http://` URLs; otherwise registering one gets 422.
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_HTTP", default_value_t = false, value_parser = checked(parse_flag), action = clap::ArgAction::Set)]
    pub webhooks_allow_http: bool,

    /// Allow webhook deliveries to loopback, private and link-local addresses (otherwise
    /// only globally routable unicast addresses are allowed, IPv4 inside IPv6 included).
    ///
    /// Checked at registration and again on the address each delivery connects to;
    /// otherwise such a URL gets 422 at registration and a failed attempt at delivery. A
    /// receiver on the same machine or network needs this.
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_PRIVATE", default_value_t = false, value_parser = checked(parse_flag), action = clap::ArgAction::Set)]
    pub webhooks_allow_private: bool,

    /// Seconds between a failed webhook delivery and each retry, comma-separated, with ±20 %
    /// jitter; after the last the delivery fails and its endpoint is marked `failing`.
    ///
    /// The default spans about 27 hours.
    #[arg(long, env = "INSIGHT_WEBHOOKS_RETRY_SCHEDULE", default_value = "5,300,1800,7200,18000,36000,36000", value_parser = checked(parse_retry_schedule))]
    pub webhooks_retry_schedule: RetrySchedule,

    /// Longest wait for a webhook receiver's answer, in seconds.
    #[arg(long, env = "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS", default_value_t = 15, value_parser = ranged::<u64>(1..=300))]
    pub webhooks_timeout_seconds: u64,

    /// Webhook deliveries this instance sends at once.
    #[arg(long, env = "INSIGHT_WEBHOOKS_CONCURRENCY", default_value_t = 32, value_parser = ranged::<usize>(1..=1024))]
    pub webhooks_concurrency: usize,
}

/// Delays between a failed delivery and its retries.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule(pub Vec<std::time::Duration>);

fn parse_retry_schedule(value: &str) -> Result<RetrySchedule, String> {
    let bad =
        || "must be 1 to 20 comma-separated delays in seconds, each from 0.01 to 86400, e.g. 5,300,1800".to_owned();
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
