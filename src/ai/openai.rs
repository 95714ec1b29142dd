//! A Chat Completions client for any OpenAI-compatible server: OpenAI, Azure OpenAI
//! (its `/openai/v1` API), OpenRouter, Ollama, vLLM, llama.cpp's server...
//!
//! Every call is retried inside [`OpenAiClient::chat`] / [`OpenAiClient::chat_stream`]
//! on what may pass (connection errors, timeouts, 408, 409, 429, 5xx, a stream cut
//! before `[DONE]`, an answer that is not the JSON a schema asked for), with
//! exponential backoff and full jitter, or the server's `Retry-After`. What will not
//! pass (400, 401, 403, 404, 422...) is [`AiError::Permanent`] at once, with the
//! server's own message and never the API key. A semaphore bounds the calls in flight
//! across all clones of a client.
//!
//! Servers differ in the parameters they take: OpenAI's reasoning models refuse
//! `max_tokens` (they want `max_completion_tokens`) and a `temperature`, its other
//! models refuse `reasoning_effort`. When a server answers 400 naming one of these,
//! the client adapts the request, remembers it for later calls, and sends it again at
//! once (this is not counted as an attempt).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use rand::Rng;
use reqwest::header::{self, HeaderMap};
use reqwest::{StatusCode, Url};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, SemaphorePermit};

use super::{AiError, Usage};

/// The longest wait between two attempts, whatever the backoff or the server says.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How long an error message from a server may be in an [`AiError`].
const MAX_MESSAGE_CHARS: usize = 500;

/// Where and how to reach the model.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API's base URL, up to and without `/chat/completions`, e.g.
    /// `http://127.0.0.1:8080/v1` or `https://api.openai.com/v1`. A query string (Azure's
    /// `?api-version=...`) is kept.
    pub base_url: String,
    /// Sent as `Authorization: Bearer ...` (as `api-key: ...` to Azure hosts).
    pub api_key: Option<String>,
    pub model: String,
    /// The model's context window in tokens (prompt and answer together).
    pub context_tokens: usize,
    /// Attempts per call, the first included (at least 1).
    pub max_attempts: u32,
    /// The backoff before the second attempt; each further one doubles it (full jitter).
    pub retry_base: Duration,
    /// How long one attempt may take; for a stream, how long until the answer starts
    /// and how long the server may then stay silent between two chunks.
    pub timeout: Duration,
    /// Most calls in flight at once across all clones of the client (at least 1).
    pub concurrency: usize,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("context_tokens", &self.context_tokens)
            .field("max_attempts", &self.max_attempts)
            .field("retry_base", &self.retry_base)
            .field("timeout", &self.timeout)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What a streamed answer delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// The next piece of the answer's text.
    Text(&'a str),
    /// An attempt failed and the call is tried again: the text so far is void.
    Restart,
}

/// One Chat Completions call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Most tokens of the answer (sent as `max_tokens`).
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// `low`, `medium` or `high`; sent only when set.
    pub reasoning_effort: Option<String>,
    /// A JSON Schema the answer must follow, with its name: sent as a strict
    /// `response_format`, and an answer that is not JSON is a failed attempt.
    pub json_schema: Option<(String, Value)>,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatAnswer {
    /// The answer's text; for a schema request, the JSON alone (a leading `<think>`
    /// block and Markdown code fences removed).
    pub content: String,
    /// As the server counted it; estimated with [`count_tokens`] when it did not say.
    pub usage: Usage,
    /// `stop`, `length`...
    pub finish_reason: Option<String>,
}

/// A client of one model on one OpenAI-compatible server. Clones share the HTTP
/// connections and the concurrency limit.
#[derive(Clone)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: OpenAiConfig,
    http: reqwest::Client,
    endpoint: Url,
    /// Azure wants the key in an `api-key` header.
    azure: bool,
    permits: Semaphore,
    compat: Compat,
}

/// Parameters this server refused, learnt from its 400s.
#[derive(Default)]
struct Compat {
    max_completion_tokens: AtomicBool,
    no_reasoning_effort: AtomicBool,
    no_temperature: AtomicBool,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("model", &self.inner.config.model)
            .finish_non_exhaustive()
    }
}

/// How one attempt failed.
#[derive(Debug)]
enum Failure {
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    Permanent(String),
    /// The server refused a parameter it does not take; the request was adapted.
    Adapted(String),
}

impl Failure {
    fn transient(message: impl Into<String>) -> Self {
        Self::Transient {
            message: message.into(),
            retry_after: None,
        }
    }
}

