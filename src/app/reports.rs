//! Project reports: what a report is made from, and its generation's life (queued,
//! regenerated, cancelled); the writing itself is `jobs::reports`.

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self, Actor};
use crate::app::quota::Counted;
use crate::domain::insight::{Insight, report_section, with_report_section};
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::report::{
    Generation, ReasoningMode, Report, ReportCreateFields, ReportStatus, ReportVersion, TokenUsage, VersionKind,
};
use crate::domain::usage::Estimate;
use crate::domain::workspace::Need;
use crate::engines::ai::{SectionBrief, Source};
use crate::error::{Error, Result, UnknownReferences, ValidationIssue};
use crate::services::Services;
use crate::store::{CreatedKey, GenerationRefused, MaterialRow, NewReport, Store, Target};

/// A change to a report's fields, as every door sends it.
pub use crate::store::ReportChanges;

/// Checks that referenced prompts, records and preset exist and are the caller's to use;
/// those that are not are named in one 409 (see `UnknownReferences`).
async fn check_references(
    store: &Store,
    owner_id: Uuid,
    project_id: Uuid,
    prompts_ids: Option<&Vec<Uuid>>,
    records_ids: Option<&Vec<Uuid>>,
    preset_id: Option<Uuid>,
) -> Result<()> {
    let mut unknown = UnknownReferences::default();
    if let Some(ids) = prompts_ids {
        let missing = store.invisible_prompts(owner_id, ids).await?;
        unknown.add_all("prompt", "prompts_ids", ids, &missing);
    }
    if let Some(ids) = records_ids {
        let missing = store.foreign_records(project_id, ids).await?;
        unknown.add_all("record of this project", "records_ids", ids, &missing);
    }
    if let Some(id) = preset_id
        && store.get_preset(owner_id, id).await?.is_none()
    {
        unknown.add("preset", id, "preset_id");
    }
    unknown.into_error().map_or(Ok(()), Err)
}

/// A creation body as every door must send it: a title (trimmed, 1 to 300 characters),
/// prompts or a preset to write it from (an empty list of prompts is none), and a report
/// language, when given, as a two-letter ISO 639-1 code. The JSON door's schema says most of
/// this as well; the rule is here so that the console and MCP answer as it does.
fn checked(mut body: ReportCreateFields) -> Result<ReportCreateFields> {
    let mut issues = Vec::new();
    let title = body.title.trim();
    if title.is_empty() {
        issues.push(ValidationIssue::blank("title", &body.title));
    } else if title.chars().count() > TITLE_MAX {
        issues.push(ValidationIssue::too_long("title", title, TITLE_MAX));
    }
    body.title = title.to_owned();
    body.prompts_ids = body.prompts_ids.filter(|ids| !ids.is_empty());
    if body.prompts_ids.is_none() && body.preset_id.is_none() {
        issues.push(ValidationIssue::new(
            vec![json!("body"), json!("preset_id")],
            "missing",
            "Choose a preset or at least one prompt (prompts_ids) for the report",
        ));
    }
    if let Some(language) = &body.report_language
        && !(language.len() == 2 && language.bytes().all(|b| b.is_ascii_lowercase()))
    {
        issues.push(
            ValidationIssue::value_error(
                vec![json!("body"), json!("report_language")],
                "a report's language is a two-letter ISO 639-1 code in lower case, such as en",
            )
            .with_input(json!(language)),
        );
    }
    if issues.is_empty() {
        Ok(body)
    } else {
        Err(Error::validation(issues))
    }
}

/// The longest title a report may have.
pub const TITLE_MAX: usize = 300;

