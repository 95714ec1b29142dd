//! Projects: the list of the current workspace (by status, searchable), making one, a
//! project's page with its records, changing and deleting it.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::{Button, ConfirmDelete, ProjectNav, Shell};
use crate::app::projects;
use crate::app::projects::ProjectChanges;
use crate::domain::patch::Patch;
use crate::domain::preset::{Preset, Prompt};
use crate::domain::project::{NewProject, Project, ProjectStatus};
use crate::domain::record::Record;
use crate::domain::report::Report;
use crate::domain::workspace::Need;
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::services::Services;

struct Tab {
    label: &'static str,
    href: String,
    count: usize,
    current: bool,
}

#[derive(Template)]
#[template(path = "projects.html")]
struct ProjectsPage {
    shell: Shell,
    workspace_name: String,
    workspace_id: Uuid,
    tabs: Vec<Tab>,
    status: String,
    query: String,
    projects: Vec<Project>,
    can_write: bool,
    csrf: String,
}

#[derive(Deserialize)]
struct ListQuery {
    status: Option<String>,
    q: Option<String>,
}

async fn list(State(services): State<Services>, visitor: Visitor, Query(query): Query<ListQuery>) -> PageResult {
    let all: Vec<Project> = crate::app::projects::list(&services, &visitor.caller)
        .await?
        .into_iter()
        .filter(|project| project.workspace_id == visitor.current.id)
        .collect();
    let wanted = query.status.as_deref().and_then(ProjectStatus::parse);
    let needle = query.q.clone().unwrap_or_default();
    let lowered = needle.trim().to_lowercase();
    let matching = |project: &&Project| lowered.is_empty() || project.name.to_lowercase().contains(&lowered);
    let q = if needle.is_empty() {
        String::new()
    } else {
        format!(
            "&q={}",
            url::form_urlencoded::byte_serialize(needle.as_bytes()).collect::<String>()
        )
    };
    let mut tabs = vec![Tab {
        label: "All",
        href: format!("/?status={q}"),
        count: all.iter().filter(matching).count(),
        current: wanted.is_none(),
    }];
    for status in [ProjectStatus::New, ProjectStatus::Opened, ProjectStatus::Closed] {
        tabs.push(Tab {
            label: status.as_str(),
            href: format!("/?status={}{q}", status.as_str()),
            count: all.iter().filter(matching).filter(|p| p.status == status).count(),
            current: wanted == Some(status),
        });
    }
    let projects = all
        .iter()
        .filter(matching)
        .filter(|p| wanted.is_none_or(|status| p.status == status))
        .cloned()
        .collect();
    let html = ProjectsPage {
        shell: Shell::of(&visitor),
        workspace_name: visitor.current.name.clone(),
        workspace_id: visitor.current.id,
        tabs,
        status: wanted.map(|s| s.as_str().to_owned()).unwrap_or_default(),
        query: needle,
        projects,
        can_write: visitor.can_write(),
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

#[derive(Deserialize)]
struct ProjectForm {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    research_goals: String,
    #[serde(default)]
    interview_guide: String,
    status: Option<String>,
}

async fn create(State(services): State<Services>, Change(visitor, form): Change<ProjectForm>) -> PageResult {
    let new = NewProject {
        name: form.name.trim().to_owned(),
        description: form.description,
        research_goals: form.research_goals,
        interview_guide: form.interview_guide,
    };
    if new.name.is_empty() {
        return Err(
            crate::error::Error::validation(vec![crate::error::ValidationIssue::blank("name", &form.name)]).into(),
        );
    }
    let project = projects::create(&services, &visitor.caller, Some(visitor.current.id), new).await?;
    Ok(Redirect::to(&format!("/p/{}", project.id)).into_response())
}

#[derive(Template)]
#[template(path = "project.html")]
struct ProjectPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    records: Vec<Record>,
    reports: Vec<Report>,
    presets: Vec<Preset>,
    prompts: Vec<Prompt>,
    languages: &'static [(&'static str, &'static str)],
    can_write: bool,
    csrf: String,
    /// The page of the records table shown, from 1.
    records_page: usize,
}

/// Rows of the records table per page: a project of hundreds of interviews stays a light
/// page, and the pages are plain links.
const RECORDS_PER_PAGE: usize = 50;

#[derive(Deserialize)]
struct OverviewQuery {
    /// The page of the records table, from 1.
    records: Option<usize>,
}

/// The languages a report can be written in, as the generate form offers them.
const LANGUAGES: &[(&str, &str)] = &[
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("it", "Italiano"),
    ("nl", "Nederlands"),
    ("pt", "Português"),
    ("sv", "Svenska"),
    ("pl", "Polski"),
];

impl ProjectPage {
    /// The records the table shows on this page.
    fn shown_records(&self) -> &[Record] {
        let start = (self.records_page - 1) * RECORDS_PER_PAGE;
        let end = (start + RECORDS_PER_PAGE).min(self.records.len());
        self.records.get(start..end).unwrap_or_default()
    }

    fn records_pages(&self) -> usize {
        self.records.len().div_ceil(RECORDS_PER_PAGE).max(1)
    }

    /// A duration as m:ss.
    fn clock(&self, seconds: &f64) -> String {
        let seconds = seconds.max(0.0).round() as u64;
        format!("{}:{:02}", seconds / 60, seconds % 60)
    }
}

async fn show(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<OverviewQuery>,
) -> PageResult {
    let crate::app::projects::Overview {
        project,
        may_write: can_write,
        records,
        reports,
        presets,
        prompts,
    } = crate::app::projects::overview(&services, &visitor.caller, project_id).await?;
    let html = ProjectPage {
        shell: Shell::of(&visitor),
        nav: ProjectNav::new(project_id, "overview"),
        project,
        records,
        reports,
        presets,
        prompts,
        languages: LANGUAGES,
        can_write,
        csrf: visitor.csrf.clone(),
        records_page: 1,
    };
    let html = ProjectPage {
        records_page: query.records.unwrap_or(1).clamp(1, html.records_pages()),
        ..html
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

async fn update(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<ProjectForm>,
) -> PageResult {
    let name = form.name.trim();
    let changes = ProjectChanges {
        name: if name.is_empty() {
            Patch::Missing
        } else {
            Patch::Value(name.to_owned())
        },
        description: Patch::Value(form.description),
        status: form
            .status
            .as_deref()
            .and_then(ProjectStatus::parse)
            .map_or(Patch::Missing, Patch::Value),
        research_goals: Patch::Value(form.research_goals),
        interview_guide: Patch::Value(form.interview_guide),
    };
    projects::update(&services, &visitor.caller, project_id, changes).await?;
    Ok(Redirect::to(&format!("/p/{project_id}")).into_response())
}

async fn confirm_delete(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
) -> PageResult {
    let (_, project) = super::project_for(&services, &visitor, project_id, Need::Write).await?;
    let consequence = format!(
        "Its {} records (with their recordings), {} reports and interview links are deleted with it. This cannot be undone.",
        project.records_count, project.total_reports_count
    );
    Ok(ConfirmDelete::page(
        &visitor,
        project.name,
        consequence,
        format!("/p/{project_id}/delete"),
        format!("/p/{project_id}"),
    ))
}

async fn delete(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    projects::delete(&services, &visitor.caller, project_id).await?;
    Ok(Redirect::to("/").into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/", get(list))
        .route("/p", post(create))
        .route("/p/{project_id}", get(show).post(update))
        .route("/p/{project_id}/delete", get(confirm_delete).post(delete))
}
