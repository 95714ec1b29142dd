//! Erasure and redaction leave no trace in files. The tests read the bytes themselves:
//! the SQLite database with every file beside it (its `-wal` and `-shm`), and every file
//! of the data folder (the search index, recordings, uploads). Each value is looked for
//! first, so that a test that finds nothing afterwards has shown it could. On PostgreSQL
//! the server's files are out of reach; there the tables an erasure rewrites must have
//! been vacuumed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::db::made_at;
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::records::{upload, wait_for, wav};
use crate::support::{TestApp, TestUser, eventually};

const EMAIL: &str = "quentin.marwood@example.org";
const NAME: &str = "Quentin Marwood";
/// What no file may hold afterwards, in any case: the address, the name, the surname
/// alone (as the index keeps words).
const TRACES: [&str; 3] = [EMAIL, "quentin marwood", "marwood"];

/// The app with a speech-to-text stub whose transcript of any recording gives the
/// respondent's address (his name is in the recording's own bytes, see [`signed_wav`]).
async fn start() -> (TestApp, OpenAiStub) {
    let (addr, stub) = OpenAiStub::start().await;
    stub.answer(Reply::body(json!({
        "task": "transcribe",
        "language": "english",
        "duration": 6.0,
        "text": format!("Thanks for calling. Reach me at {EMAIL}."),
        "segments": [
            { "id": 0, "seek": 0, "start": 0.0, "end": 2.0, "text": " Thanks for calling.", "tokens": [1], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01 },
            { "id": 1, "seek": 0, "start": 2.5, "end": 6.0, "text": format!(" Reach me at {EMAIL}."), "tokens": [2], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01 }
        ]
    })));
    let app = TestApp::start_with(move |settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_api_key = Some("sk-test-stt".into());
        settings.speech.stt_model = Some("whisper-large-v3".into());
    })
    .await;
    (app, stub)
}

/// A WAV recording whose INFO chunk names its artist, the respondent: the recording's
/// own bytes then hold his name and address.
fn signed_wav() -> Vec<u8> {
    let mut bytes = wav();
    let mut artist = format!("{NAME} <{EMAIL}>\0").into_bytes();
    if artist.len() % 2 == 1 {
        artist.push(0);
    }
    let mut list = b"INFOIART".to_vec();
    list.extend_from_slice(&(artist.len() as u32).to_le_bytes());
    list.extend_from_slice(&artist);
    bytes.extend_from_slice(b"LIST");
    bytes.extend_from_slice(&(list.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&list);
    let riff = (bytes.len() - 8) as u32;
    bytes[4..8].copy_from_slice(&riff.to_le_bytes());
    bytes
}

/// A text record, once finished.
/// The call in which he gives his name and address.
async fn his_call(app: &TestApp, user: &TestUser, project: &str) -> String {
    text_record(
        app,
        user,
        project,
        &format!("Call with {NAME}"),
        &format!(
            "Interviewer: How can we reach you?\n{NAME}: Write to {EMAIL}, or ask for {NAME} at the desk.\n\
             Interviewer: Thanks.\n{NAME}: The invoices are always late."
        ),
    )
    .await
}

async fn text_record(app: &TestApp, user: &TestUser, project: &str, title: &str, text: &str) -> String {
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
    id
}

/// A recording of the respondent, once transcribed.
async fn recording(app: &TestApp, user: &TestUser, project: &str) -> String {
    let (status, record) = upload(app, user, project, "call.wav", "audio/wav", signed_wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let record = wait_for(app, user, &id, &["Finished", "Error"]).await;
    assert_eq!(record["status"], "Finished", "{record}");
    id
}

/// Waits until search finds `query` in each of `records`, and each has its persona: the
/// background work on them is done, and the index's files hold their words.
async fn settled(app: &TestApp, user: &TestUser, query: &str, records: &[&str]) {
    eventually(
        Duration::from_secs(30),
        format!("the index never found {records:?}"),
        async || {
            let (status, found) = app.get(&format!("/search?q={query}"), user).await;
            assert_eq!(status, StatusCode::OK, "{found}");
            let hits: Vec<&Value> = found["hits"]
                .as_array()
                .map(|hits| hits.iter().collect())
                .unwrap_or_default();
            let indexed = records
                .iter()
                .all(|record| hits.iter().any(|hit| hit["record_id"] == json!(record)));
            if indexed { Ok(()) } else { Err(found) }
        },
    )
    .await;
    for record in records {
        eventually(
            Duration::from_secs(30),
            format!("no persona for {record}"),
            async || {
                let (status, persona) = app.get(&format!("/insight/{record}/persona-report"), user).await;
                if status == StatusCode::OK { Ok(()) } else { Err(persona) }
            },
        )
        .await;
    }
}

/// The SQLite database's folder (the database, its `-wal` and `-shm`), on SQLite.
fn database_folder(app: &TestApp) -> Option<PathBuf> {
    let path = app.database_url.strip_prefix("sqlite://")?;
    Path::new(path.split('?').next().unwrap_or(path))
        .parent()
        .map(Path::to_path_buf)
}

/// Every file under `folder`, with its bytes in lower case (ASCII).
fn files_under(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                found.push((path, bytes.to_ascii_lowercase()));
            }
        }
    }
    found
}

