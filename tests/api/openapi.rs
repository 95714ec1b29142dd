//! The API document: OpenAPI 3.1, version 0.1.0, the ten tags, bearer security on
//! protected operations, none on public ones; and a snapshot of the whole document so
//! any change to the contract is a reviewed change.

use reqwest::Method;
use serde_json::Value;

use crate::support::TestApp;

const TAGS: [&str; 19] = [
    "insight",
    "insight_public",
    "projects",
    "project_reports",
    "project_reports_public",
    "prompts",
    "presets",
    "agent",
    "interviews",
    "webhooks",
    "auth",
    "workspaces",
    "tags",
    "highlights",
    "insights",
    "search",
    "privacy",
    "usage",
    "exports",
];

#[tokio::test]
async fn the_served_document_is_the_contract() {
    let app = TestApp::start().await;
    let (status, doc) = app.call(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.1")));
    assert_eq!(doc["info"]["version"], "0.1.0");
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tags, TAGS);
    assert!(
        doc["tags"]
            .as_array()
            .expect("tags")
            .iter()
            .all(|t| t["description"].is_string())
    );
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");

    let operation = |path: &str, method: &str| doc["paths"][path][method].clone();
    // The six specified operations that exist so far, at their exact paths.
    for (path, method) in [
        ("/projects/{project_id}/reports/{report_id}", "put"),
        ("/presets/{preset_id}/clone/", "post"),
        ("/projects/", "get"),
    ] {
        let op = operation(path, method);
        assert!(op.is_object(), "{method} {path} documented");
        assert_eq!(op["security"], serde_json::json!([{"bearer": []}]), "{path}");
        assert!(op["responses"]["401"].is_object());
    }
    let put = operation("/projects/{project_id}/reports/{report_id}", "put");
    assert_eq!(
        put["responses"]["422"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ValidationErrorBody"
    );
    assert!(put["responses"]["200"].is_object());
    let clone = operation("/presets/{preset_id}/clone/", "post");
    assert!(clone["responses"]["422"].is_object());

    // Public operations carry no security requirement.
    for (path, method) in [
        ("/projects/public/{project_id}/reports/{report_id}", "get"),
        ("/healthz", "get"),
    ] {
        let op = operation(path, method);
        assert!(op.is_object(), "{path}");
        assert!(op.get("security").is_none_or(Value::is_null), "{path} is public");
    }
    // Every operation's tags are among the ten.
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            for tag in op["tags"].as_array().into_iter().flatten() {
                assert!(
                    TAGS.contains(&tag.as_str().unwrap_or("")),
                    "{method} {path} has tag {tag}"
                );
            }
        }
    }
    // The report update request has every field of the interface document, all optional.
    let update = &doc["components"]["schemas"]["ProjectReportUpdate"];
    assert!(
        update
            .get("required")
            .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty))
    );
    let fields: Vec<&String> = update["properties"].as_object().expect("properties").keys().collect();
    assert_eq!(
        fields,
        [
            "prompts_ids",
            "records_ids",
            "category",
            "title",
            "context",
            "context_expand",
            "status",
            "content",
            "is_public",
            "is_archived",
            "is_deleted",
            "preset_id",
            "report_language",
            "reasoning_mode"
        ]
    );
    app.stop().await;
}

#[test]
fn openapi_snapshot() {
    let doc = serde_json::to_value(insight::document()).expect("document serialises");
    insta::assert_json_snapshot!("openapi", doc);
}

/// Every `$ref` of the document names a schema it holds: a reader (schemathesis, a client
/// generator) refuses an operation whose reference resolves to nothing.
#[test]
fn every_reference_resolves() {
    fn refs<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    found.push(target);
                }
                map.values().for_each(|v| refs(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }
    let doc = serde_json::to_value(insight::document()).expect("document serialises");
    let mut found = Vec::new();
    refs(&doc, &mut found);
    assert!(!found.is_empty());
    let unresolved: Vec<&str> = found
        .into_iter()
        .filter(|target| {
            let pointer = target.trim_start_matches('#');
            doc.pointer(pointer).is_none()
        })
        .collect();
    assert!(unresolved.is_empty(), "references to nothing: {unresolved:?}");
}
