//! Writing one section of a report from a [`SectionBrief`](crate::engines::ai::SectionBrief) and the report's
//! utterances: by a model ([`model::write_section`]), or extractively without one
//! ([`offline::write_section`]).

mod findings;
mod messages;
pub mod model;
pub mod offline;
