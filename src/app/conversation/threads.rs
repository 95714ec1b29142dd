//! A person's chat threads, about one record or with the research assistant: listing them,
//! starting, renaming and deleting one, and reading its messages. Every door lists and
//! reads threads through here, so a thread is only ever read by its owner.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::quota::Counted;
use crate::domain::conversation::{ChatMessage, ChatThread, Citation, MessageType, ThreadKind};
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::record::{Record, Utterance};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::ThreadOwner;

pub use crate::store::{MessageKey, ThreadKey};

/// A page of the user's threads about the record, most recently active first.
pub async fn of_record(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    page: &PageRequest<ThreadKey>,
) -> Result<Page<ChatThread, ThreadKey>> {
    let user_id = caller.id();
    super::record::owned_record(services, caller, record_id).await?;
    Ok(services
        .store
        .chat_threads(user_id, ThreadKind::Record, Some(record_id), page)
        .await?)
}

/// A page of the user's research-assistant threads, most recently active first.
pub async fn of_assistant(
    services: &Services,
    caller: &Caller,
    page: &PageRequest<ThreadKey>,
) -> Result<Page<ChatThread, ThreadKey>> {
    let user_id = caller.id();
    Ok(services
        .store
        .chat_threads(user_id, ThreadKind::Agent, None, page)
        .await?)
}

/// A page of a thread's messages, oldest first. The thread is one a use case found to be
/// the caller's (`record::shown_thread`, `assistant::owned_thread`).
pub async fn messages_page(
    services: &Services,
    thread: &ChatThread,
    page: &PageRequest<MessageKey>,
) -> Result<Page<ChatMessage, MessageKey>> {
    Ok(services.store.chat_messages_page(thread.id, page).await?)
}

/// Every message of a thread found to be the caller's, oldest first.
pub async fn messages(services: &Services, thread: &ChatThread) -> Result<Vec<ChatMessage>> {
    Ok(services.store.chat_messages(thread.id).await?)
}

/// A new, empty thread of the user's about the record.
pub async fn start_about_record(services: &Services, caller: &Caller, record_id: Uuid) -> Result<ChatThread> {
    caller.may_change()?;
    let user_id = caller.id();
    super::record::owned_record(services, caller, record_id).await?;
    services
        .check_quota(Counted::RecordThreads {
            owner_id: user_id,
            record_id,
        })
        .await?;
    let owner = ThreadOwner {
        owner_id: user_id,
        kind: ThreadKind::Record,
        record_id: Some(record_id),
        project_id: None,
    };
    Ok(services.store.create_chat_thread(owner, "New chat").await?)
}

fn blank_title(title: &str) -> Error {
    Error::validation(vec![ValidationIssue::blank("title", title)])
}

/// A new, empty research-assistant thread, about a project of the user's when one is
/// named (one he cannot see is a 409), titled "New chat" unless a title is given.
pub async fn start_with_assistant(
    services: &Services,
    caller: &Caller,
    project_id: Option<Uuid>,
    title: Option<&str>,
) -> Result<ChatThread> {
    caller.may_change()?;
    let user_id = caller.id();
    if let Some(project_id) = project_id {
        crate::app::conversation::assistant::known_project(&services.store, caller, project_id).await?;
    }
    if let Some(title) = title.filter(|title| title.trim().is_empty()) {
        return Err(blank_title(title));
    }
    services
        .check_quota(Counted::AssistantThreads { owner_id: user_id })
        .await?;
    let title = title.map_or("New chat", str::trim);
    let owner = ThreadOwner {
        owner_id: user_id,
        kind: ThreadKind::Agent,
        record_id: None,
        project_id,
    };
    Ok(services.store.create_chat_thread(owner, title).await?)
}

/// Renames a research-assistant thread of the user's or points it at another project of
/// his; a field left out stays.
pub async fn change_assistant_thread(
    services: &Services,
    caller: &Caller,
    thread_id: i64,
    title: Patch<String>,
    project_id: Patch<Uuid>,
) -> Result<ChatThread> {
    caller.may_change()?;
    let user_id = caller.id();
    crate::app::conversation::assistant::owned_thread(services, caller, thread_id).await?;
    if let Patch::Value(project_id) = project_id {
        crate::app::conversation::assistant::known_project(&services.store, caller, project_id).await?;
    }
    let title = match title {
        Patch::Value(title) if title.trim().is_empty() => return Err(blank_title(&title)),
        Patch::Value(title) => Patch::Value(title.trim().to_owned()),
        _ => Patch::Missing,
    };
    services
        .store
        .update_agent_thread(user_id, thread_id, &title, &project_id)
        .await?
        .ok_or_else(|| Error::not_found("Thread"))
}

/// Deletes a research-assistant thread of the user's with its messages.
pub async fn delete_assistant_thread(services: &Services, caller: &Caller, thread_id: i64) -> Result<()> {
    caller.may_change()?;
    let user_id = caller.id();
    if services
        .store
        .delete_chat_thread(user_id, ThreadKind::Agent, thread_id)
        .await?
    {
        Ok(())
    } else {
        Err(Error::not_found("Thread"))
    }
}

/// The records the answers among `messages` may cite, each with its transcript, for links
/// to the moments they quote: the records of the project, and those of other projects an
/// answer across projects cites, that an answer names.
pub async fn cited_records(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    messages: &[ChatMessage],
) -> Result<Vec<(Record, Vec<Utterance>)>> {
    let user_id = caller.id();
    let answers: Vec<&str> = messages
        .iter()
        .filter(|m| m.message_type == MessageType::Assistant)
        .map(|m| m.content.as_str())
        .collect();
    if answers.is_empty() {
        return Ok(Vec::new());
    }
    let store = &services.store;
    let mut records = store
        .list_records(user_id, project_id, &PageRequest::everything())
        .await?
        .items;
    let cited: std::collections::BTreeSet<Uuid> = messages
        .iter()
        .flat_map(|m| m.citations.iter())
        .filter_map(|citation| match citation {
            Citation::Record(cited) => Some(cited.record_id),
            _ => None,
        })
        .filter(|id| !records.iter().any(|record| record.id == *id))
        .collect();
    for record_id in cited {
        if let Some(record) = store.get_record(user_id, record_id).await? {
            records.push(record);
        }
    }
    let mut found = Vec::new();
    for record in records {
        if answers.iter().any(|answer| answer.contains(record.name.as_str())) {
            let utterances = store.utterances(record.id).await?;
            found.push((record, utterances));
        }
    }
    Ok(found)
}
