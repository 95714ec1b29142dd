//! Voice interviews over LiveKit: the respondent's access token (decoded and checked
//! here with an HMAC of the test's own), the agent's config and session report behind
//! X-Agent-Secret, and LiveKit's webhooks signed in the test, tampered or unsigned ones
//! refused, replays applied once.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::Utc;
use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{TestApp, TestUser};

const KEY: &str = "APItestkey";
const SECRET: &str = "livekit test secret, long enough";
const AGENT: &str = "agent secret for the tests";

async fn voice_app() -> TestApp {
    TestApp::start_with(|settings| {
        settings.interviews.livekit_url = Some("wss://lk.example.com".into());
        settings.interviews.livekit_api_key = Some(KEY.into());
        settings.interviews.livekit_api_secret = Some(SECRET.into());
        settings.interviews.agent_secret = Some(insight::secret::KeyMaterial::new(AGENT));
    })
    .await
}

async fn room(app: &TestApp, user: &TestUser) -> Value {
    let project = app.project(user, "Voice study").await;
    let (status, made) = app
        .post(
            "/api/interviews/rooms",
            user,
            json!({ "project_id": project, "interview_guide_override": "1. How do you commute?", "max_duration_minutes": 20 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["rooms"][0].clone()
}

/// The claims of an HS256 token, after checking its signature with `secret`.
fn claims(token: &str, secret: &str) -> Value {
    let (signed, signature) = token.rsplit_once('.').expect("three parts");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(signed.as_bytes());
    mac.verify_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap())
        .expect("signed with the secret");
    let (header, payload) = signed.split_once('.').unwrap();
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).unwrap()).unwrap();
    assert_eq!(header["alg"], "HS256");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

/// A webhook as LiveKit sends it: the body, and a token over its SHA-256.
fn signed_event(event: &Value, secret: &str) -> (String, String) {
    let body = event.to_string();
    let now = Utc::now().timestamp();
    let claims =
        json!({ "iss": KEY, "nbf": now, "exp": now + 300, "sha256": STANDARD.encode(Sha256::digest(body.as_bytes())) });
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(signed.as_bytes());
    let token = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()));
    (body, token)
}

