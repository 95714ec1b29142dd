//! A workspace's tags over the JSON API: made with a default colour, names unique without
//! case, grouped one level deep, changed field by field, merged (the group moving with
//! the tag) and deleted (its group's tags staying, out of it); another workspace's tags
//! are not found.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_unknown_references, error_types};

async fn tag(app: &TestApp, user: &TestUser, workspace: &str, body: Value) -> (StatusCode, Value) {
    app.post(&format!("/workspaces/{workspace}/tags"), user, body).await
}

async fn patch(app: &TestApp, user: &TestUser, tag_id: &Value, body: Value) -> (StatusCode, Value) {
    app.call(
        Method::PATCH,
        &format!("/tags/{}", tag_id.as_str().expect("id")),
        Some(&user.token),
        Some(body),
    )
    .await
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect()
}

#[tokio::test]
async fn tags_are_named_coloured_grouped_one_level_deep_merged_and_deleted() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();

    let (status, pricing) = tag(&app, &ann, &workspace, json!({ "name": "  Pricing " })).await;
    assert_eq!(status, StatusCode::CREATED, "{pricing}");
    assert_eq!(pricing["name"], json!("Pricing"));
    assert_eq!(pricing["workspace_id"], json!(workspace));
    assert_eq!(pricing["parent_id"], Value::Null);
    assert_eq!(pricing["highlights_count"], json!(0));
    let color = pricing["color"].as_str().expect("colour");
    assert!(color.len() == 7 && color.starts_with('#'), "a default colour: {color}");

    // Names are unique without case; colours are #rrggbb.
    let (status, body) = tag(&app, &ann, &workspace, json!({ "name": "PRICING" })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = tag(&app, &ann, &workspace, json!({ "name": "Trust", "color": "red" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = tag(&app, &ann, &workspace, json!({ "name": " " })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["string_too_short"]);

    // One level of groups.
    let (status, expensive) = tag(
        &app,
        &ann,
        &workspace,
        json!({ "name": "Too expensive", "color": "#AA0000", "description": "Says the price is too high", "parent_id": pricing["id"] }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{expensive}");
    assert_eq!(expensive["parent_id"], pricing["id"]);
    assert_eq!(expensive["color"], json!("#aa0000"));
    let (status, body) = tag(
        &app,
        &ann,
        &workspace,
        json!({ "name": "Far too expensive", "parent_id": expensive["id"] }),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "a group in a group: {body}");
    let (_, trust) = tag(&app, &ann, &workspace, json!({ "name": "Trust" })).await;
    let (status, body) = patch(&app, &ann, &pricing["id"], json!({ "parent_id": trust["id"] })).await;
    assert_eq!(status, StatusCode::CONFLICT, "a group into a group: {body}");
    let (status, body) = patch(&app, &ann, &trust["id"], json!({ "parent_id": trust["id"] })).await;
    assert_eq!(status, StatusCode::CONFLICT, "its own group: {body}");

    // A change keeps what it leaves out; a rename may not take another's name.
    let (status, changed) = patch(&app, &ann, &expensive["id"], json!({ "name": "Pricey" })).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["name"], json!("Pricey"));
    assert_eq!(changed["description"], json!("Says the price is too high"));
    assert_eq!(changed["parent_id"], pricing["id"]);
    let (status, _) = patch(&app, &ann, &expensive["id"], json!({ "name": "trust" })).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, out) = patch(&app, &ann, &expensive["id"], json!({ "parent_id": null })).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(out["parent_id"], Value::Null);
    let (status, _) = patch(&app, &ann, &expensive["id"], json!({ "parent_id": pricing["id"] })).await;
    assert_eq!(status, StatusCode::OK);

    let (status, list) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&list), ["Pricey", "Pricing", "Trust"]);

    // Pricing merged into Trust: Trust stays, Pricey moves into Trust's group.
    let merge = format!("/tags/{}/merge", pricing["id"].as_str().expect("id"));
    let (status, body) = app.post(&merge, &ann, json!({ "into_tag_id": pricing["id"] })).await;
    assert_eq!(status, StatusCode::CONFLICT, "into itself: {body}");
    let (status, stays) = app.post(&merge, &ann, json!({ "into_tag_id": trust["id"] })).await;
    assert_eq!(status, StatusCode::OK, "{stays}");
    assert_eq!(stays["id"], trust["id"]);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    assert_eq!(names(&list), ["Pricey", "Trust"]);
    assert_eq!(list[0]["parent_id"], trust["id"], "the group moved with the merge");

    // Deleting a group leaves its tags, out of it.
    let (status, _) = app
        .delete(&format!("/tags/{}", trust["id"].as_str().expect("id")), &ann)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    assert_eq!(names(&list), ["Pricey"]);
    assert_eq!(list[0]["parent_id"], Value::Null);
    app.stop().await;
}

#[tokio::test]
async fn another_workspaces_tags_are_not_found_and_not_usable() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let bob = app.user().await;
    let (_, anns) = tag(&app, &ann, &ann.id.to_string(), json!({ "name": "Pricing" })).await;
    let (_, bobs) = tag(&app, &bob, &bob.id.to_string(), json!({ "name": "Pricing" })).await;
    assert_ne!(anns["id"], bobs["id"], "each workspace has its own names");

    let (status, _) = app.get(&format!("/workspaces/{}/tags", ann.id), &bob).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = patch(&app, &bob, &anns["id"], json!({ "name": "Mine" })).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .delete(&format!("/tags/{}", anns["id"].as_str().expect("id")), &bob)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Named in a body, another's tag is an unknown reference.
    let (status, body) = tag(
        &app,
        &bob,
        &bob.id.to_string(),
        json!({ "name": "Too expensive", "parent_id": anns["id"] }),
    )
    .await;
    assert_unknown_references(status, &body, &["parent_id"]);
    let merge = format!("/tags/{}/merge", bobs["id"].as_str().expect("id"));
    let (status, body) = app.post(&merge, &bob, json!({ "into_tag_id": anns["id"] })).await;
    assert_unknown_references(status, &body, &["into_tag_id"]);
    let (_, list) = app.get(&format!("/workspaces/{}/tags", ann.id), &ann).await;
    assert_eq!(names(&list), ["Pricing"], "nothing of Ann's changed");
    app.stop().await;
}
