//! The use cases: one module per capability, named for what the user does. Every action
//! of every door is one call of a function here, which checks access and applies the
//! product's rules with the store, the engines and the providers.

pub mod accounts;
pub mod backup;
pub mod caller;
pub mod conversation;
pub mod exports;
pub mod gate;
pub mod interview;
pub mod library;
pub mod persona;
pub mod projects;
pub mod protection;
pub mod provenance;
pub mod quota;
pub mod records;
pub mod reports;
pub mod research;
pub mod webhooks;

pub use caller::Caller;