async fn send_event(app: &TestApp, body: &str, authorization: Option<&str>) -> (StatusCode, Value) {
    let mut request = app
        .client
        .post(app.url("/api/webhooks/livekit"))
        .header("content-type", "application/webhook+json")
        .body(body.to_owned());
    if let Some(authorization) = authorization {
        request = request.header("authorization", authorization);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn joining_a_voice_room_gives_a_livekit_token_for_that_room_until_the_interview_ends() {
    let app = voice_app().await;
    let user = app.user().await;
    let room = room(&app, &user).await;
    let token = room["access_token"].as_str().unwrap();
    let (status, joined) = app
        .call(
            Method::POST,
            &format!("/api/interviews/join/{token}"),
            None,
            Some(json!({ "email": "ana@example.com" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let livekit = &joined["livekit"];
    let id = room["id"].as_str().unwrap();
    assert_eq!(livekit["url"], "wss://lk.example.com");
    assert_eq!(livekit["room"], format!("insight-{id}"));
    assert_eq!(livekit["identity"], format!("respondent-{id}"));
    let claims = claims(livekit["token"].as_str().unwrap(), SECRET);
    assert_eq!(claims["iss"], KEY);
    assert_eq!(claims["sub"], format!("respondent-{id}"));
    assert_eq!(claims["video"]["room"], format!("insight-{id}"));
    assert_eq!(claims["video"]["roomJoin"], true);
    assert_eq!(claims["video"]["canPublish"], true);
    let ends: chrono::DateTime<Utc> = joined["ends_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        claims["exp"].as_i64().unwrap(),
        ends.timestamp(),
        "valid until the interview must end"
    );
    let now = Utc::now().timestamp();
    assert!(claims["nbf"].as_i64().unwrap() <= now && ends.timestamp() - now <= 20 * 60 + 5);
    app.stop().await;

    // Without LiveKit: no token, and its webhook is not taken.
    let app = TestApp::start().await;
    let user = app.user().await;
    let room = self::room(&app, &user).await;
    let (_, joined) = app
        .call(
            Method::POST,
            &format!("/api/interviews/join/{}", room["access_token"].as_str().unwrap()),
            None,
            Some(json!({ "email": "ana@example.com" })),
        )
        .await;
    assert!(joined.get("livekit").is_none(), "{joined}");
    let (body, signature) = signed_event(&json!({ "event": "room_started", "id": "EV_x" }), SECRET);
    let (status, refused) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        refused["detail"].as_str().unwrap().contains("INSIGHT_LIVEKIT_URL"),
        "{refused}"
    );
    let (status, refused) = app
        .call(
            Method::GET,
            &format!("/api/interviews/agent-config/{}", room["id"].as_str().unwrap()),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        refused["detail"].as_str().unwrap().contains("INSIGHT_AGENT_SECRET"),
        "{refused}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_agent_reads_its_config_and_reports_the_transcript_as_the_record() {
    let app = voice_app().await;
    let user = app.user().await;
    let room = room(&app, &user).await;
    let id = room["id"].as_str().unwrap();
    let path = format!("/api/interviews/agent-config/{id}");
    let agent = |secret: Option<&'static str>, method: Method, path: String, body: Option<Value>| {
        let mut request = app.client.request(method, app.url(&path));
        if let Some(secret) = secret {
            request = request.header("x-agent-secret", secret);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status();
            (status, response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    for secret in [None, Some("wrong secret, long enough")] {
        let (status, _) = agent(secret, Method::GET, path.clone(), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, config) = agent(Some(AGENT), Method::GET, path.clone(), None).await;
    assert_eq!(status, StatusCode::OK, "{config}");
    assert_eq!(config["livekit_room"], format!("insight-{id}"));
    assert_eq!(config["language_name"], "English");
    assert!(config["instructions"].as_str().unwrap().contains("How do you commute?"));
    assert!(config["greeting"].as_str().unwrap().contains("20 minutes"));
    assert_eq!(config["status"], "pending");
    let (status, _) = agent(
        Some(AGENT),
        Method::GET,
        format!("/api/interviews/agent-config/{}", uuid::Uuid::new_v4()),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let report = json!({ "room_id": id, "transcript": [
        { "role": "interviewer", "text": "How do you commute?" },
        { "role": "respondent", "text": "By bike, unless it rains, then the tram." },
        { "role": "interviewer", "text": "Thank you!" }
    ]});
    let (status, _) = agent(
        None,
        Method::POST,
        "/api/interviews/session-report".into(),
        Some(report.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, bad) = agent(
        Some(AGENT),
        Method::POST,
        "/api/interviews/session-report".into(),
        Some(json!({ "room_id": id, "transcript": [{ "role": "moderator", "text": "x" }] })),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    let (status, reported) = agent(
        Some(AGENT),
        Method::POST,
        "/api/interviews/session-report".into(),
        Some(report.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{reported}");
    assert_eq!(reported["status"], "completed");
    let record = app.wait_finished(&user, reported["record_id"].as_str().unwrap()).await;
    let texts: Vec<(&str, bool)> = record["utterances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["text"].as_str().unwrap(), u["is_respondent"] == true))
        .collect();
    assert_eq!(
        texts,
        [
            ("How do you commute?", false),
            ("By bike, unless it rains, then the tram.", true),
            ("Thank you!", false)
        ]
    );
    let (status, _) = agent(
        Some(AGENT),
        Method::POST,
        "/api/interviews/session-report".into(),
        Some(report),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "a second report changes nothing");
    app.stop().await;
}

async fn room_status(app: &TestApp, user: &TestUser, id: &str) -> String {
    let (_, room) = app.get(&format!("/api/interviews/rooms/{id}"), user).await;
    room["status"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn livekit_webhooks_must_be_signed_and_apply_once() {
    let app = voice_app().await;
    let user = app.user().await;
    let room = room(&app, &user).await;
    let id = room["id"].as_str().unwrap();
    let joined = json!({ "event": "participant_joined", "id": "EV_joined_1", "createdAt": 1,
        "room": { "name": format!("insight-{id}"), "sid": "RM_1" },
        "participant": { "identity": format!("respondent-{id}"), "sid": "PA_1" } });
    let (body, signature) = signed_event(&joined, SECRET);

    // Refused, and nothing changes: unsigned, signed by someone else, or tampered.
    let (_, forged) = signed_event(&joined, "not the livekit secret at all");
    let tampered = body.replace("participant_joined", "participant_left");
    for (body, authorization) in [
        (body.as_str(), None),
        (body.as_str(), Some(forged.as_str())),
        (tampered.as_str(), Some(signature.as_str())),
        (body.as_str(), Some("not-a-token")),
    ] {
        let (status, answer) = send_event(&app, body, authorization).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert!(answer["detail"].as_str().unwrap().contains("LiveKit"));
    }
    assert_eq!(room_status(&app, &user, id).await, "pending");

    let (status, answer) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!((status, answer["status"].as_str()), (StatusCode::OK, Some("applied")));
    assert_eq!(room_status(&app, &user, id).await, "active");
    let (_, again) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!(again["status"], "duplicate");

    // Someone else's room, or a room that is not ours: ignored.
    let (body, signature) = signed_event(
        &json!({ "event": "room_started", "id": "EV_other", "room": { "name": "standup" } }),
        SECRET,
    );
    let (_, answer) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!(answer["status"], "ignored");

    // The room finishing before any transcript came in changes nothing (the agent's
    // report or the watch ends the interview)...
    let finished = |room: &str, event_id: &str| {
        signed_event(
            &json!({ "event": "room_finished", "id": event_id, "room": { "name": format!("insight-{room}") } }),
            SECRET,
        )
    };
    let (body, signature) = finished(id, "EV_finished_1");
    let (_, answer) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!(answer["status"], "ignored");
    assert_eq!(room_status(&app, &user, id).await, "active");
    // ...but with turns stored (a short answer, so the guide is not done), it ends the
    // interview and makes the record.
    let other = self::room(&app, &user).await;
    let token = other["access_token"].as_str().unwrap();
    let (_, joined) = app
        .call(
            Method::POST,
            &format!("/api/interviews/join/{token}"),
            None,
            Some(json!({ "email": "bo@example.com" })),
        )
        .await;
    app.call(
        Method::POST,
        &format!("/api/interviews/join/{token}/messages"),
        None,
        Some(json!({ "session_id": joined["session_id"], "text": "By bus." })),
    )
    .await;
    let other_id = other["id"].as_str().unwrap();
    let (body, signature) = finished(other_id, "EV_finished_2");
    let (_, answer) = send_event(&app, &body, Some(&signature)).await;
    assert_eq!(answer["status"], "applied");
    let (_, done) = app.get(&format!("/api/interviews/rooms/{other_id}"), &user).await;
    assert_eq!(done["status"], "completed");
    assert!(done["record_id"].is_string());
    app.stop().await;
}
