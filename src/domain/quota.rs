//! What a user's quotas count: the thing a creation would add one to. The limits and
//! their sentences are the quota use case's (`crate::app::quota`); the store counts.

use uuid::Uuid;

/// What a creation would add one to.
#[derive(Debug, Clone, Copy)]
pub enum Counted {
    Projects { owner_id: Uuid },
    Records { project_id: Uuid },
    Reports { project_id: Uuid },
    RecordThreads { owner_id: Uuid, record_id: Uuid },
    AssistantThreads { owner_id: Uuid },
    Prompts { owner_id: Uuid },
    Presets { owner_id: Uuid },
    WebhookEndpoints { owner_id: Uuid },
}
