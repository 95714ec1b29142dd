//! A local stand-in for an OpenAI-compatible provider, shared by the API tests and the
//! benchmarks (each includes this file with `#[path]`), so that every one of them meets
//! the same wire format the service meets in production:
//!
//! - `POST /v1/chat/completions`: a `chat.completion` JSON body, or with `"stream": true`
//!   server-sent `chat.completion.chunk` events, the first delta carrying the role, then a
//!   chunk with `finish_reason`, a chunk with `usage` when `stream_options.include_usage`
//!   asks for it, and `data: [DONE]`;
//! - `POST /v1/audio/transcriptions`: multipart in, JSON out.
//!
//! Every call is recorded (body or multipart parts, headers, and when it arrived, sent its
//! first byte and finished, which the benchmarks measure the service by). Each call is
//! answered by the next scripted [`Reply`], else by a function of the call; a reply can
//! also be a fault: an HTTP error (with `Retry-After`), a stream that breaks off, a body
//! that is not JSON, a delay, or no answer at all.

// Each test binary and benchmark uses a different part of it.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// When a request's first bytes reached the stub's socket. A server that times its
/// sockets puts this in the request's extensions; a reply's delay then counts from it,
/// as a model server's time does, rather than from the handler.
#[derive(Clone, Copy, Debug)]
pub struct SocketArrival(pub Instant);

/// One field of a multipart request.
#[derive(Clone, Debug)]
pub struct Part {
    pub name: String,
    pub file_name: Option<String>,
    pub bytes: Vec<u8>,
}

/// One request the stub received.
#[derive(Clone, Debug)]
pub struct Call {
    pub path: String,
    pub headers: HeaderMap,
    /// The JSON body; `Null` for a multipart request or a body that is not JSON.
    pub body: Value,
    pub parts: Vec<Part>,
    /// From [`SocketArrival`], when the server that serves the stub times its sockets.
    pub at_socket: Option<Instant>,
    /// When the request reached the handler, before its body was read.
    pub arrived: Instant,
    times: Arc<Times>,
}

#[derive(Debug, Default)]
struct Times {
    first_byte: OnceLock<Instant>,
    finished: OnceLock<Instant>,
}

impl Call {
    pub fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions")
    }

    /// Whether the call asks for an answer in a JSON schema (structured output).
    pub fn is_structured(&self) -> bool {
        self.body.pointer("/response_format/type") == Some(&json!("json_schema"))
    }

    /// The name of the JSON schema the call asks for.
    pub fn schema_name(&self) -> Option<&str> {
        self.body.pointer("/response_format/json_schema/name")?.as_str()
    }

    pub fn streams(&self) -> bool {
        self.body["stream"] == true
    }

    pub fn authorization(&self) -> Option<&str> {
        self.headers.get("authorization")?.to_str().ok()
    }

    pub fn part(&self, name: &str) -> Option<&Part> {
        self.parts.iter().find(|part| part.name == name)
    }

    /// When the answer's first byte was handed over: the JSON body, or the first chunk.
    pub fn first_byte(&self) -> Option<Instant> {
        self.times.first_byte.get().copied()
    }

    /// When the answer was all handed over (for a stream: when it was asked for more
    /// after its last chunk).
    pub fn finished(&self) -> Option<Instant> {
        self.times.finished.get().copied()
    }
}

/// How the stub answers one call.
#[derive(Clone, Debug)]
pub struct Reply {
    what: What,
    delay: Duration,
    gap: Duration,
    usage: (u64, u64),
    headers: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
enum What {
    /// The answer's text in the pieces a stream sends; `keep`: the stream ends after that
    /// many pieces, without a finish or `[DONE]`.
    Content {
        pieces: Vec<String>,
        keep: Option<usize>,
    },
    /// This JSON body, as it is.
    Body(Value),
    Error {
        status: u16,
        message: String,
    },
    Malformed,
    Silence,
}

impl Reply {
    /// An answer of this text; a stream sends it word by word.
    pub fn text(text: &str) -> Self {
        Self::pieces(text.split_inclusive(' '))
    }

