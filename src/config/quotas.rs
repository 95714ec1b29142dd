//! How much one user may pile up (see `crate::app::quota`).

use clap::Args;

use super::check::ranged;

/// What one user may pile up. Each is checked before a creation; past it the request gets
/// 409 with a sentence naming the setting (interview rooms: 429, see below).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Quotas", verbatim_doc_comment)]
pub struct Quotas {
    /// Projects one user may own.
    #[arg(long = "quota-projects", env = "INSIGHT_QUOTA_PROJECTS", default_value_t = 10_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub projects: i64,

    /// Records one project may hold.
    #[arg(long = "quota-records-per-project", env = "INSIGHT_QUOTA_RECORDS_PER_PROJECT", default_value_t = 10_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub records_per_project: i64,

    /// Reports one project may hold, deleted ones aside.
    #[arg(long = "quota-reports-per-project", env = "INSIGHT_QUOTA_REPORTS_PER_PROJECT", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub reports_per_project: i64,

    /// Interview rooms one user may create in any 24 hours; more get 429 with `Retry-After`
    /// (when enough of the day's rooms have left the window), or 409 when one request asks
    /// for more than a day allows.
    #[arg(long = "quota-rooms-per-day", env = "INSIGHT_QUOTA_ROOMS_PER_DAY", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub rooms_per_day: i64,

    /// Chat threads one user may have on one record.
    #[arg(long = "quota-threads-per-record", env = "INSIGHT_QUOTA_THREADS_PER_RECORD", default_value_t = 100, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub threads_per_record: i64,

    /// Research assistant threads one user may have.
    #[arg(long = "quota-assistant-threads", env = "INSIGHT_QUOTA_ASSISTANT_THREADS", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub assistant_threads: i64,

    /// Messages one chat or assistant thread may hold (a question and its answer are two);
    /// then start a new thread.
    #[arg(long = "quota-messages-per-thread", env = "INSIGHT_QUOTA_MESSAGES_PER_THREAD", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub messages_per_thread: i64,

    /// Prompts one user may own (cloning a preset copies its prompts).
    #[arg(long = "quota-prompts", env = "INSIGHT_QUOTA_PROMPTS", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub prompts: i64,

    /// Presets one user may own.
    #[arg(long = "quota-presets", env = "INSIGHT_QUOTA_PRESETS", default_value_t = 1_000, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub presets: i64,

    /// Webhook endpoints one user may have.
    #[arg(long = "quota-webhook-endpoints", env = "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS", default_value_t = 20, value_parser = ranged::<i64>(1..=1_000_000_000))]
    pub webhook_endpoints: i64,
}
