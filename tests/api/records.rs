//! Records: uploads in every format from real fixture files, recordings through a local
//! speech-to-text stub speaking OpenAI's wire protocol, speaker fixes, corrections of one
//! utterance, limits, refusals that write nothing, and isolation.

use std::time::Duration;

use reqwest::multipart::{Form, Part};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::openai_stub::Reply;
use crate::support::records::{lines, stt_stub, upload, wait_for, wav};
use crate::support::{TestApp, TestUser, assert_unknown_references, assert_validation_body, error_locs, error_types};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

async fn records_count(app: &TestApp, user: &TestUser, project_id: &str) -> i64 {
    let (_, project) = app.get(&format!("/projects/{project_id}"), user).await;
    project["records_count"].as_i64().expect("records_count")
}

#[tokio::test]
async fn a_pasted_transcript_becomes_a_finished_record_with_speakers_and_roles() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Planning study").await;
    let text = "Interviewer: How do you plan your week?\nAnna: Mostly on Sunday evenings.\n\
                I use a paper notebook.\nInterviewer: What goes wrong?\nAnna: Plans change by Tuesday.";
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Anna, week planning", "text": text, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    assert_eq!(record["name"], "Anna, week planning");
    assert_eq!(record["project_id"], project.as_str());
    assert_eq!(record["source_format"], "text");
    assert!(["InQueue", "InProgress", "Finished"].contains(&record["status"].as_str().unwrap_or_default()));
    let id = record["id"].as_str().expect("id").to_owned();

    let record = wait_for(&app, &user, &id, &["Finished"]).await;
    let utterances = record["utterances"].as_array().expect("utterances");
    let shape: Vec<(i64, &str, bool, &str)> = utterances
        .iter()
        .map(|u| {
            (
                u["id"].as_i64().expect("id"),
                u["speaker"].as_str().expect("speaker"),
                u["is_respondent"].as_bool().expect("is_respondent"),
                u["text"].as_str().expect("text"),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (1, "Interviewer", false, "How do you plan your week?"),
            (2, "Anna", true, "Mostly on Sunday evenings.\nI use a paper notebook."),
            (3, "Interviewer", false, "What goes wrong?"),
            (4, "Anna", true, "Plans change by Tuesday.")
        ]
    );
    assert!(
        utterances
            .iter()
            .all(|u| u["start_ms"].is_null() && u["end_ms"].is_null())
    );
    assert_eq!(record["word_count"], 22);
    assert_eq!(record["participants_count"], 2);
    assert_eq!(record["respondents_count"], 1);
    assert_eq!(record["respondent_names"], json!(["Anna"]));
    assert_eq!(record["language"], "en");
    assert_eq!(record["duration_seconds"], Value::Null);
    assert_eq!(record["error"], Value::Null);

    let (status, list) = app.get(&format!("/projects/{project}/records/"), &user).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_eq!(list[0]["id"], id.as_str());
    assert!(list[0].get("utterances").is_none(), "lists carry no utterances");
    assert_eq!(records_count(&app, &user, &project).await, 1);
    app.stop().await;
}

#[tokio::test]
async fn a_transcript_pasted_without_a_language_is_given_one_once_at_intake() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Languages").await;
    let texts = [
        (
            "de",
            "Interviewer: Wie finden Sie den Preis?\nJens: Die Preise sind für kleine Teams zu hoch, und wir haben das nicht erwartet.",
        ),
        (
            "en",
            "Interviewer: What about the price?\nAnna: The pricing is confusing and we are not happy with it at all.",
        ),
        (
            "fr",
            "Intervieweur: Que pensez-vous du prix?\nLéa: Le prix est trop élevé pour nous et nous ne sommes pas contents.",
        ),
    ];
    for (expected, text) in texts {
        let id = crate::support::records::finished_record(&app, &user, &project, expected, text).await;
        let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
        assert_eq!(record["language"], expected, "{text}");
    }
    // Names and codes say nothing of a language: none is guessed rather than a wrong one.
    let id =
        crate::support::records::finished_record(&app, &user, &project, "codes", "A: SKU-123\nB: SKU-456 Zebra").await;
    let (_, record) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(record["language"], Value::Null);
    // A language the upload names is kept as it was said.
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "said", "text": texts[1].1, "language": "en-GB" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    assert_eq!(record["language"], "en-GB");
}

