//! The OpenAI-compatible engine against a real model server: a report over a short
//! interview completes with its quotes checked, JSON-schema output parses, streaming
//! streams. They run when `INSIGHT_TEST_LLM_URL` names the server's base URL (e.g.
//! `http://127.0.0.1:PORT/v1`, as `.ci/llm-server` prints it; `INSIGHT_TEST_LLM_MODEL`
//! names the model, any name for llama.cpp's server) and are skipped otherwise. The model
//! is tiny (SmolLM2-135M in CI), so they assert the structure of what comes back, never
//! its wording.

use std::time::{Duration, Instant};

use insight::engines::ai::openai::{ChatRequest, Message, OpenAiClient, OpenAiConfig};
use insight::engines::ai::{Source, quotes};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::records::ANNA;
use crate::support::{TestApp, TestUser, eventually};

/// Longest one model call may take. An answer of the most a report section asks for here (a
/// quarter of the 4096-token window, about 900 tokens) takes 15-25 s on two free cores; the
/// margin is for a machine busy with other work (and a server whose slots are all taken).
const CALL_TIMEOUT: Duration = Duration::from_secs(240);
/// Longest a report may take: one section in one call.
const REPORT_DEADLINE: Duration = Duration::from_secs(270);

/// The server's base URL and the model name, or `None` (the test is skipped) when unset.
fn model_server() -> Option<(String, String)> {
    match std::env::var("INSIGHT_TEST_LLM_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let model = std::env::var("INSIGHT_TEST_LLM_MODEL")
                .ok()
                .filter(|model| !model.trim().is_empty())
                .unwrap_or_else(|| "smollm2-135m-instruct".to_owned());
            Some((url.trim().trim_end_matches('/').to_owned(), model))
        }
        _ => {
            eprintln!("SKIPPED: set INSIGHT_TEST_LLM_URL (see .ci/llm-server)");
            None
        }
    }
}

fn client(base_url: &str, model: &str) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig {
        base_url: base_url.to_owned(),
        api_key: None,
        model: model.to_owned(),
        context_tokens: 4096,
        // One attempt: a retry would hide what the server did (an answer that is not JSON,
        // a stream cut short) and would show the stream's beginning twice.
        max_attempts: 1,
        retry_base: Duration::from_millis(200),
        timeout: CALL_TIMEOUT,
        concurrency: 1,
    })
    .expect("a client")
}

