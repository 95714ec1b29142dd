//! The three doors onto one house agree: the JSON API, the console and MCP ask the same
//! use case, so one request is answered alike by each (creating a report without a title
//! or without prompts or a preset; a deleted report found by its id, marked deleted, left
//! out of lists and not read as a document until it is restored).

use reqwest::StatusCode;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::{Value, json};

use crate::support::accounts::{csrf_field, http_session};
use crate::support::{TestApp, TestUser, error_locs};

/// One MCP tool call or resource request over HTTP (the door is stateless): its result.
async fn mcp(app: &TestApp, user: &TestUser, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let response = app
        .client
        .post(app.url("/mcp"))
        .bearer_auth(&user.token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.expect("a body");
    // Streamable HTTP may answer as one JSON body or as an event stream of one message.
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data:"))
        .map_or(text.as_str(), str::trim);
    serde_json::from_str(json).unwrap_or_else(|_| panic!("JSON-RPC: {text}"))
}

/// A tool call's result: whether it is an error, and its text.
async fn tool(app: &TestApp, user: &TestUser, name: &str, arguments: Value) -> (bool, String) {
    let answer = mcp(app, user, "tools/call", json!({ "name": name, "arguments": arguments })).await;
    let result = &answer["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (result["isError"] == true, text)
}

/// A project with one finished record; its id.
async fn project_with_a_record(app: &TestApp, user: &TestUser) -> String {
    let project = app.project(user, "Billing study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Interview Anna", "text": "Interviewer: How do you pay?\nAnna: We chase finance every month." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    app.wait_finished(user, record["id"].as_str().expect("id")).await;
    project
}

/// Posts the console's generate form with `fields`; the status and the page.
async fn console_generate(
    app: &TestApp,
    user: &TestUser,
    project: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, String) {
    let (client, cookie, csrf) = http_session(app, user, &format!("/p/{project}")).await;
    let mut form = vec![("csrf", csrf.as_str())];
    form.extend_from_slice(fields);
    let response = client
        .post(app.url(&format!("/p/{project}/reports")))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&form)
        .send()
        .await
        .expect("an answer");
    (response.status(), response.text().await.expect("a page"))
}

#[tokio::test]
async fn every_door_refuses_a_report_without_a_title_or_without_prompts_or_a_preset_alike() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = project_with_a_record(&app, &user).await;
    let preset = app.system_preset_id(&user).await;
    let reports = format!("/projects/{project}/reports");

    // The JSON door: neither prompts nor a preset, an empty list of prompts, a blank title.
    let (status, body) = app.post(&reports, &user, json!({ "title": "Pains" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = app
        .post(&reports, &user, json!({ "title": "Pains", "prompts_ids": [] }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["body", "prompts_ids"])], "{body}");
    let (status, body) = app
        .post(&reports, &user, json!({ "title": "   ", "preset_id": preset }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["body", "title"])], "{body}");

    // The console: the same 422 with the same sentence (it answered 409 before).
    let (status, page) = console_generate(&app, &user, &project, &[("title", "Pains")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{page}");
    assert!(page.contains("Choose a preset or at least one prompt"), "{page}");
    let (status, page) = console_generate(&app, &user, &project, &[("title", " "), ("preset_id", &preset)]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{page}");

    // MCP: a tool error with that sentence (it used the first preset silently before).
    let (error, text) = tool(
        &app,
        &user,
        "create_report",
        json!({ "project_id": project, "title": "Pains" }),
    )
    .await;
    assert!(error, "{text}");
    assert!(text.contains("Choose a preset or at least one prompt"), "{text}");
    let (error, text) = tool(
        &app,
        &user,
        "create_report",
        json!({ "project_id": project, "title": " ", "preset_id": preset, "wait_seconds": 0 }),
    )
    .await;
    assert!(error, "{text}");

    // Nothing was made by any of them; a good request through each door is.
    let (_, listed) = app.get(&reports, &user).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
    let (error, text) = tool(
        &app,
        &user,
        "create_report",
        json!({ "project_id": project, "title": "Pains", "preset_id": preset, "wait_seconds": 0 }),
    )
    .await;
    assert!(!error, "{text}");
    let (status, _) = console_generate(&app, &user, &project, &[("title", "Pains"), ("preset_id", &preset)]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, body) = app
        .post(&reports, &user, json!({ "title": "Pains", "preset_id": preset }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, listed) = app.get(&reports, &user).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(3), "{listed}");
    app.stop().await;
}

#[tokio::test]
async fn a_deleted_report_is_found_marked_by_every_door_and_read_by_none_until_restored() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = project_with_a_record(&app, &user).await;
    let report = app.report(&user, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    let (status, _) = app.delete(&path, &user).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // By its id: the JSON API and MCP's tool answer it marked deleted, the console shows
    // it marked so with a way back.
    let (status, found) = app.get(&path, &user).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(found["is_deleted"], true);
    let (error, text) = tool(
        &app,
        &user,
        "read_report",
        json!({ "project_id": project, "report_id": report }),
    )
    .await;
    assert!(!error, "{text}");
    let read: Value = serde_json::from_str(&text).expect("the report as JSON");
    assert_eq!(read["is_deleted"], true, "{read}");
    let (client, cookie, _) = http_session(&app, &user, "/").await;
    let page = |client: reqwest::Client, cookie: String| {
        let url = app.url(&format!("/p/{project}/reports/{report}"));
        async move {
            let response = client.get(url).header(COOKIE, &cookie).send().await.expect("page");
            (response.status(), response.text().await.expect("html"))
        }
    };
    let (status, html) = page(client.clone(), cookie.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("id=\"deleted\""), "marked deleted: {html}");
    assert!(html.contains("Restore the report"), "{html}");

    // In lists, and as a document to read, it is not there.
    let (_, listed) = app.get(&format!("/projects/{project}/reports"), &user).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
    let (_, text) = tool(&app, &user, "list_reports", json!({ "project_id": project })).await;
    assert!(!text.contains(&report), "{text}");
    let resources = mcp(&app, &user, "resources/list", json!({})).await;
    assert!(!resources.to_string().contains(&report), "{resources}");
    let uri = format!("insight://reports/{project}/{report}");
    let resource = mcp(&app, &user, "resources/read", json!({ "uri": uri })).await;
    assert!(resource["error"].is_object(), "not read while deleted: {resource}");
    let (status, _) = app.get(&format!("{path}/export?format=md"), &user).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Restored from its page, it is listed and read again, and the audit log says who.
    let csrf = csrf_field(&html);
    let response = client
        .post(app.url(&format!("/p/{project}/reports/{report}/restore")))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&[("csrf", csrf.as_str()), ("is_deleted", "false")])
        .send()
        .await
        .expect("restore");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let (_, listed) = app.get(&format!("/projects/{project}/reports"), &user).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let resource = mcp(&app, &user, "resources/read", json!({ "uri": uri })).await;
    assert!(resource["result"]["contents"].is_array(), "{resource}");
    let (_, html) = page(client, cookie).await;
    assert!(!html.contains("id=\"deleted\""));
    let entries = app.audit(&user, user.id, "report.restored").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["actor_email"], user.email.as_str(), "{entries:?}");
    app.stop().await;
}
