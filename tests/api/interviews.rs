//! AI-led interviews: rooms and their lifecycle, the public join flow (spec operation 3),
//! the interviewer with the offline engine and with a stub model, the rate limit, and
//! the respondent page.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::interviews::{join, public, say};
use crate::support::models::{Mode, model_app, model_stub};
use crate::support::{
    TestApp, TestUser, assert_unknown_references, assert_validation_body, error_locs, error_types, eventually,
};

const GUIDE: &str =
    "# Warm-up\n1. What do you do for a living?\n2. How do you plan a trip?\n3. What annoys you most about booking?";
const LONG: [&str; 3] = [
    "I work as a nurse in a big hospital, mostly night shifts these days.",
    "I open a spreadsheet and list every train and hotel with its price before booking.",
    "The hidden fees that only show up on the very last page of the booking form.",
];

/// Makes rooms in a new project; returns the project and the rooms.
async fn rooms(app: &TestApp, user: &TestUser, body: Value) -> (String, Vec<Value>) {
    let project = app.project(user, "Trip planning").await;
    let mut body = body;
    body["project_id"] = json!(project);
    let (status, created) = app.post("/api/interviews/rooms", user, body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (project, created["rooms"].as_array().expect("rooms").clone())
}

/// A message with the client's id, as the respondent page sends it.
async fn say_once(app: &TestApp, token: &str, session: &str, text: &str, id: &str) -> (StatusCode, Value) {
    public(
        app,
        Method::POST,
        &format!("/api/interviews/join/{token}/messages"),
        Some(json!({ "session_id": session, "text": text, "message_id": id })),
    )
    .await
}

/// Sets one of a room's times directly in the database (to make time pass).
async fn set_room_time(app: &TestApp, room_id: &str, column: &str, at: DateTime<Utc>) {
    let id = uuid::Uuid::parse_str(room_id).expect("room id");
    let sql = format!("UPDATE interview_rooms SET {column} = $1 WHERE id = $2");
    if app.database_url.starts_with("sqlite:") {
        let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&app.database_url)
            .await
            .expect("connect");
        sqlx::query(&sql)
            .bind(at)
            .bind(id)
            .execute(&mut conn)
            .await
            .expect("update");
    } else {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&app.database_url)
            .await
            .expect("connect");
        sqlx::query(&sql)
            .bind(at)
            .bind(id)
            .execute(&mut conn)
            .await
            .expect("update");
    }
}

fn assert_room(room: &Value, project: &str) {
    // A room's record_id is there once the interview has made a record.
    let keys: Vec<&str> = room
        .as_object()
        .expect("room")
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "record_id")
        .collect();
    assert!(room.get("record_id").is_none_or(Value::is_string), "{room}");
    assert_eq!(
        keys,
        [
            "id",
            "project_id",
            "access_token",
            "url",
            "room_name",
            "respondent_email",
            "max_duration_minutes",
            "status",
            "language",
            "topics_for_respondent",
            "research_goals_override",
            "interview_guide_override",
            "created_at",
            "started_at",
            "completed_at",
            "expires_at"
        ]
    );
    assert_eq!(room["project_id"], project);
    let token = room["access_token"].as_str().expect("token");
    assert!(token.len() >= 22, "at least 128 bits: {token}");
    assert!(
        token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "{token}"
    );
    assert_eq!(room["url"], format!("http://127.0.0.1:8000/interview/{token}"));
}

