//! Group commit for SQLite.
//!
//! With `synchronous=FULL` every commit waits for the disk to flush the write-ahead log.
//! So writes that arrive together share a commit: they run one after another inside one
//! open transaction, and a committer task commits it once the writes queued so far have
//! run, then tells each of them how the commit went. A write is acknowledged only after
//! the commit that holds it, so nothing acknowledged is lost in a crash.
//!
//! The batch forms by itself: while the committer flushes, arriving writes queue on the
//! (first-in, first-out) lock; when it is released they run one after another, and the
//! committer, queued behind them, commits them all.
//!
//! Writes that start background work (a worker claiming a job) are urgent: they skip the
//! queue of ordinary writes (waiting for one at most) and have a committer of their own
//! that does not wait for that queue either. Behind a burst of API writes (a team queueing
//! a thousand reports) the claims otherwise waited for the whole burst, and the model sat
//! idle. Ordinary writes and their committer pass a first-in, first-out gate before the
//! batch's lock, which urgent writes and their committer take directly.
//!
//! A write of several statements runs in a savepoint, so its failure rolls back only
//! its own statements; a single statement needs none (SQLite undoes a failed statement
//! by itself), which keeps the time under the lock short. Every statement sent is a trip
//! to the connection's thread and back, so the savepoint's bookkeeping rides with other
//! statements: a kept write's savepoint is released by the next write of several
//! statements, in the same trip as that write's own savepoint (or by the commit, which
//! keeps everything), and a transaction's `BEGIN` goes with its first savepoint. (Kept
//! savepoints are not left open until the commit: SQLite's statement journal would then
//! grow over the whole batch.) Each savepoint has a name of its
//! own, so rolling one back can never reach a kept write's. A write whose future is
//! dropped half-way (a client gone) leaves a note; the next holder of the lock rolls its
//! savepoint back first. Anything unexpected (a savepoint that cannot be rolled back, a
//! failed commit) rolls the whole batch back and fails its writes: none of them was
//! acknowledged, and the next write starts clean.
//!
//! Transactions are plain SQL on a connection this module owns (not sqlx's
//! `Transaction`, whose bookkeeping goes wrong when SQLite itself ends a transaction
//! after a failed commit), so write bodies must not open transactions of their own.
//!
//! A checkpoint that empties the write-ahead log (after an erasure: the log still holds
//! the pages as they were before) runs here too, between two batches: it cannot run
//! inside a transaction, and on any other connection it would wait for the batch's write
//! lock and then hold the next batch up while it waits for readers. Here it never waits
//! for readers while it holds the batch: it tries, lets the writes through, and tries again.

use std::sync::Arc;
#[cfg(test)]
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool};
use sqlx::{Connection, Executor};
use tokio::sync::{Mutex, Notify, OwnedMutexGuard, oneshot};

/// Rolls back and ends savepoint `n`, in one trip.
fn roll_back_savepoint(n: u64) -> String {
    format!("ROLLBACK TO w{n}; RELEASE w{n}")
}

type CommitResult = Result<(), String>;

/// How much of a write's work needs undoing when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Statements {
    /// One statement: atomic by itself.
    One,
    /// Several: they run in a savepoint.
    Many,
}

#[derive(Debug)]
struct Batch {
    /// The writer's connection; `None` once closed.
    conn: Option<PoolConnection<Sqlite>>,
    /// A transaction is open on it.
    open: bool,
    /// A write left its savepoint open (its future was dropped): roll it back first.
    abandoned: Option<u64>,
    /// The savepoint of a kept write, still open: the next write of several statements
    /// releases it (the commit keeps it anyway).
    kept: Option<u64>,
    /// The name of the next savepoint (`w<n>`).
    next_savepoint: u64,
    /// The writes waiting for this batch's commit.
    waiters: Vec<oneshot::Sender<CommitResult>>,
    closed: bool,
}

#[derive(Debug)]
struct Inner {
    pool: SqlitePool,
    /// Ordinary writes and the committer queue here, first come first served, before they
    /// take the batch; urgent writes skip it (see [`Writer::begin_urgent`]).
    gate: Mutex<()>,
    batch: Arc<Mutex<Batch>>,
    commit_wanted: Notify,
    /// Wakes the committer of urgent writes, which skips the gate.
    urgent_commit_wanted: Notify,
    #[cfg(test)]
    commits: AtomicU64,
}

/// The one writer of a SQLite database.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    inner: Arc<Inner>,
}

