//! Webhook endpoints and the outbox of their deliveries. An event is queued with
//! [`queue_event!`] inside the transaction of the change it tells of, one delivery per
//! subscribed endpoint of the project's workspace, so no event is lost or sent for a change
//! that did not commit. Dispatchers claim due deliveries with a lease, as workers claim
//! jobs (`SKIP LOCKED` on PostgreSQL), so any number of instances share the sending.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::CreatedKey;
use super::paging::Keyset;
use super::{Db, Store, db, member_of, runner_of};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::webhook::{Delivery, DeliveryStatus, Endpoint, EndpointStatus, EventType};

/// Inside a write: queues `$event` (an [`EventType`]) with `$data` (a JSON value) for
/// every endpoint of the workspace of project `$project_id` that subscribes to it.
macro_rules! queue_event {
    ($conn:expr, $project_id:expr, $event:expr, $data:expr, $at:expr) => {{
        let event: $crate::domain::webhook::EventType = $event;
        let endpoints: Vec<(uuid::Uuid, sqlx::types::Json<Vec<String>>)> = sqlx::query_as(
            "SELECT e.id, e.events FROM webhook_endpoints e JOIN projects p ON p.workspace_id = e.workspace_id \
             WHERE p.id = $1",
        )
        .bind($project_id)
        .fetch_all(&mut *$conn)
        .await?;
        let subscribed: Vec<uuid::Uuid> = endpoints
            .into_iter()
            .filter(|(_, events)| events.0.iter().any(|name| name == event.as_str()))
            .map(|(id, _)| id)
            .collect();
        if !subscribed.is_empty() {
            let event_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
            let payload = serde_json::json!({
                "type": event.as_str(),
                "timestamp": $at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                "data": $data,
            })
            .to_string();
            for endpoint in subscribed {
                sqlx::query(
                    "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, payload, status, attempts, \
                     next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)",
                )
                .bind(uuid::Uuid::new_v4())
                .bind(endpoint)
                .bind(&event_id)
                .bind(event.as_str())
                .bind(&payload)
                .bind($at)
                .execute(&mut *$conn)
                .await?;
            }
        }
    }};
}
pub(crate) use queue_event;

#[derive(sqlx::FromRow)]
struct EndpointRow {
    id: Uuid,
    url: String,
    description: String,
    events: Json<Vec<String>>,
    status: String,
    failing_since: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl From<EndpointRow> for Endpoint {
    fn from(row: EndpointRow) -> Self {
        Self {
            id: row.id,
            url: row.url,
            description: row.description,
            events: row.events.0.iter().filter_map(|name| EventType::parse(name)).collect(),
            status: EndpointStatus::parse(&row.status).unwrap_or(EndpointStatus::Active),
            failing_since: row.failing_since,
            created_at: row.created_at,
        }
    }
}

#[derive(sqlx::FromRow)]
struct DeliveryRow {
    id: Uuid,
    event_id: String,
    event_type: String,
    status: String,
    attempts: i32,
    last_status: Option<i32>,
    last_error: Option<String>,
    created_at: DateTime<Utc>,
    next_attempt_at: DateTime<Utc>,
    delivered_at: Option<DateTime<Utc>>,
}

impl From<DeliveryRow> for Delivery {
    fn from(row: DeliveryRow) -> Self {
        let status = DeliveryStatus::parse(&row.status).unwrap_or(DeliveryStatus::Failed);
        Self {
            id: row.id,
            event_id: row.event_id,
            event_type: EventType::parse(&row.event_type).unwrap_or(EventType::RecordFinished),
            status,
            attempts: row.attempts,
            last_status: row.last_status,
            last_error: row.last_error,
            created_at: row.created_at,
            next_attempt_at: (status == DeliveryStatus::Pending).then_some(row.next_attempt_at),
            delivered_at: row.delivered_at,
        }
    }
}

/// A delivery claimed for one attempt.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub event_id: String,
    pub payload: String,
    /// Attempts so far, this one included.
    pub attempts: i32,
    pub created_at: DateTime<Utc>,
    pub url: String,
    pub secret_nonce: Vec<u8>,
}

