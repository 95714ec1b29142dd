//! What holds for every endpoint: error shapes, auth, limits, trailing slashes, and the
//! operator's endpoints.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, error_types};

#[tokio::test]
async fn unknown_paths_and_methods_answer_in_the_contracts_shape() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, body) = app.get("/no/such/thing", &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body, json!({"detail": "Not Found"}));

    let response = app
        .client
        .patch(app.url("/projects/"))
        .bearer_auth(&ann.token)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let allow = response
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(allow.contains("GET") && allow.contains("POST"), "Allow: {allow}");
    let body: serde_json::Value = response.json().await.expect("json");
    assert!(body["detail"].is_string());
    app.stop().await;
}

#[tokio::test]
async fn tokens_are_checked_on_every_protected_endpoint() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let id = uuid::Uuid::new_v4();
    let protected = [
        (Method::GET, "/me".to_owned()),
        (Method::GET, "/projects/".to_owned()),
        (Method::POST, "/projects/".to_owned()),
        (Method::GET, format!("/projects/{id}")),
        (Method::PUT, format!("/projects/{id}")),
        (Method::DELETE, format!("/projects/{id}")),
        (Method::GET, format!("/projects/{id}/reports")),
        (Method::POST, format!("/projects/{id}/reports")),
        (Method::GET, format!("/projects/{id}/reports/{id}")),
        (Method::PUT, format!("/projects/{id}/reports/{id}")),
        (Method::DELETE, format!("/projects/{id}/reports/{id}")),
        (Method::GET, "/prompts/".to_owned()),
        (Method::POST, "/prompts/".to_owned()),
        (Method::PUT, format!("/prompts/{id}/")),
        (Method::GET, "/presets/".to_owned()),
        (Method::GET, "/presets/system/".to_owned()),
        (Method::POST, format!("/presets/{id}/clone/")),
    ];
    for (method, path) in &protected {
        for token in [None, Some("ins_wrong"), Some("")] {
            let mut request = app.client.request(method.clone(), app.url(path));
            if let Some(token) = token {
                request = request.header("authorization", format!("Bearer {token}"));
            }
            let response = request.json(&json!({"title": 1})).send().await.expect("sent");
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {token:?}"
            );
            assert_eq!(
                response.headers().get("www-authenticate").map(|v| v.as_bytes()),
                Some(&b"Bearer"[..])
            );
            let body: serde_json::Value = response.json().await.expect("json");
            assert!(body["detail"].is_string());
        }
    }
    // A scheme other than Bearer is refused too; the scheme's case does not matter.
    let (status, _) = app.call(Method::GET, "/me", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let response = app
        .client
        .get(app.url("/me"))
        .header("authorization", format!("Basic {}", ann.token))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = app
        .client
        .get(app.url("/me"))
        .header("authorization", format!("bearer {}", ann.token))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let me: serde_json::Value = response.json().await.expect("json");
    assert_eq!(me["email"], ann.email.as_str());
    assert_eq!(me["id"], ann.id.to_string());

    // Revoked and expired tokens stop working.
    let (info, revoked) = app
        .store
        .issue_token(ann.id, "old", insight::domain::user::TokenScope::Write, None)
        .await
        .expect("token");
    assert!(app.store.revoke_token(info.id, None).await.expect("revoke"));
    let (status, _) = app.call(Method::GET, "/me", Some(&revoked), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let past = insight::domain::now() - chrono::Duration::seconds(1);
    let (_, expired) = app
        .store
        .issue_token(ann.id, "expired", insight::domain::user::TokenScope::Write, Some(past))
        .await
        .expect("token");
    let (status, _) = app.call(Method::GET, "/me", Some(&expired), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// Token checks that arrive together share one read of the database (more than one when
/// they name more tokens than one query takes); each request still gets its own answer.
#[tokio::test]
async fn token_checks_arriving_together_each_get_their_own_answer() {
    let app = TestApp::start().await;
    let past = insight::domain::now() - chrono::Duration::seconds(1);
    let mut expected = Vec::new();
    for _ in 0..3 {
        let user = app.user().await;
        for i in 0..30 {
            let (_, token) = app
                .store
                .issue_token(user.id, "valid", insight::domain::user::TokenScope::Write, None)
                .await
                .expect("token");
            expected.push((token, Some(user.id)));
            let (info, token) = app
                .store
                .issue_token(user.id, "revoked", insight::domain::user::TokenScope::Write, None)
                .await
                .expect("token");
            assert!(app.store.revoke_token(info.id, None).await.expect("revoke"));
            expected.push((token, None));
            let (_, token) = app
                .store
                .issue_token(user.id, "expired", insight::domain::user::TokenScope::Write, Some(past))
                .await
                .expect("token");
            expected.push((token, None));
            expected.push((format!("unknown-{i}-{}", uuid::Uuid::new_v4()), None));
        }
    }
    // Each token twice, all at once.
    let checks = expected.iter().chain(expected.iter()).map(|(token, user)| async {
        let (status, body) = app.call(Method::GET, "/me", Some(token), None).await;
        (status, body, *user)
    });
    let answers = futures_util::future::join_all(checks).await;
    assert_eq!(answers.len(), 720);
    for (status, body, user) in answers {
        match user {
            Some(id) => {
                assert_eq!(status, StatusCode::OK, "{body}");
                assert_eq!(body["id"], id.to_string());
            }
            None => assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}"),
        }
    }
    app.stop().await;
}

/// The token checks keep a PostgreSQL connection while requests keep coming; when the
/// server drops it (a restart, an administrator), the check is read again on a fresh
/// connection and no request fails.
#[tokio::test]
async fn token_checks_survive_postgresql_dropping_their_connection() {
    let app = TestApp::start().await;
    if app.store.backend() != insight::store::Backend::Postgres {
        return;
    }
    let user = app.user().await;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let clients = (0..32).map(|_| async {
        let mut statuses = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            // A kept project list: the token check is the request's only read.
            statuses.push(app.call(Method::GET, "/projects/", Some(&user.token), None).await.0);
        }
        statuses
    });
    let drop_connections = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&app.database_url)
            .await
            .expect("connect");
        let dropped: Vec<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_all(&mut admin)
        .await
        .expect("terminate");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        dropped.len()
    };
    let (statuses, dropped) = tokio::join!(futures_util::future::join_all(clients), drop_connections);
    assert!(dropped >= 1, "the service's connections were dropped");
    let statuses: Vec<StatusCode> = statuses.into_iter().flatten().collect();
    assert!(statuses.len() > 50, "requests kept coming: {}", statuses.len());
    assert!(
        statuses.iter().all(|status| *status == StatusCode::OK),
        "{:?}",
        statuses
            .iter()
            .filter(|status| **status != StatusCode::OK)
            .collect::<Vec<_>>()
    );
    app.stop().await;
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_and_nothing_is_written() {
    let app = TestApp::start_with(|settings| settings.server.max_body_bytes = 4096).await;
    let ann = app.user().await;
    let big = json!({"name": "x".repeat(5000)}).to_string().into_bytes();
    let (status, body) = app
        .call_raw(Method::POST, "/projects/", &ann.token, "application/json", big)
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("4096")));
    // Streamed without a declared length: refused as it arrives.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        vec![Ok(b"{\"name\": \"".to_vec()), Ok(vec![b'y'; 8000]), Ok(b"\"}".to_vec())];
    let response = app
        .client
        .post(app.url("/projects/"))
        .bearer_auth(&ann.token)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects, json!([]));
    app.stop().await;
}

