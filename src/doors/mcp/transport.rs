//! What the door checks of an HTTP request before the SDK reads it, and how it refuses:
//! in JSON-RPC, as the MCP transport specification wants, so that a client's library can
//! read every refusal the same way.
//!
//! - `Origin`: a browser page of another site must not reach the server (DNS rebinding:
//!   a page on `evil.example` whose name resolves to this server's address). A request
//!   that names an origin must name the instance's own, the origin of
//!   `INSIGHT_PUBLIC_URL`, or one on this machine (`localhost`, `127.0.0.1`, `[::1]`, any
//!   port: a rebinding page cannot name one, and a page served here is the machine's own);
//!   one without (every client that is not a browser) passes.
//! - The message: `application/json`, JSON, and a JSON-RPC message, else the error codes
//!   JSON-RPC 2.0 gives those cases (`-32700`, `-32600`, `-32602`) with HTTP 4xx.
//! - The SDK's own refusals (a wrong `Accept`, a method the endpoint does not serve) come
//!   as plain text; they are answered in JSON-RPC with the same status and sentence.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestMethod, ClientJsonRpcMessage, ClientRequest, CompleteRequestMethod, ConstString, ErrorCode,
    GetPromptRequestMethod, InitializeResultMethod, JsonRpcMessage, JsonRpcRequest, ListPromptsRequestMethod,
    ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, ListToolsRequestMethod, PingRequestMethod,
    ReadResourceRequestMethod, SetLevelRequestMethod, SubscribeRequestMethod, UnsubscribeRequestMethod,
};
use serde_json::{Value, json};

/// The origins a browser page may call the door from: the instance's public one, and any
/// on the loopback interface.
#[derive(Clone, Debug)]
pub struct AllowedOrigins(Vec<String>);

impl AllowedOrigins {
    /// The origin of `public_url` (its scheme, host and port, without its path).
    pub fn of_public_url(public_url: &str) -> Self {
        Self(serialized_origin(public_url).into_iter().collect())
    }

    fn allow(&self, origin: &str) -> bool {
        serialized_origin(origin).is_some_and(|origin| self.0.contains(&origin) || loopback(&origin))
    }
}

/// Whether a serialized origin is on this machine's loopback interface.
fn loopback(origin: &str) -> bool {
    match url::Url::parse(origin)
        .ok()
        .and_then(|url| url.host().map(|host| host.to_owned()))
    {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

/// An origin in the form RFC 6454 serializes it (lower case, the scheme's default port
/// left out), so `HTTPS://Example.org:443` and `https://example.org` compare equal. `null`
/// and what does not parse are no origin.
fn serialized_origin(value: &str) -> Option<String> {
    let url = url::Url::parse(value.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    match url.origin() {
        origin @ url::Origin::Tuple(..) => Some(origin.ascii_serialization()),
        url::Origin::Opaque(_) => None,
    }
}

/// Refuses, with 403, a request whose `Origin` is not the instance's; before the token is
/// looked at, so a page learns nothing by trying tokens.
pub async fn check_origin(State(allowed): State<AllowedOrigins>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !allowed.allow(origin) {
            tracing::warn!(origin, "an MCP request from another origin was refused");
            return error(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Forbidden: the Origin header names another site than this Insight's (INSIGHT_PUBLIC_URL)".to_owned(),
                Value::Null,
            );
        }
    }
    next.run(request).await
}

/// What to answer instead of passing a POST on when its content type or message is
/// wrong (the body read whole already); `None` when it may go on to the SDK.
pub fn refusal(method: &Method, headers: &HeaderMap, body: &[u8]) -> Option<Response> {
    if method != Method::POST {
        return None;
    }
    let json_content = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if !json_content {
        return Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Unsupported Media Type: an MCP message is sent as Content-Type: application/json".to_owned(),
            Value::Null,
        ));
    }
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(why) => {
            return Some(error(
                StatusCode::BAD_REQUEST,
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the body is not JSON ({why})"),
                Value::Null,
            ));
        }
    };
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Err(_) => Some(not_a_message(&value)),
        // The SDK reads a request of a method it knows whose params do not fit that
        // method as a custom request, and answers "method not found" for it.
        Ok(JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::CustomRequest(custom),
            ..
        })) if KNOWN_METHODS.contains(&custom.method.as_str()) => Some(not_a_message(&value)),
        Ok(_) => None,
    }
}

/// The client requests the protocol defines, whose params the SDK reads into their types.
const KNOWN_METHODS: &[&str] = &[
    InitializeResultMethod::VALUE,
    PingRequestMethod::VALUE,
    ListToolsRequestMethod::VALUE,
    CallToolRequestMethod::VALUE,
    ListResourcesRequestMethod::VALUE,
    ListResourceTemplatesRequestMethod::VALUE,
    ReadResourceRequestMethod::VALUE,
    SubscribeRequestMethod::VALUE,
    UnsubscribeRequestMethod::VALUE,
    ListPromptsRequestMethod::VALUE,
    GetPromptRequestMethod::VALUE,
    CompleteRequestMethod::VALUE,
    SetLevelRequestMethod::VALUE,
];

/// JSON that is not a message the server takes: a request of a known shape whose params
/// do not fit its method is `-32602` for its id; anything else `-32600`, for the id when
/// it has one.
fn not_a_message(value: &Value) -> Response {
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    let method = value.get("method").and_then(Value::as_str);
    match (value.get("jsonrpc").and_then(Value::as_str), method, id) {
        (Some("2.0"), Some(method), Some(id)) => error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: these are not the params the method {method} takes"),
            id,
        ),
        (_, _, id) => error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: the body is JSON but not a JSON-RPC 2.0 request or notification".to_owned(),
            id.unwrap_or(Value::Null),
        ),
    }
}

/// The SDK's refusals that are plain text, answered as JSON-RPC errors with the same
/// status and sentence.
pub async fn in_json_rpc(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json") || value.starts_with("text/event-stream"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let sentence = String::from_utf8_lossy(&text).trim().to_owned();
    let sentence = if sentence.is_empty() {
        status.canonical_reason().unwrap_or("Refused").to_owned()
    } else {
        sentence
    };
    let code = if status.is_server_error() {
        ErrorCode::INTERNAL_ERROR
    } else {
        ErrorCode::INVALID_REQUEST
    };
    let mut answer = error(status, code, sentence, Value::Null);
    // Headers that say how to retry or what is allowed (`Allow`) stay.
    for (name, value) in &parts.headers {
        if name != CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().append(name.clone(), value.clone());
        }
    }
    answer
}

/// A JSON-RPC error answer with an HTTP status.
fn error(status: StatusCode, code: ErrorCode, message: String, id: Value) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code.0, "message": message } });
    let mut response = (status, Body::from(body.to_string())).into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
