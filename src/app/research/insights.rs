//! Insights, as every door makes and changes them: a finding of a project with the
//! project's highlights as its evidence (suggestions are not evidence until accepted).

use uuid::Uuid;

use crate::app::Caller;
use crate::domain::insight::{Insight, InsightCreate, InsightUpdate};
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::workspace::Need;
use crate::error::{Error, Result, UnknownReferences, ValidationIssue, check_lengths};
use crate::store::{CreatedKey, Store, Target};

pub const TITLE_MAX_CHARS: usize = 300;
pub const BODY_MAX_CHARS: usize = 50_000;
pub const EVIDENCE_MAX: usize = 200;

fn check_fields(title: &str, body: &str) -> Result<()> {
    if title.trim().is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("title", title)]));
    }
    check_lengths(&[("title", title, TITLE_MAX_CHARS), ("body", body, BODY_MAX_CHARS)])
}

/// The evidence without repeats, each a highlight of the project.
async fn check_evidence(store: &Store, project_id: Uuid, ids: &[Uuid]) -> Result<Vec<Uuid>> {
    let mut unique: Vec<Uuid> = Vec::with_capacity(ids.len());
    for id in ids {
        if !unique.contains(id) {
            unique.push(*id);
        }
    }
    if unique.len() > EVIDENCE_MAX {
        return Err(Error::conflict(format!(
            "An insight cites at most {EVIDENCE_MAX} highlights; group the rest under a tag instead."
        )));
    }
    let unknown = store.unknown_evidence(project_id, &unique).await?;
    let mut references = UnknownReferences::default();
    references.add_all("highlight", "highlight_ids", ids, &unknown);
    references.into_error().map_or(Ok(unique), Err)
}

pub async fn create(store: &Store, caller: &Caller, project_id: Uuid, body: InsightCreate) -> Result<Insight> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Write).await?;
    let text = body.body.unwrap_or_default();
    check_fields(&body.title, &text)?;
    let evidence = check_evidence(store, project_id, &body.highlight_ids).await?;
    let id = store
        .create_insight(user_id, project_id, body.title.trim(), text.trim(), &evidence)
        .await?;
    get(store, caller, id).await
}

pub async fn get(store: &Store, caller: &Caller, insight_id: Uuid) -> Result<Insight> {
    let user_id = caller.id();
    store
        .insights(user_id, None, Some(insight_id), &PageRequest::everything())
        .await?
        .items
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("Insight"))
}

/// A page of the project's insights, newest first.
pub async fn list(
    store: &Store,
    caller: &Caller,
    project_id: Uuid,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Insight, CreatedKey>> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Read).await?;
    Ok(store.insights(user_id, Some(project_id), None, page).await?)
}

/// Changes an insight's title, body or evidence; a field left out stays.
pub async fn update(store: &Store, caller: &Caller, insight_id: Uuid, body: InsightUpdate) -> Result<Insight> {
    let user_id = caller.id();
    let insight = get(store, caller, insight_id).await?;
    caller.require(store, Target::Insight(insight_id), Need::Write).await?;
    let title = body
        .title
        .as_value()
        .map_or(insight.title.clone(), |title| title.trim().to_owned());
    let text = match body.body {
        Patch::Missing => insight.body.clone(),
        Patch::Null => String::new(),
        Patch::Value(text) => text.trim().to_owned(),
    };
    check_fields(&title, &text)?;
    let evidence = match body.highlight_ids {
        Patch::Missing => None,
        Patch::Null => Some(Vec::new()),
        Patch::Value(ids) => Some(check_evidence(store, insight.project_id, &ids).await?),
    };
    if !store
        .update_insight(user_id, insight_id, &title, &text, evidence.as_deref())
        .await?
    {
        return Err(Error::not_found("Insight"));
    }
    get(store, caller, insight_id).await
}

pub async fn delete(store: &Store, caller: &Caller, insight_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    caller.require(store, Target::Insight(insight_id), Need::Write).await?;
    if store.delete_insight(user_id, insight_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Insight"))
    }
}
