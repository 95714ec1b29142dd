//! The research assistant: questions across a project's records and reports (or several
//! projects', or a whole workspace's), answered with citations that name the record, in
//! threads of their own.

use std::collections::HashMap;

use uuid::Uuid;

use crate::app::Caller;
use crate::app::conversation::{
    Asked, CitationStyle, InFlight, Pending, blank_message, report_excerpts, retrieve, sources, turns, unknown_thread,
};
use crate::app::quota::Counted;
use crate::domain::conversation::{AgentChatCreate, AgentMode, ChatThread, ThreadKind, thread_title};
use crate::domain::paging::PageRequest;
use crate::domain::project::Project;
use crate::domain::workspace::Need;
use crate::engines::ai::conversation::{ProjectBrief, Question, Subject};
use crate::engines::search::Scope;
use crate::error::{Error, Result, UnknownReferences, check_lengths};
use crate::services::Services;
use crate::store::{Store, Target, ThreadOwner, ThreadTarget};

/// Passages of the project's records an answer gets.
const PASSAGES: usize = 12;

/// The user's assistant thread named in a path: unknown is a 404.
pub async fn owned_thread(services: &Services, caller: &Caller, thread_id: i64) -> Result<ChatThread> {
    let owner_id = caller.id();
    services
        .store
        .chat_thread(owner_id, ThreadKind::Agent, thread_id, None)
        .await?
        .ok_or_else(|| Error::not_found("Thread"))
}

/// A project named in a body (`project_id`): one the user cannot see is a 409.
pub async fn known_project(store: &Store, caller: &Caller, project_id: Uuid) -> Result<()> {
    let owner_id = caller.id();
    if store.sees_project(owner_id, project_id).await? {
        Ok(())
    } else {
        Err(UnknownReferences::one("project", project_id, "project_id"))
    }
}

/// The projects a question across projects is about: those `project_ids` names (each one
/// the user sees, else a 409), or every project of `workspace_id` (one he belongs to, else
/// a 409), or those of them in it when both are given.
async fn projects_across(
    store: &Store,
    caller: &Caller,
    project_ids: &[Uuid],
    workspace_id: Option<Uuid>,
) -> Result<Vec<Project>> {
    if let Some(workspace_id) = workspace_id {
        caller
            .require_named(store, Target::Workspace(workspace_id), Need::Read, "workspace_id")
            .await?;
    }
    let visible = store.list_projects(caller.id()).await?;
    let unknown: Vec<Uuid> = project_ids
        .iter()
        .filter(|id| !visible.iter().any(|project| project.id == **id))
        .copied()
        .collect();
    let mut references = UnknownReferences::default();
    references.add_all("project", "project_ids", project_ids, &unknown);
    if let Some(error) = references.into_error() {
        return Err(error);
    }
    Ok(visible
        .into_iter()
        .filter(|project| project_ids.is_empty() || project_ids.contains(&project.id))
        .filter(|project| workspace_id.is_none_or(|id| project.workspace_id == id))
        .collect())
}

/// What a question across projects is answered from: the passages the search index finds
/// in their records (every instance's index follows the database within a second; the
/// answer waits that long for it at most), their reports' excerpts, and a brief naming them.
async fn across(
    services: &Services,
    user_id: Uuid,
    projects: &[Project],
    message: &str,
    history: &[crate::engines::ai::conversation::Turn],
) -> Result<(
    ProjectBrief,
    Vec<crate::engines::ai::Source>,
    Vec<crate::engines::ai::conversation::ReportExcerpt>,
    Vec<(Uuid, String)>,
)> {
    let store = &services.store;
    let mut transcripts = Vec::new();
    let mut reports = Vec::new();
    for project in projects {
        let records = store
            .list_records(user_id, project.id, &PageRequest::everything())
            .await?
            .items;
        transcripts.extend(records.iter().map(|r| (r.id, r.name.clone())));
        reports.extend(
            store
                .list_reports(user_id, project.id, true, &PageRequest::everything())
                .await?
                .items,
        );
    }
    let names: HashMap<Uuid, String> = transcripts.iter().cloned().collect();
    let mut workspace_ids: Vec<Uuid> = projects.iter().map(|p| p.workspace_id).collect();
    workspace_ids.sort_unstable();
    workspace_ids.dedup();
    let scope = Scope {
        workspace_ids,
        project_ids: projects.iter().map(|p| p.id).collect(),
        ..Scope::default()
    };
    let passages = if projects.is_empty() {
        Vec::new()
    } else {
        retrieve(&services.search, &scope, message, history, PASSAGES).await?
    };
    let brief = ProjectBrief {
        name: projects.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
        description: format!(
            "A question across {} projects of the user's workspaces.",
            projects.len()
        ),
        research_goals: String::new(),
        interview_guide: String::new(),
        records_count: transcripts.len(),
    };
    Ok((
        brief,
        sources(passages, &names),
        report_excerpts(&reports, None, message),
        transcripts,
    ))
}

