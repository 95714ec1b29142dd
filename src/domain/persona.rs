//! Personas: who one interview's respondent is, in his own words (`GET
//! /insight/{rec_id}/persona-report`). A persona is written once per version of its
//! record and kept until the record changes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// A sentence the respondent said, with the utterance it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PersonaQuote {
    /// Verbatim, as it stands in the transcript.
    pub text: String,
    pub utterance_id: i64,
}

/// The persona of one interview's respondent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Persona {
    /// The respondent's name as the transcript gives it.
    pub name: String,
    /// Job title or role, when the respondent says it.
    pub role: Option<String>,
    /// Two or three sentences: who this is and what matters to them.
    pub summary: String,
    /// What the respondent says about themselves: team, company, experience, location.
    pub demographics: Option<String>,
    /// What the respondent wants to get done.
    pub goals: Vec<String>,
    /// What gets in the way.
    pub pains: Vec<String>,
    /// How the respondent works today, workarounds included.
    pub behaviors: Vec<String>,
    /// Why it matters to them.
    pub motivations: Vec<String>,
    /// Verbatim quotes that carry the persona.
    pub quotes: Vec<PersonaQuote>,
    /// Jobs to be done: "When ..., I want to ..., so I can ...".
    #[serde(default)]
    pub jobs_to_be_done: Vec<String>,
    /// What the respondent describes as the ideal solution, when he does.
    #[serde(default)]
    pub ideal_solution: Option<String>,
}

super::string_enum! {
    /// Always `completed`.
    PersonaWritten { Completed = "completed" }
}

super::string_enum! {
    /// Always `generating`.
    PersonaInTheWorks { Generating = "generating" }
}

/// A written persona (200).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PersonaReport {
    pub record_id: Uuid,
    pub status: PersonaWritten,
    pub persona: Persona,
    /// The persona as a document: summary, background, jobs to be done, motivations and
    /// pains with quotes, behaviours and workarounds, ideal solution.
    pub markdown: String,
    pub generated_at: DateTime<Utc>,
    /// What wrote it (left out of a shared persona, and of one written before it was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub provenance: Option<crate::domain::usage::Provenance>,
}

/// A persona still being written (202, with `Retry-After`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PersonaPending {
    pub record_id: Uuid,
    pub status: PersonaInTheWorks,
}
