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
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::prefix::PrefixStore;
use object_store::{
    ClientConfigKey, GetOptions, GetRange, MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};

use crate::config::{StorageSettings, StorageUrl};
use crate::error::Error;

/// How much of a recording is sent to a bucket per part, and how many parts at once: the
/// memory an upload holds is about their product.
const PART_BYTES: usize = 8 * 1024 * 1024;
const PARTS_AT_ONCE: usize = 2;

/// The file store.
#[derive(Clone)]
pub struct Files {
    store: Arc<dyn ObjectStore>,
    /// The same store, for reading recordings out (which may take long).
    reader: Arc<dyn ObjectStore>,
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

impl From<FileError> for Error {
    fn from(error: FileError) -> Self {
        match error {
            FileError::Missing => Error::NotFound("The recording is missing".into()),
            FileError::Unavailable(reason) => Error::Unavailable(reason),
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
                    // S3-compatible servers (MinIO, moto, Ceph) answer at the endpoint's own
                    // host, with the bucket in the path.
                    builder = builder.with_endpoint(endpoint).with_virtual_hosted_style_request(false);
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
                // An endpoint of plain http (a server on the same host or network), whether
                // it came from INSIGHT_S3_ENDPOINT or AWS_ENDPOINT_URL; AWS_ALLOW_HTTP is
                // otherwise left as the environment says.
                if builder
                    .get_config_value(&AmazonS3ConfigKey::Endpoint)
                    .is_some_and(|endpoint| endpoint.starts_with("http://"))
                {
                    builder = builder.with_allow_http(true);
                }
                // A bucket that does not answer fails an upload within seconds (a 503 to the
                // uploader), rather than holding it for minutes of retries.
                let retry = RetryConfig {
                    max_retries: 2,
                    retry_timeout: Duration::from_secs(10),
                    ..RetryConfig::default()
                };
                let builder = builder
                    .with_retry(retry)
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout), "5s");
                let open = |timeout: &str| {
                    builder
                        .clone()
                        .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), timeout)
                        .build()
                        .with_context(|| format!("cannot use the bucket {bucket} (INSIGHT_STORAGE_URL)"))
                };
                // The timeout covers a whole request, body included: a part sent is bounded
                // tightly, while a recording read out to a slow listener or provider may take long.
                let (writes, reads) = (open("300s")?, open("6h")?);
                let (store, reader): (Arc<dyn ObjectStore>, Arc<dyn ObjectStore>) = if prefix.is_empty() {
                    (Arc::new(writes), Arc::new(reads))
                } else {
                    (
                        Arc::new(PrefixStore::new(writes, prefix.as_str())),
                        Arc::new(PrefixStore::new(reads, prefix.as_str())),
                    )
                };
                Ok(Self {
                    store,
                    reader,
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
        let store: Arc<dyn ObjectStore> = Arc::new(store);
        Ok(Self {
            reader: store.clone(),
            store,
            folder: Some(folder.to_path_buf()),
            place: folder.display().to_string(),
        })
    }

    /// Whether files are kept in a bucket.
    pub fn is_bucket(&self) -> bool {
        self.folder.is_none()
    }

    /// Moves the local file at `path` (an upload) into the store as `key`. Either the
    /// whole file is there afterwards or nothing is: a multipart upload that fails, or
    /// whose request is dropped, is aborted.
    pub async fn keep(&self, path: &Path, key: &str) -> Result<(), Error> {
        if let Some(folder) = &self.folder {
            return Ok(move_into(path, &folder.join(key)).await?);
        }
        let stored = self.send(path, &Key::from(key)).await;
        stored.map_err(|error| {
            tracing::warn!(error = %format!("{error:#}"), store = %self.place, "a recording could not be stored");
            self.unavailable()
        })
    }

    /// Sends the file at `path` to the bucket: in one request when it fits in a part, else
    /// as a multipart upload of `PARTS_AT_ONCE` parts at a time.
    async fn send(&self, path: &Path, key: &Key) -> anyhow::Result<()> {
        let mut file = tokio::fs::File::open(path)
            .await
            .context("cannot read the upload back")?;
        let first = next_part(&mut file).await?;
        if first.len() < PART_BYTES {
            self.store.put(key, PutPayload::from(first)).await?;
            return Ok(());
        }
        let mut upload = Unfinished(Some(self.store.put_multipart(key).await?));
        let sent = match upload.0.as_mut() {
            Some(parts) => send_parts(parts.as_mut(), &mut file, first).await,
            None => Ok(()),
        };
        let Some(mut parts) = upload.0.take() else {
            return sent;
        };
        if sent.is_err() {
            // Awaited here, so that the failure answered leaves nothing behind.
            if let Err(error) = parts.abort().await {
                tracing::warn!(error = %error, "an unfinished upload could not be aborted");
            }
        }
        sent
    }

    fn unavailable(&self) -> Error {
        Error::Unavailable("The file store does not answer; nothing was kept. Try again in a moment.".to_owned())
    }

    /// Reads `key`, whole or the `range` asked for (clipped to the file).
    pub async fn read(&self, key: &str, range: Option<Range<u64>>) -> Result<Reading, FileError> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let got = self
            .reader
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

/// A multipart upload not yet completed: aborted when dropped (it failed, or the request
/// that made it went away), so that no parts are left in the bucket unseen.
struct Unfinished(Option<Box<dyn MultipartUpload>>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(mut upload) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                if let Err(error) = upload.abort().await {
                    tracing::warn!(error = %error, "an unfinished upload could not be aborted");
                }
            });
        }
    }
}

