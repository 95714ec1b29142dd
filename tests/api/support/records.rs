//! Records as the tests make them: uploads, pasted transcripts waited for until they are
//! finished, the interviews they paste, a speech-to-text stub and a real WAV file.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

use super::openai_stub::{OpenAiStub, Reply};
use super::{TestApp, TestUser, eventually};

/// Anna's interview about billing, as pasted text.
pub const ANNA: &str = "Interviewer: How do you pay for the tool today?\n\
    Anna: The invoices arrive late and I have to chase finance every month.\n\
    Interviewer: What would help?\n\
    Anna: Honestly the pricing page is confusing, I could not tell what the team plan costs.";

/// Ben's interview about onboarding and invoices, as pasted text.
pub const BEN: &str = "Interviewer: Tell me about onboarding.\n\
    Ben: Onboarding took three weeks because nobody explained the permissions.\n\
    Interviewer: And pricing?\n\
    Ben: The price was fine but the invoices were wrong twice.";

/// A transcript with times, as the text importer reads them.
pub const TIMED_ANNA: &str = "[00:00:05 - 00:00:09] Interviewer: How do you pay for the tool today?\n\n\
    [00:00:10 - 00:00:17] Anna: The invoices arrive late and I have to chase finance every month.\n\n\
    [00:01:05 - 00:01:09] Interviewer: What would help?\n\n\
    [00:01:10 - 00:01:21] Anna: Honestly the pricing page is confusing, I could not tell what the team plan costs. Ça coûte cher.\n";

/// A sentence Anna says word for word in [`ANNA`].
pub const REAL_QUOTE: &str = "The invoices arrive late and I have to chase finance every month.";

/// Uploads a file as `multipart/form-data` (`file`, and `title` when given).
pub async fn upload(
    app: &TestApp,
    user: &TestUser,
    project_id: &str,
    file_name: &str,
    content_type: &str,
    bytes: Vec<u8>,
    title: Option<&str>,
) -> (StatusCode, Value) {
    let part = Part::bytes(bytes)
        .file_name(file_name.to_owned())
        .mime_str(content_type)
        .expect("mime type");
    let mut form = Form::new().part("file", part);
    if let Some(title) = title {
        form = form.text("title", title.to_owned());
    }
    let response = app
        .client
        .post(app.url(&format!("/projects/{project_id}/records")))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("upload sent");
    let status = response.status();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Polls the record until its status is one of `wanted` (or fails after 20 s).
pub async fn wait_for(app: &TestApp, user: &TestUser, record_id: &str, wanted: &[&str]) -> Value {
    eventually(Duration::from_secs(20), "record stuck", async || {
        let (status, record) = app.get(&format!("/insight/{record_id}/"), user).await;
        assert_eq!(status, StatusCode::OK, "{record}");
        if wanted.contains(&record["status"].as_str().unwrap_or_default()) {
            Ok(record)
        } else {
            Err(record)
        }
    })
    .await
}

/// `(speaker, start_ms, end_ms, text)` of each utterance.
pub fn lines(record: &Value) -> Vec<(String, Value, Value, String)> {
    record["utterances"]
        .as_array()
        .expect("utterances")
        .iter()
        .map(|u| {
            (
                u["speaker"].as_str().expect("speaker").to_owned(),
                u["start_ms"].clone(),
                u["end_ms"].clone(),
                u["text"].as_str().expect("text").to_owned(),
            )
        })
        .collect()
}

/// A pasted transcript in `project`, once it is `Finished`; returns its id.
pub async fn finished_record(app: &TestApp, user: &TestUser, project: &str, title: &str, text: &str) -> String {
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": title, "text": text }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("record id").to_owned();
    app.wait_finished(user, &id).await;
    id
}

/// A project with one finished record of Anna's interview; returns (project, record).
pub async fn interview(app: &TestApp, user: &TestUser, text: &str) -> (String, String) {
    let project = app.project(user, "Billing study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Anna", "text": text, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    app.wait_finished(user, &id).await;
    (project, id)
}

/// A suggestion nobody accepted, as the suggestion job stores one.
pub async fn suggestion(app: &TestApp, record: &str, utterance_id: i64, quote: &str) {
    let anchor = |offset| insight::domain::highlight::Anchor { utterance_id, offset };
    app.store
        .create_highlight(insight::store::NewHighlight {
            record_id: record.parse().expect("record id"),
            start: anchor(0),
            end: anchor(i64::try_from(quote.chars().count()).expect("short")),
            quote,
            note: "",
            status: insight::domain::highlight::HighlightStatus::Suggested,
            tag_ids: &[],
            created_by: None,
            provenance: None,
        })
        .await
        .expect("suggestion stored");
}

/// The shared OpenAI-compatible stub, answering `POST /v1/audio/transcriptions` with a
/// `verbose_json` transcript of two segments.
pub async fn stt_stub() -> (SocketAddr, OpenAiStub) {
    let (addr, stub) = OpenAiStub::start().await;
    stub.answer(stt_reply());
    (addr, stub)
}

/// The stub's transcript of two segments.
pub fn stt_reply() -> Reply {
    Reply::body(json!({
        "task": "transcribe",
        "language": "english",
        "duration": 9.5,
        "text": "How did onboarding go? It was confusing at first.",
        "segments": [
            { "id": 0, "seek": 0, "start": 0.0, "end": 2.4, "text": " How did onboarding go?", "tokens": [1], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01 },
            { "id": 1, "seek": 0, "start": 2.9, "end": 9.5, "text": " It was confusing at first.", "tokens": [2], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01 }
        ]
    }))
}

/// A short but real WAV file: 16 kHz mono, 0.1 s of silence.
pub fn wav() -> Vec<u8> {
    let samples = 1_600u32;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"RIFF");
    bytes.extend_from_slice(&(36 + samples * 2).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&16_000u32.to_le_bytes());
    bytes.extend_from_slice(&32_000u32.to_le_bytes());
    bytes.extend_from_slice(&2u16.to_le_bytes());
    bytes.extend_from_slice(&16u16.to_le_bytes());
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&(samples * 2).to_le_bytes());
    bytes.resize(bytes.len() + samples as usize * 2, 0);
    bytes
}
