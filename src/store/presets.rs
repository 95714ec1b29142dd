//! Prompts and presets. System ones have no owner (`owner_id IS NULL`) and are visible
//! to everyone; a user's own are visible to him alone.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::paging::Keyset;
use super::{LibraryKey, Store, db, member_of, writer_of};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::preset::{Ownership, Preset, PresetFields, Prompt, PromptFields};
use crate::domain::system_presets::{SYSTEM_PRESETS, system_id};

#[derive(sqlx::FromRow)]
struct PromptRow {
    id: Uuid,
    email: Option<String>,
    title: String,
    text: String,
    category: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<PromptRow> for Prompt {
    fn from(row: PromptRow) -> Self {
        Self {
            id: row.id,
            prompt_type: if row.email.is_some() {
                Ownership::User
            } else {
                Ownership::System
            },
            email: row.email,
            title: row.title,
            text: row.text,
            category: row.category,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct PresetRow {
    id: Uuid,
    email: Option<String>,
    title: String,
    icon: String,
    category: String,
    prompt_ids: Json<Vec<Uuid>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<PresetRow> for Preset {
    fn from(row: PresetRow) -> Self {
        Self {
            id: row.id,
            preset_type: if row.email.is_some() {
                Ownership::User
            } else {
                Ownership::System
            },
            email: row.email,
            title: row.title,
            prompt_ids: row.prompt_ids.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
            icon: row.icon,
            category: row.category,
        }
    }
}

const SELECT_PROMPT: &str = "SELECT p.id, u.email, p.title, p.text, p.category, p.created_at, p.updated_at \
     FROM prompts p LEFT JOIN users u ON u.id = p.owner_id";
const SELECT_PRESET: &str = "SELECT p.id, u.email, p.title, p.icon, p.category, p.prompt_ids, p.created_at, p.updated_at \
     FROM presets p LEFT JOIN users u ON u.id = p.owner_id";
/// System ones first (in the order they ship), then the user's own, oldest first.
const VISIBLE: &str = concat!("(p.workspace_id IS NULL OR p.workspace_id IN ", member_of!(1), ")");
const ORDER: &str = "ORDER BY CASE WHEN p.owner_id IS NULL THEN 0 ELSE 1 END, p.created_at, p.id";
/// The columns of `ORDER`, where a page continues (`LibraryKey`: the kind in `ORDER`'s
/// terms, a time, an id).
const KEY: &str = "(CASE WHEN p.owner_id IS NULL THEN 0 ELSE 1 END, p.created_at, p.id)";

/// The position of a prompt or preset in `ORDER`.
fn library_key(ownership: Ownership, created_at: DateTime<Utc>, id: Uuid) -> LibraryKey {
    let rank = match ownership {
        Ownership::System => 0,
        Ownership::User => 1,
    };
    (rank, created_at, id)
}

/// Why a prompt or preset could not be changed.
#[derive(Debug)]
pub enum ChangeRefused {
    NotFound,
    System,
    /// The prompt is part of these presets of the user.
    InUse(Vec<String>),
}

impl Store {
    /// Writes the shipped prompts and presets, updating them in place after an upgrade.
    pub(super) async fn seed_system_presets(&self) -> anyhow::Result<()> {
        // Fixed, increasing creation times keep the shipped order in listings.
        let epoch = DateTime::<Utc>::from_timestamp(1_767_225_600, 0).unwrap_or_default();
        let mut position = 0i64;
        db!(self, write, |conn| {
            for preset in SYSTEM_PRESETS {
                let mut prompt_ids = Vec::new();
                for prompt in preset.prompts {
                    let id = system_id("prompt", prompt.slug);
                    position += 1;
                    let at = epoch + chrono::Duration::seconds(position);
                    sqlx::query(
                        "INSERT INTO prompts (id, owner_id, title, text, category, created_at, updated_at) \
                         VALUES ($1, NULL, $2, $3, $4, $5, $5) ON CONFLICT (id) DO UPDATE SET \
                         title = excluded.title, text = excluded.text, category = excluded.category",
                    )
                    .bind(id)
                    .bind(prompt.title)
                    .bind(prompt.text)
                    .bind(prompt.category)
                    .bind(at)
                    .execute(&mut *conn)
                    .await?;
                    prompt_ids.push(id);
                }
                position += 1;
                let at = epoch + chrono::Duration::seconds(position);
                sqlx::query(
                    "INSERT INTO presets (id, owner_id, title, icon, category, prompt_ids, created_at, updated_at) \
                     VALUES ($1, NULL, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO UPDATE SET \
                     title = excluded.title, icon = excluded.icon, category = excluded.category, prompt_ids = excluded.prompt_ids",
                )
                .bind(system_id("preset", preset.slug))
                .bind(preset.title)
                .bind(preset.icon)
                .bind(preset.category)
                .bind(Json(&prompt_ids))
                .bind(at)
                .execute(&mut *conn)
                .await?;
            }
            Ok::<_, sqlx::Error>(())
        })?;
        Ok(())
    }

    /// A page of the prompts the user sees: system ones, then his own.
    pub async fn list_prompts(
        &self,
        owner_id: Uuid,
        page: &PageRequest<LibraryKey>,
    ) -> anyhow::Result<Page<Prompt, LibraryKey>> {
        let after = Keyset::ascending(page, KEY, 3);
        let sql = format!("{SELECT_PROMPT} WHERE {VISIBLE}{after} {ORDER} LIMIT $2");
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, PromptRow>(&sql).bind(owner_id).bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let prompts = rows.into_iter().map(Prompt::from).collect();
        Ok(after.page(prompts, |prompt: &Prompt| {
            library_key(prompt.prompt_type, prompt.created_at, prompt.id)
        }))
    }

    /// A prompt the user can see (his own or a system one).
    pub async fn get_prompt(&self, owner_id: Uuid, prompt_id: Uuid) -> anyhow::Result<Option<Prompt>> {
        let sql = format!("{SELECT_PROMPT} WHERE {VISIBLE} AND p.id = $2");
        let row = db!(self, read, |pool| sqlx::query_as::<_, PromptRow>(&sql)
            .bind(owner_id)
            .bind(prompt_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Prompt::from))
    }

    /// Of `prompt_ids`, those the user cannot see.
    pub async fn invisible_prompts(&self, owner_id: Uuid, prompt_ids: &[Uuid]) -> anyhow::Result<Vec<Uuid>> {
        let visible: Vec<Uuid> = self
            .list_prompts(owner_id, &PageRequest::everything())
            .await?
            .items
            .into_iter()
            .map(|p| p.id)
            .collect();
        Ok(prompt_ids.iter().filter(|id| !visible.contains(id)).copied().collect())
    }

    /// Creates a prompt in a workspace; `owner_id` is its author.
    pub async fn create_prompt(
        &self,
        owner_id: Uuid,
        workspace_id: Uuid,
        fields: PromptFields,
    ) -> anyhow::Result<Prompt> {
        let id = Uuid::new_v4();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO prompts (id, owner_id, workspace_id, title, text, category, created_at, updated_at) VALUES ($1, $2, $7, $3, $4, $5, $6, $6)"
        )
        .bind(id)
        .bind(owner_id)
        .bind(&fields.title)
        .bind(&fields.text)
        .bind(&fields.category)
        .bind(now())
        .bind(workspace_id)
        .execute(&mut *conn)
        .await.map(|done| done.rows_affected())
        })?;
        self.get_prompt(owner_id, id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("prompt {id} vanished after insert"))
    }

    pub async fn update_prompt(
        &self,
        owner_id: Uuid,
        prompt_id: Uuid,
        fields: PromptFields,
    ) -> anyhow::Result<Result<Prompt, ChangeRefused>> {
        match self.get_prompt(owner_id, prompt_id).await? {
            None => return Ok(Err(ChangeRefused::NotFound)),
            Some(prompt) if prompt.prompt_type == Ownership::System => {
                return Ok(Err(ChangeRefused::System));
            }
            Some(_) => {}
        }
        db!(self, write_one, |conn| {
            sqlx::query(
            concat!("UPDATE prompts SET title = $1, text = $2, category = $3, updated_at = $4 WHERE id = $5 AND workspace_id IN ", writer_of!(6))
        )
        .bind(&fields.title)
        .bind(&fields.text)
        .bind(&fields.category)
        .bind(now())
        .bind(prompt_id)
        .bind(owner_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(self
            .get_prompt(owner_id, prompt_id)
            .await?
            .ok_or(ChangeRefused::NotFound))
    }

    /// Deletes one of the user's prompts, unless one of his presets still uses it.
    pub async fn delete_prompt(&self, owner_id: Uuid, prompt_id: Uuid) -> anyhow::Result<Result<(), ChangeRefused>> {
        match self.get_prompt(owner_id, prompt_id).await? {
            None => return Ok(Err(ChangeRefused::NotFound)),
            Some(prompt) if prompt.prompt_type == Ownership::System => {
                return Ok(Err(ChangeRefused::System));
            }
            Some(_) => {}
        }
        let users: Vec<String> = self
            .list_presets(owner_id, &PageRequest::everything())
            .await?
            .items
            .into_iter()
            .filter(|preset| preset.preset_type == Ownership::User && preset.prompt_ids.contains(&prompt_id))
            .map(|preset| preset.title)
            .collect();
        if !users.is_empty() {
            return Ok(Err(ChangeRefused::InUse(users)));
        }
        db!(self, write_one, |conn| {
            sqlx::query(concat!(
                "DELETE FROM prompts WHERE id = $1 AND workspace_id IN ",
                writer_of!(2)
            ))
            .bind(prompt_id)
            .bind(owner_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(Ok(()))
    }

    /// A page of the presets the user sees: system ones, then his own.
    pub async fn list_presets(
        &self,
        owner_id: Uuid,
        page: &PageRequest<LibraryKey>,
    ) -> anyhow::Result<Page<Preset, LibraryKey>> {
        let after = Keyset::ascending(page, KEY, 3);
        let sql = format!("{SELECT_PRESET} WHERE {VISIBLE}{after} {ORDER} LIMIT $2");
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, PresetRow>(&sql).bind(owner_id).bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let presets = rows.into_iter().map(Preset::from).collect();
        Ok(after.page(presets, |preset: &Preset| {
            library_key(preset.preset_type, preset.created_at, preset.id)
        }))
    }

    /// The presets of one workspace (its library), oldest first.
    pub async fn workspace_presets(&self, workspace_id: Uuid) -> anyhow::Result<Vec<Preset>> {
        let sql = format!("{SELECT_PRESET} WHERE p.workspace_id = $1 {ORDER}");
        let rows = db!(self, read, |pool| sqlx::query_as::<_, PresetRow>(&sql)
            .bind(workspace_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Preset::from).collect())
    }

    /// The prompts of one workspace (its library), oldest first.
    pub async fn workspace_prompts(&self, workspace_id: Uuid) -> anyhow::Result<Vec<Prompt>> {
        let sql = format!("{SELECT_PROMPT} WHERE p.workspace_id = $1 {ORDER}");
        let rows = db!(self, read, |pool| sqlx::query_as::<_, PromptRow>(&sql)
            .bind(workspace_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Prompt::from).collect())
    }

    pub async fn list_system_presets(&self) -> anyhow::Result<Vec<Preset>> {
        let sql = format!("{SELECT_PRESET} WHERE p.owner_id IS NULL {ORDER}");
        let rows = db!(self, read, |pool| sqlx::query_as::<_, PresetRow>(&sql)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Preset::from).collect())
    }

    pub async fn get_preset(&self, owner_id: Uuid, preset_id: Uuid) -> anyhow::Result<Option<Preset>> {
        let sql = format!("{SELECT_PRESET} WHERE {VISIBLE} AND p.id = $2");
        let row = db!(self, read, |pool| sqlx::query_as::<_, PresetRow>(&sql)
            .bind(owner_id)
            .bind(preset_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Preset::from))
    }

    /// Creates a preset in a workspace; `owner_id` is its author.
    pub async fn create_preset(
        &self,
        owner_id: Uuid,
        workspace_id: Uuid,
        fields: PresetFields,
    ) -> anyhow::Result<Preset> {
        let id = Uuid::new_v4();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO presets (id, owner_id, workspace_id, title, icon, category, prompt_ids, created_at, updated_at) \
             VALUES ($1, $2, $8, $3, $4, $5, $6, $7, $7)"
        )
        .bind(id)
        .bind(owner_id)
        .bind(&fields.title)
        .bind(&fields.icon)
        .bind(&fields.category)
        .bind(Json(&fields.prompt_ids))
        .bind(now())
        .bind(workspace_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        self.get_preset(owner_id, id)
            .await?
            .ok_or_else(|| anyhow::anyhow!("preset {id} vanished after insert"))
    }

    pub async fn update_preset(
        &self,
        owner_id: Uuid,
        preset_id: Uuid,
        fields: PresetFields,
    ) -> anyhow::Result<Result<Preset, ChangeRefused>> {
        match self.get_preset(owner_id, preset_id).await? {
            None => return Ok(Err(ChangeRefused::NotFound)),
            Some(preset) if preset.preset_type == Ownership::System => {
                return Ok(Err(ChangeRefused::System));
            }
            Some(_) => {}
        }
        db!(self, write_one, |conn| {
            sqlx::query(concat!(
                "UPDATE presets SET title = $1, icon = $2, category = $3, prompt_ids = $4, updated_at = $5 \
             WHERE id = $6 AND workspace_id IN ",
                writer_of!(7)
            ))
            .bind(&fields.title)
            .bind(&fields.icon)
            .bind(&fields.category)
            .bind(Json(&fields.prompt_ids))
            .bind(now())
            .bind(preset_id)
            .bind(owner_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(self
            .get_preset(owner_id, preset_id)
            .await?
            .ok_or(ChangeRefused::NotFound))
    }

    pub async fn delete_preset(&self, owner_id: Uuid, preset_id: Uuid) -> anyhow::Result<Result<(), ChangeRefused>> {
        match self.get_preset(owner_id, preset_id).await? {
            None => return Ok(Err(ChangeRefused::NotFound)),
            Some(preset) if preset.preset_type == Ownership::System => {
                return Ok(Err(ChangeRefused::System));
            }
            Some(_) => {}
        }
        db!(self, write_one, |conn| {
            sqlx::query(concat!(
                "DELETE FROM presets WHERE id = $1 AND workspace_id IN ",
                writer_of!(2)
            ))
            .bind(preset_id)
            .bind(owner_id)
            .execute(&mut *conn)
            .await
            .map(|done| done.rows_affected())
        })?;
        Ok(Ok(()))
    }

    /// Copies a visible preset, and each of its prompts, into a workspace, all in one
    /// transaction: a clone is never half made.
    pub async fn clone_preset(
        &self,
        owner_id: Uuid,
        workspace_id: Uuid,
        preset_id: Uuid,
    ) -> anyhow::Result<Option<Preset>> {
        let Some(preset) = self.get_preset(owner_id, preset_id).await? else {
            return Ok(None);
        };
        let mut prompts = Vec::new();
        for prompt_id in &preset.prompt_ids {
            // A prompt deleted since the preset was made is left out of the copy.
            if let Some(prompt) = self.get_prompt(owner_id, *prompt_id).await? {
                prompts.push(prompt);
            }
        }
        let new_id = Uuid::new_v4();
        let at = now();
        let new_prompt_ids: Vec<Uuid> = prompts.iter().map(|_| Uuid::new_v4()).collect();
        db!(self, write, |conn| {
            for (prompt, id) in prompts.iter().zip(&new_prompt_ids) {
                sqlx::query(
                    "INSERT INTO prompts (id, owner_id, workspace_id, title, text, category, created_at, updated_at) \
                     VALUES ($1, $2, $7, $3, $4, $5, $6, $6)",
                )
                .bind(id)
                .bind(owner_id)
                .bind(&prompt.title)
                .bind(&prompt.text)
                .bind(&prompt.category)
                .bind(at)
                .bind(workspace_id)
                .execute(&mut *conn)
                .await?;
            }
            sqlx::query(
                "INSERT INTO presets (id, owner_id, workspace_id, title, icon, category, prompt_ids, created_at, updated_at) \
                 VALUES ($1, $2, $8, $3, $4, $5, $6, $7, $7)",
            )
            .bind(new_id)
            .bind(owner_id)
            .bind(&preset.title)
            .bind(&preset.icon)
            .bind(&preset.category)
            .bind(Json(&new_prompt_ids))
            .bind(at)
            .bind(workspace_id)
            .execute(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(())
        })?;
        self.get_preset(owner_id, new_id).await
    }
}
