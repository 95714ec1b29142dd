//! Invitations to a workspace. The link's token is derived from the instance key and the
//! invitation's nonce (`accounts::invitations`), so only its hash is kept.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::paging::Keyset;
use super::{CreatedKey, Store, db};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::workspace::Role;

/// An invitation as stored; the door derives its link from `token_nonce`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct InvitationRow {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub email: String,
    pub role: String,
    pub token_nonce: Vec<u8>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
}

impl InvitationRow {
    pub fn role(&self) -> Role {
        Role::parse(&self.role).unwrap_or(Role::Viewer)
    }
}

const SELECT_INVITATION: &str = "SELECT id, workspace_id, email, role, token_nonce, created_at, expires_at, accepted_at \
     FROM invitations";

pub struct NewInvitation<'a> {
    pub workspace_id: Uuid,
    pub email: &'a str,
    pub role: Role,
    pub nonce: &'a [u8],
    pub token_hash: &'a [u8],
    pub invited_by: Uuid,
    pub expires_at: DateTime<Utc>,
}

/// What accepting an invitation came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Accepted {
    /// The user joined, or was a member already and keeps the higher of his role and
    /// the invited one: `role` is the one he holds now, `invited` the invitation's.
    Joined {
        workspace_id: Uuid,
        role: Role,
        invited: Role,
    },
    /// No such invitation, or it was accepted or withdrawn.
    Unknown,
    Expired,
}

impl Store {
    pub async fn create_invitation(&self, new: NewInvitation<'_>) -> anyhow::Result<InvitationRow> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO invitations (id, workspace_id, email, role, token_nonce, token_hash, invited_by, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        )
        .bind(id)
        .bind(new.workspace_id)
        .bind(new.email)
        .bind(new.role.as_str())
        .bind(new.nonce)
        .bind(new.token_hash)
        .bind(new.invited_by)
        .bind(at)
        .bind(new.expires_at)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(InvitationRow {
            id,
            workspace_id: new.workspace_id,
            email: new.email.to_owned(),
            role: new.role.as_str().to_owned(),
            token_nonce: new.nonce.to_vec(),
            created_at: at,
            expires_at: new.expires_at,
            accepted_at: None,
        })
    }

    /// A page of the workspace's invitations, newest first.
    pub async fn invitations(
        &self,
        workspace_id: Uuid,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<InvitationRow, CreatedKey>> {
        let after = Keyset::descending(page, "(created_at, id)", 3);
        let sql =
            format!("{SELECT_INVITATION} WHERE workspace_id = $1{after} ORDER BY created_at DESC, id DESC LIMIT $2");
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, InvitationRow>(&sql)
                .bind(workspace_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        Ok(after.page(rows, |row: &InvitationRow| (row.created_at, row.id)))
    }

    /// The open invitation with this token's hash, for the page that accepts it.
    pub async fn invitation_by_hash(&self, token_hash: &[u8]) -> anyhow::Result<Option<InvitationRow>> {
        let sql = format!("{SELECT_INVITATION} WHERE token_hash = $1 AND accepted_at IS NULL");
        Ok(db!(self, read, |pool| sqlx::query_as::<_, InvitationRow>(&sql)
            .bind(token_hash)
            .fetch_optional(pool)
            .await)?)
    }

    /// Withdraws an open invitation; `false` when the workspace has no such open invitation.
    pub async fn delete_invitation(&self, workspace_id: Uuid, id: Uuid) -> anyhow::Result<bool> {
        let done = db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM invitations WHERE id = $1 AND workspace_id = $2 AND accepted_at IS NULL"
        )
        .bind(id)
        .bind(workspace_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(done == 1)
    }

    /// Accepts an invitation for `user_id`: marks it used and adds the member, in one
    /// transaction, so a link works once however many people race with it.
    pub async fn accept_invitation(&self, token_hash: &[u8], user_id: Uuid) -> anyhow::Result<Accepted> {
        let at = now();
        let joined = db!(self, write, |conn| {
            let row: Option<(Uuid, String)> = sqlx::query_as(
                "UPDATE invitations SET accepted_at = $1, accepted_by = $2 \
                 WHERE token_hash = $3 AND accepted_at IS NULL AND expires_at > $1 RETURNING workspace_id, role",
            )
            .bind(at)
            .bind(user_id)
            .bind(token_hash)
            .fetch_optional(&mut *conn)
            .await?;
            match row {
                None => Ok::<_, sqlx::Error>(None),
                Some((workspace_id, invited)) => {
                    let invited = Role::parse(&invited).unwrap_or(Role::Viewer);
                    // A member already in the workspace is raised to the invited role, never
                    // lowered by it; the row answers the role he holds after this statement,
                    // in the same transaction as the invitation's use.
                    let (held,): (String,) = sqlx::query_as(&format!(
                        "INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) \
                         ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = CASE \
                         WHEN {} > {} THEN excluded.role ELSE workspace_members.role END \
                         RETURNING role",
                        role_rank("excluded.role"),
                        role_rank("workspace_members.role"),
                    ))
                    .bind(workspace_id)
                    .bind(user_id)
                    .bind(invited.as_str())
                    .bind(at)
                    .fetch_one(&mut *conn)
                    .await?;
                    let role = Role::parse(&held).unwrap_or(invited);
                    Ok(Some(Accepted::Joined {
                        workspace_id,
                        role,
                        invited,
                    }))
                }
            }
        })?;
        if let Some(joined) = joined {
            return Ok(joined);
        }
        Ok(match self.invitation_by_hash(token_hash).await? {
            Some(_) => Accepted::Expired,
            None => Accepted::Unknown,
        })
    }
}

/// A role's rank in SQL (owner highest), so a statement can keep the higher of two.
fn role_rank(column: &str) -> String {
    format!("(CASE {column} WHEN 'owner' THEN 4 WHEN 'admin' THEN 3 WHEN 'researcher' THEN 2 ELSE 1 END)")
}
