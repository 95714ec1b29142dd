//! Asynchronous speech-to-text against local servers speaking the providers' wire
//! protocols: AssemblyAI (`/v2/upload`, `/v2/transcript`), finished when it calls back
//! (`POST /api/webhooks/assemblyai`, verified by the secret header Insight gave it) or,
//! when no callback can come, by the job's periodic checks; Deepgram (`/v1/listen`),
//! whose callback carries the transcript (`POST /api/webhooks/deepgram`, verified by the
//! Basic credentials in the callback URL), or which answers at once without one.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use insight::config::SttProvider;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::records::{lines, upload, wait_for, wav};
use crate::support::{TestApp, eventually};

#[derive(Clone, Default)]
struct Stub {
    /// `authorization` headers of every request.
    keys: Arc<Mutex<Vec<Option<String>>>>,
    uploads: Arc<Mutex<Vec<Vec<u8>>>>,
    /// Bodies of `POST /v2/transcript`.
    requests: Arc<Mutex<Vec<Value>>>,
    checks: Arc<AtomicUsize>,
    /// Transcripts deleted with `DELETE /v2/transcript/{id}`.
    deleted: Arc<Mutex<Vec<String>>>,
    /// Finished once this many checks have been answered "processing" (0: never by itself).
    ready_after: Arc<AtomicUsize>,
    /// The first this many checks are answered 503 (AssemblyAI briefly down).
    unavailable: Arc<AtomicUsize>,
    ready: Arc<AtomicBool>,
    failed: Arc<AtomicBool>,
}

impl Stub {
    fn key(&self, headers: &HeaderMap) {
        let key = headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        self.keys.lock().expect("lock").push(key);
    }

    fn request(&self) -> Value {
        self.requests
            .lock()
            .expect("lock")
            .last()
            .cloned()
            .expect("a transcription request")
    }
}

/// A local server speaking AssemblyAI's pre-recorded transcription API.
async fn assemblyai_stub() -> (SocketAddr, Stub) {
    async fn upload(State(stub): State<Stub>, headers: HeaderMap, body: Bytes) -> axum::Json<Value> {
        stub.key(&headers);
        stub.uploads.lock().expect("lock").push(body.to_vec());
        axum::Json(json!({ "upload_url": "https://cdn.assemblyai.test/upload/7c1f" }))
    }
    async fn submit(
        State(stub): State<Stub>,
        headers: HeaderMap,
        axum::Json(body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        stub.key(&headers);
        let mut requests = stub.requests.lock().expect("lock");
        requests.push(body.clone());
        let id = format!("tr-{}", requests.len());
        axum::Json(json!({ "id": id, "status": "queued", "audio_url": body["audio_url"], "text": null }))
    }
    async fn check(
        State(stub): State<Stub>,
        headers: HeaderMap,
        Path(id): Path<String>,
    ) -> (StatusCode, axum::Json<Value>) {
        stub.key(&headers);
        let checks = stub.checks.fetch_add(1, Ordering::SeqCst) + 1;
        if checks <= stub.unavailable.load(Ordering::SeqCst) {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({ "error": "Service temporarily unavailable" })),
            );
        }
        let after = stub.ready_after.load(Ordering::SeqCst);
        if after > 0 && checks > after {
            stub.ready.store(true, Ordering::SeqCst);
        }
        if stub.failed.load(Ordering::SeqCst) {
            return (
                StatusCode::OK,
                axum::Json(json!({
                    "id": id, "status": "error", "text": null, "utterances": null,
                    "error": "File does not appear to contain audio. File type is application/octet-stream (data)."
                })),
            );
        }
        if !stub.ready.load(Ordering::SeqCst) {
            return (
                StatusCode::OK,
                axum::Json(json!({ "id": id, "status": "processing", "text": null, "utterances": null })),
            );
        }
        (
            StatusCode::OK,
            axum::Json(json!({
                "id": id,
                "status": "completed",
                "language_code": "en_us",
                "audio_duration": 12,
                "text": "How did onboarding go? Honestly it was confusing at first.",
                "words": [],
                "utterances": [
                    { "speaker": "A", "start": 250, "end": 2400, "confidence": 0.97, "text": "How did onboarding go?", "words": [] },
                    { "speaker": "B", "start": 2900, "end": 11800, "confidence": 0.95, "text": "Honestly it was confusing at first.", "words": [] }
                ]
            })),
        )
    }
    async fn delete(State(stub): State<Stub>, headers: HeaderMap, Path(id): Path<String>) -> axum::Json<Value> {
        stub.key(&headers);
        stub.deleted.lock().expect("lock").push(id.clone());
        axum::Json(json!({ "id": id, "status": "completed", "text": "Deleted by user." }))
    }
    let stub = Stub::default();
    let router = axum::Router::new()
        .route("/v2/upload", post(upload))
        .route("/v2/transcript", post(submit))
        .route("/v2/transcript/{id}", get(check).delete(delete))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind stub");
    let addr = listener.local_addr().expect("stub addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    (addr, stub)
}

