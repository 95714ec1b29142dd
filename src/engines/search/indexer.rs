//! Keeps this instance's search index in step with the database. Triggers write every
//! change to the outbox (`search_outbox`); the indexer applies the rows after the last it
//! applied by reading each item again (so a row only says "look again"), and commits the
//! point it reached with the index. A new or stale index (further behind than the outbox
//! keeps) is built from the tables. A `purge` row (`store::SEARCH_PURGE`, written by an
//! erasure or a redaction) asks every instance to rewrite its index without the documents
//! deleted so far, so that their words leave its files too.
//!
//! On PostgreSQL a row with a lower number can commit after a higher one, so the point
//! reached only moves over rows seen; a number missing for [`GAP_PATIENCE`] belongs to a
//! transaction that rolled back and is passed over. Rows seen beyond the point are not
//! applied twice while the process lives, and applying one again after a restart is
//! harmless.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use uuid::Uuid;

use super::bm25;
use super::index::{Entry, Found, Kind, Request, SearchIndex, key};
use crate::store::{OutboxEntry, SEARCH_PURGE, Store};

/// How often the outbox is read: changes made on this instance or another are found
/// within this (plus the commit).
const POLL: Duration = Duration::from_millis(200);
const BATCH: i64 = 500;
/// Records read at once during a build.
const BUILD_BATCH: usize = 50;
const GAP_PATIENCE: Duration = Duration::from_secs(10);
/// How long an erasure or a redaction waits for this instance's index to be purged.
const PURGE_PATIENCE: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct Progress {
    /// Every outbox row up to this one is applied (or passed over).
    watermark: i64,
    /// Rows beyond the watermark already applied.
    applied: BTreeSet<i64>,
    gap_since: Option<Instant>,
}

impl Progress {
    fn advance(&mut self) {
        loop {
            if self.applied.remove(&(self.watermark + 1)) {
                self.watermark += 1;
                self.gap_since = None;
            } else if self.applied.is_empty() {
                self.gap_since = None;
                return;
            } else {
                let since = *self.gap_since.get_or_insert_with(Instant::now);
                if since.elapsed() < GAP_PATIENCE {
                    return;
                }
                self.watermark += 1;
                self.gap_since = None;
            }
        }
    }
}

/// The search service: the index and how far it has caught up.
pub struct Search {
    /// The index in use; a rebuild makes the next one beside it and switches.
    index: RwLock<Arc<SearchIndex>>,
    /// Whether the index in use holds everything up to some point of the outbox (false
    /// while a new one is first built: nothing is answered from half an index).
    complete: watch::Sender<bool>,
    /// Records put into the index being built, and how many there are to put.
    built: (AtomicU64, AtomicU64),
    store: Store,
    progress: Mutex<Progress>,
    /// The highest outbox row applied so far; waited on by [`Search::caught_up`].
    applied: watch::Sender<i64>,
    /// When the last complete pass over the outbox began: every change committed before
    /// then is searchable.
    passed: Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    /// A purge was asked for and has not succeeded yet.
    purge_wanted: AtomicBool,
}

/// How far the clocks of instances sharing a database may drift apart.
const CLOCK_MARGIN: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

fn payload(watermark: i64) -> String {
    format!("{{\"outbox\":{watermark}}}")
}

fn watermark_of(payload: Option<&str>) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_str(payload?).ok()?;
    value["outbox"].as_i64()
}

impl Search {
    /// Opens (or makes) the index under `dir`; it is built or caught up by [`Search::run`].
    pub fn open(store: Store, dir: &Path) -> anyhow::Result<Arc<Self>> {
        let (index, payload) = SearchIndex::open(dir)?;
        let watermark = watermark_of(payload.as_deref()).unwrap_or(-1);
        Ok(Arc::new(Self {
            index: RwLock::new(Arc::new(index)),
            complete: watch::channel(watermark >= 0).0,
            built: (AtomicU64::new(0), AtomicU64::new(0)),
            store,
            progress: Mutex::new(Progress {
                watermark,
                ..Progress::default()
            }),
            applied: watch::channel(watermark).0,
            passed: Mutex::new(None),
            purge_wanted: AtomicBool::new(false),
        }))
    }

