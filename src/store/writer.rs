//! Group commit for SQLite.
//!
//! With `synchronous=FULL` every commit waits for the disk to flush the write-ahead log,
//! and one flush costs far more than the statements before it. So writes that arrive
//! together share a commit: each runs in its own savepoint inside one open transaction
//! (its failure rolls back only its own statements), and a committer task commits the
//! transaction once the writes queued so far have run, then tells each of them how the
//! commit went. A write is acknowledged only after the commit that holds it, so nothing
//! acknowledged is lost in a crash; under load, many writes cost one flush.
//!
//! The batch forms by itself: while the committer flushes, arriving writes queue on the
//! (first-in, first-out) lock; when it is released they run one after another, and the
//! committer, queued behind them, commits them all.
//!
//! A write whose future is dropped half-way (a client gone) leaves a note; the next
//! holder of the lock rolls its savepoint back before doing anything else.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use sqlx::{Executor, Transaction};
use tokio::sync::{Mutex, Notify, OwnedMutexGuard, oneshot};

const SAVEPOINT: &str = "SAVEPOINT insight_write";
const RELEASE: &str = "RELEASE insight_write";
const ROLLBACK: &str = "ROLLBACK TO insight_write";

type CommitResult = Result<(), String>;

#[derive(Debug)]
struct Batch {
    /// The open transaction that holds the writes of this batch.
    tx: Option<Transaction<'static, Sqlite>>,
    /// A write left its savepoint open (its future was dropped): roll it back first.
    abandoned: bool,
    /// The writes waiting for this batch's commit.
    waiters: Vec<oneshot::Sender<CommitResult>>,
    closed: bool,
}

#[derive(Debug)]
struct Inner {
    pool: SqlitePool,
    batch: Arc<Mutex<Batch>>,
    commit_wanted: Notify,
    /// Commits made, for tests and the curious.
    commits: AtomicU64,
}

/// The one writer of a SQLite database.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    inner: Arc<Inner>,
}

/// A write in progress: the lock on the batch, inside the write's own savepoint.
pub(crate) struct WriteGuard {
    batch: Option<OwnedMutexGuard<Batch>>,
    inner: Arc<Inner>,
}

impl Writer {
    /// Takes the (single-connection) writer pool and starts the committer task.
    pub(crate) fn start(pool: SqlitePool) -> Self {
        let inner = Arc::new(Inner {
            pool,
            batch: Arc::new(Mutex::new(Batch {
                tx: None,
                abandoned: false,
                waiters: Vec::new(),
                closed: false,
            })),
            commit_wanted: Notify::new(),
            commits: AtomicU64::new(0),
        });
        tokio::spawn(committer(inner.clone()));
        Self { inner }
    }

    /// The pool itself, for work that must run outside a transaction (migrations).
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.inner.pool
    }

    /// Starts a write: joins (or opens) the batch's transaction and opens a savepoint.
    pub(crate) async fn begin(&self) -> Result<WriteGuard, sqlx::Error> {
        let mut batch = self.inner.batch.clone().lock_owned().await;
        if batch.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        batch.roll_back_abandoned().await?;
        if batch.tx.is_none() {
            // IMMEDIATE takes the write lock at once, so a write that reads first cannot
            // fail with SQLITE_BUSY_SNAPSHOT when another process (the CLI) wrote between.
            batch.tx = Some(self.inner.pool.begin_with("BEGIN IMMEDIATE").await?);
        }
        batch.connection()?.execute(SAVEPOINT).await?;
        batch.abandoned = true;
        Ok(WriteGuard {
            batch: Some(batch),
            inner: self.inner.clone(),
        })
    }

    /// How many transactions have been committed.
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.inner.commits.load(Ordering::Relaxed)
    }

    /// Commits what is pending and stops taking writes.
    pub(crate) async fn close(&self) {
        let mut batch = self.inner.batch.lock().await;
        batch.closed = true;
        let _ = batch.commit().await;
        drop(batch);
        self.inner.commit_wanted.notify_one();
        self.inner.pool.close().await;
    }
}

impl Batch {
    fn connection(&mut self) -> Result<&mut SqliteConnection, sqlx::Error> {
        match self.tx.as_mut() {
            Some(tx) => Ok(&mut **tx),
            None => Err(sqlx::Error::WorkerCrashed),
        }
    }

    async fn roll_back_abandoned(&mut self) -> Result<(), sqlx::Error> {
        if self.abandoned {
            let connection = self.connection()?;
            connection.execute(ROLLBACK).await?;
            connection.execute(RELEASE).await?;
            self.abandoned = false;
        }
        Ok(())
    }

    /// Commits the open transaction, if any, and tells its writes how it went.
    async fn commit(&mut self) -> CommitResult {
        let result = match self.roll_back_abandoned().await {
            Err(error) => Err(error),
            Ok(()) => match self.tx.take() {
                Some(tx) => tx.commit().await,
                None => Ok(()),
            },
        };
        let result = result.map_err(|error| error.to_string());
        if result.is_err() {
            // A failed commit leaves nothing behind: the next write opens a new transaction.
            self.tx = None;
            self.abandoned = false;
        }
        for waiter in self.waiters.drain(..) {
            let _ = waiter.send(result.clone());
        }
        result
    }
}

