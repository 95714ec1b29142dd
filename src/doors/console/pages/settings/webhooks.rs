//! The workspace's webhook endpoints for its owners and admins: registering one (its
//! signing secret shown in the answer, once), each one's latest deliveries with a "Send
//! again" button, and deleting one.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use uuid::Uuid;

use super::{Done, Message, on_the_form, when};
use crate::app::webhooks;
use crate::domain::paging::PageRequest;
use crate::domain::webhook::{Delivery, Endpoint, EndpointCreate, EventType};
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell, render};
use crate::doors::console::session::{Change, Fields, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

const DONE: &[(&str, &str)] = &[
    ("deleted", "The endpoint is deleted; nothing more is sent to it."),
    (
        "resent",
        "The delivery is queued to be sent again now; its answer shows here in a moment.",
    ),
];

/// Deliveries shown per endpoint (the API pages through all of them).
const DELIVERIES: usize = 20;

struct DeliveryRow {
    delivery: Delivery,
    at: String,
}

struct EndpointCard {
    endpoint: Endpoint,
    events: String,
    deliveries: Vec<DeliveryRow>,
}

/// An endpoint just registered, with its signing secret (shown in this answer only).
struct Created {
    url: String,
    secret: String,
}

#[derive(Template)]
#[template(path = "settings_webhooks.html")]
struct WebhooksPage {
    shell: Shell,
    nav: SettingsNav,
    csrf: String,
    workspace: String,
    endpoints: Vec<EndpointCard>,
    events: &'static [EventType],
    created: Option<Created>,
    message: Message,
    url: String,
}

async fn render_page(
    services: &Services,
    visitor: &Visitor,
    status: StatusCode,
    message: Message,
    created: Option<Created>,
    url: String,
) -> PageResult {
    let listed = webhooks::list(
        services,
        &visitor.caller,
        Some(visitor.current.id),
        &PageRequest::everything(),
    )
    .await?;
    let mut endpoints = Vec::new();
    for endpoint in listed.items {
        let latest = PageRequest {
            limit: DELIVERIES,
            after: None,
        };
        let deliveries = webhooks::deliveries(services, &visitor.caller, endpoint.id, &latest)
            .await?
            .items
            .into_iter()
            .map(|delivery| DeliveryRow {
                at: when(&delivery.created_at),
                delivery,
            })
            .collect();
        endpoints.push(EndpointCard {
            events: endpoint
                .events
                .iter()
                .map(|event| event.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            endpoint,
            deliveries,
        });
    }
    let html = WebhooksPage {
        shell: Shell::of(visitor),
        nav: SettingsNav::new(visitor, "webhooks"),
        csrf: visitor.csrf.clone(),
        workspace: visitor.current.name.clone(),
        endpoints,
        events: &EventType::ALL,
        created,
        message,
        url,
    };
    Ok(page(status, render(&html)))
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(done): Query<Done>) -> PageResult {
    render_page(
        &services,
        &visitor,
        StatusCode::OK,
        Message::done(&done, DONE),
        None,
        String::new(),
    )
    .await
}

/// The form to register an endpoint: its repeated `events` checkboxes are read in full,
/// which a plain form decoder would not.
async fn create(State(services): State<Services>, Change(visitor, form): Change<Fields>) -> PageResult {
    let mut url = String::new();
    let mut description = String::new();
    let mut events = Vec::new();
    for (key, value) in &form {
        match key.as_str() {
            "url" => url = value.trim().to_owned(),
            "description" => description = value.trim().to_owned(),
            "events" => events.extend(EventType::parse(value)),
            _ => {}
        }
    }
    if events.is_empty() {
        let error = Error::conflict("Choose at least one event to send");
        return render_page(
            &services,
            &visitor,
            crate::doors::status(&error),
            Message::error(&error),
            None,
            url,
        )
        .await;
    }
    let body = EndpointCreate {
        url: url.clone(),
        events: Some(events),
        description: (!description.is_empty()).then_some(description),
        workspace_id: Some(visitor.current.id),
    };
    match webhooks::register(&services, &visitor.caller, body).await {
        Ok(created) => {
            let created = Created {
                url: created.endpoint.url,
                secret: created.secret,
            };
            // The secret is in this answer only: no redirect, and the page is not stored.
            render_page(
                &services,
                &visitor,
                StatusCode::CREATED,
                Message::default(),
                Some(created),
                String::new(),
            )
            .await
        }
        Err(error) if on_the_form(&error) => {
            render_page(
                &services,
                &visitor,
                crate::doors::status(&error),
                Message::error(&error),
                None,
                url,
            )
            .await
        }
        Err(error) => Err(error.into()),
    }
}

async fn confirm_delete(
    State(services): State<Services>,
    visitor: Visitor,
    Path(endpoint_id): Path<Uuid>,
) -> PageResult {
    let endpoint = webhooks::get(&services, &visitor.caller, endpoint_id).await?;
    Ok(ConfirmDelete::page(
        &visitor,
        endpoint.url,
        "Nothing more is sent to it, deliveries still pending are dropped, and its delivery log goes with it. \
         A new endpoint gets a new signing secret."
            .to_owned(),
        format!("/settings/webhooks/{endpoint_id}/delete"),
        "/settings/webhooks".to_owned(),
    ))
}

async fn delete(
    State(services): State<Services>,
    Path(endpoint_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    webhooks::remove(&services, &visitor.caller, endpoint_id).await?;
    Ok(Redirect::to("/settings/webhooks?done=deleted").into_response())
}

async fn send_again(
    State(services): State<Services>,
    Path((endpoint_id, delivery_id)): Path<(Uuid, Uuid)>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    match webhooks::send_again(&services, &visitor.caller, endpoint_id, delivery_id).await {
        Ok(_) => Ok(Redirect::to("/settings/webhooks?done=resent").into_response()),
        Err(error) if on_the_form(&error) => {
            render_page(
                &services,
                &visitor,
                crate::doors::status(&error),
                Message::error(&error),
                None,
                String::new(),
            )
            .await
        }
        Err(error) => Err(error.into()),
    }
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/webhooks", get(show).post(create))
        .route(
            "/settings/webhooks/{endpoint_id}/delete",
            get(confirm_delete).post(delete),
        )
        .route(
            "/settings/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry",
            post(send_again),
        )
}