impl OpenAiClient {
    /// A client for the configured server; fails on a base URL that is not http(s) or
    /// an empty model name.
    pub fn new(config: OpenAiConfig) -> Result<Self, AiError> {
        let base = config.base_url.trim();
        let mut endpoint = Url::parse(base).map_err(|error| {
            AiError::Permanent(format!("The model server's base URL {base:?} is invalid ({error})."))
        })?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(AiError::Permanent(format!(
                "The model server's base URL {base:?} is not an http(s) URL."
            )));
        }
        endpoint
            .path_segments_mut()
            .map_err(|()| AiError::Permanent(format!("The model server's base URL {base:?} cannot have a path.")))?
            .pop_if_empty()
            .extend(["chat", "completions"]);
        if config.model.trim().is_empty() {
            return Err(AiError::Permanent(
                "No model is configured for the model server.".into(),
            ));
        }
        let azure = endpoint
            .host_str()
            .is_some_and(|host| host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com"));
        // No more calls than the limit are ever in flight, so no more idle connections
        // than that are worth keeping (each holds its buffers) after a burst.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(config.concurrency.max(1))
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|error| AiError::Permanent(format!("Could not set up the HTTP client ({error}).")))?;
        let permits = Semaphore::new(config.concurrency.clamp(1, Semaphore::MAX_PERMITS));
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                http,
                endpoint,
                azure,
                permits,
                compat: Compat::default(),
            }),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.config
    }

    /// The URL calls go to (`{base_url}/chat/completions`).
    pub fn endpoint(&self) -> &str {
        self.inner.endpoint.as_str()
    }

    /// One answer, retried as the module explains.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatAnswer, AiError> {
        self.run(request, None).await
    }

    /// One answer, streamed: `on_delta` gets each piece of text as it comes. When an
    /// attempt fails mid-stream, the next one streams from the start again, so
    /// `on_delta` sees the beginning twice; the returned [`ChatAnswer::content`] is the
    /// whole answer of the attempt that succeeded.
    pub async fn chat_stream(
        &self,
        request: &ChatRequest,
        mut on_delta: impl FnMut(&str) + Send,
    ) -> Result<ChatAnswer, AiError> {
        self.run(
            request,
            Some(&mut |piece: Piece<'_>| {
                if let Piece::Text(text) = piece {
                    on_delta(text);
                }
            }),
        )
        .await
    }

    /// [`chat_stream`](Self::chat_stream) that also says when a failed attempt is
    /// retried: [`Piece::Restart`] means that the text so far is void and the answer
    /// streams again from its start.
    pub async fn chat_stream_pieces(
        &self,
        request: &ChatRequest,
        mut on_piece: impl FnMut(Piece<'_>) + Send,
    ) -> Result<ChatAnswer, AiError> {
        self.run(request, Some(&mut on_piece)).await
    }

    async fn run(
        &self,
        request: &ChatRequest,
        mut on_piece: Option<&mut (dyn FnMut(Piece<'_>) + Send)>,
    ) -> Result<ChatAnswer, AiError> {
        let attempts = self.inner.config.max_attempts.max(1);
        let mut attempt = 1;
        let mut adaptations = 0;
        loop {
            let body = self.body(request, on_piece.is_some());
            let outcome = match on_piece.as_deref_mut() {
                Some(on_piece) => {
                    self.stream_attempt(request, &body, &mut |text: &str| on_piece(Piece::Text(text)))
                        .await
                }
                None => self.attempt(request, &body).await,
            };
            let (message, retry_after) = match outcome {
                Ok(answer) => return Ok(answer),
                Err(Failure::Permanent(message)) => return Err(AiError::Permanent(message)),
                Err(Failure::Adapted(message)) if adaptations < 3 => {
                    adaptations += 1;
                    tracing::info!(model = %self.inner.config.model, %message, "model server refused a parameter; sending without it");
                    continue;
                }
                Err(Failure::Adapted(message)) => return Err(AiError::Permanent(message)),
                Err(Failure::Transient { message, retry_after }) => (message, retry_after),
            };
            if attempt >= attempts {
                let tries = if attempts == 1 {
                    "1 attempt".to_owned()
                } else {
                    format!("{attempts} attempts")
                };
                return Err(AiError::Transient(format!("{message} (gave up after {tries})")));
            }
            let wait = retry_after
                .unwrap_or_else(|| backoff(self.inner.config.retry_base, attempt))
                .min(MAX_WAIT);
            tracing::warn!(
                model = %self.inner.config.model,
                attempt,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                %message,
                "model call failed; retrying"
            );
            tokio::time::sleep(wait).await;
            if let Some(on_piece) = on_piece.as_deref_mut() {
                on_piece(Piece::Restart);
            }
            attempt += 1;
        }
    }

    /// The JSON body of a request, as this server takes it.
    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let compat = &self.inner.compat;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.inner.config.model));
        body.insert("messages".into(), json!(request.messages));
        if let Some(max_tokens) = request.max_tokens {
            let key = if compat.max_completion_tokens.load(Ordering::Relaxed) {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(max_tokens));
        }
        if let Some(temperature) = request.temperature
            && !compat.no_temperature.load(Ordering::Relaxed)
        {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(effort) = &request.reasoning_effort
            && !compat.no_reasoning_effort.load(Ordering::Relaxed)
        {
            body.insert("reasoning_effort".into(), json!(effort));
        }
        if let Some((name, schema)) = &request.json_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": true}}),
            );
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    async fn permit(&self) -> Result<SemaphorePermit<'_>, Failure> {
        self.inner
            .permits
            .acquire()
            .await
            .map_err(|_| Failure::Permanent("The model client is closed.".into()))
    }

    fn timed_out(&self) -> Failure {
        Failure::transient(format!(
            "The model server did not answer within {} s.",
            self.inner.config.timeout.as_secs_f64()
        ))
    }

    /// One plain (not streamed) attempt. The request is built before the concurrency
    /// permit is taken and the permit is given back as soon as the answer has arrived,
    /// so the next call waiting for it starts without waiting on this one's work.
    async fn attempt(&self, request: &ChatRequest, body: &Value) -> Result<ChatAnswer, Failure> {
        let http_request = self.request(body, false)?;
        let permit = self.permit().await?;
        let work = async {
            let response = self.send(http_request, body).await?;
            response.text().await.map_err(|error| {
                Failure::transient(format!(
                    "The model server's answer broke off ({}).",
                    error_chain(&error)
                ))
            })
        };
        let text = tokio::time::timeout(self.inner.config.timeout, work)
            .await
            .unwrap_or_else(|_| Err(self.timed_out()))?;
        drop(permit);
        // The call waiting for the permit was just woken: let it go out first.
        tokio::task::yield_now().await;
        self.parse_answer(request, &text)
    }

    /// One streamed attempt.
    async fn stream_attempt(
        &self,
        request: &ChatRequest,
        body: &Value,
        on_delta: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ChatAnswer, Failure> {
        let http_request = self.request(body, true)?;
        let _permit = self.permit().await?;
        let timeout = self.inner.config.timeout;
        let response = tokio::time::timeout(timeout, self.send(http_request, body))
            .await
            .map_err(|_| self.timed_out())??;
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        if is_json {
            // A server that does not stream answers whole.
            let text = tokio::time::timeout(timeout, response.text())
                .await
                .map_err(|_| self.timed_out())?
                .map_err(|error| {
                    Failure::transient(format!(
                        "The model server's answer broke off ({}).",
                        error_chain(&error)
                    ))
                })?;
            let answer = self.parse_answer(request, &text)?;
            on_delta(&answer.content);
            return Ok(answer);
        }
        let mut stream = response.bytes_stream();
        let mut parser = SseParser::default();
        let mut state = StreamState::default();
        loop {
            let next = tokio::time::timeout(timeout, stream.next()).await.map_err(|_| {
                Failure::transient(format!(
                    "The model server's stream stalled for {} s before [DONE].",
                    timeout.as_secs_f64()
                ))
            })?;
            let ended = next.is_none();
            let events = match next {
                Some(Ok(bytes)) => parser.push(&bytes),
                Some(Err(error)) => {
                    return Err(Failure::transient(format!(
                        "The model server's stream broke off before [DONE] ({}).",
                        error_chain(&error)
                    )));
                }
                None => parser.finish(),
            };
            for data in events {
                if data.trim() == "[DONE]" {
                    return self.finish(request, state.content, state.usage, state.finish_reason, state.refusal);
                }
                state.chunk(&data, on_delta, |message| self.redact(message))?;
            }
            if ended {
                return Err(Failure::transient("The model server's stream ended before [DONE]."));
            }
        }
    }

    /// The HTTP request of a call with this body.
    fn request(&self, body: &Value, stream: bool) -> Result<reqwest::Request, Failure> {
        let mut builder = self.inner.http.post(self.inner.endpoint.clone()).json(body);
        if let Some(key) = self.inner.config.api_key.as_deref().filter(|key| !key.is_empty()) {
            builder = if self.inner.azure {
                builder.header("api-key", key)
            } else {
                builder.bearer_auth(key)
            };
        }
        if stream {
            builder = builder.header(header::ACCEPT, "text/event-stream");
        }
        builder.build().map_err(|error| {
            Failure::Permanent(format!("Could not build the model request ({}).", error_chain(&error)))
        })
    }

    /// Sends the request (whose body is `body`); a response with an error status becomes a
    /// [`Failure`].
    async fn send(&self, http_request: reqwest::Request, body: &Value) -> Result<reqwest::Response, Failure> {
        let response = self.inner.http.execute(http_request).await.map_err(|error| {
            Failure::transient(format!("Could not reach the model server ({}).", error_chain(&error)))
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        let (detail, param) = server_message(&text);
        let detail = self.redact(&detail);
        let message = format!("The model server answered {status}: {detail}");
        if status == StatusCode::BAD_REQUEST && self.adapt(&detail, param.as_deref(), body) {
            return Err(Failure::Adapted(message));
        }
        if retryable(status) {
            Err(Failure::Transient { message, retry_after })
        } else {
            Err(Failure::Permanent(message))
        }
    }

    /// Learns from a 400 that names a parameter the server does not take; true when the
    /// next request will differ.
    fn adapt(&self, message: &str, param: Option<&str>, body: &Value) -> bool {
        let lower = message.to_lowercase();
        let refused = [
            "unsupported",
            "not supported",
            "unrecognized",
            "unknown",
            "not allowed",
            "does not support",
        ]
        .iter()
        .any(|word| lower.contains(word));
        let names = |name: &str| param == Some(name) || (refused && lower.contains(name));
        let compat = &self.inner.compat;
        let sent = |key: &str| body.get(key).is_some();
        if sent("max_tokens") && names("max_tokens") && lower.contains("max_completion_tokens") {
            compat.max_completion_tokens.store(true, Ordering::Relaxed);
            return true;
        }
        if sent("reasoning_effort") && names("reasoning_effort") {
            compat.no_reasoning_effort.store(true, Ordering::Relaxed);
            return true;
        }
        if sent("temperature") && names("temperature") {
            compat.no_temperature.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// A whole (not streamed) Chat Completions answer.
    fn parse_answer(&self, request: &ChatRequest, text: &str) -> Result<ChatAnswer, Failure> {
        let value: Value = serde_json::from_str(text)
            .map_err(|_| Failure::transient("The model server's answer is not JSON.".to_owned()))?;
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            let (detail, _) = error_message(error);
            return Err(Failure::transient(format!(
                "The model server reported an error: {}",
                self.redact(&detail)
            )));
        }
        let completion: WireCompletion = serde_json::from_value(value).map_err(|error| {
            Failure::transient(format!("The model server's answer is not a chat completion ({error})."))
        })?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(Failure::transient("The model server's answer has no choices."));
        };
        let message = choice.message.unwrap_or_default();
        self.finish(
            request,
            message.content.unwrap_or_default(),
            completion.usage,
            choice.finish_reason,
            message.refusal.unwrap_or_default(),
        )
    }

    /// The answer from its parts, or why it is no good.
    fn finish(
        &self,
        request: &ChatRequest,
        content: String,
        usage: Option<WireUsage>,
        finish_reason: Option<String>,
        refusal: String,
    ) -> Result<ChatAnswer, Failure> {
        if content.trim().is_empty() && !refusal.trim().is_empty() {
            return Err(Failure::Permanent(format!(
                "The model refused: {}",
                truncate(refusal.trim())
            )));
        }
        if finish_reason.as_deref() == Some("content_filter") {
            return Err(Failure::Permanent(
                "The model server's content filter stopped the answer.".into(),
            ));
        }
        let mut content = strip_think(&content).to_owned();
        if request.json_schema.is_some() {
            let json = strip_fences(&content);
            if serde_json::from_str::<Value>(json).is_err() {
                let reason = finish_reason.as_deref().unwrap_or("unknown");
                return Err(Failure::transient(format!(
                    "The model's answer is not valid JSON (finish reason: {reason})."
                )));
            }
            content = json.to_owned();
        }
        let usage = match usage {
            Some(usage) => Usage {
                prompt_tokens: usage.prompt_tokens.unwrap_or(0),
                completion_tokens: usage.completion_tokens.unwrap_or(0),
            },
            None => Usage {
                prompt_tokens: request
                    .messages
                    .iter()
                    .map(|m| count_tokens(&m.content) as u64 + 4)
                    .sum(),
                completion_tokens: count_tokens(&content) as u64,
            },
        };
        Ok(ChatAnswer {
            content,
            usage,
            finish_reason,
        })
    }

    /// The message without the API key in it.
    fn redact(&self, message: &str) -> String {
        match self.inner.config.api_key.as_deref().filter(|key| key.len() >= 4) {
            Some(key) => message.replace(key, "[redacted]"),
            None => message.to_owned(),
        }
    }
}

/// What a stream has said so far.
#[derive(Default)]
struct StreamState {
    content: String,
    usage: Option<WireUsage>,
    finish_reason: Option<String>,
    refusal: String,
}

impl StreamState {
    /// Takes in one `data:` chunk.
    fn chunk(
        &mut self,
        data: &str,
        on_delta: &mut (dyn FnMut(&str) + Send),
        redact: impl Fn(&str) -> String,
    ) -> Result<(), Failure> {
        let value: Value = serde_json::from_str(data)
            .map_err(|_| Failure::transient("The model server's stream sent a chunk that is not JSON."))?;
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            let (detail, _) = error_message(error);
            return Err(Failure::transient(format!(
                "The model server's stream reported an error: {}",
                redact(&detail)
            )));
        }
        let chunk: WireCompletion = serde_json::from_value(value)
            .map_err(|error| Failure::transient(format!("The model server's stream sent an odd chunk ({error}).")))?;
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        if let Some(choice) = chunk.choices.into_iter().next() {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                    on_delta(&text);
                    self.content.push_str(&text);
                }
                if let Some(refusal) = delta.refusal {
                    self.refusal.push_str(&refusal);
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    delta: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireMessage {
    content: Option<String>,
    refusal: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// Statuses worth another attempt.
fn retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// `retry_base * 2^(attempt-1)` (at most [`MAX_WAIT`]), times a random factor in 0..=1.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let ceiling = base
        .saturating_mul(1 << attempt.saturating_sub(1).min(20))
        .min(MAX_WAIT);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rand::rng().random_range(0..=nanos))
}

/// The wait a server asks for: `retry-after-ms`, or `Retry-After` in seconds or as an
/// HTTP date; at most [`MAX_WAIT`].
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    let seconds = |value: &str| value.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
    if let Some(ms) = text(header::HeaderName::from_static("retry-after-ms")).and_then(seconds) {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(MAX_WAIT.as_secs_f64())));
    }
    let value = text(header::RETRY_AFTER)?;
    if let Some(seconds) = seconds(value) {
        return Some(Duration::from_secs_f64(seconds.min(MAX_WAIT.as_secs_f64())));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO).min(MAX_WAIT))
}