#[tokio::test]
async fn rooms_are_made_in_bulk_listed_changed_while_pending_and_cancelled() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, made) = rooms(
        &app,
        &user,
        json!({ "count": 3, "room_name": "Wave 1", "max_duration_minutes": 20, "expires_in_days": 3,
                "language": "de", "topics_for_respondent": "Reisen" }),
    )
    .await;
    assert_eq!(made.len(), 3);
    let mut tokens: Vec<&str> = made.iter().map(|r| r["access_token"].as_str().unwrap()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 3, "every link is its own");
    for (room, number) in made.iter().zip(1..) {
        assert_room(room, &project);
        assert_eq!(room["room_name"], format!("Wave 1 {number}"));
        assert_eq!(room["status"], "pending");
        assert_eq!(room["max_duration_minutes"], 20);
        assert_eq!(room["language"], "de");
        assert!(room["record_id"].is_null() && room["respondent_email"].is_null());
        let created: DateTime<Utc> = room["created_at"].as_str().unwrap().parse().unwrap();
        let expires: DateTime<Utc> = room["expires_at"].as_str().unwrap().parse().unwrap();
        assert_eq!((expires - created).num_days(), 3);
    }
    // Defaults.
    let (_, single) = rooms(&app, &user, json!({})).await;
    assert_eq!(single[0]["room_name"], "Trip planning");
    assert_eq!(single[0]["max_duration_minutes"], 30);
    assert_eq!(single[0]["language"], "en");

    let (status, listed) = app
        .get(&format!("/api/interviews/rooms?project_id={project}"), &user)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert_eq!(
        listed[0]["access_token"], made[2]["access_token"],
        "the link is shown again: {listed}"
    );
    let (_, all) = app.get("/api/interviews/rooms", &user).await;
    assert_eq!(all.as_array().unwrap().len(), 4);

    let id = made[0]["id"].as_str().unwrap();
    let path = format!("/api/interviews/rooms/{id}");
    let (status, got) = app.get(&path, &user).await;
    assert_eq!((status, &got), (StatusCode::OK, &made[0]));
    // A fraction is not a number of days.
    let (status, refused) = app
        .call(
            Method::PATCH,
            &path,
            Some(&user.token),
            Some(json!({ "room_name": "Anna", "expires_in_days": 10.5 })),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        error_locs(&refused),
        vec![json!(["body", "expires_in_days"])],
        "{refused}"
    );
    assert_eq!(error_types(&refused), ["int_type"], "{refused}");
    let (status, changed) = app
        .call(
            Method::PATCH,
            &path,
            Some(&user.token),
            Some(json!({ "room_name": "Anna", "topics_for_respondent": null, "expires_in_days": 10.0 })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["room_name"], "Anna");
    assert!(changed["topics_for_respondent"].is_null());
    assert_eq!(changed["max_duration_minutes"], 20);
    assert_eq!(changed["access_token"], made[0]["access_token"]);

    let (status, cancelled) = app.delete(&path, &user).await;
    assert_eq!(
        (status, cancelled["status"].as_str()),
        (StatusCode::OK, Some("cancelled"))
    );
    let (status, body) = app
        .call(
            Method::PATCH,
            &path,
            Some(&user.token),
            Some(json!({ "room_name": "B" })),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("cancelled"));
    let (status, _) = app.delete(&path, &user).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let token = made[0]["access_token"].as_str().unwrap();
    let (status, info) = public(&app, Method::GET, &format!("/api/interviews/join/{token}"), None).await;
    assert_eq!((status, info["status"].as_str()), (StatusCode::OK, Some("cancelled")));
    let (status, _) = join(&app, token, "ana@example.com").await;
    assert_eq!(status, StatusCode::CONFLICT);
    app.stop().await;
}

