//! Answering in a conversation, apart from the request that asked.
//!
//! A question about a record ([`record::ask`]) or to the research assistant
//! ([`crate::app::conversation::assistant::ask`]) gathers its material (retrieved passages, report excerpts,
//! web results) and the thread's history, then [`spawn`]s the answer: a task that streams the
//! engine's text as [`Event`]s, checks the answer's quotes against the transcripts,
//! and stores the question with its answer in one transaction. The task does not
//! depend on the client: one that disconnects mid-answer still finds the whole answer
//! in the thread's history.

pub mod assistant;
pub mod record;
pub mod threads;

use std::collections::HashMap;
use std::time::Instant;

use tokio::sync::mpsc;
use uuid::Uuid;

use crate::app::Caller;
use crate::domain::conversation::{
    ChatMessage, ChatThread, Citation, MessageType, RecordCitation, ThreadKind, UtteranceCitation, WebCitation,
};
use crate::domain::report::{Report, ReportStatus};
use crate::engines::ai::conversation::{Answer, Question, ReportExcerpt, Stream, Turn};
use crate::engines::ai::quotes::{check_quotes, resolve_citations};
use crate::engines::ai::{Engine, Source};
use crate::engines::search::bm25;
use crate::engines::search::indexer::Search;
use crate::engines::search::{Passage, Scope};
use crate::error::{Error, UnknownReferences, ValidationIssue};
use crate::store::{Exchange, Store, ThreadTarget};
// The answers in the making are counted by the services, which hold them for every door.
pub use crate::services::{ANSWERS_PER_USER, InFlight, Slot};

/// What an answer's task reports; `T` is what a finished answer is (a chat message,
/// an interviewer's turn).
#[derive(Debug, Clone)]
pub enum Event<T = ChatMessage> {
    /// The next piece of the answer's text.
    Delta(String),
    /// The model server failed mid-answer and the answer starts again: the text so far
    /// is void.
    Reset,
    /// The stored answer.
    Done(T),
    /// Why there is no answer; the question was not stored.
    Error(Failure),
}

/// Why a conversation has no answer, in the use case's words; each door says it in its
/// own (a status and `{detail}`, an SSE `error` event, a tool error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The model, or storing the answer, failed now; asking again may work.
    Unavailable(String),
    /// What the question was about was deleted meanwhile.
    Gone(String),
    /// The conversation takes no answer now (an interview that ended, or another answer
    /// that came in first).
    Closed(String),
}

impl Failure {
    /// The sentence that says why.
    pub fn detail(&self) -> &str {
        match self {
            Failure::Unavailable(detail) | Failure::Gone(detail) | Failure::Closed(detail) => detail,
        }
    }

    /// The use cases' error for it.
    pub fn into_error(self) -> Error {
        match self {
            Failure::Unavailable(detail) => Error::Unavailable(detail),
            Failure::Gone(detail) => Error::NotFound(detail),
            Failure::Closed(detail) => Error::Conflict(detail),
        }
    }
}

/// How an answer's citations name their passages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CitationStyle {
    /// Utterances of the one record the chat is about.
    Utterance,
    /// Utterances of a project's records, with the record named.
    Record,
}

/// A question ready to be answered.
pub struct Pending {
    pub target: ThreadTarget,
    pub question: Question,
    pub style: CitationStyle,
    /// For the research assistant: the project the thread now answers about.
    pub project_id: Option<Uuid>,
    /// The records (id and name) whose transcripts a quote in the answer may come from:
    /// the chat's record, or the project's records.
    pub transcripts: Vec<(Uuid, String)>,
    pub asked_at: chrono::DateTime<chrono::Utc>,
    /// The instance's prices, for the answer's provenance.
    pub prices: crate::domain::usage::Prices,
}

/// A question taken: its answer in the making, or refused because the user has
/// [`ANSWERS_PER_USER`] answers in the making already.
pub enum Asked {
    Answering(mpsc::UnboundedReceiver<Event>),
    Busy,
}

