//! Asking about one record: the question is answered from the record's transcript, its
//! project's reports and, when asked for, the web; quotes are checked against the
//! transcripts the answer may cite.

use std::collections::HashMap;

use uuid::Uuid;

use super::{Asked, CitationStyle, InFlight, Pending, blank_message, turns, unknown_thread};
use crate::app::Caller;
use crate::app::quota::Counted;
use crate::domain::conversation::{ChatMessageCreate, ChatThread, SearchScope, ThreadKind, thread_title};
use crate::domain::paging::PageRequest;
use crate::domain::record::Record;
use crate::engines::ai::conversation::{Question, Subject};
use crate::engines::search::Scope;
use crate::error::{Error, Result, check_lengths};
use crate::services::Services;
use crate::store::{ThreadOwner, ThreadTarget};

/// Passages of the record an answer gets.
const PASSAGES: usize = 8;
/// Web results an answer gets.
const WEB_RESULTS: usize = 5;

/// The record, if it is the user's.
pub async fn owned_record(services: &Services, caller: &Caller, record_id: Uuid) -> Result<Record> {
    let owner_id = caller.id();
    services
        .store
        .get_record(owner_id, record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))
}

/// The thread of the user's chat about the record to show: the one asked for (another
/// is a 404), else the most recently active, else none yet.
pub async fn shown_thread(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    thread_id: Option<i64>,
) -> Result<Option<ChatThread>> {
    let user_id = caller.id();
    owned_record(services, caller, record_id).await?;
    let store = &services.store;
    match thread_id {
        Some(thread_id) => store
            .chat_thread(user_id, ThreadKind::Record, thread_id, Some(record_id))
            .await?
            .map(Some)
            .ok_or_else(|| Error::not_found("Thread")),
        None => Ok(store
            .chat_threads(
                user_id,
                ThreadKind::Record,
                Some(record_id),
                &PageRequest { limit: 1, after: None },
            )
            .await?
            .items
            .into_iter()
            .next()),
    }
}

/// Takes the user's question about the record and starts its answer, in the thread the
/// question names or in a new one.
pub async fn ask(services: &Services, caller: &Caller, record_id: Uuid, body: ChatMessageCreate) -> Result<Asked> {
    // Asking keeps the question and its answer in a thread: a change.
    caller.may_change()?;
    let user_id = caller.id();
    if body.message.trim().is_empty() {
        return Err(blank_message(&body.message));
    }
    check_lengths(&[("message", &body.message, super::MESSAGE_MAX_CHARS)])?;
    let store = &services.store;
    let settings = body.search_settings.clone().unwrap_or_default();
    let scope = settings.search_scope.unwrap_or(SearchScope::All);
    // The record and its project's reports, read at once.
    let reports = async {
        if scope == SearchScope::Transcript {
            return anyhow::Ok(Vec::new());
        }
        store.completed_reports_around(user_id, record_id).await
    };
    let (record, reports) = tokio::join!(owned_record(services, caller, record_id), reports);
    let (record, reports) = (record?, reports?);
    let (target, history) = match body.thread_id {
        Some(thread_id) => {
            store
                .chat_thread(user_id, ThreadKind::Record, thread_id, Some(record_id))
                .await?
                .ok_or_else(|| unknown_thread(thread_id))?;
            let messages = store.chat_messages(thread_id).await?;
            crate::app::quota::room_for_an_exchange(messages.len(), &services.settings.quotas)?;
            (
                ThreadTarget::Existing {
                    owner_id: user_id,
                    thread_id,
                },
                turns(&messages),
            )
        }
        None => {
            services
                .check_quota(Counted::RecordThreads {
                    owner_id: user_id,
                    record_id,
                })
                .await?;
            (
                ThreadTarget::New {
                    owner: ThreadOwner {
                        owner_id: user_id,
                        kind: ThreadKind::Record,
                        record_id: Some(record_id),
                        project_id: None,
                    },
                    title: thread_title(&body.message),
                },
                Vec::new(),
            )
        }
    };
    let web_search = match (settings.use_web, &services.web) {
        (false, _) => None,
        (true, Some(web)) => Some(web),
        (true, None) => {
            return Err(Error::Unavailable(
                "Web search is not configured: set INSIGHT_SEARCH_PROVIDER (searxng, brave or tavily) and \
                 INSIGHT_SEARCH_BASE_URL / INSIGHT_SEARCH_API_KEY, or send use_web: false."
                    .into(),
            ));
        }
    };
    let message = body.message.trim().to_owned();
    let names = HashMap::from([(record.id, record.name.clone())]);
    let passages = if scope == SearchScope::Report {
        Vec::new()
    } else {
        let workspace_ids = store.project_workspace(record.project_id).await?.into_iter().collect();
        let scope = Scope {
            workspace_ids,
            record_id: Some(record.id),
            changed_at: Some(record.updated_at),
            ..Scope::default()
        };
        super::retrieve(&services.search, &scope, &message, &history, PASSAGES).await?
    };
    let passages = super::sources(passages, &names);
    let reports = super::report_excerpts(&reports, Some(record_id), &message);
    // Quotes in an answer come from this transcript or, through the reports, from any of
    // the project's.
    let transcripts = if reports.is_empty() {
        vec![(record.id, record.name.clone())]
    } else {
        store
            .list_records(user_id, record.project_id, &PageRequest::everything())
            .await?
            .items
            .into_iter()
            .map(|r| (r.id, r.name))
            .collect()
    };
    let web = match web_search {
        Some(web) => web
            .search(&message, WEB_RESULTS)
            .await
            .map_err(|error| Error::Unavailable(format!("Web search failed: {error}")))?,
        None => Vec::new(),
    };
    let Some(slot) = InFlight::take(&services.answers, user_id) else {
        return Ok(Asked::Busy);
    };
    let question = Question {
        message,
        history,
        subject: Subject::Record {
            name: record.name.clone(),
        },
        passages,
        reports,
        web,
        thinking: false,
        language: record.language.clone(),
    };
    // Every speaker of the record is a name to conceal, said in the passages or not.
    let speakers = if matches!(services.engine, crate::engines::ai::Engine::Offline) {
        Vec::new()
    } else {
        store.record_speakers(record.id).await?
    };
    let engine = crate::app::gate::engine_for_new_work(
        services,
        record.project_id,
        crate::domain::usage::UsageKind::Chat,
        &crate::app::gate::Material {
            speakers: speakers
                .iter()
                .map(String::as_str)
                .chain(question.passages.iter().map(|p| p.speaker.as_str()))
                .collect(),
            labels: transcripts.iter().map(|(_, name)| name.as_str()).collect(),
            texts: question.passages.iter().map(|p| p.text.as_str()).collect(),
            ..Default::default()
        },
    )
    .await?;
    Ok(Asked::Answering(super::spawn(
        engine,
        store.clone(),
        Pending {
            target,
            question,
            style: CitationStyle::Utterance,
            project_id: None,
            transcripts,
            asked_at: crate::domain::now(),
            prices: services.settings.model.llm_prices.clone(),
        },
        slot,
    )))
}
