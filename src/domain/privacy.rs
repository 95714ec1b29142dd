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
