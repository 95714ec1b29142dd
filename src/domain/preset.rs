//! Prompts (one question a report answers) and presets (a named set of prompts).
//! System ones ship with the service and are read-only; users clone them to edit.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// `system` ships with the service; `user` belongs to one user.
    Ownership { System = "system", User = "user" }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Prompt {
    pub id: Uuid,
    /// Owner address; `null` for system prompts.
    pub email: Option<String>,
    pub prompt_type: Ownership,
    pub title: String,
    /// The instruction given to the report engine.
    pub text: String,
    pub category: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A preset (spec operation 4 returns one).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Preset {
    pub id: Uuid,
    /// Owner address of the preset; `null` for system presets.
    pub email: Option<String>,
    pub preset_type: Ownership,
    pub title: String,
    /// The preset's prompts, in the order a report uses them.
    pub prompt_ids: Vec<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// An icon name for the preset (e.g. `sparkles`).
    pub icon: String,
    pub category: String,
}

pub const DEFAULT_ICON: &str = "file-text";
pub const DEFAULT_CATEGORY: &str = "general";

/// The editable part of a prompt.
#[derive(Debug, Clone)]
pub struct PromptFields {
    pub title: String,
    pub text: String,
    pub category: String,
}

/// The editable part of a preset.
#[derive(Debug, Clone)]
pub struct PresetFields {
    pub title: String,
    pub prompt_ids: Vec<Uuid>,
    pub icon: String,
    pub category: String,
}
