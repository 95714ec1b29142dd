//! Tags: a workspace's codes for what respondents say (pricing, onboarding, trust), the
//! vocabulary highlights are filed under. One level of groups: a tag may sit under a
//! parent, and a parent is never itself under another.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::patch::Patch;

/// The colours a new tag takes when none is given, picked by its name so a tag keeps
/// its colour wherever it is made.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
];

/// A tag's default colour, the same for the same name.
pub fn default_color(name: &str) -> &'static str {
    let sum = name
        .to_lowercase()
        .bytes()
        .fold(0usize, |sum, byte| sum.wrapping_mul(31).wrapping_add(usize::from(byte)));
    PALETTE[sum % PALETTE.len()]
}

/// How names are compared: without case and surrounding spaces.
pub fn name_key(name: &str) -> String {
    name.trim().to_lowercase()
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Tag {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub name: String,
    /// `#rrggbb`.
    pub color: String,
    pub description: String,
    /// The group the tag is in, if any.
    pub parent_id: Option<Uuid>,
    /// Highlights filed under the tag.
    pub highlights_count: i64,
    pub created_at: DateTime<Utc>,
}

/// A new tag.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct TagCreate {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// `#rrggbb`; default: one of ten colours, by the name.
    #[serde(default)]
    #[schema(required = false, pattern = "^#[0-9a-fA-F]{6}$")]
    pub color: Option<String>,
    #[serde(default)]
    #[schema(required = false, max_length = 2000)]
    pub description: Option<String>,
    /// A tag of the same workspace that is in no group itself. (`format: uuid` only
    /// annotates in JSON Schema, so the pattern says that `""` is no id.)
    #[serde(default)]
    #[schema(
        required = false,
        pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    )]
    pub parent_id: Option<Uuid>,
}

/// A change to a tag: a field left out is unchanged; `parent_id: null` takes the tag out
/// of its group.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct TagUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 100)]
    pub name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, pattern = "^#[0-9a-fA-F]{6}$")]
    pub color: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 2000)]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Uuid>, required = false, pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")]
    pub parent_id: Patch<Uuid>,
}

/// Merging a tag into another.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct TagMerge {
    /// The tag that stays; it must be of the same workspace.
    pub into_tag_id: Uuid,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_colour_and_is_compared_without_case() {
        assert_eq!(default_color("Pricing"), default_color("pricing"));
        assert!(PALETTE.contains(&default_color("Onboarding")));
        assert_eq!(name_key("  Pricing Page "), "pricing page");
    }
}
