//! Report generation: the offline engine end to end, regenerate and cancel, the
//! generation state, and the OpenAI-compatible engine against a local stub of the Chat
//! Completions API (quotes checked against the transcripts, usage counted, failures).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::models::chat_stub;
use crate::support::openai_stub::Reply;
use crate::support::records::{ANNA, BEN};
use crate::support::reports::{preset_id, study, wait_generation};
use crate::support::{TestApp, eventually};

/// Every `"..."` quote of at least four words in `content` occurs in one of the transcripts.
fn assert_quotes_are_real(content: &str) {
    let transcripts = format!("{ANNA}\n{BEN}");
    let mut quotes = 0;
    for piece in content.split('"').skip(1).step_by(2) {
        if piece.split_whitespace().count() >= 4 {
            quotes += 1;
            assert!(transcripts.contains(piece), "invented quote {piece:?} in\n{content}");
        }
    }
    assert!(quotes > 0, "no quotes in\n{content}");
}

#[tokio::test]
async fn the_offline_engine_writes_a_cited_extractive_report() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = study(&app, &user).await;
    let preset = preset_id(&app, &user, "Pain points").await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Billing pains", "preset_id": preset }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    assert_eq!(report["status"], "queued");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));

    let generation = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    assert_eq!(generation["progress"], 1.0);
    assert_eq!(generation["attempts"], 1);
    assert_eq!(generation["error"], Value::Null);
    assert!(generation["started_at"].is_string() && generation["finished_at"].is_string());
    assert_eq!(
        generation["usage"],
        json!({ "prompt_tokens": 0, "completion_tokens": 0 })
    );

    let (_, report) = app.get(&path, &user).await;
    assert_eq!(report["status"], "completed");
    let content = report["content"].as_str().expect("content");
    assert!(content.starts_with("# Billing pains\n"), "{content}");
    let (_, prompts) = app.get("/prompts/", &user).await;
    let prompts_ids = report["prompts_ids"].as_array().expect("prompts");
    assert!(prompts_ids.len() > 1, "the preset has several prompts");
    let mut sections = Vec::new();
    for prompt_id in prompts_ids {
        let title = prompts
            .as_array()
            .expect("prompts")
            .iter()
            .find(|p| &p["id"] == prompt_id)
            .and_then(|p| p["title"].as_str())
            .expect("prompt title");
        let section = content.find(&format!("## {title}"));
        assert!(section.is_some(), "no section for {title}:\n{content}");
        sections.push(section);
    }
    // One section per prompt, in the preset's order.
    assert!(sections.windows(2).all(|pair| pair[0] < pair[1]), "{content}");
    assert!(content.contains("[Anna, #") || content.contains("[Ben, #"), "{content}");
    assert_quotes_are_real(content);
    app.stop().await;
}

#[tokio::test]
async fn regenerate_and_cancel_follow_the_status_rules() {
    // No report workers: reports stay queued until the test says otherwise.
    let app = TestApp::start_with(|settings| settings.jobs.report_workers = Some(0)).await;
    let user = app.user().await;
    let stranger = app.user().await;
    let project = study(&app, &user).await;
    let preset = preset_id(&app, &user, "Themes").await;
    let (_, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Themes", "preset_id": preset }),
        )
        .await;
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));

    let (status, body) = app
        .call(Method::POST, &format!("{path}/regenerate"), Some(&user.token), None)
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "a queued report is not queued twice: {body}"
    );
    for (method, suffix) in [
        (Method::POST, "/regenerate"),
        (Method::POST, "/cancel"),
        (Method::GET, "/generation"),
    ] {
        let (status, _) = app
            .call(method.clone(), &format!("{path}{suffix}"), Some(&stranger.token), None)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {suffix} by a stranger");
    }

    let (status, cancelled) = app
        .call(Method::POST, &format!("{path}/cancel/"), Some(&user.token), None)
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let (_, generation) = app.get(&format!("{path}/generation"), &user).await;
    assert_eq!(generation["status"], "cancelled");
    assert!(generation["finished_at"].is_string());
    let (status, _) = app
        .call(Method::POST, &format!("{path}/cancel"), Some(&user.token), None)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "nothing left to cancel");

    let (status, queued) = app
        .call(Method::POST, &format!("{path}/regenerate"), Some(&user.token), None)
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert_eq!(queued["status"], "queued");
    let (_, generation) = app.get(&format!("{path}/generation"), &user).await;
    assert_eq!(
        (
            generation["status"].clone(),
            generation["attempts"].clone(),
            generation["progress"].clone()
        ),
        (json!("queued"), json!(0), json!(0.0))
    );
    let (status, body) = app.get("/projects/not-a-uuid/reports/x/generation", &user).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    app.stop().await;
}

