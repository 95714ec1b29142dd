//! A respondent's side of an interview, over the public API: calls without a token, the
//! join, the messages; and an interview guide of three questions.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::TestApp;

/// A call without a token, as a respondent's page makes it.
pub async fn public(app: &TestApp, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    app.call(method, path, None, body).await
}

/// Joins the interview the link's `token` opens, as `email`.
pub async fn join(app: &TestApp, token: &str, email: &str) -> (StatusCode, Value) {
    public(
        app,
        Method::POST,
        &format!("/api/interviews/join/{token}"),
        Some(json!({ "email": email })),
    )
    .await
}

/// The respondent's answer `text` in the joined `session`.
pub async fn say(app: &TestApp, token: &str, session: &str, text: &str) -> (StatusCode, Value) {
    public(
        app,
        Method::POST,
        &format!("/api/interviews/join/{token}/messages"),
        Some(json!({ "session_id": session, "text": text })),
    )
    .await
}

/// The interview guide's questions, in order.
pub const QUESTIONS: [&str; 3] = [
    "How do you plan your week?",
    "What gets in the way of your plans?",
    "What would make planning easier for you?",
];

/// The interview guide the interviewer follows: `QUESTIONS`, numbered.
pub fn guide() -> String {
    QUESTIONS
        .iter()
        .enumerate()
        .map(|(i, question)| format!("{}. {question}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}
