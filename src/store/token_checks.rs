//! Token checks that arrive together share one read.
//!
//! Every authenticated request reads its token's user, and the user's data version, from
//! the database, so that a token revoked by another process (the CLI, another instance)
//! stops working at once and a kept project list is used only while it is current. On
//! SQLite that read is a hop to a pooled connection's own thread and back, which costs
//! more than all the rest of a request answered from a kept list.
//!
//! So one read runs at a time, and the checks that arrive while it runs wait for it to
//! end and then go together in the next one: a single query for all of their distinct
//! token hashes. A lone request waits for nothing but its own read. Every check is still
//! answered by a read that began after its request arrived, so no request is let in on an
//! answer older than itself; this is group commit's idea (`writer.rs`) applied to reads.
//!
//! The reader keeps one connection for as long as checks keep coming: taking one from
//! sqlx's PostgreSQL pool for each read cost two more round trips to the server (the pool
//! pings a connection when it hands it out and when it takes it back), twice the read.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;
use uuid::Uuid;

use super::{Db, Store};
use crate::domain::now;
use crate::domain::user::{TokenScope, User};

/// Hashes per query at most; a batch with more is read in several queries.
const MAX_HASHES: usize = 64;

/// How long a reader with nothing to read keeps its connection for the next checks.
const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// Reads of one batch at most, when the database drops connections under it.
const TRIES: u32 = 3;

/// Whether a read failed because its connection is gone, not because of the read.
fn connection_lost(error: &anyhow::Error) -> bool {
    match error.downcast_ref::<sqlx::Error>() {
        Some(sqlx::Error::Io(_) | sqlx::Error::Protocol(_)) => true,
        // PostgreSQL's connection exceptions (08) and shutdowns (57P01 to 57P03).
        Some(sqlx::Error::Database(error)) => error
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

/// The query for `n` hashes (`$1` is the time, `$2` the oldest last use an idle session may
/// have, `$3..` the hashes), over API tokens and sessions alike: their values differ in
/// form, so a hash names one or the other. Batches are padded to a power of two so that
/// each connection prepares at most seven statements.
static QUERIES: LazyLock<Vec<String>> = LazyLock::new(|| {
    (0..=MAX_HASHES.trailing_zeros())
        .map(|power| {
            let placeholders: Vec<String> = (0..1usize << power).map(|i| format!("${}", i + 3)).collect();
            let placeholders = placeholders.join(", ");
            format!(
                "SELECT t.token_hash, u.id, u.email, u.created_at, u.data_version, t.scope, \
                 NULL AS session_id, NULL AS last_seen_at \
                 FROM api_tokens t JOIN users u ON u.id = t.user_id \
                 WHERE t.token_hash IN ({placeholders}) AND t.revoked_at IS NULL \
                 AND (t.expires_at IS NULL OR t.expires_at > $1) \
                 UNION ALL \
                 SELECT s.token_hash, u.id, u.email, u.created_at, u.data_version, 'session', \
                 s.id, s.last_seen_at \
                 FROM sessions s JOIN users u ON u.id = s.user_id \
                 WHERE s.token_hash IN ({placeholders}) AND s.revoked_at IS NULL \
                 AND s.expires_at > $1 AND s.last_seen_at > $2"
            )
        })
        .collect()
});

#[derive(sqlx::FromRow)]
struct AuthRow {
    token_hash: Vec<u8>,
    id: Uuid,
    email: String,
    created_at: DateTime<Utc>,
    data_version: i64,
    scope: String,
    session_id: Option<Uuid>,
    last_seen_at: Option<DateTime<Utc>>,
}

/// The user behind a bearer token or a session cookie, with his data version (see
/// migration 0002) and what the credential allows.
#[derive(Debug, Clone)]
pub struct Holder {
    pub user: User,
    pub data_version: i64,
    pub credential: Credential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// An API token; a `read` one may not change anything.
    Token { scope: TokenScope },
    /// A browser's session; `last_seen_at` says when it was last marked in use.
    Session { id: Uuid, last_seen_at: DateTime<Utc> },
}

impl From<AuthRow> for Holder {
    fn from(row: AuthRow) -> Self {
        let credential = match (row.session_id, row.last_seen_at) {
            (Some(id), Some(last_seen_at)) => Credential::Session { id, last_seen_at },
            // A scope this release does not know reads as the narrower one.
            _ => Credential::Token {
                scope: TokenScope::parse(&row.scope).unwrap_or(TokenScope::Read),
            },
        };
        Holder {
            user: User {
                id: row.id,
                email: row.email,
                created_at: row.created_at,
            },
            data_version: row.data_version,
            credential,
        }
    }
}

/// What a check is answered with: who holds the token or session, `None` for an unknown,
/// revoked or expired one, or the read's error (shared by the whole batch).
type Answer = Result<Option<Holder>, Arc<anyhow::Error>>;

struct Waiting {
    hash: Vec<u8>,
    reply: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct Queue {
    waiting: Vec<Waiting>,
    /// Whether a reader task is running; it takes whatever waits until nothing does.
    reading: bool,
}

/// The checks waiting for the next read.
#[derive(Default)]
pub(super) struct TokenChecks {
    queue: Mutex<Queue>,
    /// Wakes a reader that lingers with its connection (see [`LINGER`]).
    arrived: tokio::sync::Notify,
}

impl std::fmt::Debug for TokenChecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenChecks").finish_non_exhaustive()
    }
}

impl TokenChecks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The task that reads while checks wait. It stops, under the queue's lock, when none do.
struct Reader {
    store: Store,
    stopped: bool,
}

/// A reader that did not stop by itself (it panicked, or the runtime is shutting down)
/// answers whatever still waits with an error (the senders are dropped), so that no
/// request waits for ever, and lets the next check start a new reader.
impl Drop for Reader {
    fn drop(&mut self) {
        if !self.stopped {
            let mut queue = self.store.token_checks.lock();
            queue.reading = false;
            queue.waiting.clear();
        }
    }
}

impl Store {
    /// Who holds the token or session with this hash, if it is known, not revoked and not
    /// expired (nor idle too long, for a session).
    pub(super) async fn check_token_hash(&self, hash: Vec<u8>) -> anyhow::Result<Option<Holder>> {
        let (reply, answer) = oneshot::channel();
        let start_reader = {
            let mut queue = self.token_checks.lock();
            queue.waiting.push(Waiting { hash, reply });
            !std::mem::replace(&mut queue.reading, true)
        };
        if !start_reader {
            self.token_checks.arrived.notify_one();
        }
        if start_reader {
            let reader = Reader {
                store: self.clone(),
                stopped: false,
            };
            tokio::spawn(reader.run());
        }
        match answer.await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(err)) => Err(anyhow::anyhow!("reading the token failed: {err:#}")),
            Err(_) => Err(anyhow::anyhow!("the token check was dropped")),
        }
    }
}

