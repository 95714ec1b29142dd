//! Projects: making, changing and deleting one, for every door alike.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::app::quota::Counted;
use crate::domain::paging::PageRequest;
use crate::domain::preset::{Preset, Prompt};
use crate::domain::project::{NewProject, Project};
use crate::domain::record::Record;
use crate::domain::report::Report;
use crate::domain::workspace::{Need, Role};
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::Target;

/// A change to a project's fields, as every door sends it.
pub use crate::store::ProjectChanges;

/// Makes a project in the workspace named (the creator's personal one by default).
pub async fn create(
    services: &Services,
    caller: &Caller,
    workspace: Option<Uuid>,
    project: NewProject,
) -> Result<Project> {
    let user_id = caller.id();
    crate::error::check_lengths(&[
        ("name", &project.name, 200),
        ("description", &project.description, 10_000),
        ("research_goals", &project.research_goals, 50_000),
        ("interview_guide", &project.interview_guide, 50_000),
    ])?;
    let workspace_id = caller.workspace(&services.store, workspace, Need::Write).await?;
    services.check_quota(Counted::Projects { owner_id: user_id }).await?;
    Ok(services.store.create_project(user_id, workspace_id, project).await?)
}

/// A change's text, or nothing when the field is left as it is.
fn text(patch: &crate::domain::patch::Patch<String>) -> &str {
    patch.as_value().map_or("", String::as_str)
}

pub async fn update(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    changes: ProjectChanges,
) -> Result<Project> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    crate::error::check_lengths(&[
        ("name", text(&changes.name), 200),
        ("description", text(&changes.description), 10_000),
        ("research_goals", text(&changes.research_goals), 50_000),
        ("interview_guide", text(&changes.interview_guide), 50_000),
    ])?;
    let project = services.store.update_project(user_id, project_id, changes).await?;
    project.ok_or_else(|| Error::not_found("Project"))
}

/// Deletes a project with its records, reports, rooms and recordings; an audit entry
/// says who did.
pub async fn delete(services: &Services, caller: &Caller, project_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    let actor = &caller.actor();
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    let project = services.store.get_project(user_id, project_id).await?;
    let recordings = services.store.project_media_paths(user_id, project_id).await?;
    if !services.store.delete_project(user_id, project_id).await? {
        return Err(Error::not_found("Project"));
    }
    for path in recordings {
        services.files.delete(&path).await;
    }
    if let Some(project) = project {
        audit::record(
            &services.store,
            audit::Entry {
                workspace_id: Some(project.workspace_id),
                actor: actor.clone(),
                action: "project.deleted",
                target: Some(("project", project_id.to_string())),
                detail: serde_json::json!({ "name": project.name }),
            },
        )
        .await?;
    }
    Ok(())
}

/// The projects of every workspace the user belongs to, newest first.
pub async fn list(services: &Services, caller: &Caller) -> Result<Vec<Project>> {
    let user_id = caller.id();
    Ok(services.store.list_projects(user_id).await?)
}

/// One project, for those who may read it; its owner opening a `New` project makes it
/// `Opened`. Answers it with the caller's role on it.
pub async fn open(services: &Services, caller: &Caller, project_id: Uuid) -> Result<(Project, Role)> {
    let user_id = caller.id();
    let role = caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    let project = services
        .store
        .open_project(user_id, project_id)
        .await?
        .ok_or_else(|| Error::not_found("Project"))?;
    Ok((project, role))
}

/// A project's page: the project, its records and reports (archived ones too), and for
/// those who may write, the presets and prompts a new report can be written from.
pub struct Overview {
    pub project: Project,
    pub may_write: bool,
    pub records: Vec<Record>,
    pub reports: Vec<Report>,
    pub presets: Vec<Preset>,
    pub prompts: Vec<Prompt>,
}

/// The project as its page shows it (see [`Overview`]).
pub async fn overview(services: &Services, caller: &Caller, project_id: Uuid) -> Result<Overview> {
    let user_id = caller.id();
    let (project, role) = open(services, caller, project_id).await?;
    let store = &services.store;
    let may_write = role.allows(Need::Write);
    let (created, library) = (PageRequest::everything(), PageRequest::everything());
    let (records, reports) = tokio::try_join!(
        store.list_records(user_id, project_id, &created),
        store.list_reports(user_id, project_id, true, &created),
    )?;
    let (presets, prompts) = if may_write {
        tokio::try_join!(
            store.list_presets(user_id, &library),
            store.list_prompts(user_id, &library),
        )
        .map(|(presets, prompts)| (presets.items, prompts.items))?
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(Overview {
        project,
        may_write,
        records: records.items,
        reports: reports.items,
        presets,
        prompts,
    })
}

/// One project, for those whose role on it allows `need` (unseen is a 404, seen but not
/// allowed a 403), with that role.
pub async fn get(services: &Services, caller: &Caller, project_id: Uuid, need: Need) -> Result<(Role, Project)> {
    let user_id = caller.id();
    let role = caller
        .require(&services.store, Target::Project(project_id), need)
        .await?;
    let project = services
        .store
        .get_project(user_id, project_id)
        .await?
        .ok_or_else(|| Error::not_found("Project"))?;
    Ok((role, project))
}

/// The currency of the project's workspace, in which its costs are shown.
pub async fn currency(services: &Services, project_id: Uuid) -> Result<String> {
    Ok(services.store.project_settings(project_id).await?.1.currency)
}