    fn watermark(&self) -> i64 {
        self.progress.lock().map_or(-1, |progress| progress.watermark)
    }

    /// The index in use.
    fn live(&self) -> Arc<SearchIndex> {
        self.index
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Searches (on a blocking thread). While a new index is first built (a new
    /// installation, a new version, a lost folder) it waits a moment for the build, then
    /// says the index is being built rather than answer from part of it.
    pub async fn search(&self, request: Request) -> anyhow::Result<(Vec<Found>, usize)> {
        self.complete_within(super::PATIENCE).await?;
        let index = self.live();
        tokio::task::spawn_blocking(move || index.search(&request)).await?
    }

    /// Waits at most `patience` for the index in use to be complete; a use case's
    /// "unavailable" error when it is not.
    async fn complete_within(&self, patience: Duration) -> anyhow::Result<()> {
        let mut complete = self.complete.subscribe();
        if tokio::time::timeout(patience, complete.wait_for(|complete| *complete))
            .await
            .is_ok_and(|waited| waited.is_ok())
        {
            return Ok(());
        }
        Err(super::Building {
            done: self.built.0.load(Ordering::Relaxed),
            total: self.built.1.load(Ordering::Relaxed),
        }
        .into())
    }

    /// Documents in the index and its bytes on disk.
    pub fn size(&self) -> (u64, u64) {
        let index = self.live();
        (index.len(), index.disk_bytes())
    }

    /// Waits until every change committed before the call is searchable, at most `patience`;
    /// whether it was.
    pub async fn caught_up(&self, patience: Duration) -> anyhow::Result<bool> {
        let (_, last) = self.store.outbox_bounds().await?;
        let mut applied = self.applied.subscribe();
        let reached = tokio::time::timeout(patience, applied.wait_for(|seq| *seq >= last)).await;
        Ok(matches!(reached, Ok(Ok(_))))
    }

    /// Waits (at most [`PURGE_PATIENCE`]) until this instance's index has applied every
    /// change committed before the call, the purge an erasure or a redaction asked for
    /// included, so that its answer comes once the words are gone from the index's files
    /// here. Other instances purge theirs when they reach the same outbox row.
    pub async fn purged(&self) {
        match self.caught_up(PURGE_PATIENCE).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!("the search index was not purged in time; it will be when it catches up"),
            Err(error) => tracing::warn!(error = %format!("{error:#}"), "waiting for the search index's purge failed"),
        }
    }

    /// Builds the index when it is new or too far behind, then follows the outbox until
    /// `stopped`.
    pub async fn run(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        loop {
            if let Err(error) = self.step().await {
                tracing::warn!(error = %format!("{error:#}"), "the search index could not catch up; trying again");
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                _ = stopped.changed() => return,
            }
        }
    }

    async fn step(&self) -> anyhow::Result<()> {
        let began = crate::domain::now();
        let (first, last) = self.store.outbox_bounds().await?;
        let watermark = self.watermark();
        if watermark < 0 || (first > 0 && watermark + 1 < first) {
            self.build(last).await?;
        } else {
            while self.catch_up().await? {}
        }
        // A purge that failed before is tried again.
        self.purge().await?;
        if let Ok(mut passed) = self.passed.lock() {
            *passed = Some(began);
        }
        Ok(())
    }

    /// Whether every change committed before `at` is searchable, as the last complete pass
    /// over the outbox tells (with a margin for the clocks of other instances), without
    /// asking the database.
    pub fn holds_changes_before(&self, at: chrono::DateTime<chrono::Utc>) -> bool {
        self.passed
            .lock()
            .ok()
            .and_then(|passed| *passed)
            .is_some_and(|passed| passed > at + CLOCK_MARGIN)
    }

    /// Indexes everything in the tables; the outbox's rows up to `last` are then applied.
    /// A complete index (only too far behind) keeps answering while the next one is built
    /// beside it, and is switched for it once that is committed; a new one is built in
    /// place and answers nothing until it is complete.
    async fn build(&self, last: i64) -> anyhow::Result<()> {
        let started = Instant::now();
        let live = self.live();
        let beside = *self.complete.borrow();
        let target = if beside {
            Arc::new(tokio::task::spawn_blocking(move || live.beside()).await??)
        } else {
            let cleared = live.clone();
            tokio::task::spawn_blocking(move || cleared.clear()).await??;
            live
        };
        let mut ids = Vec::new();
        for kind in ["record", "highlight", "report", "insight"] {
            ids.push((kind, self.store.searchable_ids(kind).await?));
        }
        self.built.0.store(0, Ordering::Relaxed);
        self.built
            .1
            .store(ids.iter().map(|(_, ids)| ids.len() as u64).sum(), Ordering::Relaxed);
        for (kind, ids) in ids {
            for chunk in ids.chunks(BUILD_BATCH) {
                let mut entries = Vec::new();
                for id in chunk {
                    entries.extend(self.entries(kind, *id).await?);
                }
                let target = target.clone();
                tokio::task::spawn_blocking(move || target.add(&entries)).await??;
                self.built.0.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        }
        {
            let target = target.clone();
            let committed = payload(last);
            tokio::task::spawn_blocking(move || target.apply(&[], &[], Some(&committed))).await??;
        }
        if beside {
            let switched = target.clone();
            tokio::task::spawn_blocking(move || switched.make_current()).await??;
            let old = std::mem::replace(
                &mut *self.index.write().unwrap_or_else(std::sync::PoisonError::into_inner),
                target,
            );
            tokio::task::spawn_blocking(move || retire(old));
        }
        if let Ok(mut progress) = self.progress.lock() {
            *progress = Progress {
                watermark: last,
                ..Progress::default()
            };
        }
        self.applied.send_replace(last);
        self.complete.send_replace(true);
        let (documents, bytes) = self.size();
        tracing::info!(
            documents,
            bytes,
            seconds = started.elapsed().as_secs_f64(),
            beside,
            "search index built"
        );
        Ok(())
    }

    /// Applies the next outbox rows; whether there may be more.
    async fn catch_up(&self) -> anyhow::Result<bool> {
        let watermark = self.watermark();
        let rows = self.store.outbox_after(watermark, BATCH).await?;
        let full = rows.len() as i64 == BATCH;
        let fresh: Vec<OutboxEntry> = {
            let progress = self.progress.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
            rows.into_iter()
                .filter(|row| !progress.applied.contains(&row.seq))
                .collect()
        };
        if fresh.is_empty() {
            if let Ok(mut progress) = self.progress.lock() {
                progress.advance();
            }
            return Ok(false);
        }
        let mut seen = HashSet::new();
        let mut removed = Vec::new();
        let mut entries = Vec::new();
        for row in &fresh {
            if row.kind == SEARCH_PURGE {
                self.purge_wanted.store(true, Ordering::SeqCst);
                continue;
            }
            if !seen.insert((row.kind.clone(), row.item_id)) {
                continue;
            }
            let kind = match row.kind.as_str() {
                "record" => Kind::Utterance,
                "highlight" => Kind::Highlight,
                "report" => Kind::Report,
                _ => Kind::Insight,
            };
            removed.push(key(kind, row.item_id));
            entries.extend(self.entries(&row.kind, row.item_id).await?);
        }
        let reached = {
            let mut progress = self.progress.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
            progress.applied.extend(fresh.iter().map(|row| row.seq));
            progress.advance();
            progress.watermark
        };
        self.write(removed, entries, Some(payload(reached))).await?;
        // Before the rows count as applied, so that whoever waits for them (the erasure)
        // finds the files purged. A failure is tried again at the next step.
        if let Err(error) = self.purge().await {
            tracing::warn!(error = %format!("{error:#}"), "the search index could not be purged; trying again");
        }
        // Every row visible when this batch was read is applied now (a row missing from the
        // sequence is not committed yet, or never will be).
        let highest = fresh.iter().map(|row| row.seq).max().unwrap_or(reached);
        self.applied.send_if_modified(|applied| {
            let changed = highest > *applied;
            *applied = (*applied).max(highest);
            changed
        });
        Ok(full)
    }

    /// Rewrites the index without its deleted documents, when a purge is wanted.
    async fn purge(&self) -> anyhow::Result<()> {
        if !self.purge_wanted.load(Ordering::SeqCst) {
            return Ok(());
        }
        let started = Instant::now();
        let index = self.live();
        tokio::task::spawn_blocking(move || index.purge_deleted()).await??;
        self.purge_wanted.store(false, Ordering::SeqCst);
        tracing::info!(
            seconds = started.elapsed().as_secs_f64(),
            "search index rewritten without deleted documents"
        );
        Ok(())
    }

    async fn write(&self, removed: Vec<String>, entries: Vec<Entry>, payload: Option<String>) -> anyhow::Result<()> {
        let index = self.live();
        tokio::task::spawn_blocking(move || index.apply(&removed, &entries, payload.as_deref())).await?
    }

    /// The documents of an item as it is now (none when it is gone).
    async fn entries(&self, kind: &str, id: Uuid) -> anyhow::Result<Vec<Entry>> {
        let store = &self.store;
        Ok(match kind {
            "record" => match store.record_text(id).await? {
                None => Vec::new(),
                Some(record) => {
                    let language = record.language.clone().or_else(|| {
                        bm25::guess_language_of(record.utterances.iter().map(|u| u.text.as_str())).map(str::to_owned)
                    });
                    record
                        .utterances
                        .iter()
                        .filter(|u| !u.text.trim().is_empty())
                        .map(|u| Entry {
                            kind: Kind::Utterance,
                            id: record.id,
                            workspace_id: record.workspace_id,
                            project_id: record.project_id,
                            record_id: Some(record.id),
                            utterance_id: Some(u.id),
                            start_ms: u.start_ms,
                            speaker: Some(u.speaker.clone()),
                            is_respondent: u.is_respondent,
                            tag_ids: Vec::new(),
                            title: record.name.clone(),
                            text: u.text.clone(),
                            language: utterance_language(language.as_deref(), &u.text),
                            date: record.created_at,
                        })
                        .collect()
                }
            },
            "highlight" => match store.highlight_text(id).await? {
                None => Vec::new(),
                Some((highlight, tag_ids)) => {
                    let text = if highlight.note.is_empty() {
                        highlight.quote.clone()
                    } else {
                        format!("{} — {}", highlight.quote, highlight.note)
                    };
                    vec![Entry {
                        kind: Kind::Highlight,
                        id: highlight.id,
                        workspace_id: highlight.workspace_id,
                        project_id: highlight.project_id,
                        record_id: Some(highlight.record_id),
                        utterance_id: Some(highlight.start_utterance),
                        start_ms: highlight.start_ms,
                        speaker: highlight.speaker,
                        is_respondent: highlight.is_respondent,
                        tag_ids,
                        title: highlight.record_name,
                        text,
                        language: highlight.language,
                        date: highlight.created_at,
                    }]
                }
            },
            "report" => match store.report_text(id).await? {
                None => Vec::new(),
                Some(report) => vec![document(Kind::Report, report, Vec::new())],
            },
            _ => match store.insight_text(id).await? {
                None => Vec::new(),
                Some((insight, tag_ids)) => vec![document(Kind::Insight, insight, tag_ids)],
            },
        })
    }
}

/// Removes an index switched out, once the searches still reading it are done (for a
/// while at most: files removed under a reader stay readable to it; blocking).
fn retire(mut old: Arc<SearchIndex>) {
    for _ in 0..500 {
        match Arc::try_unwrap(old) {
            Ok(index) => return index.retire(),
            Err(shared) => old = shared,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    tracing::warn!("an old search index was still being read after 10 s; its files are left for the next start");
}

/// The language an utterance is indexed in: its record's, unless its stop words say
/// clearly it is in another (a German answer in an English interview is stemmed as German).
fn utterance_language(record: Option<&str>, text: &str) -> Option<String> {
    match record {
        Some(record) => Some(bm25::other_language(text, record).map_or_else(|| record.to_owned(), str::to_owned)),
        None => bm25::guess_language(text).map(str::to_owned),
    }
}

fn document(kind: Kind, text: crate::store::DocumentText, tag_ids: Vec<Uuid>) -> Entry {
    Entry {
        kind,
        id: text.id,
        workspace_id: text.workspace_id,
        project_id: text.project_id,
        record_id: None,
        utterance_id: None,
        start_ms: None,
        speaker: None,
        is_respondent: false,
        tag_ids,
        text: format!("{}\n\n{}", text.title, text.body),
        title: text.title,
        language: text.language,
        date: text.created_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_point_reached_moves_over_rows_seen_and_passes_a_lasting_gap() {
        let mut progress = Progress {
            watermark: 4,
            ..Progress::default()
        };
        progress.applied.extend([5, 6, 8]);
        progress.advance();
        assert_eq!(progress.watermark, 6, "7 is not seen yet");
        assert!(progress.gap_since.is_some());
        progress.applied.insert(7);
        progress.advance();
        assert_eq!(progress.watermark, 8);
        assert!(progress.applied.is_empty());
        progress.applied.insert(10);
        progress.advance();
        assert_eq!(progress.watermark, 8);
        progress.gap_since = Some(Instant::now() - GAP_PATIENCE - Duration::from_secs(1));
        progress.advance();
        assert_eq!(progress.watermark, 10, "9 rolled back");
    }

    #[test]
    fn an_utterance_takes_its_record_s_language_unless_it_is_clearly_in_another() {
        let german = "Wir haben die Rechnungen immer zu spät bekommen, und das war für uns ein großes Problem.";
        let english = "We always got the invoices too late, and that was a big problem for us.";
        assert_eq!(utterance_language(Some("en-GB"), german).as_deref(), Some("de"));
        assert_eq!(utterance_language(Some("en-GB"), english).as_deref(), Some("en-GB"));
        assert_eq!(
            utterance_language(Some("en"), "Ja, genau.").as_deref(),
            Some("en"),
            "too short to tell"
        );
        assert_eq!(
            utterance_language(Some("de"), "Invoice INV-2291 EUR 1,200 March 3").as_deref(),
            Some("de"),
            "names and numbers are in no language"
        );
        assert_eq!(utterance_language(None, german).as_deref(), Some("de"));
    }

    #[tokio::test]
    async fn a_new_index_answers_nothing_until_its_build_is_complete() {
        let dir = tempfile::tempdir().expect("dir");
        let url = format!("sqlite://{}", dir.path().join("insight.db").display());
        let store = Store::connect(&url, 2).await.expect("store");
        let search = Search::open(store, &dir.path().join("search")).expect("search");
        let request = || Request {
            query: "pricing".to_owned(),
            workspace_ids: vec![Uuid::new_v4()],
            limit: 10,
            ..Request::default()
        };
        let error = search
            .search(request())
            .await
            .expect_err("no answer from an index not built");
        let building = error
            .downcast_ref::<super::super::Building>()
            .expect("the index is said to be building");
        assert_eq!((building.done, building.total), (0, 0), "{building}");
        search.step().await.expect("build");
        let (found, total) = search.search(request()).await.expect("an answer once built");
        assert!(found.is_empty() && total == 0);
    }

    #[test]
    fn the_payload_says_how_far_the_index_is() {
        assert_eq!(watermark_of(Some(&payload(42))), Some(42));
        assert_eq!(watermark_of(None), None);
        assert_eq!(watermark_of(Some("garbage")), None);
    }
}