/// The message (and the parameter it names, if any) of an error answer's body:
/// `{"error":{"message":..,"param":..}}`, `{"error":".."}`, `{"message":..}`, or the text.
fn server_message(body: &str) -> (String, Option<String>) {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => match value.get("error") {
            Some(error) => error_message(error),
            None => match value
                .get("message")
                .or_else(|| value.get("detail"))
                .and_then(Value::as_str)
            {
                Some(message) => (truncate(message), None),
                None => (truncate(body.trim()), None),
            },
        },
        Err(_) if body.trim().is_empty() => ("(no message)".into(), None),
        Err(_) => (truncate(body.trim()), None),
    }
}

/// The message and parameter of an `error` value.
fn error_message(error: &Value) -> (String, Option<String>) {
    match error {
        Value::String(message) => (truncate(message), None),
        Value::Object(fields) => {
            let message = fields
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            let param = fields.get("param").and_then(Value::as_str).map(str::to_owned);
            (truncate(&message), param)
        }
        other => (truncate(&other.to_string()), None),
    }
}

fn truncate(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    }
}

/// An HTTP error with its causes, without the URL (which may hold credentials).
fn error_chain(error: &reqwest::Error) -> String {
    let mut message = if error.is_timeout() {
        "timed out".to_owned()
    } else {
        String::new()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
        source = cause.source();
    }
    if message.is_empty() {
        "request failed".to_owned()
    } else {
        message
    }
}

