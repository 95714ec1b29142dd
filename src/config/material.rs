//! How much interview material one record may hold.

use clap::Args;

use super::check::ranged;

/// How large an upload and a record may be. Fixed limits (not settings) are listed under
/// [connections and limits](deployment.md#connections-and-limits).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Interview material", verbatim_doc_comment)]
pub struct MaterialSettings {
    /// Largest accepted record upload (a file, or the text of a JSON record) in bytes;
    /// larger ones get 413.
    ///
    /// Uploads stream to disk under `INSIGHT_DATA_DIR`.
    #[arg(long, env = "INSIGHT_MAX_UPLOAD_BYTES", default_value_t = 1_073_741_824, value_parser = ranged::<u64>(1024..=1_099_511_627_776))]
    pub max_upload_bytes: u64,

    /// Largest accepted project archive (`POST /workspaces/{id}/import/archive`), recordings
    /// included, in bytes; larger ones get 413.
    ///
    /// The archive streams to disk under `INSIGHT_DATA_DIR`, and its recordings unpack there
    /// before they go to the file store, so the disk needs about twice the archive free while
    /// it is taken in.
    #[arg(long, env = "INSIGHT_MAX_ARCHIVE_BYTES", default_value_t = 21_474_836_480, value_parser = ranged::<u64>(1024..=10_995_116_277_760))]
    pub max_archive_bytes: u64,

    /// Most utterances one record may have; more get 422 (or, for a transcription, the
    /// record's `Error` with that reason).
    #[arg(long, env = "INSIGHT_MAX_UTTERANCES", default_value_t = 50_000, value_parser = ranged::<usize>(1..=10_000_000))]
    pub max_utterances: usize,

    /// Longest material one record may span, in minutes; longer gets 422.
    #[arg(long, env = "INSIGHT_MAX_DURATION_MINUTES", default_value_t = 600, value_parser = ranged::<u64>(1..=100_000))]
    pub max_duration_minutes: u64,
}