/// Takes the user's question and starts its answer, in the thread the question names or
/// in a new one, about the project it names (or the thread's), about several projects
/// (`project_ids`, or every project of `workspace_id`), or about none.
pub async fn ask(services: &Services, caller: &Caller, body: AgentChatCreate) -> Result<Asked> {
    // Asking keeps the question and its answer in a thread: a change.
    caller.may_change()?;
    let user_id = caller.id();
    if body.message.trim().is_empty() {
        return Err(blank_message(&body.message));
    }
    check_lengths(&[("message", &body.message, crate::app::conversation::MESSAGE_MAX_CHARS)])?;
    let store = &services.store;
    let thread = match body.thread_id {
        Some(thread_id) => Some(
            store
                .chat_thread(user_id, ThreadKind::Agent, thread_id, None)
                .await?
                .ok_or_else(|| unknown_thread(thread_id))?,
        ),
        None => None,
    };
    if thread.is_none() {
        services
            .check_quota(Counted::AssistantThreads { owner_id: user_id })
            .await?;
    }
    let project_ids = body.project_ids.clone().unwrap_or_default();
    let scope = if project_ids.is_empty() && body.workspace_id.is_none() {
        None
    } else {
        Some(projects_across(store, caller, &project_ids, body.workspace_id).await?)
    };
    // A question across projects keeps the thread's project (or takes the one named) as
    // the thread's home, and is answered from all of them.
    let project_id = body.project_id.or(thread.as_ref().and_then(|t| t.project_id));
    if let Some(project_id) = body.project_id {
        known_project(store, caller, project_id).await?;
    }
    let project = match project_id {
        Some(project_id) => store.get_project(user_id, project_id).await?,
        None => None,
    };
    let history = match &thread {
        Some(thread) => {
            let messages = store.chat_messages(thread.id).await?;
            crate::app::quota::room_for_an_exchange(messages.len(), &services.settings.quotas)?;
            turns(&messages)
        }
        None => Vec::new(),
    };
    let message = body.message.trim().to_owned();
    let (brief, passages, reports, transcripts) = match (&scope, &project) {
        (Some(projects), _) => {
            let (brief, passages, reports, transcripts) =
                across(services, user_id, projects, &message, &history).await?;
            (Some(brief), passages, reports, transcripts)
        }
        (None, Some(project)) => {
            let records = store
                .list_records(user_id, project.id, &PageRequest::everything())
                .await?
                .items;
            let names: HashMap<Uuid, String> = records.iter().map(|r| (r.id, r.name.clone())).collect();
            let transcripts: Vec<(Uuid, String)> = records.iter().map(|r| (r.id, r.name.clone())).collect();
            let scope = Scope {
                workspace_ids: vec![project.workspace_id],
                project_ids: vec![project.id],
                ..Scope::default()
            };
            let found = retrieve(&services.search, &scope, &message, &history, PASSAGES).await?;
            let reports = store
                .list_reports(user_id, project.id, true, &PageRequest::everything())
                .await?
                .items;
            let brief = ProjectBrief {
                name: project.name.clone(),
                description: project.description.clone(),
                research_goals: project.research_goals.clone(),
                interview_guide: project.interview_guide.clone(),
                records_count: records.len(),
            };
            (
                Some(brief),
                sources(found, &names),
                report_excerpts(&reports, None, &message),
                transcripts,
            )
        }
        (None, None) => (None, Vec::new(), Vec::new(), Vec::new()),
    };
    let target = match &thread {
        Some(thread) => ThreadTarget::Existing {
            owner_id: user_id,
            thread_id: thread.id,
        },
        None => ThreadTarget::New {
            owner: ThreadOwner {
                owner_id: user_id,
                kind: ThreadKind::Agent,
                record_id: None,
                project_id,
            },
            title: thread_title(&message),
        },
    };
    let Some(slot) = InFlight::take(&services.answers, user_id) else {
        return Ok(Asked::Busy);
    };
    let question = Question {
        message,
        history,
        subject: Subject::Project(brief),
        passages,
        reports,
        web: Vec::new(),
        thinking: body.reasoning_mode == Some(AgentMode::Thinking),
        language: None,
    };
    // Every workspace whose material the answer reads is checked and charged (see
    // `engine_for_workspaces`); with no material, the workspace asked over, else the
    // asker's own (its id is his), so that no call goes unpaid.
    let mut workspace_ids: Vec<Uuid> = match (&scope, &project) {
        (Some(projects), _) if !projects.is_empty() => projects.iter().map(|p| p.workspace_id).collect(),
        (Some(_), _) => vec![body.workspace_id.unwrap_or(user_id)],
        (None, Some(project)) => vec![project.workspace_id],
        (None, None) => vec![user_id],
    };
    workspace_ids.sort_unstable();
    workspace_ids.dedup();
    let engine = crate::app::gate::engine_for_workspaces(
        services,
        &workspace_ids,
        project_id,
        crate::domain::usage::UsageKind::Assistant,
        &crate::app::gate::Material {
            speakers: question.passages.iter().map(|p| p.speaker.as_str()).collect(),
            labels: transcripts.iter().map(|(_, name)| name.as_str()).collect(),
            texts: question.passages.iter().map(|p| p.text.as_str()).collect(),
            ..Default::default()
        },
    )
    .await?;
    Ok(Asked::Answering(crate::app::conversation::spawn(
        engine,
        store.clone(),
        Pending {
            target,
            question,
            style: CitationStyle::Record,
            project_id,
            transcripts,
            asked_at: crate::domain::now(),
            prices: services.settings.model.llm_prices.clone(),
        },
        slot,
    )))
}

