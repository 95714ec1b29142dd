//! Where the data lives: the database, the data folder, and the instance key.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Storage")]
pub struct StorageSettings {
    /// Database: `sqlite://PATH` (created if missing) or `postgres://...` [env: INSIGHT_DATABASE_URL].
    #[arg(long, env = "INSIGHT_DATABASE_URL", default_value = "sqlite://insight.db", value_parser = parse_database_url)]
    pub database_url: String,

    /// Most database connections this instance opens (PostgreSQL; SQLite readers, all opened at start) [env: INSIGHT_DB_MAX_CONNECTIONS].
    #[arg(long, env = "INSIGHT_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = parse_db_max_connections)]
    pub db_max_connections: u32,

    /// Folder for uploaded recordings waiting for and after transcription; created if missing.
    /// Instances sharing a PostgreSQL database must share this folder [env: INSIGHT_DATA_DIR].
    #[arg(long, env = "INSIGHT_DATA_DIR", default_value = "insight-data")]
    pub data_dir: std::path::PathBuf,

    /// Folder for this instance's search index, best on local disk; default INSIGHT_DATA_DIR/search.
    /// Instances sharing it each keep an index of their own in it [env: INSIGHT_SEARCH_DIR].
    #[arg(long, env = "INSIGHT_SEARCH_DIR")]
    pub search_dir: Option<std::path::PathBuf>,

    /// Where recordings are kept: `file://DIR` (default: INSIGHT_DATA_DIR) or `s3://BUCKET/PREFIX`, an
    /// S3-compatible bucket that several instances can share [env: INSIGHT_STORAGE_URL].
    #[arg(long, env = "INSIGHT_STORAGE_URL", value_parser = parse_storage_url)]
    pub storage_url: Option<StorageUrl>,

    /// The S3-compatible server's address, e.g. `http://127.0.0.1:9000` for MinIO; unset, AWS
    /// (AWS_ENDPOINT_URL is honoured when this is unset) [env: INSIGHT_S3_ENDPOINT].
    #[arg(long, env = "INSIGHT_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,

    /// The bucket's region; unset, AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1` [env: INSIGHT_S3_REGION].
    #[arg(long, env = "INSIGHT_S3_REGION")]
    pub s3_region: Option<String>,

    /// The access key's id; unset, AWS_ACCESS_KEY_ID [env: INSIGHT_S3_ACCESS_KEY_ID].
    #[arg(long, env = "INSIGHT_S3_ACCESS_KEY_ID")]
    pub s3_access_key_id: Option<String>,

    /// The access key's secret; unset, AWS_SECRET_ACCESS_KEY [env: INSIGHT_S3_SECRET_ACCESS_KEY].
    #[arg(long, env = "INSIGHT_S3_SECRET_ACCESS_KEY", hide_env_values = true, value_parser = parse_s3_secret)]
    pub s3_secret_access_key: Option<crate::secret::KeyMaterial>,

    /// The instance's secret (32 or more characters), from which interview links are derived; when
    /// unset, a random key kept in INSIGHT_DATA_DIR/secret.key (made on first start) [env: INSIGHT_SECRET_KEY].
    #[arg(long, env = "INSIGHT_SECRET_KEY", hide_env_values = true, value_parser = parse_secret_key)]
    pub secret_key: Option<crate::secret::KeyMaterial>,
}

pub fn parse_database_url(value: &str) -> Result<String, String> {
    if value.starts_with("sqlite:") || value.starts_with("postgres://") || value.starts_with("postgresql://") {
        Ok(value.to_owned())
    } else {
        Err("INSIGHT_DATABASE_URL (--database-url) must start with sqlite:// or postgres://".into())
    }
}

/// Where recordings are kept (`INSIGHT_STORAGE_URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageUrl {
    Folder(std::path::PathBuf),
    S3 { bucket: String, prefix: String },
}

pub fn parse_storage_url(value: &str) -> Result<StorageUrl, String> {
    let refused =
        || format!("INSIGHT_STORAGE_URL (--storage-url) must be file://DIR or s3://BUCKET/PREFIX, not {value:?}");
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

fn parse_db_max_connections(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_DB_MAX_CONNECTIONS", "--db-max-connections", 1..=1000)
}

fn parse_secret_key(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 32 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("INSIGHT_SECRET_KEY (--secret-key) must be at least 32 characters long".into())
    }
}
