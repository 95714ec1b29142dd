//! Writing a record's persona: read the record as it is now, have the engine write the
//! persona, and store it with the version of the record it was written from.

use super::{Context, JobError, Kind};
use crate::config::Settings;
use crate::domain::job::JobKind;
use crate::domain::record::RecordStatus;
use crate::engines::ai::AiError;
use crate::store::Job;

/// A record's persona: the job alone is retried and failed.
pub(super) struct WritePersona;

impl Kind for WritePersona {
    const KIND: JobKind = JobKind::WritePersona;
    type Claimed = ();

    fn workers(settings: &Settings) -> usize {
        super::one_unless_reports_stopped(settings)
    }

    async fn run(context: &Context, job: &Job, (): ()) -> Result<(), JobError> {
        write(context, job).await
    }
}

async fn write(context: &Context, job: &Job) -> Result<(), JobError> {
    let Some(record) = context.store.record_by_id(job.subject_id).await? else {
        // Deleted since: nothing to write.
        context.store.complete_job(job).await?;
        return Ok(());
    };
    if record.status != RecordStatus::Finished {
        // Queued again when the record finishes.
        context.store.complete_job(job).await?;
        return Ok(());
    }
    let utterances = context.store.utterances(record.id).await?;
    // Past the workspace's budget the offline engine writes it: no model call, nothing
    // charged, and the persona still there for the record (its provenance says which).
    let spent = crate::app::gate::project_budget_spent(context, record.project_id)
        .await?
        .is_some();
    let engine = if spent {
        crate::engines::ai::Engine::Offline
    } else {
        crate::app::gate::engine_for_project(
            context,
            record.project_id,
            crate::domain::usage::UsageKind::Persona,
            &crate::app::gate::Material {
                speakers: utterances.iter().map(|u| u.speaker.as_str()).collect(),
                labels: vec![record.name.as_str()],
                texts: utterances.iter().map(|u| u.text.as_str()).collect(),
                ..Default::default()
            },
        )
        .await?
    };
    let started = std::time::Instant::now();
    let (persona, usage) = engine
        .persona(&record.name, &utterances, record.language.as_deref())
        .await
        .map_err(|error| match error {
            AiError::Transient(message) => JobError::Transient(message),
            AiError::Permanent(message) => JobError::Permanent(message),
        })?;
    let markdown = crate::engines::ai::persona::render_markdown(&persona);
    tracing::info!(record = %record.id, prompt_tokens = usage.prompt_tokens, completion_tokens = usage.completion_tokens, "persona written");
    let provenance = crate::app::provenance::provenance(
        &context.settings.model.llm_prices,
        &engine,
        vec![crate::domain::usage::RecordVersion {
            id: record.id,
            version: record.updated_at,
        }],
        started.elapsed(),
    );
    context
        .store
        .complete_persona_job(job, record.updated_at, &persona, &markdown, &provenance)
        .await?;
    Ok(())
}
