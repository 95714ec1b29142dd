//! Reports as the tests make them: a study of two finished interviews, the system
//! presets, and a generation waited for until it settles.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::records::{ANNA, BEN};
use super::{TestApp, TestUser, eventually};

/// A project with two finished interviews; returns the project id.
pub async fn study(app: &TestApp, user: &TestUser) -> String {
    let (status, project) = app
        .post(
            "/projects/",
            user,
            json!({ "name": "Billing study", "research_goals": "Why do teams churn after the trial?" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let project = project["id"].as_str().expect("id").to_owned();
    for (title, text) in [("Anna", ANNA), ("Ben", BEN)] {
        let (status, record) = app
            .post(
                &format!("/projects/{project}/records"),
                user,
                json!({ "title": title, "text": text, "language": "en" }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        let id = record["id"].as_str().expect("id").to_owned();
        app.wait_finished(user, &id).await;
    }
    project
}

pub async fn preset_id(app: &TestApp, user: &TestUser, title: &str) -> String {
    let (_, presets) = app.get("/presets/system/", user).await;
    presets
        .as_array()
        .expect("presets")
        .iter()
        .find(|p| p["title"] == title)
        .and_then(|p| p["id"].as_str())
        .unwrap_or_else(|| panic!("no system preset {title}"))
        .to_owned()
}

/// Polls the generation until its status is one of `wanted`.
pub async fn wait_generation(app: &TestApp, user: &TestUser, report_path: &str, wanted: &[&str]) -> Value {
    eventually(Duration::from_secs(30), "generation stuck", async || {
        let (status, generation) = app.get(&format!("{report_path}/generation"), user).await;
        assert_eq!(status, StatusCode::OK, "{generation}");
        if wanted.contains(&generation["status"].as_str().unwrap_or_default()) {
            Ok(generation)
        } else {
            Err(generation)
        }
    })
    .await
}
