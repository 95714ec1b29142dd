//! Search across a workspace's material: what a hit says about where it was found.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// The console's address of a moment in a transcript (`CONSOLE.md`): the API's search
/// hits and the console's citations link to the same place.
pub fn moment_path(record_id: Uuid, utterance_id: i64) -> String {
    format!("/r/{record_id}#u{utterance_id}")
}

/// What a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HitKind {
    Utterance,
    Highlight,
    Report,
    Insight,
}

/// One place the words were found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchHit {
    pub kind: HitKind,
    /// The highlight, report or insight; for an utterance, its record.
    pub id: Uuid,
    pub project_id: Uuid,
    pub record_id: Option<Uuid>,
    /// The utterance (for a highlight, its first).
    pub utterance_id: Option<i64>,
    pub start_ms: Option<i64>,
    pub speaker: Option<String>,
    /// The record's name, or the report's or insight's title.
    pub title: String,
    /// HTML: the text around the matched words, escaped, the words in `<mark>`.
    pub snippet: String,
    pub score: f32,
    /// The console's address of the exact moment (or of the report or insight).
    pub url: String,
}

/// A page of hits, best first, and how many there are in all.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    pub total: usize,
}
