//! Sessions, one-time password links, failed sign-ins and passwords.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db};
use crate::domain::now;
use crate::domain::user::{LINK_PREFIX, SESSION_PREFIX, SessionInfo, User, hash_token, new_secret};

#[derive(sqlx::FromRow)]
struct SessionRow {
    id: Uuid,
    created_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    ip: Option<String>,
    user_agent: Option<String>,
    method: String,
}

/// Where a new session comes from.
pub struct SessionStart<'a> {
    pub user_id: Uuid,
    pub lifetime: chrono::Duration,
    pub ip: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    /// `password`, `sso`, `invitation`, `signup` or `password-link`.
    pub method: &'a str,
}

/// A user with what signing in needs to know.
#[derive(sqlx::FromRow)]
pub struct Account {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub password_hash: Option<String>,
}

impl Account {
    pub fn user(&self) -> User {
        User {
            id: self.id,
            email: self.email.clone(),
            created_at: self.created_at,
        }
    }
}

/// Failed sign-ins counted under one key.
#[derive(Debug, Clone, Copy)]
pub struct Failures {
    pub count: u32,
    pub locked_until: Option<DateTime<Utc>>,
}

impl Store {
    pub async fn account_by_email(&self, email: &str) -> anyhow::Result<Option<Account>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, Account>(
            "SELECT id, email, name, created_at, password_hash FROM users WHERE email = $1"
        )
        .bind(email)
        .fetch_optional(pool)
        .await)?)
    }

    pub async fn account(&self, user_id: Uuid) -> anyhow::Result<Option<Account>> {
        Ok(db!(self, read, |pool| sqlx::query_as::<_, Account>(
            "SELECT id, email, name, created_at, password_hash FROM users WHERE id = $1"
        )
        .bind(user_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Sets the password's hash; `ended_sessions` also ends the user's sessions but the one
    /// given (a password changed by its owner keeps his own session).
    pub async fn set_password_hash(&self, user_id: Uuid, phc: &str, keep_session: Option<Uuid>) -> anyhow::Result<()> {
        let at = now();
        db!(self, write, |conn| {
            sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
                .bind(phc)
                .bind(user_id)
                .execute(&mut *conn)
                .await?;
            sqlx::query(
                "UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL \
                 AND ($3 IS NULL OR id <> $3)",
            )
            .bind(at)
            .bind(user_id)
            .bind(keep_session)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(())
    }

    /// Re-hashes a password with current parameters, unless it changed meanwhile.
    pub async fn upgrade_password_hash(&self, user_id: Uuid, old: &str, new: &str) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE users SET password_hash = $1 WHERE id = $2 AND password_hash = $3"
        )
        .bind(new)
        .bind(user_id)
        .bind(old)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    pub async fn set_user_name(&self, user_id: Uuid, name: &str) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE users SET name = $1 WHERE id = $2"
        )
        .bind(name)
        .bind(user_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Starts a session; returns its id and the cookie's value (shown once, kept hashed).
    pub async fn start_session(&self, start: SessionStart<'_>) -> anyhow::Result<(Uuid, String)> {
        let (value, hash) = new_secret(SESSION_PREFIX);
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO sessions (id, user_id, token_hash, created_at, last_seen_at, expires_at, ip, user_agent, method) \
             VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8)"
        )
        .bind(id)
        .bind(start.user_id)
        .bind(hash)
        .bind(at)
        .bind(at + start.lifetime)
        .bind(start.ip)
        .bind(start.user_agent.map(|agent| agent.chars().take(300).collect::<String>()))
        .bind(start.method)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok((id, value))
    }

    /// Marks a session used now, so that it does not end for idleness.
    pub async fn touch_session(&self, session_id: Uuid) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE sessions SET last_seen_at = $1 WHERE id = $2"
        )
        .bind(now())
        .bind(session_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// The user's sessions that have not ended, newest first.
    pub async fn sessions(&self, user_id: Uuid, current: Option<Uuid>) -> anyhow::Result<Vec<SessionInfo>> {
        let at = now();
        let rows = db!(self, read, |pool| sqlx::query_as::<_, SessionRow>(
            "SELECT id, created_at, last_seen_at, expires_at, ip, user_agent, method FROM sessions \
             WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND last_seen_at > $3 \
             ORDER BY created_at DESC, id DESC"
        )
        .bind(user_id)
        .bind(at)
        .bind(at - self.session_idle)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|row| SessionInfo {
                id: row.id,
                created_at: row.created_at,
                last_seen_at: row.last_seen_at,
                expires_at: row.expires_at,
                ip: row.ip,
                user_agent: row.user_agent,
                method: row.method,
                current: Some(row.id) == current,
            })
            .collect())
    }

    /// Ends one of the user's sessions; `false` when he has no such live session.
    pub async fn revoke_session(&self, user_id: Uuid, session_id: Uuid) -> anyhow::Result<bool> {
        let done = db!(self, write_one, |conn| sqlx::query(
            "UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL"
        )
        .bind(now())
        .bind(session_id)
        .bind(user_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(done == 1)
    }

    /// A one-time link's token to set the user's password; only its hash is kept.
    pub async fn issue_password_link(&self, user_id: Uuid, lifetime: chrono::Duration) -> anyhow::Result<String> {
        let (value, hash) = new_secret(LINK_PREFIX);
        let at = now();
        db!(self, write_one, |conn| sqlx::query(
            "INSERT INTO password_links (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)"
        )
        .bind(hash)
        .bind(user_id)
        .bind(at)
        .bind(at + lifetime)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(value)
    }

    /// Uses a password link: the user it was for, once, while it is valid. Using one
    /// spends every other link of that user too.
    pub async fn use_password_link(&self, token: &str) -> anyhow::Result<Option<Uuid>> {
        let at = now();
        let hash = hash_token(token);
        Ok(db!(self, write, |conn| {
            let user: Option<Uuid> = sqlx::query_scalar(
                "UPDATE password_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 \
                 RETURNING user_id",
            )
            .bind(at)
            .bind(&hash)
            .fetch_optional(&mut *conn)
            .await?;
            if let Some(user) = user {
                sqlx::query("UPDATE password_links SET used_at = $1 WHERE user_id = $2 AND used_at IS NULL")
                    .bind(at)
                    .bind(user)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok::<_, sqlx::Error>(user)
        })?)
    }

    /// The failures counted under `key` in the current window.
    pub async fn sign_in_failures(&self, key: &str, window: chrono::Duration) -> anyhow::Result<Failures> {
        let row: Option<(i32, DateTime<Utc>, Option<DateTime<Utc>>)> = db!(self, read, |pool| sqlx::query_as(
            "SELECT failures, first_at, locked_until FROM sign_in_failures WHERE key = $1"
        )
        .bind(key)
        .fetch_optional(pool)
        .await)?;
        let at = now();
        Ok(match row {
            Some((count, first_at, locked_until)) if first_at > at - window || locked_until.is_some_and(|t| t > at) => {
                Failures {
                    count: count.max(0) as u32,
                    locked_until: locked_until.filter(|t| *t > at),
                }
            }
            _ => Failures {
                count: 0,
                locked_until: None,
            },
        })
    }

    /// Counts one more failure under `key` (a new window when the last one is over), and
    /// locks the key until `now + window` once `lock_after` failures are reached.
    pub async fn record_sign_in_failure(
        &self,
        key: &str,
        window: chrono::Duration,
        lock_after: u32,
    ) -> anyhow::Result<Failures> {
        let at = now();
        let (count, locked_until): (i32, Option<DateTime<Utc>>) = db!(self, write_one, |conn| {
            sqlx::query_as(
            "INSERT INTO sign_in_failures (key, failures, first_at, last_at, locked_until) \
             VALUES ($1, 1, $2, $2, CASE WHEN 1 >= $4 THEN $5 END) \
             ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN sign_in_failures.first_at > $3 THEN sign_in_failures.failures + 1 ELSE 1 END, \
               first_at = CASE WHEN sign_in_failures.first_at > $3 THEN sign_in_failures.first_at ELSE $2 END, \
               last_at = $2, \
               locked_until = CASE WHEN (CASE WHEN sign_in_failures.first_at > $3 THEN sign_in_failures.failures + 1 ELSE 1 END) >= $4 \
                              THEN $5 ELSE sign_in_failures.locked_until END \
             RETURNING failures, locked_until"
        )
        .bind(key)
        .bind(at)
        .bind(at - window)
        .bind(lock_after as i32)
        .bind(at + window)
        .fetch_one(&mut *conn)
        .await
        })?;
        Ok(Failures {
            count: count.max(0) as u32,
            locked_until: locked_until.filter(|t| *t > at),
        })
    }

    pub async fn clear_sign_in_failures(&self, key: &str) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM sign_in_failures WHERE key = $1"
        )
        .bind(key)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store_with_user() -> Result<(tempfile::TempDir, Store, Uuid), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let store = Store::connect(&url(&dir), 2).await?;
        let user = store.add_user("ann@example.org").await?.ok_or("taken")?;
        Ok((dir, store, user.id))
    }

    fn url(dir: &tempfile::TempDir) -> String {
        format!("sqlite://{}", dir.path().join("insight.db").display())
    }

    fn start(user_id: Uuid, lifetime: chrono::Duration) -> SessionStart<'static> {
        SessionStart {
            user_id,
            lifetime,
            ip: Some("192.0.2.7"),
            user_agent: Some("a browser"),
            method: "password",
        }
    }

    #[tokio::test]
    async fn a_session_ends_when_idle_too_long_at_its_end_or_when_revoked() -> Result<(), Box<dyn std::error::Error>> {
        let (dir, store, user) = store_with_user().await?;
        let (id, value) = store.start_session(start(user, chrono::Duration::hours(1))).await?;
        assert!(value.starts_with(SESSION_PREFIX));
        let holder = store.holder_of(&value).await?.ok_or("a live session")?;
        assert_eq!(holder.user.id, user);
        assert!(matches!(holder.credential, crate::store::Credential::Session { id: found, .. } if found == id));

        // The same session seen by another instance, whose idle limit it has passed.
        let strict = Store::connect(&url(&dir), 2)
            .await?
            .with_session_idle(std::time::Duration::ZERO);
        assert!(strict.holder_of(&value).await?.is_none(), "idle too long");

        let (_, ended) = store.start_session(start(user, chrono::Duration::seconds(-1))).await?;
        assert!(store.holder_of(&ended).await?.is_none(), "past its absolute end");

        let listed = store.sessions(user, Some(id)).await?;
        assert_eq!(listed.len(), 1, "only live sessions are listed");
        assert!(listed[0].current);
        assert_eq!(listed[0].ip.as_deref(), Some("192.0.2.7"));
        assert!(store.revoke_session(user, id).await?);
        assert!(store.holder_of(&value).await?.is_none(), "revoked");
        assert!(!store.revoke_session(user, id).await?, "once");
        Ok(())
    }

    #[tokio::test]
    async fn failures_lock_a_key_at_the_limit_and_a_new_window_starts_over() -> Result<(), Box<dyn std::error::Error>> {
        let (_dir, store, _) = store_with_user().await?;
        let window = chrono::Duration::minutes(15);
        for expected in 1..=2 {
            let failures = store
                .record_sign_in_failure("account:ann@example.org", window, 3)
                .await?;
            assert_eq!((failures.count, failures.locked_until), (expected, None));
        }
        let third = store
            .record_sign_in_failure("account:ann@example.org", window, 3)
            .await?;
        assert_eq!(third.count, 3);
        assert!(third.locked_until.is_some(), "locked at the limit");
        let read = store.sign_in_failures("account:ann@example.org", window).await?;
        assert!(read.locked_until.is_some());
        // With a window already over, the next failure starts counting again.
        let fresh = store
            .record_sign_in_failure("account:ann@example.org", chrono::Duration::zero(), 3)
            .await?;
        assert_eq!(fresh.count, 1);
        store.clear_sign_in_failures("account:ann@example.org").await?;
        assert_eq!(
            store.sign_in_failures("account:ann@example.org", window).await?.count,
            0
        );
        Ok(())
    }
}