/// The files that hold `needle` (any case).
fn holding(files: &[(PathBuf, Vec<u8>)], needle: &str) -> Vec<PathBuf> {
    let needle = needle.to_ascii_lowercase().into_bytes();
    files
        .iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|window| window == needle))
        .map(|(path, _)| path.clone())
        .collect()
}

/// Where the respondent is before: in the database's files (on SQLite), in the recording
/// and in the search index. The index compresses what it stores, so a value written a
/// second time may be there only as a reference to the first: one of the two is enough.
/// Answers the index's files that hold him, which must be gone afterwards.
fn assert_present(app: &TestApp) -> Vec<PathBuf> {
    let data = files_under(&app.data_dir);
    let under = |folder: &str| -> Vec<(PathBuf, Vec<u8>)> {
        data.iter()
            .filter(|(path, _)| path.starts_with(app.data_dir.join(folder)))
            .cloned()
            .collect()
    };
    let (index, media) = (under("search"), under("media"));
    let database = database_folder(app).map(|folder| files_under(&folder));
    for needle in [EMAIL, NAME] {
        assert!(
            !holding(&media, needle).is_empty(),
            "{needle} is in the recording first"
        );
        if let Some(database) = &database {
            assert!(
                !holding(database, needle).is_empty(),
                "{needle} is in the database's files first"
            );
        }
    }
    let mut indexed: Vec<PathBuf> = TRACES.iter().flat_map(|needle| holding(&index, needle)).collect();
    indexed.sort();
    indexed.dedup();
    assert!(
        !indexed.is_empty(),
        "the search index's files hold the respondent first"
    );
    indexed
}

/// No file holds any trace of the respondent: the database's (on SQLite) and the data
/// folder's, every one of them; and the index's files that held him are gone.
fn assert_absent(app: &TestApp, indexed: &[PathBuf], what: &str) {
    let mut files = files_under(&app.data_dir);
    if let Some(folder) = database_folder(app) {
        let database = files_under(&folder);
        let names: Vec<String> = database
            .iter()
            .filter_map(|(path, _)| path.file_name().map(|name| name.to_string_lossy().into_owned()))
            .collect();
        assert!(
            names.iter().any(|name| name.ends_with(".db")),
            "the database is read: {names:?}"
        );
        files.extend(database);
    }
    assert!(
        files
            .iter()
            .any(|(path, _)| path.starts_with(app.data_dir.join("search"))),
        "the search index is read"
    );
    for needle in TRACES {
        let found = holding(&files, needle);
        assert!(found.is_empty(), "after the {what}, {needle} is still in {found:?}");
    }
    let kept: Vec<&PathBuf> = indexed.iter().filter(|path| path.exists()).collect();
    assert!(kept.is_empty(), "after the {what}, the index still has {kept:?}");
    let recordings = files
        .iter()
        .filter(|(path, _)| {
            path.starts_with(app.data_dir.join("media")) || path.starts_with(app.data_dir.join("uploads"))
        })
        .count();
    assert_eq!(recordings, 0, "after the {what}, no recording or upload is left");
}

/// How many times each table was vacuumed by hand (not by autovacuum), on PostgreSQL.
async fn vacuum_counts(app: &TestApp, tables: &[&str]) -> Option<Vec<i64>> {
    use sqlx::Connection;
    if !app.database_url.starts_with("postgres") {
        return None;
    }
    let mut conn = sqlx::PgConnection::connect(&app.database_url).await.expect("open");
    let mut counts = Vec::new();
    for table in tables {
        let (count,): (i64,) = sqlx::query_as(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = $1 AND schemaname = current_schema()",
        )
        .bind(table)
        .fetch_one(&mut conn)
        .await
        .expect("the table's statistics");
        counts.push(count);
    }
    Some(counts)
}

/// On PostgreSQL, waits until every table was vacuumed once more than `before` says.
async fn assert_vacuumed(app: &TestApp, tables: &[&str], before: Option<Vec<i64>>) {
    let Some(before) = before else { return };
    eventually(Duration::from_secs(30), "never vacuumed", async || {
        let after = vacuum_counts(app, tables).await.expect("counts");
        let behind: Vec<&str> = tables
            .iter()
            .zip(before.iter().zip(&after))
            .filter(|(_, (before, after))| after <= before)
            .map(|(table, _)| *table)
            .collect();
        if behind.is_empty() {
            Ok(())
        } else {
            Err(format!("{behind:?}"))
        }
    })
    .await;
}

