//! Reports: generating one from the project page, reading it with its citations as
//! links to the moment they quote, following its generation live, editing its Markdown
//! with a preview, sharing it, and the public page of a shared one.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::{Button, ConfirmDelete, Shell};
use crate::app::reports;
use crate::app::reports::ReportChanges;
use crate::domain::patch::Patch;
use crate::domain::report::{ReasoningMode, Report, ReportCreateFields, ReportStatus};
use crate::doors::console::markdown::{CitationIndex, render, without_title};
use crate::doors::console::session::{Change, Fields, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::{Error, Result};
use crate::services::Services;

/// The generate form: repeated fields (`prompts_ids`, `records_ids`) are read in full,
/// which a plain form decoder would not.
async fn generate(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<Fields>,
) -> PageResult {
    let mut fields = ReportCreateFields {
        title: String::new(),
        prompts_ids: None,
        preset_id: None,
        records_ids: None,
        category: None,
        context: None,
        context_expand: None,
        report_language: None,
        reasoning_mode: None,
    };
    let ids = |value: &str, what: &str| {
        value
            .parse::<Uuid>()
            .map_err(|_| Error::conflict(format!("The form sent {what} that is not an id; reload the page")))
    };
    for (key, value) in &form {
        let value = value.trim();
        match key.as_str() {
            "title" => fields.title = value.to_owned(),
            "preset_id" if !value.is_empty() => fields.preset_id = Some(ids(value, "a preset")?),
            "prompts_ids" => fields.prompts_ids.get_or_insert_default().push(ids(value, "a prompt")?),
            "records_ids" => fields.records_ids.get_or_insert_default().push(ids(value, "a record")?),
            "report_language" if !value.is_empty() => fields.report_language = Some(value.to_owned()),
            "reasoning_mode" => fields.reasoning_mode = ReasoningMode::parse(value),
            "context" if !value.is_empty() => fields.context = Some(value.to_owned()),
            _ => {}
        }
    }
    let report = reports::create(&services, &visitor.caller, project_id, fields).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/reports/{}", report.id)).into_response())
}

/// The report's Markdown as HTML, its citations linked to the records it was made from.
async fn rendered(services: &Services, report: &Report, markdown: &str) -> Result<String> {
    let index = crate::app::exports::citation_index(services, report).await?;
    Ok(render(without_title(markdown, &report.title), &index))
}

#[derive(Template)]
#[template(path = "report.html")]
struct ReportPage {
    shell: Shell,
    report: Report,
    project_name: String,
    html: String,
    busy: bool,
    progress: i64,
    error: Option<String>,
    public_link: String,
    can_write: bool,
    csrf: String,
    provenance: Option<super::provenance::ProvenanceView>,
    /// Its text was edited by hand since its last generation: Regenerate asks first.
    edited: bool,
}

async fn show(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let reports::Reading {
        report,
        generation,
        edited,
        may_write,
    } = reports::reading(&services, &visitor.caller, project_id, report_id).await?;
    let busy = matches!(report.status, ReportStatus::Queued | ReportStatus::Generating);
    let html = rendered(&services, &report, report.content.as_deref().unwrap_or_default()).await?;
    let provenance = match &generation.provenance {
        Some(provenance) => Some(super::provenance::ProvenanceView::new(
            provenance,
            &super::provenance::currency(&services, project_id).await?,
        )),
        None => None,
    };
    let page_html = ReportPage {
        shell: Shell::of(&visitor),
        project_name: report.project_name.clone().unwrap_or_default(),
        html,
        busy,
        progress: (generation.progress * 100.0).round() as i64,
        error: generation.error.filter(|_| report.status == ReportStatus::Failed),
        public_link: format!(
            "{}/share/r/{project_id}/{report_id}",
            services.settings.server.public_url.trim_end_matches('/')
        ),
        can_write: may_write,
        csrf: visitor.csrf.clone(),
        provenance,
        edited,
        report,
    };
    Ok(page(StatusCode::OK, super::render(&page_html)))
}

#[derive(Template)]
#[template(path = "report_regenerate.html")]
struct RegeneratePage {
    shell: Shell,
    report: Report,
    edited: bool,
    csrf: String,
}

/// The question before regenerating: what happens to the text, and for an edited report
/// that its edits stay a version.
async fn regenerate_question(services: &Services, visitor: &Visitor, report: Report) -> PageResult {
    let html = RegeneratePage {
        shell: Shell::of(visitor),
        edited: reports::edited(services, &visitor.caller, report.project_id, report.id).await?,
        csrf: visitor.csrf.clone(),
        report,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

/// Where the report page's "Regenerate…" leads when its text was edited by hand.
async fn confirm_regenerate(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let report = writable_report(&services, &visitor, project_id, report_id).await?;
    regenerate_question(&services, &visitor, report).await
}

#[derive(Deserialize)]
struct RegenerateForm {
    /// Sent by the question's form: the visitor has been told what happens to his edits.
    confirmed: Option<String>,
}

/// Regenerates at once a report as generated; an edited one only once the visitor has
/// answered the question (a form from a page that did not ask, opened before the edit,
/// is asked here), though its edits are versions either way.
async fn regenerate(
    State(services): State<Services>,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
    Change(visitor, form): Change<RegenerateForm>,
) -> PageResult {
    if form.confirmed.is_none() {
        let report = writable_report(&services, &visitor, project_id, report_id).await?;
        if reports::edited(&services, &visitor.caller, project_id, report_id).await? {
            return regenerate_question(&services, &visitor, report).await;
        }
    }
    reports::regenerate(&services, &visitor.caller, project_id, report_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/reports/{report_id}")).into_response())
}

async fn cancel(
    State(services): State<Services>,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    reports::cancel(&services.store, &visitor.caller, project_id, report_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/reports/{report_id}")).into_response())
}

#[derive(Deserialize)]
struct FlagForm {
    is_public: Option<bool>,
    is_archived: Option<bool>,
    is_deleted: Option<bool>,
}

async fn flag(
    State(services): State<Services>,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
    Change(visitor, form): Change<FlagForm>,
) -> PageResult {
    let changes = ReportChanges {
        is_public: form.is_public.map_or(Patch::Missing, Patch::Value),
        is_archived: form.is_archived.map_or(Patch::Missing, Patch::Value),
        is_deleted: form.is_deleted.map_or(Patch::Missing, Patch::Value),
        ..ReportChanges::default()
    };
    save(&services, &visitor, project_id, report_id, changes).await
}

/// Saves a change to the report and shows it.
async fn save(
    services: &Services,
    visitor: &Visitor,
    project_id: Uuid,
    report_id: Uuid,
    changes: ReportChanges,
) -> PageResult {
    reports::update(services, &visitor.caller, project_id, report_id, changes).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/reports/{report_id}")).into_response())
}

#[derive(Template)]
#[template(path = "report_edit.html")]
struct EditPage {
    shell: Shell,
    report: Report,
    project_name: String,
    title: String,
    content: String,
    preview: Option<String>,
    csrf: String,
}

/// A report the visitor may change (404 unseen, 403 for a viewer), deleted ones too.
async fn writable_report(services: &Services, visitor: &Visitor, project_id: Uuid, report_id: Uuid) -> Result<Report> {
    reports::writable(services, &visitor.caller, project_id, report_id).await
}

/// The editor, with the title and Markdown given and, after "Preview", their rendering.
fn edit_page(visitor: &Visitor, report: Report, title: String, content: String, preview: Option<String>) -> Response {
    let html = EditPage {
        shell: Shell::of(visitor),
        project_name: report.project_name.clone().unwrap_or_default(),
        title,
        content,
        preview,
        csrf: visitor.csrf.clone(),
        report,
    };
    page(StatusCode::OK, super::render(&html))
}

async fn edit_form(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let report = writable_report(&services, &visitor, project_id, report_id).await?;
    let (title, content) = (report.title.clone(), report.content.clone().unwrap_or_default());
    Ok(edit_page(&visitor, report, title, content, None))
}

#[derive(Deserialize)]
struct EditForm {
    title: String,
    content: String,
    action: Option<String>,
}

async fn edit(
    State(services): State<Services>,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
    Change(visitor, form): Change<EditForm>,
) -> PageResult {
    if form.action.as_deref() == Some("preview") {
        let report = writable_report(&services, &visitor, project_id, report_id).await?;
        let preview = rendered(&services, &report, &form.content).await?;
        return Ok(edit_page(&visitor, report, form.title, form.content, Some(preview)));
    }
    let changes = ReportChanges {
        title: Patch::Value(form.title.trim().to_owned()),
        content: Patch::Value(form.content),
        ..ReportChanges::default()
    };
    save(&services, &visitor, project_id, report_id, changes).await
}

async fn confirm_delete(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let report = writable_report(&services, &visitor, project_id, report_id).await?;
    Ok(ConfirmDelete::page(
        &visitor,
        report.title,
        "The report leaves the project's list and its public link stops working.".to_owned(),
        format!("/p/{project_id}/reports/{report_id}/delete"),
        format!("/p/{project_id}/reports/{report_id}"),
    ))
}

async fn delete(
    State(services): State<Services>,
    Path((project_id, report_id)): Path<(Uuid, Uuid)>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    reports::delete(&services, &visitor.caller, project_id, report_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}")).into_response())
}

#[derive(Template)]
#[template(path = "public_report.html")]
struct PublicPage {
    shell: Shell,
    title: String,
    html: String,
}

/// A shared report for anyone with the link: no sign-in, no owner details, and its
/// citations as plain text (their transcripts are not shared).
async fn public(State(services): State<Services>, Path((project_id, report_id)): Path<(Uuid, Uuid)>) -> PageResult {
    let report = reports::shared(&services, project_id, report_id).await?;
    let html = PublicPage {
        shell: Shell::signed_out(),
        html: render(
            without_title(report.content.as_deref().unwrap_or_default(), &report.title),
            &CitationIndex::default(),
        ),
        title: report.title,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/p/{project_id}/reports", post(generate))
        .route("/p/{project_id}/reports/{report_id}", get(show))
        .route(
            "/p/{project_id}/reports/{report_id}/regenerate",
            get(confirm_regenerate).post(regenerate),
        )
        .route("/p/{project_id}/reports/{report_id}/cancel", post(cancel))
        .route(
            "/p/{project_id}/reports/{report_id}/versions",
            get(super::provenance::versions),
        )
        .route("/p/{project_id}/reports/{report_id}/share", post(flag))
        .route("/p/{project_id}/reports/{report_id}/archive", post(flag))
        .route("/p/{project_id}/reports/{report_id}/restore", post(flag))
        .route("/p/{project_id}/reports/{report_id}/edit", get(edit_form).post(edit))
        .route(
            "/p/{project_id}/reports/{report_id}/delete",
            get(confirm_delete).post(delete),
        )
        .route("/share/r/{project_id}/{report_id}", get(public))
}
