//! Prompts and presets, and spec operation 4: POST /presets/{preset_id}/clone/.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestApp, assert_validation_body, error_locs, error_types};

const PRESET_FIELDS: &[&str] = &[
    "id",
    "email",
    "preset_type",
    "title",
    "prompt_ids",
    "created_at",
    "updated_at",
    "icon",
    "category",
];

fn assert_preset_shape(preset: &Value) {
    let object = preset.as_object().expect("preset is an object");
    for name in PRESET_FIELDS {
        assert!(object.contains_key(*name), "preset lacks {name}: {preset}");
    }
    for name in [
        "id",
        "preset_type",
        "title",
        "created_at",
        "updated_at",
        "icon",
        "category",
    ] {
        assert!(preset[name].is_string(), "{name}: {preset}");
    }
    assert!(preset["email"].is_string() || preset["email"].is_null());
    assert!(
        preset["prompt_ids"]
            .as_array()
            .is_some_and(|ids| ids.iter().all(Value::is_string))
    );
}

#[tokio::test]
async fn system_presets_ship_with_useful_prompts() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, presets) = app.get("/presets/system/", &ann).await;
    assert_eq!(status, StatusCode::OK);
    let presets = presets.as_array().expect("array").clone();
    let titles: Vec<&str> = presets.iter().filter_map(|p| p["title"].as_str()).collect();
    for wanted in [
        "General synthesis",
        "Jobs to be done",
        "Persona",
        "Themes",
        "Pain points",
        "Usability issues",
        "Feature requests",
    ] {
        assert!(titles.contains(&wanted), "{wanted} in {titles:?}");
    }
    assert!(titles.iter().any(|t| t.contains("Q&A")));
    let (_, prompts) = app.get("/prompts/", &ann).await;
    for preset in &presets {
        assert_preset_shape(preset);
        assert_eq!(preset["preset_type"], "system");
        assert_eq!(preset["email"], Value::Null);
        let ids = preset["prompt_ids"].as_array().expect("ids");
        assert!((2..=5).contains(&ids.len()), "{preset}");
        for id in ids {
            let prompt = prompts
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| &p["id"] == id)
                .expect("prompt listed");
            assert_eq!(prompt["prompt_type"], "system");
            assert!(prompt["text"].as_str().is_some_and(|t| t.len() > 80));
        }
    }
    // Listing is stable across restarts of the seed (ids do not change).
    let (_, again) = app.get("/presets/", &ann).await;
    assert_eq!(again.as_array().map(Vec::len), Some(presets.len()));
    app.stop().await;
}

