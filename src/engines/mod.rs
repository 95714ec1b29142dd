//! The engines: the work done on text itself (the models' tasks, transcript readers,
//! search, and finding personal data), with no knowledge of who asked or of the store.

pub mod ai;
pub mod ingest;
pub mod privacy;
pub mod search;
