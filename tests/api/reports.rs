//! Project reports, and spec operation 1: PUT /projects/{project_id}/reports/{report_id}.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::reports::wait_generation;
use crate::support::{TestApp, assert_unknown_references, assert_validation_body, error_locs, error_types};

/// The report fields of the interface document: (name, JSON type, nullable).
const REPORT_FIELDS: &[(&str, &str, bool)] = &[
    ("id", "string", false),
    ("prompts_ids", "array", false),
    ("records_ids", "array", false),
    ("project_id", "string", false),
    ("category", "string", true),
    ("title", "string", false),
    ("context", "string", true),
    ("context_expand", "string", true),
    ("status", "string", false),
    ("content", "string", true),
    ("is_public", "boolean", false),
    ("is_archived", "boolean", false),
    ("is_deleted", "boolean", false),
    ("preset_id", "string", true),
    ("report_language", "string", true),
    ("created_at", "string", false),
    ("updated_at", "string", false),
];

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every field present with its type; nullable ones may be null; nothing else but the
/// optional `project_name`.
pub fn assert_report_shape(report: &Value) {
    let object = report.as_object().expect("report is an object");
    for (name, kind, nullable) in REPORT_FIELDS {
        let value = object
            .get(*name)
            .unwrap_or_else(|| panic!("report lacks {name}: {report}"));
        let actual = json_type(value);
        assert!(
            actual == *kind || (*nullable && actual == "null"),
            "{name} is {actual}: {report}"
        );
    }
    for item in report["prompts_ids"]
        .as_array()
        .into_iter()
        .chain(report["records_ids"].as_array())
        .flatten()
    {
        assert!(item.is_string(), "{report}");
    }
    for key in object.keys() {
        assert!(
            key == "project_name" || REPORT_FIELDS.iter().any(|(n, _, _)| n == key),
            "unexpected field {key}"
        );
    }
    if let Some(name) = object.get("project_name") {
        assert!(name.is_string() || name.is_null());
    }
    assert!(!object.contains_key("reasoning_mode"), "reasoning_mode is request-only");
    for stamp in ["created_at", "updated_at"] {
        let text = report[stamp].as_str().unwrap_or_default();
        assert!(chrono::DateTime::parse_from_rfc3339(text).is_ok(), "{stamp} {text}");
        assert!(text.ends_with('Z'), "{stamp} is UTC: {text}");
    }
}

#[tokio::test]
async fn create_queues_a_report_with_the_presets_prompts_and_a_job() {
    // No report workers: the job row must be there, waiting.
    let app = TestApp::start_with(|settings| settings.jobs.report_workers = Some(0)).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Checkout interviews").await;
    let (_, presets) = app.get("/presets/system/", &ann).await;
    let preset = &presets[0];
    let body = json!({"title": "Findings", "preset_id": preset["id"], "report_language": "de", "reasoning_mode": "deep",
        "context": "B2B buyers", "category": "synthesis"});
    let (status, report) = app.post(&format!("/projects/{project}/reports"), &ann, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    assert_report_shape(&report);
    assert_eq!(report["status"], "queued");
    assert_eq!(report["prompts_ids"], preset["prompt_ids"]);
    assert_eq!(report["records_ids"], json!([]));
    assert_eq!(report["project_name"], "Checkout interviews");
    assert_eq!(report["report_language"], "de");
    assert_eq!(report["context"], "B2B buyers");
    assert_eq!(report["content"], Value::Null);

    // The generation job is a row, written with the report.
    let (jobs,) = count_jobs(&app, report["id"].as_str().unwrap_or_default()).await;
    assert_eq!(jobs, 1);

    let (status, list) = app.get(&format!("/projects/{project}/reports"), &ann).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects[0]["total_reports_count"], 1);
    app.stop().await;
}

async fn count_jobs(app: &TestApp, report_id: &str) -> (i64,) {
    let id = uuid::Uuid::parse_str(report_id).expect("uuid");
    if app.database_url.starts_with("sqlite") {
        let pool = sqlx::SqlitePool::connect(&app.database_url).await.expect("sqlite");
        sqlx::query_as("SELECT COUNT(*) FROM jobs WHERE subject_id = $1 AND status = 'queued'")
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("count")
    } else {
        let pool = sqlx::PgPool::connect(&app.database_url).await.expect("postgres");
        sqlx::query_as("SELECT COUNT(*) FROM jobs WHERE subject_id = $1 AND status = 'queued'")
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("count")
    }
}