#[tokio::test]
async fn rooms_refuse_bad_input_and_strangers() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&user, "Mine").await;
    let cases = [
        (json!({}), vec![json!(["body", "project_id"])], "missing"),
        (
            json!({ "project_id": "nope" }),
            vec![json!(["body", "project_id"])],
            "uuid_parsing",
        ),
        (
            json!({ "project_id": project, "count": 0, "max_duration_minutes": 241, "expires_in_days": "x" }),
            vec![
                json!(["body", "count"]),
                json!(["body", "max_duration_minutes"]),
                json!(["body", "expires_in_days"]),
            ],
            "",
        ),
        (
            json!({ "project_id": project, "count": 101 }),
            vec![json!(["body", "count"])],
            "less_than_equal",
        ),
        (
            json!({ "project_id": project, "language": "english!" }),
            vec![json!(["body", "language"])],
            "",
        ),
        (
            json!({ "project_id": project, "room_name": "  " }),
            vec![json!(["body", "room_name"])],
            "string_too_short",
        ),
    ];
    for (body, locs, kind) in cases {
        let (status, error) = app.post("/api/interviews/rooms", &user, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {error}");
        assert_validation_body(&error);
        for loc in &locs {
            assert!(error_locs(&error).contains(loc), "{body}: {error}");
        }
        if !kind.is_empty() {
            assert!(error_types(&error).contains(&kind.to_owned()), "{body}: {error}");
        }
    }
    let (status, error) = app
        .post("/api/interviews/rooms", &stranger, json!({ "project_id": project }))
        .await;
    assert_unknown_references(status, &error, &["project_id"]);
    let (_, made) = app
        .post("/api/interviews/rooms", &user, json!({ "project_id": project }))
        .await;
    let id = made["rooms"][0]["id"].as_str().unwrap();
    for (method, path) in [
        (Method::GET, format!("/api/interviews/rooms/{id}")),
        (Method::DELETE, format!("/api/interviews/rooms/{id}")),
        (Method::GET, format!("/api/interviews/rooms?project_id={project}")),
    ] {
        let (status, body) = app.call(method, &path, Some(&stranger.token), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    let (status, _) = app.get("/api/interviews/rooms", &stranger).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app.get("/api/interviews/rooms?project_id=zzz", &user).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_locs(&body), [json!(["query", "project_id"])]);
    let (status, body) = app.get("/api/interviews/rooms/zzz", &user).await;
    assert_eq!(
        (status, error_types(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, vec!["uuid_parsing".to_owned()])
    );
    let (status, _) = app.call(Method::GET, "/api/interviews/rooms", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

#[tokio::test]
async fn join_info_is_public_exact_and_names_no_owner() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (_, made) = rooms(
        &app,
        &user,
        json!({ "room_name": "Trip chat", "language": "fr", "max_duration_minutes": 15 }),
    )
    .await;
    let token = made[0]["access_token"].as_str().unwrap();
    let response = app
        .client
        .get(app.url(&format!("/api/interviews/join/{token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(!text.contains(&user.email), "{text}");
    let info: Value = serde_json::from_str(&text).unwrap();
    let object = info.as_object().unwrap();
    assert_eq!(object.len(), 7, "{info}");
    assert_eq!(info["room_name"], "Trip chat");
    assert_eq!(info["max_duration_minutes"], 15);
    assert_eq!(info["status"], "pending");
    assert_eq!(info["project_name"], "Trip planning");
    assert_eq!(info["language"], "fr");
    assert_eq!(info["topics_for_respondent"], "");
    assert!(info["expires_at"].as_str().unwrap().parse::<DateTime<Utc>>().is_ok());
    // With a slash too, and unknown links are 404 (also near-misses).
    let (status, _) = public(&app, Method::GET, &format!("/api/interviews/join/{token}/"), None).await;
    assert_eq!(status, StatusCode::OK);
    let mut wrong = token.to_owned();
    wrong.replace_range(0..1, if token.starts_with('A') { "B" } else { "A" });
    for path in [format!("/api/interviews/join/{wrong}"), "/api/interviews/join/x".into()] {
        let (status, body) = public(&app, Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert!(body["detail"].is_string());
    }
    // A link past its expiry answers with that status.
    let id = made[0]["id"].as_str().unwrap();
    set_room_time(&app, id, "expires_at", Utc::now() - chrono::Duration::minutes(1)).await;
    let (status, info) = public(&app, Method::GET, &format!("/api/interviews/join/{token}"), None).await;
    assert_eq!((status, info["status"].as_str()), (StatusCode::OK, Some("expired")));
    let (status, body) = join(&app, token, "ana@example.com").await;
    assert_eq!(status, StatusCode::GONE, "{body}");
    let (_, room) = app.get(&format!("/api/interviews/rooms/{id}"), &user).await;
    assert_eq!(room["status"], "expired");
    let (status, _) = app
        .call(
            Method::PATCH,
            &format!("/api/interviews/rooms/{id}"),
            Some(&user.token),
            Some(json!({"room_name": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::GONE);
    app.stop().await;
}

#[tokio::test]
async fn an_offline_interview_follows_the_guide_and_becomes_a_record() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, made) = rooms(
        &app,
        &user,
        json!({ "interview_guide_override": GUIDE, "topics_for_respondent": "how you plan trips" }),
    )
    .await;
    let token = made[0]["access_token"].as_str().unwrap();
    // The address is what the document's `format: email` says; the page trims what is typed.
    let (status, refused) = join(&app, token, " Ana@Example.com ").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(error_locs(&refused), vec![json!(["body", "email"])], "{refused}");
    assert_eq!(refused["detail"][0]["msg"], "value is not a valid email address");
    let (status, joined) = join(&app, token, "Ana@Example.com").await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let opening = joined["message"].as_str().unwrap();
    assert!(
        opening.contains("30 minutes") && opening.contains("how you plan trips"),
        "{opening}"
    );
    assert!(opening.ends_with("What do you do for a living?"), "{opening}");
    assert_eq!(joined["transcript"].as_array().unwrap().len(), 1);
    let session = joined["session_id"].as_str().unwrap().to_owned();
    let ends: DateTime<Utc> = joined["ends_at"].as_str().unwrap().parse().unwrap();
    assert!((ends - Utc::now()).num_minutes() >= 29);

    // A short answer gets one neutral follow-up, then the guide goes on.
    let (status, turn) = say(&app, token, &session, "A nurse.").await;
    assert_eq!(status, StatusCode::OK, "{turn}");
    assert_eq!(turn["message"], "Could you tell me more about that?");
    assert_eq!(turn["done"], false);
    // Saying the same again is a new answer, not a resend.
    let (_, turn) = say(&app, token, &session, "A nurse.").await;
    assert_eq!(turn["message"], "How do you plan a trip?");

    // Someone else cannot take the room; the respondent can come back.
    let (status, _) = join(&app, token, "bo@example.com").await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, again) = join(&app, token, "ana@example.com").await;
    assert_eq!(again["session_id"], session.as_str());
    assert_eq!(again["transcript"].as_array().unwrap().len(), 5, "{again}");
    assert_eq!(again["message"], "How do you plan a trip?");
    let (status, _) = say(&app, token, "not-a-session", LONG[1]).await;
    assert_eq!(status, StatusCode::CONFLICT);

    let (_, turn) = say_once(&app, token, &session, LONG[1], "m-2").await;
    assert_eq!(turn["message"], "What annoys you most about booking?");
    // An answer sent again with its id (its reply lost on the way) is stored once.
    let (_, again) = say_once(&app, token, &session, LONG[1], "m-2").await;
    assert_eq!(again["message"], "What annoys you most about booking?");
    let (_, closing) = say(&app, token, &session, LONG[2]).await;
    assert_eq!(closing["done"], true, "{closing}");
    assert!(closing["message"].as_str().unwrap().contains("last question"));

    let (status, body) = say(&app, token, &session, "one more thing").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (_, room) = app
        .get(
            &format!("/api/interviews/rooms/{}", made[0]["id"].as_str().unwrap()),
            &user,
        )
        .await;
    assert_eq!(room["status"], "completed");
    assert_eq!(room["respondent_email"], "ana@example.com");
    assert!(room["started_at"].is_string() && room["completed_at"].is_string());
    let record_id = room["record_id"].as_str().expect("record").to_owned();
    let record = app.wait_finished(&user, &record_id).await;
    assert_eq!(record["project_id"], project);
    assert_eq!(record["source_format"], "interview");
    let utterances = record["utterances"].as_array().unwrap();
    let respondent: Vec<&str> = utterances
        .iter()
        .filter(|u| u["is_respondent"] == true)
        .map(|u| u["text"].as_str().unwrap())
        .collect();
    assert_eq!(respondent, ["A nurse.", "A nurse.", LONG[1], LONG[2]]);
    assert_eq!(utterances.len(), 9, "{record}");
    for utterance in utterances {
        let respondent = utterance["is_respondent"] == true;
        assert_eq!(
            utterance["speaker"],
            if respondent { "Respondent" } else { "Interviewer" }
        );
    }
    assert_eq!(record["respondents_count"], 1);
    let (status, info) = public(&app, Method::GET, &format!("/api/interviews/join/{token}"), None).await;
    assert_eq!((status, info["status"].as_str()), (StatusCode::OK, Some("completed")));
    // Leaving a completed interview answers the same, and it stays one record.
    let (status, left) = public(
        &app,
        Method::POST,
        &format!("/api/interviews/join/{token}/leave"),
        Some(json!({ "session_id": session })),
    )
    .await;
    assert_eq!((status, left["status"].as_str()), (StatusCode::OK, Some("completed")));
    let (_, records) = app.get(&format!("/projects/{project}/records"), &user).await;
    assert_eq!(records.as_array().map(Vec::len), Some(1), "{records}");
    app.stop().await;
}

#[tokio::test]
async fn leaving_early_or_running_out_of_time_keeps_the_transcript() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (_, made) = rooms(&app, &user, json!({ "count": 2, "interview_guide_override": GUIDE })).await;
    // Leave after one answer.
    let token = made[0]["access_token"].as_str().unwrap();
    let (_, joined) = join(&app, token, "ana@example.com").await;
    let session = joined["session_id"].as_str().unwrap();
    say(&app, token, session, LONG[0]).await;
    let (status, left) = public(
        &app,
        Method::POST,
        &format!("/api/interviews/join/{token}/leave"),
        Some(json!({ "session_id": session })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left["status"], "completed");
    let (_, room) = app
        .get(
            &format!("/api/interviews/rooms/{}", made[0]["id"].as_str().unwrap()),
            &user,
        )
        .await;
    let record = app.wait_finished(&user, room["record_id"].as_str().unwrap()).await;
    assert_eq!(record["utterances"].as_array().unwrap().len(), 4, "{record}");
    assert_eq!(record["utterances"][1]["text"], LONG[0]);

    // The respondent goes away; when the time is up the watch closes the interview.
    let token = made[1]["access_token"].as_str().unwrap();
    let id = made[1]["id"].as_str().unwrap();
    let (_, joined) = join(&app, token, "bo@example.com").await;
    let session = joined["session_id"].as_str().unwrap().to_owned();
    say(&app, token, &session, LONG[0]).await;
    set_room_time(&app, id, "started_at", Utc::now() - chrono::Duration::minutes(31)).await;
    let room = eventually(Duration::from_secs(15), "not closed", async || {
        let (_, room) = app.get(&format!("/api/interviews/rooms/{id}"), &user).await;
        if room["status"] == "completed" {
            Ok(room)
        } else {
            Err(room)
        }
    })
    .await;
    let record = app.wait_finished(&user, room["record_id"].as_str().unwrap()).await;
    let last = record["utterances"].as_array().unwrap().last().unwrap().clone();
    assert!(last["text"].as_str().unwrap().contains("end of our time"), "{last}");
    let (status, _) = say(&app, token, &session, LONG[1]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    app.stop().await;
}

#[tokio::test]
async fn the_join_flow_refuses_bad_input() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (_, made) = rooms(&app, &user, json!({})).await;
    let token = made[0]["access_token"].as_str().unwrap();
    let base = format!("/api/interviews/join/{token}");
    for (path, body, loc) in [
        (base.clone(), json!({}), json!(["body", "email"])),
        (
            base.clone(),
            json!({ "email": "not an address" }),
            json!(["body", "email"]),
        ),
        (base.clone(), json!({ "email": 5 }), json!(["body", "email"])),
        (
            format!("{base}/messages"),
            json!({ "session_id": "s" }),
            json!(["body", "text"]),
        ),
        (
            format!("{base}/messages"),
            json!({ "session_id": "s", "text": "   " }),
            json!(["body", "text"]),
        ),
        (
            format!("{base}/leave"),
            json!({ "session_id": 1 }),
            json!(["body", "session_id"]),
        ),
    ] {
        let (status, error) = public(&app, Method::POST, &path, Some(body.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {error}");
        assert_validation_body(&error);
        assert!(error_locs(&error).contains(&loc), "{body}: {error}");
    }
    // Before anyone joined there is no session to speak in.
    let (status, _) = say(&app, token, "guess", "hello there").await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = say(&app, "unknown", "guess", "hello there").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn public_endpoints_are_rate_limited_per_address() {
    let app = TestApp::start_with(|settings| {
        settings.server.public_rate_per_minute = 6;
        settings.server.public_rate_burst = 3;
    })
    .await;
    let user = app.user().await;
    let (_, made) = rooms(&app, &user, json!({})).await;
    let path = format!("/api/interviews/join/{}", made[0]["access_token"].as_str().unwrap());
    for _ in 0..3 {
        let (status, _) = public(&app, Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::OK);
    }
    let response = app
        .client
        .get(app.url("/api/interviews/join/guess"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=10).contains(&wait), "{wait}");
    let body: Value = response.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("Too many requests"));
    let (status, _) = public(&app, Method::GET, &format!("/interview/{}", "guess"), None).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // The researcher's own endpoints are not held up.
    let (status, _) = app.get("/api/interviews/rooms", &user).await;
    assert_eq!(status, StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn the_respondent_page_is_escaped_localised_and_locked_down() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (_, made) = rooms(
        &app,
        &user,
        json!({ "room_name": "<script>alert(1)</script>", "language": "ru", "topics_for_respondent": "\"quoted\" & <b>" }),
    )
    .await;
    let token = made[0]["access_token"].as_str().unwrap();
    let response = app
        .client
        .get(app.url(&format!("/interview/{token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/html"));
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["cache-control"], "no-store");
    let html = response.text().await.unwrap();
    assert!(html.contains("lang=\"ru\""), "{html}");
    assert!(!html.contains("<script>alert(1)"), "{html}");
    assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"), "{html}");
    assert!(!html.contains("<b>") && !html.contains(&user.email));
    assert!(
        !html.contains(" style=") && !html.contains("<script>"),
        "no inline script or style"
    );
    assert!(html.contains("id=\"email\""));
    for (asset, kind) in [("interview.js", "text/javascript"), ("interview.css", "text/css")] {
        let response = app
            .client
            .get(app.url(&format!("/interview/assets/{asset}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with(kind));
        assert!(
            !response.text().await.unwrap().contains("://"),
            "{asset} makes no external requests"
        );
    }
    let response = app
        .client
        .get(app.url("/interview/unknown-link"))
        .header("accept-language", "de-DE,de;q=0.9")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(response.text().await.unwrap().contains("lang=\"de\""));
    // A cancelled room's page says so and offers no form.
    app.delete(
        &format!("/api/interviews/rooms/{}", made[0]["id"].as_str().unwrap()),
        &user,
    )
    .await;
    let html = app
        .client
        .get(app.url(&format!("/interview/{token}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("data-state=\"cancelled\"") && !html.contains("id=\"email\""),
        "{html}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_model_interviewer_gets_the_study_and_the_conversation_and_closes_the_interview() {
    let (addr, stub) = model_stub("Hello! Thanks for joining. What do you do for a living?").await;
    let app = model_app(addr).await;
    let user = app.user().await;
    let (_, made) = rooms(
        &app,
        &user,
        json!({ "interview_guide_override": GUIDE, "research_goals_override": "Learn how people book trips",
                "language": "es", "topics_for_respondent": "viajes" }),
    )
    .await;
    let token = made[0]["access_token"].as_str().unwrap();
    let (status, joined) = join(&app, token, "ana@example.com").await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(
        joined["message"],
        "Hello! Thanks for joining. What do you do for a living?"
    );
    let session = joined["session_id"].as_str().unwrap().to_owned();
    let requests = stub.chat_requests();
    let system = requests[0]["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(
        system.contains("in Spanish") && system.contains("How do you plan a trip?"),
        "{system}"
    );
    assert!(system.contains("Learn how people book trips") && system.contains("viajes"));
    assert!(system.contains("one question per turn"));

    // The model fails: the answer is kept, and sending it again goes on from there.
    stub.set(Mode::Fail(500));
    let (status, body) = say(&app, token, &session, LONG[0]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (_, rejoined) = join(&app, token, "ana@example.com").await;
    assert_eq!(
        rejoined["transcript"].as_array().unwrap().len(),
        2,
        "the answer is stored: {rejoined}"
    );
    stub.set(Mode::Answer {
        text: "Thank you, that is all I wanted to ask. [END]".into(),
        gap: Duration::ZERO,
    });
    let (status, closing) = say(&app, token, &session, LONG[0]).await;
    assert_eq!(status, StatusCode::OK, "{closing}");
    assert_eq!(closing["message"], "Thank you, that is all I wanted to ask.");
    assert_eq!(closing["done"], true);
    let last = stub.chat_requests().last().unwrap().clone();
    let messages = last["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["system", "assistant", "user"],
        "the conversation, once each: {last}"
    );
    assert_eq!(messages[2]["content"], LONG[0]);

    let (_, room) = app
        .get(
            &format!("/api/interviews/rooms/{}", made[0]["id"].as_str().unwrap()),
            &user,
        )
        .await;
    assert_eq!(room["status"], "completed");
    let record = app.wait_finished(&user, room["record_id"].as_str().unwrap()).await;
    let texts: Vec<(&str, bool)> = record["utterances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["text"].as_str().unwrap(), u["is_respondent"] == true))
        .collect();
    assert_eq!(
        texts,
        [
            ("Hello! Thanks for joining. What do you do for a living?", false),
            (LONG[0], true),
            ("Thank you, that is all I wanted to ask.", false)
        ]
    );
    app.stop().await;
}

#[tokio::test]
async fn a_turn_streams_as_server_sent_events() {
    let (addr, _stub) = model_stub("Tell me about the last trip you planned.").await;
    let app = model_app(addr).await;
    let user = app.user().await;
    let (_, made) = rooms(&app, &user, json!({})).await;
    let token = made[0]["access_token"].as_str().unwrap();
    let (_, joined) = join(&app, token, "ana@example.com").await;
    let response = app
        .client
        .post(app.url(&format!("/api/interviews/join/{token}/messages")))
        .header("accept", "text/event-stream")
        .json(&json!({ "session_id": joined["session_id"], "text": LONG[0] }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = response.text().await.unwrap();
    let deltas = text.matches("event: delta").count();
    assert!(deltas >= 5, "word by word: {text}");
    let done = text
        .split("event: done\ndata: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("a done event");
    let done: Value = serde_json::from_str(done).unwrap();
    assert_eq!(done["message"], "Tell me about the last trip you planned.");
    assert_eq!(done["done"], false);
    app.stop().await;
}
