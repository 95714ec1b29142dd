//! Backup and move: a whole project as one archive (a zip of a manifest, the project's
//! rows as JSON and its recordings) and that archive made into a new project of any
//! workspace, on this Insight or another. The archive is a researcher's copy of the
//! project, so it needs write access to it; importing needs write access to the workspace.

mod export;
mod import;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::store::ProjectDump;

pub use export::{Streamed, export};
pub use import::import;

/// What `manifest.json` names as the archive's format.
pub const FORMAT: &str = "insight-project-archive";
/// The format's version this Insight writes, and the newest it reads.
pub const VERSION: u32 = 1;

pub const MANIFEST: &str = "manifest.json";
pub const PROJECT: &str = "project.json";
pub const RECORDS: &str = "records.json";
pub const REPORTS: &str = "reports.json";
pub const TAGS: &str = "tags.json";
pub const HIGHLIGHTS: &str = "highlights.json";
pub const INSIGHTS: &str = "insights.json";
pub const THEMES: &str = "themes.json";
pub const INTERVIEWS: &str = "interviews.json";
/// The folder of the recordings, each `<record id>.<extension>`.
pub const RECORDINGS: &str = "recordings/";

/// `manifest.json`: what the archive is and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// The Insight that wrote it.
    pub generator: String,
    pub exported_at: DateTime<Utc>,
    pub project_id: Uuid,
    pub project_name: String,
    pub counts: Counts,
}

/// How many of each the archive holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Counts {
    pub records: usize,
    /// Records whose recording is in the archive.
    pub recordings: usize,
    pub reports: usize,
    /// The workspace's tags the highlights carry (and the groups holding them).
    pub tags: usize,
    pub highlights: usize,
    pub insights: usize,
    pub themes: usize,
    /// AI-led interview rooms, with their turns.
    pub interviews: usize,
}

impl Counts {
    /// What `dump` holds, with `recordings` of its recordings.
    pub fn of(dump: &ProjectDump, recordings: usize) -> Self {
        Self {
            records: dump.records.len(),
            recordings,
            reports: dump.reports.len(),
            tags: dump.tags.len(),
            highlights: dump.highlights.len(),
            insights: dump.insights.len(),
            themes: dump.themes.len(),
            interviews: dump.interviews.len(),
        }
    }
}

/// What an import made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ArchiveImport {
    /// The new project.
    pub project_id: Uuid,
    /// What went into it; `tags` counts the workspace's tags the highlights were filed
    /// under (found by name, or made).
    pub imported: Counts,
}
