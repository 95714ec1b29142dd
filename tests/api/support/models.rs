//! The model and the web search as the tests stand them in: the shared OpenAI-compatible
//! stub answering a report's calls or a chat word by word, an app that uses it, the chat
//! read as server-sent events, and a SearXNG stub.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::routing::get;
use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::openai_stub::{Call, OpenAiStub, Reply};
use super::records::REAL_QUOTE;
use super::{TestApp, TestUser};

/// The model's answer to a report's call: a section quoting one real sentence and one
/// invented one, or for a schema request, findings quoting the real one.
pub fn report_reply(call: &Call) -> Reply {
    let content = if call.is_structured() {
        json!({ "findings": [ { "finding": "Invoices are a pain.", "quotes": [
            { "text": "The invoices arrive late and I have to chase finance every month.", "citation": "[Anna, #2]" } ] } ] })
        .to_string()
    } else {
        "## Findings\n\nInvoices frustrate customers.\n\n\
         > \"The invoices arrive late and I have to chase finance every month.\" [Anna, #2]\n\n\
         > \"We would pay double if the export worked on Fridays.\" [Ben, #2]\n"
            .to_owned()
    };
    Reply::text(&content).usage(120, 30)
}

/// The shared OpenAI-compatible stub, answering with [`report_reply`].
pub async fn chat_stub() -> (SocketAddr, OpenAiStub) {
    let (addr, stub) = OpenAiStub::start().await;
    stub.respond(report_reply);
    (addr, stub)
}

/// How the model stub answers.
#[derive(Clone)]
pub enum Mode {
    /// Streams `text` word by word, `gap` apart.
    Answer { text: String, gap: Duration },
    /// Answers every call with this status.
    Fail(u16),
    /// The next chat call's stream breaks off after `keep` words; later calls stream `text`.
    CutOnce { text: String, keep: usize },
}

/// The model stub, answering as its [`Mode`] says.
#[derive(Clone)]
pub struct ModelStub {
    /// The stub itself, with the calls it took.
    pub server: OpenAiStub,
    mode: Arc<Mutex<Mode>>,
    /// How long a persona (structured output) call takes.
    pub persona_delay: Arc<Mutex<Duration>>,
}

impl ModelStub {
    pub fn set(&self, mode: Mode) {
        *self.mode.lock().expect("lock") = mode;
    }

    /// The chat calls (not the persona's structured-output calls).
    pub fn chat_requests(&self) -> Vec<Value> {
        let mut requests = self.server.requests();
        requests.retain(|r| r.get("response_format").is_none());
        requests
    }
}

/// The persona a model writes, with one real quote and one invented.
fn stub_persona() -> Value {
    json!({
        "name": "Anna", "role": "finance lead", "summary": "Anna runs billing for her team.",
        "demographics": null, "goals": ["Get invoices on time"], "pains": ["Chasing finance every month"],
        "behaviors": ["Chases finance by hand"], "motivations": ["Less busywork"],
        "quotes": [
            { "text": REAL_QUOTE, "utterance_id": 2 },
            { "text": "I would pay double for a better export tool.", "utterance_id": 4 }
        ],
        "jobs_to_be_done": ["When invoices are late, I want to see why, so I can stop chasing"],
        "ideal_solution": null
    })
}

/// The shared OpenAI-compatible stub, answering chat word by word and schema requests
/// (the persona) with [`stub_persona`], or failing as the mode says.
pub async fn model_stub(text: &str) -> (SocketAddr, ModelStub) {
    let (addr, server) = OpenAiStub::start().await;
    let stub = ModelStub {
        server: server.clone(),
        mode: Arc::new(Mutex::new(Mode::Answer {
            text: text.to_owned(),
            gap: Duration::ZERO,
        })),
        persona_delay: Arc::default(),
    };
    let (mode, persona_delay) = (stub.mode.clone(), stub.persona_delay.clone());
    server.respond(move |call| {
        let current = mode.lock().expect("lock").clone();
        let reply = match current {
            Mode::Fail(status) => return Reply::status(status),
            // A persona's structured call may come at any moment (its worker wakes when the
            // record is ready), so the one cut stream is kept for the chat calls.
            _ if call.is_structured() => {
                Reply::text(&stub_persona().to_string()).delay(*persona_delay.lock().expect("lock"))
            }
            Mode::Answer { text, gap } => Reply::text(&text).gap(gap),
            Mode::CutOnce { text, keep } => {
                *mode.lock().expect("lock") = Mode::Answer {
                    text: text.clone(),
                    gap: Duration::ZERO,
                };
                Reply::text(&text).cut_after(keep)
            }
        };
        reply.usage(50, 20)
    });
    (addr, stub)
}

/// An app whose model is the stub at `addr` (one attempt a call, quick retries of jobs).
pub async fn model_app(addr: SocketAddr) -> TestApp {
    model_app_with(addr, 1).await
}

/// An app whose model is the stub at `addr`, trying each model call `attempts` times.
pub async fn model_app_with(addr: SocketAddr, attempts: u32) -> TestApp {
    TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
        settings.model.llm_max_attempts = attempts;
        settings.jobs.job_retry_base_seconds = 0.05;
    })
    .await
}

/// Sends a chat question asking for SSE; returns the events as (name, data, when).
pub async fn stream_events(app: &TestApp, user: &TestUser, record: &str, body: Value) -> Vec<(String, Value, Instant)> {
    let response = app
        .client
        .post(app.url(&format!("/insight/{record}/chat/")))
        .bearer_auth(&user.token)
        .header("accept", "text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/event-stream")
    );
    let mut events = Vec::new();
    let mut buffer = String::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.expect("chunk")));
        while let Some(end) = buffer.find("\n\n") {
            let raw: String = buffer.drain(..end + 2).collect();
            let mut name = String::new();
            let mut data = String::new();
            for line in raw.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_owned();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            if !name.is_empty() {
                events.push((
                    name,
                    serde_json::from_str(&data).expect("event data is JSON"),
                    Instant::now(),
                ));
            }
        }
    }
    events
}

/// The `(q, format)` of each search the stub took.
pub type Searches = Arc<Mutex<Vec<(String, String)>>>;

/// A SearXNG stub: `GET /search?q=...&format=json`.
async fn searxng_stub() -> (SocketAddr, Searches) {
    let seen: Searches = Arc::default();
    async fn search(
        State(seen): State<Searches>,
        Query(query): Query<std::collections::HashMap<String, String>>,
    ) -> axum::Json<Value> {
        seen.lock().expect("lock").push((
            query.get("q").cloned().unwrap_or_default(),
            query.get("format").cloned().unwrap_or_default(),
        ));
        axum::Json(json!({ "query": query.get("q"), "number_of_results": 2, "results": [
            { "url": "https://example.org/billing-guide", "title": "A guide to &amp; billing", "content": "How teams pay <b>invoices</b>.", "engine": "stub" },
            { "url": "https://example.org/pricing", "title": "Pricing pages", "content": "What makes pricing clear.", "engine": "stub" }
        ], "answers": [], "suggestions": [], "unresponsive_engines": [] }))
    }
    let router = axum::Router::new()
        .route("/search", get(search))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    (addr, seen)
}

/// An app that searches the web through the SearXNG stub, and what the stub was asked.
pub async fn searxng_app() -> (TestApp, Searches) {
    let (addr, seen) = searxng_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.search.search_provider = Some(insight::config::SearchProvider::Searxng);
        settings.search.search_base_url = Some(format!("http://{addr}"));
    })
    .await;
    (app, seen)
}