/// Creates a report from the prompts given, or the preset's, over the records given, or
/// every record of the project, and queues its generation. Answers it as written.
pub async fn create(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    body: ReportCreateFields,
) -> Result<Report> {
    let owner_id = caller.id();
    // The checks below are a few reads each; a burst of creations taken all at once would
    // queue its first report only when the whole burst was checked, leaving the model
    // idle. A few at a time, first come first served, the first reports start generating
    // while the rest are checked. The write is left out: creations that reach it
    // together share a commit.
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    let body = checked(body)?;
    crate::app::gate::require_project_budget(services, project_id).await?;
    let intake = services.report_intake.acquire().await.map_err(anyhow::Error::from)?;
    let Some(project_name) = services.store.project_name(owner_id, project_id).await? else {
        return Err(Error::not_found("Project"));
    };
    let (prompts_ids, records_ids) = chosen(services, owner_id, project_id, &body).await?;
    services.check_quota(Counted::Reports { project_id }).await?;
    let report = NewReport {
        title: body.title,
        prompts_ids,
        records_ids,
        preset_id: body.preset_id,
        category: body.category,
        context: body.context,
        context_expand: body.context_expand,
        report_language: body.report_language,
        reasoning_mode: body.reasoning_mode,
    };
    drop(intake);
    // Answered as written (`queued`), without reading it back.
    Ok(services.store.create_report(project_id, project_name, report).await?)
}

/// An utterance of a report's material as the engines read it.
pub fn source(row: MaterialRow) -> Source {
    Source {
        record_id: row.record_id,
        record_name: row.record_name,
        utterance_id: row.id,
        speaker: row.speaker,
        is_respondent: row.is_respondent,
        start_ms: row.start_ms,
        text: row.text,
    }
}

/// The prompts a creation body names (its own, else its preset's) and its records (else
/// every record of the project), each checked to be the owner's.
async fn chosen(
    services: &Services,
    owner_id: Uuid,
    project_id: Uuid,
    body: &ReportCreateFields,
) -> Result<(Vec<Uuid>, Vec<Uuid>)> {
    check_references(
        &services.store,
        owner_id,
        project_id,
        body.prompts_ids.as_ref(),
        body.records_ids.as_ref(),
        body.preset_id,
    )
    .await?;
    let prompts_ids = match (&body.prompts_ids, body.preset_id) {
        (Some(ids), _) if !ids.is_empty() => ids.clone(),
        (_, Some(preset_id)) => services
            .store
            .get_preset(owner_id, preset_id)
            .await?
            .map(|p| p.prompt_ids)
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let records_ids = match &body.records_ids {
        Some(ids) => ids.clone(),
        None => services.store.record_ids(project_id).await?,
    };
    Ok((prompts_ids, records_ids))
}

/// What a report would take before it is queued: the tokens of the calls its generation
/// would make (their prompts as they would be built, typical answers) and their cost at
/// the model's price, in the workspace's currency. Nothing is written.
pub async fn estimate(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    body: ReportCreateFields,
) -> Result<Estimate> {
    let owner_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    let body = checked(body)?;
    let Some(project) = services.store.get_project(owner_id, project_id).await? else {
        return Err(Error::not_found("Project"));
    };
    let (prompts_ids, records_ids) = chosen(services, owner_id, project_id, &body).await?;
    let (prompts, material, settings) = tokio::try_join!(
        services.store.prompt_texts(&prompts_ids),
        services.store.report_material(project_id, &records_ids),
        services.store.workspace_settings(project.workspace_id),
    )?;
    let sources: Vec<Source> = material.into_iter().map(source).collect();
    let mode = body.reasoning_mode.unwrap_or(ReasoningMode::Balanced);
    let briefs: Vec<SectionBrief> = prompts
        .into_iter()
        .map(|prompt| SectionBrief {
            title: prompt.title,
            prompt: prompt.text,
            research_goals: project.research_goals.clone(),
            interview_guide: project.interview_guide.clone(),
            context: body.context.clone(),
            context_expand: body.context_expand.clone(),
            language: body.report_language.clone(),
            mode,
            quoted_before: Vec::new(),
        })
        .collect();
    // The estimate counts the text the model would get: concealed as the report's would be.
    let engine = crate::app::gate::engine_for_project(
        services,
        project_id,
        crate::domain::usage::UsageKind::Report,
        &crate::app::gate::Material {
            speakers: sources.iter().map(|s| s.speaker.as_str()).collect(),
            labels: sources.iter().map(|s| s.record_name.as_str()).collect(),
            texts: sources.iter().map(|s| s.text.as_str()).collect(),
            ..Default::default()
        },
    )
    .await?;
    // Counting a large project's tokens takes a while: off the async threads.
    let usage = tokio::task::spawn_blocking(move || engine.estimate_sections(&briefs, &sources))
        .await
        .map_err(|error| anyhow::anyhow!("estimating stopped: {error}"))?
        .map_err(|error| Error::conflict(error.to_string()))?;
    let model = services.engine.model().to_owned();
    let cost = services
        .settings
        .model
        .llm_prices
        .of(&model)
        .cost(usage.prompt_tokens, usage.completion_tokens);
    Ok(Estimate {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cost,
        currency: settings.currency,
        model,
    })
}

/// Changes a report: a field left out stays; what the changes name must be the owner's.
/// Making it public or private, deleting or restoring it, is an audit entry.
pub async fn update(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    report_id: Uuid,
    changes: ReportChanges,
) -> Result<Report> {
    let (owner_id, actor) = (caller.id(), &caller.actor());
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    check_references(
        &services.store,
        owner_id,
        project_id,
        changes.prompts_ids.as_value(),
        changes.records_ids.as_value(),
        changes.preset_id.as_value().copied(),
    )
    .await?;
    let before = match (&changes.is_public, &changes.is_deleted) {
        (Patch::Value(_), _) | (_, Patch::Value(_)) => {
            services.store.get_report(owner_id, project_id, report_id).await?
        }
        _ => None,
    };
    let report = services
        .store
        .update_report(owner_id, project_id, report_id, changes)
        .await?
        .ok_or_else(|| Error::not_found("Report"))?;
    if let Some(before) = before {
        if before.is_public != report.is_public {
            let detail = serde_json::json!({ "is_public": report.is_public });
            audit_report(services, actor, &report, "report.shared", detail).await?;
        }
        if before.is_deleted != report.is_deleted {
            let action = if report.is_deleted {
                "report.deleted"
            } else {
                "report.restored"
            };
            let detail = serde_json::json!({ "title": report.title });
            audit_report(services, actor, &report, action, detail).await?;
        }
    }
    Ok(report)
}

/// Deletes a report (kept with `is_deleted: true`, so it can be restored), with an audit
/// entry.
pub async fn delete(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<()> {
    let (owner_id, actor) = (caller.id(), &caller.actor());
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    let changes = ReportChanges {
        is_deleted: Patch::Value(true),
        ..ReportChanges::default()
    };
    let report = services
        .store
        .update_report(owner_id, project_id, report_id, changes)
        .await?
        .ok_or_else(|| Error::not_found("Report"))?;
    let detail = serde_json::json!({ "title": report.title });
    audit_report(services, actor, &report, "report.deleted", detail).await
}

async fn audit_report(
    services: &Services,
    actor: &Actor,
    report: &Report,
    action: &'static str,
    detail: serde_json::Value,
) -> Result<()> {
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: services.store.project_workspace(report.project_id).await?,
            actor: actor.clone(),
            action,
            target: Some(("report", report.id.to_string())),
            detail,
        },
    )
    .await
}

