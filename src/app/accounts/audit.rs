//! What goes into the audit log, in one shape for every use case.

use std::net::IpAddr;

use uuid::Uuid;

use crate::app::Caller;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::user::User;
use crate::domain::workspace::{AuditEvent, Need};
use crate::error::Result;
use crate::store::{CreatedKey, NewAuditEvent, Store, Target};

// The doors build the log's filter from their query, so it comes from here, not the store.
pub use crate::store::AuditFilter;

/// Who did it.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub id: Option<Uuid>,
    pub email: Option<String>,
    pub ip: Option<IpAddr>,
}

impl Actor {
    pub fn user(user: &User, ip: Option<IpAddr>) -> Self {
        Self {
            id: Some(user.id),
            email: Some(user.email.clone()),
            ip,
        }
    }
}

/// One line of the log.
pub struct Entry {
    /// `None` for what concerns a person rather than a workspace.
    pub workspace_id: Option<Uuid>,
    pub actor: Actor,
    /// A dotted name: `session.signed_in`, `member.role_changed`...
    pub action: &'static str,
    /// The kind of object and its id.
    pub target: Option<(&'static str, String)>,
    pub detail: serde_json::Value,
}

pub async fn record(store: &Store, entry: Entry) -> Result<()> {
    let (target_type, target_id) = match entry.target {
        Some((kind, id)) => (Some(kind), Some(id)),
        None => (None, None),
    };
    store
        .audit(NewAuditEvent {
            workspace_id: entry.workspace_id,
            actor_id: entry.actor.id,
            actor_email: entry.actor.email,
            action: entry.action,
            target_type,
            target_id,
            ip: entry.actor.ip.map(|ip| ip.to_string()),
            detail: entry.detail,
        })
        .await?;
    Ok(())
}

/// A page of a workspace's log, newest first, for its owners and admins: what happened
/// in it and its members' sign-ins, filtered by who (an address) and what (an action,
/// or a prefix ending in `.`).
pub async fn log(
    store: &Store,
    caller: &Caller,
    workspace_id: Uuid,
    filter: &AuditFilter,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<AuditEvent, CreatedKey>> {
    caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    Ok(store.audit_log(workspace_id, filter, page).await?)
}
