//! Workspaces, members and invitations, and the caller's role on any object.
//!
//! Visibility is membership: every query of a workspace's material filters by the
//! workspaces its caller belongs to (`member_of!`), every change by those where he may
//! write (`writer_of!`), and what only those who run a workspace manage by those he runs
//! (`runner_of!`), so a door that forgot its role check still changes nothing it should
//! not. These macros are the one place the store writes the rule. The role checks themselves (404 or 403) read [`Store::role_on`].

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::paging::Keyset;
use super::{Backend, CreatedKey, Store, db};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::workspace::{Member, Membership, Role, Workspace};

/// SQL: the ids of the workspaces user `$n` belongs to.
macro_rules! member_of {
    ($n:literal) => {
        concat!("(SELECT workspace_id FROM workspace_members WHERE user_id = $", $n, ")")
    };
}
pub(crate) use member_of;

/// SQL: the ids of the workspaces where user `$n` may change research material.
macro_rules! writer_of {
    ($n:literal) => {
        concat!(
            "(SELECT workspace_id FROM workspace_members WHERE user_id = $",
            $n,
            " AND role <> 'viewer')"
        )
    };
}
pub(crate) use writer_of;

/// SQL: the ids of the workspaces user `$n` runs (owner or admin: members, webhooks).
macro_rules! runner_of {
    ($n:literal) => {
        concat!(
            "(SELECT workspace_id FROM workspace_members WHERE user_id = $",
            $n,
            " AND role IN ('owner', 'admin'))"
        )
    };
}
pub(crate) use runner_of;

/// What a role is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Workspace(Uuid),
    Project(Uuid),
    Record(Uuid),
    Room(Uuid),
    Prompt(Uuid),
    Preset(Uuid),
    WebhookEndpoint(Uuid),
    Tag(Uuid),
    Highlight(Uuid),
    Insight(Uuid),
}

impl Target {
    /// The caller's role on the target, by the workspace it belongs to. System prompts and
    /// presets belong to no workspace: everyone reads them and nobody changes them, which is
    /// a viewer's role.
    fn sql(self) -> &'static str {
        match self {
            Target::Workspace(_) => "SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2",
            Target::Project(_) => {
                "SELECT m.role FROM projects p JOIN workspace_members m ON m.workspace_id = p.workspace_id \
                 WHERE p.id = $1 AND m.user_id = $2"
            }
            Target::Record(_) => {
                "SELECT m.role FROM records r JOIN projects p ON p.id = r.project_id \
                 JOIN workspace_members m ON m.workspace_id = p.workspace_id WHERE r.id = $1 AND m.user_id = $2"
            }
            Target::Room(_) => {
                "SELECT m.role FROM interview_rooms r JOIN projects p ON p.id = r.project_id \
                 JOIN workspace_members m ON m.workspace_id = p.workspace_id WHERE r.id = $1 AND m.user_id = $2"
            }
            Target::Prompt(_) => {
                "SELECT COALESCE(m.role, 'viewer') FROM prompts x LEFT JOIN workspace_members m \
                 ON m.workspace_id = x.workspace_id AND m.user_id = $2 \
                 WHERE x.id = $1 AND (x.workspace_id IS NULL OR m.user_id IS NOT NULL)"
            }
            Target::Preset(_) => {
                "SELECT COALESCE(m.role, 'viewer') FROM presets x LEFT JOIN workspace_members m \
                 ON m.workspace_id = x.workspace_id AND m.user_id = $2 \
                 WHERE x.id = $1 AND (x.workspace_id IS NULL OR m.user_id IS NOT NULL)"
            }
            Target::WebhookEndpoint(_) => {
                "SELECT m.role FROM webhook_endpoints e JOIN workspace_members m ON m.workspace_id = e.workspace_id \
                 WHERE e.id = $1 AND m.user_id = $2"
            }
            Target::Tag(_) => {
                "SELECT m.role FROM tags t JOIN workspace_members m ON m.workspace_id = t.workspace_id \
                 WHERE t.id = $1 AND m.user_id = $2"
            }
            Target::Highlight(_) => {
                "SELECT m.role FROM highlights h JOIN records r ON r.id = h.record_id JOIN projects p ON p.id = r.project_id \
                 JOIN workspace_members m ON m.workspace_id = p.workspace_id \
                 WHERE h.id = $1 AND m.user_id = $2 AND h.status <> 'rejected'"
            }
            Target::Insight(_) => {
                "SELECT m.role FROM insights i JOIN projects p ON p.id = i.project_id \
                 JOIN workspace_members m ON m.workspace_id = p.workspace_id WHERE i.id = $1 AND m.user_id = $2"
            }
        }
    }

    fn id(self) -> Uuid {
        match self {
            Target::Workspace(id)
            | Target::Project(id)
            | Target::Record(id)
            | Target::Room(id)
            | Target::Prompt(id)
            | Target::Preset(id)
            | Target::WebhookEndpoint(id)
            | Target::Tag(id)
            | Target::Highlight(id)
            | Target::Insight(id) => id,
        }
    }
}