impl WriteGuard {
    /// The connection, inside this write's savepoint.
    pub(crate) fn connection(&mut self) -> Result<&mut SqliteConnection, sqlx::Error> {
        match self.batch.as_mut() {
            Some(batch) => batch.connection(),
            None => Err(sqlx::Error::WorkerCrashed),
        }
    }

    /// Ends the write: keeps its statements (`keep`) or rolls them back, then waits for
    /// the commit that makes them durable.
    pub(crate) async fn finish(mut self, keep: bool) -> Result<(), sqlx::Error> {
        let Some(mut batch) = self.batch.take() else {
            return Err(sqlx::Error::WorkerCrashed);
        };
        let connection = batch.connection()?;
        if !keep {
            connection.execute(ROLLBACK).await?;
        }
        connection.execute(RELEASE).await?;
        batch.abandoned = false;
        let (sender, receiver) = oneshot::channel();
        batch.waiters.push(sender);
        drop(batch);
        self.inner.commit_wanted.notify_one();
        match receiver.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(message)) => Err(sqlx::Error::Io(std::io::Error::other(format!(
                "commit failed: {message}"
            )))),
            Err(_) => Err(sqlx::Error::PoolClosed),
        }
    }
}

impl Drop for WriteGuard {
    fn drop(&mut self) {
        // Dropped before `finish`: the savepoint stays marked abandoned, and the
        // committer (or the next write) rolls it back.
        if self.batch.take().is_some() {
            self.inner.commit_wanted.notify_one();
        }
    }
}

async fn committer(inner: Arc<Inner>) {
    loop {
        inner.commit_wanted.notified().await;
        let mut batch = inner.batch.lock().await;
        let had_writes = batch.tx.is_some();
        let writes = batch.waiters.len() as u64;
        if let Err(error) = batch.commit().await {
            tracing::error!(%error, "committing a batch of writes failed");
        } else if had_writes {
            inner.commits.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("insight_sqlite_commits_total").increment(1);
            metrics::counter!("insight_sqlite_committed_writes_total").increment(writes);
        }
        if batch.closed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

    use super::*;

    async fn writer(dir: &tempfile::TempDir) -> Result<(Writer, SqlitePool), sqlx::Error> {
        let path = dir.path().join("writer.db");
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full);
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::query("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            .execute(&write)
            .await?;
        let read = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(options)
            .await?;
        Ok((Writer::start(write), read))
    }

    /// One write as the store's `db!` macro runs it.
    async fn insert(writer: &Writer, id: i64) -> Result<(), sqlx::Error> {
        let mut guard = writer.begin().await?;
        let result = sqlx::query("INSERT INTO notes (id, text) VALUES ($1, 'note')")
            .bind(id)
            .execute(guard.connection()?)
            .await;
        guard.finish(result.is_ok()).await?;
        result.map(|_| ())
    }

    async fn ids(read: &SqlitePool) -> Result<Vec<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT id FROM notes ORDER BY id")
            .fetch_all(read)
            .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_share_commits_and_all_become_durable() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        let tasks: Vec<_> = (0..200)
            .map(|id| {
                let writer = writer.clone();
                tokio::spawn(async move { insert(&writer, id).await })
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        // Acknowledged means committed: a reader sees every row at once.
        assert_eq!(ids(&read).await?, (0..200).collect::<Vec<_>>());
        let commits = writer.commits();
        assert!(
            (1..200).contains(&commits),
            "200 concurrent writes took {commits} commits"
        );
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_rolls_back_alone() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        insert(&writer, 7).await?;
        // 7 again violates the primary key; its neighbours in the batch must still land.
        let tasks: Vec<_> = [1, 7, 2, 7, 3]
            .into_iter()
            .map(|id| {
                let writer = writer.clone();
                tokio::spawn(async move { insert(&writer, id).await.is_ok() })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await?);
        }
        assert_eq!(outcomes, [true, false, true, false, true]);
        assert_eq!(ids(&read).await?, [1, 2, 3, 7]);
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_abandoned_write_is_rolled_back_and_the_next_one_commits() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        {
            // A write whose request went away after its statement ran, before `finish`.
            let mut guard = writer.begin().await?;
            sqlx::query("INSERT INTO notes (id, text) VALUES (1, 'never acknowledged')")
                .execute(guard.connection()?)
                .await?;
        }
        insert(&writer, 2).await?;
        assert_eq!(ids(&read).await?, [2]);
        // Nothing is left open: another connection can take the write lock.
        let mut other = read.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *other).await?;
        sqlx::query("ROLLBACK").execute(&mut *other).await?;
        Ok(())
    }

    #[tokio::test]
    async fn close_commits_what_is_pending_and_refuses_more() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        insert(&writer, 1).await?;
        writer.close().await;
        assert!(matches!(insert(&writer, 2).await, Err(sqlx::Error::PoolClosed)));
        assert_eq!(ids(&read).await?, [1]);
        Ok(())
    }
}