/// Waits until the record's recording was sent to the provider and its job sleeps
/// (both written in one transaction).
async fn until_sent(app: &TestApp, record_id: &str) {
    let record_id: uuid::Uuid = record_id.parse().expect("uuid");
    eventually(Duration::from_secs(20), "the recording was never sent", async || {
        let work = app.store.record_work(record_id).await.expect("read");
        if work.and_then(|work| work.stt_job).is_some() {
            Ok(())
        } else {
            Err("")
        }
    })
    .await;
}

/// Posts AssemblyAI's callback for `transcript_id` with `token` in the secret header.
async fn call_back(app: &TestApp, transcript_id: &str, token: Option<&str>) -> (StatusCode, Value) {
    let mut request = app
        .client
        .post(app.url("/api/webhooks/assemblyai"))
        .json(&json!({ "transcript_id": transcript_id, "status": "completed" }));
    if let Some(token) = token {
        request = request.header("X-Insight-Callback-Token", token);
    }
    let response = request.send().await.expect("callback sent");
    let status = response.status();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn assemblyai_calls_back_and_the_record_is_finished_even_across_a_restart() {
    let (addr, stub) = assemblyai_stub().await;
    let configure = move |settings: &mut insight::config::Settings| {
        settings.speech.stt_provider = SttProvider::AssemblyAi;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
        settings.speech.stt_api_key = Some("aai-test-key".into());
        // Behind a reverse proxy under this name; no check comes due during the test.
        settings.server.public_url = "https://insight.example.org".into();
        settings.speech.stt_poll_seconds = 3_600;
    };
    let mut app = TestApp::start_with(configure).await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let audio = wav();
    let (status, record) = upload(&app, &user, &project, "call-07.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(&app, &user, &id, &["InProgress"]).await;
    // Sent, noted, and the job asleep (one transaction): a restart now loses nothing.
    until_sent(&app, &id).await;

    // The recording went up byte for byte, with the key as AssemblyAI takes it.
    assert_eq!(stub.uploads.lock().expect("lock").as_slice(), [audio]);
    let request = stub.request();
    assert_eq!(request["audio_url"], "https://cdn.assemblyai.test/upload/7c1f");
    assert_eq!(request["speaker_labels"], true);
    assert_eq!(request["language_detection"], true, "no language given: {request}");
    assert_eq!(
        request["webhook_url"],
        "https://insight.example.org/api/webhooks/assemblyai"
    );
    assert_eq!(request["webhook_auth_header_name"], "X-Insight-Callback-Token");
    let token = request["webhook_auth_header_value"]
        .as_str()
        .expect("a secret for the callback")
        .to_owned();
    assert!(token.len() >= 32, "{token}");
    assert!(
        request.get("speech_models").is_none(),
        "the provider's default model: {request}"
    );
    assert!(
        stub.keys
            .lock()
            .expect("lock")
            .iter()
            .all(|key| key.as_deref() == Some("aai-test-key")),
        "every call carries the key itself, not a bearer token"
    );
    assert!(record["error"].is_null(), "{record}");

    // The wait survives a restart: it is the job's row, not this process.
    app.restart(configure).await;

    // Callbacks that are not AssemblyAI's for this recording change nothing.
    let other_token = "A".repeat(token.len());
    for (transcript, secret) in [
        ("tr-1", None),
        ("tr-1", Some(other_token.as_str())),
        ("tr-2", Some(token.as_str())),
        ("", Some(token.as_str())),
        ("tr-\u{0}1", Some(token.as_str())),
        (&"x".repeat(5_000), Some(token.as_str())),
    ] {
        let (status, body) = call_back(&app, transcript, secret).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{transcript} {secret:?}: {body}");
        assert!(
            body["detail"].as_str().is_some_and(|d| d.contains("AssemblyAI")),
            "{body}"
        );
    }
    let response = app
        .client
        .post(app.url("/api/webhooks/assemblyai"))
        .header("X-Insight-Callback-Token", &token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stub.checks.load(Ordering::SeqCst), 0, "nothing was fetched");
    let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(record["status"], "InProgress", "{record}");

    // AssemblyAI finishes and calls back: the transcript is fetched and becomes the record.
    stub.ready.store(true, Ordering::SeqCst);
    let (status, body) = call_back(&app, "tr-1", Some(&token)).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Finished", "{record}");
    assert_eq!(
        lines(&record),
        [
            (
                "Speaker A".to_owned(),
                json!(250),
                json!(2_400),
                "How did onboarding go?".to_owned()
            ),
            (
                "Speaker B".to_owned(),
                json!(2_900),
                json!(11_800),
                "Honestly it was confusing at first.".to_owned()
            ),
        ]
    );
    assert_eq!(record["language"], "en-US", "AssemblyAI's en_us as a BCP 47 tag");
    assert_eq!(stub.checks.load(Ordering::SeqCst), 1, "one fetch, made by the callback");
    eventually(
        Duration::from_secs(10),
        "AssemblyAI's copy was never deleted",
        async || {
            if stub.deleted.lock().expect("lock").is_empty() {
                Err("")
            } else {
                Ok(())
            }
        },
    )
    .await;
    assert_eq!(
        stub.deleted.lock().expect("lock").as_slice(),
        ["tr-1"],
        "once Insight holds the transcript, AssemblyAI's copy goes"
    );

    // A replayed callback is answered and changes nothing.
    let (status, _) = call_back(&app, "tr-1", Some(&token)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stub.checks.load(Ordering::SeqCst), 1);
    assert_eq!(stub.requests.lock().expect("lock").len(), 1, "sent once");
    let (_, again) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(again["utterances"], record["utterances"]);
    app.stop().await;
}

#[tokio::test]
async fn without_an_address_assemblyai_can_reach_the_job_checks_until_done() {
    let (addr, stub) = assemblyai_stub().await;
    // AssemblyAI is down for two checks, at work for one, done at the fourth.
    stub.unavailable.store(2, Ordering::SeqCst);
    stub.ready_after.store(3, Ordering::SeqCst);
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::AssemblyAi;
        settings.speech.stt_base_url = Some(format!("http://{addr}/v2"));
        settings.speech.stt_model = Some("universal-3-pro, universal-2".into());
        settings.speech.stt_poll_seconds = 1;
        settings.jobs.job_max_attempts = 1;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let id = upload_recording(&app, &user, &project, Some("de-DE")).await;
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Finished", "{record}");
    assert_eq!(lines(&record).len(), 2);
    let request = stub.request();
    assert!(
        request.get("webhook_url").is_none(),
        "the default public URL is loopback, which AssemblyAI cannot reach: {request}"
    );
    assert_eq!(request["speech_models"], json!(["universal-3-pro", "universal-2"]));
    assert_eq!(request["language_code"], "de", "{request}");
    assert!(request.get("language_detection").is_none(), "{request}");
    // Neither waiting nor a check AssemblyAI did not answer used an attempt: four checks
    // with one attempt allowed.
    assert_eq!(stub.checks.load(Ordering::SeqCst), 4);
    app.stop().await;
}

#[tokio::test]
async fn a_recording_assemblyai_cannot_transcribe_is_an_error_with_its_reason() {
    let (addr, stub) = assemblyai_stub().await;
    stub.failed.store(true, Ordering::SeqCst);
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::AssemblyAi;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
        settings.speech.stt_poll_seconds = 1;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let (status, record) = upload(&app, &user, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Error", "{record}");
    let reason = record["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("AssemblyAI") && reason.contains("does not appear to contain audio"),
        "{reason}"
    );
    app.stop().await;
}

#[tokio::test]
async fn callbacks_are_refused_when_their_provider_is_not_the_one_set_up() {
    let app = TestApp::start().await;
    let (status, body) = call_back(&app, "tr-1", Some("anything")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("INSIGHT_STT_PROVIDER")),
        "{body}"
    );
    let callback = format!(
        "https://insight:x@h/api/webhooks/deepgram?record_id={}",
        uuid::Uuid::new_v4()
    );
    let status = deepgram_calls_back(&app, &callback, Some("x"), &deepgram_result("dg-1")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// The query pairs and the `authorization` header of one `POST /v1/listen`.
type Listen = (Vec<(String, String)>, Option<String>);

/// What the Deepgram stub saw.
#[derive(Clone, Default)]
struct DeepgramStub {
    requests: Arc<Mutex<Vec<Listen>>>,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl DeepgramStub {
    fn param(&self, index: usize, name: &str) -> Option<String> {
        let requests = self.requests.lock().expect("lock");
        requests[index]
            .0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    fn count(&self) -> usize {
        self.requests.lock().expect("lock").len()
    }
}

/// Deepgram's result for the test recording, as `/v1/listen` answers it and as its
/// callback posts it.
fn deepgram_result(request_id: &str) -> Value {
    json!({
        "metadata": { "request_id": request_id, "created": "2026-11-22T04:00:00.000Z", "duration": 12.0, "channels": 1 },
        "results": {
            "channels": [{ "alternatives": [{ "transcript": "How did onboarding go? Honestly it was confusing at first.", "confidence": 0.97, "words": [] }], "detected_language": "en" }],
            "utterances": [
                { "start": 0.25, "end": 2.4, "confidence": 0.97, "channel": 0, "transcript": "How did onboarding go?", "words": [], "speaker": 0, "id": "u-1" },
                { "start": 2.9, "end": 11.8, "confidence": 0.95, "channel": 0, "transcript": "Honestly it was confusing at first.", "words": [], "speaker": 1, "id": "u-2" }
            ]
        }
    })
}

/// A local server speaking Deepgram's `POST /v1/listen`: with `callback` it answers the
/// request id (the test plays Deepgram's callback), without it the result.
async fn deepgram_stub() -> (SocketAddr, DeepgramStub) {
    async fn listen(
        State(stub): State<DeepgramStub>,
        axum::extract::RawQuery(query): axum::extract::RawQuery,
        headers: HeaderMap,
        body: Bytes,
    ) -> axum::Json<Value> {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect();
        let callback = pairs.iter().any(|(n, _)| n == "callback");
        let key = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        stub.bodies.lock().expect("lock").push(body.to_vec());
        let mut requests = stub.requests.lock().expect("lock");
        requests.push((pairs, key));
        let id = format!("dg-{}", requests.len());
        if callback {
            axum::Json(json!({ "request_id": id }))
        } else {
            axum::Json(deepgram_result(&id))
        }
    }
    let stub = DeepgramStub::default();
    let router = axum::Router::new()
        .route("/v1/listen", post(listen))
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind stub");
    let addr = listener.local_addr().expect("stub addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    (addr, stub)
}

/// Plays Deepgram calling `callback` (the URL Insight gave it) back on the app: Basic
/// credentials from the URL's user info, the path and query as they are.
async fn deepgram_calls_back(app: &TestApp, callback: &str, password: Option<&str>, body: &Value) -> StatusCode {
    let url = url::Url::parse(callback).expect("callback URL");
    // A reverse proxy serves the service under the public URL's path: it strips that prefix.
    let path = url.path();
    let path = &path[path.find("/api/webhooks/").expect("a webhook path")..];
    let target = format!("{path}?{}", url.query().unwrap_or_default());
    let mut request = app.client.post(app.url(&target)).json(body);
    if let Some(password) = password {
        request = request.basic_auth(url.username(), Some(password));
    }
    request.send().await.expect("callback sent").status()
}

/// Uploads the test recording (with `language` when given); the record's id.
async fn upload_recording(
    app: &TestApp,
    user: &crate::support::TestUser,
    project: &str,
    language: Option<&str>,
) -> String {
    let mut form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(wav())
            .file_name("call.wav")
            .mime_str("audio/wav")
            .expect("mime"),
    );
    if let Some(language) = language {
        form = form.text("language", language.to_owned());
    }
    let response = app
        .client
        .post(app.url(&format!("/projects/{project}/records")))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("upload sent");
    assert_eq!(response.status(), StatusCode::CREATED);
    let record: Value = response.json().await.expect("record");
    record["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn deepgram_posts_the_transcript_to_a_callback_verified_by_its_basic_credentials() {
    let (addr, stub) = deepgram_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::Deepgram;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
        settings.speech.stt_api_key = Some("dg-test-key".into());
        settings.server.public_url = "https://research.example.org/insight".into();
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let id = upload_recording(&app, &user, &project, None).await;
    until_sent(&app, &id).await;
    assert_eq!(
        stub.bodies.lock().expect("lock").as_slice(),
        [wav()],
        "the recording, byte for byte"
    );
    assert_eq!(
        stub.requests.lock().expect("lock")[0].1.as_deref(),
        Some("Token dg-test-key")
    );
    for (name, value) in [
        ("model", "nova-3"),
        ("diarize", "true"),
        ("utterances", "true"),
        ("smart_format", "true"),
        ("detect_language", "true"),
    ] {
        assert_eq!(stub.param(0, name).as_deref(), Some(value), "{name}");
    }
    let callback = stub.param(0, "callback").expect("a callback URL");
    let url = url::Url::parse(&callback).expect("callback URL");
    assert_eq!(url.host_str(), Some("research.example.org"));
    assert_eq!(url.path(), "/insight/api/webhooks/deepgram");
    assert_eq!(url.query(), Some(format!("record_id={id}").as_str()));
    assert_eq!(url.username(), "insight");
    let secret = url.password().expect("a secret in the URL").to_owned();
    assert!(secret.len() >= 32, "{secret}");
    let result = deepgram_result("dg-1");

    // Not Deepgram with this record's credentials: refused, nothing changes.
    let wrong = "B".repeat(secret.len());
    let other_record = callback.replace(&id, &uuid::Uuid::new_v4().to_string());
    for (target, password) in [
        (callback.as_str(), None),
        (callback.as_str(), Some(wrong.as_str())),
        (other_record.as_str(), Some(secret.as_str())),
    ] {
        let status = deepgram_calls_back(&app, target, password, &result).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{target} {password:?}");
    }
    let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(record["status"], "InProgress", "{record}");
    assert_eq!(record["utterances"], json!([]));

    // Deepgram's callback: its body is the transcript.
    let status = deepgram_calls_back(&app, &callback, Some(&secret), &result).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(
        record["status"], "Finished",
        "finished by the callback itself: {record}"
    );
    assert_eq!(
        lines(&record),
        [
            (
                "Speaker 0".to_owned(),
                json!(250),
                json!(2_400),
                "How did onboarding go?".to_owned()
            ),
            (
                "Speaker 1".to_owned(),
                json!(2_900),
                json!(11_800),
                "Honestly it was confusing at first.".to_owned()
            ),
        ]
    );
    assert_eq!(record["language"], "en");

    // A replay is answered and changes nothing; nothing was sent twice.
    let mut altered = result.clone();
    altered["results"]["utterances"][0]["transcript"] = json!("Something else entirely.");
    let status = deepgram_calls_back(&app, &callback, Some(&secret), &altered).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, again) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(again["utterances"], record["utterances"]);
    assert_eq!(stub.count(), 1);
    app.stop().await;
}

#[tokio::test]
async fn deepgram_without_a_callback_is_sent_again_and_its_error_is_the_records() {
    let (addr, stub) = deepgram_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::Deepgram;
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_model = Some("nova-2".into());
        settings.server.public_url = "https://insight.example.org".into();
        settings.speech.stt_callback_wait_seconds = 2;
        settings.jobs.job_retry_base_seconds = 0.05;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let id = upload_recording(&app, &user, &project, None).await;

    // The first callback never comes: after the wait the recording is sent again.
    eventually(
        Duration::from_secs(20),
        "the recording was not sent again",
        async || {
            if stub.count() >= 2 { Ok(()) } else { Err("") }
        },
    )
    .await;
    assert_eq!(stub.param(1, "model").as_deref(), Some("nova-2"));
    let callback = stub.param(1, "callback").expect("a callback URL");
    let secret = url::Url::parse(&callback)
        .expect("url")
        .password()
        .expect("secret")
        .to_owned();
    let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
    assert!(
        record["status"] == "InProgress" || record["status"] == "InQueue",
        "{record}"
    );

    // Deepgram's own error, posted to the callback, is the record's error.
    let error = json!({ "err_code": "Bad Request", "err_msg": "Bad Request: failed to process audio: corrupt or unsupported data", "request_id": "dg-2" });
    eventually(Duration::from_secs(20), "the callback was never taken", async || {
        let status = deepgram_calls_back(&app, &callback, Some(&secret), &error).await;
        if status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        // The job may be between its wait and its resend just now.
        assert_eq!(status, StatusCode::CONFLICT);
        Err(status)
    })
    .await;
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Error", "{record}");
    let reason = record["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Deepgram") && reason.contains("corrupt or unsupported data"),
        "{reason}"
    );
    app.stop().await;
}

#[tokio::test]
async fn deepgram_answers_at_once_when_it_cannot_reach_the_service() {
    let (addr, stub) = deepgram_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::Deepgram;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let id = upload_recording(&app, &user, &project, Some("de-DE")).await;
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Finished", "{record}");
    assert_eq!(lines(&record).len(), 2);
    assert_eq!(stub.count(), 1);
    assert!(stub.param(0, "callback").is_none(), "loopback public URL: no callback");
    assert_eq!(
        stub.param(0, "language").as_deref(),
        Some("de"),
        "Deepgram takes de, not de-DE"
    );
    assert!(stub.param(0, "detect_language").is_none());
    // Callbacks for a provider that is not Deepgram's are refused.
    let status = deepgram_calls_back(
        &app,
        &format!("https://x/api/webhooks/assemblyai?record_id={id}"),
        Some("x"),
        &json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn one_recordings_assemblyai_secret_opens_no_other() {
    let (addr, stub) = assemblyai_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::AssemblyAi;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
        settings.server.public_url = "https://insight.example.org".into();
        settings.speech.stt_poll_seconds = 3_600;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let first = upload_recording(&app, &user, &project, None).await;
    let second = upload_recording(&app, &user, &project, None).await;
    eventually(Duration::from_secs(20), "the recordings were never sent", async || {
        if stub.requests.lock().expect("lock").len() >= 2 {
            Ok(())
        } else {
            Err("")
        }
    })
    .await;
    let requests = stub.requests.lock().expect("lock").clone();
    let tokens: Vec<String> = requests
        .iter()
        .map(|request| {
            request["webhook_auth_header_value"]
                .as_str()
                .expect("secret")
                .to_owned()
        })
        .collect();
    assert_ne!(tokens[0], tokens[1], "a secret per recording");
    // Each secret opens its own transcript only (tr-1 is the first request's, tr-2 the second's).
    for (transcript, token) in [("tr-2", &tokens[0]), ("tr-1", &tokens[1])] {
        let (status, body) = call_back(&app, transcript, Some(token)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{transcript}: {body}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stub.checks.load(Ordering::SeqCst), 0, "nothing was fetched");
    stub.ready.store(true, Ordering::SeqCst);
    let (status, _) = call_back(&app, "tr-2", Some(&tokens[1])).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let second = wait_for(&app, &user, &second, &["Finished", "Error"]).await;
    assert_eq!(second["status"], "Finished", "{second}");
    let (_, first) = app.get(&format!("/insight/{first}/"), &user).await;
    assert_eq!(
        first["status"], "InProgress",
        "only the called-back record moved: {first}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_deepgram_callback_for_a_deleted_record_changes_nothing() {
    let (addr, stub) = deepgram_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_provider = SttProvider::Deepgram;
        settings.speech.stt_base_url = Some(format!("http://{addr}"));
        settings.server.public_url = "https://insight.example.org".into();
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let id = upload_recording(&app, &user, &project, None).await;
    until_sent(&app, &id).await;
    let callback = stub.param(0, "callback").expect("a callback URL");
    let secret = url::Url::parse(&callback)
        .expect("url")
        .password()
        .expect("secret")
        .to_owned();
    let (status, _) = app.delete(&format!("/insight/{id}/"), &user).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let status = deepgram_calls_back(&app, &callback, Some(&secret), &deepgram_result("dg-1")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the record stays deleted");
    app.stop().await;
}
