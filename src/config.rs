//! Settings: every `INSIGHT_*` variable in one struct, with its default and its check.
//!
//! Each setting is also a `serve` flag. A bad value stops the start with clap's message,
//! which names both the flag and the variable (see each `help`), so an operator knows
//! exactly what to fix.

use std::net::SocketAddr;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Address to listen on [env: INSIGHT_ADDR].
    #[arg(long, env = "INSIGHT_ADDR", default_value = "127.0.0.1:8000", value_parser = parse_addr)]
    pub addr: SocketAddr,

    /// Database: `sqlite://PATH` (created if missing) or `postgres://...` [env: INSIGHT_DATABASE_URL].
    #[arg(long, env = "INSIGHT_DATABASE_URL", default_value = "sqlite://insight.db", value_parser = parse_database_url)]
    pub database_url: String,

    /// Largest accepted JSON request body in bytes; larger ones get 413 [env: INSIGHT_MAX_BODY_BYTES].
    #[arg(long, env = "INSIGHT_MAX_BODY_BYTES", default_value_t = 1_048_576, value_parser = clap::value_parser!(u64).range(1024..=1_073_741_824))]
    pub max_body_bytes: u64,

    /// Most database connections this instance opens (PostgreSQL; SQLite readers) [env: INSIGHT_DB_MAX_CONNECTIONS].
    #[arg(long, env = "INSIGHT_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_max_connections: u32,

    /// Public base URL of this service, used in links it hands out [env: INSIGHT_PUBLIC_URL].
    #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000", value_parser = parse_public_url)]
    pub public_url: String,

    /// Log format: `text` or `json` [env: INSIGHT_LOG_FORMAT]. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "INSIGHT_LOG_FORMAT", default_value = "text")]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Settings {
    /// Settings for an instance that tests or embedders start on a given database.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            database_url: database_url.into(),
            max_body_bytes: 1_048_576,
            db_max_connections: 16,
            public_url: "http://127.0.0.1:8000".into(),
            log_format: LogFormat::Text,
        }
    }
}

fn parse_addr(value: &str) -> Result<SocketAddr, String> {
    value.parse().map_err(|_| {
        format!("INSIGHT_ADDR (--addr) must be HOST:PORT with an IP address, e.g. 127.0.0.1:8000, not {value:?}")
    })
}

fn parse_database_url(value: &str) -> Result<String, String> {
    if value.starts_with("sqlite:") || value.starts_with("postgres://") || value.starts_with("postgresql://") {
        Ok(value.to_owned())
    } else {
        Err("INSIGHT_DATABASE_URL (--database-url) must start with sqlite:// or postgres://".into())
    }
}

fn parse_public_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_PUBLIC_URL (--public-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}
