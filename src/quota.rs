//! How much one user may pile up (`INSIGHT_QUOTA_*`). Each creation checks its count
//! before it writes; two creations racing at the limit may both pass, so a quota bounds
//! growth rather than fixing an exact number. Past a count the answer is 409 with a
//! sentence naming the limit; past a rate (rooms per day) it is 429 with `Retry-After`.

use chrono::Duration;
use uuid::Uuid;

use crate::config::Quotas;
use crate::domain::now;
use crate::store::Store;

/// What a creation would add to.
#[derive(Debug, Clone, Copy)]
pub enum Counted {
    Projects {
        owner_id: Uuid,
    },
    Records {
        project_id: Uuid,
    },
    Reports {
        project_id: Uuid,
    },
    /// `adding` rooms at once, against those the owner made in the last 24 hours.
    RoomsToday {
        owner_id: Uuid,
        adding: i64,
    },
    RecordThreads {
        owner_id: Uuid,
        record_id: Uuid,
    },
    AssistantThreads {
        owner_id: Uuid,
    },
    /// A question and its answer: two messages more.
    Messages {
        thread_id: i64,
    },
    Prompts {
        owner_id: Uuid,
    },
    Presets {
        owner_id: Uuid,
    },
    WebhookEndpoints {
        owner_id: Uuid,
    },
}

/// A quota that a creation would pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaExceeded {
    pub sentence: String,
    /// For a rate: seconds until the creation would fit.
    pub retry_after: Option<u64>,
}

/// Whether a thread holding `messages` has room for a question and its answer.
pub fn room_for_an_exchange(messages: i64, quotas: &Quotas) -> Result<(), QuotaExceeded> {
    if messages + 2 <= quotas.messages_per_thread {
        return Ok(());
    }
    Err(QuotaExceeded {
        sentence: format!(
            "This thread holds the most messages one thread may ({}, INSIGHT_QUOTA_MESSAGES_PER_THREAD); \
             start a new thread.",
            quotas.messages_per_thread
        ),
        retry_after: None,
    })
}

/// Refuses a creation that would take `counted` past its quota.
pub async fn check(store: &Store, quotas: &Quotas, counted: Counted) -> anyhow::Result<Result<(), QuotaExceeded>> {
    let refused = |sentence: String| {
        Ok(Err(QuotaExceeded {
            sentence,
            retry_after: None,
        }))
    };
    let count = |what| store.count_for_quota(what);
    match counted {
        Counted::Projects { .. } if count(counted).await? >= quotas.projects => refused(format!(
            "You own {} projects, the most one user may (INSIGHT_QUOTA_PROJECTS); delete one first.",
            quotas.projects
        )),
        Counted::Records { .. } if count(counted).await? >= quotas.records_per_project => refused(format!(
            "This project holds {} records, the most one project may (INSIGHT_QUOTA_RECORDS_PER_PROJECT); \
             delete one or start another project.",
            quotas.records_per_project
        )),
        Counted::Reports { .. } if count(counted).await? >= quotas.reports_per_project => refused(format!(
            "This project holds {} reports, the most one project may (INSIGHT_QUOTA_REPORTS_PER_PROJECT); \
             delete one first.",
            quotas.reports_per_project
        )),
        Counted::RoomsToday { owner_id, adding } => {
            let since = now() - Duration::hours(24);
            let (made, oldest) = store.rooms_made_since(owner_id, since).await?;
            if made + adding <= quotas.rooms_per_day {
                return Ok(Ok(()));
            }
            // A room made a day before the oldest of the window leaves it then.
            let retry_after = oldest
                .map(|oldest| (oldest + Duration::hours(24) - now()).num_seconds().max(1))
                .unwrap_or(60);
            Ok(Err(QuotaExceeded {
                sentence: format!(
                    "You made {made} interview rooms in the last 24 hours; {} more would pass the limit of {} a day \
                     (INSIGHT_QUOTA_ROOMS_PER_DAY).",
                    adding, quotas.rooms_per_day
                ),
                retry_after: Some(u64::try_from(retry_after).unwrap_or(60)),
            }))
        }
        Counted::RecordThreads { .. } if count(counted).await? >= quotas.threads_per_record => refused(format!(
            "You have {} chat threads on this record, the most one user may (INSIGHT_QUOTA_THREADS_PER_RECORD); \
             delete one or continue an existing thread.",
            quotas.threads_per_record
        )),
        Counted::AssistantThreads { .. } if count(counted).await? >= quotas.assistant_threads => refused(format!(
            "You have {} research assistant threads, the most one user may (INSIGHT_QUOTA_ASSISTANT_THREADS); \
             delete one first.",
            quotas.assistant_threads
        )),
        Counted::Messages { .. } => Ok(room_for_an_exchange(count(counted).await?, quotas)),
        Counted::Prompts { .. } if count(counted).await? >= quotas.prompts => refused(format!(
            "You own {} prompts, the most one user may (INSIGHT_QUOTA_PROMPTS); delete one first.",
            quotas.prompts
        )),
        Counted::Presets { .. } if count(counted).await? >= quotas.presets => refused(format!(
            "You own {} presets, the most one user may (INSIGHT_QUOTA_PRESETS); delete one first.",
            quotas.presets
        )),
        Counted::WebhookEndpoints { .. } if count(counted).await? >= quotas.webhook_endpoints => refused(format!(
            "You have {} webhook endpoints, the most one user may (INSIGHT_QUOTA_WEBHOOK_ENDPOINTS); delete one first.",
            quotas.webhook_endpoints
        )),
        _ => Ok(Ok(())),
    }
}
