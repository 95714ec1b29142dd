//! The background workers: how many, and how a failed job is tried again.

use clap::Args;

use super::check::{checked, ranged};

/// Record processing, report generation and personas run as jobs in the database (see
/// [deployment](deployment.md#background-work)).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Background jobs", verbatim_doc_comment)]
pub struct JobsSettings {
    /// Attempts a background job gets before it fails for good, with its reason.
    ///
    /// Waiting for a speech-to-text provider uses none; a Deepgram resend uses one.
    #[arg(long, env = "INSIGHT_JOB_MAX_ATTEMPTS", default_value_t = 5, value_parser = ranged::<u32>(1..=100))]
    pub job_max_attempts: u32,

    /// Delay before a job's first retry, in seconds (fractions allowed); each further retry
    /// doubles it, with jitter (0.5–1.5×), at most a day.
    ///
    /// Also the base of the waits between a model call's attempts, capped at 1 s there.
    #[arg(long, env = "INSIGHT_JOB_RETRY_BASE_SECONDS", default_value_t = 10.0, value_parser = checked(parse_job_retry_base_seconds))]
    pub job_retry_base_seconds: f64,

    /// How long a worker holds a job without a heartbeat before another may take it over,
    /// in seconds; after a crash another worker takes it over then.
    #[arg(long, env = "INSIGHT_JOB_LEASE_SECONDS", default_value_t = 60, value_parser = ranged::<u64>(1..=86_400))]
    pub job_lease_seconds: u64,

    /// Reports this instance works on at once, plus one persona writer; 0: neither (another
    /// instance does them). Unset, twice INSIGHT_LLM_CONCURRENCY with a model, 4 with the
    /// offline engine.
    ///
    /// More workers than model calls keep the model busy while some of them read and write
    /// the database. Every instance also runs one record-processing worker, the interview
    /// watch and the webhook sender, whatever this says.
    #[arg(long, env = "INSIGHT_REPORT_WORKERS", value_parser = ranged::<usize>(0..=256))]
    pub report_workers: Option<usize>,
}

fn parse_job_retry_base_seconds(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| (0.0..=86_400.0).contains(seconds))
        .ok_or_else(|| "must be a number of seconds from 0 to 86400".into())
}