/// The longest question, in characters (as `ChatMessageCreate`'s schema says).
pub const MESSAGE_MAX_CHARS: usize = 20_000;
/// The longest thread title, in characters.
pub const TITLE_MAX_CHARS: usize = 200;

impl Asked {
    /// The stored answer once it is complete, for a client that does not stream (a
    /// console form posted without its script).
    pub async fn finish(self) -> Result<ChatMessage, Error> {
        let mut events = match self {
            Asked::Answering(events) => events,
            Asked::Busy => return Err(busy()),
        };
        while let Some(event) = events.recv().await {
            match event {
                Event::Delta(_) | Event::Reset => {}
                Event::Done(message) => return Ok(message),
                Event::Error(failure) => return Err(Error::Unavailable(failure.detail().to_owned())),
            }
        }
        Err(Error::Unavailable(
            "The answer stopped before it was complete; send the question again.".into(),
        ))
    }
}

/// Why a question is refused while [`ANSWERS_PER_USER`] answers of its asker are in the
/// making; `Retry-After` is two seconds.
pub fn busy() -> Error {
    Error::TooSoon {
        detail: format!(
            "You have {ANSWERS_PER_USER} answers in the making already; send this question when one is done."
        ),
        retry_after: 2,
    }
}

/// Renames one of the owner's threads (for a record chat, one about `record_id`): a
/// blank title is a 422, a thread he does not have a 404.
pub async fn rename_thread(
    store: &Store,
    caller: &Caller,
    kind: ThreadKind,
    thread_id: i64,
    record_id: Option<Uuid>,
    title: &str,
) -> Result<ChatThread, Error> {
    caller.may_change()?;
    let owner_id = caller.id();
    let trimmed = title.trim();
    if trimmed.is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("title", title)]));
    }
    crate::error::check_lengths(&[("title", trimmed, TITLE_MAX_CHARS)])?;
    store
        .rename_chat_thread(owner_id, kind, thread_id, record_id, trimmed)
        .await?
        .ok_or_else(|| Error::not_found("Thread"))
}

/// The thread's messages as the model's history.
pub fn turns(messages: &[ChatMessage]) -> Vec<Turn> {
    messages
        .iter()
        .map(|message| Turn {
            from_user: message.message_type == MessageType::User,
            content: message.content.clone(),
        })
        .collect()
}

/// A question that names no passage (a follow-up such as "tell me more") is searched
/// with the previous question too.
pub fn follow_up_query(message: &str, history: &[Turn]) -> Option<String> {
    history
        .iter()
        .rev()
        .find(|turn| turn.from_user)
        .map(|turn| format!("{message} {}", turn.content))
}

/// A question of only blank space, reported as pydantic reports an empty string.
pub fn blank_message(message: &str) -> Error {
    Error::validation(vec![ValidationIssue::blank("message", message)])
}

/// A thread named in a question's body that the asker cannot see.
pub fn unknown_thread(thread_id: i64) -> Error {
    UnknownReferences::one("thread", thread_id, "thread_id")
}

/// Starts answering; the events come through the returned receiver, and the answer is
/// stored whether or not anyone still listens. `slot` is held until the answer is done.
pub fn spawn(engine: Engine, store: Store, pending: Pending, slot: Slot) -> mpsc::UnboundedReceiver<Event> {
    let (events, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let _slot = slot;
        let started = Instant::now();
        let event = answer(&engine, &store, pending, &events).await;
        let result = match &event {
            Event::Done(_) => "answered",
            _ => "failed",
        };
        metrics::counter!("insight_chat_answers_total", "engine" => engine.name(), "result" => result).increment(1);
        metrics::histogram!("insight_chat_answer_seconds", "engine" => engine.name())
            .record(started.elapsed().as_secs_f64());
        let _ = events.send(event);
    });
    receiver
}

