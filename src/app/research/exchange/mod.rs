//! Exchange with the tools researchers already use: a project's highlights as CSV for
//! spreadsheets, and whole projects as REFI-QDA (`.qdpx`), the open standard QualCoder,
//! MAXQDA, ATLAS.ti and NVivo read and write, both ways. An export is read access to
//! the project and leaves an `export.created` line in the workspace's audit log; an
//! import makes a new project and needs write access to the workspace.

mod archive;
pub mod csv;
mod qde;
mod qdpx_export;
mod qdpx_import;
mod text;

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::access;
use crate::app::accounts::audit::{self, Actor};
use crate::domain::highlight::{Highlight, HighlightStatus};
use crate::domain::paging::PageRequest;
use crate::domain::project::Project;
use crate::domain::workspace::Need;
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::{HighlightFilter, HighlightOrder, Target};

pub(crate) use qde::Refusal;
pub(crate) use qdpx_import::invalid_file;
pub use qdpx_import::{import, may_import};

/// The answer to a file refused: 422 when it is not what it claims to be, 413 when it is
/// past a limit (the sentence names the entry and the setting).
pub(crate) fn refused(refusal: Refusal) -> Error {
    match refusal {
        Refusal::Invalid(sentence) => invalid_file(sentence),
        Refusal::TooLarge(sentence) => Error::TooLarge(sentence),
    }
}

/// Bytes of text an import of an upload of `upload_bytes` may unpack: its size times
/// `INSIGHT_IMPORT_MAX_EXPANSION` (at least 16 MiB, so small projects of repetitive text
/// go in), and never more than `ceiling`.
pub(crate) fn text_budget(settings: &crate::config::Settings, upload_bytes: u64, ceiling: u64) -> u64 {
    upload_bytes
        .saturating_mul(settings.imports.import_max_expansion)
        .max(16 << 20)
        .min(ceiling)
}

/// The limits project.qde is read within.
fn qde_limits(settings: &crate::config::Settings, document_bytes: u64) -> qde::Limits {
    qde::Limits {
        elements: settings.imports.import_max_elements,
        depth: settings.imports.import_max_depth,
        tag_bytes: settings.imports.import_max_attribute_bytes,
        text_bytes: settings.imports.import_max_text_bytes,
        document_bytes,
    }
}