#[tokio::test]
async fn files_in_every_text_and_document_format_are_read_faithfully() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Formats").await;
    // (fixture, declared type, format, first utterance (speaker, start_ms, text prefix), a later speaker)
    type Case<'a> = (&'a str, &'a str, &'a str, (&'a str, Option<i64>, &'a str), &'a str);
    let cases: &[Case] = &[
        (
            "vtt_zoom.vtt",
            "text/vtt",
            "vtt",
            ("Ben Okafor", Some(2_310), "Okay, I think the recording is on."),
            "Anna Schmidt",
        ),
        (
            "vtt_teams.vtt",
            "text/vtt",
            "vtt",
            ("Ben Okafor", Some(3_120), "Thanks for joining, Priya."),
            "Ben Okafor",
        ),
        (
            "srt_interview.srt",
            "application/x-subrip",
            "srt",
            (
                "Unknown speaker",
                Some(1_200),
                "FERNWAY WAREHOUSE – INTERVIEW WITH MARCO",
            ),
            "INTERVIEWER",
        ),
        (
            "json_assemblyai.json",
            "application/json",
            "json",
            ("Speaker A", Some(240), "Thanks for joining."),
            "Speaker B",
        ),
        (
            "pdf_interview_libreoffice.pdf",
            "application/pdf",
            "pdf",
            ("Unknown speaker", None, "Interview with Anna, product manager"),
            "Anna",
        ),
        (
            "docx_interview_libreoffice.docx",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
            ("Unknown speaker", None, "Interview with Anna"),
            "Anna",
        ),
        // Notepad's UTF-16 with a byte order mark and CRLF.
        (
            "text_windows_utf16le.txt",
            "text/plain",
            "text",
            ("Unknown speaker", None, "Interview Kundin Spedition"),
            "Kundin",
        ),
        // A VTT whose name and declared type lie: recognised from its content.
        (
            "vtt_zoom.vtt",
            "text/plain",
            "vtt",
            ("Ben Okafor", Some(2_310), "Okay, I think the recording is on."),
            "Anna Schmidt",
        ),
    ];
    for (name, content_type, format, (speaker, start_ms, text), other) in cases {
        let file_name = if *content_type == "text/plain" && name.ends_with(".vtt") {
            "notes.txt"
        } else {
            name
        };
        let (status, record) = upload(&app, &user, &project, file_name, content_type, fixture(name), None).await;
        assert_eq!(status, StatusCode::CREATED, "{name}: {record}");
        assert_eq!(record["source_format"], *format, "{name}");
        let record = wait_for(&app, &user, record["id"].as_str().expect("id"), &["Finished"]).await;
        let lines = lines(&record);
        let (first_speaker, first_start, _, first_text) = lines.first().expect("an utterance");
        assert_eq!(first_speaker, speaker, "{name}");
        assert_eq!(first_start.as_i64(), *start_ms, "{name}");
        assert!(first_text.starts_with(text), "{name}: {first_text:?}");
        assert!(
            lines.iter().any(|(s, ..)| s == other),
            "{name}: no {other} in {lines:?}"
        );
        assert!(record["word_count"].as_i64().unwrap_or(0) > 20, "{name}");
        let stem = file_name.rsplit_once('.').map_or(file_name, |(stem, _)| stem);
        assert_eq!(record["name"], stem, "{name}: the file name names the record");
    }
    assert_eq!(records_count(&app, &user, &project).await, cases.len() as i64);
    app.stop().await;
}

