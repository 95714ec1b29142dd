//! Retrieval over utterances.

pub mod bm25;
