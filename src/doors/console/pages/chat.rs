//! Asking questions in the console: the chat panel the record page and the research
//! assistant (`assistant.rs`) share, and the chat beside a record's transcript. Both show a thread's messages rendered on the server
//! (citations link to the moment they cite), list and rename threads, and take a
//! question by a plain form post; `chat.js` sends the same question to the JSON API
//! instead and streams the answer in as it is written.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect};
use axum::routing::post;
use serde::Deserialize;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::conversation;
use crate::app::conversation::assistant;
use crate::domain::conversation::{
    ChatMessage, ChatMessageCreate, ChatThread, MessageType, SearchSettings, ThreadKind,
};
use crate::domain::paging::PageRequest;
use crate::doors::console::PageResult;
use crate::doors::console::markdown::{CitationIndex, render};
use crate::doors::console::session::{Change, Visitor};
use crate::error::Error;
use crate::services::Services;

/// The questions the assistant's draft buttons ask (`draft_request` recognises them).
const DRAFT_GOALS: &str = "Draft research goals for this project.";
const DRAFT_GUIDE: &str = "Draft an interview guide for this project.";

/// Threads listed beside a chat.
pub(super) const THREADS_SHOWN: usize = 30;

/// A chat on a page: its threads, the one shown with its messages, and the form that
/// asks the next question.
pub struct ChatPanel {
    pub heading: &'static str,
    /// The page the panel is on (threads are `?thread=` of it).
    pub page_url: String,
    /// Where the form posts without the script, and where the script streams from.
    pub ask_action: String,
    pub stream_url: String,
    pub rename_action: Option<String>,
    pub threads: Vec<ChatThread>,
    pub current: Option<ChatThread>,
    pub messages: Vec<ShownMessage>,
    /// Whether a web search provider is configured (the switch is hidden otherwise).
    pub web_search: bool,
    /// The research assistant's project, sent with each question.
    pub project_id: Option<Uuid>,
    /// The assistant's workspace: a switch asks across all of its projects.
    pub across: Option<Uuid>,
    /// Whether the draft buttons are offered (the assistant, to those who may write).
    pub drafts: bool,
    pub empty_hint: &'static str,
    pub csrf: String,
}

impl ChatPanel {
    pub fn current_id(&self) -> String {
        self.current.as_ref().map(|t| t.id.to_string()).unwrap_or_default()
    }

    pub fn is_current(&self, thread: &ChatThread) -> bool {
        self.current.as_ref().is_some_and(|current| current.id == thread.id)
    }
}

pub struct ShownMessage {
    pub id: Uuid,
    pub mine: bool,
    /// The question as text, or the answer as sanitised HTML.
    pub text: String,
    pub html: String,
    /// For a draft in an assistant's answer: where to take it into the project.
    pub accept_goals: Option<String>,
    pub accept_guide: Option<String>,
}

/// Which thread a page shows: `?thread=N`, or `?thread=new` for a fresh one.
#[derive(Deserialize, Default)]
pub struct ThreadQuery {
    pub thread: Option<String>,
}

impl ThreadQuery {
    /// `None` asks for the most recent thread, `Some(0)` for a new one.
    pub(super) fn wanted(&self) -> Result<Option<i64>, Error> {
        match self.thread.as_deref().map(str::trim) {
            None | Some("") => Ok(None),
            Some("new") => Ok(Some(0)),
            Some(raw) => raw
                .parse::<i64>()
                .map(Some)
                .map_err(|_| Error::NotFound("No such thread".into())),
        }
    }
}

/// An index of the moments the messages may cite: the records of the project whose
/// names they mention.
pub(super) async fn citation_index(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    messages: &[ChatMessage],
) -> Result<CitationIndex, Error> {
    let mut index = CitationIndex::default();
    for (record, utterances) in conversation::threads::cited_records(services, caller, project_id, messages).await? {
        index.add(record.id, &record.name, utterances.iter().map(|u| (u.id, u.start_ms)));
    }
    Ok(index)
}

pub(super) fn shown(messages: &[ChatMessage], index: &CitationIndex, accept_base: Option<&str>) -> Vec<ShownMessage> {
    messages
        .iter()
        .map(|message| {
            let mine = message.message_type == MessageType::User;
            let (mut accept_goals, mut accept_guide) = (None, None);
            if let (false, Some(base)) = (mine, accept_base) {
                let found = assistant::drafts(&message.content);
                let href = |field: &str| {
                    format!(
                        "{base}?thread={}&message={}&field={field}",
                        message.thread_id, message.id
                    )
                };
                accept_goals = found.research_goals.map(|_| href("research_goals"));
                accept_guide = found.interview_guide.map(|_| href("interview_guide"));
            }
            ShownMessage {
                id: message.id,
                mine,
                text: if mine { message.content.clone() } else { String::new() },
                html: if mine {
                    String::new()
                } else {
                    render(&message.content, index)
                },
                accept_goals,
                accept_guide,
            }
        })
        .collect()
}

