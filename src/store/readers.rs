//! SQLite's read connections: a plain pool, without sqlx's pool checks.
//!
//! sqlx's pool pings a connection before it hands it out (`test_before_acquire`) and
//! again when it takes it back, to catch a network connection that broke meanwhile. A
//! SQLite connection is a file handle with a thread of its own, which does not break
//! that way; the pings were two more round trips to that thread for every read, so a
//! one-statement read cost three thread round trips instead of one. Here a read takes an idle connection (or opens
//! one, up to the limit) and puts it back when done.
//!
//! A read whose future is dropped half-way (its client went away) puts its connection
//! back too: the connection's thread finishes or abandons that statement before it
//! runs the next one, and reads open no transactions that could be left behind.

use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use tokio::sync::{Semaphore, SemaphorePermit};

/// The read connections of one SQLite database.
#[derive(Debug)]
pub(crate) struct Readers {
    idle: Mutex<Vec<SqliteConnection>>,
    /// One permit per connection that may be open.
    permits: Semaphore,
    options: SqliteConnectOptions,
}

/// A read connection, back to the pool when dropped.
pub(crate) struct Reader<'a> {
    conn: Option<SqliteConnection>,
    readers: &'a Readers,
    _permit: SemaphorePermit<'a>,
}

impl Readers {
    /// Opens all `max` connections: a database that cannot be read fails the start, and
    /// the first burst of requests does not wait for connections to be opened (each is a
    /// thread, a file handle and the schema read).
    pub(crate) async fn open(options: SqliteConnectOptions, max: u32) -> Result<Self, sqlx::Error> {
        let max = usize::try_from(max.max(1)).unwrap_or(1);
        let mut idle = Vec::with_capacity(max);
        for _ in 0..max {
            idle.push(SqliteConnection::connect_with(&options).await?);
        }
        Ok(Self {
            idle: Mutex::new(idle),
            permits: Semaphore::new(max),
            options,
        })
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<SqliteConnection>> {
        self.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An idle connection, or a new one in place of one that was lost (a read whose
    /// connection could not be put back); waits for one to come back otherwise.
    pub(crate) async fn acquire(&self) -> Result<Reader<'_>, sqlx::Error> {
        let permit = self.permits.acquire().await.map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.idle().pop();
        let conn = match idle {
            Some(conn) => conn,
            None => SqliteConnection::connect_with(&self.options).await?,
        };
        Ok(Reader {
            conn: Some(conn),
            readers: self,
            _permit: permit,
        })
    }

    /// Refuses further reads and closes the idle connections (one in use closes when it
    /// comes back).
    pub(crate) async fn close(&self) {
        self.permits.close();
        let idle = std::mem::take(&mut *self.idle());
        for conn in idle {
            let _ = conn.close().await;
        }
    }
}

impl Deref for Reader<'_> {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        self.conn.as_ref().expect("a reader holds its connection until dropped")
    }
}

impl DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        self.conn.as_mut().expect("a reader holds its connection until dropped")
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        // After `close` the connection is dropped here, which closes it.
        if let Some(conn) = self.conn.take()
            && !self.readers.permits.is_closed()
        {
            self.readers.idle().push(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    async fn readers(dir: &tempfile::TempDir, max: u32) -> Result<Readers, sqlx::Error> {
        let url = format!("sqlite://{}", dir.path().join("r.db").display());
        Readers::open(SqliteConnectOptions::from_str(&url)?.create_if_missing(true), max).await
    }

    #[tokio::test]
    async fn connections_are_reused_and_limited() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let readers = readers(&dir, 2).await?;
        assert_eq!(readers.idle().len(), 2, "all are opened at the start");
        {
            let (mut a, mut b) = (readers.acquire().await?, readers.acquire().await?);
            let one: i64 = sqlx::query_scalar("SELECT 1").fetch_one(&mut *a).await?;
            let two: i64 = sqlx::query_scalar("SELECT 2").fetch_one(&mut *b).await?;
            assert_eq!((one, two), (1, 2));
            // A third waits until one comes back.
            let third = tokio::time::timeout(std::time::Duration::from_millis(50), readers.acquire()).await;
            assert!(third.is_err(), "a third connection was handed out beyond the limit");
        }
        assert_eq!(readers.idle().len(), 2, "both came back");
        let mut again = readers.acquire().await?;
        let three: i64 = sqlx::query_scalar("SELECT 3").fetch_one(&mut *again).await?;
        assert_eq!(three, 3);
        drop(again);
        assert_eq!(readers.idle().len(), 2, "an idle one was taken, not a new one opened");
        // One that is lost (taken out of its reader) is replaced by a new one.
        let (mut lost, kept) = (readers.acquire().await?, readers.acquire().await?);
        let taken = lost.conn.take();
        drop((lost, kept));
        assert_eq!(readers.idle().len(), 1);
        let (mut old, mut new) = (readers.acquire().await?, readers.acquire().await?);
        let four: i64 = sqlx::query_scalar("SELECT 4").fetch_one(&mut *new).await?;
        let five: i64 = sqlx::query_scalar("SELECT 5").fetch_one(&mut *old).await?;
        assert_eq!((four, five), (4, 5));
        drop((old, new, taken));
        assert_eq!(readers.idle().len(), 2);
        readers.close().await;
        assert!(matches!(readers.acquire().await, Err(sqlx::Error::PoolClosed)));
        assert!(readers.idle().is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn a_read_dropped_half_way_leaves_a_usable_connection() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let readers = readers(&dir, 1).await?;
        {
            let mut conn = readers.acquire().await?;
            // A long statement whose future is given up on after it started.
            let slow = sqlx::query_scalar::<_, i64>(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) SELECT count(*) FROM n",
            )
            .fetch_one(&mut *conn);
            let gave_up = tokio::time::timeout(std::time::Duration::from_millis(5), slow).await;
            assert!(
                gave_up.is_err(),
                "the statement was meant to be slower than the timeout"
            );
        }
        let mut conn = readers.acquire().await?;
        let answer: i64 = sqlx::query_scalar("SELECT 42").fetch_one(&mut *conn).await?;
        assert_eq!(answer, 42);
        Ok(())
    }
}