async fn answer(engine: &Engine, store: &Store, pending: Pending, events: &mpsc::UnboundedSender<Event>) -> Event {
    let started = Instant::now();
    let mut on_stream = |piece: Stream<'_>| {
        let _ = events.send(match piece {
            Stream::Text(text) => Event::Delta(text.to_owned()),
            Stream::Restart => Event::Reset,
        });
    };
    let answer = match engine.answer(&pending.question, &mut on_stream).await {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(error = %error, "a chat answer failed");
            return Event::Error(Failure::Unavailable(format!(
                "The model could not answer: {error} The question was not stored; send it again."
            )));
        }
    };
    let (content, sources) = match engine {
        // The offline engine quotes passages as they stand.
        Engine::Offline => (answer.content.clone(), pending.question.passages.clone()),
        Engine::OpenAi(_) => match checked(store, &pending, &answer).await {
            Ok(checked) => checked,
            Err(error) => {
                tracing::error!(error = %format!("{error:#}"), "reading transcripts to check an answer failed");
                return Event::Error(Failure::Unavailable(
                    "The answer could not be checked against the transcripts; the question was not stored. Send it \
                     again."
                        .into(),
                ));
            }
        },
    };
    let (answer_text, citations) = citations(&content, &sources, &pending.question, pending.style);
    let record_ids: Vec<Uuid> = pending.transcripts.iter().map(|(id, _)| *id).collect();
    let records = match store.record_versions(&record_ids).await {
        Ok(records) => records,
        Err(error) => {
            tracing::error!(error = %format!("{error:#}"), "reading the records' versions for an answer failed");
            return Event::Error(Failure::Unavailable(
                "The answer could not be stored; send the question again.".into(),
            ));
        }
    };
    let provenance = crate::app::provenance::provenance(&pending.prices, engine, records, started.elapsed());
    let exchange = Exchange {
        provenance: Some(provenance),
        question: pending.question.message.clone(),
        asked_at: pending.asked_at,
        citations,
        answer: answer_text,
        project_id: pending.project_id,
    };
    match store.add_exchange(&pending.target, &exchange).await {
        Ok(Some(message)) => Event::Done(message),
        Ok(None) => Event::Error(Failure::Gone(
            "The thread was deleted while the answer was written; the answer was not stored.".into(),
        )),
        Err(error) => {
            tracing::error!(error = %format!("{error:#}"), "storing a chat answer failed");
            Event::Error(Failure::Unavailable(
                "The answer could not be stored; send the question again.".into(),
            ))
        }
    }
}

/// The answer's Markdown with every quote checked against the transcripts of the
/// conversation's records (never against report excerpts or web snippets: a report's
/// paraphrase does not make an invented quote true), and those transcripts' utterances.
/// Without any transcript (the research assistant with no project) there is no testimony
/// to check, and the answer stands as written.
async fn checked(store: &Store, pending: &Pending, answer: &Answer) -> anyhow::Result<(String, Vec<Source>)> {
    if pending.transcripts.is_empty() {
        return Ok((answer.content.clone(), Vec::new()));
    }
    let names: HashMap<Uuid, &str> = pending
        .transcripts
        .iter()
        .map(|(id, name)| (*id, name.as_str()))
        .collect();
    let ids: Vec<Uuid> = names.keys().copied().collect();
    let sources: Vec<Source> = store
        .utterances_of(&ids)
        .await?
        .into_iter()
        .map(|u| Source {
            record_id: u.record_id,
            record_name: names.get(&u.record_id).copied().unwrap_or_default().to_owned(),
            utterance_id: u.id,
            speaker: u.speaker,
            is_respondent: u.is_respondent,
            start_ms: u.start_ms,
            text: u.text,
        })
        .collect();
    let checked = check_quotes(&answer.content, &sources);
    if checked.removed + checked.corrected > 0 {
        tracing::info!(
            removed = checked.removed,
            corrected = checked.corrected,
            "quotes of an answer not found where they were cited were corrected or removed"
        );
    }
    Ok((checked.markdown, sources))
}