/// The connection a reader keeps while checks keep coming.
enum Held<'a> {
    Sqlite(super::readers::Reader<'a>),
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
}

impl Reader {
    async fn run(mut self) {
        let store = self.store.clone();
        let mut held = None;
        let checks = &store.token_checks;
        let mut lingered = false;
        loop {
            let batch = {
                let mut queue = checks.lock();
                if queue.waiting.is_empty() && (lingered || held.is_none()) {
                    queue.reading = false;
                    self.stopped = true;
                    return;
                }
                std::mem::take(&mut queue.waiting)
            };
            if batch.is_empty() {
                // The next checks are usually on their way (clients answered a moment
                // ago send again): wait for them a little with the connection kept.
                lingered = tokio::time::timeout(LINGER, checks.arrived.notified()).await.is_err();
                continue;
            }
            lingered = false;
            let mut hashes: Vec<&[u8]> = batch.iter().map(|waiting| waiting.hash.as_slice()).collect();
            hashes.sort_unstable();
            hashes.dedup();
            let mut found = HashMap::with_capacity(hashes.len());
            let mut failure = None;
            for chunk in hashes.chunks(MAX_HASHES) {
                match store.read_token_hashes(&mut held, chunk).await {
                    Ok(rows) => found.extend(rows.into_iter().map(|row| (row.token_hash.clone(), Holder::from(row)))),
                    Err(err) => {
                        // The connection may be broken: the next read takes another.
                        held = None;
                        failure = Some(Arc::new(err));
                        break;
                    }
                }
            }
            for waiting in batch {
                let answer = match &failure {
                    Some(err) => Err(err.clone()),
                    None => Ok(found.get(&waiting.hash).cloned()),
                };
                // A check whose request went away no longer listens; nothing to do.
                let _ = waiting.reply.send(answer);
            }
        }
    }
}

