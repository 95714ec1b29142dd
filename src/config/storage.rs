//! Where the data lives: the database, the data folder, and the instance key.

use clap::Args;

use super::check::{checked, ranged};

/// Where the data lives: the database, the data folder, the recordings' file store, the
/// search index, and the instance's key.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Storage", verbatim_doc_comment)]
pub struct StorageSettings {
    /// Database: `sqlite://PATH` (created if missing) or `postgres://USER@HOST:PORT/DB`
    /// (`postgresql://` also works).
    ///
    /// Migrations run at start. The `users` and `tokens` commands read it too. Several
    /// instances can share a PostgreSQL database, not a SQLite file: see
    /// [deployment](deployment.md#several-instances).
    #[arg(long, env = "INSIGHT_DATABASE_URL", default_value = "sqlite://insight.db", value_parser = database_url())]
    pub database_url: String,

    /// Most database connections this instance opens (PostgreSQL: the pool's size; SQLite:
    /// the readers, all opened at start, next to the one writer).
    ///
    /// With several instances, the sum must stay under PostgreSQL's `max_connections`.
    #[arg(long, env = "INSIGHT_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = ranged::<u32>(1..=1000))]
    pub db_max_connections: u32,

    /// Folder for uploads on their way in (`uploads/`), recordings waiting for and after
    /// transcription (`media/`) and, when `INSIGHT_SECRET_KEY` is unset, `secret.key`;
    /// created if missing.
    ///
    /// A folder that cannot be created stops the start. Recordings live here unless
    /// `INSIGHT_STORAGE_URL` names a bucket; then only uploads on their way in do, and
    /// instances need not share it. Otherwise instances sharing a PostgreSQL database must
    /// share this folder.
    #[arg(long, env = "INSIGHT_DATA_DIR", default_value = "insight-data")]
    pub data_dir: std::path::PathBuf,

    /// Folder for this instance's search index (tantivy), best on local disk; unset,
    /// INSIGHT_DATA_DIR/search.
    ///
    /// When the data folder is on a network file system, point this at local storage. The
    /// index is a copy of the database, built from it when missing and kept in step by every
    /// instance; each instance sharing the folder takes a slot of its own (`slot-N/`, held by
    /// a lock file while it runs, kept across restarts; 16 at most). Deleting the folder
    /// while the service is stopped only makes it rebuild. Inside a slot the index is a
    /// generation folder (`v3/g7/`) that `v3/current` names: an instance that finds its index
    /// too far behind builds the next generation beside it, answering from the previous one
    /// meanwhile, and switches once the new one is complete (then removes the old one). A new
    /// index (first start, a new version, a deleted folder) answers searches with a 503 ("the
    /// search index is being built, N of M items so far") until its build is complete, never
    /// from part of it. The build needs the disk of a second index for its duration.
    #[arg(long, env = "INSIGHT_SEARCH_DIR")]
    pub search_dir: Option<std::path::PathBuf>,

    /// Where recordings are kept: `file://DIR` (unset: INSIGHT_DATA_DIR) or
    /// `s3://BUCKET/PREFIX`, an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...) that
    /// several instances can share with no shared file system.
    ///
    /// A folder must be shared by instances sharing a PostgreSQL database, since a recording
    /// uploaded to one may be transcribed or played by another. In a folder on another file
    /// system than `INSIGHT_DATA_DIR` (a network share), a recording is copied there and then
    /// renamed, so it appears whole or not at all.
    ///
    /// With a bucket, an upload is streamed to `INSIGHT_DATA_DIR/uploads/`, checked, and then
    /// sent to the bucket as a multipart upload of 8 MiB parts, two at a time, so a 1 GB
    /// recording never sits in memory; while the bucket does not answer, a recording upload
    /// is a 503 that keeps nothing (typed material and text need no bucket), and a multipart
    /// upload that fails, or whose request is dropped, is aborted. Recordings are read back
    /// in streams and ranges; a queued transcription waits for a bucket that does not
    /// answer, without using up its attempts.
    ///
    /// The bucket must exist; Insight does not create it. Give it a lifecycle rule that
    /// aborts incomplete multipart uploads after a day: an upload cut off while the bucket
    /// itself is away cannot be aborted, and its parts would otherwise stay (unseen, but
    /// billed). One prefix per Insight database: the sweep that removes recordings no record
    /// names looks only at its own database.
    #[arg(long, env = "INSIGHT_STORAGE_URL", value_parser = checked(parse_storage_url))]
    pub storage_url: Option<StorageUrl>,

