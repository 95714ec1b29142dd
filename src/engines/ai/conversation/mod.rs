//! Answering questions: about one record (chat) or across a project (the research
//! assistant). The caller retrieves the material (passages of transcripts, excerpts of
//! reports, web results); an engine answers from it.
//!
//! The model sees the material as data: inside labelled blocks of the last user message
//! (`<transcripts>`, `<reports>`, `<web>`), with the same line format and the same
//! defusing as report writing (`ai/prompt.rs`), and a system prompt that says nothing
//! inside a block is an instruction. The conversation so far goes before it as plain turns,
//! newest kept first when the context window is short. The answer cites passages as
//! `[record name, mm:ss]` (as reports do) and web pages as Markdown links; the citations
//! of a message are the passages and pages its text cites.
//!
//! Here: the question and answer types and the citations of an answer; `model.rs` asks
//! the model, `offline.rs` answers without one.

mod model;
mod offline;

pub use model::{model_answer, request, system_prompt};
pub use offline::{OFFLINE_NOTE, offline_answer};

/// What an answer streams: the model client's pieces (on a retry, the text so far is void).
pub use super::openai::Piece as Stream;
use super::text::{Spaces, normalize, one_line};
use super::{Source, Usage, citation};
use crate::providers::web_search::WebResult;

/// One earlier message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// `true` for the researcher's messages, `false` for answers.
    pub from_user: bool,
    pub content: String,
}

/// A passage of one of the project's reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportExcerpt {
    pub report_title: String,
    pub text: String,
}

/// What the conversation is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// One record (chat about a record).
    Record { name: String },
    /// A project (the research assistant), or none yet.
    Project(Option<ProjectBrief>),
}

/// The study a project is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectBrief {
    pub name: String,
    pub description: String,
    pub research_goals: String,
    pub interview_guide: String,
    pub records_count: usize,
}

/// A question with everything it is answered from.
#[derive(Debug, Clone)]
pub struct Question {
    pub message: String,
    pub history: Vec<Turn>,
    pub subject: Subject,
    /// Retrieved utterances, best first.
    pub passages: Vec<Source>,
    pub reports: Vec<ReportExcerpt>,
    pub web: Vec<WebResult>,
    /// Ask the model to reason at length (the assistant's `thinking` mode).
    pub thinking: bool,
    /// ISO 639-1 code of the material's language, if known.
    pub language: Option<String>,
}

/// An answer: Markdown, with what it cites.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub content: String,
    /// Indexes into [`Question::passages`], in the order the answer first cites them.
    pub passages: Vec<usize>,
    /// Indexes into [`Question::web`], in the order the answer first cites them.
    pub web: Vec<usize>,
    pub usage: Usage,
}

/// The passages and web results `content` cites, each once, in order of first citation.
pub fn cited(content: &str, question: &Question) -> (Vec<usize>, Vec<usize>) {
    let groups = bracket_groups(content);
    let mut passages: Vec<(usize, usize)> = Vec::new();
    for (index, source) in question.passages.iter().enumerate() {
        let full = citation(source);
        let inner = full.trim_start_matches('[').trim_end_matches(']').to_owned();
        let time = inner.rsplit(", ").next().unwrap_or_default().to_owned();
        let record = normalize(&source.record_name);
        let position = content.find(&full).or_else(|| {
            // `[A, 01:02; B, 03:04]`, `[A, 01:02, 01:30]`: the record's name and the time
            // in one bracket group.
            groups
                .iter()
                .find(|(_, group)| {
                    let group_norm = normalize(group);
                    group_norm.contains(&record) && group.split([',', ';', ' ']).any(|part| part.trim() == time)
                })
                .map(|(at, _)| *at)
        });
        if let Some(position) = position {
            passages.push((position, index));
        }
    }
    passages.sort_unstable();
    let mut web: Vec<(usize, usize)> = question
        .web
        .iter()
        .enumerate()
        .filter_map(|(index, result)| content.find(&format!("]({})", result.url)).map(|at| (at, index)))
        .collect();
    web.sort_unstable();
    (
        passages.into_iter().map(|(_, index)| index).collect(),
        web.into_iter().map(|(_, index)| index).collect(),
    )
}

/// `[...]` groups of the text with where each starts.
fn bracket_groups(text: &str) -> Vec<(usize, &str)> {
    let mut groups = Vec::new();
    let mut rest = text;
    let mut offset = 0;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else { break };
        let inner = &after[..close];
        if !inner.contains('\n') {
            groups.push((offset + open, inner));
        }
        let consumed = open + 1 + close + 1;
        offset += consumed;
        rest = &rest[consumed..];
    }
    groups
}
/// What a research assistant question asks to draft, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DraftRequest {
    pub goals: bool,
    pub guide: bool,
}

/// Whether the question asks for research goals or an interview guide.
pub fn draft_request(message: &str) -> Option<DraftRequest> {
    let lower = message.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    let goals = any(&[
        "research goal",
        "research question",
        "study goal",
        "objectives",
        "forschungsziel",
        "objectifs de recherche",
        "objetivos de investigación",
        "цели исследования",
    ]);
    let guide = any(&[
        "interview guide",
        "discussion guide",
        "interview script",
        "interview questions",
        "questions to ask",
        "leitfaden",
        "guide d'entretien",
        "guía de entrevista",
        "гайд",
        "вопросы для интервью",
    ]);
    (goals || guide).then_some(DraftRequest { goals, guide })
}

/// A web result's title as a Markdown link's text.
fn link_text(title: &str) -> String {
    one_line(title, Spaces::Kept).replace(['[', ']'], "")
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    pub(super) fn source(id: i64, start_ms: Option<i64>, speaker: &str, respondent: bool, text: &str) -> Source {
        Source {
            record_id: Uuid::nil(),
            record_name: "Interview Anna".into(),
            utterance_id: id,
            speaker: speaker.into(),
            is_respondent: respondent,
            start_ms,
            text: text.into(),
        }
    }

    pub(super) fn question(passages: Vec<Source>) -> Question {
        Question {
            message: "What did she say about pricing?".into(),
            history: Vec::new(),
            subject: Subject::Record {
                name: "Interview Anna".into(),
            },
            passages,
            reports: Vec::new(),
            web: Vec::new(),
            thinking: false,
            language: None,
        }
    }

    #[test]
    fn citations_are_found_in_order_of_first_use() {
        let q = question(vec![
            source(3, Some(62_000), "Anna", true, "The price is too high for us."),
            source(7, Some(125_000), "Anna", true, "We pay per seat and that hurts."),
            source(9, None, "Anna", true, "Nobody reads the invoice."),
        ]);
        let content = "Seats hurt [Interview Anna, 02:05]; the price is high [Interview Anna, 01:02].";
        assert_eq!(cited(content, &q).0, vec![1, 0]);
        let grouped = "Both [Interview Anna, 01:02; Interview Anna, 02:05] and [interview anna, #9].";
        assert_eq!(cited(grouped, &q).0, vec![0, 1, 2]);
        assert!(cited("No citation here.", &q).0.is_empty());
    }

    #[test]
    fn web_results_are_cited_by_link() {
        let mut q = question(Vec::new());
        q.web = vec![
            WebResult {
                url: "https://a.example/x".into(),
                title: "A".into(),
                snippet: "a".into(),
            },
            WebResult {
                url: "https://b.example/y".into(),
                title: "B".into(),
                snippet: "b".into(),
            },
        ];
        assert_eq!(cited("See [B](https://b.example/y).", &q).1, vec![1]);
    }
}