/// A worker that claims the job of a report cancelled or deleted while it was queued
/// leaves the report as it is; the next report is generated as usual.
#[tokio::test]
async fn a_report_cancelled_or_deleted_while_queued_is_left_alone_by_the_worker() {
    let mut app = TestApp::start_with(|settings| settings.jobs.report_workers = Some(0)).await;
    let user = app.user().await;
    let project = study(&app, &user).await;
    let preset = preset_id(&app, &user, "Themes").await;
    let mut paths = Vec::new();
    for title in ["Cancelled", "Deleted", "Wanted"] {
        let (status, report) = app
            .post(
                &format!("/projects/{project}/reports"),
                &user,
                json!({ "title": title, "preset_id": preset }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        paths.push(format!(
            "/projects/{project}/reports/{}",
            report["id"].as_str().expect("id")
        ));
    }
    let (status, _) = app
        .call(Method::POST, &format!("{}/cancel", paths[0]), Some(&user.token), None)
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = app.delete(&paths[1], &user).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Workers now; the two older jobs are claimed first.
    app.restart(|settings| settings.jobs.report_workers = Some(2)).await;
    let wanted = wait_generation(&app, &user, &paths[2], &["completed", "failed"]).await;
    assert_eq!(wanted["status"], "completed", "{wanted}");
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        let (_, cancelled) = app.get(&format!("{}/generation", paths[0]), &user).await;
        assert_eq!(
            (cancelled["status"].clone(), cancelled["attempts"].clone()),
            (json!("cancelled"), json!(0)),
            "{cancelled}"
        );
        let (_, deleted) = app.get(&format!("{}/generation", paths[1]), &user).await;
        assert_eq!(
            (deleted["status"].clone(), deleted["attempts"].clone()),
            (json!("queued"), json!(0)),
            "{deleted}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for path in &paths[..2] {
        let (_, report) = app.get(path, &user).await;
        assert!(report["content"].as_str().is_none_or(str::is_empty), "{report}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_model_report_keeps_real_quotes_and_loses_invented_ones() {
    let (addr, stub) = chat_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_api_key = Some("sk-test-llm".into());
        settings.model.llm_model = "stub-model".into();
    })
    .await;
    let user = app.user().await;
    let project = study(&app, &user).await;
    let (_, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({ "title": "Billing", "text": "What do customers say about invoices?" }),
        )
        .await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Invoices", "prompts_ids": [prompt["id"]], "report_language": "en", "reasoning_mode": "fast" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    // The report's calls, not the personas' (written in the background too).
    let calls = stub
        .calls()
        .iter()
        .filter(|call| call.schema_name() != Some("persona"))
        .count() as i64;
    assert!(calls >= 1);
    assert_eq!(generation["usage"]["prompt_tokens"], json!(120 * calls));
    assert_eq!(generation["usage"]["completion_tokens"], json!(30 * calls));

    let (_, report) = app.get(&path, &user).await;
    let content = report["content"].as_str().expect("content");
    assert!(
        content.contains("The invoices arrive late and I have to chase finance every month."),
        "{content}"
    );
    assert!(
        !content.contains("We would pay double"),
        "an invented quote survived:\n{content}"
    );

    let mut requests = stub.requests();
    requests.retain(|r| r.pointer("/response_format/json_schema/name") != Some(&json!("persona")));
    let first = &requests[0];
    assert_eq!(first["model"], "stub-model");
    let prompt_text = first.to_string();
    assert!(
        prompt_text.contains("What do customers say about invoices?"),
        "{prompt_text}"
    );
    assert!(
        prompt_text.contains("Why do teams churn after the trial?"),
        "research goals go to the model"
    );
    assert!(
        prompt_text.contains("chase finance every month"),
        "the transcript goes to the model"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_model_that_stays_down_fails_the_report_with_its_reason() {
    let (addr, stub) = chat_stub().await;
    stub.answer(Reply::status(500));
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_max_attempts = 1;
        settings.jobs.job_max_attempts = 2;
        settings.jobs.job_retry_base_seconds = 0.05;
    })
    .await;
    let user = app.user().await;
    let project = study(&app, &user).await;
    let preset = preset_id(&app, &user, "Pain points").await;
    let (_, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Down", "preset_id": preset }),
        )
        .await;
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &user, &path, &["failed", "completed"]).await;
    assert_eq!(generation["status"], "failed", "{generation}");
    assert_eq!(generation["attempts"], 2);
    let error = generation["error"].as_str().unwrap_or_default();
    assert!(error.contains("500") || error.contains("overloaded"), "{error}");
    let (_, report) = app.get(&path, &user).await;
    assert_eq!(report["status"], "failed");
    app.stop().await;
}

/// A Zoom-style VTT of about three hours (2,800 cues, about 30,000 words).
fn three_hour_vtt() -> String {
    let words: Vec<&str> = "so we usually plan the release on friday and the spreadsheet never matches what \
                            support hears from customers about pricing onboarding exports and the mobile app"
        .split_whitespace()
        .collect();
    let mut out = String::from("WEBVTT\n\n");
    let mut seed = 7u64;
    for cue in 0..2_800u64 {
        let start = cue * 3_857;
        let stamp = |ms: u64| {
            format!(
                "{:02}:{:02}:{:02}.{:03}",
                ms / 3_600_000,
                ms / 60_000 % 60,
                ms / 1000 % 60,
                ms % 1000
            )
        };
        let speaker = if cue % 3 == 0 { "Ben Okafor" } else { "Anna Schmidt" };
        let mut text = Vec::new();
        for _ in 0..11 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push(words[(seed >> 33) as usize % words.len()]);
        }
        out.push_str(&format!(
            "{}\n{} --> {}\n{speaker}: {}.\n\n",
            cue + 1,
            stamp(start),
            stamp(start + 3_700),
            text.join(" ")
        ));
    }
    out
}