    /// The S3-compatible server's address, e.g. `http://127.0.0.1:9000` for MinIO; unset,
    /// AWS (AWS_ENDPOINT_URL is honoured when this is unset).
    ///
    /// Requests then name the bucket in the path, and `http://` is allowed (for
    /// `AWS_ENDPOINT_URL` too). The other `AWS_*` settings `object_store` reads
    /// (`AWS_ALLOW_HTTP`, `AWS_PROXY_URL`, `AWS_VIRTUAL_HOSTED_STYLE_REQUEST`...) apply as they
    /// are.
    #[arg(long, env = "INSIGHT_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,

    /// The bucket's region; unset, AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1`.
    #[arg(long, env = "INSIGHT_S3_REGION")]
    pub s3_region: Option<String>,

    /// The id of the access key the instance signs with; unset, AWS_ACCESS_KEY_ID (and
    /// AWS_SESSION_TOKEN).
    #[arg(long, env = "INSIGHT_S3_ACCESS_KEY_ID")]
    pub s3_access_key_id: Option<String>,

    /// The access key's secret; unset, AWS_SECRET_ACCESS_KEY. Never printed or logged.
    #[arg(long, env = "INSIGHT_S3_SECRET_ACCESS_KEY", hide_env_values = true, value_parser = checked(parse_s3_secret))]
    pub s3_secret_access_key: Option<crate::secret::KeyMaterial>,

    /// The instance's secret (32 or more characters), from which interview links are
    /// derived; unset, a random key kept in INSIGHT_DATA_DIR/secret.key (made on first
    /// start, owner-only).
    ///
    /// Interview links, respondents' interview sessions, webhook endpoints' signing secrets,
    /// speech-to-text callback secrets and the single sign-on cookie are derived from it, so
    /// none of them is ever stored. Instances sharing a database must share the key (this
    /// setting, or the same `INSIGHT_DATA_DIR`). Changing it changes every interview link and
    /// every webhook signing secret, and a speech-to-text callback still on its way is
    /// refused (the job then checks by polling or sends again).
    #[arg(long, env = "INSIGHT_SECRET_KEY", hide_env_values = true, value_parser = checked(parse_secret_key))]
    pub secret_key: Option<crate::secret::KeyMaterial>,
}

/// The check of `INSIGHT_DATABASE_URL`, for every command that reads it.
pub fn database_url() -> impl clap::builder::TypedValueParser<Value = String> {
    checked(|value: &str| {
        if value.starts_with("sqlite:") || value.starts_with("postgres://") || value.starts_with("postgresql://") {
            Ok(value.to_owned())
        } else {
            Err("must start with sqlite:// or postgres://".to_owned())
        }
    })
}

/// Where recordings are kept (`INSIGHT_STORAGE_URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageUrl {
    Folder(std::path::PathBuf),
    S3 { bucket: String, prefix: String },
}

fn parse_storage_url(value: &str) -> Result<StorageUrl, String> {
    let refused = || "must be file://DIR or s3://BUCKET/PREFIX".to_owned();
    if let Some(folder) = value.strip_prefix("file://") {
        return if folder.is_empty() {
            Err(refused())
        } else {
            Ok(StorageUrl::Folder(folder.into()))
        };
    }
    let rest = value.strip_prefix("s3://").ok_or_else(refused)?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    // S3's bucket names: 3 to 63 lower-case letters, digits, dots and hyphens.
    let valid = (3..=63).contains(&bucket.len())
        && bucket
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-');
    if !valid {
        return Err(refused());
    }
    Ok(StorageUrl::S3 {
        bucket: bucket.to_owned(),
        prefix: prefix.trim_matches('/').to_owned(),
    })
}

fn parse_s3_secret(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    Ok(crate::secret::KeyMaterial::new(value))
}

fn parse_secret_key(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 32 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("must be at least 32 characters long".into())
    }
}
