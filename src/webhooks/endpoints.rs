//! Registering a webhook endpoint: its URL must be one this instance may post to, its
//! events are kept in their documented order, and its signing secret is derived from the
//! instance key and shown once.

use rand::RngCore;
use serde_json::json;
use uuid::Uuid;

use super::{address, endpoint_secret};
use crate::accounts::access;
use crate::domain::webhook::{EndpointCreate, EndpointCreated, EventType};
use crate::domain::workspace::Need;
use crate::error::{ApiError, ApiResult, ValidationIssue};
use crate::quota::Counted;
use crate::services::Services;
use crate::store::NewEndpoint;

/// Registers the user's endpoint for the events it names (every event when it names none).
pub async fn register(services: &Services, owner_id: Uuid, body: EndpointCreate) -> ApiResult<EndpointCreated> {
    let workspace_id = access::target_workspace(&services.store, owner_id, body.workspace_id, Need::Manage).await?;
    let settings = &services.settings;
    let url = address::check_url(
        body.url.trim(),
        settings.webhooks.webhooks_allow_http,
        settings.webhooks.webhooks_allow_private,
    )
    .map_err(|reason| {
        ApiError::validation(vec![
            ValidationIssue::value_error(vec![json!("body"), json!("url")], &format!("the URL {reason}"))
                .with_input(json!(body.url)),
        ])
    })?;
    services.check_quota(Counted::WebhookEndpoints { owner_id }).await?;
    let mut events = body.events.unwrap_or_else(|| EventType::ALL.to_vec());
    events.sort_by_key(|event| EventType::ALL.iter().position(|e| e == event));
    events.dedup();
    let id = Uuid::new_v4();
    let mut nonce = vec![0u8; 16];
    rand::rng().fill_bytes(&mut nonce);
    let endpoint = services
        .store
        .create_endpoint(NewEndpoint {
            owner_id,
            workspace_id,
            id,
            url: url.as_str(),
            description: body.description.as_deref().unwrap_or("").trim(),
            events: &events,
            secret_nonce: &nonce,
        })
        .await?;
    let (secret, _) = endpoint_secret(&services.secret, id, &nonce);
    Ok(EndpointCreated { endpoint, secret })
}