#[tokio::test]
async fn a_three_hour_transcript_is_map_reduced_in_calls_that_fit_the_context() {
    let (addr, stub) = chat_stub().await;
    let context_tokens = 8_192;
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_context_tokens = context_tokens;
    })
    .await;
    let user = app.user().await;
    let (_, project) = app.post("/projects/", &user, json!({ "name": "Long call" })).await;
    let project = project["id"].as_str().expect("id").to_owned();
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Three hours", "text": three_hour_vtt(), "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    eventually(Duration::from_secs(30), "the record never finished", async || {
        let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
        if record["status"] == "Finished" {
            Ok(())
        } else {
            Err(record)
        }
    })
    .await;
    let (_, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({ "title": "Planning", "text": "How do they plan releases?" }),
        )
        .await;
    let (_, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Planning", "prompts_ids": [prompt["id"]], "reasoning_mode": "fast" }),
        )
        .await;
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");

    let mut requests = stub.requests();
    requests.retain(|r| r.pointer("/response_format/json_schema/name") != Some(&json!("persona")));
    let words: usize = requests
        .iter()
        .map(|request| request["messages"].to_string().split_whitespace().count())
        .max()
        .unwrap_or(0);
    assert!(
        requests.len() > 2,
        "30,000 words need several map calls and a reduce: {} calls",
        requests.len()
    );
    for request in &requests {
        let prompt: String = request["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let tokens = insight::engines::ai::openai::count_tokens(&prompt);
        let answer = request["max_tokens"]
            .as_u64()
            .or(request["max_completion_tokens"].as_u64())
            .unwrap_or(0) as usize;
        assert!(
            tokens + answer <= context_tokens,
            "a call of {tokens} prompt tokens + {answer} for the answer exceeds {context_tokens}"
        );
    }
    eprintln!("3-hour transcript: {} calls, the largest {words} words", requests.len());
    app.stop().await;
}
