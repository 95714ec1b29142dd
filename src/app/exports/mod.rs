//! Exports into the documents teams share: a report as Markdown, Word or PDF, its citations
//! as links to the moments they cite; a record's transcript as Word, plain text, WebVTT or
//! SubRip. An export is read access to what it exports and leaves an `export.created` line
//! in the workspace's audit log (the project's highlights as CSV and the project as REFI-QDA
//! are in `crate::app::research::exchange`).

pub mod document;
pub mod docx;
pub mod pdf;
pub mod transcript;

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::access;
use crate::app::accounts::audit::{self, Actor};
use crate::app::research::exchange::{Download, file_stem};
use crate::domain::report::Report;
use crate::domain::workspace::Need;
use crate::engines::ai::citations::CitationIndex;
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::Target;

pub use document::Document;

crate::domain::string_enum! {
    /// What a report is exported as.
    ReportFormat { Markdown = "md", Docx = "docx", Pdf = "pdf" }
}

crate::domain::string_enum! {
    /// What a transcript is exported as.
    TranscriptFormat { Docx = "docx", Txt = "txt", Vtt = "vtt", Srt = "srt" }
}

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// The records a report may cite, for its citations to become links.
pub async fn citation_index(services: &Services, report: &Report) -> Result<CitationIndex> {
    let mut index = CitationIndex::default();
    let utterances = services.store.utterances_of(&report.records_ids).await?;
    for record_id in &report.records_ids {
        let Some(record) = services.store.record_by_id(*record_id).await? else {
            continue;
        };
        let moments = utterances
            .iter()
            .filter(|u| u.record_id == *record_id)
            .map(|u| (u.id, u.start_ms));
        index.add(*record_id, &record.name, moments);
    }
    Ok(index)
}

/// A report the user may read, with content to export.
async fn written_report(services: &Services, user_id: Uuid, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    access::require(&services.store, user_id, Target::Project(project_id), Need::Read).await?;
    let report = services
        .store
        .get_report(user_id, project_id, report_id)
        .await?
        .filter(|report| !report.is_deleted)
        .ok_or_else(|| Error::not_found("Report"))?;
    if report
        .content
        .as_deref()
        .is_none_or(|content| content.trim().is_empty())
    {
        return Err(Error::conflict(format!(
            "The report has nothing to export yet: it is {}. Export it once it is written.",
            report.status.as_str()
        )));
    }
    Ok(report)
}

async fn audit_export(
    services: &Services,
    actor: &Actor,
    workspace_id: Uuid,
    target: (&'static str, Uuid),
    format: &str,
) -> Result<()> {
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "export.created",
            target: Some((target.0, target.1.to_string())),
            detail: json!({ "format": format }),
        },
    )
    .await
}

/// Lays out and writes a document away from the request threads: a long report takes tens
/// of milliseconds.
async fn written(document: Document, write: fn(&Document) -> anyhow::Result<Vec<u8>>) -> Result<Vec<u8>> {
    tokio::task::spawn_blocking(move || write(&document))
        .await
        .map_err(|error| Error::Internal(anyhow::anyhow!("the export stopped: {error}")))?
        .map_err(Error::Internal)
}

/// The report as a file: Markdown as written (its title as the first heading), or a Word
/// document or PDF with a title block and its citations as links into the console.
pub async fn report(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    report_id: Uuid,
    format: ReportFormat,
) -> Result<Download> {
    let user_id = caller.id();
    let actor = &caller.actor();
    let report = written_report(services, user_id, project_id, report_id).await?;
    let project = services
        .store
        .get_project(user_id, project_id)
        .await?
        .ok_or_else(|| Error::not_found("Project"))?;
    let markdown = report.content.clone().unwrap_or_default();
    let stem = file_stem(&report.title);
    let (bytes, content_type) = match format {
        ReportFormat::Markdown => {
            let body = document::without_title(&markdown, &report.title);
            let text = format!("# {}\n\n{}\n", report.title.trim(), body.trim());
            (text.into_bytes(), "text/markdown; charset=utf-8")
        }
        ReportFormat::Docx | ReportFormat::Pdf => {
            let index = citation_index(services, &report).await?;
            let public_url = services.settings.server.public_url.clone();
            let body = document::without_title(&markdown, &report.title);
            let blocks = document::from_markdown(
                body,
                &document::Citations {
                    index: &index,
                    public_url: &public_url,
                },
            );
            let sources = match report.records_ids.len() {
                1 => "From 1 record".to_owned(),
                n => format!("From {n} records"),
            };
            let document = Document {
                title: report.title.clone(),
                byline: vec![
                    project.name.clone(),
                    format!("{sources} · written {}", report.updated_at.format("%-d %B %Y")),
                ],
                blocks,
            };
            if format == ReportFormat::Docx {
                (written(document, docx::write).await?, DOCX)
            } else {
                (written(document, pdf::write).await?, "application/pdf")
            }
        }
    };
    audit_export(
        services,
        actor,
        project.workspace_id,
        ("report", report.id),
        format.as_str(),
    )
    .await?;
    Ok(Download {
        filename: format!("{stem}.{}", format.as_str()),
        content_type,
        bytes,
    })
}

/// The record's transcript as a file. Subtitles need times: a transcript without any (typed
/// notes) is refused as WebVTT or SubRip.
pub async fn transcript(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    format: TranscriptFormat,
) -> Result<Download> {
    let user_id = caller.id();
    let actor = &caller.actor();
    let detail = crate::app::records::detail(&services.store, caller, record_id).await?;
    let project = services
        .store
        .get_project(user_id, detail.record.project_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    let (record, utterances) = (&detail.record, &detail.utterances);
    if utterances.is_empty() {
        return Err(Error::conflict(
            "The record has no transcript to export yet: wait until it is processed.",
        ));
    }
    if matches!(format, TranscriptFormat::Vtt | TranscriptFormat::Srt) && !transcript::has_times(utterances) {
        return Err(Error::conflict(
            "The transcript has no times, so it cannot be subtitles: export it as docx or txt.",
        ));
    }
    let (bytes, content_type) = match format {
        TranscriptFormat::Txt => (transcript::txt(utterances).into_bytes(), "text/plain; charset=utf-8"),
        TranscriptFormat::Vtt => (
            transcript::vtt(record, utterances).into_bytes(),
            "text/vtt; charset=utf-8",
        ),
        TranscriptFormat::Srt => (
            transcript::srt(utterances).into_bytes(),
            "application/x-subrip; charset=utf-8",
        ),
        TranscriptFormat::Docx => {
            let public_url = services.settings.server.public_url.trim_end_matches('/').to_owned();
            let mut byline = vec![project.name.clone()];
            let mut facts = vec![record.created_at.format("%-d %B %Y").to_string()];
            if let Some(seconds) = record.duration_seconds {
                facts.push(transcript::clock((seconds * 1000.0) as i64));
            }
            facts.push(format!("{} words", record.word_count));
            byline.push(facts.join(" · "));
            let document = transcript::document(record, utterances, byline, |utterance| {
                format!(
                    "{public_url}{}",
                    crate::domain::search::moment_path(record.id, utterance)
                )
            });
            (written(document, docx::write).await?, DOCX)
        }
    };
    audit_export(
        services,
        actor,
        project.workspace_id,
        ("record", record.id),
        format.as_str(),
    )
    .await?;
    Ok(Download {
        filename: format!("{}.{}", file_stem(&record.name), format.as_str()),
        content_type,
        bytes,
    })
}