/// A write in progress: the lock on the batch, inside the open transaction.
pub(crate) struct WriteGuard {
    batch: Option<OwnedMutexGuard<Batch>>,
    /// This write's savepoint, when it has several statements.
    savepoint: Option<u64>,
    /// Goes ahead of ordinary writes (see [`Writer::begin_urgent`]).
    urgent: bool,
    inner: Arc<Inner>,
}

impl Writer {
    /// Takes the (single-connection) writer pool and starts the committer task.
    pub(crate) fn start(pool: SqlitePool) -> Self {
        let inner = Arc::new(Inner {
            pool,
            gate: Mutex::new(()),
            batch: Arc::new(Mutex::new(Batch {
                conn: None,
                open: false,
                abandoned: None,
                kept: None,
                next_savepoint: 0,
                waiters: Vec::new(),
                closed: false,
            })),
            commit_wanted: Notify::new(),
            urgent_commit_wanted: Notify::new(),
            #[cfg(test)]
            commits: AtomicU64::new(0),
        });
        tokio::spawn(committer(inner.clone(), false));
        tokio::spawn(committer(inner.clone(), true));
        Self { inner }
    }

    /// The pool itself, for work that must run outside a transaction (migrations).
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.inner.pool
    }

    /// Starts a write: joins (or opens) the batch's transaction, in a savepoint when the
    /// write has several statements.
    pub(crate) async fn begin(&self, statements: Statements) -> Result<WriteGuard, sqlx::Error> {
        let gate = self.inner.gate.lock().await;
        let batch = self.inner.batch.clone().lock_owned().await;
        drop(gate);
        self.started(batch, statements, false).await
    }

    /// Starts a write that goes ahead of the ordinary writes waiting (it waits for one at
    /// most), and whose commit does not wait for them either: urgent writes that arrive
    /// together share a commit of their own (see [`committer`]). For the writes that start
    /// background work (a worker's claim of a job): queued behind a burst of API writes,
    /// they left the model idle.
    pub(crate) async fn begin_urgent(&self, statements: Statements) -> Result<WriteGuard, sqlx::Error> {
        let batch = self.inner.batch.clone().lock_owned().await;
        self.started(batch, statements, true).await
    }

    async fn started(
        &self,
        batch: OwnedMutexGuard<Batch>,
        statements: Statements,
        urgent: bool,
    ) -> Result<WriteGuard, sqlx::Error> {
        // From here on, however this ends, the committer hears of it (see `Drop`).
        let mut guard = WriteGuard {
            batch: Some(batch),
            savepoint: None,
            urgent,
            inner: self.inner.clone(),
        };
        let batch = guard.batch_mut()?;
        if batch.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        batch.settle_abandoned().await?;
        if batch.conn.is_none() {
            batch.conn = Some(self.inner.pool.acquire().await?);
        }
        // What to send before the body, in one trip: `BEGIN` when no transaction is open
        // (IMMEDIATE takes the write lock at once, so a write that reads first cannot
        // fail with SQLITE_BUSY_SNAPSHOT when another process, the CLI, wrote between);
        // for several statements, the kept write's release and this write's savepoint.
        let mut opening = Vec::new();
        let opens = !batch.open;
        if opens {
            opening.push("BEGIN IMMEDIATE".to_owned());
        }
        let savepoint = (statements == Statements::Many).then(|| {
            let n = batch.next_savepoint;
            batch.next_savepoint += 1;
            n
        });
        if let Some(n) = savepoint {
            if let Some(kept) = batch.kept {
                opening.push(format!("RELEASE w{kept}"));
            }
            opening.push(format!("SAVEPOINT w{n}"));
            // Should the trip be cut short (this future dropped), the next holder rolls
            // the savepoint back; if it never began, that fails and the batch is undone.
            batch.abandoned = Some(n);
        }
        if opening.is_empty() {
            return Ok(guard);
        }
        let sent = batch.connection()?.execute(opening.join("; ").as_str()).await;
        match sent {
            Ok(_) => {
                batch.open = true;
                if savepoint.is_some() {
                    batch.kept = None;
                }
            }
            Err(error) if opens && savepoint.is_none() => {
                // Only `BEGIN` was sent, and it failed: nothing is open.
                return Err(error);
            }
            Err(error) => {
                // Part of it may have run: start the batch over.
                batch.open = true;
                batch.abort(&format!("starting a write failed: {error}")).await;
                return Err(error);
            }
        }
        guard.savepoint = savepoint;
        Ok(guard)
    }

    /// Commits what is pending and stops taking writes.
    pub(crate) async fn close(&self) {
        let mut batch = self.inner.batch.lock().await;
        batch.closed = true;
        let _ = batch.commit().await;
        if let Some(conn) = batch.conn.take() {
            let _ = conn.detach().close().await;
        }
        drop(batch);
        self.inner.commit_wanted.notify_one();
        self.inner.urgent_commit_wanted.notify_one();
        self.inner.pool.close().await;
    }

    /// Copies every committed page into the database file and truncates the write-ahead
    /// log to nothing (`wal_checkpoint(TRUNCATE)`), so that no page image from before is
    /// left in it; tries again until `patience` has passed while readers still read from the
    /// log. Whether the log was emptied.
    pub(crate) async fn checkpoint(&self, patience: Duration) -> Result<bool, sqlx::Error> {
        let deadline = Instant::now() + patience;
        loop {
            if self.try_checkpoint().await? {
                return Ok(true);
            }
            if Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// One checkpoint between two batches: queued as an ordinary write, it commits the
    /// batch it finds open (its writes are answered as by the committer), then checkpoints
    /// without a busy timeout, so that a reader still on an older snapshot makes it give up
    /// (`false`) rather than hold the writes up.
    async fn try_checkpoint(&self) -> Result<bool, sqlx::Error> {
        let gate = self.inner.gate.lock().await;
        let mut batch = self.inner.batch.lock().await;
        drop(gate);
        if batch.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        batch
            .commit()
            .await
            .map_err(|reason| sqlx::Error::Io(std::io::Error::other(reason)))?;
        if batch.conn.is_none() {
            batch.conn = Some(self.inner.pool.acquire().await?);
        }
        let conn = batch.connection()?;
        let (timeout,): (i64,) = sqlx::query_as("PRAGMA busy_timeout").fetch_one(&mut *conn).await?;
        (&mut *conn).execute("PRAGMA busy_timeout = 0").await?;
        let checkpointed: Result<(i64, i64, i64), sqlx::Error> = sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&mut *conn)
            .await;
        // Restored whatever the checkpoint did: other writes wait for a busy database.
        (&mut *conn)
            .execute(format!("PRAGMA busy_timeout = {timeout}").as_str())
            .await?;
        let (busy, _, _) = checkpointed?;
        Ok(busy == 0)
    }

    /// How many transactions have been committed.
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.inner.commits.load(Ordering::Relaxed)
    }
}

