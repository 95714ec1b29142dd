//! Imports (`.qdpx` and Insight archives) against hostile files: a small upload that
//! unpacks to millions of elements or megabytes of padding is refused as it streams,
//! with a 413 naming the entry and the limit, and nothing is written.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::exchange::{download, send_file, unzip, zip_of};
use crate::support::records::finished_record;
use crate::support::{TestApp, TestUser};

fn qdpx(qde: Vec<u8>) -> Vec<u8> {
    zip_of(&BTreeMap::from([("project.qde".to_owned(), qde)]))
}

async fn import_qdpx(app: &TestApp, user: &TestUser, workspace: Uuid, file: Vec<u8>) -> (StatusCode, Value) {
    send_file(
        app,
        user,
        &format!("/workspaces/{workspace}/import/qdpx"),
        "p.qdpx",
        file,
    )
    .await
}

async fn import_archive(app: &TestApp, user: &TestUser, workspace: Uuid, file: Vec<u8>) -> (StatusCode, Value) {
    let path = format!("/workspaces/{workspace}/import/archive");
    send_file(app, user, &path, "project.insight.zip", file).await
}

/// A 413 whose sentence has every one of `words`.
fn too_large(status: StatusCode, body: &Value, words: &[&str]) {
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    for word in words {
        assert!(detail.contains(word), "{word:?} not in {body}");
    }
}

/// What the user sees of the workspace: its projects and tags.
async fn visible(app: &TestApp, user: &TestUser) -> (usize, usize) {
    let (_, projects) = app.get("/projects/", user).await;
    let projects = projects["items"].as_array().or(projects.as_array()).map_or(0, Vec::len);
    let (_, tags) = app.get(&format!("/workspaces/{}/tags", user.id), user).await;
    (projects, tags.as_array().map_or(0, Vec::len))
}

#[tokio::test]
async fn a_hostile_project_qde_is_refused_as_it_streams_naming_the_limit() {
    let app = TestApp::start_with(|settings| {
        settings.imports.import_max_elements = 10_000;
        settings.imports.import_max_text_bytes = 100_000;
    })
    .await;
    let ann = app.user().await;

    // Hundreds of thousands of empty elements, packed small.
    let mut many = b"<Project xmlns=\"urn:QDA-XML:project:1.0\" name=\"x\"><CodeBook><Codes>\
        <Code guid=\"c\" name=\"Pricing\"/></Codes></CodeBook>"
        .to_vec();
    many.extend(b"<a/>".repeat(300_000));
    many.extend(b"</Project>");
    let file = qdpx(many);
    assert!(file.len() < 20_000, "{}", file.len());
    let (status, body) = import_qdpx(&app, &ann, ann.id, file).await;
    too_large(
        status,
        &body,
        &["project.qde", "10000 elements", "INSIGHT_IMPORT_MAX_ELEMENTS"],
    );

    let mut deep = b"<Project name=\"x\">".to_vec();
    deep.extend(b"<a>".repeat(1_000));
    let (status, body) = import_qdpx(&app, &ann, ann.id, qdpx(deep)).await;
    too_large(status, &body, &["project.qde", "64 deep", "INSIGHT_IMPORT_MAX_DEPTH"]);

    let wide = format!("<Project name=\"{}\"/>", "x".repeat(100_000)).into_bytes();
    let (status, body) = import_qdpx(&app, &ann, ann.id, qdpx(wide)).await;
    too_large(
        status,
        &body,
        &["project.qde", "65536 bytes", "INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES"],
    );

    let long = format!(
        "<Project name=\"x\"><Description>{}</Description></Project>",
        "y".repeat(200_000)
    );
    let (status, body) = import_qdpx(&app, &ann, ann.id, qdpx(long.into_bytes())).await;
    too_large(
        status,
        &body,
        &["project.qde", "100000 bytes", "INSIGHT_IMPORT_MAX_TEXT_BYTES"],
    );

    // Under the limits the same kind of document goes in.
    let mut fine =
        b"<Project name=\"Fine\"><CodeBook><Codes><Code guid=\"c\" name=\"Pricing\"/></Codes></CodeBook>".to_vec();
    fine.extend(b"<a/>".repeat(5_000));
    fine.extend(b"</Project>");
    let (status, body) = import_qdpx(&app, &ann, ann.id, qdpx(fine)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Only the one that was within the limits made a project and its tag.
    assert_eq!(visible(&app, &ann).await, (1, 1));
}

/// A small archive of a project with a record and a tag, as Insight writes it.
async fn good_archive(app: &TestApp, user: &TestUser) -> BTreeMap<String, Vec<u8>> {
    let project = app.project(user, "Small study").await;
    finished_record(
        app,
        user,
        &project,
        "Anna",
        "Interviewer: Why?\nAnna: Invoices arrive late.",
    )
    .await;
    let (status, _) = app
        .post(
            &format!("/workspaces/{}/tags", user.id),
            user,
            json!({ "name": "Pricing" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _, bytes) = download(app, user, &format!("/projects/{project}/archive")).await;
    assert_eq!(status, StatusCode::OK);
    unzip(&bytes)
}

#[tokio::test]
async fn an_archive_padded_with_whitespace_is_refused_naming_the_entry_and_its_limit() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let good = good_archive(&app, &ann).await;
    let bob = app.user().await;

    // 20 MB of whitespace after tags.json's array packs to about 20 kB; the archive's
    // text may unpack to 16 MiB at least, and 40 times its size.
    let mut padded = good.clone();
    let mut tags = good["tags.json"].clone();
    tags.extend(std::iter::repeat_n(b' ', 20_000_000));
    padded.insert("tags.json".into(), tags);
    let file = zip_of(&padded);
    assert!(file.len() < 100_000, "{}", file.len());
    let (status, body) = import_archive(&app, &bob, bob.id, file).await;
    too_large(
        status,
        &body,
        &["tags.json", "left of the text budget", "INSIGHT_IMPORT_MAX_EXPANSION"],
    );

    // The manifest can never need more than 64 KiB, whatever the budget.
    let mut padded = good.clone();
    let mut manifest = good["manifest.json"].clone();
    manifest.extend(std::iter::repeat_n(b'\n', 100_000));
    padded.insert("manifest.json".into(), manifest);
    let (status, body) = import_archive(&app, &bob, bob.id, zip_of(&padded)).await;
    too_large(status, &body, &["manifest.json", "65536 bytes"]);

    // Some whitespace within the limits is still JSON.
    let mut spaced = good.clone();
    let mut tags = good["tags.json"].clone();
    tags.extend(std::iter::repeat_n(b' ', 10_000));
    spaced.insert("tags.json".into(), tags);
    assert_eq!(visible(&app, &bob).await, (0, 0), "nothing was written by the refusals");
    let (status, body) = import_archive(&app, &bob, bob.id, zip_of(&spaced)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(visible(&app, &bob).await, (1, 0));
}
