//! The MCP resources: every record's transcript (`insight://records/{record_id}`, plain
//! text as the TXT export writes it) and every report (`insight://reports/{project_id}/
//! {report_id}`, its Markdown), of the projects the caller can see.

use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use uuid::Uuid;

use super::Caller;
use crate::domain::paging::PageRequest;
use crate::error::Error;
use crate::services::Services;

const RECORDS: &str = "insight://records/";
const REPORTS: &str = "insight://reports/";

pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{RECORDS}{{record_id}}"), "transcript")
            .with_title("A record's transcript")
            .with_description("One utterance a line: [start - end] Speaker: words")
            .with_mime_type("text/plain"),
        ResourceTemplate::new(format!("{REPORTS}{{project_id}}/{{report_id}}"), "report")
            .with_title("A report")
            .with_description("The report's Markdown; findings cite [record name, mm:ss]")
            .with_mime_type("text/markdown"),
    ])
}

/// Every record and report of the caller's projects, project by project.
pub async fn list(
    services: &Services,
    caller: Caller,
    _request: Option<PaginatedRequestParams>,
) -> Result<ListResourcesResult, ErrorData> {
    let mut resources = Vec::new();
    for project in crate::app::projects::list(services, &caller).await.map_err(internal)? {
        let records = crate::app::records::list(services, &caller, project.id, &PageRequest::everything())
            .await
            .map_err(internal)?;
        resources.extend(records.items.into_iter().map(|record| {
            Resource::new(format!("{RECORDS}{}", record.id), record.name.clone())
                .with_description(format!("Transcript in the project {}", project.name))
                .with_mime_type("text/plain")
        }));
        let reports = crate::app::reports::list(services, &caller, project.id, false, &PageRequest::everything())
            .await
            .map_err(internal)?;
        resources.extend(reports.items.into_iter().map(|report| {
            Resource::new(format!("{REPORTS}{}/{}", project.id, report.id), report.title.clone())
                .with_description(format!(
                    "Report in the project {} ({})",
                    project.name,
                    report.status.as_str()
                ))
                .with_mime_type("text/markdown")
        }));
    }
    Ok(ListResourcesResult::with_all_items(resources))
}

/// One resource's text; an address that names nothing the caller can read is not found.
pub async fn read(services: &Services, caller: Caller, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let not_found = || ErrorData::resource_not_found(format!("No such resource: {uri}"), None);
    let ids = |rest: &str| -> Option<Vec<Uuid>> { rest.split('/').map(|part| Uuid::parse_str(part).ok()).collect() };
    if let Some(rest) = uri.strip_prefix(RECORDS) {
        let Some(&[record_id]) = ids(rest).as_deref() else {
            return Err(not_found());
        };
        let detail = match crate::app::records::detail(&services.store, &caller, record_id).await {
            Ok(detail) => detail,
            Err(Error::NotFound(_)) => return Err(not_found()),
            Err(error) => return Err(internal(error)),
        };
        let text = crate::app::exports::transcript::txt(&detail.utterances);
        return Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]));
    }
    if let Some(rest) = uri.strip_prefix(REPORTS) {
        let Some(&[project_id, report_id]) = ids(rest).as_deref() else {
            return Err(not_found());
        };
        // A deleted report is not read as a document until it is restored.
        let report = match crate::app::reports::document(services, &caller, project_id, report_id).await {
            Ok(report) => report,
            Err(Error::NotFound(_)) => return Err(not_found()),
            Err(error) => return Err(internal(error)),
        };
        let contents = ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some("text/markdown".into()),
            text: report.content.unwrap_or_default(),
            meta: None,
        };
        return Ok(ReadResourceResult::new(vec![contents]));
    }
    Err(not_found())
}

fn internal(error: impl Into<Error>) -> ErrorData {
    if let Error::Internal(error) = error.into() {
        tracing::error!(error = ?error, "internal error in an MCP resource");
    }
    ErrorData::internal_error("Internal server error", None)
}