#[tokio::test]
async fn clone_makes_an_editable_user_copy_with_copied_prompts() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (_, system) = app.get("/presets/system/", &ann).await;
    let original = system[2].clone();
    let id = original["id"].as_str().unwrap_or_default();

    for path in [format!("/presets/{id}/clone/"), format!("/presets/{id}/clone")] {
        let (status, copy) = app.call(Method::POST, &path, Some(&ann.token), None).await;
        assert_eq!(status, StatusCode::CREATED, "{path}: {copy}");
        assert_preset_shape(&copy);
        assert_ne!(copy["id"], original["id"]);
        assert_eq!(copy["preset_type"], "user");
        assert_eq!(copy["email"], ann.email.as_str());
        assert_eq!(copy["title"], original["title"]);
        assert_eq!(copy["icon"], original["icon"]);
        let copied: Vec<&Value> = copy["prompt_ids"].as_array().expect("ids").iter().collect();
        assert_eq!(copied.len(), original["prompt_ids"].as_array().map_or(0, Vec::len));
        for prompt_id in &copied {
            assert!(
                !original["prompt_ids"].as_array().expect("ids").contains(prompt_id),
                "prompts are copies"
            );
            let (status, prompt) = app
                .get(&format!("/prompts/{}/", prompt_id.as_str().unwrap_or_default()), &ann)
                .await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(prompt["prompt_type"], "user");
        }
        // The copy's prompts are his to edit; the system's are not.
        let first = copied[0].as_str().unwrap_or_default();
        let (status, edited) = app
            .put(
                &format!("/prompts/{first}/"),
                &ann,
                json!({"title": "Mine", "text": "Ask about budgets."}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{edited}");
        assert_eq!(edited["text"], "Ask about budgets.");
    }
    let system_prompt = original["prompt_ids"][0].as_str().unwrap_or_default();
    let (status, body) = app
        .put(
            &format!("/prompts/{system_prompt}/"),
            &ann,
            json!({"title": "x", "text": "y"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body["detail"].is_string());
    let (status, _) = app
        .put(
            &format!("/presets/{id}/"),
            &ann,
            json!({"title": "x", "prompt_ids": [system_prompt]}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = app.delete(&format!("/presets/{id}/"), &ann).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // His own preset can be cloned too; another user's cannot be seen.
    let (_, mine) = app.get("/presets/", &ann).await;
    let own = mine
        .as_array()
        .expect("array")
        .iter()
        .find(|p| p["preset_type"] == "user")
        .expect("own preset")
        .clone();
    let own_id = own["id"].as_str().unwrap_or_default();
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/presets/{own_id}/clone/"),
            Some(&ann.token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let bob = app.user().await;
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/presets/{own_id}/clone/"),
            Some(&bob.token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body["detail"].is_string());

    // 422 for a bad id, 401 without a token, 404 for an unknown one.
    let (status, body) = app
        .call(Method::POST, "/presets/not-a-uuid/clone/", Some(&ann.token), None)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_validation_body(&body);
    assert_eq!(error_locs(&body), [json!(["path", "preset_id"])]);
    assert_eq!(error_types(&body), ["uuid_parsing"]);
    let (status, _) = app
        .call(Method::POST, &format!("/presets/{id}/clone/"), None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = app
        .call(Method::POST, &format!("/presets/{id}/clone/"), Some("ins_nope"), None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/presets/{}/clone/", uuid::Uuid::new_v4()),
            Some(&ann.token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn own_prompts_and_presets_can_be_managed() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, prompt) = app
        .post(
            "/prompts/",
            &ann,
            json!({"title": "Budget", "text": "What do they spend?"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(prompt["category"], "general");
    assert_eq!(prompt["email"], ann.email.as_str());
    let prompt_id = prompt["id"].as_str().unwrap_or_default().to_owned();

    let (status, body) = app
        .post("/presets/", &ann, json!({"title": "Mine", "prompt_ids": []}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["too_short"]);
    let (status, body) = app
        .post(
            "/presets/",
            &ann,
            json!({"title": 1, "prompt_ids": [prompt_id, "x"], "icon": ""}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        error_locs(&body),
        [
            json!(["body", "title"]),
            json!(["body", "prompt_ids", 1]),
            json!(["body", "icon"])
        ]
    );

    let (status, preset) = app
        .post(
            "/presets/",
            &ann,
            json!({"title": "Mine", "prompt_ids": [prompt_id], "icon": "star"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{preset}");
    assert_preset_shape(&preset);
    let preset_id = preset["id"].as_str().unwrap_or_default().to_owned();

    let (status, body) = app.delete(&format!("/prompts/{prompt_id}/"), &ann).await;
    assert_eq!(status, StatusCode::CONFLICT, "a preset still uses it");
    assert!(body["detail"].as_str().is_some_and(|d| d.contains("Mine")));

    let (_, system) = app.get("/prompts/", &ann).await;
    let system_prompt = system[0]["id"].clone();
    let (status, changed) = app
        .put(
            &format!("/presets/{preset_id}/"),
            &ann,
            json!({"title": "Renamed", "prompt_ids": [system_prompt]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(changed["title"], "Renamed");
    assert_eq!(
        changed["icon"], "file-text",
        "PUT replaces: a left-out icon is the default"
    );

    let (status, _) = app.delete(&format!("/prompts/{prompt_id}/"), &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.delete(&format!("/presets/{preset_id}/"), &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&format!("/presets/{preset_id}/"), &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}