#[tokio::test]
async fn an_erased_respondent_leaves_no_trace_in_any_file() {
    let (app, _stub) = start().await;
    let owner = app.user().await;
    let project = app.project(&owner, "Billing study").await;
    let said = his_call(&app, &owner, &project).await;
    let recorded = recording(&app, &owner, &project).await;
    let other = text_record(
        &app,
        &owner,
        &project,
        "Call with Bo",
        "Interviewer: How is billing?\nBo: Fine, the invoices arrive on time.",
    )
    .await;
    settled(&app, &owner, "marwood", &[&said, &recorded]).await;
    settled(&app, &owner, "invoices", &[&other]).await;
    let indexed = assert_present(&app);

    let tables = ["records", "utterances", "personas", "audit_events"];
    let before = vacuum_counts(&app, &tables).await;
    let (status, receipt) = app
        .post(
            &format!("/workspaces/{}/erasure", owner.id),
            &owner,
            json!({ "email": EMAIL.to_uppercase() }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{receipt}");
    assert_eq!(receipt["deleted"]["records"], 2, "{receipt}");

    assert_absent(&app, &indexed, "erasure");
    assert_vacuumed(&app, &tables, before).await;
    // The rest is still found, in a rewritten index.
    let (_, found) = app.get("/search?q=invoices", &owner).await;
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["hits"][0]["record_id"], json!(other), "{found}");
    app.stop().await;
}

#[tokio::test]
async fn a_redacted_record_leaves_no_trace_of_what_it_said_in_any_file() {
    let (app, _stub) = start().await;
    let owner = app.user().await;
    let project = app.project(&owner, "Billing study").await;
    let said = his_call(&app, &owner, &project).await;
    // Indexed with it, likely in the same segments: those then keep a live document.
    let other = text_record(
        &app,
        &owner,
        &project,
        "Call with Bo",
        "Interviewer: How is billing?\nBo: Fine, the invoices arrive on time.",
    )
    .await;
    let (status, highlight) = app
        .post(
            &format!("/insight/{said}/highlights"),
            &owner,
            json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 40 },
                "note": format!("{NAME}'s contact") }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{highlight}");
    let recorded = recording(&app, &owner, &project).await;
    settled(&app, &owner, "marwood", &[&said, &recorded]).await;
    settled(&app, &owner, "arrive", &[&other]).await;
    let indexed = assert_present(&app);

    let tables = ["records", "utterances", "highlights", "personas"];
    let before = vacuum_counts(&app, &tables).await;
    for record in [&said, &recorded] {
        let (status, receipt) = app.post(&format!("/insight/{record}/redact"), &owner, json!({})).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{receipt}");
    }

    assert_absent(&app, &indexed, "redaction");
    assert_vacuumed(&app, &tables, before).await;
    // The records stay, with placeholders, and are found by them.
    let (_, record) = app.get(&format!("/insight/{said}/"), &owner).await;
    assert!(
        record["utterances"][1]["text"]
            .as_str()
            .is_some_and(|text| text.contains("[EMAIL_1]")),
        "{record}"
    );
    let (_, found) = app.get("/search?q=arrive", &owner).await;
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["hits"][0]["record_id"], json!(other), "{found}");
    app.stop().await;
}

#[tokio::test]
async fn records_past_the_retention_leave_no_trace_in_any_file() {
    let (mut app, _stub) = start().await;
    let owner = app.user().await;
    let project = app.project(&owner, "Billing study").await;
    let said = his_call(&app, &owner, &project).await;
    let recorded = recording(&app, &owner, &project).await;
    settled(&app, &owner, "marwood", &[&said, &recorded]).await;
    let indexed = assert_present(&app);
    let (status, settings) = app
        .patch(
            &format!("/workspaces/{}/settings", owner.id),
            &owner,
            json!({ "retention_records_days": 90 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{settings}");
    let long_ago = chrono::Utc::now() - chrono::Duration::days(91);
    for record in [&said, &recorded] {
        made_at(&app, record, long_ago).await;
    }
    let tables = ["records", "utterances", "personas", "audit_events"];
    let before = vacuum_counts(&app, &tables).await;

    // The sweep runs when the service starts; the index is purged a moment later.
    app.restart(|_| {}).await;
    eventually(
        Duration::from_secs(30),
        "the retention's traces stayed in the files",
        async || {
            let mut files = files_under(&app.data_dir);
            if let Some(folder) = database_folder(&app) {
                files.extend(files_under(&folder));
            }
            let traces = TRACES.iter().any(|needle| !holding(&files, needle).is_empty());
            if !traces && indexed.iter().all(|path| !path.exists()) {
                Ok(())
            } else {
                Err("")
            }
        },
    )
    .await;
    for record in [&said, &recorded] {
        let (status, _) = app.get(&format!("/insight/{record}/"), &owner).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{record} is deleted");
    }
    assert_absent(&app, &indexed, "retention");
    assert_vacuumed(&app, &tables, before).await;
    app.stop().await;
}