/// A file to download.
pub struct Download {
    pub filename: String,
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

/// A name (a project's, a report's) as a file name: its letters and digits, in lower
/// case, joined by dashes (`Content-Disposition` carries one beyond ASCII encoded).
pub fn file_stem(name: &str) -> String {
    let mut stem = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.is_empty() && !stem.ends_with('-') {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        "project".to_owned()
    } else {
        stem.to_owned()
    }
}

/// The `Content-Disposition` of a download named `filename`: a name beyond ASCII goes in
/// `filename*` (RFC 6266), with its ASCII letters as the name for older clients.
pub fn content_disposition(filename: &str) -> String {
    if filename.is_ascii() {
        return format!("attachment; filename=\"{filename}\"");
    }
    let (stem, extension) = filename.split_once('.').unwrap_or((filename, ""));
    let ascii: String = stem
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let ascii = ascii.trim_matches('-');
    let fallback = match (ascii.is_empty(), extension.is_empty()) {
        (true, true) => "download".to_owned(),
        (true, false) => format!("download.{extension}"),
        (false, true) => ascii.to_owned(),
        (false, false) => format!("{ascii}.{extension}"),
    };
    let encoded = percent_encoding::utf8_percent_encode(filename, percent_encoding::NON_ALPHANUMERIC);
    format!("attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

/// The project, for a member who may read it.
async fn readable_project(services: &Services, user_id: Uuid, project_id: Uuid) -> Result<Project> {
    access::require(&services.store, user_id, Target::Project(project_id), Need::Read).await?;
    services
        .store
        .get_project(user_id, project_id)
        .await?
        .ok_or_else(|| Error::not_found("Project"))
}

/// The project's highlights in transcript order, without suggestions nobody accepted.
async fn project_highlights(services: &Services, user_id: Uuid, project_id: Uuid) -> Result<Vec<Highlight>> {
    let filter = HighlightFilter {
        project_id: Some(project_id),
        ..HighlightFilter::default()
    };
    let page = services
        .store
        .highlights(user_id, &filter, HighlightOrder::Transcript, &PageRequest::everything())
        .await?;
    let mut highlights: Vec<Highlight> = page
        .items
        .into_iter()
        .filter(|highlight| highlight.status != HighlightStatus::Suggested)
        .collect();
    // Records by name, and transcript order within each (the sort keeps it).
    highlights.sort_by(|a, b| (&a.record_name, a.record_id).cmp(&(&b.record_name, b.record_id)));
    Ok(highlights)
}

async fn audit_export(
    services: &Services,
    actor: &Actor,
    project: &Project,
    format: &str,
    highlights: usize,
) -> Result<()> {
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: Some(project.workspace_id),
            actor: actor.clone(),
            action: "export.created",
            target: Some(("project", project.id.to_string())),
            detail: json!({ "format": format, "highlights": highlights }),
        },
    )
    .await
}

/// The project's highlights as CSV (made and accepted ones, detached ones too; not
/// suggestions waiting for a person).
pub async fn highlights_csv(services: &Services, caller: &Caller, project_id: Uuid) -> Result<Download> {
    let user_id = caller.id();
    let actor = &caller.actor();
    let project = readable_project(services, user_id, project_id).await?;
    let highlights = project_highlights(services, user_id, project_id).await?;
    let bytes = csv::write(&highlights, &services.settings.server.public_url)?;
    audit_export(services, actor, &project, "csv", highlights.len()).await?;
    Ok(Download {
        filename: format!("{}-highlights.csv", file_stem(&project.name)),
        content_type: "text/csv; charset=utf-8",
        bytes,
    })
}

/// The project as a REFI-QDA project: the workspace's tags as the codebook, each
/// record's transcript as a text source, its highlights as coded segments.
pub async fn project_qdpx(services: &Services, caller: &Caller, project_id: Uuid) -> Result<Download> {
    let user_id = caller.id();
    let actor = &caller.actor();
    let project = readable_project(services, user_id, project_id).await?;
    let highlights = project_highlights(services, user_id, project_id).await?;
    let user_email = actor.email.clone().unwrap_or_default();
    let (bytes, exported) = qdpx_export::export(services, user_id, &user_email, &project, &highlights).await?;
    audit_export(services, actor, &project, "qdpx", exported).await?;
    Ok(Download {
        filename: format!("{}.qdpx", file_stem(&project.name)),
        content_type: "application/zip",
        bytes,
    })
}

/// `text` with the control characters XML 1.0 cannot hold (all but tab and line
/// breaks) made spaces: Word and QDA programs refuse a file holding one.
pub fn xml_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_keep_their_letters_and_are_encoded_beyond_ascii() {
        assert_eq!(
            content_disposition("billing-pains.docx"),
            "attachment; filename=\"billing-pains.docx\""
        );
        assert_eq!(
            content_disposition("ça-coûte.insight.zip"),
            "attachment; filename=\"a-cote.insight.zip\"; filename*=UTF-8''%C3%A7a%2Dco%C3%BBte%2Einsight%2Ezip"
        );
        assert_eq!(
            content_disposition("日本.pdf"),
            "attachment; filename=\"download.pdf\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%2Epdf"
        );
        assert_eq!(file_stem("Invoices: Q3 / Ça coûte"), "invoices-q3-ça-coûte");
        assert_eq!(file_stem("Études"), "études");
        assert_eq!(file_stem("日本の調査"), "日本の調査");
        assert_eq!(file_stem("\"; /?"), "project");
        assert!(file_stem(&"a b ".repeat(100)).chars().count() <= 60);
    }
}
