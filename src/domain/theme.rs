//! Themes proposed for a project's untagged highlights: "group untagged highlights into
//! themes" asks the engine for tags to make, each with the highlights to file under it;
//! nothing is tagged until a person accepts a proposal.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::highlight::Highlight;

/// A proposed theme: a tag to make and the untagged highlights to file under it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ThemeProposal {
    pub id: Uuid,
    pub project_id: Uuid,
    /// The tag's name as proposed.
    pub name: String,
    /// What the tag would mean.
    pub description: String,
    /// The highlights it groups (those deleted since are left out).
    pub highlights: Vec<Highlight>,
    /// Always `suggested`: accepted proposals become tags and rejected ones are not listed.
    pub status: String,
    pub created_at: DateTime<Utc>,
}

/// Accepting a proposal: the tag's name and description, when not as proposed.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct ThemeAccept {
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: Option<String>,
    #[serde(default)]
    #[schema(required = false, max_length = 2000)]
    pub description: Option<String>,
}

/// Proposals asked for: the job that writes them is queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ThemesQueued {
    pub project_id: Uuid,
    /// `queued`: `GET /projects/{project_id}/themes` lists the proposals once written.
    pub status: String,
}
