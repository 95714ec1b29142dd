//! How much one import (`.qdpx` or Insight archive) may make the server read and hold.
//! The limits sit far above what a real project needs; they stop a small hostile upload
//! from costing gigabytes of memory.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Imports")]
pub struct ImportSettings {
    /// Most XML elements a `.qdpx`'s project.qde may hold; more get 413 [env: INSIGHT_IMPORT_MAX_ELEMENTS].
    #[arg(long, env = "INSIGHT_IMPORT_MAX_ELEMENTS", default_value_t = 500_000, value_parser = parse_max_elements)]
    pub import_max_elements: u64,

    /// Deepest nesting of XML elements in project.qde; deeper gets 413 [env: INSIGHT_IMPORT_MAX_DEPTH].
    #[arg(long, env = "INSIGHT_IMPORT_MAX_DEPTH", default_value_t = 64, value_parser = parse_max_depth)]
    pub import_max_depth: usize,

    /// Largest XML tag (a start tag with all its attributes) in project.qde, in bytes [env: INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES].
    #[arg(long, env = "INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES", default_value_t = 65_536, value_parser = parse_max_attribute_bytes)]
    pub import_max_attribute_bytes: u64,

    /// Largest text of one XML element in project.qde (an inline transcript), in bytes [env: INSIGHT_IMPORT_MAX_TEXT_BYTES].
    #[arg(long, env = "INSIGHT_IMPORT_MAX_TEXT_BYTES", default_value_t = 16_777_216, value_parser = parse_max_text_bytes)]
    pub import_max_text_bytes: u64,

    /// How many times its upload's size an import's text (project.qde, sources, archive JSON) may unpack to [env: INSIGHT_IMPORT_MAX_EXPANSION].
    #[arg(long, env = "INSIGHT_IMPORT_MAX_EXPANSION", default_value_t = 40, value_parser = parse_max_expansion)]
    pub import_max_expansion: u64,

    /// Imports one instance reads at once; another waits up to 5 seconds, then gets 429 with Retry-After [env: INSIGHT_IMPORT_CONCURRENCY].
    #[arg(long, env = "INSIGHT_IMPORT_CONCURRENCY", default_value_t = 1, value_parser = parse_concurrency)]
    pub import_concurrency: usize,
}

fn parse_max_elements(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_IMPORT_MAX_ELEMENTS",
        "--import-max-elements",
        100..=1_000_000_000,
    )
}

fn parse_max_depth(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_IMPORT_MAX_DEPTH", "--import-max-depth", 8..=10_000)
}

fn parse_max_attribute_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES",
        "--import-max-attribute-bytes",
        1024..=1_073_741_824,
    )
}

fn parse_max_text_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_IMPORT_MAX_TEXT_BYTES",
        "--import-max-text-bytes",
        1024..=1_073_741_824,
    )
}

fn parse_max_expansion(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_IMPORT_MAX_EXPANSION",
        "--import-max-expansion",
        2..=100_000,
    )
}

fn parse_concurrency(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_IMPORT_CONCURRENCY", "--import-concurrency", 1..=1024)
}
