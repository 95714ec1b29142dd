//! Where recordings are kept: the data folder by default, or an S3-compatible bucket that
//! several instances share (`INSIGHT_STORAGE_URL`), both through `object_store`. Keys are
//! the paths records name (`media/{uuid}.{ext}`). Uploads are first streamed to the
//! instance's own `uploads/` folder and read there; a recording is then moved into the
//! store (renamed, in a folder; a multipart upload of a few parts at a time, in a
//! bucket), so a 1 GB recording is never held in memory. Reads stream too.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::buffered::BufWriter;
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::prefix::PrefixStore;
use object_store::{ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};
use tokio::io::AsyncWriteExt;

use crate::config::{StorageSettings, StorageUrl};
use crate::error::ApiError;

/// How much of a recording is sent to a bucket per part, and how many parts at once: the
/// memory an upload holds is about their product.
const PART_BYTES: usize = 8 * 1024 * 1024;
const PARTS_AT_ONCE: usize = 2;

/// The file store.
#[derive(Clone)]
pub struct Files {
    store: Arc<dyn ObjectStore>,
    /// The folder, when the store is one: a recording is renamed into it, not copied.
    folder: Option<PathBuf>,
    /// Where the store is, for messages (never a credential).
    place: String,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("place", &self.place).finish()
    }
}

/// Why a file could not be read.
#[derive(Debug)]
pub enum FileError {
    /// No such file: a record whose recording is gone.
    Missing,
    /// The store did not answer (a bucket unreachable); worth trying again.
    Unavailable(String),
}

impl From<FileError> for ApiError {
    fn from(error: FileError) -> Self {
        match error {
            FileError::Missing => ApiError::NotFound("The recording is missing".into()),
            FileError::Unavailable(reason) => ApiError::Unavailable(reason),
        }
    }
}

/// A file being read: its whole size and its bytes (all of them, or the range asked for).
pub struct Reading {
    pub size: u64,
    pub range: Range<u64>,
    pub bytes: BoxStream<'static, std::io::Result<Bytes>>,
}

