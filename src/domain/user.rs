//! Users and their API tokens.
//!
//! A token is 32 random bytes shown once as `ins_<base64url>`; only its SHA-256 is
//! stored, so a copy of the database does not give access.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use uuid::Uuid;

/// The signed-in user (`GET /me`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct User {
    pub id: Uuid,
    pub email: String,
    pub created_at: DateTime<Utc>,
}

super::string_enum! {
    /// What a personal API token may do: `read` tokens are refused every change.
    TokenScope { Read = "read", Write = "write" }
}

/// A token as `tokens list` and `GET /me/tokens` show it: never the secret itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TokenInfo {
    pub id: Uuid,
    pub name: String,
    pub scope: TokenScope,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A session as `GET /me/sessions` shows it: never its cookie.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionInfo {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    /// How it began: `password`, `sso` or `invitation`.
    pub method: String,
    /// Whether it is the session this request came with.
    pub current: bool,
}

const TOKEN_PREFIX: &str = "ins_";
/// Session cookies, reset links and invitation links have their own prefixes, so a value
/// says what it is and one kind is never taken for another.
pub const SESSION_PREFIX: &str = "inss_";
pub const LINK_PREFIX: &str = "insl_";

/// A new random token and the hash to store for it.
pub fn new_token() -> (String, Vec<u8>) {
    new_secret(TOKEN_PREFIX)
}

/// A new random value (256 bits) with the given prefix, and the hash to store for it.
pub fn new_secret(prefix: &str) -> (String, Vec<u8>) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes));
    let hash = hash_token(&token);
    (token, hash)
}

pub fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Normalises an email address for storage and lookup; `None` when it is not one.
pub fn normalize_email(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let valid = !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    valid.then_some(email)
}

/// Parses a lifetime such as `30d`, `12h`, `45m` or `3600s`.
pub fn parse_lifetime(value: &str) -> Option<chrono::Duration> {
    let value = value.trim();
    let split = value.len().checked_sub(1)?;
    let (number, unit) = value.split_at(split);
    let number: i64 = number.parse().ok().filter(|n| *n > 0)?;
    match unit {
        "d" => chrono::Duration::try_days(number),
        "h" => chrono::Duration::try_hours(number),
        "m" => chrono::Duration::try_minutes(number),
        "s" => chrono::Duration::try_seconds(number),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let (a, hash_a) = new_token();
        let (b, _) = new_token();
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX));
        assert_eq!(a.len(), TOKEN_PREFIX.len() + 43);
        assert_eq!(hash_a, hash_token(&a));
        assert_eq!(hash_a.len(), 32);
    }

    #[test]
    fn lifetimes_and_emails() {
        assert_eq!(parse_lifetime("30d"), chrono::Duration::try_days(30));
        assert_eq!(parse_lifetime("2h"), chrono::Duration::try_hours(2));
        assert_eq!(parse_lifetime("0d"), None);
        assert_eq!(parse_lifetime("d"), None);
        assert_eq!(parse_lifetime("10y"), None);
        assert_eq!(normalize_email(" Ann@Example.org "), Some("ann@example.org".into()));
        assert_eq!(normalize_email("nobody"), None);
        assert_eq!(normalize_email("a@b@c"), None);
    }
}
