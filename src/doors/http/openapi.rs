//! The OpenAPI 3.1 document. Operations and schemas come from the handlers' own types
//! (utoipa-axum collects them as routes are registered); this module adds what every
//! operation shares: the bearer scheme, the tags, and the error responses each
//! kind of operation can give, so the document lists every status a client can see.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use super::paging::NEXT_LINK;
use crate::error::{ErrorBody, ValidationErrorBody, ValidationIssue};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Insight",
        version = "0.1.0",
        description = "Self-hostable customer research: projects, interview records, reports from prompts and presets, chat with citations, personas and AI-led interviews.",
        license(name = "MIT"),
    ),
    tags(
        (name = "insight", description = "One record's material: transcript, chat with citations, persona report"),
        (name = "insight_public", description = "Public views of a record, without authentication"),
        (name = "projects", description = "Research projects holding records and reports"),
        (name = "project_reports", description = "Reports generated from a project's records by prompts"),
        (name = "project_reports_public", description = "Reports shared publicly by their owner"),
        (name = "prompts", description = "Prompts: the questions a report answers"),
        (name = "presets", description = "Named sets of prompts; system presets ship with the service"),
        (name = "agent", description = "The research assistant across a project"),
        (name = "interviews", description = "AI-led interview rooms and the respondent's join flow"),
        (name = "webhooks", description = "Outgoing event subscriptions and incoming provider callbacks"),
        (name = "auth", description = "Signing in and out, passwords, sessions and personal API tokens"),
        (name = "workspaces", description = "Workspaces, their members and roles, invitations and the audit log"),
        (name = "tags", description = "A workspace's tags, grouped one level deep, merged and deleted"),
        (name = "highlights", description = "Spans of transcripts, tagged and annotated; suggestions to accept or reject"),
        (name = "insights", description = "A project's findings, with highlights as their evidence"),
        (name = "search", description = "One query across transcripts, highlights, reports and insights"),
        (name = "privacy", description = "A workspace's trust settings, and the personal data of a record"),
        (name = "usage", description = "What AI work costs: a report's estimate, a workspace's monthly usage and budget"),
        (name = "exports", description = "A project's highlights as CSV, and projects to and from REFI-QDA (.qdpx) for other research tools"),
    ),
    components(schemas(ErrorBody, ValidationErrorBody, ValidationIssue)),
    modifiers(&BearerScheme),
)]
pub struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A personal API token (`POST /me/tokens`, or `insight tokens issue EMAIL`). Browsers \
                         use the session cookie from `POST /auth/login` instead, with `X-CSRF-Token` on changes",
                    ))
                    .build(),
            ),
        );
    }
}

/// The 409 of an operation that checks a quota (`INSIGHT_QUOTA_*`) or names other
/// objects in its body (see `UnknownReferences`); list it in the `responses` of each.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 409,
    description = "Refused as things stand: a quota (INSIGHT_QUOTA_*) is reached, the body names something \
                   that is not found or not the caller's, or the resource's state forbids it; the sentence says which"
)]
#[allow(dead_code)] // Describes the answer for the API document.
pub struct Conflicts(ErrorBody);

/// Adds the shared error responses to every operation of the collected document.
pub fn finish(mut doc: Document) -> Document {
    if let Some(components) = doc.components.as_mut() {
        components
            .schemas
            .values_mut()
            .for_each(super::validation::forbid_blank);
    }
    for (path, item) in doc.paths.paths.iter_mut() {
        let has_path_params = path.contains('{');
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            add_error_responses(operation, has_path_params);
            add_next_link(operation);
        }
    }
    doc
}

/// A paginated list (one that takes `cursor`) tells of its next page in a `Link` header.
fn add_next_link(operation: &mut Operation) {
    let paginated = operation
        .parameters
        .as_ref()
        .is_some_and(|params| params.iter().any(|p| p.name == "cursor"));
    if !paginated {
        return;
    }
    if let Some(RefOr::T(response)) = operation.responses.responses.get_mut("200") {
        let header = HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(NEXT_LINK))
            .build();
        response.headers.insert("Link".to_owned(), header);
    }
}

fn add_error_responses(operation: &mut Operation, has_path_params: bool) {
    let secured = operation.security.as_ref().is_some_and(|s| !s.is_empty());
    let has_body = operation.request_body.is_some();
    let has_query = operation.parameters.as_ref().is_some_and(|params| {
        params
            .iter()
            .any(|p| matches!(p.parameter_in, utoipa::openapi::path::ParameterIn::Query))
    });
    let mut add = |status: &str, description: &str, schema: &str| {
        let response = ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name(schema)))
                    .build(),
            )
            .build();
        operation
            .responses
            .responses
            .entry(status.to_owned())
            .or_insert(response.into());
    };
    if secured {
        add("401", "Missing, invalid, expired or revoked bearer token", "ErrorBody");
        add(
            "403",
            "The caller's role in the workspace, or a read-only token, does not allow this (or a session's \
             change came without its CSRF token or from another origin)",
            "ErrorBody",
        );
    }
    if has_path_params {
        add("404", "Not found, or not the caller's", "ErrorBody");
    }
    if has_path_params || has_body || has_query {
        add(
            "422",
            "Validation error: every problem of the request",
            "ValidationErrorBody",
        );
    }
    if has_body {
        add("413", "The body is larger than INSIGHT_MAX_BODY_BYTES", "ErrorBody");
        add("415", "The body is not JSON", "ErrorBody");
    }
}
