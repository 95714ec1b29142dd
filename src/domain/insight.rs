//! Insights: a project's findings, each a title and a Markdown body resting on highlights
//! as evidence, so a reader can go from the claim to what respondents said.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::highlight::Highlight;
use super::patch::Patch;

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Insight {
    pub id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    /// Markdown.
    pub body: String,
    /// The evidence, in the order the author gave.
    pub highlights: Vec<Highlight>,
    pub author_email: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A new insight.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct InsightCreate {
    #[schema(min_length = 1, max_length = 300)]
    pub title: String,
    #[serde(default)]
    #[schema(required = false, max_length = 50000)]
    pub body: Option<String>,
    /// Highlights of the same project.
    #[serde(default)]
    #[schema(required = false, max_items = 200)]
    pub highlight_ids: Vec<Uuid>,
}

/// A change to an insight; a field left out stays.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct InsightUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 300)]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 50000)]
    pub body: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>, required = false, max_items = 200)]
    pub highlight_ids: Patch<Vec<Uuid>>,
}
