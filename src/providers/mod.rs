//! The providers: what lies outside the product and is reached over the wire or the
//! disk (the outgoing HTTP client, files, mail, single sign-on, LiveKit, web search).

pub mod client;
pub mod files;
pub mod livekit;
pub mod mail;
pub mod oidc;
pub mod web_search;
