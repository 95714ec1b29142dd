//! One module per tag: request types, handlers, and `router()` at the bottom.

pub mod agent;
pub mod auth;
pub mod callbacks;
pub mod chat;
pub mod exchange;
pub mod highlights;
pub mod interview_page;
pub mod interviews;
pub mod me;
pub mod presets;
pub mod privacy;
pub mod projects;
pub mod prompts;
pub mod records;
pub mod reports;
pub mod search;
pub mod sso;
pub mod system;
pub mod tags;
pub mod voice;
pub mod webhooks;
pub mod workspaces;