    /// An answer a stream sends in these pieces.
    pub fn pieces<S: Into<String>>(pieces: impl IntoIterator<Item = S>) -> Self {
        Self::new(What::Content {
            pieces: pieces.into_iter().map(Into::into).collect(),
            keep: None,
        })
    }

    /// A 200 with this JSON body (a transcription's `verbose_json`, say).
    pub fn body(body: Value) -> Self {
        Self::new(What::Body(body))
    }

    /// An error status with OpenAI's error body.
    pub fn status(status: u16) -> Self {
        let message = match status {
            401 => "Incorrect API key provided.",
            429 => "Rate limit reached.",
            _ => "the model is overloaded",
        };
        Self::new(What::Error {
            status,
            message: message.to_owned(),
        })
    }

    /// A 200 whose body (or, streaming, whose first event) is not JSON.
    pub fn malformed() -> Self {
        Self::new(What::Malformed)
    }

    /// No answer at all: the call is taken and never answered.
    pub fn silence() -> Self {
        Self::new(What::Silence)
    }

    fn new(what: What) -> Self {
        Self {
            what,
            delay: Duration::ZERO,
            gap: Duration::ZERO,
            usage: (10, 5),
            headers: Vec::new(),
        }
    }

    /// The error's message (of a [`Reply::status`]).
    pub fn message(mut self, text: &str) -> Self {
        if let What::Error { message, .. } = &mut self.what {
            *message = text.to_owned();
        }
        self
    }

    pub fn retry_after(self, seconds: u64) -> Self {
        self.header("retry-after", &seconds.to_string())
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The time from the request's arrival to the answer (for a stream, to its first
    /// piece), as a model's time to its first token.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// The wait before each piece of a stream (the first too, after the delay).
    pub fn gap(mut self, gap: Duration) -> Self {
        self.gap = gap;
        self
    }

    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = (prompt_tokens, completion_tokens);
        self
    }

    /// A stream breaks off after `keep` pieces: the body ends without a finish or
    /// `[DONE]`. (A JSON answer is whole.)
    pub fn cut_after(mut self, keep: usize) -> Self {
        if let What::Content { keep: cut, .. } = &mut self.what {
            *cut = Some(keep);
        }
        self
    }
}

type Responder = dyn Fn(&Call) -> Reply + Send + Sync;

struct Shared {
    calls: Mutex<Vec<Call>>,
    script: Mutex<VecDeque<Reply>>,
    respond: Mutex<Arc<Responder>>,
    hold: AtomicBool,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    /// Set by a test whose workspace turned pseudonymisation off.
    allow_personal_data: AtomicBool,
}

/// The stub: what it was asked, and how it answers. Clones share both.
#[derive(Clone)]
pub struct OpenAiStub {
    shared: Arc<Shared>,
}

impl Default for OpenAiStub {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiStub {
    /// A stub that answers "ok" until told otherwise, not yet listening (see
    /// [`OpenAiStub::router`] and [`OpenAiStub::start`]).
    pub fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                calls: Mutex::default(),
                script: Mutex::default(),
                respond: Mutex::new(Arc::new(|_: &Call| Reply::text("ok"))),
                hold: AtomicBool::new(false),
                in_flight: AtomicUsize::new(0),
                most_in_flight: AtomicUsize::new(0),
                allow_personal_data: AtomicBool::new(false),
            }),
        }
    }

    /// A stub listening on a free port of 127.0.0.1 until the runtime ends; the
    /// service's base URL is `http://{addr}/v1`.
    pub async fn start() -> (SocketAddr, Self) {
        let stub = Self::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the model stub");
        let addr = listener.local_addr().expect("the model stub's address");
        // No Nagle delay: a model server's chunks leave as soon as they are written.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let router = stub.router();
        tokio::spawn(async move { axum::serve(listener, router).await });
        (addr, stub)
    }

    /// The stub's routes, for a caller that serves them itself.
    pub fn router(&self) -> axum::Router {
        axum::Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/audio/transcriptions", post(handle))
            .layer(DefaultBodyLimit::disable())
            .with_state(self.shared.clone())
    }

    /// Every call from now on is answered by `respond(call)` (after the script).
    pub fn respond(&self, respond: impl Fn(&Call) -> Reply + Send + Sync + 'static) {
        *self.shared.respond.lock().expect("responder") = Arc::new(respond);
    }

    /// Every call from now on gets this reply (after the script).
    pub fn answer(&self, reply: Reply) {
        self.respond(move |_| reply.clone());
    }

    /// The next calls get these replies, one each, before the responder has its turn.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().expect("script").extend(replies);
    }

    /// While set, calls are recorded and never answered (a model at work); a call held
    /// stays so when this is unset.
    pub fn hold(&self, hold: bool) {
        self.shared.hold.store(hold, Ordering::SeqCst);
    }

    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("calls").clone()
    }

    pub fn call_count(&self) -> usize {
        self.shared.calls.lock().expect("calls").len()
    }

    pub fn last_call(&self) -> Option<Call> {
        self.shared.calls.lock().expect("calls").last().cloned()
    }

    /// The JSON bodies of the chat calls, in order.
    pub fn requests(&self) -> Vec<Value> {
        let calls = self.shared.calls.lock().expect("calls");
        calls
            .iter()
            .filter(|call| call.is_chat())
            .map(|call| call.body.clone())
            .collect()
    }

    /// Forgets the calls so far.
    pub fn clear(&self) {
        self.shared.calls.lock().expect("calls").clear();
    }

    /// Lets personal values reach this stub (a workspace that turned pseudonymisation
    /// off); otherwise a chat call holding one is refused with 400 and the leak printed.
    pub fn allow_personal_data(&self, allow: bool) {
        self.shared.allow_personal_data.store(allow, Ordering::SeqCst);
    }

    /// The calls taken and not yet answered whole.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// The most calls that were in flight at once.
    pub fn most_in_flight(&self) -> usize {
        self.shared.most_in_flight.load(Ordering::Relaxed)
    }
}

