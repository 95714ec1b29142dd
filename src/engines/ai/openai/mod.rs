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
//! The parts: `retry.rs` (attempts and the wait between them), `call.rs` (one attempt
//! over HTTP), `compat.rs` (the request body, adapted to what the server takes),
//! `answer.rs` (reading an answer, whole or streamed), `sse.rs` (server-sent events)
//! and `tokens.rs` (token counting).

mod answer;
mod call;
mod compat;
mod ledger;
mod retry;
mod sse;
#[cfg(test)]
pub(crate) mod test_server;
mod tokens;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::Semaphore;

pub use ledger::{Entries, Ledger};
pub use tokens::{count_tokens, load_tokenizer};

use self::compat::Compat;
use super::{AiError, Usage};
use crate::engines::privacy::Cloak;

/// Where the tokens of a client's calls are charged (a workspace's usage).
pub trait Meter: Send + Sync {
    /// One call that succeeded, with what the server counted and how long it took.
    fn charge(&self, model: &str, usage: Usage, duration: Duration);
}

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

/// A message as it goes on the wire: its text sealed by the client's cloak.
#[derive(Debug, Clone, Serialize)]
pub(super) struct SealedMessage {
    role: Role,
    content: crate::engines::privacy::Cloaked,
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
    /// What every call conceals before it is sent and reveals in the answer.
    cloak: Cloak,
    /// Where every call's tokens are charged.
    meter: Option<Arc<dyn Meter>>,
    /// What this piece of work's calls sent and used.
    ledger: Ledger,
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

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("model", &self.inner.config.model)
            .finish_non_exhaustive()
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
            // Until a piece of work says what its workspace allows, conceal.
            cloak: Cloak::unknown(),
            meter: None,
            ledger: Ledger::default(),
        })
    }

    /// This client for one piece of work: concealing personal data with `cloak` in every
    /// call (the model sees placeholders, and the answers, whole or streamed, have them
    /// mapped back), and charging each call's tokens to `meter`.
    pub fn for_work(&self, cloak: Cloak, meter: Option<Arc<dyn Meter>>) -> Self {
        Self {
            inner: self.inner.clone(),
            cloak,
            meter,
            ledger: Ledger::default(),
        }
    }

    /// What conceals this piece of work's personal data (see [`OpenAiClient::for_work`]).
    pub fn cloak(&self) -> &Cloak {
        &self.cloak
    }

    /// What this piece of work's calls sent and used (see [`OpenAiClient::for_work`]).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
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

    /// The message without the API key in it.
    fn redact(&self, message: &str) -> String {
        crate::providers::client::redact(message, self.inner.config.api_key.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use serde_json::json;

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
}
