//! The MCP door: the Model Context Protocol over Streamable HTTP at `/mcp`, so an
//! assistant (Claude, ChatGPT, an IDE) can list, read, search, ask and write through the
//! same use cases as the JSON API. It runs stateless (each POST stands alone), so any
//! instance behind a load balancer can answer any request.
//!
//! Authorisation is a personal API token as a bearer, checked in front of the SDK's
//! service exactly as the JSON API checks it; the caller travels in the request's
//! extensions, which the SDK hands to each tool. A `read` token may call the tools that
//! change nothing; the others answer it with a tool error. In front of both, the request's
//! `Origin` is checked and a message that is not JSON-RPC is refused in JSON-RPC
//! (`transport`).

mod args;
mod resources;
mod tools;
mod transport;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::app::Caller;
use crate::app::accounts::sign_in;
use crate::app::accounts::sign_in::Credential;
use crate::domain::user::TokenScope;
use crate::error::Error;
use crate::services::Services;

/// Where the door is served.
pub const PATH: &str = "/mcp";

/// What the instructions tell an assistant about the server, once, at the handshake.
const INSTRUCTIONS: &str = "Insight holds a research team's customer interviews: projects of records \
(transcripts of interviews and notes), reports written from them, and highlights (quotes filed under tags). \
Start with list_projects, then list_records or search; read_transcript gives a record's utterances with their \
ids, which add_highlight takes. ask_project answers a question from a project's material with citations. \
Cite what you use with the urls the tools return.";

/// The MCP server: the house's services and the tools' table.
#[derive(Clone)]
pub struct Insight {
    services: Services,
    tool_router: ToolRouter<Self>,
}

impl Insight {
    fn new(services: Services) -> Self {
        Self {
            services,
            tool_router: Self::tool_router(),
        }
    }
}

#[rmcp::tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for Insight {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(
                Implementation::new("insight", env!("CARGO_PKG_VERSION")).with_title("Insight customer research"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        request: Option<rmcp::model::PaginatedRequestParams>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, rmcp::ErrorData> {
        resources::list(&self.services, caller_of(&context.extensions)?, request).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, rmcp::ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        let caller = caller_of(&context.extensions)?;
        Ok(resources::read(&self.services, caller, &request.uri).await?.into())
    }
}

/// The door's routes: `/mcp`, behind the token check.
pub fn router<S: Clone + Send + Sync + 'static>(services: Services) -> Router<S> {
    // Hosts are not checked: behind a proxy the Host is whatever the proxy sends, and a
    // foreign page is kept out by its Origin (`transport::check_origin`), which this door
    // checks itself so that the refusal is JSON-RPC and comes before the token check.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .disable_allowed_hosts()
        .with_sse_keep_alive(None);
    // One server for every request: the tools' table and their schemas are built once.
    let server = Insight::new(services.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let origins = transport::AllowedOrigins::of_public_url(&services.settings.server.public_url);
    Router::new()
        .route_service(PATH, mcp)
        .layer(axum::middleware::map_response(transport::in_json_rpc))
        .layer(axum::middleware::from_fn_with_state(services, authenticate))
        .layer(axum::middleware::from_fn_with_state(origins, transport::check_origin))
}

/// Lets through a request with a personal API token, the caller in its extensions.
async fn authenticate(State(services): State<Services>, mut request: Request, next: Next) -> Response {
    let Some(header) = request.headers().get(AUTHORIZATION) else {
        return Error::unauthenticated().into_response();
    };
    let holder = match sign_in::with_token(&services.store, header.as_bytes()).await {
        Ok(holder) => holder,
        Err(error) => return error.into_response(),
    };
    // Only personal tokens reach MCP (no session cookie), each with its scope.
    let scope = match holder.credential {
        Credential::Token { scope } => scope,
        Credential::Session { .. } => TokenScope::Read,
    };
    request.extensions_mut().insert(Caller::new(holder.user, scope, None));
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Error::TooLarge(format!("An MCP message may be at most {BODY_LIMIT} bytes.")).into_response();
        }
    };
    if let Some(refusal) = transport::refusal(&parts.method, &parts.headers, &body) {
        return refusal;
    }
    let body = without_nul(body);
    next.run(Request::from_parts(parts, axum::body::Body::from(body))).await
}

/// The most an MCP message may hold, as the SDK allows.
const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// A message with the NUL characters dropped from its strings, as the JSON API drops them
/// from a body: no database keeps one in text.
fn without_nul(bytes: axum::body::Bytes) -> axum::body::Bytes {
    if !bytes.windows(6).any(|window| window == b"\\u0000") {
        return bytes;
    }
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut message) => {
            crate::domain::drop_nul(&mut message);
            serde_json::to_vec(&message).map_or(bytes, axum::body::Bytes::from)
        }
        Err(_) => bytes,
    }
}

/// The caller the token check put in the HTTP request the SDK hands on.
fn caller_of(extensions: &rmcp::model::Extensions) -> Result<Caller, rmcp::ErrorData> {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .ok_or_else(|| rmcp::ErrorData::internal_error("the request reached the server unauthenticated", None))
}

/// A use case's refusal as the tool error an assistant reads: the same sentence the JSON
/// API would answer, and every problem of a validation.
fn refused(error: Error) -> CallToolResult {
    let text = match error {
        Error::Invalid(issues) => issues
            .iter()
            .map(|issue| {
                let place: Vec<String> = issue
                    .loc
                    .iter()
                    .skip(1)
                    .map(|part| part.as_str().map_or_else(|| part.to_string(), str::to_owned))
                    .collect();
                format!("{}: {}", place.join("."), issue.msg)
            })
            .collect::<Vec<_>>()
            .join("; "),
        Error::Internal(error) => {
            tracing::error!(error = ?error, "internal error in an MCP tool");
            "Internal server error".to_owned()
        }
        other => other.to_string(),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}
