//! Projects, and spec operation 5: GET /projects/.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, assert_validation_body, error_locs, error_types};

const PROJECT_FIELDS: &[(&str, &str)] = &[
    ("id", "string"),
    ("name", "string"),
    ("description", "string"),
    ("status", "string"),
    ("records_count", "integer"),
    ("total_reports_count", "integer"),
    ("created_at", "string"),
    ("research_goals", "string"),
    ("interview_guide", "string"),
    ("owner_email", "string"),
    // API.md adds the project's workspace to the interface document's fields.
    ("workspace_id", "string"),
];

fn assert_project_shape(project: &Value) {
    let object = project.as_object().expect("project is an object");
    assert_eq!(
        object.len(),
        PROJECT_FIELDS.len(),
        "exactly the spec's fields: {project}"
    );
    for (name, kind) in PROJECT_FIELDS {
        let value = &project[*name];
        let ok = match *kind {
            "integer" => value.is_i64() || value.is_u64(),
            _ => value.is_string(),
        };
        assert!(ok, "{name} should be {kind}: {project}");
    }
    assert!(uuid::Uuid::parse_str(project["id"].as_str().unwrap_or_default()).is_ok());
    assert!(chrono::DateTime::parse_from_rfc3339(project["created_at"].as_str().unwrap_or_default()).is_ok());
}

#[tokio::test]
async fn list_returns_the_users_projects_newest_first_with_counts() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, empty) = app.get("/projects/", &ann).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(empty, json!([]));

    let first = app.project(&ann, "First").await;
    let second = app
        .post(
            "/projects/",
            &ann,
            json!({"name": "Second", "description": "Churn", "research_goals": "Why they leave",
            "interview_guide": "1. Tell me about the last time..."}),
        )
        .await
        .1["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    app.report(&ann, &first).await;
    let deleted = app.report(&ann, &first).await;
    app.delete(&format!("/projects/{first}/reports/{deleted}"), &ann).await;

    for path in ["/projects/", "/projects"] {
        let (status, list) = app.get(path, &ann).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        let items = list.as_array().expect("array");
        assert_eq!(items.len(), 2);
        items.iter().for_each(assert_project_shape);
        assert_eq!(items[0]["id"], second.as_str());
        assert_eq!(items[1]["id"], first.as_str());
        assert_eq!(items[0]["research_goals"], "Why they leave");
        assert_eq!(items[0]["owner_email"], ann.email.as_str());
        assert_eq!(items[0]["status"], "New");
        assert_eq!(items[1]["total_reports_count"], 1, "deleted reports do not count");
        assert_eq!(items[1]["records_count"], 0);
    }

    let (status, body) = app.call(Method::GET, "/projects/", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].is_string());
    let (status, _) = app.call(Method::GET, "/projects/", Some("ins_not-a-token"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let bob = app.user().await;
    let (_, bobs) = app.get("/projects/", &bob).await;
    assert_eq!(bobs, json!([]));
    app.stop().await;
}

#[tokio::test]
async fn create_read_update_and_delete_a_project() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let id = app.project(&ann, "Onboarding").await;
    let path = format!("/projects/{id}");

    let (status, opened) = app.get(&path, &ann).await;
    assert_eq!(status, StatusCode::OK);
    assert_project_shape(&opened);
    assert_eq!(opened["status"], "Opened", "opening a New project marks it Opened");

    let (status, updated) = app
        .put(
            &path,
            &ann,
            json!({"name": "Onboarding v2", "status": "Closed", "description": null}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["name"], "Onboarding v2");
    assert_eq!(updated["status"], "Closed");
    assert_eq!(updated["description"], "", "null leaves a non-nullable field unchanged");

    let (status, body) = app
        .put(
            &path,
            &ann,
            json!({"name": "", "status": "Archived", "research_goals": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_validation_body(&body);
    assert_eq!(error_types(&body), ["string_too_short", "enum", "string_type"]);

    let (status, body) = app.post("/projects/", &ann, json!({"description": 5})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_locs(&body),
        [json!(["body", "name"]), json!(["body", "description"])]
    );
    assert_eq!(error_types(&body), ["missing", "string_type"]);

    let report = app.report(&ann, &id).await;
    let (status, _) = app.delete(&path, &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&path, &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get(&format!("{path}/reports/{report}"), &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.delete(&path, &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// The list is served from memory while current: every change it shows must reach the
/// next list, also when another instance on the same database made the change.
#[tokio::test]
async fn the_list_shows_every_change_at_once_from_any_instance() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let id = app.project(&ann, "First").await;
    let list = |app: &TestApp| {
        let ann = ann.clone();
        let path = app.url("/projects/");
        let client = app.client.clone();
        async move {
            let response = client.get(path).bearer_auth(&ann.token).send().await.expect("sent");
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(response.headers()["content-type"], "application/json");
            response.json::<Value>().await.expect("json")
        }
    };
    assert_eq!(list(&app).await[0]["name"], "First");

    app.put(&format!("/projects/{id}"), &ann, json!({"name": "Renamed"}))
        .await;
    assert_eq!(list(&app).await[0]["name"], "Renamed");
    app.get(&format!("/projects/{id}"), &ann).await;
    assert_eq!(list(&app).await[0]["status"], "Opened");
    let report = app.report(&ann, &id).await;
    assert_eq!(list(&app).await[0]["total_reports_count"], 1);
    app.delete(&format!("/projects/{id}/reports/{report}"), &ann).await;
    assert_eq!(list(&app).await[0]["total_reports_count"], 0);
    app.put(
        &format!("/projects/{id}/reports/{report}"),
        &ann,
        json!({"is_deleted": false}),
    )
    .await;
    assert_eq!(list(&app).await[0]["total_reports_count"], 1);

    // A second instance on the same database writes; the first one's list follows.
    let mut settings = insight::Settings::for_database(&app.database_url);
    settings.storage.db_max_connections = 2;
    let store = insight::Store::connect(&app.database_url, 2)
        .await
        .expect("second store");
    let other = insight::Server::start(settings, store).await.expect("second instance");
    let other_url = format!("http://{}", other.addr);
    let created = app
        .client
        .post(format!("{other_url}/projects/"))
        .bearer_auth(&ann.token)
        .json(&json!({"name": "From the other instance"}))
        .send()
        .await
        .expect("sent");
    assert_eq!(created.status(), StatusCode::CREATED);
    let names: Vec<Value> = list(&app)
        .await
        .as_array()
        .expect("array")
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, [json!("From the other instance"), json!("Renamed")]);
    let deleted = app
        .client
        .delete(format!("{other_url}/projects/{id}"))
        .bearer_auth(&ann.token)
        .send()
        .await
        .expect("sent");
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(list(&app).await.as_array().map(Vec::len), Some(1));
    other.stop().await.expect("stop");

    // Another user's changes do not touch Ann's list, and his list is his own.
    let bob = app.user().await;
    app.project(&bob, "Bob's").await;
    assert_eq!(list(&app).await.as_array().map(Vec::len), Some(1));
    app.stop().await;
}