fn refused(refused: GenerationRefused, action: &str) -> Error {
    match refused {
        GenerationRefused::NotFound => Error::not_found("Report"),
        GenerationRefused::State(status) => {
            Error::Conflict(format!("The report is {}; it cannot be {action} now.", status.as_str()))
        }
    }
}

/// Queues the report's generation again (its prompts, over its records as they are now).
/// A person's edits are versions since they were saved, so the new text loses none of them;
/// the console asks first all the same (`store.report_edited`).
pub async fn regenerate(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    let (store, owner_id) = (&services.store, caller.id());
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    crate::app::gate::require_project_budget(services, project_id).await?;
    store
        .regenerate_report(owner_id, project_id, report_id)
        .await?
        .map_err(|why| refused(why, "regenerated"))?;
    let report = store.get_report(owner_id, project_id, report_id).await?;
    report.ok_or_else(|| Error::not_found("Report"))
}

/// The report's versions, newest first: each completed generation and each edit a person
/// saved, with what changed from the version before as a unified diff of the Markdown.
pub async fn versions(store: &Store, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Vec<ReportVersion>> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Read).await?;
    report_of(store, user_id, project_id, report_id).await?;
    let rows = store.report_versions(report_id).await?;
    Ok(rows
        .iter()
        .enumerate()
        .map(|(n, row)| ReportVersion {
            version: row.version,
            kind: VersionKind::parse(&row.kind).unwrap_or(VersionKind::Generation),
            author_email: row.author_email.clone(),
            generated_at: row.generated_at,
            content: row.content.clone(),
            provenance: row.provenance.as_ref().map(|p| p.0.clone()),
            changes: rows.get(n + 1).map(|before| {
                similar::TextDiff::from_lines(&before.content, &row.content)
                    .unified_diff()
                    .context_radius(2)
                    .header(
                        &format!("version {}", before.version),
                        &format!("version {}", row.version),
                    )
                    .to_string()
            }),
        })
        .collect())
}

