//! Records: interview material in a project.

pub mod intake;
pub mod speakers;
pub mod transcription;
