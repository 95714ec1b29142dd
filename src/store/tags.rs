//! Tags of a workspace. Reads are filtered by membership and changes by a role that may
//! write, as everywhere in the store, so a forgotten check in a use case changes nothing.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::workspaces::{member_of, writer_of};
use super::{Store, db};
use crate::domain::now;
use crate::domain::tag::{Tag, name_key};

/// A tag counts the highlights a person made or accepted (suggestions wait).
const SELECT_TAG: &str = "SELECT t.id, t.workspace_id, t.name, t.color, t.description, t.parent_id, \
     (SELECT COUNT(*) FROM highlight_tags ht JOIN highlights h ON h.id = ht.highlight_id \
      WHERE ht.tag_id = t.id AND h.status IN ('ok', 'detached')) AS highlights_count, t.created_at FROM tags t";

#[derive(sqlx::FromRow)]
struct TagRow {
    id: Uuid,
    workspace_id: Uuid,
    name: String,
    color: String,
    description: String,
    parent_id: Option<Uuid>,
    highlights_count: i64,
    created_at: DateTime<Utc>,
}

impl From<TagRow> for Tag {
    fn from(row: TagRow) -> Self {
        Self {
            id: row.id,
            workspace_id: row.workspace_id,
            name: row.name,
            color: row.color,
            description: row.description,
            parent_id: row.parent_id,
            highlights_count: row.highlights_count,
            created_at: row.created_at,
        }
    }
}

pub struct NewTag<'a> {
    pub workspace_id: Uuid,
    pub name: &'a str,
    pub color: &'a str,
    pub description: &'a str,
    pub parent_id: Option<Uuid>,
    pub created_by: Uuid,
}

/// A tag's fields after a change.
pub struct TagFields {
    pub name: String,
    pub color: String,
    pub description: String,
    pub parent_id: Option<Uuid>,
}

impl Store {
    /// The workspace's tags by name, for a member.
    pub async fn list_tags(&self, user_id: Uuid, workspace_id: Uuid) -> anyhow::Result<Vec<Tag>> {
        let sql = format!(
            "{SELECT_TAG} WHERE t.workspace_id = $1 AND t.workspace_id IN {} ORDER BY t.name_key, t.id",
            member_of!(2)
        );
        let rows = db!(self, read, |pool| sqlx::query_as::<_, TagRow>(&sql)
            .bind(workspace_id)
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Tag::from).collect())
    }

    pub async fn get_tag(&self, user_id: Uuid, tag_id: Uuid) -> anyhow::Result<Option<Tag>> {
        let sql = format!("{SELECT_TAG} WHERE t.id = $1 AND t.workspace_id IN {}", member_of!(2));
        let row = db!(self, read, |pool| sqlx::query_as::<_, TagRow>(&sql)
            .bind(tag_id)
            .bind(user_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Tag::from))
    }

    /// Whether the workspace has a tag of this name (compared without case), other than
    /// `except`.
    pub async fn tag_name_taken(&self, workspace_id: Uuid, name: &str, except: Option<Uuid>) -> anyhow::Result<bool> {
        let found = db!(self, read, |pool| sqlx::query_scalar::<_, Uuid>(
            "SELECT id FROM tags WHERE workspace_id = $1 AND name_key = $2 AND ($3 IS NULL OR id <> $3)"
        )
        .bind(workspace_id)
        .bind(name_key(name))
        .bind(except)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// Whether any tag is in the tag's group.
    pub async fn tag_has_children(&self, tag_id: Uuid) -> anyhow::Result<bool> {
        let found = db!(self, read, |pool| sqlx::query_scalar::<_, Uuid>(
            "SELECT id FROM tags WHERE parent_id = $1 LIMIT 1"
        )
        .bind(tag_id)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// Makes a tag; `None` when the workspace has one of that name already.
    pub async fn create_tag(&self, new: NewTag<'_>) -> anyhow::Result<Option<Tag>> {
        let id = Uuid::new_v4();
        let at = now();
        let added = db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO tags (id, workspace_id, name, name_key, color, description, parent_id, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (workspace_id, name_key) DO NOTHING"
        )
        .bind(id)
        .bind(new.workspace_id)
        .bind(new.name)
        .bind(name_key(new.name))
        .bind(new.color)
        .bind(new.description)
        .bind(new.parent_id)
        .bind(new.created_by)
        .bind(at)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok((added == 1).then(|| Tag {
            id,
            workspace_id: new.workspace_id,
            name: new.name.to_owned(),
            color: new.color.to_owned(),
            description: new.description.to_owned(),
            parent_id: new.parent_id,
            highlights_count: 0,
            created_at: at,
        }))
    }

    /// Replaces a tag's fields, for a writer of its workspace; `false` when there is none.
    pub async fn update_tag(&self, user_id: Uuid, tag_id: Uuid, fields: &TagFields) -> anyhow::Result<bool> {
        let sql = format!(
            "UPDATE tags SET name = $1, name_key = $2, color = $3, description = $4, parent_id = $5 \
             WHERE id = $6 AND workspace_id IN {}",
            writer_of!(7)
        );
        let changed = db!(self, write_one, |conn| sqlx::query(&sql)
            .bind(&fields.name)
            .bind(name_key(&fields.name))
            .bind(&fields.color)
            .bind(&fields.description)
            .bind(fields.parent_id)
            .bind(tag_id)
            .bind(user_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(changed == 1)
    }

    /// Deletes a tag; the tags in its group leave the group. `false` when there is none.
    pub async fn delete_tag(&self, user_id: Uuid, tag_id: Uuid) -> anyhow::Result<bool> {
        let sql = format!("DELETE FROM tags WHERE id = $1 AND workspace_id IN {}", writer_of!(2));
        let deleted = db!(self, write_one, |conn| sqlx::query(&sql)
            .bind(tag_id)
            .bind(user_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(deleted == 1)
    }

    /// Merges a tag into `into_id` in one transaction: its highlights are filed under
    /// `into_id`, the tags of its group (but the group itself) move to
    /// `group_for_children`, then it is deleted. `false` when there is no such tag.
    pub async fn merge_tag(
        &self,
        user_id: Uuid,
        tag_id: Uuid,
        into_id: Uuid,
        group_for_children: Uuid,
    ) -> anyhow::Result<bool> {
        let refile = format!(
            "INSERT INTO highlight_tags (highlight_id, tag_id) SELECT highlight_id, $1 FROM highlight_tags \
             WHERE tag_id = $2 AND $2 IN (SELECT id FROM tags WHERE workspace_id IN {}) ON CONFLICT DO NOTHING",
            writer_of!(3)
        );
        let regroup = format!(
            "UPDATE tags SET parent_id = $1 WHERE parent_id = $2 AND id <> $1 AND workspace_id IN {}",
            writer_of!(3)
        );
        let delete = format!("DELETE FROM tags WHERE id = $1 AND workspace_id IN {}", writer_of!(2));
        let merged = db!(self, write, |conn| {
            sqlx::query(&refile)
                .bind(into_id)
                .bind(tag_id)
                .bind(user_id)
                .execute(&mut *conn)
                .await?;
            sqlx::query(&regroup)
                .bind(group_for_children)
                .bind(tag_id)
                .bind(user_id)
                .execute(&mut *conn)
                .await?;
            sqlx::query(&delete)
                .bind(tag_id)
                .bind(user_id)
                .execute(&mut *conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        Ok(merged == 1)
    }
}