/// Cancels a queued or running generation; a worker on it stops at its next step.
pub async fn cancel(store: &Store, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    let owner_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    store
        .cancel_generation(owner_id, project_id, report_id)
        .await?
        .map_err(|why| refused(why, "cancelled"))?;
    let report = store.get_report(owner_id, project_id, report_id).await?;
    report.ok_or_else(|| Error::not_found("Report"))
}

/// A report of the project, deleted ones too (marked `is_deleted`, so that they can be
/// found and restored): every door finds a report by its id this way, while lists and the
/// report as a document to read ([`document`]) leave deleted ones out.
pub async fn get(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    report_of(&services.store, user_id, project_id, report_id).await
}

/// A report as a document to read (its page, its resource, its exports): a deleted one is
/// not found until it is restored.
pub async fn document(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    let report = get(services, caller, project_id, report_id).await?;
    if report.is_deleted {
        return Err(Error::NotFound(
            "The report was deleted; it can be restored from its project".into(),
        ));
    }
    Ok(report)
}

/// A report the user may change (404 unseen, 403 for a viewer), deleted ones too.
pub async fn writable(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    report_of(&services.store, user_id, project_id, report_id).await
}

/// What a person reading a report sees beside its text: the generation's state, whether its
/// text was edited by hand since it was last generated (Regenerate asks first), and
/// whether he may change it.
pub struct Reading {
    pub report: Report,
    pub generation: Generation,
    pub edited: bool,
    pub may_write: bool,
}