/// The chat panel beside a record's transcript.
pub async fn record_panel(
    services: &Services,
    visitor: &Visitor,
    record_id: Uuid,
    project_id: Uuid,
    query: &ThreadQuery,
) -> Result<ChatPanel, Error> {
    let current = match query.wanted()? {
        Some(0) => None,
        wanted => conversation::record::shown_thread(services, &visitor.caller, record_id, wanted).await?,
    };
    let recent = PageRequest {
        limit: THREADS_SHOWN,
        after: None,
    };
    let threads = conversation::threads::of_record(services, &visitor.caller, record_id, &recent)
        .await?
        .items;
    let messages = match &current {
        Some(thread) => conversation::threads::messages(services, thread).await?,
        None => Vec::new(),
    };
    let index = citation_index(services, &visitor.caller, project_id, &messages).await?;
    let page_url = format!("/r/{record_id}");
    Ok(ChatPanel {
        heading: "Ask this interview",
        rename_action: current
            .as_ref()
            .map(|t| format!("/r/{record_id}/chat/threads/{}/rename", t.id)),
        ask_action: format!("/r/{record_id}/chat"),
        stream_url: format!("/insight/{record_id}/chat/"),
        messages: shown(&messages, &index, None),
        page_url,
        threads,
        current,
        web_search: services.web.is_some(),
        project_id: None,
        across: None,
        drafts: false,
        empty_hint: "Ask what this respondent said, felt or wanted; the answer quotes the transcript and links \
                     each quote to its moment.",
        csrf: visitor.csrf.clone(),
    })
}

#[derive(Deserialize)]
pub(super) struct AskForm {
    #[serde(default)]
    message: String,
    #[serde(default)]
    thread_id: String,
    use_web: Option<String>,
    /// The workspace to ask across (the assistant's switch).
    across: Option<String>,
    /// A draft button: `goals` or `guide`.
    draft: Option<String>,
}

impl AskForm {
    pub(super) fn thread_id(&self) -> Option<i64> {
        self.thread_id.trim().parse().ok()
    }

    pub(super) fn across(&self) -> Option<Uuid> {
        self.across.as_deref().and_then(|id| id.trim().parse().ok())
    }

    pub(super) fn message(&self) -> String {
        match self.draft.as_deref() {
            Some("goals") => DRAFT_GOALS.to_owned(),
            Some("guide") => DRAFT_GUIDE.to_owned(),
            _ => self.message.clone(),
        }
    }
}

/// A question about a record posted without the script: answered in full, then the page
/// shows the thread.
async fn ask_record(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, form): Change<AskForm>,
) -> PageResult {
    let body = ChatMessageCreate {
        search_settings: Some(SearchSettings {
            use_web: form.use_web.is_some(),
            search_scope: None,
        }),
        message: form.message(),
        thread_id: form.thread_id(),
    };
    let asked = conversation::record::ask(&services, &visitor.caller, record_id, body).await?;
    let answer = asked.finish().await?;
    Ok(Redirect::to(&format!("/r/{record_id}?thread={}#chat", answer.thread_id)).into_response())
}

#[derive(Deserialize)]
pub(super) struct RenameForm {
    pub(super) title: String,
}

async fn rename_record_thread(
    State(services): State<Services>,
    Path((record_id, thread_id)): Path<(Uuid, i64)>,
    Change(visitor, form): Change<RenameForm>,
) -> PageResult {
    conversation::record::owned_record(&services, &visitor.caller, record_id).await?;
    conversation::rename_thread(
        &services.store,
        &visitor.caller,
        ThreadKind::Record,
        thread_id,
        Some(record_id),
        &form.title,
    )
    .await?;
    Ok(Redirect::to(&format!("/r/{record_id}?thread={thread_id}#chat")).into_response())
}

pub fn routes() -> Router<Services> {
    Router::new().route("/r/{record_id}/chat", post(ask_record)).route(
        "/r/{record_id}/chat/threads/{thread_id}/rename",
        post(rename_record_thread),
    )
}
