//! Suggesting highlights on a record: read the record and the tags asked for, have the
//! engine find the passages, and store each as a suggestion that waits for a person.

use super::{Context, JobError, Kind};
use crate::config::Settings;
use crate::domain::job::JobKind;
use crate::domain::record::RecordStatus;
use crate::engines::ai::AiError;
use crate::engines::ai::suggest::TagBrief;
use crate::store::Job;

/// A request's highlight suggestions: the job alone is retried and failed.
pub(super) struct SuggestHighlights;

impl Kind for SuggestHighlights {
    const KIND: JobKind = JobKind::SuggestHighlights;
    type Claimed = ();

    fn workers(settings: &Settings) -> usize {
        super::one_unless_reports_stopped(settings)
    }

    async fn run(context: &Context, job: &Job, (): ()) -> Result<(), JobError> {
        suggest(context, job).await
    }
}

async fn suggest(context: &Context, job: &Job) -> Result<(), JobError> {
    let store = &context.store;
    let Some(request) = store.suggestion_request(job.subject_id).await? else {
        store.complete_job(job).await?;
        return Ok(());
    };
    let record = match store.record_by_id(request.record_id).await? {
        Some(record) if record.status == RecordStatus::Finished => record,
        // Deleted, or not readable: nothing to suggest.
        _ => {
            store.complete_job(job).await?;
            return Ok(());
        }
    };
    let tags: Vec<TagBrief> = store
        .tags_for_record(record.id, &request.tag_ids)
        .await?
        .into_iter()
        .map(|(id, name, description)| TagBrief { id, name, description })
        .collect();
    if !tags.is_empty() {
        let utterances = store.utterances(record.id).await?;
        let engine = crate::app::gate::engine_for_project(
            context,
            record.project_id,
            crate::domain::usage::UsageKind::Suggestions,
            &crate::app::gate::Material {
                speakers: utterances.iter().map(|u| u.speaker.as_str()).collect(),
                labels: vec![record.name.as_str()],
                texts: utterances.iter().map(|u| u.text.as_str()).collect(),
                ..Default::default()
            },
        )
        .await?;
        let started = std::time::Instant::now();
        let (suggestions, usage) = engine
            .suggest_highlights(&tags, &utterances, record.language.as_deref())
            .await
            .map_err(|error| match error {
                AiError::Transient(message) => JobError::Transient(message),
                AiError::Permanent(message) => JobError::Permanent(message),
            })?;
        let provenance = crate::app::provenance::provenance(
            &context.settings.model.llm_prices,
            &engine,
            vec![crate::domain::usage::RecordVersion {
                id: record.id,
                version: record.updated_at,
            }],
            started.elapsed(),
        );
        let stored = crate::app::research::highlights::store_suggestions(
            store,
            record.id,
            request.requested_by,
            &suggestions,
            &utterances,
            &provenance,
        )
        .await?;
        tracing::info!(record = %record.id, stored, prompt_tokens = usage.prompt_tokens, completion_tokens = usage.completion_tokens, "highlights suggested");
    }
    store.complete_job(job).await?;
    Ok(())
}