/// A report to read with its generation's state; a deleted one is shown marked so, that it
/// can be restored.
pub async fn reading(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Reading> {
    let user_id = caller.id();
    let role = caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    let report = report_of(&services.store, user_id, project_id, report_id).await?;
    let (generation, edited) = tokio::try_join!(generation(services, caller, project_id, report_id), async {
        Ok(services.store.report_edited(report_id).await?)
    },)?;
    Ok(Reading {
        report,
        generation,
        edited,
        may_write: role.allows(Need::Write),
    })
}

/// Whether the report's current text is a person's edit (its newest version is an edit).
pub async fn edited(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<bool> {
    caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    Ok(services.store.report_edited(report_id).await?)
}

/// A page of the project's reports, newest first; archived ones only when asked for,
/// deleted ones never.
pub async fn list(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    archived: bool,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Report, CreatedKey>> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    Ok(services.store.list_reports(user_id, project_id, archived, page).await?)
}

/// A shared report, for anyone with its link: only while it is public and not deleted.
pub async fn shared(services: &Services, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    services
        .store
        .get_public_report(project_id, report_id)
        .await?
        .ok_or_else(|| Error::NotFound("This report is not shared (any more)".into()))
}

/// Where the report's generation is: progress, attempts, the last error, token usage.
pub async fn generation(services: &Services, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Generation> {
    let user_id = caller.id();
    let row = services
        .store
        .generation(user_id, project_id, report_id)
        .await?
        .ok_or_else(|| Error::not_found("Report"))?;
    Ok(Generation {
        status: ReportStatus::parse(&row.status).unwrap_or(ReportStatus::Failed),
        progress: row.gen_progress,
        error: row.gen_error,
        attempts: row.gen_attempts,
        started_at: row.gen_started_at,
        finished_at: row.gen_finished_at,
        usage: TokenUsage {
            prompt_tokens: row.gen_prompt_tokens,
            completion_tokens: row.gen_completion_tokens,
        },
        provenance: row.gen_provenance.map(|p| p.0),
    })
}

/// How often [`wait`] looks at a generation.
const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(250);

/// Waits until the report's generation is settled (completed, failed or cancelled), the
/// deadline passes or `stop` resolves, telling `progress` each time more of it is written;
/// answers the generation as it then is. The report is written all the same when the wait
/// ends first.
pub async fn wait<Told>(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    report_id: Uuid,
    deadline: tokio::time::Instant,
    mut progress: impl FnMut(Generation) -> Told,
    stop: impl std::future::Future<Output = ()>,
) -> Result<Generation>
where
    Told: std::future::Future<Output = ()>,
{
    let mut stop = std::pin::pin!(stop);
    let mut told = -1.0;
    loop {
        let generation = generation(services, caller, project_id, report_id).await?;
        let settled = matches!(
            generation.status,
            ReportStatus::Completed | ReportStatus::Failed | ReportStatus::Cancelled
        );
        if settled || tokio::time::Instant::now() >= deadline {
            return Ok(generation);
        }
        if generation.progress > told {
            told = generation.progress;
            progress(generation.clone()).await;
        }
        tokio::select! {
            () = tokio::time::sleep(WAIT_STEP) => {}
            () = &mut stop => return Ok(generation),
        }
    }
}

/// The report, when the user may read it; else a 404.
async fn report_of(store: &Store, user_id: Uuid, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    store
        .get_report(user_id, project_id, report_id)
        .await?
        .ok_or_else(|| Error::not_found("Report"))
}

/// For each of the project's insights given, the reports (id and title) that include it,
/// deleted reports left out.
pub async fn including(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    insight_ids: &[Uuid],
) -> Result<std::collections::HashMap<Uuid, Vec<(Uuid, String)>>> {
    caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    let mut included = std::collections::HashMap::new();
    for &insight_id in insight_ids {
        included.insert(insight_id, services.store.reports_including(insight_id).await?);
    }
    Ok(included)
}

/// Insights a report includes at most.
pub const INSIGHTS_MAX: usize = 50;

/// The insights the report includes, in the order they were added.
pub async fn insights(store: &Store, caller: &Caller, project_id: Uuid, report_id: Uuid) -> Result<Vec<Insight>> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Read).await?;
    report_of(store, user_id, project_id, report_id).await?;
    Ok(store.included_insights(report_id).await?)
}

/// Includes an insight of the report's project in the report (at the end of its insights
/// section); including it again changes nothing. Answers the report.
pub async fn include_insight(
    store: &Store,
    caller: &Caller,
    project_id: Uuid,
    report_id: Uuid,
    insight_id: Uuid,
) -> Result<Report> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    report_of(store, user_id, project_id, report_id).await?;
    let insight = crate::app::research::insights::get(store, caller, insight_id).await?;
    if insight.project_id != project_id {
        return Err(Error::not_found("Insight"));
    }
    let included = store.report_insight_ids(report_id).await?;
    if !included.contains(&insight_id) && included.len() >= INSIGHTS_MAX {
        return Err(Error::conflict(format!(
            "A report includes at most {INSIGHTS_MAX} insights; take one out first."
        )));
    }
    store.include_insight(report_id, insight_id).await?;
    render_insights(store, user_id, report_id, project_id).await
}

/// Takes an insight out of the report; one it does not include changes nothing. Answers the
/// report.
pub async fn exclude_insight(
    store: &Store,
    caller: &Caller,
    project_id: Uuid,
    report_id: Uuid,
    insight_id: Uuid,
) -> Result<Report> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    let report = report_of(store, user_id, project_id, report_id).await?;
    if store.exclude_insight(report_id, insight_id).await? {
        render_insights(store, user_id, report_id, project_id).await
    } else {
        Ok(report)
    }
}

/// Writes the report's insights section anew, as the report is after the change. A report
/// being generated gets it when its generation completes (the job looks again then).
async fn render_insights(store: &Store, user_id: Uuid, report_id: Uuid, project_id: Uuid) -> Result<Report> {
    let report = report_of(store, user_id, project_id, report_id).await?;
    if matches!(report.status, ReportStatus::Queued | ReportStatus::Generating) {
        return Ok(report);
    }
    let section = report_section(&store.included_insights(report.id).await?);
    let content = report
        .content
        .clone()
        .unwrap_or_else(|| format!("# {}\n", report.title.trim()));
    let changes = ReportChanges {
        content: Patch::Value(with_report_section(&content, &section)),
        insights_rendered: true,
        ..ReportChanges::default()
    };
    store
        .update_report(user_id, report.project_id, report.id, changes)
        .await?
        .ok_or_else(|| Error::not_found("Report"))
}
