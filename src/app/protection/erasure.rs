//! Erasing a respondent across a workspace by their e-mail address, with a receipt and an
//! audit entry that names what was deleted, never the address.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::domain::privacy::{ErasedCounts, ErasureReceipt, ErasureRequest};
use crate::domain::workspace::Need;
use crate::error::{Result, ValidationIssue};
use crate::services::Services;
use crate::store::Target;

/// Erases the respondent (admins and owners): see `Store::erase_respondent`. A blank or
/// malformed address is a 422 at `body.email`.
pub async fn erase(
    services: &Services,
    caller: &Caller,
    workspace_id: Uuid,
    request: ErasureRequest,
) -> Result<ErasureReceipt> {
    let actor = caller.actor();
    caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    let email = request.email.trim().to_lowercase();
    let well_formed = email.len() <= 320
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && !domain.is_empty() && !email.contains(char::is_whitespace)
        });
    if !well_formed {
        return Err(crate::error::Error::validation(vec![
            ValidationIssue::value_error(
                vec![serde_json::json!("body"), serde_json::json!("email")],
                "an e-mail address such as name@example.org is needed",
            )
            .with_input(serde_json::json!(request.email)),
        ]));
    }
    let erased = services.store.erase_respondent(workspace_id, &email).await?;
    for path in &erased.media_paths {
        services.files.delete(path).await;
    }
    // The answer comes once the index's files here hold nothing of the deleted either.
    services.search.purged().await;
    let deleted = ErasedCounts {
        records: erased.records,
        rooms: erased.rooms,
        sessions: erased.sessions,
        highlights: erased.highlights,
        personas: erased.personas,
        chat_messages: erased.chat_messages,
        invitations: erased.invitations,
        webhook_deliveries: erased.webhook_deliveries,
    };
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: Some(workspace_id),
            actor,
            action: "respondent.erased",
            target: None,
            detail: serde_json::json!({ "deleted": deleted, "redacted": erased.redacted }),
        },
    )
    .await?;
    Ok(ErasureReceipt {
        deleted,
        redacted: erased.redacted,
        erased_at: crate::domain::now(),
    })
}