/// The answer's text and what it cites: every moment of `sources` its citations name, in
/// order of first citation, then the web pages it links. A citation that names no moment
/// is taken out of the text, so that the list holds every citation of the text and only
/// those.
fn citations(content: &str, sources: &[Source], question: &Question, style: CitationStyle) -> (String, Vec<Citation>) {
    let (content, cited) = resolve_citations(content, sources);
    let passages = cited.into_iter().map(|source| match style {
        CitationStyle::Utterance => Citation::Utterance(UtteranceCitation {
            utterance_id: source.utterance_id,
            start_ms: source.start_ms,
            speaker: source.speaker.clone(),
            quote: source.text.clone(),
        }),
        CitationStyle::Record => Citation::Record(RecordCitation {
            record_id: source.record_id,
            record_name: source.record_name.clone(),
            utterance_id: source.utterance_id,
            start_ms: source.start_ms,
            speaker: source.speaker.clone(),
            quote: source.text.clone(),
        }),
    });
    let mut web: Vec<(usize, &crate::providers::web_search::WebResult)> = question
        .web
        .iter()
        .filter_map(|result| content.find(&format!("]({})", result.url)).map(|at| (at, result)))
        .collect();
    web.sort_by_key(|(at, _)| *at);
    let web = web.into_iter().map(|(_, result)| {
        Citation::Web(WebCitation {
            url: result.url.clone(),
            title: result.title.clone(),
        })
    });
    let citations = passages.chain(web).collect();
    (content, citations)
}

/// The `limit` passages of `scope` that answer `message`; for a follow-up with no words of its
/// own to search by ("and why?"), the ones that answer it with the question before.
pub async fn retrieve(
    search: &Search,
    scope: &Scope,
    message: &str,
    history: &[Turn],
    limit: usize,
) -> anyhow::Result<Vec<Passage>> {
    let building = |error| anyhow::Error::from(crate::app::research::search::while_building(error));
    let found = search.passages(scope, message, limit).await.map_err(building)?;
    match follow_up_query(message, history) {
        Some(query) if found.is_empty() => search.passages(scope, &query, limit).await.map_err(building),
        _ => Ok(found),
    }
}

/// Retrieved passages as engine sources, with their records' names.
pub fn sources(passages: Vec<Passage>, names: &HashMap<Uuid, String>) -> Vec<Source> {
    passages
        .into_iter()
        .map(|p| Source {
            record_name: names.get(&p.record_id).cloned().unwrap_or_else(|| "Record".to_owned()),
            record_id: p.record_id,
            utterance_id: p.utterance_id,
            speaker: p.speaker,
            is_respondent: p.is_respondent,
            start_ms: p.start_ms,
            text: p.text,
        })
        .collect()
}

/// Most report excerpts an answer gets.
const EXCERPTS: usize = 3;

/// The paragraphs of the completed reports (those covering `record`, when given) most
/// relevant to `query`, each once: the same quote in several sections or reports is one
/// excerpt, and the offline engine's template lines are none.
pub fn report_excerpts(reports: &[Report], record: Option<Uuid>, query: &str) -> Vec<ReportExcerpt> {
    let mut seen = std::collections::HashSet::new();
    let paragraphs: Vec<(&str, &str)> = reports
        .iter()
        .filter(|report| report.status == ReportStatus::Completed && !report.is_deleted)
        .filter(|report| record.is_none_or(|id| report.records_ids.is_empty() || report.records_ids.contains(&id)))
        .flat_map(|report| {
            let content = report.content.as_deref().unwrap_or_default();
            content
                .split("\n\n")
                .map(str::trim)
                .filter(|paragraph| paragraph.split_whitespace().count() >= 5)
                .filter(|paragraph| !is_template_line(paragraph))
                .map(move |paragraph| (report.title.as_str(), paragraph))
        })
        .filter(|(_, paragraph)| seen.insert(excerpt_key(paragraph)))
        .collect();
    if paragraphs.is_empty() {
        return Vec::new();
    }
    let index = bm25::Index::build(
        paragraphs
            .iter()
            .enumerate()
            .map(|(n, (_, text))| bm25::Document::new(n, text)),
        None,
    );
    index
        .search(query, EXCERPTS)
        .into_iter()
        .filter(|hit| hit.score > 0.0)
        .filter_map(|hit| paragraphs.get(hit.key))
        .map(|(title, text)| ReportExcerpt {
            report_title: (*title).to_owned(),
            text: (*text).to_owned(),
        })
        .collect()
}