impl Batch {
    fn connection(&mut self) -> Result<&mut SqliteConnection, sqlx::Error> {
        match self.conn.as_mut() {
            Some(conn) => Ok(&mut **conn),
            None => Err(sqlx::Error::PoolClosed),
        }
    }

    /// Rolls back an abandoned savepoint; if even that fails, the whole batch.
    async fn settle_abandoned(&mut self) -> Result<(), sqlx::Error> {
        let Some(n) = self.abandoned.take() else {
            return Ok(());
        };
        let undone = match self.connection() {
            Ok(conn) => conn.execute(roll_back_savepoint(n).as_str()).await.map(|_| ()),
            Err(error) => Err(error),
        };
        match undone {
            // Its start had released the kept write's savepoint (into the transaction).
            Ok(()) => self.kept = None,
            Err(error) => {
                self.abort(&format!("an abandoned write could not be rolled back: {error}"))
                    .await
            }
        }
        Ok(())
    }

    /// Rolls the whole batch back and fails its writes.
    async fn abort(&mut self, reason: &str) {
        tracing::error!(reason, "rolling back a batch of writes");
        if let Ok(conn) = self.connection() {
            // "No transaction is active" is fine: SQLite may have ended it already.
            let _ = conn.execute("ROLLBACK").await;
        }
        self.open = false;
        self.abandoned = None;
        self.kept = None;
        for waiter in self.waiters.drain(..) {
            let _ = waiter.send(Err(reason.to_owned()));
        }
    }

