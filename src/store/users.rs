//! Users and API tokens. Tokens are stored only as SHA-256 hashes.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Store, db};
use crate::domain::now;
use crate::domain::user::{TokenInfo, TokenScope, User, hash_token, new_token};
use crate::domain::workspace::Role;

#[derive(sqlx::FromRow)]
struct UserRow {
    id: Uuid,
    email: String,
    created_at: DateTime<Utc>,
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> Self {
        Self {
            id: row.id,
            email: row.email,
            created_at: row.created_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct TokenRow {
    id: Uuid,
    name: String,
    scope: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
}

impl From<TokenRow> for TokenInfo {
    fn from(row: TokenRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            scope: TokenScope::parse(&row.scope).unwrap_or(TokenScope::Read),
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
        }
    }
}

/// The address of the user `serve` creates on an empty database.
pub const FIRST_ADMIN_EMAIL: &str = "admin@localhost";

impl Store {
    /// Adds a user with his personal workspace (whose id is his own); `None` when the
    /// address is taken.
    pub async fn add_user(&self, email: &str) -> anyhow::Result<Option<User>> {
        self.add_user_named(email, "").await
    }

    pub async fn add_user_named(&self, email: &str, name: &str) -> anyhow::Result<Option<User>> {
        let user = User {
            id: Uuid::new_v4(),
            email: email.to_owned(),
            created_at: now(),
        };
        let inserted = db!(self, write, |conn| {
            let done = sqlx::query(
                "INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING",
            )
            .bind(user.id)
            .bind(&user.email)
            .bind(name)
            .bind(user.created_at)
            .execute(&mut *conn)
            .await?;
            if done.rows_affected() == 1 {
                sqlx::query(
                    "INSERT INTO workspaces (id, name, personal_of, created_at, updated_at) VALUES ($1, $2, $1, $3, $3)",
                )
                .bind(user.id)
                .bind(&user.email)
                .bind(user.created_at)
                .execute(&mut *conn)
                .await?;
                sqlx::query(
                    "INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $1, $2, $3)",
                )
                .bind(user.id)
                .bind(Role::Owner.as_str())
                .bind(user.created_at)
                .execute(&mut *conn)
                .await?;
            }
            Ok::<_, sqlx::Error>(done.rows_affected())
        })?;
        Ok((inserted == 1).then_some(user))
    }

    pub async fn user_by_email(&self, email: &str) -> anyhow::Result<Option<User>> {
        let row = db!(self, read, |pool| sqlx::query_as::<_, UserRow>(
            "SELECT id, email, created_at FROM users WHERE email = $1"
        )
        .bind(email)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(User::from))
    }

    /// On a database with no users, creates `admin@localhost` with one token and returns
    /// both. Several instances starting at once create exactly one.
    pub async fn ensure_first_user(&self) -> anyhow::Result<Option<(User, String)>> {
        let (count,): (i64,) = db!(self, read, |pool| sqlx::query_as("SELECT COUNT(*) FROM users")
            .fetch_one(pool)
            .await)?;
        if count > 0 {
            return Ok(None);
        }
        let Some(user) = self.add_user(FIRST_ADMIN_EMAIL).await? else {
            return Ok(None);
        };
        let (_, token) = self.issue_token(user.id, "first run", TokenScope::Write, None).await?;
        Ok(Some((user, token)))
    }

    /// Issues a new token; the token itself is returned once and never stored.
    pub async fn issue_token(
        &self,
        user_id: Uuid,
        name: &str,
        scope: TokenScope,
        expires_at: Option<DateTime<Utc>>,
    ) -> anyhow::Result<(TokenInfo, String)> {
        let (token, hash) = new_token();
        let info = TokenInfo {
            id: Uuid::new_v4(),
            name: name.to_owned(),
            scope,
            created_at: now(),
            expires_at,
            revoked_at: None,
        };
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO api_tokens (id, user_id, name, token_hash, created_at, expires_at, scope) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        )
        .bind(info.id)
        .bind(user_id)
        .bind(&info.name)
        .bind(&hash)
        .bind(info.created_at)
        .bind(info.expires_at)
        .bind(info.scope.as_str())
        .execute(&mut *conn)
        .await.map(|done| done.rows_affected())
        })?;
        Ok((info, token))
    }

    pub async fn list_tokens(&self, user_id: Uuid) -> anyhow::Result<Vec<TokenInfo>> {
        let rows = db!(self, read, |pool| {
            sqlx::query_as::<_, TokenRow>(
            "SELECT id, name, scope, created_at, expires_at, revoked_at FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id"
        )
        .bind(user_id)
        .fetch_all(pool)
        .await
        })?;
        Ok(rows.into_iter().map(TokenInfo::from).collect())
    }

    /// Revokes a token (of `user_id` when given); `false` when there is no such token or
    /// it was revoked already.
    pub async fn revoke_token(&self, token_id: Uuid, user_id: Option<Uuid>) -> anyhow::Result<bool> {
        let result = db!(self, write_one, |conn| {
            sqlx::query(
            "UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL AND ($3 IS NULL OR user_id = $3)"
        )
        .bind(now())
        .bind(token_id)
        .bind(user_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(result == 1)
    }

    /// Who holds a bearer token or a session cookie's value, if it is known, not revoked,
    /// not expired (and, for a session, not idle too long), with the user's data version
    /// (see migration 0002). Checks that arrive together share one read (`token_checks.rs`).
    pub async fn holder_of(&self, secret: &str) -> anyhow::Result<Option<super::Holder>> {
        self.check_token_hash(hash_token(secret)).await
    }
}
