//! How much one user may pile up (see `crate::quota`).

use clap::Args;

use super::*;

/// How much one user may pile up; past a limit, creating more gets 409 (or 429 for a
/// rate), with a sentence naming the limit.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Quotas")]
pub struct Quotas {
    /// Projects one user may own [env: INSIGHT_QUOTA_PROJECTS].
    #[arg(long = "quota-projects", env = "INSIGHT_QUOTA_PROJECTS", default_value_t = 10_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PROJECTS"))]
    pub projects: i64,

    /// Records one project may hold [env: INSIGHT_QUOTA_RECORDS_PER_PROJECT].
    #[arg(long = "quota-records-per-project", env = "INSIGHT_QUOTA_RECORDS_PER_PROJECT", default_value_t = 10_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_RECORDS_PER_PROJECT"))]
    pub records_per_project: i64,

    /// Reports one project may hold, deleted ones aside [env: INSIGHT_QUOTA_REPORTS_PER_PROJECT].
    #[arg(long = "quota-reports-per-project", env = "INSIGHT_QUOTA_REPORTS_PER_PROJECT", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_REPORTS_PER_PROJECT"))]
    pub reports_per_project: i64,

    /// Interview rooms one user may create in any 24 hours; more get 429 [env: INSIGHT_QUOTA_ROOMS_PER_DAY].
    #[arg(long = "quota-rooms-per-day", env = "INSIGHT_QUOTA_ROOMS_PER_DAY", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_ROOMS_PER_DAY"))]
    pub rooms_per_day: i64,

    /// Chat threads one user may have on one record [env: INSIGHT_QUOTA_THREADS_PER_RECORD].
    #[arg(long = "quota-threads-per-record", env = "INSIGHT_QUOTA_THREADS_PER_RECORD", default_value_t = 100, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_THREADS_PER_RECORD"))]
    pub threads_per_record: i64,

    /// Research assistant threads one user may have [env: INSIGHT_QUOTA_ASSISTANT_THREADS].
    #[arg(long = "quota-assistant-threads", env = "INSIGHT_QUOTA_ASSISTANT_THREADS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_ASSISTANT_THREADS"))]
    pub assistant_threads: i64,

    /// Messages one chat or assistant thread may hold (a question and its answer are two)
    /// [env: INSIGHT_QUOTA_MESSAGES_PER_THREAD].
    #[arg(long = "quota-messages-per-thread", env = "INSIGHT_QUOTA_MESSAGES_PER_THREAD", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_MESSAGES_PER_THREAD"))]
    pub messages_per_thread: i64,

    /// Prompts one user may own [env: INSIGHT_QUOTA_PROMPTS].
    #[arg(long = "quota-prompts", env = "INSIGHT_QUOTA_PROMPTS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PROMPTS"))]
    pub prompts: i64,

    /// Presets one user may own [env: INSIGHT_QUOTA_PRESETS].
    #[arg(long = "quota-presets", env = "INSIGHT_QUOTA_PRESETS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PRESETS"))]
    pub presets: i64,

    /// Webhook endpoints one user may have [env: INSIGHT_QUOTA_WEBHOOK_ENDPOINTS].
    #[arg(long = "quota-webhook-endpoints", env = "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS", default_value_t = 20, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS"))]
    pub webhook_endpoints: i64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            projects: 10_000,
            records_per_project: 10_000,
            reports_per_project: 1_000,
            rooms_per_day: 1_000,
            threads_per_record: 100,
            assistant_threads: 1_000,
            messages_per_thread: 1_000,
            prompts: 1_000,
            presets: 1_000,
            webhook_endpoints: 20,
        }
    }
}

fn parse_quota(value: &str, variable: &str) -> Result<i64, String> {
    let flag = format!(
        "--{}",
        variable
            .trim_start_matches("INSIGHT_")
            .to_ascii_lowercase()
            .replace('_', "-")
    );
    parse_number(value, variable, &flag, 1..=1_000_000_000)
}
