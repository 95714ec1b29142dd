//! Limits that hold on the internet: the client's address behind a reverse proxy, a
//! request body that trickles in, and how much one user may pile up.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{TestApp, TestUser};

/// A room's public join link and an app whose public rate allows two requests a client.
async fn rate_limited_app(trusted: &str, header: insight::config::ForwardedHeader) -> (TestApp, String) {
    let trusted = trusted.to_owned();
    let app = TestApp::start_with(move |settings| {
        settings.server.public_rate_per_minute = 1;
        settings.server.public_rate_burst = 2;
        settings.server.trusted_proxies = insight::config::TrustedNetworks(
            trusted
                .split(',')
                .filter(|cidr| !cidr.is_empty())
                .map(|cidr| cidr.parse().expect("a CIDR"))
                .collect(),
        );
        settings.server.forwarded_header = header;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Proxies").await;
    let (_, made) = app
        .post("/api/interviews/rooms", &user, json!({ "project_id": project }))
        .await;
    let token = made["rooms"][0]["access_token"].as_str().expect("token").to_owned();
    (app, format!("/api/interviews/join/{token}"))
}

/// The statuses of requests to `path`, each with its own forwarding header value.
async fn statuses(app: &TestApp, path: &str, header: &str, values: &[&str]) -> Vec<u16> {
    let mut statuses = Vec::new();
    for value in values {
        let response = app
            .client
            .get(app.url(path))
            .header(header, *value)
            .send()
            .await
            .expect("sent");
        statuses.push(response.status().as_u16());
    }
    statuses
}

#[tokio::test]
async fn a_forged_forwarded_address_changes_nothing_unless_a_trusted_proxy_sent_it() {
    use insight::config::ForwardedHeader::{Forwarded, XForwardedFor};
    let forged = ["198.51.100.1", "198.51.100.2", "198.51.100.3"];
    // No trusted proxy, or one that is not this peer: every request is the peer's own,
    // whatever it forwards, and the third is over the rate.
    for trusted in ["", "10.0.0.0/8"] {
        let (app, path) = rate_limited_app(trusted, XForwardedFor).await;
        assert_eq!(
            statuses(&app, &path, "x-forwarded-for", &forged).await,
            [200, 200, 429],
            "{trusted:?}"
        );
        app.stop().await;
    }
    // This peer is a trusted proxy: each forwarded client has its own allowance, and a
    // client writing its own hop before the proxy's cannot pass for another.
    let (app, path) = rate_limited_app("127.0.0.1/32", XForwardedFor).await;
    assert_eq!(statuses(&app, &path, "x-forwarded-for", &forged).await, [200, 200, 200]);
    let same = ["203.0.113.7", "198.51.100.9, 203.0.113.7", "1.2.3.4, 203.0.113.7"];
    assert_eq!(statuses(&app, &path, "x-forwarded-for", &same).await, [200, 200, 429]);
    // The other header is not read.
    let elements = ["for=192.0.2.1", "for=192.0.2.2", "for=192.0.2.3"];
    assert_eq!(statuses(&app, &path, "forwarded", &elements).await, [200, 200, 429]);
    app.stop().await;
    // Told to read RFC 7239's header, it reads that one only.
    let (app, path) = rate_limited_app("127.0.0.1/32", Forwarded).await;
    assert_eq!(statuses(&app, &path, "forwarded", &elements).await, [200, 200, 200]);
    let ports = ["for=\"192.0.2.9:4711\"", "for=192.0.2.9", "for=\"[::ffff:192.0.2.9]\""];
    assert_eq!(statuses(&app, &path, "forwarded", &ports).await, [200, 200, 429]);
    assert_eq!(statuses(&app, &path, "x-forwarded-for", &forged).await, [200, 200, 429]);
    app.stop().await;
}

/// Sends a request's head and then its body as `chunks`, one every `every`; returns the
/// status line of the answer and how long it took to come.
async fn send_slowly(
    app: &TestApp,
    user: &TestUser,
    length: usize,
    chunks: Vec<Vec<u8>>,
    every: Duration,
) -> (String, Duration) {
    let address = app.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(address).await.expect("connect");
    let head = format!(
        "POST /projects/ HTTP/1.1\r\nHost: insight\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\n\r\n",
        user.token
    );
    stream.write_all(head.as_bytes()).await.expect("head sent");
    let started = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    let writing = tokio::spawn(async move {
        for chunk in chunks {
            if writer.write_all(&chunk).await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the server neither answered nor closed the connection");
    writing.abort();
    let text = String::from_utf8_lossy(&answer).into_owned();
    (text.lines().next().unwrap_or_default().to_owned(), started.elapsed())
}

#[tokio::test]
async fn a_body_that_trickles_is_cut_and_a_slow_steady_one_is_not() {
    let app = TestApp::start_with(|settings| {
        settings.server.request_body_timeout_seconds = 1;
        settings.server.request_body_min_bytes_per_second = 1_000;
    })
    .await;
    let user = app.user().await;
    // A byte every 100 ms: 10 bytes a second against a floor of 1,000.
    let body = br#"{"name": "Trickled in, one byte at a time, for as long as the server would let it"}"#;
    let trickle = app.client.clone();
    let healthz = app.url("/healthz");
    // Meanwhile others are answered at once.
    let others = tokio::spawn(async move {
        let mut slowest = Duration::ZERO;
        for _ in 0..10 {
            let started = Instant::now();
            let response = trickle.get(&healthz).send().await.expect("sent");
            assert_eq!(response.status(), StatusCode::OK);
            slowest = slowest.max(started.elapsed());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        slowest
    });
    let chunks = body.iter().map(|byte| vec![*byte]).collect();
    let (status, took) = send_slowly(&app, &user, body.len(), chunks, Duration::from_millis(100)).await;
    assert!(status.starts_with("HTTP/1.1 408"), "{status}");
    assert!(took < Duration::from_secs(5), "cut after about a window: {took:?}");
    let slowest = others.await.expect("the others");
    assert!(slowest < Duration::from_secs(1), "others waited {slowest:?}");

    // 5,000 bytes a second (five times the floor, so that a busy machine's late sends
    // still keep the pace) for three seconds, three times the window: accepted, because
    // the pace is what counts, not the total time.
    let body = format!(r#"{{"name": "{}"}}"#, "x".repeat(190)).into_bytes();
    let padded: Vec<u8> = [
        &body[..body.len() - 1],
        " ".repeat(15_000 - body.len()).as_bytes(),
        b"}",
    ]
    .concat();
    let chunks = padded.chunks(500).map(<[u8]>::to_vec).collect();
    let (status, took) = send_slowly(&app, &user, padded.len(), chunks, Duration::from_millis(100)).await;
    assert!(status.starts_with("HTTP/1.1 201"), "{status}");
    assert!(took > Duration::from_secs(2), "the upload took {took:?}");
    app.stop().await;
}

async fn created(app: &TestApp, user: &TestUser, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(path, user, body).await;
    assert!(status.is_success(), "{path}: {status} {answer}");
    answer
}

async fn refused(app: &TestApp, user: &TestUser, path: &str, body: Value, setting: &str) {
    let (status, answer) = app.post(path, user, body).await;
    assert_eq!(status, StatusCode::CONFLICT, "{path}: {answer}");
    let detail = answer["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(setting), "{path}: {detail}");
}

#[tokio::test]
async fn past_a_quota_creations_are_refused_with_a_sentence_naming_it() {
    let app = TestApp::start_with(|settings| {
        let quotas = &mut settings.quotas;
        quotas.projects = 2;
        quotas.records_per_project = 1;
        quotas.reports_per_project = 1;
        quotas.rooms_per_day = 3;
        quotas.threads_per_record = 1;
        quotas.assistant_threads = 1;
        quotas.messages_per_thread = 2;
        quotas.prompts = 1;
        quotas.presets = 1;
        quotas.webhook_endpoints = 1;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "One").await;
    app.project(&user, "Two").await;
    refused(
        &app,
        &user,
        "/projects/",
        json!({ "name": "Three" }),
        "INSIGHT_QUOTA_PROJECTS",
    )
    .await;
    let other = app.user().await;
    app.project(&other, "Another user's first").await;

    let records = format!("/projects/{project}/records");
    let text = json!({ "title": "One", "text": "Interviewer: Hi\nAnna: The price surprised me." });
    let record = created(&app, &user, &records, text.clone()).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.wait_finished(&user, &record).await;
    refused(&app, &user, &records, text, "INSIGHT_QUOTA_RECORDS_PER_PROJECT").await;

    app.report(&user, &project).await;
    let preset = app.system_preset_id(&user).await;
    let reports = format!("/projects/{project}/reports");
    refused(
        &app,
        &user,
        &reports,
        json!({ "title": "Again", "preset_id": preset }),
        "INSIGHT_QUOTA_REPORTS_PER_PROJECT",
    )
    .await;

    let rooms = json!({ "project_id": project, "count": 2 });
    created(&app, &user, "/api/interviews/rooms", rooms.clone()).await;
    let (status, answer) = app.post("/api/interviews/rooms", &user, rooms).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert!(
        answer["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("INSIGHT_QUOTA_ROOMS_PER_DAY")
    );
    let response = app
        .client
        .post(app.url("/api/interviews/rooms"))
        .bearer_auth(&user.token)
        .json(&json!({ "project_id": project, "count": 2 }))
        .send()
        .await
        .expect("sent");
    let wait: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((80_000..=86_400).contains(&wait), "a day from the first room: {wait}");
    created(&app, &user, "/api/interviews/rooms", json!({ "project_id": project })).await;
    // More at once than a day allows waits for nothing: 409.
    refused(
        &app,
        &user,
        "/api/interviews/rooms",
        json!({ "project_id": project, "count": 4 }),
        "INSIGHT_QUOTA_ROOMS_PER_DAY",
    )
    .await;

    let chat = format!("/insight/{record}/chat/");
    let thread = created(&app, &user, &format!("/insight/{record}/chat/new-thread/"), json!({})).await["id"].clone();
    refused(
        &app,
        &user,
        &format!("/insight/{record}/chat/new-thread/"),
        json!({}),
        "INSIGHT_QUOTA_THREADS_PER_RECORD",
    )
    .await;
    refused(
        &app,
        &user,
        &chat,
        json!({ "message": "A new thread?" }),
        "INSIGHT_QUOTA_THREADS_PER_RECORD",
    )
    .await;
    created(
        &app,
        &user,
        &chat,
        json!({ "message": "What surprised her?", "thread_id": thread }),
    )
    .await;
    refused(
        &app,
        &user,
        &chat,
        json!({ "message": "And then?", "thread_id": thread }),
        "INSIGHT_QUOTA_MESSAGES_PER_THREAD",
    )
    .await;

    created(&app, &user, "/agent/threads", json!({})).await;
    refused(
        &app,
        &user,
        "/agent/threads",
        json!({}),
        "INSIGHT_QUOTA_ASSISTANT_THREADS",
    )
    .await;
    refused(
        &app,
        &user,
        "/agent/chat",
        json!({ "message": "hi" }),
        "INSIGHT_QUOTA_ASSISTANT_THREADS",
    )
    .await;

    let prompt = created(
        &app,
        &user,
        "/prompts/",
        json!({ "title": "Mine", "text": "What hurts?" }),
    )
    .await["id"]
        .clone();
    refused(
        &app,
        &user,
        "/prompts/",
        json!({ "title": "More", "text": "?" }),
        "INSIGHT_QUOTA_PROMPTS",
    )
    .await;
    created(
        &app,
        &user,
        "/presets/",
        json!({ "title": "Mine", "prompt_ids": [prompt] }),
    )
    .await;
    refused(
        &app,
        &user,
        "/presets/",
        json!({ "title": "More", "prompt_ids": [prompt] }),
        "INSIGHT_QUOTA_PRESETS",
    )
    .await;
    refused(
        &app,
        &user,
        &format!("/presets/{preset}/clone/"),
        json!({}),
        "INSIGHT_QUOTA_PRESETS",
    )
    .await;

    let hook = json!({ "url": "https://hooks.example.com/a" });
    created(&app, &user, "/webhooks/endpoints", hook.clone()).await;
    refused(
        &app,
        &user,
        "/webhooks/endpoints",
        hook,
        "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS",
    )
    .await;
    app.stop().await;
}
