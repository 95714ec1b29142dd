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

use crate::accounts::access;
use crate::accounts::audit::{self, Actor};
use crate::domain::highlight::{Highlight, HighlightStatus};
use crate::domain::page::PageRequest;
use crate::domain::project::Project;
use crate::domain::workspace::Need;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::store::{HighlightFilter, HighlightOrder, Target};

pub use qdpx_import::import;
pub(crate) use qdpx_import::invalid_file;

/// A file to download.
pub struct Download {
    pub filename: String,
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

/// A name (a project's, a report's) as a file name: ASCII letters and digits joined by dashes, so the
/// `Content-Disposition` header needs no encoding.
pub fn file_stem(name: &str) -> String {
    let mut stem = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.is_empty() && !stem.ends_with('-') {
            stem.push('-');
        }
        if stem.len() >= 60 {
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

/// The project, for a member who may read it.
async fn readable_project(services: &Services, user_id: Uuid, project_id: Uuid) -> ApiResult<Project> {
    access::require(&services.store, user_id, Target::Project(project_id), Need::Read).await?;
    services
        .store
        .get_project(user_id, project_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Project"))
}

/// The project's highlights in transcript order, without suggestions nobody accepted.
async fn project_highlights(services: &Services, user_id: Uuid, project_id: Uuid) -> ApiResult<Vec<Highlight>> {
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
) -> ApiResult<()> {
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
pub async fn highlights_csv(
    services: &Services,
    actor: &Actor,
    user_id: Uuid,
    project_id: Uuid,
) -> ApiResult<Download> {
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
pub async fn project_qdpx(services: &Services, actor: &Actor, user_id: Uuid, project_id: Uuid) -> ApiResult<Download> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_plain_ascii() {
        assert_eq!(file_stem("Invoices: Q3 / Ça coûte"), "invoices-q3-a-co-te");
        assert_eq!(file_stem("Études"), "tudes");
        assert_eq!(file_stem("日本"), "project");
        assert!(file_stem(&"a b ".repeat(100)).len() <= 60);
    }
}
