//! Isolation between users: another user's projects, reports, prompts and presets are
//! invisible. Every attempt to read, change, delete, clone or reference one answers
//! exactly as the same request about an id that does not exist, and changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{TestApp, TestUser, assert_unknown_references};

/// The ids of one user's resources.
#[derive(Clone)]
struct Ids {
    project: String,
    report: String,
    prompt: String,
    preset: String,
}

impl Ids {
    /// Ids of the same kinds that exist nowhere.
    fn unknown() -> Self {
        Self {
            project: Uuid::new_v4().to_string(),
            report: Uuid::new_v4().to_string(),
            prompt: Uuid::new_v4().to_string(),
            preset: Uuid::new_v4().to_string(),
        }
    }

    /// `text` with every one of `self`'s ids replaced by the matching id of `other`.
    fn swap_into(&self, other: &Ids, text: &str) -> String {
        text.replace(&self.project, &other.project)
            .replace(&self.report, &other.report)
            .replace(&self.prompt, &other.prompt)
            .replace(&self.preset, &other.preset)
    }
}

/// A user with a project, a report in it, an own prompt and an own preset using it.
async fn user_with_resources(app: &TestApp, name: &str) -> (TestUser, Ids) {
    let user = app.user().await;
    let project = app.project(&user, &format!("{name}'s study")).await;
    let report = app.report(&user, &project).await;
    let (status, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({"title": format!("{name}'s question"), "text": "What slows teams down?"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{prompt}");
    let prompt = prompt["id"].as_str().expect("prompt id").to_owned();
    let (status, preset) = app
        .post(
            "/presets/",
            &user,
            json!({"title": format!("{name}'s preset"), "prompt_ids": [prompt]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{preset}");
    let preset = preset["id"].as_str().expect("preset id").to_owned();
    // The owner opening a new project changes its status once; do it before any snapshot.
    let (status, _) = app.get(&format!("/projects/{project}"), &user).await;
    assert_eq!(status, StatusCode::OK);
    (
        user,
        Ids {
            project,
            report,
            prompt,
            preset,
        },
    )
}

/// Everything a user can read about his resources, as the API answers it.
async fn snapshot(app: &TestApp, user: &TestUser, ids: &Ids) -> Vec<(String, Value)> {
    let Ids {
        project,
        report,
        prompt,
        preset,
    } = ids;
    let paths = [
        "/projects/".to_owned(),
        format!("/projects/{project}"),
        format!("/projects/{project}/reports"),
        format!("/projects/{project}/reports?archived=true"),
        format!("/projects/{project}/reports/{report}"),
        "/prompts/".to_owned(),
        format!("/prompts/{prompt}/"),
        "/presets/".to_owned(),
        format!("/presets/{preset}/"),
    ];
    let mut answers = Vec::new();
    for path in paths {
        let (status, body) = app.get(&path, user).await;
        assert_eq!(status, StatusCode::OK, "owner GET {path}: {body}");
        answers.push((path, body));
    }
    answers
}

/// Asserts the not-found shape: 404 and exactly `{"detail": "<sentence>"}`.
fn assert_not_found(what: &str, status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
    let object = body
        .as_object()
        .unwrap_or_else(|| panic!("{what}: 404 body is not an object: {body}"));
    assert_eq!(object.len(), 1, "{what}: 404 body has only `detail`: {body}");
    let detail = object["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: detail is not a string: {body}"));
    assert!(!detail.is_empty(), "{what}: empty detail");
}

/// Every request on another user's resources, built from his ids (`owner`), the
/// caller's own project, and a system prompt for valid preset bodies.
fn foreign_requests(owner: &Ids, own_project: &str, system_prompt: &str) -> Vec<(Method, String, Option<Value>)> {
    let Ids {
        project,
        report,
        prompt,
        preset,
    } = owner;
    vec![
        (Method::GET, format!("/projects/{project}"), None),
        (
            Method::PUT,
            format!("/projects/{project}"),
            Some(json!({"name": "hijack"})),
        ),
        (Method::DELETE, format!("/projects/{project}"), None),
        (Method::GET, format!("/projects/{project}/reports"), None),
        (Method::GET, format!("/projects/{project}/reports?archived=true"), None),
        (
            Method::POST,
            format!("/projects/{project}/reports"),
            Some(json!({"title": "hijack", "prompts_ids": [system_prompt]})),
        ),
        (Method::GET, format!("/projects/{project}/reports/{report}"), None),
        (
            Method::PUT,
            format!("/projects/{project}/reports/{report}"),
            Some(json!({"title": "hijack"})),
        ),
        (
            Method::PUT,
            format!("/projects/{project}/reports/{report}"),
            Some(json!({"is_public": true, "is_deleted": false})),
        ),
        (Method::DELETE, format!("/projects/{project}/reports/{report}"), None),
        // The other user's report addressed through the caller's own project.
        (Method::GET, format!("/projects/{own_project}/reports/{report}"), None),
        (
            Method::PUT,
            format!("/projects/{own_project}/reports/{report}"),
            Some(json!({"title": "hijack"})),
        ),
        (
            Method::DELETE,
            format!("/projects/{own_project}/reports/{report}"),
            None,
        ),
        (Method::GET, format!("/prompts/{prompt}/"), None),
        (Method::GET, format!("/prompts/{prompt}"), None),
        (
            Method::PUT,
            format!("/prompts/{prompt}/"),
            Some(json!({"title": "x", "text": "y"})),
        ),
        (Method::DELETE, format!("/prompts/{prompt}/"), None),
        (Method::GET, format!("/presets/{preset}/"), None),
        (
            Method::PUT,
            format!("/presets/{preset}/"),
            Some(json!({"title": "x", "prompt_ids": [system_prompt]})),
        ),
        (Method::DELETE, format!("/presets/{preset}/"), None),
        (Method::POST, format!("/presets/{preset}/clone/"), None),
        (Method::POST, format!("/presets/{preset}/clone"), None),
    ]
}

fn ids_of(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|item| item["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn another_users_resources_answer_as_if_they_did_not_exist() {
    let app = TestApp::start().await;
    let (ann, ann_ids) = user_with_resources(&app, "Ann").await;
    let (bob, bob_ids) = user_with_resources(&app, "Bob").await;
    let ann_before = snapshot(&app, &ann, &ann_ids).await;
    let bob_before = snapshot(&app, &bob, &bob_ids).await;

    let (_, prompts) = app.get("/prompts/", &bob).await;
    let system_prompt = prompts
        .as_array()
        .and_then(|all| all.iter().find(|p| p["prompt_type"] == "system"))
        .and_then(|p| p["id"].as_str())
        .expect("a system prompt")
        .to_owned();

    let unknown = Ids::unknown();
    let foreign = foreign_requests(&ann_ids, &bob_ids.project, &system_prompt);
    let missing = foreign_requests(&unknown, &bob_ids.project, &system_prompt);
    assert_eq!(foreign.len(), missing.len());
    for ((method, path, body), (_, missing_path, missing_body)) in foreign.into_iter().zip(missing) {
        let what = format!("Bob {method} {path}");
        let (status, answer) = app.call(method.clone(), &path, Some(&bob.token), body).await;
        assert_not_found(&what, status, &answer);
        // Indistinguishable from an id that exists nowhere: same status, same sentence.
        let (missing_status, missing_answer) = app
            .call(method.clone(), &missing_path, Some(&bob.token), missing_body)
            .await;
        assert_eq!(missing_status, status, "{what} vs {missing_path}: {missing_answer}");
        assert_eq!(
            ann_ids.swap_into(&unknown, &answer.to_string()),
            missing_answer.to_string(),
            "{what} reveals more than {method} {missing_path}"
        );
    }

    // The public link of a report that is not public is not found either.
    let public = format!("/projects/public/{}/reports/{}", ann_ids.project, ann_ids.report);
    let (status, body) = app.call(Method::GET, &public, None, None).await;
    assert_not_found(&format!("anonymous GET {public}"), status, &body);

    // Bob's lists hold his own things and the system ones, nothing of Ann's.
    let (status, projects) = app.get("/projects/", &bob).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids_of(&projects), std::slice::from_ref(&bob_ids.project), "{projects}");
    for (path, own, foreign) in [
        ("/prompts/", &bob_ids.prompt, &ann_ids.prompt),
        ("/presets/", &bob_ids.preset, &ann_ids.preset),
    ] {
        let (status, list) = app.get(path, &bob).await;
        assert_eq!(status, StatusCode::OK);
        let ids = ids_of(&list);
        assert!(ids.contains(own), "{path} has Bob's own: {list}");
        assert!(!ids.contains(foreign), "{path} shows Ann's {foreign}: {list}");
        for item in list.as_array().into_iter().flatten() {
            assert_ne!(item["email"].as_str(), Some(ann.email.as_str()), "{path}: {item}");
        }
    }
    let (_, system) = app.get("/presets/system/", &bob).await;
    assert!(!ids_of(&system).contains(&ann_ids.preset), "{system}");

    // Nothing changed for Ann, nor for Bob (no clone, no report, no stray write).
    assert_eq!(snapshot(&app, &ann, &ann_ids).await, ann_before);
    assert_eq!(snapshot(&app, &bob, &bob_ids).await, bob_before);

    // The bodies Bob sent were valid: on his own resources they succeed.
    let own = foreign_requests(&bob_ids, &bob_ids.project, &system_prompt);
    let writes = own
        .into_iter()
        .filter(|(method, path, _)| *method == Method::PUT || path.ends_with("/clone/"));
    for (method, path, body) in writes {
        let (status, answer) = app.call(method.clone(), &path, Some(&bob.token), body).await;
        assert!(status.is_success(), "Bob {method} {path} on his own: {status} {answer}");
    }
    let (status, answer) = app
        .post(
            &format!("/projects/{}/reports", bob_ids.project),
            &bob,
            json!({"title": "own", "prompts_ids": [system_prompt]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let (status, _) = app
        .delete(
            &format!("/projects/{}/reports/{}", bob_ids.project, bob_ids.report),
            &bob,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.delete(&format!("/presets/{}/", bob_ids.preset), &bob).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.delete(&format!("/prompts/{}/", bob_ids.prompt), &bob).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.delete(&format!("/projects/{}", bob_ids.project), &bob).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Bob's own writes and deletions left Ann's data alone.
    assert_eq!(snapshot(&app, &ann, &ann_ids).await, ann_before);
    app.stop().await;
}

/// Checks an answer to a request that references another user's prompt or preset: the
/// same as for an id that exists nowhere, a 409 naming the place `loc` points at.
fn assert_refused_reference(what: &str, answer: (StatusCode, &Value), missing: (StatusCode, &Value), loc: &Value) {
    let (status, body) = answer;
    let (missing_status, missing_body) = missing;
    assert_eq!(status, missing_status, "{what}: {body} vs unknown id: {missing_body}");
    let place = match loc.as_array().map(Vec::as_slice) {
        Some([_, field]) => field.as_str().unwrap_or_default().to_owned(),
        Some([_, field, index]) => format!("{}[{index}]", field.as_str().unwrap_or_default()),
        _ => panic!("{what}: a body place: {loc}"),
    };
    assert_unknown_references(status, body, &[place.as_str()]);
}

#[tokio::test]
async fn another_users_prompts_and_presets_cannot_be_referenced() {
    let app = TestApp::start().await;
    let (ann, ann_ids) = user_with_resources(&app, "Ann").await;
    let (bob, bob_ids) = user_with_resources(&app, "Bob").await;
    let ann_before = snapshot(&app, &ann, &ann_ids).await;
    let bob_before = snapshot(&app, &bob, &bob_ids).await;
    let unknown = Ids::unknown();
    let reports = format!("/projects/{}/reports", bob_ids.project);
    let bob_report = format!("{reports}/{}", bob_ids.report);
    let bob_preset = format!("/presets/{}/", bob_ids.preset);

    let cases = |ids: &Ids| {
        vec![
            (
                Method::POST,
                reports.clone(),
                json!({"title": "x", "prompts_ids": [ids.prompt]}),
                json!(["body", "prompts_ids", 0]),
            ),
            (
                Method::POST,
                reports.clone(),
                json!({"title": "x", "prompts_ids": [bob_ids.prompt, ids.prompt]}),
                json!(["body", "prompts_ids", 1]),
            ),
            (
                Method::POST,
                reports.clone(),
                json!({"title": "x", "preset_id": ids.preset}),
                json!(["body", "preset_id"]),
            ),
            (
                Method::PUT,
                bob_report.clone(),
                json!({"prompts_ids": [ids.prompt]}),
                json!(["body", "prompts_ids", 0]),
            ),
            (
                Method::PUT,
                bob_report.clone(),
                json!({"preset_id": ids.preset}),
                json!(["body", "preset_id"]),
            ),
            (
                Method::POST,
                "/presets/".to_owned(),
                json!({"title": "x", "prompt_ids": [ids.prompt]}),
                json!(["body", "prompt_ids", 0]),
            ),
            (
                Method::PUT,
                bob_preset.clone(),
                json!({"title": "x", "prompt_ids": [ids.prompt]}),
                json!(["body", "prompt_ids", 0]),
            ),
        ]
    };
    for ((method, path, body, loc), (_, _, missing_body, _)) in cases(&ann_ids).into_iter().zip(cases(&unknown)) {
        let what = format!("Bob {method} {path} {body}");
        let (status, answer) = app.call(method.clone(), &path, Some(&bob.token), Some(body)).await;
        let (missing_status, missing) = app
            .call(method.clone(), &path, Some(&bob.token), Some(missing_body))
            .await;
        assert_refused_reference(&what, (status, &answer), (missing_status, &missing), &loc);
        assert_eq!(
            ann_ids.swap_into(&unknown, &answer.to_string()),
            missing.to_string(),
            "{what} reveals more than an unknown id"
        );
    }

    assert_eq!(snapshot(&app, &ann, &ann_ids).await, ann_before);
    assert_eq!(snapshot(&app, &bob, &bob_ids).await, bob_before, "Bob's data unchanged");
    app.stop().await;
}