/// A call in flight until dropped: with the answer, or with a client that went away.
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> Self {
        let now = shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        shared.most_in_flight.fetch_max(now, Ordering::Relaxed);
        Self(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let arrived = Instant::now();
    let in_flight = InFlight::new(&shared);
    let (call, unreadable) = read_call(request, arrived).await;
    // Every call that carries messages, whatever its endpoint.
    let leaks = if !shared.allow_personal_data.load(Ordering::SeqCst) {
        personal_values_in(&call.body)
    } else {
        Vec::new()
    };
    let reply = if !leaks.is_empty() {
        eprintln!("PERSONAL DATA REACHED THE MODEL STUB: {leaks:?}");
        Reply::status(400).message(&format!("personal data reached the model: {leaks:?}"))
    } else if shared.hold.load(Ordering::SeqCst) {
        Reply::silence()
    } else if let Some(message) = unreadable {
        Reply::status(400).message(&message)
    } else {
        let scripted = shared.script.lock().expect("script").pop_front();
        scripted.unwrap_or_else(|| {
            let respond = shared.respond.lock().expect("responder").clone();
            respond(&call)
        })
    };
    let times = call.times.clone();
    let stream = call.streams() && call.is_chat();
    let include_usage = call.body.pointer("/stream_options/include_usage") == Some(&json!(true));
    let model = call.body.get("model").cloned().unwrap_or_else(|| json!("stub"));
    let is_chat = call.is_chat();
    // A model's time counts from the request's arrival at its socket, when that is known.
    let start = call.at_socket.unwrap_or(arrived);
    shared.calls.lock().expect("calls").push(call);

    tokio::time::sleep_until((start + reply.delay).into()).await;
    let mut streaming = false;
    let mut response = match reply.what {
        What::Silence => std::future::pending().await,
        What::Error { status, message } => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", json!("invalid_api_key")),
                429 => ("requests", json!("rate_limit_exceeded")),
                400..=499 => ("invalid_request_error", Value::Null),
                _ => ("server_error", Value::Null),
            };
            let body = json!({ "error": { "message": message, "type": kind, "param": null, "code": code } });
            let status = StatusCode::from_u16(status).expect("an HTTP status");
            (status, axum::Json(body)).into_response()
        }
        What::Body(body) => axum::Json(body).into_response(),
        What::Malformed if stream => sse(["data: {\"id\": \"chatcmpl-stub\", \"choices\": [\n\n".to_owned()]),
        What::Malformed => (
            [("content-type", "application/json")],
            "{\"id\": \"chatcmpl-stub\", \"choices\": [",
        )
            .into_response(),
        What::Content { pieces, .. } if !is_chat => axum::Json(json!({ "text": pieces.concat() })).into_response(),
        What::Content { pieces, keep } if stream => {
            let (prompt_tokens, completion_tokens) = reply.usage;
            let chunk = |delta: Value, finish: Value| {
                let chunk = json!({ "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0,
                    "model": model, "choices": [ { "index": 0, "delta": delta, "finish_reason": finish } ] });
                format!("data: {chunk}\n\n")
            };
            let mut events: Vec<String> = pieces
                .iter()
                .enumerate()
                .map(|(n, piece)| match n {
                    0 => chunk(json!({ "role": "assistant", "content": piece }), Value::Null),
                    _ => chunk(json!({ "content": piece }), Value::Null),
                })
                .collect();
            match keep {
                Some(keep) => events.truncate(keep),
                None => {
                    // The finish, the usage and [DONE] go out together, as one write.
                    let mut tail = chunk(json!({}), json!("stop"));
                    if include_usage {
                        let usage = json!({ "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 0,
                            "model": model, "choices": [], "usage": { "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens } });
                        tail.push_str(&format!("data: {usage}\n\n"));
                    }
                    tail.push_str("data: [DONE]\n\n");
                    events.push(tail);
                }
            }
            // Each event waits its gap; the first one out is the first byte, and the answer
            // is finished when the body is asked for more after the last.
            let gap = reply.gap;
            let state = (events.into_iter(), times.clone(), in_flight);
            let body = futures_util::stream::unfold(state, move |(mut events, times, in_flight)| async move {
                match events.next() {
                    Some(event) => {
                        if !gap.is_zero() {
                            tokio::time::sleep(gap).await;
                        }
                        let _ = times.first_byte.set(Instant::now());
                        Some((Ok::<_, Infallible>(event), (events, times, in_flight)))
                    }
                    None => {
                        let _ = times.finished.set(Instant::now());
                        None
                    }
                }
            });
            streaming = true;
            (
                [("content-type", "text/event-stream"), ("cache-control", "no-cache")],
                Body::from_stream(body),
            )
                .into_response()
        }
        What::Content { pieces, .. } => {
            let (prompt_tokens, completion_tokens) = reply.usage;
            axum::Json(json!({
                "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": model,
                "choices": [ { "index": 0, "message": { "role": "assistant", "content": pieces.concat() },
                    "finish_reason": "stop" } ],
                "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens }
            }))
            .into_response()
        }
    };
    for (name, value) in &reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::try_from(name.as_str()).expect("a header name"),
            axum::http::HeaderValue::try_from(value.as_str()).expect("a header value"),
        );
    }
    if !streaming {
        let now = Instant::now();
        let _ = times.first_byte.set(now);
        let _ = times.finished.set(now);
    }
    response
}

