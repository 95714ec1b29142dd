//! Proposing themes for a project's untagged highlights: have the engine group them, and
//! store each group as a proposed tag that waits for a person.

use super::{Context, JobError, Kind};
use crate::config::Settings;
use crate::domain::job::JobKind;
use crate::engines::ai::AiError;
use crate::store::Job;

/// A project's proposed themes: the job alone is retried and failed.
pub(super) struct ProposeThemes;

impl Kind for ProposeThemes {
    const KIND: JobKind = JobKind::ProposeThemes;
    type Claimed = ();

    fn workers(settings: &Settings) -> usize {
        super::one_unless_reports_stopped(settings)
    }

    async fn run(context: &Context, job: &Job, (): ()) -> Result<(), JobError> {
        propose(context, job).await
    }
}

async fn propose(context: &Context, job: &Job) -> Result<(), JobError> {
    let store = &context.store;
    let project_id = job.subject_id;
    let highlights = store.untagged_highlights(project_id).await?;
    // A highlight's note says what the researcher saw in it: it groups with the quote.
    let texts: Vec<String> = highlights
        .iter()
        .map(|h| {
            if h.note.trim().is_empty() {
                h.quote.clone()
            } else {
                format!("{} {}", h.quote, h.note)
            }
        })
        .collect();
    let language = highlights.iter().find_map(|h| h.language.clone());
    let (themes, usage) = if texts.len() < crate::engines::ai::themes::MIN_MEMBERS {
        (Vec::new(), crate::engines::ai::Usage::default())
    } else {
        let speakers = store.project_speakers(project_id).await?;
        crate::app::gate::engine_for_project(
            context,
            project_id,
            crate::domain::usage::UsageKind::Themes,
            &crate::app::gate::Material {
                speakers: speakers.iter().map(String::as_str).collect(),
                labels: Vec::new(),
                texts: texts.iter().map(String::as_str).collect(),
                ..Default::default()
            },
        )
        .await?
        .propose_themes(&texts, language.as_deref())
        .await
        .map_err(|error| match error {
            AiError::Transient(message) => JobError::Transient(message),
            AiError::Permanent(message) => JobError::Permanent(message),
        })?
    };
    let proposals: Vec<(String, String, Vec<uuid::Uuid>)> = themes
        .into_iter()
        .map(|theme| {
            let ids = theme
                .members
                .iter()
                .filter_map(|&n| highlights.get(n).map(|h| h.id))
                .collect();
            (theme.name, theme.description, ids)
        })
        .collect();
    let stored = store.replace_themes(project_id, &proposals).await?;
    tracing::info!(project = %project_id, stored, prompt_tokens = usage.prompt_tokens, completion_tokens = usage.completion_tokens, "themes proposed");
    store.complete_job(job).await?;
    Ok(())
}