/// A project with one finished interview; returns the project and the record ids.
async fn interview(app: &TestApp, user: &TestUser) -> (String, String) {
    let (status, project) = app
        .post(
            "/projects/",
            user,
            json!({ "name": "Billing study", "research_goals": "Why do teams churn after the trial?" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let project = project["id"].as_str().expect("project id").to_owned();
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Anna", "text": ANNA, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("record id").to_owned();
    app.wait_finished(user, &record).await;
    (project, record)
}

#[tokio::test]
async fn a_report_from_a_real_model_completes_with_checked_quotes() {
    let Some((base_url, model)) = model_server() else {
        return;
    };
    let started = Instant::now();
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(base_url.clone());
        settings.model.llm_model = model.clone();
        settings.model.llm_context_tokens = 4096;
        settings.model.llm_concurrency = 1;
        settings.model.llm_timeout_seconds = CALL_TIMEOUT.as_secs();
        // A failure shows at once, with its reason, instead of after retries.
        settings.model.llm_max_attempts = 1;
        settings.jobs.job_max_attempts = 1;
        settings.jobs.report_workers = Some(1);
    })
    .await;
    let user = app.user().await;
    let (project, _) = interview(&app, &user).await;
    let (status, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({ "title": "Billing pains", "text": "What frustrates the customer about billing? Support each point with her exact words in double quotes, each followed by its citation." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{prompt}");
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Invoices", "prompts_ids": [prompt["id"]], "report_language": "en", "reasoning_mode": "fast" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));

    let generation = eventually(REPORT_DEADLINE, "generation stuck", async || {
        let (status, generation) = app.get(&format!("{path}/generation"), &user).await;
        assert_eq!(status, StatusCode::OK, "{generation}");
        if matches!(generation["status"].as_str(), Some("completed" | "failed")) {
            Ok(generation)
        } else {
            Err(generation)
        }
    })
    .await;
    assert_eq!(generation["status"], "completed", "{generation}");
    assert_eq!(generation["error"], Value::Null, "{generation}");
    // The server's own token counts, summed over the calls.
    for key in ["prompt_tokens", "completion_tokens"] {
        assert!(
            generation["usage"][key].as_u64().unwrap_or(0) > 0,
            "no {key}: {generation}"
        );
    }

    let (_, report) = app.get(&path, &user).await;
    assert_eq!(report["status"], "completed", "{report}");
    let content = report["content"].as_str().expect("content");
    assert!(content.starts_with("# Invoices\n"), "{content}");
    let section = content
        .split("\n## ")
        .nth(1)
        .unwrap_or_else(|| panic!("no ## section:\n{content}"));
    let (heading, body) = section.split_once('\n').unwrap_or((section, ""));
    assert!(!heading.trim().is_empty(), "a section without a heading:\n{content}");
    assert!(!body.trim().is_empty(), "an empty section:\n{content}");

    // The quote checker ran on the model's text: run over the stored report again, it
    // finds nothing left to remove, so every quote in it is in the transcript. (A model this
    // small seldom quotes at all; `generation.rs` covers the removal against a stub.)
    let project_id = Uuid::parse_str(&project).expect("uuid");
    let sources: Vec<Source> = app
        .store
        .report_material(project_id, &[])
        .await
        .expect("material")
        .into_iter()
        .map(|row| Source {
            record_id: row.record_id,
            record_name: row.record_name,
            utterance_id: row.id,
            speaker: row.speaker,
            is_respondent: row.is_respondent,
            start_ms: row.start_ms,
            text: row.text,
        })
        .collect();
    assert!(!sources.is_empty(), "no material");
    let again = quotes::check_quotes(content, &sources);
    assert_eq!(
        again.removed, 0,
        "a quote not in the transcript is left in the report:\n{content}"
    );
    eprintln!(
        "model report: {} s, {} quotes verified, {} removed by the generator, usage {}\n{content}",
        started.elapsed().as_secs(),
        again.verified,
        content.matches(quotes::REMOVED).count(),
        generation["usage"],
    );
    app.stop().await;
}

#[tokio::test]
async fn json_schema_output_from_a_real_model_parses() {
    let Some((base_url, model)) = model_server() else {
        return;
    };
    let started = Instant::now();
    let schema = json!({
        "type": "object",
        "properties": {
            "sentiment": { "type": "string", "enum": ["positive", "neutral", "negative"] },
            "summary": { "type": "string", "maxLength": 160 },
            "pain_points": {
                "type": "array",
                "items": { "type": "string", "maxLength": 80 },
                "minItems": 1,
                "maxItems": 3
            }
        },
        "required": ["sentiment", "summary", "pain_points"],
        "additionalProperties": false
    });
    let request = ChatRequest {
        messages: vec![
            Message::system("You summarise customer interviews as JSON."),
            Message::user(format!(
                "Interview:\n{ANNA}\n\nGive the overall sentiment, a one-sentence summary and up to three pain points."
            )),
        ],
        max_tokens: Some(300),
        temperature: None,
        reasoning_effort: Some("low".into()),
        json_schema: Some(("interview_summary".into(), schema.clone())),
    };
    let answer = client(&base_url, &model)
        .chat(&request)
        .await
        .expect("an answer in one attempt");
    let value: Value =
        serde_json::from_str(&answer.content).unwrap_or_else(|error| panic!("not JSON ({error}): {}", answer.content));
    for key in ["sentiment", "summary", "pain_points"] {
        assert!(value.get(key).is_some(), "no {key}: {value}");
    }
    if let Err(error) = jsonschema::validate(&schema, &value) {
        panic!("the answer does not follow the schema ({error}): {value}");
    }
    assert!(
        answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0,
        "{:?}",
        answer.usage
    );
    eprintln!("model json: {} ms: {value}", started.elapsed().as_millis());
}

#[tokio::test]
async fn a_real_model_streams_its_answer() {
    let Some((base_url, model)) = model_server() else {
        return;
    };
    let started = Instant::now();
    let request = ChatRequest {
        messages: vec![
            Message::system("You are a helpful assistant."),
            Message::user("Name three things that make an invoice hard to read."),
        ],
        max_tokens: Some(48),
        temperature: None,
        reasoning_effort: Some("low".into()),
        json_schema: None,
    };
    let mut deltas: Vec<String> = Vec::new();
    let answer = client(&base_url, &model)
        .chat_stream(&request, |delta| deltas.push(delta.to_owned()))
        .await
        .expect("a streamed answer in one attempt");
    assert!(
        deltas.len() > 1,
        "the answer came in {} piece(s): {deltas:?}",
        deltas.len()
    );
    assert!(!answer.content.trim().is_empty(), "an empty answer");
    assert_eq!(deltas.concat(), answer.content);
    // `stream_options.include_usage`: the server's counts from the last chunk.
    assert!(
        answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0,
        "{:?}",
        answer.usage
    );
    assert!(answer.finish_reason.is_some(), "no finish reason");
    eprintln!(
        "model stream: {} ms, {} deltas, usage {:?}, finish {:?}",
        started.elapsed().as_millis(),
        deltas.len(),
        answer.usage,
        answer.finish_reason
    );
}

#[tokio::test]
async fn a_chat_answer_from_a_real_model_streams_and_is_stored() {
    let Some((base_url, model)) = model_server() else {
        return;
    };
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(base_url.clone());
        settings.model.llm_model = model.clone();
        settings.model.llm_context_tokens = 4096;
        settings.model.llm_concurrency = 1;
        settings.model.llm_timeout_seconds = CALL_TIMEOUT.as_secs();
        settings.model.llm_max_attempts = 1;
        // No persona in the background: the one model slot is the chat's.
        settings.jobs.report_workers = Some(0);
    })
    .await;
    let user = app.user().await;
    let (_, record) = interview(&app, &user).await;
    let response = app
        .client
        .post(app.url(&format!("/insight/{record}/chat/")))
        .bearer_auth(&user.token)
        .header("accept", "text/event-stream")
        .json(&json!({ "message": "What does Anna say about the invoices?" }))
        .timeout(CALL_TIMEOUT)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.text().await.expect("the stream");
    let events: Vec<(&str, Value)> = body
        .split("\n\n")
        .filter_map(|event| {
            let name = event.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name, serde_json::from_str(data).expect("event data is JSON")))
        })
        .collect();
    let (last, done) = events.last().expect("events");
    assert_eq!(*last, "done", "{body}");
    assert!(events.iter().filter(|(name, _)| *name == "delta").count() > 1, "{body}");
    let content = done["content"].as_str().expect("content");
    assert!(!content.trim().is_empty());
    let (_, history) = app.get(&format!("/insight/{record}/chat/"), &user).await;
    assert_eq!(history["messages"][1], *done, "the stored answer is the one streamed");
    eprintln!(
        "model chat answer ({} citations):\n{content}",
        done["citations"].as_array().map_or(0, Vec::len)
    );
    app.stop().await;
}
