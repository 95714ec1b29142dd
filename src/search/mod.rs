//! Retrieval over utterances: the passages of a project's records most relevant to a
//! question or a report prompt, ranked by BM25 (`bm25.rs`).
//!
//! Indexes live in memory and are built from the database on first use. Each is kept
//! with the versions (`updated_at`) of the records it was built from and rebuilt when a
//! record is added, changed or deleted, so search is always in step with the records;
//! nothing needs to be stored, and a new or restarted instance rebuilds what it needs.

pub mod bm25;
pub mod index;
pub mod indexer;
pub mod web;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use crate::store::{ProjectUtterance, RecordVersion, Store};

/// Projects whose indexes are kept; the least recently built goes first.
const KEPT: usize = 64;

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

struct ProjectIndex {
    versions: Vec<RecordVersion>,
    utterances: Vec<ProjectUtterance>,
    index: bm25::Index<usize>,
    built: u64,
}

/// The index of one record's utterances, at one version of the record.
struct RecordIndex {
    version: chrono::DateTime<chrono::Utc>,
    /// Text bytes of its utterances: what it weighs, roughly.
    bytes: usize,
    utterances: Vec<crate::domain::record::Utterance>,
    index: bm25::Index<usize>,
    built: u64,
}

/// The indexes of recently searched projects and records.
#[derive(Default)]
pub struct Retriever {
    projects: Mutex<HashMap<Uuid, Arc<ProjectIndex>>>,
    records: Mutex<HashMap<Uuid, Arc<RecordIndex>>>,
    builds: std::sync::atomic::AtomicU64,
}

/// Records whose own indexes are kept; the least recently built goes first.
const KEPT_RECORDS: usize = 256;
/// Text bytes of the records whose own indexes are kept (the indexes weigh a few times
/// more); past it the least recently built go first.
const KEPT_RECORD_BYTES: usize = 64 * 1024 * 1024;

impl Retriever {
    /// The `limit` passages of the owner's project most relevant to `query`, best first;
    /// `records` narrows the search to some of its records.
    pub async fn search(
        &self,
        store: &Store,
        owner_id: Uuid,
        project_id: Uuid,
        records: Option<&[Uuid]>,
        query: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<Passage>> {
        let index = self.index(store, owner_id, project_id).await?;
        // Ask for more when narrowing, so the filter still leaves `limit` hits.
        let wanted = if records.is_some() {
            index.utterances.len()
        } else {
            limit
        };
        let hits = index.index.search(query, wanted);
        Ok(hits
            .into_iter()
            .filter_map(|hit| index.utterances.get(hit.key).map(|u| (u, hit.score)))
            .filter(|(u, _)| records.is_none_or(|ids| ids.contains(&u.record_id)))
            .take(limit)
            .map(|(u, score)| Passage {
                record_id: u.record_id,
                utterance_id: u.id,
                speaker: u.speaker.clone(),
                is_respondent: u.is_respondent,
                start_ms: u.start_ms,
                text: u.text.clone(),
                score,
            })
            .collect())
    }

    /// The `limit` passages of one record most relevant to `query`, best first. The
    /// caller has read the record (and checked its owner): `version` is its
    /// `updated_at`, and the record's own index is rebuilt when it moves.
    pub async fn search_record(
        &self,
        store: &Store,
        record: &crate::domain::record::Record,
        query: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<Passage>> {
        let cached = self
            .lock_records()
            .get(&record.id)
            .filter(|index| index.version == record.updated_at)
            .cloned();
        let index = match cached {
            Some(index) => index,
            None => {
                let utterances = store.utterances(record.id).await?;
                let language = record.language.clone();
                let built = self.builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                let version = record.updated_at;
                let bytes = utterances.iter().map(|u| u.text.len() + u.speaker.len()).sum();
                let index = Arc::new(
                    tokio::task::spawn_blocking(move || {
                        let index = bm25::Index::build(
                            utterances
                                .iter()
                                .enumerate()
                                .map(|(i, u)| bm25::Document::new(i, u.text.as_str())),
                            language.as_deref(),
                        );
                        RecordIndex {
                            version,
                            bytes,
                            utterances,
                            index,
                            built,
                        }
                    })
                    .await?,
                );
                let mut records = self.lock_records();
                records.insert(record.id, index.clone());
                while records.len() > KEPT_RECORDS
                    || records.values().map(|index| index.bytes).sum::<usize>() > KEPT_RECORD_BYTES
                {
                    let oldest = records
                        .iter()
                        .filter(|(id, _)| **id != record.id)
                        .min_by_key(|(_, index)| index.built)
                        .map(|(id, _)| *id);
                    match oldest {
                        Some(oldest) => records.remove(&oldest),
                        None => break,
                    };
                }
                index
            }
        };
        Ok(index
            .index
            .search(query, limit)
            .into_iter()
            .filter_map(|hit| index.utterances.get(hit.key).map(|u| (u, hit.score)))
            .map(|(u, score)| Passage {
                record_id: record.id,
                utterance_id: u.id,
                speaker: u.speaker.clone(),
                is_respondent: u.is_respondent,
                start_ms: u.start_ms,
                text: u.text.clone(),
                score,
            })
            .collect())
    }

    fn lock_records(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Arc<RecordIndex>>> {
        self.records.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many indexes were built so far (for tests and metrics).
    pub fn builds(&self) -> u64 {
        self.builds.load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn index(&self, store: &Store, owner_id: Uuid, project_id: Uuid) -> anyhow::Result<Arc<ProjectIndex>> {
        let versions = store.record_versions(owner_id, project_id).await?;
        if let Some(index) = self.lock().get(&project_id).filter(|index| index.versions == versions) {
            return Ok(index.clone());
        }
        let ids: Vec<Uuid> = versions.iter().map(|v| v.id).collect();
        let utterances = store.utterances_of(&ids).await?;
        let language = common_language(&versions);
        let built = self.builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let index = tokio::task::spawn_blocking(move || {
            let index = bm25::Index::build(
                utterances
                    .iter()
                    .enumerate()
                    .map(|(i, u)| bm25::Document::new(i, u.text.as_str())),
                language.as_deref(),
            );
            ProjectIndex {
                versions,
                utterances,
                index,
                built,
            }
        })
        .await?;
        let index = Arc::new(index);
        let mut projects = self.lock();
        if projects.len() >= KEPT && !projects.contains_key(&project_id) {
            let oldest = projects.iter().min_by_key(|(_, index)| index.built).map(|(id, _)| *id);
            if let Some(oldest) = oldest {
                projects.remove(&oldest);
            }
        }
        projects.insert(project_id, index.clone());
        Ok(index)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Arc<ProjectIndex>>> {
        self.projects.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The language all records share, if they do (one index has one language).
fn common_language(versions: &[RecordVersion]) -> Option<String> {
    let mut languages = versions
        .iter()
        .map(|v| v.language.as_deref().map(|l| l.to_ascii_lowercase()));
    let first = languages.next()??;
    let base = |tag: &str| tag.split(['-', '_']).next().unwrap_or(tag).to_owned();
    let first = base(&first);
    languages
        .all(|language| language.is_some_and(|l| base(&l) == first))
        .then_some(first)
}