/// What makes two paragraphs the same excerpt: their words, whatever the case, spacing and
/// block quote marks.
fn excerpt_key(paragraph: &str) -> String {
    paragraph
        .split_whitespace()
        .filter(|word| *word != ">")
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A line the offline engine writes around its quotes, which says nothing of the material.
fn is_template_line(paragraph: &str) -> bool {
    use crate::engines::ai::report::offline::{ENGINE_NOTE, NOT_COVERED};
    let words: Vec<&str> = paragraph.split_whitespace().collect();
    paragraph.starts_with('#')
        || paragraph == ENGINE_NOTE
        || paragraph == NOT_COVERED
        || matches!(
            words.as_slice(),
            [n, "passage" | "passages", "from", m, "interview" | "interviews"]
                if n.parse::<usize>().is_ok() && m.parse::<usize>().is_ok()
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(title: &str, content: String) -> Report {
        let now = crate::domain::now();
        Report {
            id: Uuid::new_v4(),
            prompts_ids: Vec::new(),
            records_ids: Vec::new(),
            project_id: Uuid::nil(),
            project_name: None,
            category: None,
            title: title.to_owned(),
            context: None,
            context_expand: None,
            status: ReportStatus::Completed,
            content: Some(content),
            is_public: false,
            is_archived: false,
            is_deleted: false,
            preset_id: None,
            report_language: None,
            created_at: now,
            updated_at: now,
            needs_regeneration: None,
        }
    }

    #[test]
    fn report_excerpts_are_distinct_passages_not_template_lines() {
        use crate::domain::report::ReasoningMode;
        use crate::engines::ai::report::offline::write_section;
        use crate::engines::ai::{SectionBrief, Source};
        let sources: Vec<Source> = [
            "The invoices always show the wrong VAT for our Austrian customers.",
            "Our invoices arrive late and the VAT number is missing from half of them.",
            "Fixing the invoices by hand costs my team a full day each month.",
        ]
        .iter()
        .enumerate()
        .map(|(n, text)| Source {
            record_id: Uuid::nil(),
            record_name: "Call".to_owned(),
            utterance_id: n as i64 + 1,
            speaker: "Ada".to_owned(),
            is_respondent: true,
            start_ms: Some(n as i64 * 60_000),
            text: (*text).to_owned(),
        })
        .collect();
        // Two reports of the offline engine quoting the same passages about invoices.
        let section = |title: &str| {
            let brief = SectionBrief {
                title: title.to_owned(),
                prompt: "What problems do customers have with invoices and VAT?".to_owned(),
                research_goals: String::new(),
                interview_guide: String::new(),
                context: None,
                context_expand: None,
                language: Some("en".to_owned()),
                mode: ReasoningMode::Fast,
                quoted_before: Vec::new(),
            };
            write_section(&brief, &sources).markdown
        };
        let reports = [
            report(
                "Billing",
                format!("# Billing\n\n{}\n\n{}", section("Invoices"), section("VAT")),
            ),
            report("Again", format!("# Again\n\n{}", section("Invoices"))),
        ];
        let excerpts = report_excerpts(&reports, None, "invoices VAT passages interviews");
        assert!(excerpts.len() >= 2, "{excerpts:?}");
        let keys: std::collections::HashSet<String> = excerpts.iter().map(|e| excerpt_key(&e.text)).collect();
        assert_eq!(keys.len(), excerpts.len(), "each passage once: {excerpts:?}");
        for excerpt in &excerpts {
            assert!(
                excerpt.text.starts_with("> \""),
                "a quote, not a template line: {excerpt:?}"
            );
        }
    }
}
