//! A workspace's tags over the JSON API: made with a default colour, names unique without
//! case, grouped one level deep, changed field by field, merged (the group moving with
//! the tag) and deleted (its group's tags staying, out of it); another workspace's tags
//! are not found.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::accounts::{http_session, researcher_and_viewer};
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

#[tokio::test]
async fn the_settings_page_keeps_tags_by_form_and_shows_a_clash_on_the_form() {
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    let (client, cookie, csrf) = http_session(&app, &researcher, "/settings/tags").await;
    let post = |path: &str, form: Vec<(&str, String)>| {
        client
            .post(app.url(path))
            .header(reqwest::header::COOKIE, &cookie)
            .header(reqwest::header::ORIGIN, &app.base)
            .form(&form)
            .send()
    };
    let made = post(
        "/settings/tags",
        vec![
            ("csrf", csrf.clone()),
            ("name", "Pricing".into()),
            ("description", "What they pay".into()),
        ],
    )
    .await
    .expect("post");
    assert_eq!(made.status(), StatusCode::SEE_OTHER);
    let workspace = researcher.id.to_string();
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &researcher).await;
    assert_eq!(names(&list), ["Pricing"]);
    assert_eq!(list[0]["description"], json!("What they pay"));

    // A clash is said on the form, with the page's status.
    let clash = post(
        "/settings/tags",
        vec![("csrf", csrf.clone()), ("name", "pricing".into())],
    )
    .await
    .expect("post");
    assert_eq!(clash.status(), StatusCode::CONFLICT);
    let html = clash.text().await.expect("page");
    assert!(
        html.contains("error-summary") && html.contains("named “pricing” already"),
        "{html}"
    );

    // Changed, merged and deleted by form.
    let (_, cost) = tag(&app, &researcher, &workspace, json!({ "name": "Cost" })).await;
    let pricing = list[0]["id"].as_str().expect("id").to_owned();
    let saved = post(
        &format!("/settings/tags/{pricing}"),
        vec![
            ("csrf", csrf.clone()),
            ("name", "Price".into()),
            ("color", "#336699".into()),
            ("description", String::new()),
            ("parent_id", cost["id"].as_str().expect("id").into()),
        ],
    )
    .await
    .expect("post");
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &researcher).await;
    assert_eq!(names(&list), ["Cost", "Price"]);
    assert_eq!(list[1]["color"], json!("#336699"));
    assert_eq!(list[1]["parent_id"], cost["id"]);
    let merged = post(
        &format!("/settings/tags/{pricing}/merge"),
        vec![
            ("csrf", csrf.clone()),
            ("into_tag_id", cost["id"].as_str().expect("id").into()),
        ],
    )
    .await
    .expect("post");
    assert_eq!(merged.status(), StatusCode::SEE_OTHER);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &researcher).await;
    assert_eq!(names(&list), ["Cost"]);
    let cost_id = cost["id"].as_str().expect("id");
    let deleted = post(
        &format!("/settings/tags/{cost_id}/delete"),
        vec![("csrf", csrf.clone())],
    )
    .await
    .expect("post");
    assert_eq!(deleted.status(), StatusCode::SEE_OTHER);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &researcher).await;
    assert_eq!(list, json!([]));

    // A viewer reads the page without its forms, and a change he forges is refused.
    let (_, kept) = tag(&app, &researcher, &workspace, json!({ "name": "Trust" })).await;
    let (viewer_client, viewer_cookie, viewer_csrf) = http_session(&app, &viewer, "/settings/tags").await;
    let switched = viewer_client
        .post(app.url("/workspace"))
        .header(reqwest::header::COOKIE, &viewer_cookie)
        .header(reqwest::header::ORIGIN, &app.base)
        .form(&[("csrf", viewer_csrf.as_str()), ("workspace_id", workspace.as_str())])
        .send()
        .await
        .expect("switch");
    let shown = switched.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let cookies = format!("{viewer_cookie}; {shown}");
    let page = viewer_client
        .get(app.url("/settings/tags"))
        .header(reqwest::header::COOKIE, &cookies)
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(page.contains("data-tag=\"Trust\""), "the viewer sees the tags");
    assert!(
        !page.contains("action=\"/settings/tags\""),
        "and no form to change them"
    );
    let kept_id = kept["id"].as_str().expect("id");
    let forged = viewer_client
        .post(app.url(&format!("/settings/tags/{kept_id}")))
        .header(reqwest::header::COOKIE, &cookies)
        .header(reqwest::header::ORIGIN, &app.base)
        .form(&[("csrf", viewer_csrf.as_str()), ("name", "Mine"), ("color", "#000000")])
        .send()
        .await
        .expect("post");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let (_, list) = app.get(&format!("/workspaces/{workspace}/tags"), &researcher).await;
    assert_eq!(names(&list), ["Trust"]);
    app.stop().await;
}
