//! Retention: a workspace's records and recordings deleted when they are due, by a
//! background chore at start and every hour (`Workers::start`), each sweep that deleted
//! something an audit entry.

use crate::app::accounts::audit::{self, Actor};
use crate::store::Store;

/// One sweep: what is due is deleted, its recordings removed from the file store, and an
/// audit entry `retention.applied` per workspace counts them.
pub async fn sweep(store: &Store, files: &crate::providers::files::Files) -> anyhow::Result<()> {
    for retained in store.apply_retention(crate::domain::now()).await? {
        for path in &retained.media_paths {
            files.delete(path).await;
        }
        audit::record(
            store,
            audit::Entry {
                workspace_id: Some(retained.workspace_id),
                actor: Actor {
                    id: None,
                    email: None,
                    ip: None,
                },
                action: "retention.applied",
                target: None,
                detail: serde_json::json!({ "records": retained.records, "recordings": retained.recordings }),
            },
        )
        .await?;
        tracing::info!(workspace = %retained.workspace_id, records = retained.records, recordings = retained.recordings, "retention applied");
    }
    Ok(())
}