impl Store {
    /// Reads the users of these token hashes on the held connection, taking one when none
    /// is held. A connection the database server dropped (a restart, an administrator) is
    /// given up and the read tried again on a fresh one, so no request fails for it.
    async fn read_token_hashes<'a>(
        &'a self,
        held: &mut Option<Held<'a>>,
        hashes: &[&[u8]],
    ) -> anyhow::Result<Vec<AuthRow>> {
        let mut tries = 1;
        loop {
            match self.read_token_hashes_on(held, hashes).await {
                Err(error) if tries < TRIES && connection_lost(&error) => {
                    tracing::debug!(error = %format!("{error:#}"), "the database dropped a connection during a token check; taking another");
                    *held = None;
                    tries += 1;
                }
                read => return read,
            }
        }
    }

    async fn read_token_hashes_on<'a>(
        &'a self,
        held: &mut Option<Held<'a>>,
        hashes: &[&[u8]],
    ) -> anyhow::Result<Vec<AuthRow>> {
        let size = hashes.len().next_power_of_two();
        let sql = QUERIES[size.trailing_zeros() as usize].as_str();
        let now = now();
        macro_rules! query {
            ($conn:expr) => {{
                let mut query = sqlx::query_as::<_, AuthRow>(sql)
                    .bind(now)
                    .bind(now - self.session_idle);
                for i in 0..size {
                    query = query.bind(hashes[i.min(hashes.len() - 1)]);
                }
                query.fetch_all($conn).await?
            }};
        }
        let conn = match held {
            Some(conn) => conn,
            None => held.insert(match &self.db {
                Db::Sqlite { read, .. } => Held::Sqlite(read.acquire().await?),
                Db::Postgres(pool) => Held::Postgres(pool.acquire().await?),
            }),
        };
        Ok(match conn {
            Held::Sqlite(conn) => query!(&mut **conn),
            Held::Postgres(conn) => query!(&mut **conn),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::user::hash_token;

    /// On this single-threaded runtime the reader spawned by the first check runs only once
    /// every check below has queued, so they are all one batch: 150 distinct hashes, which
    /// take three queries, one of them padded.
    #[tokio::test]
    async fn one_batch_answers_each_check_with_its_own_user() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("insight.db").display());
        let store = Store::connect(&url, 4).await?;
        let mut expected = Vec::new();
        for n in 0..50 {
            let user = store.add_user(&format!("user{n}@example.org")).await?.ok_or("taken")?;
            let (_, valid) = store
                .issue_token(user.id, "valid", crate::domain::user::TokenScope::Write, None)
                .await?;
            let (revoked_info, revoked) = store
                .issue_token(user.id, "revoked", crate::domain::user::TokenScope::Write, None)
                .await?;
            assert!(store.revoke_token(revoked_info.id, None).await?);
            expected.push((valid.clone(), Some(user.id)));
            expected.push((valid, Some(user.id)));
            expected.push((revoked, None));
            expected.push((format!("unknown-{n}"), None));
        }
        let checks = expected
            .iter()
            .map(|(token, _)| store.check_token_hash(hash_token(token)));
        let answers = futures_util::future::join_all(checks).await;
        for ((token, user), answer) in expected.iter().zip(answers) {
            let found = answer?.map(|holder| holder.user.id);
            assert_eq!(&found, user, "{token}");
        }
        // The reader keeps its connection a moment for the next checks, and reads them.
        assert!(store.token_checks.lock().reading, "the reader lingers");
        let found = store
            .check_token_hash(hash_token(&expected[0].0))
            .await?
            .ok_or("not found")?;
        assert_eq!(Some(found.user.id), expected[0].1);
        // With nothing more to read it stops, and a check after that starts a new one.
        tokio::time::sleep(LINGER * 4).await;
        assert!(!store.token_checks.lock().reading, "the reader stopped");
        let found = store
            .check_token_hash(hash_token(&expected[4].0))
            .await?
            .ok_or("not found")?;
        assert_eq!(Some(found.user.id), expected[4].1);
        Ok(())
    }
}
