//! Generating a report: for each of its prompts, the engine writes a section over the
//! report's records; every quote is checked against the transcripts; progress and token
//! usage are noted after each prompt, and a cancelled report stops at the next one.

use chrono::{DateTime, Utc};

use super::{Context, JobError, Kind};
use crate::config::Settings;
use crate::domain::insight::{report_section, with_report_section};
use crate::domain::job::JobKind;
use crate::domain::report::{ReasoningMode, ReportStatus};
use crate::engines::ai::{AiError, SectionBrief, Source, Usage, quotes};
use crate::store::{Job, ReportWork, Store};

/// A report's generation: the claim starts the report's attempt in the same write, and
/// the report moves with its job (its reason noted on a retry, `failed` on a failure).
pub(super) struct GenerateReport;

impl Kind for GenerateReport {
    const KIND: JobKind = JobKind::GenerateReport;
    /// The report, when the claim started its attempt.
    type Claimed = Option<ReportWork>;

    fn workers(settings: &Settings) -> usize {
        settings.report_workers()
    }

    fn claim(
        store: &Store,
        lease: chrono::Duration,
    ) -> impl Future<Output = anyhow::Result<Option<(Job, Self::Claimed)>>> + Send {
        store.claim_generation(lease)
    }

    async fn run(context: &Context, job: &Job, claimed: Option<ReportWork>) -> Result<(), JobError> {
        generate(context, job, claimed).await
    }

    fn retry(
        store: &Store,
        job: &Job,
        run_at: DateTime<Utc>,
        reason: &str,
    ) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.requeue_generation(job, run_at, reason)
    }

    fn fail(store: &Store, job: &Job, reason: &str) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.fail_generation(job, reason)
    }
}

/// Generates the report of `job`; `claimed` is the report as the claim that started this
/// attempt answered it (`None`: it is read, to see why it was not started).
async fn generate(context: &Context, job: &Job, claimed: Option<ReportWork>) -> Result<(), JobError> {
    let store = &context.store;
    let work = match claimed {
        Some(work) => Some(work),
        None => store.report_work(job.subject_id).await?,
    };
    let Some(work) = work else {
        store.complete_job(job).await?;
        return Ok(());
    };
    // The claim started this attempt (`claim_generation`) unless the report was no longer
    // waiting: cancelled, deleted or rewritten by hand meanwhile. Then there is nothing to do.
    if work.is_deleted || ReportStatus::parse(&work.status) != Some(ReportStatus::Generating) {
        store.complete_job(job).await?;
        return Ok(());
    }
    // Both reads at once: the report's first model call waits for them.
    let (prompts, material) = tokio::try_join!(
        store.prompt_texts(&work.prompts_ids.0),
        store.report_material(work.project_id, &work.records_ids.0)
    )?;
    if prompts.is_empty() {
        return Err(JobError::Permanent(
            "The report has no prompts left to answer: they were deleted. Choose prompts and regenerate.".to_owned(),
        ));
    }
    let sources: Vec<Source> = material.into_iter().map(crate::app::reports::source).collect();
    let mode = work
        .reasoning_mode
        .as_deref()
        .and_then(ReasoningMode::parse)
        .unwrap_or(ReasoningMode::Balanced);
    // The report's material as the model will see it: speakers and values as
    // placeholders, numbered through the material in order.
    let engine = crate::app::gate::engine_for_project(
        context,
        work.project_id,
        crate::domain::usage::UsageKind::Report,
        &crate::app::gate::Material {
            speakers: sources.iter().map(|s| s.speaker.as_str()).collect(),
            labels: sources.iter().map(|s| s.record_name.as_str()).collect(),
            texts: sources.iter().map(|s| s.text.as_str()).collect(),
            ..Default::default()
        },
    )
    .await?;
    let started = std::time::Instant::now();
    let mut record_ids: Vec<uuid::Uuid> = Vec::new();
    for source in &sources {
        if !record_ids.contains(&source.record_id) {
            record_ids.push(source.record_id);
        }
    }
    let records = store.record_versions(&record_ids).await?;
    let prices = &context.settings.model.llm_prices;
    let mut provenances = Vec::with_capacity(prompts.len());
    let mut sent = Vec::new();
    let mut usage = Usage::default();
    let mut sections = Vec::with_capacity(prompts.len());
    let mut quoted = Vec::new();
    for (done, prompt) in prompts.iter().enumerate() {
        let brief = SectionBrief {
            title: prompt.title.clone(),
            prompt: prompt.text.clone(),
            research_goals: work.research_goals.clone(),
            interview_guide: work.interview_guide.clone(),
            context: work.context.clone(),
            context_expand: work.context_expand.clone(),
            language: work.report_language.clone(),
            mode,
            quoted_before: quoted.clone(),
        };
        let section_started = std::time::Instant::now();
        let section = engine
            .write_section(&brief, &sources)
            .await
            .map_err(|error| match error {
                AiError::Transient(message) => JobError::Transient(message),
                AiError::Permanent(message) => JobError::Permanent(message),
            })?;
        usage += section.usage;
        provenances.push(crate::app::provenance::section(
            prices,
            &engine,
            &prompt.title,
            section_started.elapsed(),
            &mut sent,
        ));
        quoted.extend_from_slice(&section.quoted);
        let checked = quotes::check_quotes(&section.markdown, &sources);
        if checked.removed > 0 {
            tracing::info!(report = %work.id, removed = checked.removed, "quotes not found in the transcripts were removed");
        }
        let markdown = checked.markdown.trim();
        // Each section under its prompt's heading (the offline engine writes its own).
        if markdown.starts_with("## ") {
            sections.push(markdown.to_owned());
        } else {
            sections.push(format!("## {}\n\n{markdown}", prompt.title.trim()));
        }
        if done + 1 == prompts.len() {
            // The last section: completing the report notes it (and checks for a cancel).
            break;
        }
        let progress = (done + 1) as f64 / prompts.len() as f64;
        if !store
            .generation_progress(job, progress, usage.prompt_tokens, usage.completion_tokens)
            .await?
        {
            // Cancelled or deleted meanwhile (or taken over): stop here.
            return Ok(());
        }
    }
    let mut content = format!("# {}\n\n", work.title.trim());
    if sources.is_empty() {
        content.push_str("_The report's records have no finished material yet._\n\n");
    }
    content.push_str(&sections.join("\n\n"));
    content.push('\n');
    // The insights it includes, as they are now, under the title.
    let insights = store.included_insights(work.id).await?;
    if !insights.is_empty() {
        content = with_report_section(&content, &report_section(&insights));
    }
    let mut provenance = crate::app::provenance::report(&engine, provenances, sent, records, started.elapsed());
    // The engine's own count: the offline engine's, and a model's when it said none.
    provenance.usage = crate::domain::report::TokenUsage {
        prompt_tokens: i64::try_from(usage.prompt_tokens).unwrap_or(i64::MAX),
        completion_tokens: i64::try_from(usage.completion_tokens).unwrap_or(i64::MAX),
    };
    let completed = store.complete_generation(job, &content, &provenance).await?;
    // An insight included or taken out meanwhile found the report still generating and
    // left its section to this job: written again, as they are now.
    let rendered: Vec<uuid::Uuid> = insights.iter().map(|insight| insight.id).collect();
    if completed && store.report_insight_ids(work.id).await? != rendered {
        let insights = store.included_insights(work.id).await?;
        let rendered = with_report_section(&content, &report_section(&insights));
        store.set_completed_content(work.id, &content, &rendered).await?;
    }
    Ok(())
}