    /// Commits the open transaction, if any, and tells its writes how it went.
    async fn commit(&mut self) -> CommitResult {
        if let Err(error) = self.settle_abandoned().await {
            let reason = format!("settling an abandoned write failed: {error}");
            self.abort(&reason).await;
            return Err(reason);
        }
        if !self.open {
            return Ok(());
        }
        let committed = match self.connection() {
            Ok(conn) => conn.execute("COMMIT").await.map(|_| ()),
            Err(error) => Err(error),
        };
        match committed {
            Ok(()) => {
                // COMMIT keeps a kept write's savepoint with the rest.
                self.open = false;
                self.kept = None;
                for waiter in self.waiters.drain(..) {
                    let _ = waiter.send(Ok(()));
                }
                Ok(())
            }
            Err(error) => {
                let reason = format!("commit failed: {error}");
                self.abort(&reason).await;
                Err(reason)
            }
        }
    }
}

impl WriteGuard {
    fn batch_mut(&mut self) -> Result<&mut Batch, sqlx::Error> {
        self.batch.as_deref_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// The connection, inside the batch's transaction (and this write's savepoint).
    pub(crate) fn connection(&mut self) -> Result<&mut SqliteConnection, sqlx::Error> {
        self.batch_mut()?.connection()
    }

    /// Ends the write: keeps its statements (`keep`) and waits for the commit that makes
    /// them durable, or rolls them back.
    pub(crate) async fn finish(mut self, keep: bool) -> Result<(), sqlx::Error> {
        let savepoint = self.savepoint;
        let batch = self.batch_mut()?;
        if let Some(n) = savepoint {
            if keep {
                // Released by the next write of several statements, or committed.
                batch.abandoned = None;
                batch.kept = Some(n);
            } else {
                let ended = match batch.connection() {
                    Ok(conn) => conn.execute(roll_back_savepoint(n).as_str()).await.map(|_| ()),
                    Err(error) => Err(error),
                };
                // Only now: were this future dropped during the trip, the next holder of
                // the lock would roll the savepoint back (or, if it is gone, the batch).
                batch.abandoned = None;
                if let Err(error) = ended {
                    batch
                        .abort(&format!("ending a write's savepoint failed: {error}"))
                        .await;
                    return Err(error);
                }
            }
        }
        if !keep {
            // Nothing of it stays: nothing to wait for.
            return Ok(());
        }
        let (sender, receiver) = oneshot::channel();
        batch.waiters.push(sender);
        // Unlock and wake the committer (`Drop` does both).
        drop(self);
        match receiver.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(reason)) => Err(sqlx::Error::Io(std::io::Error::other(reason))),
            Err(_) => Err(sqlx::Error::PoolClosed),
        }
    }
}

impl Drop for WriteGuard {
    fn drop(&mut self) {
        // Whether finished or dropped half-way (the savepoint then stays marked
        // abandoned for the next holder to roll back), the open transaction must be
        // committed or settled: the committer takes care of it.
        if self.batch.take().is_some() {
            if self.urgent {
                self.inner.urgent_commit_wanted.notify_one();
            } else {
                self.inner.commit_wanted.notify_one();
            }
        }
    }
}

