//! Every list that can grow answers a page at a time: walked with `limit=1` through its
//! `Link: rel="next"` headers, it yields every item once, in the order of the whole list.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_validation_body, error_locs, eventually};

/// The paginated lists of the document: those taking a `cursor`.
fn paginated_operations() -> Vec<String> {
    let doc = serde_json::to_value(insight::document()).expect("the document is JSON");
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let takes_cursor = operation["parameters"]
                .as_array()
                .is_some_and(|params| params.iter().any(|p| p["name"] == "cursor"));
            if takes_cursor {
                assert_eq!(method, "get", "{path}");
                found.push(path.clone());
            }
        }
    }
    found
}

async fn ok(app: &TestApp, user: &TestUser, method: reqwest::Method, path: &str, body: Value) -> Value {
    let (status, answer) = app.call(method, path, Some(&user.token), Some(body)).await;
    assert!(status.is_success(), "{path}: {status} {answer}");
    answer
}

/// The items of a page: the array, a history's messages, or search hits.
fn items(body: &Value) -> Vec<Value> {
    match body {
        Value::Array(items) => items.clone(),
        other => other["messages"]
            .as_array()
            .or_else(|| other["hits"].as_array())
            .cloned()
            .expect("a list, a history or search hits"),
    }
}

fn identity(item: &Value) -> String {
    // Members are named by their user; an utterance found by search by its record and place.
    let id = item.get("id").unwrap_or(&item["user_id"]).to_string();
    match item.get("utterance_id") {
        Some(utterance) => format!("{id}#{utterance}"),
        None => id,
    }
}

/// Follows `Link: rel="next"` from `path` with `limit=1`, returning every item seen.
async fn walk(app: &TestApp, user: &TestUser, path: &str) -> Vec<Value> {
    let separator = if path.contains('?') { '&' } else { '?' };
    let mut next = Some(format!("{path}{separator}limit=1"));
    let mut seen = Vec::new();
    let mut pages = 0;
    while let Some(url) = next.take() {
        let response = app
            .client
            .get(app.url(&url))
            .bearer_auth(&user.token)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        next = response
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .map(|link| {
                assert!(link.ends_with(">; rel=\"next\""), "{link}");
                link.trim_start_matches('<')
                    .split('>')
                    .next()
                    .expect("a target")
                    .to_owned()
            });
        let page = items(&response.json().await.expect("JSON"));
        assert!(page.len() <= 1, "{url}: {} items", page.len());
        seen.extend(page);
        pages += 1;
        assert!(pages < 1_000, "{path}: the walk does not end");
    }
    seen
}

