//! Files no record owns: uploads cut off mid-way (`uploads/*.part`) and recordings whose
//! record never came to be (the request was dropped before its record committed).
//! Removed at start and every six hours once a day old: younger ones may belong to an
//! upload in progress on another instance sharing the folder. The search outbox's oldest
//! rows go at the same time, and so do the holding workspaces of imports that stopped an
//! hour or more ago (see `store::imports`).

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::providers::files::Files;
use crate::store::Store;

const AGE: Duration = Duration::from_secs(24 * 3600);
/// How often the chore runs (`Workers::start`).
pub const EVERY: Duration = Duration::from_secs(6 * 3600);

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
    // Imports killed on another instance (this one removed its own at start).
    match store
        .remove_unfinished_imports(Some(crate::domain::now() - crate::store::IMPORT_STALE))
        .await
    {
        Ok(0) => {}
        Ok(imports) => tracing::info!(imports, "removed what unfinished imports left"),
        Err(error) => tracing::warn!(error = %format!("{error:#}"), "removing unfinished imports failed"),
    }
    if let Err(error) = store.prune_outbox().await {
        tracing::warn!(error = %format!("{error:#}"), "pruning the search outbox failed");
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part a day old or more goes; a younger one may be an upload in progress.
    #[tokio::test]
    async fn old_parts_go_and_young_ones_stay() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("insight.db").display());
        let store = Store::connect(&url, 2).await?;
        let files = Files::in_folder(&dir.path().join("data"))?;
        let uploads = dir.path().join("uploads");
        std::fs::create_dir_all(&uploads)?;
        let old = uploads.join("cut-off.part");
        std::fs::File::create(&old)?.set_modified(SystemTime::now() - 2 * AGE)?;
        let young = uploads.join("in-progress.part");
        std::fs::File::create(&young)?;
        assert_eq!(sweep(&store, dir.path(), &files).await, 1);
        assert!(!old.exists(), "the old part went");
        assert!(young.exists(), "the young one stayed");
        store.close().await;
        Ok(())
    }
}
