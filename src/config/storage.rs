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