/// The answer without a leading `<think>...</think>` block (reasoning models served by
/// Ollama, vLLM or llama.cpp may put their thinking there).
fn strip_think(content: &str) -> &str {
    let trimmed = content.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim_start();
    }
    content
}

/// JSON without the Markdown code fence some models put around it.
fn strip_fences(content: &str) -> &str {
    let trimmed = content.trim();
    if let Some(rest) = trimmed.strip_prefix("```")
        && let Some(inner) = rest.strip_suffix("```")
    {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        return inner.trim();
    }
    trimmed
}

/// Server-sent events: the `data` of each event, as its lines come in.
#[derive(Default)]
struct SseParser {
    buffer: Vec<u8>,
    data: Option<String>,
}

impl SseParser {
    /// Takes in bytes; returns the data of the events they complete.
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(length) = self.buffer[start..].iter().position(|&byte| byte == b'\n') {
            let line = String::from_utf8_lossy(&self.buffer[start..start + length]).into_owned();
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut events);
            start += length + 1;
        }
        self.buffer.drain(..start);
        events
    }

    /// The end of the stream: what is left, as if a blank line followed.
    fn finish(&mut self) -> Vec<String> {
        let mut events = Vec::new();
        if !self.buffer.is_empty() {
            let line = String::from_utf8_lossy(&self.buffer).into_owned();
            self.buffer.clear();
            self.line(line.strip_suffix('\r').unwrap_or(&line), &mut events);
        }
        self.line("", &mut events);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            events.extend(self.data.take());
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            }
        }
    }
}