#[tokio::test]
async fn broken_and_foreign_files_are_refused_and_nothing_is_written() {
    let app = TestApp::start_with(|settings| settings.material.max_upload_bytes = 64 * 1024).await;
    let user = app.user().await;
    let project = app.project(&user, "Refusals").await;
    let path = format!("/projects/{project}/records");
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: Vec<(&str, &str, Vec<u8>, StatusCode, &str)> = vec![
        (
            "empty.txt",
            "text/plain",
            Vec::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "empty",
        ),
        ("scan.png", "image/png", png, StatusCode::UNSUPPORTED_MEDIA_TYPE, "PNG"),
        (
            "blob.bin",
            "application/octet-stream",
            garbage,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "WebVTT",
        ),
        (
            "secret.pdf",
            "application/pdf",
            fixture("pdf_encrypted_user_password.pdf"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "password",
        ),
        (
            "scan.pdf",
            "application/pdf",
            fixture("pdf_scanned_image_only.pdf"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "OCR",
        ),
        (
            "secret.docx",
            "application/octet-stream",
            fixture("docx_password_protected.docx"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "password",
        ),
        (
            "old.doc",
            "application/msword",
            fixture("docx_legacy.doc"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ".docx",
        ),
        (
            "cut.pdf",
            "application/pdf",
            fixture("pdf_interview_libreoffice.pdf")[..2_000].to_vec(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "",
        ),
        (
            "big.txt",
            "text/plain",
            b"Anna: hello\n".repeat(6_000),
            StatusCode::PAYLOAD_TOO_LARGE,
            "limit",
        ),
    ];
    for (name, content_type, bytes, expected, says) in cases {
        let (status, body) = upload(&app, &user, &project, name, content_type, bytes, None).await;
        assert_eq!(status, expected, "{name}: {body}");
        let message = match &body["detail"] {
            Value::String(message) => message.clone(),
            Value::Array(issues) => {
                assert_validation_body(&body);
                assert_eq!(error_locs(&body), [json!(["body", "file"])], "{name}");
                issues[0]["msg"].as_str().unwrap_or_default().to_owned()
            }
            other => panic!("{name}: unexpected body {other}"),
        };
        assert!(
            message.to_lowercase().contains(&says.to_lowercase()),
            "{name}: {message}"
        );
    }

    // No file at all; a body that is neither JSON nor multipart; a JSON body with problems.
    let form = Form::new().text("title", "no file");
    let response = app
        .client
        .post(app.url(&path))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.expect("json");
    assert_eq!(error_types(&body), ["missing"]);
    assert_eq!(error_locs(&body), [json!(["body", "file"])]);

    let (status, body) = app
        .call_raw(Method::POST, &path, &user.token, "text/plain", b"Anna: hi".to_vec())
        .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    let (status, body) = app.post(&path, &user, json!({ "title": "", "text": 5 })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["string_too_short", "string_type"]);
    let part = Part::bytes(b"Anna: hi".to_vec()).file_name("a.txt");
    let form = Form::new().part("file", part).text("language", "english please");
    let response = app
        .client
        .post(app.url(&path))
        .bearer_auth(&user.token)
        .multipart(form)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.expect("json");
    assert_eq!(error_locs(&body), [json!(["body", "language"])]);

    let (status, body) = app
        .post(&path, &user, json!({ "title": "Only spaces", "text": " \n\t " }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["body", "text"])]);

    assert_eq!(records_count(&app, &user, &project).await, 0);
    let (_, list) = app.get(&path, &user).await;
    assert_eq!(list, json!([]));
    let leftovers = std::fs::read_dir(app.data_dir.join("uploads"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 0, "refused uploads leave no temporary files");
    app.stop().await;
}

#[tokio::test]
async fn limits_on_utterances_and_duration_are_settings() {
    let app = TestApp::start_with(|settings| {
        settings.material.max_utterances = 3;
        settings.material.max_duration_minutes = 60;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Limits").await;
    let path = format!("/projects/{project}/records");
    let (status, body) = app
        .post(
            &path,
            &user,
            json!({ "title": "Long", "text": "A: one\nB: two\nA: three\nB: four" }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["detail"][0]["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("INSIGHT_MAX_UTTERANCES")
    );
    let vtt = "WEBVTT\n\n01:30:00.000 --> 01:30:02.000\nA: late\n";
    let (status, body) = app.post(&path, &user, json!({ "title": "Late", "text": vtt })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["detail"][0]["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("INSIGHT_MAX_DURATION_MINUTES")
    );
    let (status, body) = app
        .post(&path, &user, json!({ "title": "Fine", "text": "A: one\nB: two" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn speakers_can_be_renamed_and_their_role_fixed() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Speakers").await;
    let text = "Speaker 1: Why did you switch tools?\nSpeaker 2: The old one was slow.\nSpeaker 1: And now?";
    let (_, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Call", "text": text }),
        )
        .await;
    let id = record["id"].as_str().expect("id").to_owned();
    wait_for(&app, &user, &id, &["Finished"]).await;

    let (status, record) = app
        .call(
            Method::PATCH,
            &format!("/insight/{id}/speaker_name"),
            Some(&user.token),
            Some(json!({ "speaker": "Speaker 2", "name": "Dana" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    let speakers: Vec<String> = lines(&record).into_iter().map(|(s, ..)| s).collect();
    assert_eq!(speakers, ["Speaker 1", "Dana", "Speaker 1"]);
    assert_eq!(record["respondent_names"], json!(["Dana"]));

    let (status, record) = app
        .call(
            Method::PATCH,
            &format!("/insight/{id}/speaker_respondent/"),
            Some(&user.token),
            Some(json!({ "speaker": "Speaker 1", "is_respondent": true })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    assert_eq!(record["respondents_count"], 2);
    assert_eq!(record["respondent_names"], json!(["Speaker 1", "Dana"]));
    let (_, stored) = app.get(&format!("/insight/{id}"), &user).await;
    assert!(
        stored["utterances"]
            .as_array()
            .expect("utterances")
            .iter()
            .all(|u| u["is_respondent"] == true)
    );

    let (status, body) = app
        .call(
            Method::PATCH,
            &format!("/insight/{id}/speaker_name"),
            Some(&user.token),
            Some(json!({ "speaker": "Nobody", "name": "X" })),
        )
        .await;
    assert_unknown_references(status, &body, &["speaker"]);
    let (status, body) = app
        .call(
            Method::PATCH,
            &format!("/insight/{id}/speaker_name"),
            Some(&user.token),
            Some(json!({ "speaker": "Dana", "name": "   " })),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["string_too_short"]);
    let (status, body) = app
        .call(
            Method::PATCH,
            &format!("/insight/{id}/speaker_respondent"),
            Some(&user.token),
            Some(json!({ "speaker": 3, "is_respondent": "maybe" })),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_types(&body), ["string_type", "bool_type"]);
    app.stop().await;
}

/// `PATCH /insight/{record}/utterances/{utterance}` with `body`.
async fn correct(app: &TestApp, user: &TestUser, record: &str, utterance: &str, body: Value) -> (StatusCode, Value) {
    app.call(
        Method::PATCH,
        &format!("/insight/{record}/utterances/{utterance}"),
        Some(&user.token),
        Some(body),
    )
    .await
}

fn updated_at(record: &Value) -> chrono::DateTime<chrono::Utc> {
    record["updated_at"]
        .as_str()
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        .map(|at| at.with_timezone(&chrono::Utc))
        .unwrap_or_else(|| panic!("updated_at: {record}"))
}

#[tokio::test]
async fn an_utterance_is_corrected_and_chat_and_persona_follow_the_correction() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Invoices").await;
    let text = "Interviewer: How do you send invoices?\nAnna: We email them from the finance tool.\n\
                Interviewer: Anything else?\nAnna: The export is slow.";
    let (_, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &user,
            json!({ "title": "Anna", "text": text, "language": "en" }),
        )
        .await;
    let id = record["id"].as_str().expect("id").to_owned();
    let before = wait_for(&app, &user, &id, &["Finished"]).await;
    // The record's chat index and persona are made from the transcript as it is now.
    let (status, answer) = app
        .post(
            &format!("/insight/{id}/chat/"),
            &user,
            json!({ "message": "How are invoices sent?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, persona) = app.get(&format!("/insight/{id}/persona-report"), &user).await;
    assert_eq!(status, StatusCode::OK, "{persona}");

    let (status, corrected) = correct(
        &app,
        &user,
        &id,
        "2",
        json!({ "text": "  We post them from Rotterdam.  " }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{corrected}");
    assert_eq!(corrected["id"], json!(id));
    assert_eq!(corrected["utterances"][1]["text"], "We post them from Rotterdam.");
    assert_eq!(corrected["utterances"][1]["speaker"], "Anna");
    assert_eq!(corrected["utterances"][1]["is_respondent"], true);
    assert_eq!(
        lines(&corrected)
            .iter()
            .map(|(_, _, _, text)| text.as_str())
            .collect::<Vec<_>>(),
        [
            "How do you send invoices?",
            "We post them from Rotterdam.",
            "Anything else?",
            "The export is slow."
        ],
        "only that utterance changed"
    );
    assert_eq!(
        corrected["word_count"],
        before["word_count"].as_i64().expect("word count") - 2
    );
    assert!(
        updated_at(&corrected) > updated_at(&before),
        "the record's version moved"
    );
    let (_, stored) = app.get(&format!("/insight/{id}/"), &user).await;
    assert_eq!(stored["utterances"], corrected["utterances"]);
    assert_eq!(stored["updated_at"], corrected["updated_at"]);

    // The record's chat finds the corrected words: an index of the old text has no
    // "Rotterdam" and would find no passage at all.
    let (status, answer) = app
        .post(
            &format!("/insight/{id}/chat/"),
            &user,
            json!({ "message": "Rotterdam?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let citations = answer["citations"].as_array().expect("citations");
    assert!(
        citations
            .iter()
            .any(|c| c["utterance_id"] == 2 && c["quote"] == "We post them from Rotterdam."),
        "{answer}"
    );
    assert!(
        answer["content"]
            .as_str()
            .expect("content")
            .contains("We post them from Rotterdam."),
        "{answer}"
    );
    // The persona is written again from the corrected record.
    let (status, again) = app.get(&format!("/insight/{id}/persona-report"), &user).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_ne!(again["generated_at"], persona["generated_at"]);

    // A speaker the record has: the utterance takes their role. A new name: it keeps
    // the role it had.
    let (status, moved) = correct(&app, &user, &id, "4", json!({ "speaker": "Interviewer" })).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["utterances"][3]["speaker"], "Interviewer");
    assert_eq!(moved["utterances"][3]["is_respondent"], false);
    assert_eq!(moved["utterances"][1]["speaker"], "Anna", "only that utterance moved");
    let (status, moved) = correct(
        &app,
        &user,
        &id,
        "3",
        json!({ "speaker": " Ben ", "text": "Anything else, Anna?" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["utterances"][2]["speaker"], "Ben");
    assert_eq!(moved["utterances"][2]["is_respondent"], false);
    assert_eq!(moved["utterances"][2]["text"], "Anything else, Anna?");
    assert_eq!(moved["participants_count"], 3);
    assert_eq!(moved["respondent_names"], json!(["Anna"]));

    // Nothing to change: answered as it is, the version stays.
    let (status, same) = correct(&app, &user, &id, "3", json!({ "text": "Anything else, Anna?" })).await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["updated_at"], moved["updated_at"]);
    let (status, same) = correct(&app, &user, &id, "3", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["updated_at"], moved["updated_at"]);
    app.stop().await;
}

#[tokio::test]
async fn a_correction_is_refused_when_blank_unknown_unfinished_or_not_allowed() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let stranger = app.user().await;
    let viewer = app.user().await;
    let (status, workspace) = app.post("/workspaces", &owner, json!({ "name": "Research" })).await;
    assert_eq!(status, StatusCode::CREATED, "{workspace}");
    let workspace = workspace["id"].as_str().expect("workspace").to_owned();
    let workspace_id = uuid::Uuid::parse_str(&workspace).expect("uuid");
    assert!(
        app.store
            .add_member(workspace_id, viewer.id, insight::domain::workspace::Role::Viewer)
            .await
            .expect("add member")
    );
    let (status, project) = app
        .post(
            "/projects/",
            &owner,
            json!({ "name": "Shared", "workspace_id": workspace }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let project = project["id"].as_str().expect("project").to_owned();
    let (_, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &owner,
            json!({ "title": "Call", "text": "A: How was it?\nB: Fine, thanks." }),
        )
        .await;
    let id = record["id"].as_str().expect("id").to_owned();
    let before = wait_for(&app, &owner, &id, &["Finished"]).await;

    // Blank text or speaker: each at its place, both at once.
    let (status, body) = correct(&app, &owner, &id, "2", json!({ "text": "   " })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_validation_body(&body);
    assert_eq!(error_locs(&body), [json!(["body", "text"])]);
    assert_eq!(error_types(&body), ["string_too_short"]);
    let (status, body) = correct(&app, &owner, &id, "2", json!({ "text": "", "speaker": " \t" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["body", "text"]), json!(["body", "speaker"])]);
    let (status, body) = correct(&app, &owner, &id, "2", json!({ "text": 3, "speaker": "x".repeat(201) })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["string_type", "string_too_long"]);
    // A number that is not one, with a bad body: every problem at once.
    let (status, body) = correct(&app, &owner, &id, "second", json!({ "text": "" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(
        error_locs(&body),
        [json!(["path", "utterance_id"]), json!(["body", "text"])]
    );
    assert_eq!(error_types(&body), ["int_parsing", "string_too_short"]);
    let (status, body) = correct(&app, &owner, "not-a-uuid", "2", json!({ "text": "Hi" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["path", "rec_id"])]);

    // An utterance the record does not have; a record that is not the caller's.
    for utterance in ["3", "0", "-1", "99999"] {
        let (status, body) = correct(&app, &owner, &id, utterance, json!({ "text": "Hi" })).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{utterance}: {body}");
        assert_eq!(body["detail"], "Utterance not found");
    }
    let (status, body) = correct(&app, &stranger, &id, "2", json!({ "text": "Hacked" })).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["detail"], "Record not found");
    let (status, body) = correct(
        &app,
        &owner,
        &uuid::Uuid::new_v4().to_string(),
        "2",
        json!({ "text": "Hi" }),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // A viewer sees the record and may not change it.
    let (status, _) = app.get(&format!("/insight/{id}/"), &viewer).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = correct(&app, &viewer, &id, "2", json!({ "text": "Changed" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["detail"].is_string(), "{body}");
    let (_, after) = app.get(&format!("/insight/{id}/"), &owner).await;
    assert_eq!(after["utterances"], before["utterances"], "nothing was changed");
    assert_eq!(after["updated_at"], before["updated_at"]);
    app.stop().await;
}

#[tokio::test]
async fn a_record_without_a_transcript_has_nothing_to_correct() {
    let (addr, stub) = stt_stub().await;
    stub.answer(Reply::status(401).message("Incorrect API key provided"));
    let app = TestApp::start_with(|settings| settings.speech.stt_base_url = Some(format!("http://{addr}/v1"))).await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let (status, record) = upload(&app, &user, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    wait_for(&app, &user, &id, &["Error"]).await;
    let (status, body) = correct(&app, &user, &id, "1", json!({ "text": "Hello" })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(
        body["detail"],
        "The record could not be processed, so it has no transcript to correct."
    );
    app.stop().await;
}

#[tokio::test]
async fn deleting_a_record_removes_it_and_strangers_never_see_it() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&owner, "Private").await;
    let (_, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &owner,
            json!({ "title": "Mine", "text": "A: hi\nB: hello" }),
        )
        .await;
    let id = record["id"].as_str().expect("id").to_owned();
    wait_for(&app, &owner, &id, &["Finished"]).await;

    for (method, path, body) in [
        (Method::GET, format!("/insight/{id}/"), None),
        (Method::DELETE, format!("/insight/{id}/"), None),
        (Method::GET, format!("/projects/{project}/records"), None),
        (
            Method::POST,
            format!("/projects/{project}/records"),
            Some(json!({ "title": "Intruder", "text": "A: hi" })),
        ),
        (
            Method::PATCH,
            format!("/insight/{id}/speaker_name"),
            Some(json!({ "speaker": "A", "name": "Hacked" })),
        ),
        (
            Method::PATCH,
            format!("/insight/{id}/speaker_respondent"),
            Some(json!({ "speaker": "A", "is_respondent": true })),
        ),
    ] {
        let (status, answer) = app.call(method.clone(), &path, Some(&stranger.token), body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {answer}");
    }
    let (status, _) = app.call(Method::GET, &format!("/insight/{id}/"), None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = app.get("/insight/not-a-uuid/", &owner).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_locs(&body), [json!(["path", "rec_id"])]);

    let (_, mine) = app.get(&format!("/insight/{id}"), &owner).await;
    assert_eq!(lines(&mine)[0].0, "A", "the stranger changed nothing");
    assert_eq!(records_count(&app, &owner, &project).await, 1);

    let (status, _) = app.delete(&format!("/insight/{id}"), &owner).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&format!("/insight/{id}/"), &owner).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(records_count(&app, &owner, &project).await, 0);
    let (status, _) = app.delete(&format!("/insight/{id}"), &owner).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn recordings_are_transcribed_by_the_configured_provider() {
    let (addr, stub) = stt_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_api_key = Some("sk-test-stt".into());
        settings.speech.stt_model = Some("whisper-large-v3".into());
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let audio = wav();
    let (status, record) = upload(&app, &user, &project, "call-07.wav", "audio/wav", audio.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    assert_eq!(record["source_format"], "audio");
    assert_eq!(record["name"], "call-07");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(&app, &user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Finished", "{record}");
    assert_eq!(
        lines(&record),
        [
            (
                "Unknown speaker".to_owned(),
                json!(0),
                json!(2_400),
                "How did onboarding go?".to_owned()
            ),
            (
                "Unknown speaker".to_owned(),
                json!(2_900),
                json!(9_500),
                "It was confusing at first.".to_owned()
            ),
        ]
    );
    assert_eq!(record["language"], "en");
    assert_eq!(record["duration_seconds"], 9.5);
    let media = app.data_dir.join("media");
    assert_eq!(
        std::fs::read_dir(&media).map(|dir| dir.count()).unwrap_or(0),
        1,
        "the recording is kept"
    );

    let seen = stub.calls();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].authorization(), Some("Bearer sk-test-stt"));
    let field = |name: &str| seen[0].part(name).cloned();
    let file = field("file").expect("file field");
    // The provider goes by the extension: it gets the stored file's name, not the client's.
    assert!(
        file.file_name.as_deref().is_some_and(|name| name.ends_with(".wav")),
        "{:?}",
        file.file_name
    );
    assert_eq!(file.bytes, audio, "the recording reaches the provider byte for byte");
    assert_eq!(field("model").map(|f| f.bytes), Some(b"whisper-large-v3".to_vec()));
    assert_eq!(
        field("response_format").map(|f| f.bytes),
        Some(b"verbose_json".to_vec())
    );

    // Deleting the project removes its records' recordings too.
    let (status, _) = app.delete(&format!("/projects/{project}"), &user).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        std::fs::read_dir(&media).map(|dir| dir.count()).unwrap_or(0),
        0,
        "the recording is gone"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_provider_that_stays_down_leaves_the_record_in_error_not_lost() {
    let (addr, stub) = stt_stub().await;
    stub.answer(Reply::status(503).message("model overloaded"));
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.jobs.job_max_attempts = 3;
        settings.jobs.job_retry_base_seconds = 0.05;
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let (status, record) = upload(&app, &user, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(&app, &user, &id, &["Error"]).await;
    let reason = record["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("503") && reason.contains("model overloaded"),
        "{reason}"
    );
    assert_eq!(stub.call_count(), 3, "each attempt reached the provider");
    assert_eq!(records_count(&app, &user, &project).await, 1);
    app.stop().await;
}

#[tokio::test]
async fn a_provider_that_echoes_the_api_key_does_not_get_it_into_the_record() {
    const KEY: &str = "sk-stt-0123456789abcdef";
    let (addr, stub) = stt_stub().await;
    stub.answer(Reply::status(401).message(&format!("Incorrect API key provided: {KEY}")));
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_api_key = Some(KEY.into());
    })
    .await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let (status, record) = upload(&app, &user, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(&app, &user, &id, &["Error"]).await;
    let reason = record["error"].as_str().unwrap_or_default();
    assert!(reason.contains("401") && reason.contains("[redacted]"), "{reason}");
    assert!(!reason.contains(KEY), "the key stays out of the record: {reason}");
    assert_eq!(
        stub.last_call()
            .and_then(|call| call.authorization().map(str::to_owned)),
        Some(format!("Bearer {KEY}")),
        "the key went to the provider, and only there"
    );
    app.stop().await;
}

#[tokio::test]
async fn recordings_without_a_provider_get_503_naming_the_setting() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    for (name, content_type) in [("call.wav", "audio/wav"), ("call.bin", "application/octet-stream")] {
        let (status, body) = upload(&app, &user, &project, name, content_type, wav(), None).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{name}: {body}");
        assert!(
            body["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("INSIGHT_STT_BASE_URL"),
            "{body}"
        );
    }
    assert_eq!(records_count(&app, &user, &project).await, 0);
    app.stop().await;
}

#[tokio::test]
async fn search_finds_the_relevant_passages_and_follows_record_changes() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&owner, "Pricing study").await;
    let path = format!("/projects/{project}/records");
    let first = "Interviewer: How do you pick tools?\nAnna: We compare features and ask colleagues.";
    let second = "Interviewer: What stopped you from buying?\nBen: Honestly, the prices were too high for a team of three.\n\
                  Interviewer: Anything else?\nBen: The onboarding took weeks.";
    let mut ids = Vec::new();
    for (title, text) in [("Anna", first), ("Ben", second)] {
        let (status, record) = app
            .post(&path, &owner, json!({ "title": title, "text": text, "language": "en" }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        let id = record["id"].as_str().expect("id").to_owned();
        wait_for(&app, &owner, &id, &["Finished"]).await;
        ids.push(uuid::Uuid::parse_str(&id).expect("uuid"));
    }
    // What the research assistant and record chat quote: the passages the workspace index
    // finds, in the scope asked about.
    let quoted = |answer: &Value| -> Vec<(String, i64)> {
        answer["citations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c["record_id"].as_str()?.to_owned(), c["utterance_id"].as_i64()?)))
            .collect()
    };
    let ask_project = |user: &TestUser, message: &str| {
        let body = json!({ "message": message, "project_id": project });
        let user = user.clone();
        let app = &app;
        async move { app.post("/agent/chat", &user, body).await }
    };
    let (status, answer) = ask_project(&owner, "What did they say about pricing?").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let ben = ids[1].to_string();
    assert_eq!(quoted(&answer).first(), Some(&(ben.clone(), 2)), "{answer}");
    assert_eq!(answer["citations"][0]["speaker"], "Ben");

    // A record's chat finds only that record's words.
    let (status, answer) = app
        .post(
            &format!("/insight/{}/chat", ids[0]),
            &owner,
            json!({ "message": "pricing colleagues", "search_settings": { "use_web": false, "search_scope": "transcript" } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let citations = answer["citations"].as_array().cloned().unwrap_or_default();
    assert!(!citations.is_empty(), "{answer}");
    assert!(
        citations
            .iter()
            .all(|c| c["utterance_id"] == json!(2) && c["speaker"] == "Anna"),
        "{answer}"
    );

    // A correction is found by the record's chat at once: the index is asked to catch up
    // when the record changed after its last pass.
    let (status, corrected) = app
        .call(
            Method::PATCH,
            &format!("/insight/{}/utterances/2", ids[0]),
            Some(&owner.token),
            Some(json!({ "text": "We compare features and ask the procurement team." })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{corrected}");
    let (status, answer) = app
        .post(
            &format!("/insight/{}/chat", ids[0]),
            &owner,
            json!({ "message": "procurement", "search_settings": { "use_web": false, "search_scope": "transcript" } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["citations"][0]["quote"], "We compare features and ask the procurement team.",
        "{answer}"
    );

    let (status, _) = ask_project(&stranger, "pricing").await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "another user's project is an unknown reference"
    );

    let (status, _) = app.delete(&format!("/insight/{ben}"), &owner).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, answer) = ask_project(&owner, "pricing").await;
    assert!(
        quoted(&answer).iter().all(|(record, _)| *record != ben),
        "a deleted record is not quoted: {answer}"
    );
    let (_, answer) = ask_project(&owner, "procurement").await;
    assert_eq!(quoted(&answer), vec![(ids[0].to_string(), 2)], "{answer}");
    app.stop().await;
}

#[tokio::test]
async fn files_no_record_owns_are_swept_once_a_day_old() {
    let (addr, _stub) = stt_stub().await;
    let app = TestApp::start_with(|settings| settings.speech.stt_base_url = Some(format!("http://{addr}/v1"))).await;
    let user = app.user().await;
    let project = app.project(&user, "Calls").await;
    let (status, record) = upload(&app, &user, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    wait_for(&app, &user, record["id"].as_str().expect("id"), &["Finished"]).await;

    let two_days_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    let age = |path: &std::path::Path| {
        let file = std::fs::File::options().write(true).open(path).expect("open");
        file.set_modified(two_days_ago).expect("set mtime");
    };
    let media = app.data_dir.join("media");
    let uploads = app.data_dir.join("uploads");
    std::fs::create_dir_all(&uploads).expect("uploads dir");
    let owned = std::fs::read_dir(&media)
        .expect("media")
        .next()
        .expect("the recording")
        .expect("entry")
        .path();
    age(&owned);
    let orphan = media.join("orphan.wav");
    let cut_off = uploads.join("cut-off.part");
    let fresh = uploads.join("in-progress.part");
    for path in [&orphan, &cut_off, &fresh] {
        std::fs::write(path, b"bytes").expect("write");
    }
    age(&orphan);
    age(&cut_off);

    let files = insight::providers::files::Files::in_folder(&app.data_dir).expect("the data folder");
    assert_eq!(insight::workers::sweep(&app.store, &app.data_dir, &files).await, 2);
    assert!(owned.exists(), "a record's recording stays, however old");
    assert!(fresh.exists(), "an upload that may be in progress stays");
    assert!(!orphan.exists() && !cut_off.exists());
    app.stop().await;
}
