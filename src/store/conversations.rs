//! Chat threads and their messages. A question and its answer are written together,
//! once the answer is complete: a thread never holds a question whose answer failed, and
//! a new thread only exists once it has its first exchange (or was made empty on
//! purpose). Threads carry their owner, so every query is scoped by him.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::paging::Keyset;
use super::{MessageKey, Store, ThreadKey, db};
use crate::domain::conversation::{ChatMessage, ChatThread, Citation, MessageType, ThreadKind};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::usage::Provenance;

#[derive(sqlx::FromRow)]
struct ThreadRow {
    id: i64,
    record_id: Option<Uuid>,
    project_id: Option<Uuid>,
    title: String,
    messages_count: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<ThreadRow> for ChatThread {
    fn from(row: ThreadRow) -> Self {
        Self {
            id: row.id,
            record_id: row.record_id,
            project_id: row.project_id,
            title: row.title,
            messages_count: row.messages_count,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    id: Uuid,
    thread_id: i64,
    message_type: String,
    content: String,
    citations: Json<Vec<Citation>>,
    provenance: Option<Json<Provenance>>,
    created_at: DateTime<Utc>,
    position: i32,
}

impl From<MessageRow> for ChatMessage {
    fn from(row: MessageRow) -> Self {
        Self {
            id: row.id,
            message_type: MessageType::parse(&row.message_type).unwrap_or(MessageType::Assistant),
            content: row.content,
            created_at: row.created_at,
            thread_id: row.thread_id,
            citations: row.citations.0,
            provenance: row.provenance.map(|p| p.0),
        }
    }
}

const SELECT_THREAD: &str = "SELECT t.id, t.record_id, t.project_id, t.title, \
     (SELECT COUNT(*) FROM chat_messages m WHERE m.thread_id = t.id) AS messages_count, t.created_at, t.updated_at \
     FROM chat_threads t";

/// Where a new thread belongs.
#[derive(Debug, Clone, Copy)]
pub struct ThreadOwner {
    pub owner_id: Uuid,
    pub kind: ThreadKind,
    pub record_id: Option<Uuid>,
    pub project_id: Option<Uuid>,
}

/// The thread an exchange goes to.
#[derive(Debug, Clone)]
pub enum ThreadTarget {
    /// An existing thread of the owner.
    Existing { owner_id: Uuid, thread_id: i64 },
    /// A thread made with its first exchange.
    New { owner: ThreadOwner, title: String },
}

/// A question and its answer, to store together.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub question: String,
    pub asked_at: DateTime<Utc>,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub provenance: Option<Provenance>,
    /// For the research assistant: the project the thread now answers about.
    pub project_id: Option<Uuid>,
}

impl Store {
    /// The owner's thread of `kind`; for a record chat, only if it is about `record_id`.
    pub async fn chat_thread(
        &self,
        owner_id: Uuid,
        kind: ThreadKind,
        thread_id: i64,
        record_id: Option<Uuid>,
    ) -> anyhow::Result<Option<ChatThread>> {
        let sql = format!(
            "{SELECT_THREAD} WHERE t.id = $1 AND t.owner_id = $2 AND t.kind = $3 AND ($4 IS NULL OR t.record_id = $4)"
        );
        let row = db!(self, read, |pool| sqlx::query_as::<_, ThreadRow>(&sql)
            .bind(thread_id)
            .bind(owner_id)
            .bind(kind.as_str())
            .bind(record_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(ChatThread::from))
    }

    /// A page of the owner's threads of `kind` (for a record chat, about `record_id`),
    /// the most recently active first.
    pub async fn chat_threads(
        &self,
        owner_id: Uuid,
        kind: ThreadKind,
        record_id: Option<Uuid>,
        page: &PageRequest<ThreadKey>,
    ) -> anyhow::Result<Page<ChatThread, ThreadKey>> {
        let after = Keyset::descending(page, "(t.updated_at, t.id)", 5);
        let sql = format!(
            "{SELECT_THREAD} WHERE t.owner_id = $1 AND t.kind = $2 AND ($3 IS NULL OR t.record_id = $3){after} \
             ORDER BY t.updated_at DESC, t.id DESC LIMIT $4"
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, ThreadRow>(&sql)
                .bind(owner_id)
                .bind(kind.as_str())
                .bind(record_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let threads = rows.into_iter().map(ChatThread::from).collect();
        Ok(after.page(threads, |thread: &ChatThread| (thread.updated_at, thread.id)))
    }

    /// A thread with no messages yet.
    pub async fn create_chat_thread(&self, owner: ThreadOwner, title: &str) -> anyhow::Result<ChatThread> {
        let at = now();
        let id = db!(self, write_one, |conn| insert_thread!(conn, owner, title, at))?;
        Ok(ChatThread {
            id,
            record_id: owner.record_id,
            project_id: owner.project_id,
            title: title.to_owned(),
            messages_count: 0,
            created_at: at,
            updated_at: at,
        })
    }

    /// A thread's messages, oldest first.
    pub async fn chat_messages(&self, thread_id: i64) -> anyhow::Result<Vec<ChatMessage>> {
        Ok(self
            .chat_messages_page(thread_id, &PageRequest::everything())
            .await?
            .items)
    }

    /// A page of a thread's messages, oldest first.
    pub async fn chat_messages_page(
        &self,
        thread_id: i64,
        page: &PageRequest<MessageKey>,
    ) -> anyhow::Result<Page<ChatMessage, MessageKey>> {
        let after = Keyset::ascending(page, "position", 3);
        let sql = format!(
            "SELECT id, thread_id, message_type, content, citations, provenance, created_at, position FROM chat_messages \
             WHERE thread_id = $1{after} ORDER BY position LIMIT $2"
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, MessageRow>(&sql).bind(thread_id).bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let page = after.page(rows, |row: &MessageRow| i64::from(row.position));
        Ok(page.map(ChatMessage::from))
    }

    /// Stores a question and its answer in one transaction and returns the answer's
    /// message; `None` when the existing thread is gone (deleted while the answer was
    /// written).
    pub async fn add_exchange(
        &self,
        target: &ThreadTarget,
        exchange: &Exchange,
    ) -> anyhow::Result<Option<ChatMessage>> {
        let at = now();
        let answer_id = Uuid::new_v4();
        let thread_id = db!(self, write, |conn| {
            // Updating the thread first locks it (PostgreSQL), so two answers to one
            // thread take their positions one after the other.
            let thread_id = match target {
                ThreadTarget::Existing { owner_id, thread_id } => {
                    sqlx::query_scalar::<_, i64>(
                        "UPDATE chat_threads SET updated_at = $1, project_id = COALESCE($2, project_id) \
                     WHERE id = $3 AND owner_id = $4 RETURNING id",
                    )
                    .bind(at)
                    .bind(exchange.project_id)
                    .bind(thread_id)
                    .bind(owner_id)
                    .fetch_optional(&mut *conn)
                    .await?
                }
                ThreadTarget::New { owner, title } => Some(insert_thread!(conn, owner, title, at)?),
            };
            if let Some(thread_id) = thread_id {
                let position: i64 = sqlx::query_scalar(
                    "SELECT CAST(COALESCE(MAX(position), 0) AS BIGINT) FROM chat_messages WHERE thread_id = $1",
                )
                .bind(thread_id)
                .fetch_one(&mut *conn)
                .await?;
                let messages = [
                    (
                        Uuid::new_v4(),
                        MessageType::User,
                        &exchange.question,
                        &[][..],
                        None,
                        exchange.asked_at,
                    ),
                    (
                        answer_id,
                        MessageType::Assistant,
                        &exchange.answer,
                        &exchange.citations[..],
                        exchange.provenance.as_ref(),
                        at,
                    ),
                ];
                for (offset, (id, message_type, content, citations, provenance, created_at)) in
                    messages.into_iter().enumerate()
                {
                    sqlx::query(
                        "INSERT INTO chat_messages (id, thread_id, position, message_type, content, citations, \
                         provenance, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    )
                    .bind(id)
                    .bind(thread_id)
                    .bind(position + 1 + offset as i64)
                    .bind(message_type.as_str())
                    .bind(content)
                    .bind(Json(citations))
                    .bind(provenance.map(Json))
                    .bind(created_at)
                    .execute(&mut *conn)
                    .await?;
                }
            }
            Ok::<_, sqlx::Error>(thread_id)
        })?;
        Ok(thread_id.map(|thread_id| ChatMessage {
            id: answer_id,
            message_type: MessageType::Assistant,
            content: exchange.answer.clone(),
            created_at: at,
            thread_id,
            citations: exchange.citations.clone(),
            provenance: exchange.provenance.clone(),
        }))
    }

    /// Renames a research assistant thread or points it at another project; `None`
    /// when the owner has no such thread.
    pub async fn update_agent_thread(
        &self,
        owner_id: Uuid,
        thread_id: i64,
        title: &Patch<String>,
        project_id: &Patch<Uuid>,
    ) -> anyhow::Result<Option<ChatThread>> {
        let (set_project, project) = match project_id {
            Patch::Missing => (false, None),
            Patch::Null => (true, None),
            Patch::Value(id) => (true, Some(*id)),
        };
        let affected = db!(self, write_one, |conn| sqlx::query(
            "UPDATE chat_threads SET title = COALESCE($1, title), \
             project_id = CASE WHEN $2 THEN $3 ELSE project_id END, updated_at = $4 \
             WHERE id = $5 AND owner_id = $6 AND kind = $7"
        )
        .bind(title.as_value())
        .bind(set_project)
        .bind(project)
        .bind(now())
        .bind(thread_id)
        .bind(owner_id)
        .bind(ThreadKind::Agent.as_str())
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        if affected == 0 {
            return Ok(None);
        }
        self.chat_thread(owner_id, ThreadKind::Agent, thread_id, None).await
    }

    /// Renames the owner's thread of `kind` (for a record chat, only if it is about
    /// `record_id`); `None` when he has no such thread.
    pub async fn rename_chat_thread(
        &self,
        owner_id: Uuid,
        kind: ThreadKind,
        thread_id: i64,
        record_id: Option<Uuid>,
        title: &str,
    ) -> anyhow::Result<Option<ChatThread>> {
        let affected = db!(self, write_one, |conn| sqlx::query(
            "UPDATE chat_threads SET title = $1 \
             WHERE id = $2 AND owner_id = $3 AND kind = $4 AND ($5 IS NULL OR record_id = $5)"
        )
        .bind(title)
        .bind(thread_id)
        .bind(owner_id)
        .bind(kind.as_str())
        .bind(record_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        if affected == 0 {
            return Ok(None);
        }
        self.chat_thread(owner_id, kind, thread_id, record_id).await
    }

    /// Deletes a thread with its messages; `false` when the owner has no such thread.
    pub async fn delete_chat_thread(&self, owner_id: Uuid, kind: ThreadKind, thread_id: i64) -> anyhow::Result<bool> {
        let affected = db!(self, write_one, |conn| sqlx::query(
            "DELETE FROM chat_threads WHERE id = $1 AND owner_id = $2 AND kind = $3"
        )
        .bind(thread_id)
        .bind(owner_id)
        .bind(kind.as_str())
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(affected == 1)
    }
}

/// Inside a write: inserts a thread and evaluates to its id.
macro_rules! insert_thread {
    ($conn:expr, $owner:expr, $title:expr, $at:expr) => {
        sqlx::query_scalar::<_, i64>(
            "INSERT INTO chat_threads (owner_id, kind, record_id, project_id, title, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
        )
        .bind($owner.owner_id)
        .bind($owner.kind.as_str())
        .bind($owner.record_id)
        .bind($owner.project_id)
        .bind($title)
        .bind($at)
        .fetch_one(&mut *$conn)
        .await
    };
}
use insert_thread;
