//! What a record holds of personal data, as `GET /insight/{rec_id}/pii` says it.

use serde::Serialize;
use utoipa::ToSchema;

/// Distinct values of each kind found in a record (its speakers' names among the people).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct PiiCounts {
    pub email: u64,
    pub phone: u64,
    pub card: u64,
    pub iban: u64,
    pub ip: u64,
    pub url: u64,
    pub person: u64,
}

/// The personal data of a record, and whether its workspace conceals it from models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct PiiReport {
    pub kinds: PiiCounts,
    /// Whether model calls see placeholders (`[PERSON_1]`) instead of these values.
    pub pseudonymise: bool,
}

/// Who to erase from a workspace (`POST /workspaces/{id}/erasure`).
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
pub struct ErasureRequest {
    /// The respondent's e-mail address, as they gave it (compared without case).
    #[schema(min_length = 3, max_length = 320)]
    pub email: String,
}

/// What an erasure deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErasedCounts {
    /// Records of the respondent's interviews, and records whose name or transcript held
    /// the address (with their utterances, recordings and chat threads).
    pub records: u64,
    /// Interview rooms the respondent was invited to, with their turns.
    pub rooms: u64,
    /// Voice sessions' events of those rooms.
    pub sessions: u64,
    pub highlights: u64,
    pub personas: u64,
    /// Messages that held the address or cited the deleted records.
    pub chat_messages: u64,
    pub invitations: u64,
    pub webhook_deliveries: u64,
}

/// The receipt of an erasure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErasureReceipt {
    pub deleted: ErasedCounts,
    /// Texts kept with the address replaced by `[erased]`: reports and their versions,
    /// insights, theme proposals, chat thread titles, audit entries.
    pub redacted: u64,
    pub erased_at: chrono::DateTime<chrono::Utc>,
}

/// A record redacted for good (`POST /insight/{rec_id}/redact`, 202).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct RedactionReceipt {
    pub record_id: uuid::Uuid,
    /// Values of each kind now placeholders in the stored transcript.
    pub replaced: PiiCounts,
    /// Whether a recording was deleted.
    pub recording_deleted: bool,
    /// Completed reports written from the record, now marked for regeneration.
    pub reports_marked: u64,
    /// Highlights and chat messages rewritten with the same placeholders.
    pub highlights: u64,
    pub chat_messages: u64,
}