/// The parts of an assistant's answer a researcher may take as the project's research
/// goals or interview guide: the sections under a heading that names them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Drafts {
    pub research_goals: Option<String>,
    pub interview_guide: Option<String>,
}

/// Finds the drafts in an answer's Markdown. A section runs from its heading to the next
/// heading of the same or a higher level; a draft is never taken from text without one,
/// so an ordinary answer offers nothing to accept.
pub fn drafts(markdown: &str) -> Drafts {
    let lines: Vec<&str> = markdown.lines().collect();
    let heading = |line: &str| -> Option<(usize, String)> {
        let trimmed = line.trim_start();
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        let rest = trimmed.get(level..)?;
        ((1..=6).contains(&level) && rest.starts_with(' ')).then(|| (level, rest.trim().to_lowercase()))
    };
    let section = |wanted: &[&str]| -> Option<String> {
        let (start, level) = lines.iter().enumerate().find_map(|(at, line)| {
            let (level, text) = heading(line)?;
            wanted.iter().any(|w| text.contains(w)).then_some((at, level))
        })?;
        let end = lines[start + 1..]
            .iter()
            .position(|line| heading(line).is_some_and(|(other, _)| other <= level))
            .map_or(lines.len(), |offset| start + 1 + offset);
        let body = lines[start + 1..end].join("\n").trim().to_owned();
        (!body.is_empty()).then_some(body)
    };
    Drafts {
        research_goals: section(&["research goal", "research question", "objectives"]),
        interview_guide: section(&["interview guide", "discussion guide", "interview questions"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drafts_are_the_sections_under_their_headings() {
        let answer = "*A starting draft.*\n\n## Research goals\n\n1. Learn who buys.\n2. Learn why.\n\n\
                      ## Interview guide\n\n**Warm-up**\n1. Tell me about your role.\n### Probes\nWhy?\n\n# Next\nmore";
        let found = drafts(answer);
        assert_eq!(
            found.research_goals.as_deref(),
            Some("1. Learn who buys.\n2. Learn why.")
        );
        assert_eq!(
            found.interview_guide.as_deref(),
            Some("**Warm-up**\n1. Tell me about your role.\n### Probes\nWhy?")
        );
    }

    #[test]
    fn an_ordinary_answer_offers_no_draft() {
        assert_eq!(
            drafts("Anna left because of shipping [Anna, 00:05]."),
            Drafts::default()
        );
        assert_eq!(drafts("## Research goals\n\n## Interview guide\n"), Drafts::default());
        assert_eq!(drafts("#Research goals without a space\n1. x"), Drafts::default());
    }
}
