//! What wrote a report or a persona, as the console shows it under the text: the engine and
//! model, the instructions' version (and the instructions themselves, folded), the records
//! read, the tokens, the cost and the time; and a report's versions (its generations and a
//! person's edits), each compared with the one before.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use uuid::Uuid;

use super::Shell;
use crate::domain::report::VersionKind;
use crate::domain::usage::{PromptSent, Provenance};
use crate::doors::console::session::Visitor;
use crate::doors::console::{PageResult, page};
use crate::services::Services;

/// A [`Provenance`] in words.
pub struct ProvenanceView {
    pub written_by: String,
    pub prompt_version: String,
    pub records: usize,
    pub tokens: String,
    pub cost: String,
    pub duration: String,
    /// A report's sections: title, tokens, time.
    pub sections: Vec<(String, String, String)>,
    pub prompts: Vec<PromptSent>,
}

impl ProvenanceView {
    pub fn new(provenance: &Provenance, currency: &str) -> Self {
        Self {
            written_by: match &provenance.model {
                Some(model) => format!("the model {model}"),
                None => "the offline engine (no model, nothing sent anywhere)".to_owned(),
            },
            prompt_version: provenance.prompt_version.clone(),
            records: provenance.records.len(),
            tokens: tokens(&provenance.usage),
            cost: format!("{:.4} {currency}", provenance.cost),
            duration: seconds(provenance.duration_ms),
            sections: provenance
                .sections
                .iter()
                .map(|s| (s.title.clone(), tokens(&s.usage), seconds(s.duration_ms)))
                .collect(),
            prompts: provenance.prompts.clone(),
        }
    }
}

fn tokens(usage: &crate::domain::report::TokenUsage) -> String {
    format!("{} in, {} out", usage.prompt_tokens, usage.completion_tokens)
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The currency of the project's workspace, for costs.
pub async fn currency(services: &Services, project_id: Uuid) -> crate::error::Result<String> {
    crate::app::projects::currency(services, project_id).await
}

/// The lines of a unified diff from `before` to `after`, each with its kind: `add`, `del`,
/// `hunk` (a hunk's header) or `same`.
fn changes(before: &str, after: &str) -> Vec<(&'static str, String)> {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut lines = Vec::new();
    for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
        lines.push(("hunk", hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let kind = match change.tag() {
                similar::ChangeTag::Insert => "add",
                similar::ChangeTag::Delete => "del",
                similar::ChangeTag::Equal => "same",
            };
            lines.push((kind, change.value().trim_end_matches('\n').to_owned()));
        }
    }
    lines
}

/// One version of a report as the versions page shows it.
struct VersionView {
    version: i64,
    /// "Generated", or who edited it.
    made_by: String,
    generated_at: String,
    provenance: Option<ProvenanceView>,
    /// The version before, when there is one.
    before: Option<i64>,
    /// The diff's lines with their kind: `add`, `del`, `hunk` or `same`.
    changes: Vec<(&'static str, String)>,
}

#[derive(Template)]
#[template(path = "report_versions.html")]
struct VersionsPage {
    shell: Shell,
    project_id: Uuid,
    report_id: Uuid,
    title: String,
    project_name: String,
    versions: Vec<VersionView>,
}

/// A report's versions, newest first, each with what wrote it (a generation's provenance,
/// an edit's author) and what changed from the one before.
pub async fn versions(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let report = crate::app::reports::document(&services, &visitor.caller, project_id, report_id).await?;
    let currency = currency(&services, project_id).await?;
    let listed = crate::app::reports::versions(&services.store, &visitor.caller, project_id, report_id).await?;
    let versions = listed
        .iter()
        .enumerate()
        .map(|(n, version)| {
            let before = listed.get(n + 1);
            VersionView {
                version: version.version,
                made_by: match (version.kind, &version.author_email) {
                    (VersionKind::Generation, _) => "Generated".to_owned(),
                    (VersionKind::Edit, Some(email)) => format!("Edited by {email}"),
                    (VersionKind::Edit, None) => "Edited by hand".to_owned(),
                },
                generated_at: version.generated_at.format("%Y-%m-%d %H:%M UTC").to_string(),
                provenance: version.provenance.as_ref().map(|p| ProvenanceView::new(p, &currency)),
                before: before.map(|before| before.version),
                changes: before.map_or_else(Vec::new, |before| changes(&before.content, &version.content)),
            }
        })
        .collect();
    let html = VersionsPage {
        shell: Shell::of(&visitor),
        project_id,
        report_id,
        title: report.title.clone(),
        project_name: report.project_name.clone().unwrap_or_default(),
        versions,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}