/// How an attempt went.
#[derive(Debug, Clone)]
pub enum Attempt {
    Delivered {
        status: i32,
    },
    /// Try again at `retry_at`, or give up when `None`.
    Failed {
        status: Option<i32>,
        error: String,
        retry_at: Option<DateTime<Utc>>,
    },
}

const SELECT_ENDPOINT: &str =
    "SELECT id, url, description, events, status, failing_since, created_at FROM webhook_endpoints";

const DELIVERY_COLUMNS: &str = "id, event_id, event_type, status, attempts, last_status, last_error, created_at, \
     next_attempt_at, delivered_at";

/// What asking to send a delivery again came to.
#[derive(Debug, Clone)]
pub enum Resend {
    /// Queued, due now.
    Queued(Delivery),
    /// Being sent at this moment; its answer comes first.
    Busy,
    /// The endpoint has no such delivery.
    Unknown,
}

const CLAIM: &str = "UPDATE webhook_deliveries SET attempts = attempts + 1, locked_until = $1 \
     WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $2 \
     AND (locked_until IS NULL OR locked_until < $2) ORDER BY next_attempt_at LIMIT $3{LOCK}) \
     RETURNING id, endpoint_id, event_id, payload, attempts, created_at";

/// An endpoint to register: who made it, the workspace whose events it receives, and
/// what derives its secret.
pub struct NewEndpoint<'a> {
    pub owner_id: Uuid,
    pub workspace_id: Uuid,
    pub id: Uuid,
    pub url: &'a str,
    pub description: &'a str,
    pub events: &'a [EventType],
    pub secret_nonce: &'a [u8],
}

impl Store {
    /// Registers an endpoint.
    pub async fn create_endpoint(&self, new: NewEndpoint<'_>) -> anyhow::Result<Endpoint> {
        let NewEndpoint {
            owner_id,
            workspace_id,
            id,
            url,
            description,
            events,
            secret_nonce,
        } = new;
        let at = now();
        let names: Vec<&str> = events.iter().map(|event| event.as_str()).collect();
        db!(self, write_one, |conn| {
            sqlx::query(
            "INSERT INTO webhook_endpoints (id, owner_id, workspace_id, url, description, events, secret_nonce, status, \
             created_at, updated_at) VALUES ($1, $2, $8, $3, $4, $5, $6, 'active', $7, $7)"
        )
        .bind(id)
        .bind(owner_id)
        .bind(url)
        .bind(description)
        .bind(Json(&names))
        .bind(secret_nonce)
        .bind(at)
        .bind(workspace_id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected())
        })?;
        Ok(Endpoint {
            id,
            url: url.to_owned(),
            description: description.to_owned(),
            events: events.to_vec(),
            status: EndpointStatus::Active,
            failing_since: None,
            created_at: at,
        })
    }

    /// A page of the endpoints of the workspaces the user runs (as owner or admin), or of
    /// `workspace_id` alone among them, newest first.
    pub async fn list_endpoints(
        &self,
        user_id: Uuid,
        workspace_id: Option<Uuid>,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Endpoint, CreatedKey>> {
        let after = Keyset::descending(page, "(created_at, id)", 4);
        let sql = format!(
            "{SELECT_ENDPOINT} WHERE workspace_id IN {} AND ($3 IS NULL OR workspace_id = $3){after} \
             ORDER BY created_at DESC, id DESC LIMIT $2",
            runner_of!(1)
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, EndpointRow>(&sql)
                .bind(user_id)
                .bind(page.fetch())
                .bind(workspace_id);
            after.bind(query).fetch_all(pool).await
        })?;
        let endpoints = rows.into_iter().map(Endpoint::from).collect();
        Ok(after.page(endpoints, |endpoint: &Endpoint| (endpoint.created_at, endpoint.id)))
    }

