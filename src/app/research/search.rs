//! Search across what a user may read: transcripts, highlights, reports and insights of
//! his workspaces (or one workspace, project or record), through the search index.

use uuid::Uuid;

use crate::app::Caller;
use crate::domain::paging::PageRequest;
use crate::domain::search::{HitKind, SearchHit, SearchResults};
use crate::domain::workspace::Need;
use crate::engines::search::index::{Found, Kind, Request};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::Target;

pub const QUERY_MAX_CHARS: usize = 500;

/// What a search asks, before the caller's workspaces are known.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub q: String,
    pub workspace_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
    pub record_id: Option<Uuid>,
    pub tag_id: Option<Uuid>,
    pub speaker: Option<String>,
    pub kind: Option<Kind>,
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    pub to: Option<chrono::DateTime<chrono::Utc>>,
}

fn url(found: &Found) -> String {
    match (found.kind, found.record_id, found.utterance_id) {
        (Kind::Utterance | Kind::Highlight, Some(record), Some(utterance)) => {
            crate::domain::search::moment_path(record, utterance)
        }
        (Kind::Report, _, _) => format!("/p/{}/reports/{}", found.project_id, found.id),
        (Kind::Insight, _, _) => format!("/p/{}/insights#insight-{}", found.project_id, found.id),
        _ => format!("/p/{}", found.project_id),
    }
}

fn hit(found: Found) -> SearchHit {
    SearchHit {
        url: url(&found),
        kind: match found.kind {
            Kind::Utterance => HitKind::Utterance,
            Kind::Highlight => HitKind::Highlight,
            Kind::Report => HitKind::Report,
            Kind::Insight => HitKind::Insight,
        },
        id: found.id,
        project_id: found.project_id,
        record_id: found.record_id,
        utterance_id: found.utterance_id,
        start_ms: found.start_ms,
        speaker: found.speaker,
        title: found.title,
        snippet: found.snippet,
        score: found.score,
    }
}

/// The hits of a page (`page.after` is the offset to start at) and the total.
pub async fn search(
    services: &Services,
    caller: &Caller,
    query: Query,
    page: &PageRequest<i64>,
) -> Result<(SearchResults, Option<i64>)> {
    let user_id = caller.id();
    let q = query.q.trim();
    if q.is_empty() {
        return Err(Error::validation(vec![
            ValidationIssue::new(
                vec![serde_json::json!("query"), serde_json::json!("q")],
                "string_too_short",
                "String should have at least 1 character",
            )
            .with_ctx(serde_json::json!({ "min_length": 1 })),
        ]));
    }
    if q.chars().count() > QUERY_MAX_CHARS {
        return Err(Error::validation(vec![
            ValidationIssue::new(
                vec![serde_json::json!("query"), serde_json::json!("q")],
                "string_too_long",
                format!("String should have at most {QUERY_MAX_CHARS} characters"),
            )
            .with_ctx(serde_json::json!({ "max_length": QUERY_MAX_CHARS })),
        ]));
    }
    let store = &services.store;
    let workspace_ids = match query.workspace_id {
        Some(workspace_id) => {
            caller
                .require(store, Target::Workspace(workspace_id), Need::Read)
                .await?;
            vec![workspace_id]
        }
        None => store
            .workspaces_of(user_id)
            .await?
            .into_iter()
            .map(|workspace| workspace.id)
            .collect(),
    };
    if let Some(project_id) = query.project_id {
        caller.require(store, Target::Project(project_id), Need::Read).await?;
    }
    if let Some(record_id) = query.record_id {
        caller.require(store, Target::Record(record_id), Need::Read).await?;
    }
    if let Some(tag_id) = query.tag_id {
        caller.require(store, Target::Tag(tag_id), Need::Read).await?;
    }
    let offset = page.after.unwrap_or(0).max(0);
    let request = Request {
        query: q.to_owned(),
        workspace_ids,
        project_id: query.project_id,
        project_ids: Vec::new(),
        record_id: query.record_id,
        tag_id: query.tag_id,
        speaker: query.speaker,
        kind: query.kind,
        from: query.from,
        to: query.to,
        limit: page.limit,
        offset: usize::try_from(offset).unwrap_or(0),
        retrieval: false,
    };
    let (found, total) = services.search.search(request).await.map_err(while_building)?;
    let shown = offset + found.len() as i64;
    let next = (shown < total as i64 && !found.is_empty()).then_some(shown);
    let hits = found.into_iter().map(hit).collect();
    Ok((SearchResults { hits, total }, next))
}

/// An index being built is a 503 that says so, not a fault of ours.
pub(crate) fn while_building(error: anyhow::Error) -> Error {
    match error.downcast_ref::<crate::engines::search::Building>() {
        Some(building) => Error::Unavailable(building.to_string()),
        None => error.into(),
    }
}