/// The parts of a multipart upload, `first` and the rest of `file`, `PARTS_AT_ONCE` at a
/// time, then the upload completed.
async fn send_parts(
    upload: &mut dyn MultipartUpload,
    file: &mut tokio::fs::File,
    first: Vec<u8>,
) -> anyhow::Result<()> {
    let mut sending = futures_util::stream::FuturesUnordered::new();
    let mut part = first;
    while !part.is_empty() {
        sending.push(upload.put_part(PutPayload::from(part)));
        while sending.len() >= PARTS_AT_ONCE {
            sending.next().await.transpose()?;
        }
        part = next_part(file).await?;
    }
    while let Some(sent) = sending.next().await {
        sent?;
    }
    upload.complete().await?;
    Ok(())
}

/// The next part of `file`: `PART_BYTES`, or what is left (nothing at its end), in a
/// buffer of exactly that size (reading to the end would double it).
async fn next_part(file: &mut tokio::fs::File) -> anyhow::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut part = vec![0u8; PART_BYTES];
    let mut filled = 0;
    while filled < PART_BYTES {
        let read = file
            .read(&mut part[filled..])
            .await
            .context("cannot read the upload back")?;
        if read == 0 {
            break;
        }
        filled += read;
    }
    part.truncate(filled);
    Ok(part)
}

/// Moves the file at `from` to `to`, durably: renamed, or copied where the two are on
/// different file systems (a shared folder mounted elsewhere).
async fn move_into(from: &Path, to: &Path) -> anyhow::Result<()> {
    let parent = to.parent().context("a file's place has a folder")?;
    tokio::fs::create_dir_all(parent)
        .await
        .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    match tokio::fs::rename(from, to).await {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::CrossesDevices => {
            // Copied beside its place first, so that the file appears there whole or not at all.
            let beside = parent.join(format!(".{}.part", uuid::Uuid::new_v4()));
            let copied = async {
                tokio::fs::copy(from, &beside).await?;
                tokio::fs::File::open(&beside).await?.sync_all().await?;
                tokio::fs::rename(&beside, to).await
            };
            if let Err(error) = copied.await {
                let _ = tokio::fs::remove_file(&beside).await;
                return Err(error).with_context(|| format!("cannot copy the upload into {}", to.display()));
            }
            let _ = tokio::fs::remove_file(from).await;
        }
        Err(error) => return Err(error).with_context(|| format!("cannot move the upload into {}", to.display())),
    }
    // The move itself must survive a crash, like the record that will point at it.
    if let Ok(dir) = std::fs::File::open(parent) {
        let _ = dir.sync_all();
    }
    Ok(())
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