    /// An endpoint of a workspace the user belongs to (the door checks he may run it).
    pub async fn get_endpoint(&self, user_id: Uuid, id: Uuid) -> anyhow::Result<Option<Endpoint>> {
        let sql = format!(
            "{SELECT_ENDPOINT} WHERE workspace_id IN {} \
             AND id = $2",
            member_of!(1)
        );
        let row = db!(self, read, |pool| sqlx::query_as::<_, EndpointRow>(&sql)
            .bind(user_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(Endpoint::from))
    }

    /// Removes an endpoint and its deliveries; `false` when it is not of a workspace the
    /// user runs.
    pub async fn delete_endpoint(&self, user_id: Uuid, id: Uuid) -> anyhow::Result<bool> {
        let deleted = db!(self, write_one, |conn| sqlx::query(concat!(
            "DELETE FROM webhook_endpoints WHERE workspace_id IN ",
            runner_of!(1),
            " AND id = $2"
        ))
        .bind(user_id)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(deleted == 1)
    }

    /// A page of the endpoint's deliveries, newest first.
    pub async fn deliveries(
        &self,
        endpoint_id: Uuid,
        page: &PageRequest<CreatedKey>,
    ) -> anyhow::Result<Page<Delivery, CreatedKey>> {
        let after = Keyset::descending(page, "(created_at, id)", 3);
        let sql = format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1{after} \
             ORDER BY created_at DESC, id DESC LIMIT $2"
        );
        let rows = db!(self, read, |pool| {
            let query = sqlx::query_as::<_, DeliveryRow>(&sql)
                .bind(endpoint_id)
                .bind(page.fetch());
            after.bind(query).fetch_all(pool).await
        })?;
        let deliveries = rows.into_iter().map(Delivery::from).collect();
        Ok(after.page(deliveries, |delivery: &Delivery| (delivery.created_at, delivery.id)))
    }

    /// Queues a delivery of the endpoint once more, due now: the same event id and
    /// payload, a new attempt (its count goes on). A delivery being sent at this moment
    /// (claimed, its lease running) is left alone.
    pub async fn resend_delivery(&self, endpoint_id: Uuid, delivery_id: Uuid) -> anyhow::Result<Resend> {
        let at = now();
        let sql = format!(
            "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, locked_until = NULL, \
             delivered_at = NULL WHERE id = $2 AND endpoint_id = $3 AND (locked_until IS NULL OR locked_until < $1) \
             RETURNING {DELIVERY_COLUMNS}"
        );
        let row = db!(self, write_one, |conn| sqlx::query_as::<_, DeliveryRow>(&sql)
            .bind(at)
            .bind(delivery_id)
            .bind(endpoint_id)
            .fetch_optional(&mut *conn)
            .await)?;
        if let Some(row) = row {
            self.outbox_queued();
            return Ok(Resend::Queued(Delivery::from(row)));
        }
        let exists = db!(self, read, |pool| sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2"
        )
        .bind(delivery_id)
        .bind(endpoint_id)
        .fetch_one(pool)
        .await)?;
        Ok(if exists > 0 { Resend::Busy } else { Resend::Unknown })
    }