#[derive(sqlx::FromRow)]
struct WorkspaceRow {
    id: Uuid,
    name: String,
    personal_of: Option<Uuid>,
    role: String,
    created_at: DateTime<Utc>,
}

impl From<WorkspaceRow> for Workspace {
    fn from(row: WorkspaceRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            personal: row.personal_of.is_some(),
            role: Role::parse(&row.role).unwrap_or(Role::Viewer),
            created_at: row.created_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct MemberRow {
    user_id: Uuid,
    email: String,
    name: String,
    role: String,
    joined_at: DateTime<Utc>,
}

impl From<MemberRow> for Member {
    fn from(row: MemberRow) -> Self {
        Self {
            user_id: row.user_id,
            email: row.email,
            name: row.name,
            role: Role::parse(&row.role).unwrap_or(Role::Viewer),
            joined_at: row.joined_at,
        }
    }
}

const SELECT_WORKSPACE: &str = "SELECT w.id, w.name, w.personal_of, m.role, w.created_at \
     FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id";

const SELECT_MEMBER: &str = "SELECT m.user_id, u.email, u.name, m.role, m.joined_at \
     FROM workspace_members m JOIN users u ON u.id = m.user_id";

/// Why a membership change was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum MemberChange {
    Done,
    NotAMember,
    /// The change would leave the workspace without an owner.
    LastOwner,
}

impl Store {
    /// The user's role on the target; `None` when he cannot see it (or it does not exist).
    pub async fn role_on(&self, user_id: Uuid, target: Target) -> anyhow::Result<Option<Role>> {
        let role = db!(self, read, |pool| sqlx::query_scalar::<_, String>(target.sql())
            .bind(target.id())
            .bind(user_id)
            .fetch_optional(pool)
            .await)?;
        Ok(role.and_then(|role| Role::parse(&role)))
    }

    /// Whether a prompt or preset is a system one (it belongs to no workspace).
    pub async fn is_system_item(&self, target: Target) -> anyhow::Result<bool> {
        let sql = match target {
            Target::Prompt(_) => "SELECT workspace_id IS NULL FROM prompts WHERE id = $1",
            Target::Preset(_) => "SELECT workspace_id IS NULL FROM presets WHERE id = $1",
            _ => return Ok(false),
        };
        let system = db!(self, read, |pool| sqlx::query_scalar::<_, bool>(sql)
            .bind(target.id())
            .fetch_optional(pool)
            .await)?;
        Ok(system.unwrap_or(false))
    }