#[tokio::test]
async fn every_problem_of_a_request_is_listed_at_once() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, body) = app
        .post(
            "/presets/",
            &ann,
            json!({"title": ["no"], "prompt_ids": ["a", 5, "00000000-0000-0000-0000-000000000000"], "category": ""}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_types(&body),
        ["string_type", "uuid_parsing", "string_type", "string_too_short"]
    );
    let first = &body["detail"][0];
    assert_eq!(first["msg"], "Input should be a valid string");
    assert_eq!(first["input"], json!(["no"]));
    assert_eq!(body["detail"][3]["ctx"], json!({"min_length": 1}));
    app.stop().await;
}

#[tokio::test]
async fn operator_endpoints_answer_without_a_token() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, health) = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!((status, health), (StatusCode::OK, json!({"status": "ok"})));
    let (status, ready) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!((status, ready), (StatusCode::OK, json!({"status": "ready"})));

    app.get("/projects/", &ann).await;
    let metrics = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("http_requests_total"), "{metrics}");
    assert!(
        metrics.contains("route=\"/projects/\""),
        "requests are labelled by route template"
    );
    assert!(
        metrics.contains("http_request_duration_seconds_bucket"),
        "latency histogram"
    );
    assert!(!metrics.contains(&ann.token));
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        let heap: f64 = metrics
            .lines()
            .find_map(|line| line.strip_prefix("insight_heap_in_use_bytes "))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("no heap gauge in {metrics}"));
        // The router and its API document alone take megabytes; a wrong field would not.
        assert!(heap > 1_000_000.0, "heap in use: {heap}");
    }

    let docs = app.client.get(app.url("/docs/")).send().await.expect("sent");
    assert_eq!(docs.status(), StatusCode::OK);
    let page = docs.text().await.expect("text");
    assert!(page.contains("swagger-ui"), "{page}");
    assert!(
        !page.contains("https://"),
        "the docs page loads nothing from the internet"
    );
    let script = app
        .client
        .get(app.url("/docs/swagger-ui-bundle.js"))
        .send()
        .await
        .expect("sent");
    assert_eq!(script.status(), StatusCode::OK, "assets are served locally");
    app.stop().await;
}

#[tokio::test]
async fn readiness_fails_when_the_database_is_gone() {
    let app = TestApp::start().await;
    app.store.close().await;
    let (status, body) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body["detail"].is_string());
    let (status, _) = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(status, StatusCode::OK);
}

/// Says which backend this run tests (visible with `--nocapture`; CI prints it as a
/// heading) and checks it is the one the environment asked for.
#[tokio::test]
async fn runs_on_the_backend_the_environment_names() {
    let app = TestApp::start().await;
    let expected = crate::support::backend_name();
    let actual = match app.store.backend() {
        insight::store::Backend::Sqlite => "sqlite",
        insight::store::Backend::Postgres => "postgres",
    };
    println!("backend: {actual}");
    assert_eq!(actual, expected);
    app.stop().await;
}