/// The call a request makes, and why its body could not be read, if it could not.
/// Names the test fixtures give their speakers and people.
const FIXTURE_NAMES: &[&str] = &[
    "Anna",
    "Anna Schmidt",
    "Priya Raman",
    "Ben Okafor",
    "Okafor",
    "Priya",
    "Ben",
    "Dana",
    "Carla",
    "Carl",
    "Bob",
];

/// The personal values of the fixtures and of the labelled corpus
/// (`tests/fixtures/pii/corpus.txt`): none may reach a model while its workspace
/// pseudonymises, which is the default.
fn personal_values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let corpus = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pii/corpus.txt"))
            .expect("read the personal data corpus");
        let mut values: Vec<String> = FIXTURE_NAMES.iter().map(|v| (*v).to_owned()).collect();
        for line in corpus.lines().filter(|l| !l.starts_with('#')) {
            for mark in line.split('⟦').skip(1) {
                if let Some((_, value)) = mark.split('⟧').next().and_then(|m| m.split_once(':')) {
                    // A two-letter name would be found inside ordinary words' company.
                    if value.chars().count() >= 3 {
                        values.push(value.to_owned());
                    }
                }
            }
        }
        values.sort();
        values.dedup();
        values
    })
}

/// The personal values in the messages of a chat call, as whole words.
fn personal_values_in(body: &Value) -> Vec<String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for message in messages {
        let Some(content) = message.get("content").and_then(Value::as_str) else {
            continue;
        };
        // Only the values whose first word the message has are looked for, so that a
        // benchmark's long prompts cost one pass.
        let words: std::collections::HashSet<&str> = content.split(|c: char| !c.is_alphanumeric()).collect();
        for value in personal_values() {
            let first = value
                .split(|c: char| !c.is_alphanumeric())
                .find(|w| !w.is_empty())
                .unwrap_or("");
            if !words.contains(first) {
                continue;
            }
            let whole_word = content.match_indices(value.as_str()).any(|(at, _)| {
                let before = content[..at].chars().next_back();
                let after = content[at + value.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
            });
            if whole_word && !found.contains(value) {
                found.push(value.clone());
            }
        }
    }
    found
}