#[tokio::test]
async fn create_needs_prompts_or_a_preset_and_known_references() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "P").await;
    let path = format!("/projects/{project}/reports");
    // Neither prompts nor a preset: the schema's anyOf, reported against the first choice.
    let (status, body) = app.post(&path, &ann, json!({"title": "x"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["missing"]);
    assert_eq!(error_locs(&body), [json!(["body", "prompts_ids"])]);
    let (status, body) = app.post(&path, &ann, json!({"title": "x", "prompts_ids": []})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["too_short"]);

    // References the caller cannot see are not found, whichever kind they are: a 409
    // naming each and its place.
    let unknown = uuid::Uuid::new_v4();
    let (_, prompts) = app.get("/prompts/", &ann).await;
    let prompt = prompts[0]["id"].clone();
    for (body, kind, place) in [
        (
            json!({"title": "x", "prompts_ids": [prompt, unknown]}),
            "prompt",
            "prompts_ids[1]",
        ),
        (
            json!({"title": "x", "prompts_ids": [prompt], "records_ids": [unknown]}),
            "record",
            "records_ids[0]",
        ),
        (json!({"title": "x", "preset_id": unknown}), "preset", "preset_id"),
    ] {
        let (status, answer) = app.post(&path, &ann, body).await;
        assert_unknown_references(status, &answer, &[place]);
        let detail = answer["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(&format!("{kind} ")) && detail.contains(&unknown.to_string()),
            "{detail}"
        );
    }
    let (_, reports) = app.get(&path, &ann).await;
    assert_eq!(reports, json!([]), "nothing was written");

    let (status, body) = app
        .post(
            &path,
            &ann,
            json!({"title": "", "prompts_ids": "x", "reasoning_mode": "slow", "report_language": "english"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_validation_body(&body);
    let types = error_types(&body);
    for expected in ["string_too_short", "list_type", "enum", "string_too_long"] {
        assert!(types.contains(&expected.to_owned()), "{expected} in {body}");
    }
    // The project is told first, and then the references in order, whatever else is
    // wrong too.
    let other = app.user().await;
    let elsewhere = app.project(&other, "Not Ann's").await;
    for project in ["00000000-0000-4000-8000-000000000000", elsewhere.as_str()] {
        let (status, answer) = app
            .post(
                &format!("/projects/{project}/reports"),
                &ann,
                json!({"title": "x", "prompts_ids": [unknown], "records_ids": [unknown], "preset_id": unknown}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(answer["detail"], "Project not found", "{answer}");
    }
    // Every unknown reference is told at once.
    for (body, places) in [
        (
            json!({"title": "x", "prompts_ids": [unknown], "records_ids": [unknown], "preset_id": unknown}),
            vec!["prompts_ids[0]", "records_ids[0]", "preset_id"],
        ),
        (
            json!({"title": "x", "prompts_ids": [prompt], "records_ids": [unknown], "preset_id": unknown}),
            vec!["records_ids[0]", "preset_id"],
        ),
    ] {
        let (status, answer) = app.post(&path, &ann, body).await;
        assert_unknown_references(status, &answer, &places);
    }
    let (_, reports) = app.get(&path, &ann).await;
    assert_eq!(reports, json!([]), "nothing was written");
    app.stop().await;
}

#[tokio::test]
async fn update_answers_the_whole_report_and_follows_the_omitted_and_null_rules() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Pricing study").await;
    let report = app.report(&ann, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    let (_, prompts) = app.get("/prompts/", &ann).await;
    let prompt = prompts[3]["id"].clone();

    let everything = json!({
        "prompts_ids": [prompt], "records_ids": [], "category": "pricing", "title": "Pricing findings",
        "context": "SMB owners", "context_expand": "Interviews in May", "status": "completed",
        "content": "# Findings\n\nThey compare prices weekly.", "is_public": true, "is_archived": true,
        "is_deleted": false, "preset_id": null, "report_language": "fr", "reasoning_mode": "balanced"
    });
    let (status, updated) = app.put(&path, &ann, everything).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_report_shape(&updated);
    assert_eq!(updated["prompts_ids"], json!([prompt]));
    assert_eq!(updated["category"], "pricing");
    assert_eq!(updated["title"], "Pricing findings");
    assert_eq!(updated["context_expand"], "Interviews in May");
    assert_eq!(updated["status"], "completed");
    assert_eq!(updated["content"], "# Findings\n\nThey compare prices weekly.");
    assert_eq!(updated["is_public"], true);
    assert_eq!(updated["is_archived"], true);
    assert_eq!(updated["preset_id"], Value::Null);
    assert_eq!(updated["report_language"], "fr");
    assert_eq!(updated["project_name"], "Pricing study");

    // Omitted fields stay as they are.
    let (status, same) = app.put(&path, &ann, json!({})).await;
    assert_eq!(status, StatusCode::OK);
    for (name, _, _) in REPORT_FIELDS.iter().filter(|(n, _, _)| *n != "updated_at") {
        assert_eq!(same[name], updated[name], "{name} changed by an empty update");
    }

    // null clears nullable fields and leaves the others unchanged.
    let nulls: serde_json::Map<String, Value> = REPORT_FIELDS
        .iter()
        .filter(|(n, _, _)| !["id", "project_id", "created_at", "updated_at"].contains(n))
        .map(|(n, _, _)| ((*n).to_owned(), Value::Null))
        .chain([("reasoning_mode".to_owned(), Value::Null)])
        .collect();
    let (status, cleared) = app.put(&path, &ann, Value::Object(nulls)).await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    for (name, _, nullable) in REPORT_FIELDS {
        if ["id", "project_id", "created_at", "updated_at"].contains(name) {
            continue;
        }
        if *nullable {
            assert_eq!(cleared[name], Value::Null, "{name} not cleared");
        } else {
            assert_eq!(cleared[name], updated[name], "{name} changed by null");
        }
    }
    assert!(cleared["updated_at"].as_str() >= updated["updated_at"].as_str());

    // What PUT answered is what GET reads.
    let (_, read) = app.get(&path, &ann).await;
    assert_eq!(read, cleared);
    app.stop().await;
}

#[tokio::test]
async fn update_reports_each_wrong_field_with_its_pydantic_type() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "P").await;
    let report = app.report(&ann, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    // Its generation settled first: it would change the report under the comparison below.
    wait_generation(&app, &ann, &path, &["completed", "failed"]).await;
    let cases = [
        ("prompts_ids", json!("abc"), "list_type", json!(["body", "prompts_ids"])),
        (
            "prompts_ids",
            json!(["not-a-uuid"]),
            "uuid_parsing",
            json!(["body", "prompts_ids", 0]),
        ),
        ("records_ids", json!({}), "list_type", json!(["body", "records_ids"])),
        (
            "records_ids",
            json!([7]),
            "string_type",
            json!(["body", "records_ids", 0]),
        ),
        ("category", json!(1), "string_type", json!(["body", "category"])),
        ("title", json!(true), "string_type", json!(["body", "title"])),
        ("title", json!(""), "string_too_short", json!(["body", "title"])),
        ("context", json!([]), "string_type", json!(["body", "context"])),
        (
            "context_expand",
            json!({}),
            "string_type",
            json!(["body", "context_expand"]),
        ),
        ("status", json!(3), "string_type", json!(["body", "status"])),
        ("status", json!("done"), "enum", json!(["body", "status"])),
        ("content", json!(1.5), "string_type", json!(["body", "content"])),
        ("is_public", json!("yes"), "bool_type", json!(["body", "is_public"])),
        ("is_archived", json!(1), "bool_type", json!(["body", "is_archived"])),
        ("is_deleted", json!([]), "bool_type", json!(["body", "is_deleted"])),
        (
            "preset_id",
            json!("preset"),
            "uuid_parsing",
            json!(["body", "preset_id"]),
        ),
        (
            "report_language",
            json!(12),
            "string_type",
            json!(["body", "report_language"]),
        ),
        (
            "report_language",
            json!("EN"),
            "string_pattern_mismatch",
            json!(["body", "report_language"]),
        ),
        (
            "reasoning_mode",
            json!("turbo"),
            "enum",
            json!(["body", "reasoning_mode"]),
        ),
        (
            "reasoning_mode",
            json!(false),
            "string_type",
            json!(["body", "reasoning_mode"]),
        ),
    ];
    for (field, value, kind, loc) in cases {
        let (status, body) = app.put(&path, &ann, json!({ field: value })).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{field}={value}: {body}");
        assert_validation_body(&body);
        assert_eq!(error_types(&body), [kind], "{field}={value}: {body}");
        assert_eq!(error_locs(&body), [loc], "{field}={value}: {body}");
    }

    // Several wrong fields: all reported, in field order, and nothing changed.
    let (_, before) = app.get(&path, &ann).await;
    let (status, body) = app
        .put(
            &path,
            &ann,
            json!({"title": 1, "is_public": "no", "status": "x", "content": "fine"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_locs(&body),
        [
            json!(["body", "title"]),
            json!(["body", "status"]),
            json!(["body", "is_public"])
        ]
    );
    let (_, after) = app.get(&path, &ann).await;
    assert_eq!(before, after);
    app.stop().await;
}

#[tokio::test]
async fn update_refuses_bad_json_bad_paths_and_strangers() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "P").await;
    let report = app.report(&ann, &project).await;
    let path = format!("/projects/{project}/reports/{report}");

    let (status, body) = app
        .call_raw(
            Method::PUT,
            &path,
            &ann.token,
            "application/json",
            b"{\"title\": ".to_vec(),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["json_invalid"]);
    assert_eq!(error_locs(&body), [json!(["body", 10])]);

    for non_object in ["[]", "\"title\"", "42", "null"] {
        let (status, body) = app
            .call_raw(Method::PUT, &path, &ann.token, "application/json", non_object.into())
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{non_object}");
        assert_eq!(error_types(&body), ["model_attributes_type"], "{non_object}");
        assert_eq!(error_locs(&body), [json!(["body"])]);
    }
    let (status, body) = app
        .call_raw(Method::PUT, &path, &ann.token, "application/json", Vec::new())
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["missing"]);

    let (status, body) = app
        .call_raw(Method::PUT, &path, &ann.token, "text/plain", b"{}".to_vec())
        .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(body["detail"].is_string());

    // A bad UUID in each path parameter, and in both together with a bad body.
    let (status, body) = app
        .put(&format!("/projects/nope/reports/{report}"), &ann, json!({}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_locs(&body), [json!(["path", "project_id"])]);
    assert_eq!(error_types(&body), ["uuid_parsing"]);
    let (status, body) = app
        .put(&format!("/projects/{project}/reports/123"), &ann, json!({}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_locs(&body), [json!(["path", "report_id"])]);
    let (status, body) = app.put("/projects/a/reports/b", &ann, json!({"title": 5})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_locs(&body),
        [
            json!(["path", "project_id"]),
            json!(["path", "report_id"]),
            json!(["body", "title"])
        ]
    );

    // No token, a wrong token: 401 before anything else is looked at.
    let (status, body) = app.call(Method::PUT, &path, None, Some(json!({"title": 5}))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body["detail"].is_string());
    let (status, _) = app.call(Method::PUT, &path, Some("ins_wrong"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Another user's report, an unknown one, and a report under the wrong project.
    let bob = app.user().await;
    let (status, body) = app.put(&path, &bob, json!({"title": "mine now"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["detail"].is_string());
    let other_project = app.project(&ann, "Other").await;
    let (status, _) = app
        .put(&format!("/projects/{other_project}/reports/{report}"), &ann, json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .put(
            &format!("/projects/{project}/reports/{}", uuid::Uuid::new_v4()),
            &ann,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // With a trailing slash too.
    let (status, _) = app.put(&format!("{path}/"), &ann, json!({"title": "slash"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, read) = app.get(&path, &ann).await;
    assert_eq!(read["title"], "slash");
    app.stop().await;
}

#[tokio::test]
async fn delete_archive_and_public_reports() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "P").await;
    let kept = app.report(&ann, &project).await;
    let archived = app.report(&ann, &project).await;
    let deleted = app.report(&ann, &project).await;
    let list = format!("/projects/{project}/reports");
    app.put(&format!("{list}/{archived}"), &ann, json!({"is_archived": true}))
        .await;
    let (status, _) = app.delete(&format!("{list}/{deleted}"), &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let ids = |body: &Value| -> Vec<String> {
        body.as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect()
    };
    let (_, plain) = app.get(&list, &ann).await;
    assert_eq!(ids(&plain), std::slice::from_ref(&kept));
    let (_, with_archived) = app.get(&format!("{list}?archived=true"), &ann).await;
    assert_eq!(ids(&with_archived), [archived.clone(), kept.clone()]);
    let (status, body) = app.get(&format!("{list}?archived=perhaps"), &ann).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_locs(&body), [json!(["query", "archived"])]);
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects[0]["total_reports_count"], 2);

    // A deleted report can still be read and restored by its owner.
    let (status, gone) = app.get(&format!("{list}/{deleted}"), &ann).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(gone["is_deleted"], true);

    // Public only when public and not deleted; no owner details.
    let public = format!("/projects/public/{project}/reports/{kept}");
    let (status, _) = app.call(Method::GET, &public, None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.put(
        &format!("{list}/{kept}"),
        &ann,
        json!({"is_public": true, "content": "# Shared"}),
    )
    .await;
    let (status, shared) = app.call(Method::GET, &public, None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shared["content"], "# Shared");
    assert!(shared.get("project_name").is_none());
    assert!(!shared.to_string().contains(&ann.email));
    app.put(&format!("{list}/{kept}"), &ann, json!({"is_deleted": true}))
        .await;
    let (status, _) = app.call(Method::GET, &public, None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .call(
            Method::GET,
            &format!("/projects/public/{project}/reports/{}", uuid::Uuid::new_v4()),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}
