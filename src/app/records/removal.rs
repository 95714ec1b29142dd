//! Deleting a record: its utterances, its recording and its pending work go with it; an
//! audit entry says who did.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::domain::workspace::Need;
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::Target;

/// Deletes the record; returns its project, for the door to go back to.
pub async fn delete(services: &Services, caller: &Caller, record_id: Uuid) -> Result<Uuid> {
    let user_id = caller.id();
    let actor = &caller.actor();
    caller
        .require(&services.store, Target::Record(record_id), Need::Write)
        .await?;
    let record = services
        .store
        .get_record(user_id, record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    let Some(media_path) = services.store.delete_record(user_id, record_id).await? else {
        return Err(Error::not_found("Record"));
    };
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: services.store.project_workspace(record.project_id).await?,
            actor: actor.clone(),
            action: "record.deleted",
            target: Some(("record", record_id.to_string())),
            detail: serde_json::json!({ "name": record.name }),
        },
    )
    .await?;
    if let Some(path) = media_path {
        services.files.delete(&path).await;
    }
    Ok(record.project_id)
}