async fn read_call(request: Request, arrived: Instant) -> (Call, Option<String>) {
    let at_socket = request.extensions().get::<SocketArrival>().map(|at| at.0);
    let path = request.uri().path().to_owned();
    let headers = request.headers().clone();
    let (mut body, mut parts) = (Value::Null, Vec::new());
    let mut unreadable = None;
    if path.ends_with("/audio/transcriptions") {
        match Multipart::from_request(request, &()).await {
            Ok(mut form) => loop {
                match form.next_field().await {
                    Ok(Some(field)) => {
                        let name = field.name().unwrap_or_default().to_owned();
                        let file_name = field.file_name().map(str::to_owned);
                        let bytes = field.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
                        parts.push(Part { name, file_name, bytes });
                    }
                    Ok(None) => break,
                    Err(error) => {
                        unreadable = Some(error.to_string());
                        break;
                    }
                }
            },
            Err(rejection) => unreadable = Some(rejection.body_text()),
        }
    } else {
        match axum::body::to_bytes(request.into_body(), usize::MAX).await {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(json) => body = json,
                Err(error) => unreadable = Some(format!("We could not parse the JSON body of your request: {error}")),
            },
            Err(error) => unreadable = Some(error.to_string()),
        }
    }
    let call = Call {
        path,
        headers,
        body,
        parts,
        at_socket,
        arrived,
        times: Arc::default(),
    };
    (call, unreadable)
}