    /// A workspace's name, whoever asks (an invitation's page names it to the invited).
    pub async fn workspace_name(&self, workspace_id: Uuid) -> anyhow::Result<Option<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT name FROM workspaces WHERE id = $1"
        )
        .bind(workspace_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The workspace a project belongs to (for the audit log).
    pub async fn project_workspace(&self, project_id: Uuid) -> anyhow::Result<Option<Uuid>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, Uuid>(
            "SELECT workspace_id FROM projects WHERE id = $1"
        )
        .bind(project_id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The workspaces the user belongs to: his personal one first, then by name.
    pub async fn workspaces_of(&self, user_id: Uuid) -> anyhow::Result<Vec<Workspace>> {
        let sql = format!(
            "{SELECT_WORKSPACE} WHERE m.user_id = $1 \
             ORDER BY CASE WHEN w.personal_of = $1 THEN 0 ELSE 1 END, w.name, w.id"
        );
        let rows = db!(self, read, |pool| sqlx::query_as::<_, WorkspaceRow>(&sql)
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Workspace::from).collect())
    }

    pub async fn memberships(&self, user_id: Uuid) -> anyhow::Result<Vec<Membership>> {
        Ok(self
            .workspaces_of(user_id)
            .await?
            .into_iter()
            .map(|w| Membership {
                id: w.id,
                name: w.name,
                role: w.role,
            })
            .collect())
    }

    pub async fn workspace(&self, user_id: Uuid, workspace_id: Uuid) -> anyhow::Result<Option<Workspace>> {
        let sql = format!("{SELECT_WORKSPACE} WHERE m.user_id = $1 AND w.id = $2");
        let row = db!(self, read, |pool| sqlx::query_as::<_, WorkspaceRow>(&sql)
            .bind(user_id)
            .bind(workspace_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Workspace::from))
    }

    /// A new team workspace with its maker as owner.
    pub async fn create_workspace(&self, user_id: Uuid, name: &str) -> anyhow::Result<Workspace> {
        let id = Uuid::new_v4();
        let at = now();
        db!(self, write, |conn| {
            sqlx::query("INSERT INTO workspaces (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3)")
                .bind(id)
                .bind(name)
                .bind(at)
                .execute(&mut *conn)
                .await?;
            sqlx::query(
                "INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(id)
            .bind(user_id)
            .bind(Role::Owner.as_str())
            .bind(at)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(Workspace {
            id,
            name: name.to_owned(),
            personal: false,
            role: Role::Owner,
            created_at: at,
        })
    }

    pub async fn rename_workspace(&self, workspace_id: Uuid, name: &str) -> anyhow::Result<()> {
        db!(self, write_one, |conn| sqlx::query(
            "UPDATE workspaces SET name = $1, updated_at = $2 WHERE id = $3"
        )
        .bind(name)
        .bind(now())
        .bind(workspace_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Deletes a team workspace with everything in it (by cascade) and the pending jobs of
    /// its reports; a personal workspace is never deleted (`false`).
    pub async fn delete_workspace(&self, workspace_id: Uuid) -> anyhow::Result<bool> {
        Ok(db!(self, write, |conn| {
            sqlx::query(
                "DELETE FROM jobs WHERE subject_id IN (SELECT r.id FROM reports r JOIN projects p ON p.id = r.project_id \
                 WHERE p.workspace_id = $1)",
            )
            .bind(workspace_id)
            .execute(&mut *conn)
            .await?;
            let done = sqlx::query("DELETE FROM workspaces WHERE id = $1 AND personal_of IS NULL")
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>(done.rows_affected() == 1)
        })?)
    }

    /// The files (recordings, uploads) of a workspace's records, to delete with it.
    pub async fn workspace_media_paths(&self, workspace_id: Uuid) -> anyhow::Result<Vec<String>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, String>(
            "SELECT r.media_path FROM records r JOIN projects p ON p.id = r.project_id \
             WHERE p.workspace_id = $1 AND r.media_path IS NOT NULL"
        )
        .bind(workspace_id)
        .fetch_all(pool)
        .await)?)
    }

    /// A page of the workspace's members, in the order they joined.
    pub async fn members(
        &self,
        workspace_id: Uuid,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Member, CreatedKey>> {
        let after = Keyset::ascending(page, "(m.joined_at, m.user_id)", 3);
        let sql = format!("{SELECT_MEMBER} WHERE m.workspace_id = $1{after} ORDER BY m.joined_at, m.user_id LIMIT $2");
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, MemberRow>(&sql)
                .bind(workspace_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let members = rows.into_iter().map(Member::from).collect();
        Ok(after.page(members, |member: &Member| (member.joined_at, member.user_id)))
    }

    pub async fn member(&self, workspace_id: Uuid, user_id: Uuid) -> anyhow::Result<Option<Member>> {
        let sql = format!("{SELECT_MEMBER} WHERE m.workspace_id = $1 AND m.user_id = $2");
        let row = db!(self, read, |pool| sqlx::query_as::<_, MemberRow>(&sql)
            .bind(workspace_id)
            .bind(user_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Member::from))
    }

    /// Adds a member, or leaves one who is already there as he is (`false`).
    pub async fn add_member(&self, workspace_id: Uuid, user_id: Uuid, role: Role) -> anyhow::Result<bool> {
        let added = db!(self, write_one, |conn| sqlx::query(
            "INSERT INTO workspace_members (workspace_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (workspace_id, user_id) DO NOTHING"
        )
        .bind(workspace_id)
        .bind(user_id)
        .bind(role.as_str())
        .bind(now())
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(added == 1)
    }

    /// Changes a member's role, unless that leaves the workspace without an owner.
    pub async fn set_member_role(&self, workspace_id: Uuid, user_id: Uuid, role: Role) -> anyhow::Result<MemberChange> {
        let changed = self
            .owners_change(
                workspace_id,
                "UPDATE workspace_members SET role = $3 WHERE workspace_id = $1 AND user_id = $2 \
                 AND ($3 = 'owner' OR role <> 'owner' OR EXISTS (SELECT 1 FROM workspace_members o \
                      WHERE o.workspace_id = $1 AND o.role = 'owner' AND o.user_id <> $2))",
                user_id,
                Some(role),
            )
            .await?;
        self.member_change(changed, workspace_id, user_id).await
    }

    /// Removes a member (and ends his sessions' access at once: access is read from
    /// membership on every request), unless he is the last owner.
    pub async fn remove_member(&self, workspace_id: Uuid, user_id: Uuid) -> anyhow::Result<MemberChange> {
        let removed = self
            .owners_change(
                workspace_id,
                "DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 \
                 AND (role <> 'owner' OR EXISTS (SELECT 1 FROM workspace_members o \
                      WHERE o.workspace_id = $1 AND o.role = 'owner' AND o.user_id <> $2))",
                user_id,
                None,
            )
            .await?;
        self.member_change(removed, workspace_id, user_id).await
    }

    /// Runs a membership change whose statement checks that an owner stays (`$1` the
    /// workspace, `$2` the member, `$3` the new role if any); the rows it changed.
    ///
    /// The check is in the statement, but on PostgreSQL (read committed) two such
    /// statements at once each see the other owner still there, and both pass. So the
    /// workspace's row is locked first: changes of one workspace's members take turns,
    /// and each statement, started after the lock, sees the change before it. SQLite has
    /// one writer, which takes them in turn anyway.
    async fn owners_change(
        &self,
        workspace_id: Uuid,
        sql: &str,
        user_id: Uuid,
        role: Option<Role>,
    ) -> anyhow::Result<u64> {
        let lock = self.backend() == Backend::Postgres;
        Ok(db!(self, write, |conn| {
            if lock {
                sqlx::query("SELECT id FROM workspaces WHERE id = $1 FOR UPDATE")
                    .bind(workspace_id)
                    .fetch_optional(&mut *conn)
                    .await?;
            }
            let query = sqlx::query(sql).bind(workspace_id).bind(user_id);
            match role {
                Some(role) => query.bind(role.as_str()),
                None => query,
            }
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?)
    }

    async fn member_change(&self, rows: u64, workspace_id: Uuid, user_id: Uuid) -> anyhow::Result<MemberChange> {
        if rows == 1 {
            return Ok(MemberChange::Done);
        }
        Ok(match self.member(workspace_id, user_id).await? {
            Some(_) => MemberChange::LastOwner,
            None => MemberChange::NotAMember,
        })
    }
}
