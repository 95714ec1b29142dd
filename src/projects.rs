//! Projects: making, changing and deleting one, for every door alike.

use uuid::Uuid;

use crate::accounts::access;
use crate::accounts::audit::{self, Actor};
use crate::domain::project::{NewProject, Project};
use crate::domain::workspace::Need;
use crate::error::{ApiError, ApiResult};
use crate::quota::Counted;
use crate::services::Services;
use crate::store::{ProjectChanges, Target};

/// Makes a project in the workspace named (the creator's personal one by default).
pub async fn create(
    services: &Services,
    user_id: Uuid,
    workspace: Option<Uuid>,
    project: NewProject,
) -> ApiResult<Project> {
    crate::error::check_lengths(&[
        ("name", &project.name, 200),
        ("description", &project.description, 10_000),
        ("research_goals", &project.research_goals, 50_000),
        ("interview_guide", &project.interview_guide, 50_000),
    ])?;
    let workspace_id = access::target_workspace(&services.store, user_id, workspace, Need::Write).await?;
    services.check_quota(Counted::Projects { owner_id: user_id }).await?;
    Ok(services.store.create_project(user_id, workspace_id, project).await?)
}

/// A change's text, or nothing when the field is left as it is.
fn text(patch: &crate::domain::patch::Patch<String>) -> &str {
    patch.as_value().map_or("", String::as_str)
}

pub async fn update(
    services: &Services,
    user_id: Uuid,
    project_id: Uuid,
    changes: ProjectChanges,
) -> ApiResult<Project> {
    access::require(&services.store, user_id, Target::Project(project_id), Need::Write).await?;
    crate::error::check_lengths(&[
        ("name", text(&changes.name), 200),
        ("description", text(&changes.description), 10_000),
        ("research_goals", text(&changes.research_goals), 50_000),
        ("interview_guide", text(&changes.interview_guide), 50_000),
    ])?;
    let project = services.store.update_project(user_id, project_id, changes).await?;
    project.ok_or_else(|| ApiError::not_found("Project"))
}

/// Deletes a project with its records, reports, rooms and recordings; an audit entry
/// says who did.
pub async fn delete(services: &Services, actor: &Actor, user_id: Uuid, project_id: Uuid) -> ApiResult<()> {
    access::require(&services.store, user_id, Target::Project(project_id), Need::Write).await?;
    let project = services.store.get_project(user_id, project_id).await?;
    let recordings = services.store.project_media_paths(user_id, project_id).await?;
    if !services.store.delete_project(user_id, project_id).await? {
        return Err(ApiError::not_found("Project"));
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