#[tokio::test]
async fn every_paginated_list_walks_one_item_at_a_time_and_yields_each_once() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Pages").await;
    let post = reqwest::Method::POST;
    // Endpoints first, so records and reports make deliveries.
    let mut endpoint = String::new();
    for n in 0..3 {
        let made = ok(
            &app,
            &user,
            post.clone(),
            "/webhooks/endpoints",
            json!({ "url": format!("https://hooks{n}.example.com/x") }),
        )
        .await;
        endpoint = made["id"].as_str().expect("endpoint id").to_owned();
    }
    let mut record = String::new();
    for n in 0..3 {
        let made = ok(
            &app,
            &user,
            post.clone(),
            &format!("/projects/{project}/records"),
            json!({ "title": format!("Interview {n}"), "text": "Interviewer: What happened?\nAnna: Shipping cost surprised me." }),
        )
        .await;
        record = made["id"].as_str().expect("record id").to_owned();
        app.wait_finished(&user, &record).await;
    }
    for _ in 0..3 {
        app.report(&user, &project).await;
    }
    let workspace = user.id.to_string();
    let tag = ok(
        &app,
        &user,
        post.clone(),
        &format!("/workspaces/{workspace}/tags"),
        json!({ "name": "Shipping" }),
    )
    .await;
    let tag = tag["id"].as_str().expect("tag id").to_owned();
    let mut highlights = Vec::new();
    for (from, to) in [(0, 8), (9, 13), (14, 24)] {
        let span = json!({ "start": { "utterance_id": 2, "offset": from }, "end": { "utterance_id": 2, "offset": to }, "tag_ids": [tag] });
        let made = ok(
            &app,
            &user,
            post.clone(),
            &format!("/insight/{record}/highlights"),
            span,
        )
        .await;
        highlights.push(made["id"].clone());
    }
    for n in 0..3 {
        let insight = json!({ "title": format!("Finding {n}"), "highlight_ids": highlights });
        ok(
            &app,
            &user,
            post.clone(),
            &format!("/projects/{project}/insights"),
            insight,
        )
        .await;
    }
    ok(
        &app,
        &user,
        post.clone(),
        "/api/interviews/rooms",
        json!({ "project_id": project, "count": 3 }),
    )
    .await;
    for _ in 0..2 {
        ok(
            &app,
            &user,
            post.clone(),
            &format!("/insight/{record}/chat/new-thread/"),
            json!({}),
        )
        .await;
    }
    let first = ok(
        &app,
        &user,
        post.clone(),
        &format!("/insight/{record}/chat/"),
        json!({ "message": "What surprised Anna?" }),
    )
    .await;
    let chat_thread = first["thread_id"].clone();
    ok(
        &app,
        &user,
        post.clone(),
        &format!("/insight/{record}/chat/"),
        json!({ "message": "And the shipping?", "thread_id": chat_thread }),
    )
    .await;
    for _ in 0..2 {
        ok(&app, &user, post.clone(), "/agent/threads", json!({})).await;
    }
    let asked = ok(
        &app,
        &user,
        post.clone(),
        "/agent/chat",
        json!({ "message": "What hurts?", "project_id": project }),
    )
    .await;
    let agent_thread = asked["thread_id"].clone();
    ok(
        &app,
        &user,
        post.clone(),
        "/agent/chat",
        json!({ "message": "And shipping?", "thread_id": agent_thread }),
    )
    .await;
    let preset = app.system_preset_id(&user).await;
    ok(
        &app,
        &user,
        post.clone(),
        &format!("/presets/{preset}/clone/"),
        json!({}),
    )
    .await;
    let team = ok(&app, &user, post.clone(), "/workspaces", json!({ "name": "Team" })).await;
    let team = team["id"].as_str().expect("workspace id").to_owned();
    for n in 0..3 {
        let invitation = json!({ "email": format!("guest{n}@example.org"), "role": "viewer" });
        ok(
            &app,
            &user,
            post.clone(),
            &format!("/workspaces/{team}/invitations"),
            invitation,
        )
        .await;
    }
    for _ in 0..2 {
        let member = app.user().await;
        let team = uuid::Uuid::parse_str(&team).expect("uuid");
        app.store
            .add_member(team, member.id, insight::domain::workspace::Role::Viewer)
            .await
            .expect("add member");
    }
    // Deliveries are written as their events are.
    let deliveries = format!("/webhooks/endpoints/{endpoint}/deliveries");
    eventually(Duration::from_secs(30), "no deliveries were made", async || {
        let (_, made) = app.get(&deliveries, &user).await;
        if made.as_array().map_or(0, Vec::len) >= 3 {
            Ok(())
        } else {
            Err(made)
        }
    })
    .await;

    let mut walked = 0;
    for template in paginated_operations() {
        let path = match template.as_str() {
            "/projects/{project_id}/records" => format!("/projects/{project}/records"),
            "/projects/{project_id}/reports" => format!("/projects/{project}/reports"),
            "/api/interviews/rooms" => format!("/api/interviews/rooms?project_id={project}"),
            "/insight/{rec_id}/chat/threads/" => format!("/insight/{record}/chat/threads/"),
            "/insight/{rec_id}/chat/" => format!("/insight/{record}/chat/?thread_id={chat_thread}"),
            "/agent/threads" => "/agent/threads".to_owned(),
            "/agent/threads/{thread_id}/history" => format!("/agent/threads/{agent_thread}/history"),
            "/webhooks/endpoints" => "/webhooks/endpoints".to_owned(),
            "/webhooks/endpoints/{endpoint_id}/deliveries" => deliveries.clone(),
            "/prompts/" => "/prompts/".to_owned(),
            "/presets/" => "/presets/".to_owned(),
            "/workspaces/{workspace_id}/members" => format!("/workspaces/{team}/members"),
            "/workspaces/{workspace_id}/invitations" => format!("/workspaces/{team}/invitations"),
            "/workspaces/{workspace_id}/audit" => format!("/workspaces/{team}/audit"),
            "/projects/{project_id}/highlights" => format!("/projects/{project}/highlights"),
            "/tags/{tag_id}/highlights" => format!("/tags/{tag}/highlights"),
            "/projects/{project_id}/insights" => format!("/projects/{project}/insights"),
            "/search" => {
                // Three utterances say "surprised" (reports quoting them are still being
                // written); the index has them within a second.
                let path = "/search?q=surprised&kind=utterance";
                eventually(
                    Duration::from_secs(10),
                    "the search index did not catch up",
                    async || {
                        let (_, found) = app.get(path, &user).await;
                        if found["total"] == 3 { Ok(()) } else { Err(found) }
                    },
                )
                .await;
                path.to_owned()
            }
            other => panic!("a paginated list this test does not walk yet: {other}"),
        };
        let separator = if path.contains('?') { '&' } else { '?' };
        let (status, whole) = app.get(&format!("{path}{separator}limit=500"), &user).await;
        assert_eq!(status, StatusCode::OK, "{path}: {whole}");
        let whole: Vec<String> = items(&whole).iter().map(identity).collect();
        assert!(
            whole.len() >= 3,
            "{path}: seed at least three items, got {}",
            whole.len()
        );
        let paged: Vec<String> = walk(&app, &user, &path).await.iter().map(identity).collect();
        assert_eq!(paged, whole, "{path}: every item once, in order");
        walked += 1;
    }
    assert_eq!(walked, 18, "the lists walked");

    // The default page, and what limit and cursor refuse.
    let (_, prompts) = app.get("/prompts/?limit=500", &user).await;
    let (_, first_page) = app.get("/prompts/", &user).await;
    assert_eq!(
        first_page.as_array().map(Vec::len),
        Some(prompts.as_array().map_or(0, Vec::len).min(100))
    );
    for (query, loc, kind) in [
        ("limit=0", "limit", "greater_than_equal"),
        ("limit=501", "limit", "less_than_equal"),
        ("limit=ten", "limit", "int_parsing"),
        ("cursor=not-a-cursor", "cursor", "string_pattern_mismatch"),
    ] {
        let (status, body) = app.get(&format!("/prompts/?{query}"), &user).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {body}");
        assert_validation_body(&body);
        assert_eq!(error_locs(&body), vec![json!(["query", loc])], "{query}");
        assert_eq!(body["detail"][0]["type"], kind, "{query}");
    }
    // Any text of the cursor's form is a position: a page, perhaps empty, never an error.
    for cursor in ["_".repeat(43), "-".repeat(43), "A".repeat(43), "z".repeat(43)] {
        let (status, page) = app.get(&format!("/prompts/?cursor={cursor}"), &user).await;
        assert_eq!(status, StatusCode::OK, "{cursor}: {page}");
        assert!(page.is_array(), "{page}");
    }
    app.stop().await;
}