/// OpenAI's `o200k_base` encoding (GPT-4o and later), built on first use.
static BPE: LazyLock<Option<tiktoken_rs::CoreBPE>> = LazyLock::new(|| tiktoken_rs::o200k_base().ok());

/// Builds the tokenizer now. It takes about a fifth of a second, and every thread that
/// counts tokens waits for it: `serve` calls this before it takes requests, so that the
/// first report or chat does not stall the runtime's workers.
pub fn load_tokenizer() {
    LazyLock::force(&BPE);
}

/// Texts shorter than this are counted each time: looking them up costs about as much.
const KEPT_COUNT_MIN_BYTES: usize = 256;

/// More kept counts than this and the memo starts over, which bounds its memory (a few
/// hundred KB at most).
const MAX_KEPT_COUNTS: usize = 8_192;

/// Counts of texts seen before, by a keyed hash of the text and its length: the same
/// instructions, study and transcript chunks are counted for every report and chat turn,
/// and the tokenizer took a tenth of the server's CPU in the generation benchmark. The
/// hash's key is random per process, so no text can be made to collide with another's.
static KEPT_COUNTS: LazyLock<KeptCounts> = LazyLock::new(KeptCounts::default);

#[derive(Default)]
struct KeptCounts {
    state: std::hash::RandomState,
    /// By the text's hash and length.
    counts: Mutex<HashMap<(u64, usize), usize>>,
}

/// Tokens of a text by OpenAI's `o200k_base` encoding. Other models' tokenizers count
/// differently, typically within a few tens of percent: leave a margin.
pub fn count_tokens(text: &str) -> usize {
    if text.len() < KEPT_COUNT_MIN_BYTES {
        return count_tokens_now(text);
    }
    let kept = &*KEPT_COUNTS;
    let key = (std::hash::BuildHasher::hash_one(&kept.state, text), text.len());
    let lock = || kept.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(count) = lock().get(&key) {
        return *count;
    }
    let count = count_tokens_now(text);
    let mut kept = lock();
    if kept.len() >= MAX_KEPT_COUNTS {
        kept.clear();
    }
    kept.insert(key, count);
    count
}

fn count_tokens_now(text: &str) -> usize {
    let Some(bpe) = BPE.as_ref() else {
        return text.len().div_ceil(3);
    };
    // The tokenizer's regex gives up (and tiktoken panics) on very long runs of some
    // characters: count in pieces, cut where possible at whitespace.
    const PIECE: usize = 8 * 1024;
    let mut total = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(PIECE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end < rest.len()
            && let Some(space) = rest[..end].rfind(char::is_whitespace)
            && space > PIECE / 2
        {
            end = space;
        }
        let piece = &rest[..end];
        total += std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bpe.encode_ordinary(piece).len()))
            .unwrap_or_else(|_| piece.len().div_ceil(3));
        rest = &rest[end..];
    }
    total
}

