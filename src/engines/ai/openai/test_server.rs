//! A stub OpenAI-compatible server for tests: it records what it receives and answers
//! as told, in the real wire format.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// A request the stub received.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Value,
    pub at: Instant,
}

impl Received {
    /// The content of the messages with this role.
    pub fn messages(&self, role: &str) -> Vec<String> {
        self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|message| message["role"] == role)
            .filter_map(|message| message["content"].as_str().map(str::to_owned))
            .collect()
    }
}

/// How the stub answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    Json {
        status: u16,
        body: Value,
        headers: Vec<(String, String)>,
        delay: Duration,
    },
    /// SSE events (each a `data:` payload); `cut`: the connection breaks after them.
    Sse { events: Vec<String>, cut: bool },
}

impl Reply {
    /// A completion with this content and usage.
    pub fn answer_with_usage(content: &str, prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self::Json {
            status: 200,
            body: json!({
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": 0,
                "model": "stub",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop"
                }],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens
                }
            }),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn answer(content: &str) -> Self {
        Self::answer_with_usage(content, 10, 5)
    }

    /// An error answer in OpenAI's shape.
    pub fn error(status: u16, message: &str) -> Self {
        Self::Json {
            status,
            body: json!({"error": {"message": message, "type": "stub_error", "param": null, "code": null}}),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Self::Json { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    pub fn delayed(mut self, by: Duration) -> Self {
        if let Self::Json { delay, .. } = &mut self {
            *delay = by;
        }
        self
    }

    /// A stream of these pieces of text, a usage chunk and `[DONE]`.
    pub fn stream(pieces: &[&str]) -> Self {
        let chunk = |delta: Value, finish: Value| {
            json!({
                "id": "chatcmpl-stub",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "stub",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
            })
            .to_string()
        };
        let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
        events.extend(pieces.iter().map(|piece| chunk(json!({"content": piece}), Value::Null)));
        events.push(chunk(json!({}), json!("stop")));
        events.push(
            json!({
                "id": "chatcmpl-stub",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "stub",
                "choices": [],
                "usage": {"prompt_tokens": 12, "completion_tokens": pieces.len(), "total_tokens": 12 + pieces.len()}
            })
            .to_string(),
        );
        events.push("[DONE]".to_owned());
        Self::Sse { events, cut: false }
    }

    /// The first `keep` events of [`Reply::stream`], then the connection breaks.
    pub fn cut_stream(pieces: &[&str], keep: usize) -> Self {
        match Self::stream(pieces) {
            Self::Sse { mut events, .. } => {
                events.truncate(keep);
                Self::Sse { events, cut: true }
            }
            other => other,
        }
    }
}

type Responder = dyn Fn(&Received, usize) -> Reply + Send + Sync;

#[derive(Clone)]
struct Shared {
    received: Arc<Mutex<Vec<Received>>>,
    in_flight: Arc<Mutex<(usize, usize)>>,
    responder: Arc<Responder>,
}

/// A running stub; it stops with the test's runtime.
pub struct Stub {
    pub base_url: String,
    shared: Shared,
}

impl Stub {
    /// A stub that answers the n-th request (from 0) with `responder(request, n)`.
    pub async fn start(responder: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static) -> Self {
        let shared = Shared {
            received: Arc::default(),
            in_flight: Arc::default(),
            responder: Arc::new(responder),
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the stub");
        let address = listener.local_addr().expect("the stub's address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base_url: format!("http://{address}/v1"),
            shared,
        }
    }

    /// A stub that gives these replies in turn, then `answer("ok")`.
    pub async fn scripted(replies: Vec<Reply>) -> Self {
        let replies = Mutex::new(VecDeque::from(replies));
        Self::start(move |_, _| {
            replies
                .lock()
                .expect("replies")
                .pop_front()
                .unwrap_or_else(|| Reply::answer("ok"))
        })
        .await
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().expect("received").clone()
    }

    /// The most requests that were in the stub at once.
    pub fn most_in_flight(&self) -> usize {
        self.shared.in_flight.lock().expect("in flight").1
    }
}

async fn handle(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let received = Received {
        headers,
        body,
        at: Instant::now(),
    };
    let index = {
        let mut all = shared.received.lock().expect("received");
        all.push(received.clone());
        all.len() - 1
    };
    let reply = (shared.responder)(&received, index);
    {
        let mut in_flight = shared.in_flight.lock().expect("in flight");
        in_flight.0 += 1;
        in_flight.1 = in_flight.1.max(in_flight.0);
    }
    let response = match reply {
        Reply::Json {
            status,
            body,
            headers,
            delay,
        } => {
            tokio::time::sleep(delay).await;
            let mut response = (StatusCode::from_u16(status).expect("status"), axum::Json(body)).into_response();
            for (name, value) in headers {
                response.headers_mut().insert(
                    header::HeaderName::from_bytes(name.as_bytes()).expect("header name"),
                    header::HeaderValue::from_str(&value).expect("header value"),
                );
            }
            response
        }
        Reply::Sse { events, cut } => {
            use futures_util::StreamExt;
            let items: Vec<Result<Bytes, std::io::Error>> = events
                .into_iter()
                .map(|event| Ok(Bytes::from(format!("data: {event}\n\n"))))
                .collect();
            // What was sent reaches the client before the connection breaks.
            let cut = futures_util::stream::iter(cut.then_some(())).then(|()| async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(std::io::Error::other("cut"))
            });
            let stream = futures_util::stream::iter(items).chain(cut);
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .body(Body::from_stream(stream))
                .expect("an SSE response")
        }
    };
    shared.in_flight.lock().expect("in flight").0 -= 1;
    response
}
