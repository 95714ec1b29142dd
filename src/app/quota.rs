//! How much one user may pile up (`INSIGHT_QUOTA_*`). Each creation checks its count
//! before it writes; two creations racing at the limit may both pass, so a quota bounds
//! growth rather than fixing an exact number. Past a count the answer is 409 with a
//! sentence naming the limit; past a rate (rooms per day) it is 429 with `Retry-After`.

use chrono::Duration;
use uuid::Uuid;

use crate::config::Quotas;
use crate::domain::now;
pub use crate::domain::quota::Counted;
use crate::error::Error;
use crate::services::Services;
use crate::store::Store;

/// A quota that a creation would pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaExceeded {
    pub sentence: String,
    /// For a rate: seconds until the creation would fit.
    pub retry_after: Option<u64>,
}

/// A quota reached is a 409 with its sentence, a rate a 429 with when to come back.
impl From<QuotaExceeded> for Error {
    fn from(exceeded: QuotaExceeded) -> Self {
        match exceeded.retry_after {
            Some(retry_after) => Self::TooSoon {
                detail: exceeded.sentence,
                retry_after,
            },
            None => Self::Conflict(exceeded.sentence),
        }
    }
}

impl QuotaExceeded {
    fn count(sentence: String) -> Self {
        Self {
            sentence,
            retry_after: None,
        }
    }
}

// The services' quota check lives here, beside the limits, so that the services the use
// cases are built on do not import a use case.
impl Services {
    /// Refuses a creation that would pass its quota.
    pub async fn check_quota(&self, counted: Counted) -> crate::error::Result<()> {
        check(&self.store, &self.settings.quotas, counted)
            .await?
            .map_err(crate::error::Error::from)
    }
}

/// Refuses a creation that would take `counted` past its quota.
pub async fn check(store: &Store, quotas: &Quotas, counted: Counted) -> anyhow::Result<Result<(), QuotaExceeded>> {
    let (limit, sentence) = match counted {
        Counted::Projects { .. } => (
            quotas.projects,
            "You own {} projects, the most one user may (INSIGHT_QUOTA_PROJECTS); delete one first.",
        ),
        Counted::Records { .. } => (
            quotas.records_per_project,
            "This project holds {} records, the most one project may (INSIGHT_QUOTA_RECORDS_PER_PROJECT); \
             delete one or start another project.",
        ),
        Counted::Reports { .. } => (
            quotas.reports_per_project,
            "This project holds {} reports, the most one project may (INSIGHT_QUOTA_REPORTS_PER_PROJECT); \
             delete one first.",
        ),
        Counted::RecordThreads { .. } => (
            quotas.threads_per_record,
            "You have {} chat threads on this record, the most one user may (INSIGHT_QUOTA_THREADS_PER_RECORD); \
             delete one or continue an existing thread.",
        ),
        Counted::AssistantThreads { .. } => (
            quotas.assistant_threads,
            "You have {} research assistant threads, the most one user may (INSIGHT_QUOTA_ASSISTANT_THREADS); \
             delete one first.",
        ),
        Counted::Prompts { .. } => (
            quotas.prompts,
            "You own {} prompts, the most one user may (INSIGHT_QUOTA_PROMPTS); delete one first.",
        ),
        Counted::Presets { .. } => (
            quotas.presets,
            "You own {} presets, the most one user may (INSIGHT_QUOTA_PRESETS); delete one first.",
        ),
        Counted::WebhookEndpoints { .. } => (
            quotas.webhook_endpoints,
            "You have {} webhook endpoints, the most one user may (INSIGHT_QUOTA_WEBHOOK_ENDPOINTS); \
             delete one first.",
        ),
    };
    if store.count_for_quota(counted).await? < limit {
        return Ok(Ok(()));
    }
    Ok(Err(QuotaExceeded::count(sentence.replacen(
        "{}",
        &limit.to_string(),
        1,
    ))))
}

/// Refuses `adding` rooms more for `owner_id` when they would pass the rooms one user may
/// make in 24 hours: 429 until enough of the window's rooms have left it, or 409 when no
/// wait would make room for so many.
pub async fn check_rooms_today(
    store: &Store,
    quotas: &Quotas,
    owner_id: Uuid,
    adding: i64,
) -> anyhow::Result<Result<(), QuotaExceeded>> {
    let limit = quotas.rooms_per_day;
    if adding > limit {
        return Ok(Err(QuotaExceeded::count(format!(
            "{adding} rooms at once are more than the {limit} one user may make in a day \
             (INSIGHT_QUOTA_ROOMS_PER_DAY); make fewer."
        ))));
    }
    let day = Duration::hours(24);
    let made = store.rooms_made_since(owner_id, now() - day).await?;
    let over = made.len() as i64 + adding - limit;
    if over <= 0 {
        return Ok(Ok(()));
    }
    // The rooms fit once `over` of the window's rooms, oldest first, have left it.
    let leaves = usize::try_from(over - 1)
        .ok()
        .and_then(|index| made.get(index))
        .map_or(60, |made_at| (*made_at + day - now()).num_seconds().max(1));
    Ok(Err(QuotaExceeded {
        sentence: format!(
            "You made {} interview rooms in the last 24 hours; {adding} more would pass the limit of {limit} a day \
             (INSIGHT_QUOTA_ROOMS_PER_DAY).",
            made.len()
        ),
        retry_after: Some(u64::try_from(leaves).unwrap_or(60)),
    }))
}

/// Whether a thread holding `messages` has room for a question and its answer.
pub fn room_for_an_exchange(messages: usize, quotas: &Quotas) -> Result<(), QuotaExceeded> {
    if i64::try_from(messages).unwrap_or(i64::MAX).saturating_add(2) <= quotas.messages_per_thread {
        return Ok(());
    }
    Err(QuotaExceeded::count(format!(
        "This thread holds the most messages one thread may ({}, INSIGHT_QUOTA_MESSAGES_PER_THREAD); \
         start a new thread.",
        quotas.messages_per_thread
    )))
}