/// A stub OpenAI-compatible server for tests: it records what it receives and answers
/// as told, in the real wire format.
#[cfg(test)]
pub(crate) mod test_server {
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
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::test_server::{Reply, Stub};
    use super::*;

    const KEY: &str = "sk-test-secret-123";

    fn config(base_url: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.to_owned(),
            api_key: Some(KEY.to_owned()),
            model: "test-model".to_owned(),
            context_tokens: 8_000,
            max_attempts: 3,
            retry_base: Duration::from_millis(10),
            timeout: Duration::from_secs(5),
            concurrency: 4,
        }
    }

    fn client(stub: &Stub) -> OpenAiClient {
        OpenAiClient::new(config(&stub.base_url)).expect("a client")
    }

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![Message::system("You are terse."), Message::user("Say hi.")],
            max_tokens: Some(100),
            ..ChatRequest::default()
        }
    }

    fn schema() -> (String, Value) {
        (
            "greeting".to_owned(),
            json!({
                "type": "object",
                "properties": {"greeting": {"type": "string"}},
                "required": ["greeting"],
                "additionalProperties": false
            }),
        )
    }

    #[tokio::test]
    async fn sends_the_wire_format_and_reads_the_answer() {
        let stub = Stub::scripted(vec![Reply::answer_with_usage("Hi.", 21, 2)]).await;
        let answer = client(&stub).chat(&request()).await.expect("an answer");
        assert_eq!(answer.content, "Hi.");
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: 21,
                completion_tokens: 2
            }
        );
        assert_eq!(answer.finish_reason.as_deref(), Some("stop"));

        let received = stub.received();
        assert_eq!(received.len(), 1);
        let body = &received[0].body;
        assert_eq!(body["model"], "test-model");
        assert_eq!(
            body["messages"],
            json!([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}])
        );
        assert_eq!(body["max_tokens"], 100);
        for absent in [
            "reasoning_effort",
            "temperature",
            "response_format",
            "stream",
            "stream_options",
        ] {
            assert!(body.get(absent).is_none(), "{absent} was sent: {body}");
        }
        assert_eq!(received[0].headers["authorization"], format!("Bearer {KEY}").as_str());
    }

    #[tokio::test]
    async fn sends_reasoning_effort_temperature_and_schema_when_set() {
        let stub = Stub::scripted(vec![Reply::answer(r#"{"greeting": "hi"}"#)]).await;
        let request = ChatRequest {
            temperature: Some(0.5),
            reasoning_effort: Some("high".into()),
            json_schema: Some(schema()),
            ..request()
        };
        let answer = client(&stub).chat(&request).await.expect("an answer");
        assert_eq!(answer.content, r#"{"greeting": "hi"}"#);
        let body = &stub.received()[0].body;
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "greeting", "schema": schema().1, "strict": true}})
        );
    }

    #[tokio::test]
    async fn retries_a_server_error() {
        let stub = Stub::scripted(vec![Reply::error(500, "boom"), Reply::answer("Hi.")]).await;
        let answer = client(&stub).chat(&request()).await.expect("an answer");
        assert_eq!(answer.content, "Hi.");
        assert_eq!(stub.received().len(), 2);
    }

    #[tokio::test]
    async fn honours_retry_after() {
        let stub = Stub::scripted(vec![
            Reply::error(429, "slow down").header("retry-after", "1"),
            Reply::answer("Hi."),
        ])
        .await;
        let started = Instant::now();
        let answer = client(&stub).chat(&request()).await.expect("an answer");
        assert_eq!(answer.content, "Hi.");
        let received = stub.received();
        assert_eq!(received.len(), 2);
        let gap = received[1].at - received[0].at;
        assert!(gap >= Duration::from_millis(950), "waited only {gap:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn retries_a_request_that_times_out() {
        let stub = Stub::scripted(vec![
            Reply::answer("late").delayed(Duration::from_secs(3)),
            Reply::answer("Hi."),
        ])
        .await;
        let client = OpenAiClient::new(OpenAiConfig {
            timeout: Duration::from_millis(300),
            ..config(&stub.base_url)
        })
        .expect("a client");
        let started = Instant::now();
        let answer = client.chat(&request()).await.expect("an answer");
        assert_eq!(answer.content, "Hi.");
        assert_eq!(stub.received().len(), 2);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn streams_deltas_and_reads_usage_from_the_last_chunk() {
        let stub = Stub::scripted(vec![Reply::stream(&["Hel", "lo, ", "world."])]).await;
        let mut deltas = Vec::new();
        let answer = client(&stub)
            .chat_stream(&request(), |delta| deltas.push(delta.to_owned()))
            .await
            .expect("an answer");
        assert_eq!(deltas, ["Hel", "lo, ", "world."]);
        assert_eq!(answer.content, "Hello, world.");
        assert_eq!(
            answer.usage,
            Usage {
                prompt_tokens: 12,
                completion_tokens: 3
            }
        );
        assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
        let received = stub.received();
        assert_eq!(received[0].body["stream"], true);
        assert_eq!(received[0].body["stream_options"], json!({"include_usage": true}));
        assert_eq!(received[0].headers["accept"], "text/event-stream");
    }

    #[tokio::test]
    async fn retries_a_stream_cut_in_the_middle() {
        let stub = Stub::scripted(vec![
            Reply::cut_stream(&["Hel", "lo, ", "world."], 3),
            Reply::stream(&["Hel", "lo, ", "world."]),
        ])
        .await;
        let deltas = Mutex::new(String::new());
        let answer = client(&stub)
            .chat_stream(&request(), |delta| deltas.lock().expect("deltas").push_str(delta))
            .await
            .expect("an answer");
        assert_eq!(answer.content, "Hello, world.");
        assert_eq!(stub.received().len(), 2);
        // The first attempt's beginning, then the whole second one.
        assert_eq!(deltas.into_inner().expect("deltas"), "Hello, Hello, world.");
    }

    #[tokio::test]
    async fn a_stream_that_ends_without_done_is_transient() {
        let stub = Stub::start(|_, _| match Reply::stream(&["Hi"]) {
            Reply::Sse { mut events, .. } => {
                events.pop();
                Reply::Sse { events, cut: false }
            }
            other => other,
        })
        .await;
        let client = OpenAiClient::new(OpenAiConfig {
            max_attempts: 2,
            ..config(&stub.base_url)
        })
        .expect("a client");
        let error = client.chat_stream(&request(), |_| {}).await.expect_err("no answer");
        assert!(
            matches!(&error, AiError::Transient(message) if message.contains("[DONE]")),
            "{error:?}"
        );
        assert_eq!(stub.received().len(), 2);
    }

    #[tokio::test]
    async fn retries_invalid_json_for_a_schema_request() {
        let stub = Stub::scripted(vec![
            Reply::answer("Sure! Here is a greeting: hi"),
            Reply::answer("```json\n{\"greeting\": \"hi\"}\n```"),
        ])
        .await;
        let request = ChatRequest {
            json_schema: Some(schema()),
            ..request()
        };
        let answer = client(&stub).chat(&request).await.expect("an answer");
        assert_eq!(answer.content, r#"{"greeting": "hi"}"#);
        let received = stub.received();
        assert_eq!(received.len(), 2);
        for request in &received {
            assert_eq!(request.body["response_format"]["type"], "json_schema");
        }
    }

    #[tokio::test]
    async fn unauthorized_is_permanent_without_retry_and_without_the_key() {
        let stub = Stub::scripted(vec![Reply::error(401, &format!("Incorrect API key provided: {KEY}."))]).await;
        let error = client(&stub).chat(&request()).await.expect_err("no answer");
        let AiError::Permanent(message) = &error else {
            panic!("not permanent: {error:?}")
        };
        assert!(
            message.contains("401") && message.contains("Incorrect API key provided"),
            "{message}"
        );
        assert!(!message.contains(KEY), "{message}");
        assert_eq!(stub.received().len(), 1);
    }

    #[tokio::test]
    async fn client_errors_are_permanent() {
        for status in [400, 403, 404, 422] {
            let stub = Stub::scripted(vec![Reply::error(status, "The model `x` does not exist")]).await;
            let error = client(&stub).chat(&request()).await.expect_err("no answer");
            assert!(
                matches!(&error, AiError::Permanent(message) if message.contains("does not exist")),
                "{status}: {error:?}"
            );
            assert_eq!(stub.received().len(), 1, "{status}");
        }
    }

    #[tokio::test]
    async fn all_attempts_failing_is_transient_with_the_last_reason() {
        let stub = Stub::start(|_, index| Reply::error(503, &format!("busy {}", index + 1))).await;
        let error = client(&stub).chat(&request()).await.expect_err("no answer");
        let AiError::Transient(message) = &error else {
            panic!("not transient: {error:?}")
        };
        assert!(
            message.contains("busy 3") && message.contains("3 attempts"),
            "{message}"
        );
        assert_eq!(stub.received().len(), 3);
    }

    #[tokio::test]
    async fn an_unreachable_server_is_transient() {
        // A port nothing listens on: bind one, then let it go.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        drop(listener);
        let client = OpenAiClient::new(OpenAiConfig {
            max_attempts: 2,
            ..config(&format!("http://{address}/v1"))
        })
        .expect("a client");
        let error = client.chat(&request()).await.expect_err("no answer");
        assert!(
            matches!(&error, AiError::Transient(message) if message.contains("Could not reach")),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn adapts_to_parameters_the_server_refuses() {
        let stub = Stub::start(|request, _| {
            let body = &request.body;
            if body.get("reasoning_effort").is_some() {
                Reply::error(400, "Unrecognized request argument supplied: reasoning_effort")
            } else if body.get("max_tokens").is_some() {
                Reply::error(
                    400,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                )
            } else {
                Reply::answer("Hi.")
            }
        })
        .await;
        let client = client(&stub);
        let request = ChatRequest {
            reasoning_effort: Some("low".into()),
            ..request()
        };
        assert_eq!(client.chat(&request).await.expect("an answer").content, "Hi.");
        assert_eq!(client.chat(&request).await.expect("an answer").content, "Hi.");
        let received = stub.received();
        // Refused twice, then answered; the next call is sent as the server takes it.
        assert_eq!(received.len(), 4);
        let last = &received[3].body;
        assert!(
            last.get("reasoning_effort").is_none() && last.get("max_tokens").is_none(),
            "{last}"
        );
        assert_eq!(last["max_completion_tokens"], 100);
    }

    #[tokio::test]
    async fn limits_the_calls_in_flight() {
        let stub = Stub::start(|_, _| Reply::answer("Hi.").delayed(Duration::from_millis(100))).await;
        let client = OpenAiClient::new(OpenAiConfig {
            concurrency: 2,
            ..config(&stub.base_url)
        })
        .expect("a client");
        let request = request();
        let calls = (0..6).map(|_| client.chat(&request));
        for answer in futures_util::future::join_all(calls).await {
            assert_eq!(answer.expect("an answer").content, "Hi.");
        }
        assert_eq!(stub.most_in_flight(), 2);
    }

    #[tokio::test]
    async fn estimates_usage_when_the_server_does_not_count() {
        let stub = Stub::scripted(vec![Reply::Json {
            status: 200,
            body: json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "<think>Hm.</think>Hello there."}, "finish_reason": "stop"}]}),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }])
        .await;
        let answer = client(&stub).chat(&request()).await.expect("an answer");
        assert_eq!(answer.content, "Hello there.");
        assert!(
            answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0,
            "{:?}",
            answer.usage
        );
    }

    #[tokio::test]
    async fn a_refusal_is_permanent() {
        let stub = Stub::scripted(vec![Reply::Json {
            status: 200,
            body: json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]}),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }])
        .await;
        let error = client(&stub).chat(&request()).await.expect_err("no answer");
        assert_eq!(
            error,
            AiError::Permanent("The model refused: I can't help with that.".into())
        );
    }

    #[test]
    fn builds_the_endpoint_and_keeps_a_query() {
        let endpoint = |base: &str| OpenAiClient::new(config(base)).expect("a client").endpoint().to_owned();
        assert_eq!(
            endpoint("http://127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            endpoint("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            endpoint("https://x.openai.azure.com/openai/v1?api-version=preview"),
            "https://x.openai.azure.com/openai/v1/chat/completions?api-version=preview"
        );
        assert!(OpenAiClient::new(config("ftp://example.com")).is_err());
        assert!(OpenAiClient::new(config("not a url")).is_err());
        assert!(
            OpenAiClient::new(OpenAiConfig {
                model: " ".into(),
                ..config("http://127.0.0.1/v1")
            })
            .is_err()
        );
        let debug = format!("{:?}", config("http://127.0.0.1/v1"));
        assert!(!debug.contains(KEY), "{debug}");
    }

    #[test]
    fn reads_retry_after() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, value.parse().expect("a header value"));
            }
            map
        };
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "3600")])), Some(MAX_WAIT));
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250")])),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[])), None);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::TimeDelta::seconds(30))
            .to_rfc2822()
            .replace("+0000", "GMT");
        let wait = retry_after(&headers(&[("retry-after", &later)])).expect("a wait");
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
    }

    #[test]
    fn backoff_grows_with_full_jitter_and_is_capped() {
        let base = Duration::from_millis(100);
        for attempt in 1..=5 {
            let ceiling = base * (1 << (attempt - 1));
            for _ in 0..50 {
                assert!(backoff(base, attempt) <= ceiling);
            }
        }
        assert!(backoff(Duration::from_secs(10), 30) <= MAX_WAIT);
        assert_eq!(backoff(Duration::ZERO, 3), Duration::ZERO);
    }

    #[test]
    fn parses_sse_across_chunks() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: {\"a\"").is_empty());
        assert_eq!(
            parser.push(b":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DO"),
            ["{\"a\":1}", "one\ntwo"]
        );
        assert_eq!(parser.push("NE]\n\ndata: é".as_bytes()), ["[DONE]"]);
        assert_eq!(parser.finish(), ["é"]);
    }

    #[test]
    fn reads_error_messages() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad","param":"temperature"}}"#),
            ("bad".into(), Some("temperature".into()))
        );
        assert_eq!(server_message(r#"{"error":"model not found"}"#).0, "model not found");
        assert_eq!(server_message("<html>Bad Gateway</html>").0, "<html>Bad Gateway</html>");
        assert_eq!(server_message("").0, "(no message)");
        assert!(server_message(&"x".repeat(2_000)).0.chars().count() <= MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn counts_tokens() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        let long = "word ".repeat(5_000);
        let count = count_tokens(&long);
        assert!((4_900..=5_100).contains(&count), "{count}");
        // A long run of one character does not panic.
        assert!(count_tokens(&"^".repeat(200_000)) > 0);
    }

    #[test]
    fn a_kept_count_is_the_count() {
        let texts = [
            "The invoices arrive late and I have to chase finance every month. ".repeat(8),
            "Les factures arrivent en retard et je dois relancer la comptabilité. ".repeat(8),
            // The first's opening, other words.
            "The invoices arrive soon and I need not chase finance any month now. ".repeat(8),
        ];
        for text in &texts {
            assert!(text.len() >= KEPT_COUNT_MIN_BYTES);
            let first = count_tokens(text);
            assert_eq!(first, count_tokens_now(text));
            assert_eq!(count_tokens(text), first, "asked again");
        }
        // Texts of one length are told apart.
        let (spaced, packed) = ("a ".repeat(200), "ab".repeat(200));
        assert_eq!(count_tokens(&spaced), count_tokens_now(&spaced));
        assert_eq!(count_tokens(&packed), count_tokens_now(&packed));
        assert_ne!(count_tokens(&spaced), count_tokens(&packed));
    }
}
