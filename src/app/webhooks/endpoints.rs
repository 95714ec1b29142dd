//! Registering a webhook endpoint: its URL must be one this instance may post to, its
//! events are kept in their documented order, and its signing secret is derived from the
//! instance key and shown once.

use rand::RngCore;
use serde_json::json;
use uuid::Uuid;

use super::{address, endpoint_secret};
use crate::app::Caller;
use crate::app::quota::Counted;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::webhook::{Delivery, Endpoint, EndpointCreate, EndpointCreated, EventType};
use crate::domain::workspace::Need;
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::{CreatedKey, NewEndpoint, Resend, Target};

/// Registers the user's endpoint for the events it names (every event when it names none).
pub async fn register(services: &Services, caller: &Caller, body: EndpointCreate) -> Result<EndpointCreated> {
    let owner_id = caller.id();
    crate::error::check_lengths(&[
        ("url", &body.url, 2000),
        ("description", body.description.as_deref().unwrap_or_default(), 500),
    ])?;
    let workspace_id = caller
        .workspace(&services.store, body.workspace_id, Need::Manage)
        .await?;
    let settings = &services.settings;
    let url = address::check_url(
        body.url.trim(),
        settings.webhooks.webhooks_allow_http,
        settings.webhooks.webhooks_allow_private,
    )
    .map_err(|reason| {
        Error::validation(vec![
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

/// A page of the endpoints the user runs, newest first (never their secrets): of every
/// workspace he owns or administers, or of `workspace_id` alone (which he must run).
pub async fn list(
    services: &Services,
    caller: &Caller,
    workspace_id: Option<Uuid>,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Endpoint, CreatedKey>> {
    let user_id = caller.id();
    if let Some(workspace_id) = workspace_id {
        caller
            .require(&services.store, Target::Workspace(workspace_id), Need::Manage)
            .await?;
    }
    Ok(services.store.list_endpoints(user_id, workspace_id, page).await?)
}

/// An endpoint of a workspace the user runs: 404 when he cannot see it, 403 when he is a
/// member who does not run the workspace.
pub async fn get(services: &Services, caller: &Caller, endpoint_id: Uuid) -> Result<Endpoint> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::WebhookEndpoint(endpoint_id), Need::Manage)
        .await?;
    services
        .store
        .get_endpoint(user_id, endpoint_id)
        .await?
        .ok_or_else(|| Error::not_found("Webhook endpoint"))
}

/// Deletes an endpoint with its deliveries (pending ones are not sent).
pub async fn remove(services: &Services, caller: &Caller, endpoint_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::WebhookEndpoint(endpoint_id), Need::Manage)
        .await?;
    if services.store.delete_endpoint(user_id, endpoint_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Webhook endpoint"))
    }
}

/// A page of the endpoint's deliveries, newest first: status, attempts, the receiver's
/// last answer.
pub async fn deliveries(
    services: &Services,
    caller: &Caller,
    endpoint_id: Uuid,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Delivery, CreatedKey>> {
    let endpoint = get(services, caller, endpoint_id).await?;
    Ok(services.store.deliveries(endpoint.id, page).await?)
}

/// Sends a delivery again: a new attempt with the same payload and `webhook-id`, as the
/// Standard Webhooks specification asks of a retry (a receiver that already has the
/// event recognises it by its id). It is queued for the dispatcher, due now; one being
/// sent at this moment is refused (409), its answer comes first.
pub async fn send_again(
    services: &Services,
    caller: &Caller,
    endpoint_id: Uuid,
    delivery_id: Uuid,
) -> Result<Delivery> {
    caller
        .require(&services.store, Target::WebhookEndpoint(endpoint_id), Need::Manage)
        .await?;
    match services.store.resend_delivery(endpoint_id, delivery_id).await? {
        Resend::Queued(delivery) => Ok(delivery),
        Resend::Busy => Err(Error::conflict(
            "This delivery is being sent at this moment: wait for its answer, then send it again",
        )),
        Resend::Unknown => Err(Error::not_found("Delivery")),
    }
}
