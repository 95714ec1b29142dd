//! Project reports: prompts run over records, producing a Markdown document.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// Where a report is in its life: hand-written (`draft`) or generated
    /// (`queued` -> `generating` -> `completed` | `failed` | `cancelled`).
    ReportStatus {
        Draft = "draft",
        Queued = "queued",
        Generating = "generating",
        Completed = "completed",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

super::string_enum! {
    /// What made a version of a report: one of its generations, or a person's edit of
    /// its content.
    VersionKind { Generation = "generation", Edit = "edit" }
}

super::string_enum! {
    /// How much effort the engine spends on a report.
    ReasoningMode { Fast = "fast", Balanced = "balanced", Deep = "deep" }
}

/// A project report (spec operation 1 returns one).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Report {
    pub id: Uuid,
    pub prompts_ids: Vec<Uuid>,
    pub records_ids: Vec<Uuid>,
    pub project_id: Uuid,
    /// Name of the project; left out where owner details are not shown (public reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub project_name: Option<String>,
    pub category: Option<String>,
    pub title: String,
    pub context: Option<String>,
    pub context_expand: Option<String>,
    pub status: ReportStatus,
    /// Markdown; each finding cites its source as `[record name, mm:ss]`.
    pub content: Option<String>,
    pub is_public: bool,
    pub is_archived: bool,
    pub is_deleted: bool,
    pub preset_id: Option<Uuid>,
    /// ISO 639-1 code of the report's language.
    pub report_language: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Why the report should be generated again (a record it was written from was
    /// redacted since); left out while it is current.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub needs_regeneration: Option<String>,
}

pub use crate::domain::usage::TokenUsage;

/// Where a report's generation is (`GET .../generation`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Generation {
    pub status: ReportStatus,
    /// From 0 to 1: the share of the report's prompts written.
    pub progress: f64,
    /// Why the last attempt failed (while retrying, or for good when `failed`).
    pub error: Option<String>,
    /// Attempts made so far.
    pub attempts: i64,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub usage: TokenUsage,
    /// What wrote the report the last generation completed; none before one completes.
    pub provenance: Option<crate::domain::usage::Provenance>,
}

/// The report as one of its generations wrote it, or as a person saved it
/// (`GET .../versions`), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReportVersion {
    /// 1 for the first version, counting up.
    pub version: i64,
    pub kind: VersionKind,
    /// Who saved an edit; none for a generation, or once that account is gone.
    pub author_email: Option<String>,
    /// When the generation completed, or the edit was saved.
    pub generated_at: DateTime<Utc>,
    pub content: String,
    /// What wrote a generation; none for an edit.
    pub provenance: Option<crate::domain::usage::Provenance>,
    /// What changed from the version before, as a unified diff of the Markdown; none for
    /// the first.
    pub changes: Option<String>,
}

/// The fields of a report to generate; see `ReportCreate` for the rule across them.
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct ReportCreateFields {
    #[schema(min_length = 1, max_length = 300)]
    pub title: String,
    /// Prompts to run; with a preset and no prompts, the preset's prompts.
    #[schema(nullable = false, min_items = 1, max_items = 50)]
    pub prompts_ids: Option<Vec<Uuid>>,
    #[schema(nullable = false)]
    pub preset_id: Option<Uuid>,
    /// Records to use; left out, every record of the project.
    pub records_ids: Option<Vec<Uuid>>,
    #[schema(max_length = 100)]
    pub category: Option<String>,
    /// What the reader should know about the study; given to the engine.
    #[schema(max_length = 20000)]
    pub context: Option<String>,
    #[schema(max_length = 20000)]
    pub context_expand: Option<String>,
    /// ISO 639-1 code, e.g. `en`.
    #[schema(min_length = 2, max_length = 2, pattern = "^[a-z]{2}$")]
    pub report_language: Option<String>,
    pub reasoning_mode: Option<ReasoningMode>,
}
