//! Outgoing webhooks: the events a researcher's tools can subscribe to, signed and
//! retried as the Standard Webhooks specification says.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// What happened: a record finished processing, a report was written or failed, an
    /// interview ended and its transcript is a record.
    EventType {
        RecordFinished = "record.finished",
        ReportCompleted = "report.completed",
        ReportFailed = "report.failed",
        InterviewCompleted = "interview.completed",
    }
}

impl EventType {
    pub const ALL: [EventType; 4] = [
        EventType::RecordFinished,
        EventType::ReportCompleted,
        EventType::ReportFailed,
        EventType::InterviewCompleted,
    ];
}

super::string_enum! {
    /// `active`; `failing` once a delivery gave up after its last retry (a later
    /// success makes it `active` again; new events are still sent).
    EndpointStatus { Active = "active", Failing = "failing" }
}

super::string_enum! {
    /// `pending` until delivered or given up on.
    DeliveryStatus { Pending = "pending", Delivered = "delivered", Failed = "failed" }
}

/// An endpoint to register (`POST /webhooks/endpoints`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct EndpointCreate {
    /// Where events are posted: `https://` (`http://` only with
    /// `INSIGHT_WEBHOOKS_ALLOW_HTTP=true`), never to a private, loopback or link-local
    /// address unless `INSIGHT_WEBHOOKS_ALLOW_PRIVATE=true`.
    #[schema(format = "uri", min_length = 1, max_length = 2000, pattern = "^https?://")]
    pub url: String,
    /// Events to send. Default: all of them.
    #[serde(default)]
    #[schema(required = false, nullable = false, min_items = 1, max_items = 4)]
    pub events: Option<Vec<EventType>>,
    #[serde(default)]
    #[schema(required = false, max_length = 500)]
    pub description: Option<String>,
    /// The workspace whose events it receives (default: the caller's personal workspace);
    /// its owners and admins manage its endpoints.
    #[serde(default)]
    #[schema(required = false)]
    pub workspace_id: Option<Uuid>,
}

/// A registered endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Endpoint {
    pub id: Uuid,
    pub url: String,
    pub description: String,
    pub events: Vec<EventType>,
    pub status: EndpointStatus,
    /// Since when deliveries to it fail for good (while `failing`).
    pub failing_since: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// An endpoint just made, with its signing secret: shown this once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EndpointCreated {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    /// `whsec_` and the base64 of the key that signs every delivery
    /// (`webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`).
    pub secret: String,
}

/// One event's delivery to one endpoint, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Delivery {
    /// The row's own id.
    pub id: Uuid,
    /// The event's id, sent as `webhook-id`: the same on every attempt.
    pub event_id: String,
    pub event_type: EventType,
    pub status: DeliveryStatus,
    pub attempts: i32,
    /// The receiver's last HTTP status, when it answered.
    pub last_status: Option<i32>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When the next attempt is due (while `pending`).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub delivered_at: Option<DateTime<Utc>>,
}
