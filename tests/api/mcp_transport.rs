//! The MCP door's transport over raw HTTP, as a misbehaving client or a hostile web page
//! meets it: what is not JSON is a JSON-RPC parse error, what is not a JSON-RPC message an
//! invalid request, a wrong content type a JSON-RPC error too, and a request from a page
//! of another origin (DNS rebinding) is refused before anything else, while clients that
//! send no `Origin` (every non-browser one) and the instance's own origin pass.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::TestApp;

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
}

/// A POST to `/mcp` with `token`, `content_type`, `origin` and the raw `body`: the status,
/// the content type and the body as JSON (`Null` when it is not JSON).
async fn post(
    app: &TestApp,
    token: Option<&str>,
    content_type: &str,
    origin: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> (StatusCode, String, Value) {
    let mut request = app
        .client
        .post(app.url("/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", content_type)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    let response = request.send().await.expect("answer");
    let status = response.status();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.expect("body");
    (status, kind, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Asserts a JSON-RPC error answer with `code` for `id`, and returns its message.
fn jsonrpc_error(answer: &(StatusCode, String, Value), status: StatusCode, code: i64, id: Value) -> String {
    let (got, kind, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert!(kind.starts_with("application/json"), "{kind}: {body}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body.get("result").is_none(), "{body}");
    body["error"]["message"].as_str().expect("a message").to_owned()
}

#[tokio::test]
async fn bad_input_is_answered_in_json_rpc() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let token = Some(user.token.as_str());
    let json = "application/json";

    // Not JSON at all (or nothing): a parse error, which has no id to answer.
    for body in [&b"{\"jsonrpc\": \"2.0\", \"id\": 1,"[..], b"not json", b""] {
        let answer = post(&app, token, json, None, body.to_vec()).await;
        let message = jsonrpc_error(&answer, StatusCode::BAD_REQUEST, -32700, Value::Null);
        assert!(message.starts_with("Parse error"), "{message}");
    }
    // JSON, but not a JSON-RPC message: an invalid request.
    for body in [json!({ "hello": "world" }), json!([]), json!(42)] {
        let answer = post(&app, token, json, None, body.to_string()).await;
        jsonrpc_error(&answer, StatusCode::BAD_REQUEST, -32600, Value::Null);
    }
    // A request of a known method whose params do not fit it: invalid params, for its id.
    let bad_params = json!({ "jsonrpc": "2.0", "id": 7, "method": "initialize", "params": { "capabilities": 3 } });
    let answer = post(&app, token, json, None, bad_params.to_string()).await;
    jsonrpc_error(&answer, StatusCode::BAD_REQUEST, -32602, json!(7));

    // Another content type, or an Accept without JSON: a clear refusal, in JSON-RPC too.
    let answer = post(&app, token, "text/plain", None, initialize(1).to_string()).await;
    let message = jsonrpc_error(&answer, StatusCode::UNSUPPORTED_MEDIA_TYPE, -32600, Value::Null);
    assert!(message.contains("application/json"), "{message}");
    let response = app
        .client
        .post(app.url("/mcp"))
        .header("accept", "text/html")
        .bearer_auth(&user.token)
        .json(&initialize(2))
        .send()
        .await
        .expect("answer");
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::NOT_ACCEPTABLE, json!(-32600)),
        "{body}"
    );

    // GET opens no stream on a stateless server: 405, in JSON-RPC too.
    let response = app
        .client
        .get(app.url("/mcp"))
        .header("accept", "text/event-stream")
        .bearer_auth(&user.token)
        .send()
        .await
        .expect("answer");
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::METHOD_NOT_ALLOWED, json!(-32600)),
        "{body}"
    );

    // A well-formed message still works.
    let (status, _, body) = post(
        &app,
        token,
        "application/json; charset=utf-8",
        None,
        initialize(3).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], 3, "{body}");
    assert!(body["result"]["serverInfo"]["name"] == "insight", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn a_page_of_another_origin_is_refused_and_the_instances_own_origin_passes() {
    let app = TestApp::start_with(|settings| {
        settings.server.public_url = "https://insight.example.org/research".to_owned();
    })
    .await;
    let user = app.user().await;
    let token = Some(user.token.as_str());
    let json = "application/json";
    let message = initialize(1).to_string();

    for origin in [
        "http://evil.example",
        "http://localhost.evil.example",
        "https://insight.example.org.evil.example",
        "http://insight.example.org",
        "https://insight.example.org:8443",
        "null",
        "not an origin",
    ] {
        let answer = post(&app, token, json, Some(origin), message.clone()).await;
        let sentence = jsonrpc_error(&answer, StatusCode::FORBIDDEN, -32600, Value::Null);
        assert!(sentence.contains("Origin"), "{origin}: {sentence}");
        // Refused before the token is looked at: a page learns nothing by guessing one.
        let answer = post(&app, None, json, Some(origin), message.clone()).await;
        jsonrpc_error(&answer, StatusCode::FORBIDDEN, -32600, Value::Null);
    }

    // No Origin (what non-browser clients send), the instance's own origin, in any case
    // and with its default port spelled out, and a page of this machine's own (which no
    // rebinding page can name), pass.
    for origin in [
        None,
        Some("https://insight.example.org"),
        Some("HTTPS://Insight.Example.org"),
        Some("https://insight.example.org:443"),
        Some("http://localhost:6274"),
        Some("http://127.0.0.1:51125"),
        Some("http://[::1]:3000"),
    ] {
        let (status, _, body) = post(&app, token, json, origin, message.clone()).await;
        assert_eq!(status, StatusCode::OK, "{origin:?}: {body}");
        assert_eq!(body["result"]["serverInfo"]["name"], "insight", "{origin:?}: {body}");
    }
    // Without a token a passing origin still gets the API's 401.
    let (status, _, _) = post(&app, None, json, Some("https://insight.example.org"), message).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn the_default_public_origin_passes_and_others_do_not() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let message = initialize(1).to_string();
    let json = "application/json";
    // INSIGHT_PUBLIC_URL's default.
    let (status, _, body) = post(
        &app,
        Some(&user.token),
        json,
        Some("http://127.0.0.1:8000"),
        message.clone(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A rebinding page reaches the same address under its own name, and is refused.
    let (status, _, body) = post(&app, Some(&user.token), json, Some("http://evil.example:8000"), message).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    app.stop().await;
}
