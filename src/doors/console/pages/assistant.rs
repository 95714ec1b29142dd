//! The research assistant on a project: the chat panel across the project's records,
//! and its drafts of research goals and an interview guide, which become the project's
//! only when the researcher saves them.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::chat::{AskForm, ChatPanel, RenameForm, THREADS_SHOWN, ThreadQuery, citation_index, shown};
use super::{ProjectNav, Shell, project_for};
use crate::app::Caller;
use crate::app::conversation;
use crate::app::conversation::assistant;
use crate::app::projects::ProjectChanges;
use crate::domain::conversation::{AgentChatCreate, ChatThread, MessageType, ThreadKind};
use crate::domain::paging::PageRequest;
use crate::domain::patch::Patch;
use crate::domain::project::Project;
use crate::domain::workspace::Need;
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

#[derive(Template)]
#[template(path = "assistant.html")]
struct AssistantPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    chat: ChatPanel,
}

/// The research assistant on a project: its threads about the project and the one shown.
async fn assistant_page(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<ThreadQuery>,
) -> PageResult {
    let (role, project) = project_for(&services, &visitor, project_id, Need::Read).await?;
    let threads: Vec<ChatThread> =
        conversation::threads::of_assistant(&services, &visitor.caller, &PageRequest::everything())
            .await?
            .items
            .into_iter()
            .filter(|thread| thread.project_id == Some(project_id))
            .take(THREADS_SHOWN)
            .collect();
    let current = match query.wanted()? {
        Some(0) => None,
        Some(thread_id) => Some(project_thread(&services, &visitor.caller, project_id, thread_id).await?),
        None => threads.first().cloned(),
    };
    let messages = match &current {
        Some(thread) => conversation::threads::messages(&services, thread).await?,
        None => Vec::new(),
    };
    let index = citation_index(&services, &visitor.caller, project_id, &messages).await?;
    let can_write = role.allows(Need::Write);
    let accept_base = format!("/p/{project_id}/assistant/accept");
    let chat = ChatPanel {
        heading: "Ask the project",
        page_url: format!("/p/{project_id}/assistant"),
        ask_action: format!("/p/{project_id}/assistant"),
        stream_url: "/agent/chat".to_owned(),
        rename_action: current
            .as_ref()
            .map(|t| format!("/p/{project_id}/assistant/threads/{}/rename", t.id)),
        messages: shown(&messages, &index, can_write.then_some(accept_base.as_str())),
        threads,
        current,
        web_search: false,
        project_id: Some(project_id),
        across: Some(project.workspace_id),
        drafts: can_write,
        empty_hint: "Ask across every interview of this project: what they share, where they differ, who said \
                     what. Each quote links to its moment.",
        csrf: visitor.csrf.clone(),
    };
    let html = AssistantPage {
        shell: Shell::of(&visitor),
        nav: ProjectNav::new(project_id, "assistant"),
        project,
        chat,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

/// The user's assistant thread about this project; another is not found here.
async fn project_thread(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    thread_id: i64,
) -> Result<ChatThread, Error> {
    let thread = assistant::owned_thread(services, caller, thread_id).await?;
    if thread.project_id == Some(project_id) {
        Ok(thread)
    } else {
        Err(Error::NotFound("No such thread in this project".into()))
    }
}

async fn ask_assistant(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<AskForm>,
) -> PageResult {
    project_for(&services, &visitor, project_id, Need::Read).await?;
    if let Some(thread_id) = form.thread_id() {
        project_thread(&services, &visitor.caller, project_id, thread_id).await?;
    }
    let body = AgentChatCreate {
        message: form.message(),
        thread_id: form.thread_id(),
        project_id: Some(project_id),
        project_ids: None,
        workspace_id: form.across(),
        reasoning_mode: None,
    };
    let answer = assistant::ask(&services, &visitor.caller, body).await?.finish().await?;
    Ok(Redirect::to(&format!("/p/{project_id}/assistant?thread={}#chat", answer.thread_id)).into_response())
}

async fn rename_assistant_thread(
    State(services): State<Services>,
    Path((project_id, thread_id)): Path<(Uuid, i64)>,
    Change(visitor, form): Change<RenameForm>,
) -> PageResult {
    project_thread(&services, &visitor.caller, project_id, thread_id).await?;
    conversation::rename_thread(
        &services.store,
        &visitor.caller,
        ThreadKind::Agent,
        thread_id,
        None,
        &form.title,
    )
    .await?;
    Ok(Redirect::to(&format!("/p/{project_id}/assistant?thread={thread_id}#chat")).into_response())
}

/// A project field a draft may fill.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Field {
    ResearchGoals,
    InterviewGuide,
}

impl Field {
    fn label(self) -> &'static str {
        match self {
            Field::ResearchGoals => "Research goals",
            Field::InterviewGuide => "Interview guide",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Field::ResearchGoals => "research_goals",
            Field::InterviewGuide => "interview_guide",
        }
    }
}

#[derive(Deserialize)]
struct AcceptQuery {
    thread: i64,
    message: Uuid,
    field: Field,
}

#[derive(Template)]
#[template(path = "assistant_accept.html")]
struct AcceptPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    label: &'static str,
    field: &'static str,
    now: String,
    draft: String,
    back: String,
    csrf: String,
}

/// Shows a draft from an answer beside what the project has now, to be edited and saved
/// or left; nothing changes until the researcher saves.
async fn accept_form(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<AcceptQuery>,
) -> PageResult {
    let (_, project) = project_for(&services, &visitor, project_id, Need::Write).await?;
    let thread = project_thread(&services, &visitor.caller, project_id, query.thread).await?;
    let message = conversation::threads::messages(&services, &thread)
        .await?
        .into_iter()
        .find(|m| m.id == query.message && m.message_type == MessageType::Assistant)
        .ok_or_else(|| Error::not_found("Message"))?;
    let found = assistant::drafts(&message.content);
    let draft = match query.field {
        Field::ResearchGoals => found.research_goals,
        Field::InterviewGuide => found.interview_guide,
    }
    .ok_or_else(|| Error::NotFound(format!("This answer has no {}", query.field.label().to_lowercase())))?;
    let now = match query.field {
        Field::ResearchGoals => project.research_goals.clone(),
        Field::InterviewGuide => project.interview_guide.clone(),
    };
    let html = AcceptPage {
        shell: Shell::of(&visitor),
        nav: ProjectNav::new(project_id, "assistant"),
        label: query.field.label(),
        field: query.field.name(),
        now,
        draft,
        back: format!("/p/{project_id}/assistant?thread={}#m{}", thread.id, message.id),
        project,
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

#[derive(Deserialize)]
struct AcceptForm {
    field: Field,
    text: String,
}

async fn accept(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<AcceptForm>,
) -> PageResult {
    let text = Patch::Value(form.text.trim().to_owned());
    let changes = match form.field {
        Field::ResearchGoals => ProjectChanges {
            research_goals: text,
            ..ProjectChanges::default()
        },
        Field::InterviewGuide => ProjectChanges {
            interview_guide: text,
            ..ProjectChanges::default()
        },
    };
    crate::app::projects::update(&services, &visitor.caller, project_id, changes).await?;
    Ok(Redirect::to(&format!("/p/{project_id}")).into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/p/{project_id}/assistant", get(assistant_page).post(ask_assistant))
        .route(
            "/p/{project_id}/assistant/threads/{thread_id}/rename",
            post(rename_assistant_thread),
        )
        .route("/p/{project_id}/assistant/accept", get(accept_form).post(accept))
}