impl Files {
    /// The store the settings name; a bucket is not contacted until it is used.
    pub fn open(settings: &StorageSettings) -> anyhow::Result<Self> {
        match &settings.storage_url {
            None => Self::in_folder(&settings.data_dir),
            Some(StorageUrl::Folder(folder)) => Self::in_folder(folder),
            Some(StorageUrl::S3 { bucket, prefix }) => {
                let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
                if let Some(endpoint) = &settings.s3_endpoint {
                    builder = builder.with_endpoint(endpoint);
                }
                if let Some(region) = &settings.s3_region {
                    builder = builder.with_region(region);
                }
                if let Some(id) = &settings.s3_access_key_id {
                    builder = builder.with_access_key_id(id);
                }
                if let Some(secret) = &settings.s3_secret_access_key {
                    builder = builder.with_secret_access_key(secret.expose());
                }
                if settings.s3_endpoint.is_some() {
                    // S3-compatible servers (MinIO, moto, Ceph) answer at the endpoint's own
                    // host, with the bucket in the path.
                    builder = builder.with_virtual_hosted_style_request(false);
                }
                // A bucket that does not answer fails an upload within seconds (a 503 to the
                // uploader), rather than holding it for minutes of retries.
                let retry = RetryConfig {
                    max_retries: 2,
                    retry_timeout: Duration::from_secs(10),
                    ..RetryConfig::default()
                };
                let plain_http = settings
                    .s3_endpoint
                    .as_deref()
                    .is_some_and(|e| e.starts_with("http://"));
                let client = ClientOptions::new()
                    .with_allow_http(plain_http)
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(300));
                let s3 = builder
                    .with_retry(retry)
                    .with_client_options(client)
                    .build()
                    .with_context(|| format!("cannot use the bucket {bucket} (INSIGHT_STORAGE_URL)"))?;
                let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
                    Arc::new(s3)
                } else {
                    Arc::new(PrefixStore::new(s3, prefix.as_str()))
                };
                Ok(Self {
                    store,
                    folder: None,
                    place: format!("s3://{bucket}/{prefix}"),
                })
            }
        }
    }

    /// The store of a folder.
    pub fn in_folder(folder: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create the data folder {}", folder.display()))?;
        let store = LocalFileSystem::new_with_prefix(folder)
            .with_context(|| format!("cannot use the folder {}", folder.display()))?;
        Ok(Self {
            store: Arc::new(store),
            folder: Some(folder.to_path_buf()),
            place: folder.display().to_string(),
        })
    }

    /// Whether files are kept in a bucket.
    pub fn is_bucket(&self) -> bool {
        self.folder.is_none()
    }

    /// Moves the local file at `path` (an upload) into the store as `key`. Either the
    /// whole file is there afterwards or nothing is: a failed multipart upload is aborted.
    pub async fn keep(&self, path: &Path, key: &str) -> Result<(), ApiError> {
        if let Some(folder) = &self.folder {
            let target = folder.join(key);
            if let Some(parent) = target.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .with_context(|| format!("cannot create the folder {}", parent.display()))?;
            }
            tokio::fs::rename(path, &target)
                .await
                .with_context(|| format!("cannot move the upload into {}", target.display()))?;
            // The rename itself must survive a crash, like the record that will point at it.
            if let Some(parent) = target.parent()
                && let Ok(dir) = std::fs::File::open(parent)
            {
                let _ = dir.sync_all();
            }
            return Ok(());
        }
        let mut file = tokio::fs::File::open(path)
            .await
            .context("cannot read the upload back")?;
        let mut writer = BufWriter::with_capacity(self.store.clone(), Key::from(key), PART_BYTES)
            .with_max_concurrency(PARTS_AT_ONCE);
        let stored = match tokio::io::copy(&mut file, &mut writer).await {
            // Finishing completes the upload, or aborts it when it fails.
            Ok(_) => writer.shutdown().await,
            Err(error) => {
                let _ = writer.abort().await;
                Err(error)
            }
        };
        stored.map_err(|error| {
            tracing::warn!(error = %error, store = %self.place, "a recording could not be stored");
            self.unavailable()
        })
    }

    fn unavailable(&self) -> ApiError {
        ApiError::Unavailable("The file store does not answer; nothing was kept. Try again in a moment.".to_owned())
    }

    /// Reads `key`, whole or the `range` asked for (clipped to the file).
    pub async fn read(&self, key: &str, range: Option<Range<u64>>) -> Result<Reading, FileError> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let got = self
            .store
            .get_opts(&Key::from(key), options)
            .await
            .map_err(|error| self.read_error(error))?;
        let (size, range) = (got.meta.size, got.range.clone());
        let bytes = got.into_stream().map_err(std::io::Error::other).boxed();
        Ok(Reading { size, range, bytes })
    }

    /// The size of `key`.
    pub async fn size(&self, key: &str) -> Result<u64, FileError> {
        let meta = self
            .store
            .head(&Key::from(key))
            .await
            .map_err(|error| self.read_error(error))?;
        Ok(meta.size)
    }

    fn read_error(&self, error: object_store::Error) -> FileError {
        match error {
            object_store::Error::NotFound { .. } => FileError::Missing,
            error => {
                tracing::warn!(error = %error, store = %self.place, "reading a file failed");
                FileError::Unavailable("The file store does not answer; try again in a moment.".to_owned())
            }
        }
    }

    /// Deletes `key`; one already gone is deleted. A failure is logged: a file left behind
    /// is found again by the sweep (`jobs::sweep`).
    pub async fn delete(&self, key: &str) {
        match self.store.delete(&Key::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => tracing::warn!(error = %error, key, store = %self.place, "deleting a file failed"),
        }
    }

    /// The files under `folder` with when each was last written.
    pub async fn list(&self, folder: &str) -> anyhow::Result<Vec<(String, chrono::DateTime<chrono::Utc>)>> {
        let mut listed = self.store.list(Some(&Key::from(folder)));
        let mut found = Vec::new();
        while let Some(meta) = listed.next().await {
            match meta {
                Ok(meta) => found.push((meta.location.to_string(), meta.last_modified)),
                // A folder that does not exist yet holds nothing.
                Err(object_store::Error::NotFound { .. }) => break,
                Err(error) => return Err(error.into()),
            }
        }
        Ok(found)
    }
}

/// The one byte range a `Range` header asks of a file of `size` bytes: `None` to send it
/// whole (no range, or several, which players do not ask for), `Some(Err(()))` for a
/// range outside the file (a 416).
pub fn byte_range(header: &str, size: u64) -> Option<Result<Range<u64>, ()>> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (first, last) = spec.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    let range = if first.is_empty() {
        // The last `n` bytes.
        let n: u64 = last.parse().ok()?;
        size.saturating_sub(n)..size
    } else {
        let start: u64 = first.parse().ok()?;
        let end = if last.is_empty() {
            size
        } else {
            let last: u64 = last.parse().ok()?;
            if last < start {
                return None;
            }
            last.saturating_add(1).min(size)
        };
        start..end
    };
    Some(if range.start < range.end { Ok(range) } else { Err(()) })
}

#[cfg(test)]
mod tests {
    use super::byte_range;

    #[test]
    fn ranges_are_read_as_players_send_them() {
        assert_eq!(byte_range("bytes=0-", 100), Some(Ok(0..100)));
        assert_eq!(byte_range("bytes=10-19", 100), Some(Ok(10..20)));
        assert_eq!(byte_range("bytes=90-200", 100), Some(Ok(90..100)));
        assert_eq!(byte_range("bytes=-10", 100), Some(Ok(90..100)));
        assert_eq!(byte_range("bytes=100-", 100), Some(Err(())));
        assert_eq!(byte_range("bytes=0-0", 0), Some(Err(())));
        assert_eq!(byte_range("bytes=0-1,5-6", 100), None);
        assert_eq!(byte_range("items=0-1", 100), None);
        assert_eq!(byte_range("bytes=5-2", 100), None);
        assert_eq!(byte_range("bytes=x-", 100), None);
    }
}
