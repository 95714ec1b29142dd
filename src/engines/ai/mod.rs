//! AI engines: what writes report sections, answers questions and draws personas from
//! interview material, with a model or without one.
//!
//! [`Engine`] is what callers hold (`INSIGHT_AI`): the offline engine (deterministic,
//! extractive, no network) or the OpenAI-compatible one (any Chat Completions server).
//! The layout, innermost first:
//! - `openai/`: the model client (requests, retries, streams, token counting);
//! - `text.rs`, `prompt.rs`, `quotes.rs`: what every task shares (text on one line and
//!   its comparison form, language names; material as data in a prompt; quote checks);
//! - one module per task, each with its model and offline halves: `report/` (a report
//!   section from a [`SectionBrief`] and the [`Source`] utterances of the report's
//!   records), `chat/` (answers about a record or a project), `persona/` (a record's
//!   respondent).
//!
//! Every quote of what comes back is checked against the transcripts (`quotes.rs`).

use uuid::Uuid;

use crate::domain::report::ReasoningMode;

/// One utterance as material for a report, with the record it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub record_id: Uuid,
    /// The record's name, as citations show it: `[record name, mm:ss]`.
    pub record_name: String,
    pub utterance_id: i64,
    pub speaker: String,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub text: String,
}

/// What one section of a report is to answer, and the study around it.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionBrief {
    /// The prompt's title: the section's heading.
    pub title: String,
    /// The prompt's instructions.
    pub prompt: String,
    pub research_goals: String,
    pub interview_guide: String,
    /// What the reader should know about the study (the report's `context`).
    pub context: Option<String>,
    /// More of it (`context_expand`).
    pub context_expand: Option<String>,
    /// ISO 639-1 code of the language to write in; `None`: the material's language.
    pub language: Option<String>,
    pub mode: ReasoningMode,
    /// The utterances (record, utterance) that earlier sections of the same report quoted:
    /// the offline engine quotes others where it can, so sections do not repeat each other.
    pub quoted_before: Vec<(Uuid, i64)>,
}

/// Tokens an engine used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// A written section: Markdown whose findings cite `[record name, mm:ss]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub markdown: String,
    pub usage: Usage,
    /// The utterances the section quotes, when the engine knows them (the offline engine).
    pub quoted: Vec<(Uuid, i64)>,
}

/// Why an engine could not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AiError {
    /// Worth another attempt later (the model server down, busy, slow).
    Transient(String),
    /// Will not get better by trying again (a bad key, an unknown model, a refusal).
    Permanent(String),
}

