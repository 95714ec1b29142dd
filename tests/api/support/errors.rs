//! The shapes of the service's refusals: a 422's `detail` list and a 409 naming what the
//! caller cannot see.

use reqwest::StatusCode;
use serde_json::Value;

/// The `type`s of a 422 body, in order.
pub fn error_types(body: &Value) -> Vec<String> {
    body["detail"]
        .as_array()
        .expect("detail list")
        .iter()
        .map(|d| d["type"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The `loc`s of a 422 body, in order.
pub fn error_locs(body: &Value) -> Vec<Value> {
    body["detail"]
        .as_array()
        .expect("detail list")
        .iter()
        .map(|d| d["loc"].clone())
        .collect()
}

/// Asserts a 422 body's shape: every item has `loc` (strings and integers), `msg`, `type`.
pub fn assert_validation_body(body: &Value) {
    let detail = body["detail"]
        .as_array()
        .unwrap_or_else(|| panic!("422 without a detail list: {body}"));
    assert!(!detail.is_empty(), "{body}");
    for item in detail {
        let loc = item["loc"].as_array().unwrap_or_else(|| panic!("no loc: {item}"));
        assert!(loc.iter().all(|l| l.is_string() || l.is_i64() || l.is_u64()), "{item}");
        assert!(
            ["body", "path", "query", "header"].contains(&loc[0].as_str().unwrap_or("")),
            "{item}"
        );
        assert!(item["msg"].is_string(), "{item}");
        assert!(item["type"].is_string(), "{item}");
    }
}

/// Asserts a 409 that names, for each `place` of the body, what it named that the caller
/// cannot see.
pub fn assert_unknown_references(status: StatusCode, body: &Value, places: &[&str]) {
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let detail = body["detail"]
        .as_str()
        .unwrap_or_else(|| panic!("no detail sentence: {body}"));
    assert!(
        detail.starts_with("The request names what is not found, or not yours:"),
        "{detail}"
    );
    for place in places {
        assert!(detail.contains(&format!("(at {place})")), "{place} in {detail}");
    }
    assert_eq!(
        detail.matches("(at ").count(),
        places.len(),
        "only {places:?}: {detail}"
    );
}