    /// Claims up to `limit` due deliveries for `lease`, with their endpoints.
    pub async fn claim_deliveries(&self, limit: i64, lease: chrono::Duration) -> anyhow::Result<Vec<ClaimedDelivery>> {
        let at = now();
        let sql = CLAIM.replace(
            "{LOCK}",
            match self.db {
                Db::Sqlite { .. } => "",
                Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
            },
        );
        #[derive(sqlx::FromRow)]
        struct Claimed {
            id: Uuid,
            endpoint_id: Uuid,
            event_id: String,
            payload: String,
            attempts: i32,
            created_at: DateTime<Utc>,
        }
        let claimed = db!(self, write_one, |conn| sqlx::query_as::<_, Claimed>(&sql)
            .bind(at + lease)
            .bind(at)
            .bind(limit)
            .fetch_all(&mut *conn)
            .await)?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let mut endpoint_ids: Vec<Uuid> = claimed.iter().map(|c| c.endpoint_id).collect();
        endpoint_ids.sort_unstable();
        endpoint_ids.dedup();
        let mut endpoints = std::collections::HashMap::new();
        for id in endpoint_ids {
            let row: Option<(String, Vec<u8>)> = db!(self, read, |pool| sqlx::query_as(
                "SELECT url, secret_nonce FROM webhook_endpoints WHERE id = $1"
            )
            .bind(id)
            .fetch_optional(pool)
            .await)?;
            if let Some(row) = row {
                endpoints.insert(id, row);
            }
        }
        Ok(claimed
            .into_iter()
            .filter_map(|c| {
                let (url, secret_nonce) = endpoints.get(&c.endpoint_id)?.clone();
                Some(ClaimedDelivery {
                    id: c.id,
                    endpoint_id: c.endpoint_id,
                    event_id: c.event_id,
                    payload: c.payload,
                    attempts: c.attempts,
                    created_at: c.created_at,
                    url,
                    secret_nonce,
                })
            })
            .collect())
    }

    /// Records how an attempt went, if the delivery is still this attempt's; the
    /// endpoint turns `failing` when a delivery is given up on, `active` on a success.
    pub async fn settle_delivery(&self, delivery: &ClaimedDelivery, attempt: &Attempt) -> anyhow::Result<bool> {
        let at = now();
        let (status, code, error, next) = match attempt {
            Attempt::Delivered { status } => (DeliveryStatus::Delivered, Some(*status), None, None),
            Attempt::Failed {
                status,
                error,
                retry_at: Some(retry_at),
            } => (DeliveryStatus::Pending, *status, Some(error.as_str()), Some(*retry_at)),
            Attempt::Failed {
                status,
                error,
                retry_at: None,
            } => (DeliveryStatus::Failed, *status, Some(error.as_str()), None),
        };
        Ok(db!(self, write, |conn| {
            let settled = sqlx::query(
                "UPDATE webhook_deliveries SET status = $1, last_status = $2, last_error = $3, \
                 next_attempt_at = COALESCE($4, next_attempt_at), locked_until = NULL, delivered_at = $5 \
                 WHERE id = $6 AND status = 'pending' AND attempts = $7",
            )
            .bind(status.as_str())
            .bind(code)
            .bind(error)
            .bind(next)
            .bind((status == DeliveryStatus::Delivered).then_some(at))
            .bind(delivery.id)
            .bind(delivery.attempts)
            .execute(&mut *conn)
            .await?;
            if settled.rows_affected() == 1 {
                match status {
                    DeliveryStatus::Delivered => {
                        sqlx::query(
                            "UPDATE webhook_endpoints SET status = 'active', failing_since = NULL, updated_at = $1 \
                             WHERE id = $2 AND status <> 'active'",
                        )
                        .bind(at)
                        .bind(delivery.endpoint_id)
                        .execute(&mut *conn)
                        .await?;
                    }
                    DeliveryStatus::Failed => {
                        sqlx::query(
                            "UPDATE webhook_endpoints SET status = 'failing', failing_since = $1, updated_at = $1 \
                             WHERE id = $2 AND status <> 'failing'",
                        )
                        .bind(at)
                        .bind(delivery.endpoint_id)
                        .execute(&mut *conn)
                        .await?;
                    }
                    DeliveryStatus::Pending => {}
                }
            }
            Ok::<_, sqlx::Error>(settled.rows_affected() == 1)
        })?)
    }

    /// When the next pending delivery is due, to sleep until then.
    pub async fn next_delivery_due(&self) -> anyhow::Result<Option<DateTime<Utc>>> {
        Ok(db!(self, read, |pool| sqlx::query_scalar::<_, Option<DateTime<Utc>>>(
            "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE status = 'pending'"
        )
        .fetch_one(pool)
        .await)?)
    }
}
