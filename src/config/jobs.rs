//! The background workers: how many, and how a failed job is tried again.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Background jobs")]
pub struct JobsSettings {
    /// Attempts a background job gets before it fails for good [env: INSIGHT_JOB_MAX_ATTEMPTS].
    #[arg(long, env = "INSIGHT_JOB_MAX_ATTEMPTS", default_value_t = 5, value_parser = parse_job_max_attempts)]
    pub job_max_attempts: u32,

    /// Delay before a job's first retry, in seconds; each further retry doubles it, with
    /// jitter [env: INSIGHT_JOB_RETRY_BASE_SECONDS].
    #[arg(long, env = "INSIGHT_JOB_RETRY_BASE_SECONDS", default_value_t = 10.0, value_parser = parse_job_retry_base_seconds)]
    pub job_retry_base_seconds: f64,

    /// How long a worker holds a job without a heartbeat before another may take it over,
    /// in seconds [env: INSIGHT_JOB_LEASE_SECONDS].
    #[arg(long, env = "INSIGHT_JOB_LEASE_SECONDS", default_value_t = 60, value_parser = parse_job_lease_seconds)]
    pub job_lease_seconds: u64,

    /// Reports this instance works on at once, plus one persona writer; 0: neither. Unset,
    /// twice INSIGHT_LLM_CONCURRENCY with a model, so the model always has work while some
    /// workers read and write the database; 4 with the offline engine [env: INSIGHT_REPORT_WORKERS].
    #[arg(long, env = "INSIGHT_REPORT_WORKERS", value_parser = parse_report_workers)]
    pub report_workers: Option<usize>,
}

fn parse_job_max_attempts(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_JOB_MAX_ATTEMPTS", "--job-max-attempts", 1..=100)
}

fn parse_job_retry_base_seconds(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| (0.0..=86_400.0).contains(seconds))
        .ok_or_else(|| {
            format!("INSIGHT_JOB_RETRY_BASE_SECONDS (--job-retry-base-seconds) must be a number of seconds from 0 to 86400, not {value:?}")
        })
}

fn parse_job_lease_seconds(value: &str) -> Result<u64, String> {
    parse_number(value, "INSIGHT_JOB_LEASE_SECONDS", "--job-lease-seconds", 1..=86_400)
}

fn parse_report_workers(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_REPORT_WORKERS", "--report-workers", 0..=256)
}
