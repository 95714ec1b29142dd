//! How much interview material one record may hold.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Interview material")]
pub struct MaterialSettings {
    /// Largest accepted record upload (file or JSON text) in bytes; larger ones get 413 [env: INSIGHT_MAX_UPLOAD_BYTES].
    #[arg(long, env = "INSIGHT_MAX_UPLOAD_BYTES", default_value_t = 1_073_741_824, value_parser = parse_max_upload_bytes)]
    pub max_upload_bytes: u64,

    /// Largest accepted project archive (`POST /workspaces/{id}/import/archive`), recordings included, in bytes; larger ones get 413 [env: INSIGHT_MAX_ARCHIVE_BYTES].
    #[arg(long, env = "INSIGHT_MAX_ARCHIVE_BYTES", default_value_t = 21_474_836_480, value_parser = parse_max_archive_bytes)]
    pub max_archive_bytes: u64,

    /// Most utterances one record may have; more get 422 [env: INSIGHT_MAX_UTTERANCES].
    #[arg(long, env = "INSIGHT_MAX_UTTERANCES", default_value_t = 50_000, value_parser = parse_max_utterances)]
    pub max_utterances: usize,

    /// Longest material one record may span, in minutes; longer gets 422 [env: INSIGHT_MAX_DURATION_MINUTES].
    #[arg(long, env = "INSIGHT_MAX_DURATION_MINUTES", default_value_t = 600, value_parser = parse_max_duration_minutes)]
    pub max_duration_minutes: u64,
}

fn parse_max_upload_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_UPLOAD_BYTES",
        "--max-upload-bytes",
        1024..=1_099_511_627_776,
    )
}

fn parse_max_archive_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_ARCHIVE_BYTES",
        "--max-archive-bytes",
        1024..=10_995_116_277_760,
    )
}

fn parse_max_utterances(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_MAX_UTTERANCES", "--max-utterances", 1..=10_000_000)
}

fn parse_max_duration_minutes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_DURATION_MINUTES",
        "--max-duration-minutes",
        1..=100_000,
    )
}
