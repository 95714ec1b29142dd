//! Outgoing webhooks: endpoints, signed deliveries checked by an independent
//! implementation of the Standard Webhooks scheme, retries with growing delays, giving
//! up, a restart with deliveries pending, and the address checks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::support::{TestApp, TestUser, assert_validation_body, error_locs, error_types, eventually};

/// What the receiver got: headers, body, when.
#[derive(Clone, Debug)]
struct Received {
    headers: HeaderMap,
    body: String,
    at: Instant,
}

/// A local receiver: records every request and answers with the next status of its
/// script (then 200).
#[derive(Clone, Default)]
struct Receiver {
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<Vec<u16>>>,
}

impl Receiver {
    async fn start() -> (String, Self) {
        async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
            receiver.received.lock().unwrap().push(Received {
                headers,
                body,
                at: Instant::now(),
            });
            let mut script = receiver.script.lock().unwrap();
            let status = if script.is_empty() { 200 } else { script.remove(0) };
            StatusCode::from_u16(status).unwrap()
        }
        let receiver = Receiver::default();
        let router = axum::Router::new()
            .route("/hooks/{name}", post(receive))
            .with_state(receiver.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        (format!("http://{addr}"), receiver)
    }

    fn answer(&self, statuses: &[u16]) {
        *self.script.lock().unwrap() = statuses.to_vec();
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `count` requests came in (failing after 20 s).
    async fn wait_for(&self, count: usize) -> Vec<Received> {
        eventually(
            Duration::from_secs(20),
            format!("not {count} deliveries came"),
            async || {
                let received = self.received();
                if received.len() >= count {
                    Ok(received)
                } else {
                    Err(format!("{} of {count} came", received.len()))
                }
            },
        )
        .await
    }
}

/// Checks a delivery as a receiver following the Standard Webhooks specification
/// would, with its own HMAC: returns the event.
fn verify(secret: &str, received: &Received) -> Value {
    let header = |name: &str| {
        received.headers[name]
            .to_str()
            .unwrap_or_else(|_| panic!("{name} is text"))
            .to_owned()
    };
    let id = header("webhook-id");
    let timestamp = header("webhook-timestamp");
    let seconds: i64 = timestamp.parse().expect("unix seconds");
    assert!(
        (chrono::Utc::now().timestamp() - seconds).abs() < 300,
        "a fresh timestamp"
    );
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{}", received.body).as_bytes());
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    let signatures = header("webhook-signature");
    assert!(
        signatures.split(' ').any(|signature| signature == expected),
        "{signatures} is not {expected}"
    );
    assert!(
        received.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    serde_json::from_str(&received.body).expect("a JSON body")
}

async fn endpoint(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let (status, created) = app.post("/webhooks/endpoints", user, body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created
}

async fn text_record(app: &TestApp, user: &TestUser, project: &str) -> String {
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Call with Ana", "text": "Interviewer: How do you book?\nAna: On my phone, late at night." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    record["id"].as_str().unwrap().to_owned()
}

/// The endpoint's delivery log once its latest delivery has `status` (the receiver has
/// a request a moment before the dispatcher records its answer).
async fn log_when(app: &TestApp, user: &TestUser, endpoint: &str, status: &str) -> Value {
    eventually(Duration::from_secs(10), format!("never {status}"), async || {
        let (_, log) = app
            .get(&format!("/webhooks/endpoints/{endpoint}/deliveries"), user)
            .await;
        if log[0]["status"] == status { Ok(log) } else { Err(log) }
    })
    .await
}

fn local(settings: &mut insight::Settings, schedule: &str) {
    settings.webhooks.webhooks_allow_http = true;
    settings.webhooks.webhooks_allow_private = true;
    settings.webhooks.webhooks_retry_schedule = insight::config::RetrySchedule(
        schedule
            .split(',')
            .map(|s| Duration::from_secs_f64(s.parse().unwrap()))
            .collect(),
    );
}

#[tokio::test]
async fn endpoints_are_checked_and_their_secret_shown_once() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let stranger = app.user().await;
    for (body, kind) in [
        (json!({}), "missing"),
        (json!({ "url": "http://hooks.example.com/x" }), "value_error"),
        (json!({ "url": "https://127.0.0.1/x" }), "value_error"),
        (json!({ "url": "https://localhost:9/x" }), "value_error"),
        (json!({ "url": "nonsense" }), "string_pattern_mismatch"),
        (json!({ "url": "https://" }), "value_error"),
        (json!({ "url": "https://exa mple.com/" }), "url_parsing"),
        (json!({ "url": "https://LOCALHOST./x" }), "value_error"),
        (json!({ "url": "https://198.18.0.1/x" }), "value_error"),
        (json!({ "url": "https://100.64.0.1/x" }), "value_error"),
        (json!({ "url": "https://0.0.0.0/x" }), "value_error"),
        (json!({ "url": "https://240.0.0.1/x" }), "value_error"),
        (json!({ "url": "https://224.0.0.1/x" }), "value_error"),
        (json!({ "url": "https://[64:ff9b::7f00:1]/x" }), "value_error"),
        (json!({ "url": "https://[2002:7f00:1::]/x" }), "value_error"),
        (json!({ "url": "https://[::ffff:127.0.0.1]/x" }), "value_error"),
        (json!({ "url": "https://[::127.0.0.1]/x" }), "value_error"),
        (json!({ "url": "https://[fd12::1]/x" }), "value_error"),
        (
            json!({ "url": "https://hooks.example.com/x", "events": ["record.deleted"] }),
            "enum",
        ),
        (
            json!({ "url": "https://hooks.example.com/x", "events": [] }),
            "too_short",
        ),
    ] {
        let (status, error) = app.post("/webhooks/endpoints", &user, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {error}");
        assert_validation_body(&error);
        assert!(error_types(&error).contains(&kind.to_owned()), "{body}: {error}");
    }
    let (_, error) = app
        .post(
            "/webhooks/endpoints",
            &user,
            json!({ "url": "http://hooks.example.com/x" }),
        )
        .await;
    assert_eq!(error_locs(&error), [json!(["body", "url"])]);
    assert!(error.to_string().contains("INSIGHT_WEBHOOKS_ALLOW_HTTP"), "{error}");

    let created = endpoint(
        &app,
        &user,
        json!({ "url": "https://hooks.example.com/insight", "events": ["report.failed", "record.finished"],
                "description": "Slack bridge" }),
    )
    .await;
    let secret = created["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && STANDARD.decode(&secret[6..]).unwrap().len() == 32);
    assert_eq!(created["events"], json!(["record.finished", "report.failed"]));
    assert_eq!(created["status"], "active");
    let id = created["id"].as_str().unwrap();
    let (status, listed) = app.get("/webhooks/endpoints", &user).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(listed[0].get("secret").is_none(), "the secret is shown once: {listed}");
    let (_, got) = app.get(&format!("/webhooks/endpoints/{id}"), &user).await;
    assert!(got.get("secret").is_none() && got["description"] == "Slack bridge");
    let (status, log) = app.get(&format!("/webhooks/endpoints/{id}/deliveries"), &user).await;
    assert_eq!((status, log), (StatusCode::OK, json!([])));
    // Nobody else sees or deletes it.
    for (method, path) in [
        (Method::GET, format!("/webhooks/endpoints/{id}")),
        (Method::GET, format!("/webhooks/endpoints/{id}/deliveries")),
        (Method::DELETE, format!("/webhooks/endpoints/{id}")),
    ] {
        let (status, _) = app.call(method, &path, Some(&stranger.token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    let (_, theirs) = app.get("/webhooks/endpoints", &stranger).await;
    assert_eq!(theirs, json!([]));
    let (status, _) = app.delete(&format!("/webhooks/endpoints/{id}"), &user).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&format!("/webhooks/endpoints/{id}"), &user).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.call(Method::GET, "/webhooks/endpoints", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn events_are_signed_sent_to_subscribers_and_retried_with_growing_delays() {
    let (base, receiver) = Receiver::start().await;
    let (other_base, other) = Receiver::start().await;
    let app = TestApp::start_with(|settings| local(settings, "0.2,0.8,5")).await;
    let user = app.user().await;
    let all = endpoint(&app, &user, json!({ "url": format!("{base}/hooks/all") })).await;
    let reports_only = endpoint(
        &app,
        &user,
        json!({ "url": format!("{other_base}/hooks/reports"), "events": ["report.completed"] }),
    )
    .await;
    // Another user's changes never reach this user's endpoints.
    let stranger = app.user().await;
    let theirs = app.project(&stranger, "Theirs").await;
    text_record(&app, &stranger, &theirs).await;

    receiver.answer(&[500, 503]);
    let project = app.project(&user, "Booking").await;
    let record = text_record(&app, &user, &project).await;
    app.wait_finished(&user, &record).await;
    let attempts = receiver.wait_for(3).await;
    let secret = all["secret"].as_str().unwrap();
    let events: Vec<Value> = attempts.iter().map(|received| verify(secret, received)).collect();
    let id = attempts[0].headers["webhook-id"].clone();
    assert!(
        attempts.iter().all(|received| received.headers["webhook-id"] == id),
        "one id on every attempt"
    );
    assert_eq!(events[0], events[2], "the same body every time");
    assert_eq!(events[0]["type"], "record.finished");
    assert_eq!(events[0]["data"]["record_id"], record.as_str());
    assert_eq!(events[0]["data"]["project_id"], project.as_str());
    assert_eq!(events[0]["data"]["name"], "Call with Ana");
    let first = attempts[1].at - attempts[0].at;
    let second = attempts[2].at - attempts[1].at;
    assert!(
        first >= Duration::from_millis(150) && second > first,
        "{first:?} then {second:?}"
    );

    let log = log_when(&app, &user, all["id"].as_str().unwrap(), "delivered").await;
    assert_eq!(log.as_array().unwrap().len(), 1, "{log}");
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(log[0]["attempts"], 3);
    assert_eq!(log[0]["last_status"], 200);
    assert_eq!(log[0]["event_type"], "record.finished");
    assert_eq!(log[0]["event_id"], id.to_str().unwrap());

    // A report is written: both endpoints hear of it; the record only went to `all`.
    let report = app.report(&user, &project).await;
    let got = other.wait_for(1).await;
    let event = verify(reports_only["secret"].as_str().unwrap(), &got[0]);
    assert_eq!(event["type"], "report.completed");
    assert_eq!(event["data"]["report_id"], report.as_str());
    assert_eq!(event["data"]["status"], "completed");
    let received = receiver.wait_for(4).await;
    assert_eq!(verify(secret, &received[3])["type"], "report.completed");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(other.received().len(), 1, "only what it subscribed to");
    assert_eq!(receiver.received().len(), 4, "nothing of the other user's");

    // An interview ends: `interview.completed` names its record.
    let (_, rooms) = app
        .post("/api/interviews/rooms", &user, json!({ "project_id": project }))
        .await;
    let token = rooms["rooms"][0]["access_token"].as_str().unwrap();
    let (_, joined) = app
        .call(
            Method::POST,
            &format!("/api/interviews/join/{token}"),
            None,
            Some(json!({ "email": "ana@example.com" })),
        )
        .await;
    app.call(
        Method::POST,
        &format!("/api/interviews/join/{token}/leave"),
        None,
        Some(json!({ "session_id": joined["session_id"] })),
    )
    .await;
    let received = receiver.wait_for(5).await;
    let event = verify(secret, &received[4]);
    assert_eq!(event["type"], "interview.completed", "{event}");
    assert_eq!(event["data"]["room_id"], rooms["rooms"][0]["id"]);
    assert!(event["data"]["record_id"].is_string());
    app.stop().await;
}

#[tokio::test]
async fn a_delivery_that_never_succeeds_fails_and_marks_its_endpoint_failing() {
    let (base, receiver) = Receiver::start().await;
    let app = TestApp::start_with(|settings| local(settings, "0.05,0.05")).await;
    let user = app.user().await;
    let created = endpoint(&app, &user, json!({ "url": format!("{base}/hooks/down") })).await;
    receiver.answer(&[503; 10]);
    let project = app.project(&user, "Booking").await;
    let record = text_record(&app, &user, &project).await;
    app.wait_finished(&user, &record).await;
    receiver.wait_for(3).await;
    let id = created["id"].as_str().unwrap();
    let log = log_when(&app, &user, id, "failed").await;
    assert_eq!(log[0]["attempts"], 3);
    assert_eq!(log[0]["last_status"], 503);
    assert!(log[0]["last_error"].as_str().unwrap().contains("503"), "{log}");
    assert!(log[0]["next_attempt_at"].is_null());
    let (_, endpoint) = app.get(&format!("/webhooks/endpoints/{id}"), &user).await;
    assert_eq!(endpoint["status"], "failing");
    assert!(endpoint["failing_since"].is_string());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 3, "no attempt after the last");
    app.stop().await;
}

#[tokio::test]
async fn pending_deliveries_survive_a_restart_and_private_addresses_are_checked_when_sending() {
    let schedule = "0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2";
    let (base, receiver) = Receiver::start().await;
    let mut app = TestApp::start_with(|settings| local(settings, schedule)).await;
    let user = app.user().await;
    let created = endpoint(&app, &user, json!({ "url": format!("{base}/hooks/later") })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    receiver.answer(&[503; 100]);
    let project = app.project(&user, "Booking").await;
    let record = text_record(&app, &user, &project).await;
    app.wait_finished(&user, &record).await;
    receiver.wait_for(1).await;

    // Restarted where private addresses are not allowed: the next attempts are refused
    // before anything is sent.
    app.restart(|settings| {
        local(settings, schedule);
        settings.webhooks.webhooks_allow_private = false;
    })
    .await;
    eventually(Duration::from_secs(10), "no refused attempt", async || {
        let (_, log) = app.get(&format!("/webhooks/endpoints/{id}/deliveries"), &user).await;
        let error = log[0]["last_error"].as_str().unwrap_or_default();
        if error.contains("INSIGHT_WEBHOOKS_ALLOW_PRIVATE") {
            assert_eq!(log[0]["status"], "pending", "{log}");
            Ok(())
        } else {
            Err(log)
        }
    })
    .await;
    let sent = receiver.received().len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(receiver.received().len(), sent, "nothing sent to a refused address");

    // Allowed again and the receiver healthy: delivered, with the same id as before.
    receiver.answer(&[]);
    app.restart(|settings| local(settings, schedule)).await;
    let received = receiver.wait_for(sent + 1).await;
    let secret = created["secret"].as_str().unwrap();
    assert_eq!(verify(secret, &received[sent])["data"]["record_id"], record.as_str());
    assert!(
        received
            .iter()
            .all(|r| r.headers["webhook-id"] == received[0].headers["webhook-id"])
    );
    log_when(&app, &user, &id, "delivered").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.received().len(), sent + 1, "delivered once");
    app.stop().await;
}

#[tokio::test]
async fn a_failed_delivery_sent_again_reaches_its_receiver_with_the_same_id_and_body() {
    let (base, receiver) = Receiver::start().await;
    let app = TestApp::start_with(|settings| local(settings, "0.05")).await;
    let user = app.user().await;
    let stranger = app.user().await;
    let created = endpoint(&app, &user, json!({ "url": format!("{base}/hooks/flaky") })).await;
    let id = created["id"].as_str().unwrap();
    receiver.answer(&[503, 503]);
    let project = app.project(&user, "Booking").await;
    let record = text_record(&app, &user, &project).await;
    app.wait_finished(&user, &record).await;
    receiver.wait_for(2).await;
    let log = log_when(&app, &user, id, "failed").await;
    assert_eq!(log[0]["attempts"], 2);
    let delivery = log[0]["id"].as_str().unwrap();
    let retry = format!("/webhooks/endpoints/{id}/deliveries/{delivery}/retry");

    // Nobody else may, and an unknown delivery is not found.
    let (status, _) = app.post(&retry, &stranger, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let unknown = format!("/webhooks/endpoints/{id}/deliveries/{}/retry", uuid::Uuid::new_v4());
    let (status, _) = app.post(&unknown, &user, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, queued) = app.post(&retry, &user, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert_eq!(queued["id"], delivery);
    assert_eq!(queued["status"], "pending");
    assert!(queued["next_attempt_at"].is_string(), "{queued}");
    let received = receiver.wait_for(3).await;
    let secret = created["secret"].as_str().unwrap();
    assert_eq!(
        verify(secret, &received[2]),
        verify(secret, &received[0]),
        "the same event"
    );
    assert_eq!(received[2].headers["webhook-id"], received[0].headers["webhook-id"]);
    let log = log_when(&app, &user, id, "delivered").await;
    assert_eq!(
        log.as_array().unwrap().len(),
        1,
        "the same delivery, not a new one: {log}"
    );
    assert_eq!(log[0]["attempts"], 3);
    assert_eq!(log[0]["last_status"], 200);
    let (_, endpoint) = app.get(&format!("/webhooks/endpoints/{id}"), &user).await;
    assert_eq!(endpoint["status"], "active", "a success makes it active again");
    app.stop().await;
}