impl std::fmt::Display for AiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transient(message) | Self::Permanent(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for AiError {}

pub use crate::domain::record::timestamp;

/// The citation of a source: `[record name, mm:ss]`, or `[record name, #id]` (its
/// utterance number) when the source has no times.
pub fn citation(source: &Source) -> String {
    crate::domain::record::citation(&source.record_name, source.utterance_id, source.start_ms)
}

pub mod citations;
pub mod conversation;
pub mod openai;
pub mod persona;
pub mod prompt;
pub mod quotes;
pub mod report;
pub mod suggest;
pub mod text;
pub mod themes;

/// The engine this instance writes with (`INSIGHT_AI`).
#[derive(Clone)]
pub enum Engine {
    /// Deterministic and extractive; no network.
    Offline,
    /// Any OpenAI-compatible Chat Completions server.
    OpenAi(openai::OpenAiClient),
}

impl Engine {
    /// Writes one section of a report.
    pub async fn write_section(&self, brief: &SectionBrief, sources: &[Source]) -> Result<Section, AiError> {
        match self {
            Self::Offline => {
                let (brief, sources) = (brief.clone(), sources.to_vec());
                tokio::task::spawn_blocking(move || report::offline::write_section(&brief, &sources))
                    .await
                    .map_err(|error| AiError::Permanent(format!("the offline engine stopped: {error}")))
            }
            Self::OpenAi(client) => report::model::write_section(client, brief, sources).await,
        }
    }

    /// Answers a question from its material, streaming the answer's text.
    pub async fn answer(
        &self,
        question: &conversation::Question,
        on_stream: &mut (dyn FnMut(conversation::Stream<'_>) + Send),
    ) -> Result<conversation::Answer, AiError> {
        match self {
            Self::Offline => {
                let answer = conversation::offline_answer(question);
                for line in answer.content.split_inclusive('\n') {
                    on_stream(conversation::Stream::Text(line));
                }
                Ok(answer)
            }
            Self::OpenAi(client) => conversation::model_answer(client, question, on_stream).await,
        }
    }

    /// The persona of a record's respondent.
    pub async fn persona(
        &self,
        record_name: &str,
        utterances: &[crate::domain::record::Utterance],
        language: Option<&str>,
    ) -> Result<(crate::domain::persona::Persona, Usage), AiError> {
        match self {
            Self::Offline => {
                let (name, utterances, language) =
                    (record_name.to_owned(), utterances.to_vec(), language.map(str::to_owned));
                tokio::task::spawn_blocking(move || {
                    (
                        persona::offline_persona(&name, &utterances, language.as_deref()),
                        Usage::default(),
                    )
                })
                .await
                .map_err(|error| AiError::Permanent(format!("the offline engine stopped: {error}")))
            }
            Self::OpenAi(client) => persona::model::model_persona(client, record_name, utterances, language).await,
        }
    }

    /// Passages of the record's respondents that are evidence for the tags.
    pub async fn suggest_highlights(
        &self,
        tags: &[suggest::TagBrief],
        utterances: &[crate::domain::record::Utterance],
        language: Option<&str>,
    ) -> Result<(Vec<suggest::Suggestion>, Usage), AiError> {
        match self {
            Self::Offline => {
                let (tags, utterances, language) = (tags.to_vec(), utterances.to_vec(), language.map(str::to_owned));
                tokio::task::spawn_blocking(move || {
                    (
                        suggest::offline_suggestions(&tags, &utterances, language.as_deref()),
                        Usage::default(),
                    )
                })
                .await
                .map_err(|error| AiError::Permanent(format!("the offline engine stopped: {error}")))
            }
            Self::OpenAi(client) => suggest::model_suggestions(client, tags, utterances, language).await,
        }
    }

    /// Themes for untagged highlights (their texts), each a tag to propose.
    pub async fn propose_themes(
        &self,
        texts: &[String],
        language: Option<&str>,
    ) -> Result<(Vec<themes::Theme>, Usage), AiError> {
        match self {
            Self::Offline => {
                let (texts, language) = (texts.to_vec(), language.map(str::to_owned));
                tokio::task::spawn_blocking(move || {
                    (themes::offline_themes(&texts, language.as_deref()), Usage::default())
                })
                .await
                .map_err(|error| AiError::Permanent(format!("the offline engine stopped: {error}")))
            }
            Self::OpenAi(client) => themes::model_themes(client, texts, language).await,
        }
    }

    /// This engine for one piece of work: concealing personal data with `cloak` in every
    /// model call and charging its tokens to `meter` (the offline engine sends nothing
    /// anywhere, costs nothing, and is itself).
    pub fn for_work(
        &self,
        cloak: crate::engines::privacy::Cloak,
        meter: Option<std::sync::Arc<dyn openai::Meter>>,
    ) -> Self {
        match self {
            Self::Offline => Self::Offline,
            Self::OpenAi(client) => Self::OpenAi(client.for_work(cloak, meter)),
        }
    }

    /// What this engine's calls sent and used since the last take (nothing for the
    /// offline engine), and a fresh start.
    pub fn take_ledger(&self) -> openai::Entries {
        match self {
            Self::Offline => openai::Entries::default(),
            Self::OpenAi(client) => client.ledger().take(),
        }
    }

    /// The model that writes (`offline` for the offline engine).
    pub fn model(&self) -> &str {
        match self {
            Self::Offline => "offline",
            Self::OpenAi(client) => &client.config().model,
        }
    }

    /// What writing these sections would take, before anything is sent; nothing for the
    /// offline engine. The tokens counted are those of the text the model would get:
    /// the material and the briefs as this engine's cloak conceals them.
    pub fn estimate_sections(&self, briefs: &[SectionBrief], sources: &[Source]) -> Result<Usage, AiError> {
        match self {
            Self::Offline => Ok(Usage::default()),
            Self::OpenAi(client) => {
                let cloak = client.cloak();
                let sources: Vec<Source> = sources
                    .iter()
                    .map(|source| Source {
                        record_name: cloak.conceal(&source.record_name),
                        speaker: cloak.conceal(&source.speaker),
                        text: cloak.conceal(&source.text),
                        ..source.clone()
                    })
                    .collect();
                let conceal = |text: &Option<String>| text.as_deref().map(|text| cloak.conceal(text));
                let mut usage = Usage::default();
                for brief in briefs {
                    let brief = SectionBrief {
                        title: cloak.conceal(&brief.title),
                        prompt: cloak.conceal(&brief.prompt),
                        research_goals: cloak.conceal(&brief.research_goals),
                        interview_guide: cloak.conceal(&brief.interview_guide),
                        context: conceal(&brief.context),
                        context_expand: conceal(&brief.context_expand),
                        ..brief.clone()
                    };
                    usage += report::model::estimate_section(client, &brief, &sources)?;
                }
                Ok(usage)
            }
        }
    }

    /// The engine's name, for logs and `/readyz`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Offline => "offline",
            Self::OpenAi(_) => "openai",
        }
    }
}
