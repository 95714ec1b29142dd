//! Exchange with other research tools: what an import of a REFI-QDA project (`.qdpx`)
//! made, and what it had to leave behind.

use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// What an import made of a `.qdpx` project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct QdpxImport {
    /// The new project.
    pub project_id: Uuid,
    /// Records made, one per text source.
    pub records: usize,
    /// The workspace's tags the project's codes became: made, or found by name.
    pub tags: usize,
    /// Highlights made from coded segments.
    pub highlights: usize,
    pub skipped: QdpxSkipped,
}

/// What Insight could not take in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct QdpxSkipped {
    /// Sources that are not text (PDF, picture, audio, video), or whose text is empty
    /// or missing from the archive.
    pub sources: usize,
    /// Coded segments of text sources that hold no words of the text they point into.
    pub segments: usize,
}
