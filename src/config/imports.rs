//! How much one import (`.qdpx` or Insight archive) may make the server read and hold.
//! The limits sit far above what a real project needs; they stop a small hostile upload
//! from costing gigabytes of memory.

use clap::Args;

use super::check::ranged;

/// What one import (`.qdpx` or Insight archive) may make the server read; past a limit a
/// 413 names the entry and the setting, and nothing is written (see
/// [import limits](api.md#import-limits)). The limits sit far above what a real project
/// needs; they stop a small hostile upload from costing gigabytes of memory.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Imports", verbatim_doc_comment)]
pub struct ImportSettings {
    /// Most XML elements a `.qdpx`'s project.qde may hold; more get 413.
    #[arg(long, env = "INSIGHT_IMPORT_MAX_ELEMENTS", default_value_t = 500_000, value_parser = ranged::<u64>(100..=1_000_000_000))]
    pub import_max_elements: u64,

    /// Deepest nesting of XML elements in project.qde; deeper gets 413.
    #[arg(long, env = "INSIGHT_IMPORT_MAX_DEPTH", default_value_t = 64, value_parser = ranged::<usize>(8..=10_000))]
    pub import_max_depth: usize,

    /// Largest XML tag (a start tag with all its attributes) in project.qde, in bytes.
    #[arg(long, env = "INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES", default_value_t = 65_536, value_parser = ranged::<u64>(1024..=1_073_741_824))]
    pub import_max_attribute_bytes: u64,

    /// Largest text of one XML element in project.qde (an inline transcript), in bytes.
    #[arg(long, env = "INSIGHT_IMPORT_MAX_TEXT_BYTES", default_value_t = 16_777_216, value_parser = ranged::<u64>(1024..=1_073_741_824))]
    pub import_max_text_bytes: u64,

    /// How many times its upload's size an import's text (project.qde, sources, archive
    /// JSON) may unpack to.
    ///
    /// At least 16 MiB; never more than 10 × `INSIGHT_MAX_UPLOAD_BYTES` for a `.qdpx`, or
    /// `INSIGHT_MAX_UPLOAD_BYTES` for an archive's JSON.
    #[arg(long, env = "INSIGHT_IMPORT_MAX_EXPANSION", default_value_t = 40, value_parser = ranged::<u64>(2..=100_000))]
    pub import_max_expansion: u64,

    /// Imports one instance reads at once; another waits up to 5 seconds, then gets 429 with
    /// `Retry-After`.
    #[arg(long, env = "INSIGHT_IMPORT_CONCURRENCY", default_value_t = 1, value_parser = ranged::<usize>(1..=1024))]
    pub import_concurrency: usize,
}
