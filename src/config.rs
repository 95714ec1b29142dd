//! Settings: every `INSIGHT_*` variable in one struct, with its default and its check.
//!
//! Each setting is also a `serve` flag. A bad value stops the start with clap's message,
//! which names both the flag and the variable (see each `help`), so an operator knows
//! exactly what to fix.

use std::net::SocketAddr;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Address to listen on [env: INSIGHT_ADDR].
    #[arg(long, env = "INSIGHT_ADDR", default_value = "127.0.0.1:8000", value_parser = parse_addr)]
    pub addr: SocketAddr,

    /// Database: `sqlite://PATH` (created if missing) or `postgres://...` [env: INSIGHT_DATABASE_URL].
    #[arg(long, env = "INSIGHT_DATABASE_URL", default_value = "sqlite://insight.db", value_parser = parse_database_url)]
    pub database_url: String,

    /// Largest accepted JSON request body in bytes; larger ones get 413 [env: INSIGHT_MAX_BODY_BYTES].
    #[arg(long, env = "INSIGHT_MAX_BODY_BYTES", default_value_t = 1_048_576, value_parser = parse_max_body_bytes)]
    pub max_body_bytes: u64,

    /// Most database connections this instance opens (PostgreSQL; SQLite readers) [env: INSIGHT_DB_MAX_CONNECTIONS].
    #[arg(long, env = "INSIGHT_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = parse_db_max_connections)]
    pub db_max_connections: u32,

    /// Public base URL of this service, for links it hands out (interview links) [env: INSIGHT_PUBLIC_URL].
    #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000", value_parser = parse_public_url)]
    pub public_url: String,

    /// Log format: `text` or `json` [env: INSIGHT_LOG_FORMAT]. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "INSIGHT_LOG_FORMAT", default_value = "text", value_parser = parse_log_format)]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

pub fn parse_database_url(value: &str) -> Result<String, String> {
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

/// A whole number within `range`, or a sentence naming the variable and the range.
fn parse_number<T>(value: &str, variable: &str, flag: &str, range: std::ops::RangeInclusive<T>) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "{variable} ({flag}) must be a whole number from {} to {}, not {value:?}",
                range.start(),
                range.end()
            )
        })
}

fn parse_max_body_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_BODY_BYTES",
        "--max-body-bytes",
        1024..=1_073_741_824,
    )
}

fn parse_db_max_connections(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_DB_MAX_CONNECTIONS", "--db-max-connections", 1..=1000)
}

fn parse_log_format(value: &str) -> Result<LogFormat, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err(format!(
            "INSIGHT_LOG_FORMAT (--log-format) must be text or json, not {value:?}"
        )),
    }
}