/// Commits the open batch whenever a write asks for it. The committer of ordinary writes
/// queues at the gate behind the writes that came before it, so it commits them all at
/// once; the committer of urgent writes skips the gate, as they do, and commits the urgent
/// writes that queued before it (with whatever else the batch holds) without waiting for
/// the ordinary ones.
async fn committer(inner: Arc<Inner>, urgent: bool) {
    loop {
        let gate = if urgent {
            inner.urgent_commit_wanted.notified().await;
            None
        } else {
            inner.commit_wanted.notified().await;
            Some(inner.gate.lock().await)
        };
        let mut batch = inner.batch.lock().await;
        drop(gate);
        let had_writes = batch.open;
        let writes = batch.waiters.len() as u64;
        let started = std::time::Instant::now();
        let committed = batch.commit().await;
        if had_writes {
            metrics::histogram!("insight_sqlite_commit_seconds").record(started.elapsed().as_secs_f64());
        }
        match committed {
            Err(error) => tracing::error!(%error, "committing a batch of writes failed"),
            Ok(()) if had_writes => {
                #[cfg(test)]
                inner.commits.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("insight_sqlite_commits_total").increment(1);
                metrics::counter!("insight_sqlite_committed_writes_total").increment(writes);
            }
            Ok(()) => {}
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
            .synchronous(SqliteSynchronous::Full)
            .pragma("secure_delete", "ON");
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

    /// One write as the store's `db!` macro runs it: one insert, or two (the second a
    /// copy at `id + 1000`) in a savepoint.
    async fn insert(writer: &Writer, id: i64, statements: Statements) -> Result<(), sqlx::Error> {
        let mut guard = writer.begin(statements).await?;
        let mut result = sqlx::query("INSERT INTO notes (id, text) VALUES ($1, 'note')")
            .bind(id)
            .execute(guard.connection()?)
            .await;
        if statements == Statements::Many && result.is_ok() {
            result = sqlx::query("INSERT INTO notes (id, text) VALUES ($1, 'copy')")
                .bind(id + 1000)
                .execute(guard.connection()?)
                .await;
        }
        guard.finish(result.is_ok()).await?;
        result.map(|_| ())
    }

    async fn ids(read: &SqlitePool) -> Result<Vec<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT id FROM notes ORDER BY id")
            .fetch_all(read)
            .await
    }

    /// An ordinary write holds the batch while ten more queue behind it; an urgent write
    /// that comes after them all runs after at most one of them, and everything commits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_urgent_write_goes_ahead_of_the_ordinary_ones_waiting() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        let turns = Arc::new(AtomicU64::new(0));
        let mut first = writer.begin(Statements::One).await?;
        sqlx::query("INSERT INTO notes (id, text) VALUES (0, 'first')")
            .execute(first.connection()?)
            .await?;
        let write = |id: i64, urgent: bool| {
            let (writer, turns) = (writer.clone(), turns.clone());
            tokio::spawn(async move {
                let mut guard = if urgent {
                    writer.begin_urgent(Statements::One).await?
                } else {
                    writer.begin(Statements::One).await?
                };
                let turn = turns.fetch_add(1, Ordering::SeqCst);
                sqlx::query("INSERT INTO notes (id, text) VALUES ($1, 'note')")
                    .bind(id)
                    .execute(guard.connection()?)
                    .await?;
                guard.finish(true).await?;
                Ok::<_, sqlx::Error>(turn)
            })
        };
        let ordinary: Vec<_> = (1..=10).map(|id| write(id, false)).collect();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let urgent = write(100, true);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        first.finish(true).await?;
        let urgent_turn = urgent.await??;
        assert!(
            urgent_turn <= 1,
            "the urgent write ran after {urgent_turn} of the ten waiting"
        );
        for task in ordinary {
            task.await??;
        }
        let expected: Vec<i64> = (0..=10).chain([100]).collect();
        assert_eq!(ids(&read).await?, expected);
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_share_commits_and_all_become_durable() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        let tasks: Vec<_> = (0..200)
            .map(|id| {
                let writer = writer.clone();
                tokio::spawn(async move { insert(&writer, id, Statements::One).await })
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
        insert(&writer, 7, Statements::One).await?;
        insert(&writer, 1008, Statements::One).await?;
        // 7 again violates the primary key; 8's copy (1008) does so after 8 went in, so
        // its savepoint must undo 8. The neighbours in the batch must still land.
        let cases = [
            (1, Statements::One),
            (7, Statements::One),
            (2, Statements::Many),
            (8, Statements::Many),
        ];
        let tasks: Vec<_> = cases
            .into_iter()
            .map(|(id, statements)| {
                let writer = writer.clone();
                tokio::spawn(async move { insert(&writer, id, statements).await.is_ok() })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await?);
        }
        assert_eq!(outcomes, [true, false, true, false]);
        assert_eq!(ids(&read).await?, [1, 2, 7, 1002, 1008]);
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn in_one_batch_a_failing_write_undoes_only_itself_after_kept_ones() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        // 11's copy (1011) exists: write 11 fails at its second statement.
        insert(&writer, 1011, Statements::One).await?;
        // Hold the lock so the writes below queue, in this order, into one batch.
        let first = writer.begin(Statements::One).await?;
        let mut tasks = Vec::new();
        for id in [10, 11, 12] {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                insert(&writer, id, Statements::Many).await.is_ok()
            }));
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let commits = writer.commits();
        first.finish(true).await?;
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await?);
        }
        assert_eq!(outcomes, [true, false, true]);
        // Rolling 11 back left 10 and 12, in the same transaction, alone.
        assert_eq!(ids(&read).await?, [10, 12, 1010, 1011, 1012]);
        assert!(writer.commits() - commits <= 2, "the writes shared a commit");
        Ok(())
    }

    /// A kept write's savepoint stays open until the next write of several statements
    /// releases it. In one batch: a kept write, a single statement after it, a failing
    /// one, an abandoned write and a kept one; each failure undoes only itself.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn in_one_batch_failures_after_a_kept_savepoint_undo_only_themselves()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        // Hold the lock so the writes below queue, in this order, into one batch.
        let first = writer.begin(Statements::One).await?;
        let commits = writer.commits();
        let mut tasks = Vec::new();
        for (id, statements) in [(10, Statements::Many), (20, Statements::One), (20, Statements::One)] {
            let writer = writer.clone();
            tasks.push(tokio::spawn(
                async move { insert(&writer, id, statements).await.is_ok() },
            ));
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let abandoned = {
            let writer = writer.clone();
            tokio::spawn(async move {
                let mut guard = writer.begin(Statements::Many).await?;
                sqlx::query("INSERT INTO notes (id, text) VALUES (30, 'never acknowledged')")
                    .execute(guard.connection()?)
                    .await?;
                // Its request went away before `finish`.
                drop(guard);
                Ok::<_, sqlx::Error>(())
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let last = {
            let writer = writer.clone();
            tokio::spawn(async move { insert(&writer, 40, Statements::Many).await.is_ok() })
        };
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        first.finish(true).await?;
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await?);
        }
        abandoned.await??;
        outcomes.push(last.await?);
        assert_eq!(outcomes, [true, true, false, true]);
        assert_eq!(ids(&read).await?, [10, 20, 40, 1010, 1040]);
        assert!(writer.commits() - commits <= 2, "the writes shared a commit");
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_abandoned_write_is_rolled_back_and_the_next_one_commits() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        {
            // A write whose request went away after its statement ran, before `finish`.
            let mut guard = writer.begin(Statements::Many).await?;
            sqlx::query("INSERT INTO notes (id, text) VALUES (1, 'never acknowledged')")
                .execute(guard.connection()?)
                .await?;
        }
        insert(&writer, 2, Statements::One).await?;
        assert_eq!(ids(&read).await?, [2]);
        // Nothing is left open: another connection can take the write lock.
        let mut other = read.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *other).await?;
        sqlx::query("ROLLBACK").execute(&mut *other).await?;
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_that_cannot_be_settled_fails_its_writes_and_the_next_starts_clean()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        {
            // A write that ends the transaction under the writer's feet, then is dropped:
            // its savepoint is gone, so rolling it back fails.
            let mut guard = writer.begin(Statements::Many).await?;
            sqlx::query("INSERT INTO notes (id, text) VALUES (1, 'lost')")
                .execute(guard.connection()?)
                .await?;
            sqlx::query("ROLLBACK").execute(guard.connection()?).await?;
        }
        insert(&writer, 2, Statements::Many).await?;
        insert(&writer, 3, Statements::One).await?;
        assert_eq!(ids(&read).await?, [2, 3, 1002]);
        Ok(())
    }

    /// A checkpoint empties the log; while a reader still reads from it, the checkpoint
    /// keeps trying without holding the writes up, and gives up when its patience ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_checkpoint_empties_the_log_and_lets_writes_through_while_a_reader_holds_it()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        for id in 0..20 {
            insert(&writer, id, Statements::Many).await?;
        }
        let wal = dir.path().join("writer.db-wal");
        assert!(std::fs::metadata(&wal)?.len() > 0, "the writes are in the log");
        let mut reader = read.acquire().await?;
        sqlx::query("BEGIN").execute(&mut *reader).await?;
        sqlx::query("SELECT COUNT(*) FROM notes")
            .fetch_one(&mut *reader)
            .await?;
        let checkpoint = {
            let writer = writer.clone();
            tokio::spawn(async move { writer.checkpoint(Duration::from_secs(3)).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        insert(&writer, 100, Statements::One).await?;
        assert!(
            !checkpoint.is_finished(),
            "a write went through while the checkpoint waited for the reader"
        );
        assert!(!checkpoint.await??, "the reader kept the log from being emptied");
        sqlx::query("COMMIT").execute(&mut *reader).await?;
        drop(reader);
        assert!(writer.checkpoint(Duration::from_secs(3)).await?);
        assert_eq!(std::fs::metadata(&wal)?.len(), 0, "the log is empty");
        assert_eq!(ids(&read).await?.len(), 41, "nothing was lost");
        Ok(())
    }

    #[tokio::test]
    async fn close_commits_what_is_pending_and_refuses_more() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (writer, read) = writer(&dir).await?;
        insert(&writer, 1, Statements::One).await?;
        writer.close().await;
        assert!(matches!(
            insert(&writer, 2, Statements::One).await,
            Err(sqlx::Error::PoolClosed)
        ));
        assert_eq!(ids(&read).await?, [1]);
        Ok(())
    }
}
