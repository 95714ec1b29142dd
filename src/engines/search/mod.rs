//! Search: the workspace index (tantivy, `index.rs`), kept in step with the database by
//! `indexer.rs`, which chat and the research assistant also retrieve their passages from;
//! the home-made BM25 (`bm25.rs`) that ranks a report's material for the offline engine and
//! a record's sentences for suggestions; and web search (`web.rs`).

pub mod bm25;
pub mod index;
pub mod indexer;

use std::time::Duration;

use uuid::Uuid;

use self::index::{Kind, Request};
use self::indexer::Search;

/// How long a question waits for the index to hold the changes committed before it.
const PATIENCE: Duration = Duration::from_secs(1);

/// A new index is being built: nothing is answered from part of it (a use case says so as
/// "unavailable").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Building {
    /// Items put into the index so far, and how many there are.
    pub done: u64,
    pub total: u64,
}

impl std::fmt::Display for Building {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "The search index is being built ({} of {} items so far); search answers once it is complete. \
             Try again in a minute.",
            self.done, self.total
        )
    }
}

impl std::error::Error for Building {}

/// One passage found.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    pub record_id: Uuid,
    pub utterance_id: i64,
    pub speaker: String,
    pub is_respondent: bool,
    pub start_ms: Option<i64>,
    pub text: String,
    pub score: f32,
}

/// Where passages are looked for. The caller has checked that the user may read all of it.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The workspaces the projects or the record belong to.
    pub workspace_ids: Vec<Uuid>,
    /// Any of these projects (none: every project of the workspaces).
    pub project_ids: Vec<Uuid>,
    pub record_id: Option<Uuid>,
    /// When what is searched last changed, when the caller knows (a record's version): a
    /// change the index already holds needs no look at the database.
    pub changed_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Search {
    /// The `limit` utterances of `scope` most relevant to `query`, best first, once every
    /// change committed before the call is searchable (waiting at most [`PATIENCE`]), or
    /// at once when the index holds the scope's last change.
    pub async fn passages(&self, scope: &Scope, query: &str, limit: usize) -> anyhow::Result<Vec<Passage>> {
        if scope.workspace_ids.is_empty() || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        if !scope.changed_at.is_some_and(|at| self.holds_changes_before(at)) {
            self.caught_up(PATIENCE).await?;
        }
        let request = Request {
            query: query.to_owned(),
            workspace_ids: scope.workspace_ids.clone(),
            project_ids: scope.project_ids.clone(),
            record_id: scope.record_id,
            kind: Some(Kind::Utterance),
            limit,
            retrieval: true,
            ..Request::default()
        };
        let (found, _) = self.search(request).await?;
        Ok(found
            .into_iter()
            .filter_map(|hit| {
                Some(Passage {
                    record_id: hit.record_id?,
                    utterance_id: hit.utterance_id?,
                    speaker: hit.speaker.unwrap_or_default(),
                    is_respondent: hit.is_respondent,
                    start_ms: hit.start_ms,
                    text: hit.text,
                    score: hit.score,
                })
            })
            .collect())
    }
}
