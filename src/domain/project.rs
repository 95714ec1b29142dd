//! Projects: a research effort holding records and the reports made from them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// `New` until its owner first opens it, `Opened` while in use, `Closed` when done.
    ProjectStatus { New = "New", Opened = "Opened", Closed = "Closed" }
}

/// A project as the list (spec operation 5) and every project endpoint return it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub status: ProjectStatus,
    /// Records in the project.
    pub records_count: i64,
    /// Reports in the project that are not deleted.
    pub total_reports_count: i64,
    pub created_at: DateTime<Utc>,
    pub research_goals: String,
    pub interview_guide: String,
    /// Address of the project's creator.
    pub owner_email: String,
    /// The workspace the project belongs to.
    pub workspace_id: Uuid,
}

/// What a new project starts with.
#[derive(Debug, Clone)]
pub struct NewProject {
    pub name: String,
    pub description: String,
    pub research_goals: String,
    pub interview_guide: String,
}