fn sse(events: impl IntoIterator<Item = String>) -> Response {
    let events: Vec<Result<String, Infallible>> = events.into_iter().map(Ok).collect();
    (
        [("content-type", "text/event-stream")],
        Body::from_stream(futures_util::stream::iter(events)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn post(addr: SocketAddr, body: Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(format!("http://{addr}/v1/chat/completions"))
            .bearer_auth("sk-test")
            .json(&body)
            .send()
            .await
            .expect("sent")
    }

    /// The `data:` payloads of an SSE body.
    fn events(body: &str) -> Vec<String> {
        body.split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .map(str::to_owned)
            .collect()
    }

    #[tokio::test]
    async fn answers_as_a_chat_completion_and_records_the_call() {
        let (addr, stub) = OpenAiStub::start().await;
        stub.answer(Reply::text("Hello there.").usage(7, 3));
        let response = post(addr, json!({ "model": "m", "messages": [] })).await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["model"], "m");
        assert_eq!(body["choices"][0]["message"]["content"], "Hello there.");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["total_tokens"], 10);
        let call = stub.last_call().expect("a call");
        assert_eq!(call.authorization(), Some("Bearer sk-test"));
        assert_eq!(stub.requests(), [json!({ "model": "m", "messages": [] })]);
        assert!(call.finished().is_some_and(|at| at >= call.arrived));
    }

    #[tokio::test]
    async fn streams_chunks_then_the_usage_and_done() {
        let (addr, stub) = OpenAiStub::start().await;
        stub.answer(Reply::text("one two"));
        let asked = json!({ "model": "m", "stream": true, "stream_options": { "include_usage": true } });
        let response = post(addr, asked).await;
        assert!(response.headers()["content-type"] == "text/event-stream");
        let body = response.text().await.expect("body");
        let chunks_and_done = events(&body);
        assert_eq!(chunks_and_done.last().map(String::as_str), Some("[DONE]"));
        let chunks: Vec<Value> = chunks_and_done[..chunks_and_done.len() - 1]
            .iter()
            .map(|event| serde_json::from_str(event).expect("a JSON chunk"))
            .collect();
        assert_eq!(
            chunks[0]["choices"][0]["delta"],
            json!({ "role": "assistant", "content": "one " })
        );
        assert_eq!(chunks[1]["choices"][0]["delta"], json!({ "content": "two" }));
        assert_eq!(chunks[2]["choices"][0]["finish_reason"], "stop");
        assert_eq!(chunks[3]["choices"], json!([]));
        assert_eq!(chunks[3]["usage"]["prompt_tokens"], 10);

        // Without include_usage there is no usage chunk; a cut stream has no end at all.
        stub.script([Reply::text("one two three").cut_after(2)]);
        let cut = post(addr, json!({ "stream": true })).await.text().await.expect("body");
        assert_eq!(events(&cut).len(), 2, "{cut}");
        let whole = post(addr, json!({ "stream": true })).await.text().await.expect("body");
        assert_eq!(events(&whole).len(), 4, "{whole}");
    }

    #[tokio::test]
    async fn faults_speak_the_wire_format_too() {
        let (addr, stub) = OpenAiStub::start().await;
        stub.script([
            Reply::status(429).retry_after(2),
            Reply::status(401),
            Reply::malformed(),
            Reply::text("late").delay(Duration::from_millis(200)),
        ]);
        let limited = post(addr, json!({})).await;
        assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(limited.headers()["retry-after"], "2");
        let body: Value = limited.json().await.expect("json");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        let refused: Value = post(addr, json!({})).await.json().await.expect("json");
        assert_eq!(refused["error"]["code"], "invalid_api_key");
        let malformed = post(addr, json!({})).await.text().await.expect("body");
        assert!(serde_json::from_str::<Value>(&malformed).is_err(), "{malformed}");
        let started = Instant::now();
        post(addr, json!({})).await;
        assert!(started.elapsed() >= Duration::from_millis(200));

        stub.hold(true);
        let held = tokio::time::timeout(Duration::from_millis(200), post(addr, json!({}))).await;
        assert!(held.is_err(), "a held call is not answered");
        assert_eq!(stub.call_count(), 5);
    }

    #[tokio::test]
    async fn transcriptions_record_their_parts() {
        let (addr, stub) = OpenAiStub::start().await;
        stub.answer(Reply::text("Hi there."));
        let form = reqwest::multipart::Form::new().text("model", "whisper-1").part(
            "file",
            reqwest::multipart::Part::bytes(vec![1, 2, 3]).file_name("a.wav"),
        );
        let response = reqwest::Client::new()
            .post(format!("http://{addr}/v1/audio/transcriptions"))
            .multipart(form)
            .send()
            .await
            .expect("sent");
        let body: Value = response.json().await.expect("json");
        assert_eq!(body, json!({ "text": "Hi there." }));
        let call = stub.last_call().expect("a call");
        assert_eq!(call.part("model").map(|p| p.bytes.clone()), Some(b"whisper-1".to_vec()));
        let file = call.part("file").expect("file");
        assert_eq!(
            (file.file_name.as_deref(), file.bytes.as_slice()),
            (Some("a.wav"), &[1u8, 2, 3][..])
        );
        assert!(stub.requests().is_empty(), "not a chat call");
    }
}
