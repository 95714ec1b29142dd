//! Files no record owns: uploads cut off mid-way (`uploads/*.part`) and recordings whose
//! record never came to be (the request was dropped before its record committed).
//! Removed at start once a day old: younger ones may belong to an upload in progress on
//! another instance sharing the folder. The search outbox's oldest rows go at the same time.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::store::Store;

const AGE: Duration = Duration::from_secs(24 * 3600);

/// Removes the data folder's orphans; returns how many files went.
pub async fn sweep(store: &Store, data_dir: &Path) -> usize {
    let mut removed = 0;
    for (folder, check_records) in [("uploads", false), ("media", true)] {
        let Ok(mut entries) = tokio::fs::read_dir(data_dir.join(folder)).await else {
            continue;
        };
        while let Ok(Some(entry)) = entries.next_entry().await {
            let old = entry
                .metadata()
                .await
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|modified| SystemTime::now().duration_since(modified).ok())
                .is_some_and(|age| age > AGE);
            if !old {
                continue;
            }
            let relative = format!("{folder}/{}", entry.file_name().to_string_lossy());
            if check_records && !matches!(store.media_in_use(&relative).await, Ok(false)) {
                continue;
            }
            if tokio::fs::remove_file(entry.path()).await.is_ok() {
                removed += 1;
            }
        }
    }
    if removed > 0 {
        tracing::info!(removed, "removed files no record owns from the data folder");
    }
    if let Err(error) = store.prune_outbox().await {
        tracing::warn!(error = %format!("{error:#}"), "pruning the search outbox failed");
    }
    removed
}
