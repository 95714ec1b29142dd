//! Files no record owns: uploads cut off mid-way (`uploads/*.part`) and recordings whose
//! record never came to be (the request was dropped before its record committed).
//! Removed at start once a day old: younger ones may belong to an upload in progress on
//! another instance sharing the folder. The search outbox's oldest rows go at the same time.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::files::Files;
use crate::store::Store;

const AGE: Duration = Duration::from_secs(24 * 3600);

/// Removes the orphans of the upload folder and the file store; returns how many went.
pub async fn sweep(store: &Store, data_dir: &Path, files: &Files) -> usize {
    let mut removed = 0;
    if let Ok(mut entries) = tokio::fs::read_dir(data_dir.join("uploads")).await {
        while let Ok(Some(entry)) = entries.next_entry().await {
            let old = entry
                .metadata()
                .await
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|modified| SystemTime::now().duration_since(modified).ok())
                .is_some_and(|age| age > AGE);
            if old && tokio::fs::remove_file(entry.path()).await.is_ok() {
                removed += 1;
            }
        }
    }
    match files.list("media").await {
        Ok(recordings) => {
            let day_ago = crate::domain::now() - chrono::Duration::from_std(AGE).unwrap_or_default();
            for (key, written) in recordings {
                if written > day_ago || !matches!(store.media_in_use(&key).await, Ok(false)) {
                    continue;
                }
                files.delete(&key).await;
                removed += 1;
            }
        }
        Err(error) => tracing::warn!(error = %format!("{error:#}"), "listing the stored recordings failed"),
    }
    if removed > 0 {
        tracing::info!(removed, "removed files no record owns");
    }
    if let Err(error) = store.prune_outbox().await {
        tracing::warn!(error = %format!("{error:#}"), "pruning the search outbox failed");
    }
    removed
}
