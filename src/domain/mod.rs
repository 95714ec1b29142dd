//! Plain types and rules per resource, in the researcher's words. No axum, no sqlx:
//! these are what the store returns and what the API serialises, field for field as the
//! interface document lists them.

pub mod conversation;
pub mod exchange;
pub mod highlight;
pub mod insight;
pub mod interview;
pub mod job;
pub mod paging;
pub mod patch;
pub mod persona;
pub mod preset;
pub mod privacy;
pub mod project;
pub mod quota;
pub mod record;
pub mod report;
pub mod search;
pub mod system_presets;
pub mod tag;
pub mod theme;
pub mod usage;
pub mod user;
pub mod webhook;
pub mod workspace;

use chrono::{DateTime, SubsecRound, Utc};

/// The client's address, as rate limits, logs and the audit see it (the server puts it
/// in each request's extensions; see `http/client.rs` for proxies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

/// Now, at the precision every backend keeps (microseconds), so that what a write
/// returns equals what a later read returns.
pub fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// Defines a string enum whose wire names are given explicitly, with `as_str`/`parse`
/// for the store and `ToSchema` for the API document.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $wire:tt),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        pub enum $name {
            $(#[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every wire name, in the order declared.
            pub const NAMES: &'static [&'static str] = &[$($wire),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            pub fn parse(value: &str) -> Option<Self> {
                match value { $($wire => Some($name::$variant),)+ _ => None }
            }
        }
    };
}
pub(crate) use string_enum;

/// NUL characters leave a body's strings, at every door: no database stores one in text
/// (PostgreSQL refuses it), and it means nothing there. The JSON door drops them after
/// its schema's checks, which count them as the document says.
pub fn drop_nul(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(text) if text.contains('\0') => text.retain(|c| c != '\0'),
        Value::Array(items) => items.iter_mut().for_each(drop_nul),
        Value::Object(fields) => fields.values_mut().for_each(drop_nul),
        _ => {}
    }
}
