//! Exchange over the JSON API: a project's highlights as CSV (quoted, formulas
//! defused, suggestions left out), a project as a REFI-QDA `.qdpx` that the standard's
//! schema accepts and that comes back the same in another workspace, a `.qdpx` made by
//! another tool (AQDA, see tests/fixtures/refi-qda/README.md) taken in, broken files
//! refused with a sentence, and nobody reaching another's projects.
//!
//! The schema check runs `xmllint` (Debian's libxml2-utils): `INSIGHT_TEST_XMLLINT`
//! names it (`.ci/run` installs it and sets it); without it the check is skipped and
//! says so, except under CI, where a missing xmllint fails the test.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;
use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::exchange::{download, header, send_file, unzip};
use crate::support::records::{finished_record, suggestion};
use crate::support::{TestApp, TestUser};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/refi-qda");

const ANNA: &str = "Interviewer: What does invoicing cost you?\n\
                    Anna: \"Too much\", she said, twice. Ça coûte trop cher.\n\
                    Anna: =SUM(A1) is what I type into the sheet, every month.\n\
                    Interviewer: And the export?\n\
                    Anna: It fails; then I retry.";

const BOB: &str = "Interviewer: What would you change?\n\
                   Bob: Fewer clicks, and a price per company.";

fn span(from: (i64, i64), to: (i64, i64)) -> Value {
    json!({ "start": { "utterance_id": from.0, "offset": from.1 }, "end": { "utterance_id": to.0, "offset": to.1 } })
}

async fn tag(app: &TestApp, user: &TestUser, workspace: Uuid, body: Value) -> String {
    let (status, tag) = app.post(&format!("/workspaces/{workspace}/tags"), user, body).await;
    assert_eq!(status, StatusCode::CREATED, "{tag}");
    tag["id"].as_str().expect("tag id").to_owned()
}

async fn highlight(app: &TestApp, user: &TestUser, record: &str, mut body: Value, tags: &[&str], note: &str) -> Value {
    body["tag_ids"] = json!(tags);
    body["note"] = json!(note);
    let (status, made) = app.post(&format!("/insight/{record}/highlights"), user, body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made
}

async fn import(app: &TestApp, user: &TestUser, workspace: Uuid, file: Vec<u8>) -> (StatusCode, Value) {
    send_file(
        app,
        user,
        &format!("/workspaces/{workspace}/import/qdpx"),
        "project.qdpx",
        file,
    )
    .await
}

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(*name, options).expect("entry");
        std::io::Write::write_all(&mut zip, bytes).expect("written");
    }
    zip.finish().expect("zip").into_inner()
}

/// xmllint, or `None` (the check skipped) when it is not installed outside CI.
fn xmllint() -> Option<PathBuf> {
    crate::support::programs::tool(
        "INSIGHT_TEST_XMLLINT",
        Some("/usr/bin/xmllint"),
        "install Debian's libxml2-utils",
    )
}

/// Checks `project.qde` against the REFI-QDA project schema (Project-mrt2019.xsd).
fn assert_valid_qde(qde: &[u8]) {
    let Some(xmllint) = xmllint() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("project.qde");
    std::fs::write(&file, qde).expect("written");
    let schema = Path::new(FIXTURES).join("Project-mrt2019.xsd");
    let output = std::process::Command::new(xmllint)
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("xmllint runs");
    assert!(
        output.status.success(),
        "project.qde does not validate against the REFI-QDA schema:\n{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(qde)
    );
}

#[tokio::test]
async fn highlights_csv_quotes_every_cell_defuses_formulas_and_leaves_suggestions_out() {
    let app =
        TestApp::start_with(|settings| settings.server.public_url = "https://insight.example.org/".to_owned()).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Invoices, Q3").await;
    let record = finished_record(&app, &ann, &project, "Anna, first call", ANNA).await;
    let pricing = tag(&app, &ann, ann.id, json!({ "name": "Pricing" })).await;
    let formula = tag(&app, &ann, ann.id, json!({ "name": "=Formulas" })).await;
    // "\"Too much\", she said," with its quotes and commas.
    highlight(
        &app,
        &ann,
        &record,
        span((2, 0), (2, 21)),
        &[&pricing],
        "Line one, with a comma\nLine two",
    )
    .await;
    // From "=SUM(A1)" into the next utterance: a formula and a line break.
    highlight(
        &app,
        &ann,
        &record,
        span((3, 0), (4, 15)),
        &[&formula, &pricing],
        "+1 for this",
    )
    .await;
    suggestion(&app, &record, 5, "It fails").await;

    let (status, headers, body) = download(&app, &ann, &format!("/projects/{project}/highlights.csv")).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert!(header(&headers, "content-type").starts_with("text/csv"), "{headers:?}");
    assert!(header(&headers, "content-type").contains("utf-8"), "{headers:?}");
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"invoices-q3-highlights.csv\""
    );
    // A byte order mark, so spreadsheets read UTF-8.
    let csv_text = body.strip_prefix(b"\xEF\xBB\xBF").expect("a byte order mark");
    let mut reader = csv::Reader::from_reader(csv_text);
    let columns: Vec<String> = reader
        .headers()
        .expect("header row")
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        columns,
        [
            "highlight_id",
            "record_id",
            "record_name",
            "start_utterance_id",
            "end_utterance_id",
            "start_ms",
            "speaker",
            "is_respondent",
            "quote",
            "tags",
            "note",
            "status",
            "author_email",
            "created_at",
            "link"
        ]
    );
    let rows: Vec<BTreeMap<String, String>> = reader
        .records()
        .map(|row| {
            let row = row.expect("a row");
            columns.iter().cloned().zip(row.iter().map(str::to_owned)).collect()
        })
        .collect();
    assert_eq!(rows.len(), 2, "the suggestion is left out: {rows:?}");
    let quoted = &rows[0];
    assert_eq!(quoted["quote"], "\"Too much\", she said,");
    assert_eq!(quoted["record_id"], record);
    assert_eq!(quoted["record_name"], "Anna, first call");
    assert_eq!(quoted["start_utterance_id"], "2");
    assert_eq!(quoted["end_utterance_id"], "2");
    assert_eq!(quoted["start_ms"], "");
    assert_eq!(quoted["speaker"], "Anna");
    assert_eq!(quoted["is_respondent"], "true");
    assert_eq!(quoted["tags"], "Pricing");
    assert_eq!(quoted["note"], "Line one, with a comma\nLine two");
    assert_eq!(quoted["status"], "ok");
    assert_eq!(quoted["author_email"], ann.email);
    assert!(
        chrono::DateTime::parse_from_rfc3339(&quoted["created_at"]).is_ok(),
        "{quoted:?}"
    );
    assert_eq!(quoted["link"], format!("https://insight.example.org/r/{record}#u2"));
    let formula_row = &rows[1];
    assert_eq!(
        formula_row["quote"],
        "'=SUM(A1) is what I type into the sheet, every month.\nAnd the export?"
    );
    assert_eq!(formula_row["tags"], "'=Formulas; Pricing");
    assert_eq!(formula_row["note"], "'+1 for this");
    assert_eq!(formula_row["end_utterance_id"], "4");
    assert_eq!(
        formula_row["link"],
        format!("https://insight.example.org/r/{record}#u3")
    );

    // The export is in the workspace's audit log.
    let (status, log) = app
        .get(&format!("/workspaces/{}/audit?action=export.", ann.id), &ann)
        .await;
    assert_eq!(status, StatusCode::OK, "{log}");
    assert_eq!(log[0]["action"], "export.created", "{log}");
    assert_eq!(log[0]["target_id"], json!(project));
    assert_eq!(log[0]["detail"]["format"], "csv");
    assert_eq!(log[0]["detail"]["highlights"], 2);
}

/// What a project holds, compared across workspaces: its records' utterances, and its
/// highlights as (record, quote, tags, note).
async fn contents(
    app: &TestApp,
    user: &TestUser,
    project: &str,
) -> (
    BTreeMap<String, Vec<(String, String)>>,
    BTreeSet<(String, String, Vec<String>, String)>,
) {
    let (status, records) = app.get(&format!("/projects/{project}/records"), user).await;
    assert_eq!(status, StatusCode::OK, "{records}");
    let mut transcripts = BTreeMap::new();
    for record in records.as_array().expect("records") {
        let id = record["id"].as_str().expect("id");
        let detail = app.wait_finished(user, id).await;
        let utterances = detail["utterances"]
            .as_array()
            .expect("utterances")
            .iter()
            .map(|u| {
                (
                    u["speaker"].as_str().unwrap().to_owned(),
                    u["text"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        transcripts.insert(record["name"].as_str().expect("name").to_owned(), utterances);
    }
    let (status, highlights) = app
        .get(&format!("/projects/{project}/highlights?status=ok"), user)
        .await;
    assert_eq!(status, StatusCode::OK, "{highlights}");
    let highlights = highlights
        .as_array()
        .expect("highlights")
        .iter()
        .map(|h| {
            let mut tags: Vec<String> = h["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect();
            tags.sort();
            (
                h["record_name"].as_str().unwrap().to_owned(),
                h["quote"].as_str().unwrap().to_owned(),
                tags,
                h["note"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (transcripts, highlights)
}

/// The workspace's tags as (name, colour, description, group's name).
async fn codebook(
    app: &TestApp,
    user: &TestUser,
    workspace: Uuid,
) -> BTreeSet<(String, String, String, Option<String>)> {
    let (status, tags) = app.get(&format!("/workspaces/{workspace}/tags"), user).await;
    assert_eq!(status, StatusCode::OK, "{tags}");
    let tags = tags.as_array().expect("tags");
    let name_of = |id: &Value| {
        tags.iter()
            .find(|t| &t["id"] == id)
            .map(|t| t["name"].as_str().unwrap().to_owned())
    };
    tags.iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["color"].as_str().unwrap().to_owned(),
                t["description"].as_str().unwrap().to_owned(),
                name_of(&t["parent_id"]),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_qdpx_export_is_valid_refi_qda_and_comes_back_the_same_in_another_workspace() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Invoicing study").await;
    let anna = finished_record(&app, &ann, &project, "Anna", ANNA).await;
    let bob = finished_record(&app, &ann, &project, "Bob", BOB).await;
    let pricing = tag(
        &app,
        &ann,
        ann.id,
        json!({ "name": "Pricing", "color": "#d62728", "description": "What they pay, & what they think of it" }),
    )
    .await;
    let expensive = tag(
        &app,
        &ann,
        ann.id,
        json!({ "name": "Too expensive", "color": "#ff7f0e", "parent_id": pricing }),
    )
    .await;
    let tooling = tag(&app, &ann, ann.id, json!({ "name": "Tooling", "color": "#1f77b4" })).await;
    highlight(&app, &ann, &anna, span((2, 0), (2, 10)), &[&pricing], "").await;
    highlight(
        &app,
        &ann,
        &anna,
        span((2, 29), (2, 47)),
        &[&expensive, &pricing],
        "Said <twice>, laughing",
    )
    .await;
    highlight(&app, &ann, &anna, span((3, 0), (5, 8)), &[&tooling], "").await;
    highlight(&app, &ann, &bob, span((2, 0), (2, 12)), &[&tooling, &expensive], "").await;
    suggestion(&app, &bob, 2, "Fewer").await;

    let (status, headers, body) = download(&app, &ann, &format!("/projects/{project}/export.qdpx")).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(header(&headers, "content-type"), "application/zip");
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"invoicing-study.qdpx\""
    );
    let files = unzip(&body);
    let qde = files.get("project.qde").expect("a project.qde");
    assert_valid_qde(qde);
    let qde_text = String::from_utf8_lossy(qde);
    assert!(qde_text.contains("xmlns=\"urn:QDA-XML:project:1.0\""), "{qde_text}");
    assert!(
        qde_text.contains(&format!("name=\"{}\"", ann.email)),
        "the exporting user: {qde_text}"
    );
    // One plain text per record, one utterance a line.
    let anna_text = String::from_utf8(files[&format!("sources/{anna}.txt")].clone()).expect("UTF-8");
    assert!(
        anna_text.starts_with("Interviewer: What does invoicing cost you?\nAnna: \"Too much\""),
        "{anna_text}"
    );
    assert!(files.contains_key(&format!("sources/{bob}.txt")), "{:?}", files.keys());
    assert_eq!(
        qde_text.matches("<PlainTextSelection ").count(),
        4,
        "the suggestion is left out: {qde_text}"
    );
    let (_, log) = app
        .get(&format!("/workspaces/{}/audit?action=export.", ann.id), &ann)
        .await;
    assert_eq!(log[0]["action"], "export.created", "{log}");
    assert_eq!(log[0]["detail"], json!({ "format": "qdpx", "highlights": 4 }));

    // Into another person's workspace, where none of it exists yet.
    let other = app.user().await;
    let (status, imported) = import(&app, &other, other.id, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{imported}");
    assert_eq!(imported["records"], 2, "{imported}");
    assert_eq!(imported["tags"], 3, "{imported}");
    assert_eq!(imported["highlights"], 4, "{imported}");
    assert_eq!(imported["skipped"], json!({ "sources": 0, "segments": 0 }));
    let copy = imported["project_id"].as_str().expect("project id");
    let (status, copied) = app.get(&format!("/projects/{copy}"), &other).await;
    assert_eq!(status, StatusCode::OK, "{copied}");
    assert_eq!(copied["name"], "Invoicing study");
    assert_eq!(copied["workspace_id"], json!(other.id));

    assert_eq!(
        codebook(&app, &other, other.id).await,
        codebook(&app, &ann, ann.id).await
    );
    let (original_records, original_highlights) = contents(&app, &ann, &project).await;
    let (copied_records, copied_highlights) = contents(&app, &other, copy).await;
    assert_eq!(copied_records, original_records);
    assert_eq!(copied_highlights, original_highlights);
    assert_eq!(copied_highlights.len(), 4);

    // Again into the same workspace: the tags are found by name, not made twice.
    let (status, again) = import(&app, &other, other.id, body).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(again["tags"], 3);
    assert_eq!(codebook(&app, &other, other.id).await.len(), 3);
}

#[tokio::test]
async fn a_project_exported_by_another_tool_comes_in_with_its_codes_and_segments() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    // The workspace has a tag the project's "Tooling" code joins (names compared without case).
    let tooling = tag(&app, &ann, ann.id, json!({ "name": "tooling", "color": "#17becf" })).await;
    let file = std::fs::read(Path::new(FIXTURES).join("aqda_invoicing.qdpx")).expect("fixture");
    assert_valid_qde(&unzip(&file)["project.qde"]);
    let (status, imported) = import(&app, &ann, ann.id, file).await;
    assert_eq!(status, StatusCode::CREATED, "{imported}");
    // The picture is a text source without text.
    assert_eq!(
        imported["skipped"],
        json!({ "sources": 1, "segments": 0 }),
        "{imported}"
    );
    assert_eq!(imported["records"], 2);
    assert_eq!(imported["tags"], 4);
    // Seven codings, two of them on the same words: six highlights.
    assert_eq!(imported["highlights"], 6);
    let project = imported["project_id"].as_str().expect("project id");
    let (_, made) = app.get(&format!("/projects/{project}"), &ann).await;
    assert_eq!(made["name"], "Invoicing study");
    assert_eq!(made["description"], "How small teams invoice.");

    let tags = codebook(&app, &ann, ann.id).await;
    let pricing = "What they pay, and what they think of it";
    let expected: BTreeSet<_> = [
        ("Pricing", "#d62728", pricing, None),
        ("Too expensive", "#ff7f0e", "", Some("Pricing")),
        // Three levels deep in AQDA; groups are one level deep here.
        ("Seat licences", "#8c564b", "Paying per person", Some("Pricing")),
        ("tooling", "#17becf", "", None),
    ]
    .into_iter()
    .map(|(name, color, description, group)| {
        (
            name.to_owned(),
            color.to_owned(),
            description.to_owned(),
            group.map(str::to_owned),
        )
    })
    .collect();
    assert_eq!(tags, expected);

    let (records, highlights) = contents(&app, &ann, project).await;
    let anna = &records["anna-interview"];
    let speakers: Vec<&str> = anna.iter().map(|(speaker, _)| speaker.as_str()).collect();
    assert_eq!(
        speakers,
        ["Interviewer", "Anna", "Interviewer", "Anna", "Unknown speaker", "Anna"]
    );
    assert_eq!(
        anna[3].1,
        "Ça coûte trop cher, about forty euros a seat. The export is slow."
    );
    assert_eq!(records["bob-notes"].len(), 2);
    let row = |record: &str, quote: &str, tags: &[&str], note: &str| {
        (
            record.to_owned(),
            quote.to_owned(),
            tags.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>(),
            note.to_owned(),
        )
    };
    let expected: BTreeSet<_> = [
        row(
            "anna-interview",
            "We email them from the finance tool",
            &["tooling"],
            "",
        ),
        row(
            "anna-interview",
            "Ça coûte trop cher",
            &["Too expensive"],
            "Said twice, laughing.",
        ),
        row("anna-interview", "about forty euros a seat", &["Seat licences"], ""),
        // Coded from Anna's label on: the highlight starts with her words.
        row(
            "anna-interview",
            "Ça coûte trop cher, about forty euros a seat. The export is slow.\nThe call dropped",
            &["tooling"],
            "",
        ),
        row(
            "anna-interview",
            "Every month it fails at least once.",
            &["Pricing", "tooling"],
            "",
        ),
        row("bob-notes", "a price per company, not per seat", &["Seat licences"], ""),
    ]
    .into_iter()
    .collect();
    assert_eq!(highlights, expected);
    let (_, listed) = app.get(&format!("/workspaces/{}/tags", ann.id), &ann).await;
    let tooling_now = listed
        .as_array()
        .and_then(|tags| tags.iter().find(|tag| tag["id"] == json!(tooling)))
        .expect("the workspace's own tag stays");
    assert_eq!(tooling_now["highlights_count"], 3, "{tooling_now}");
}

#[tokio::test]
async fn broken_qdpx_files_are_refused_with_a_sentence_and_leave_nothing_behind() {
    let app = TestApp::start_with(|settings| settings.material.max_upload_bytes = 20_000).await;
    let ann = app.user().await;
    let refused = |body: &Value, words: &str| {
        let detail = &body["detail"][0];
        assert_eq!(detail["loc"], json!(["body", "file"]), "{body}");
        assert_eq!(detail["type"], "value_error", "{body}");
        let msg = detail["msg"].as_str().unwrap_or_default();
        assert!(msg.contains(words), "{words:?} not in {body}");
    };
    let (status, body) = import(&app, &ann, ann.id, b"PK\x03\x04 not really a zip".to_vec()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    refused(&body, "not a zip");

    let no_project = zip_of(&[("sources/a.txt", b"Anna: hello")]);
    let (status, body) = import(&app, &ann, ann.id, no_project).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    refused(&body, "no project.qde");

    let broken = zip_of(&[("project.qde", b"<Project name=\"x\"><Sources><TextSource guid=\"a\">")]);
    let (status, body) = import(&app, &ann, ann.id, broken).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    refused(&body, "not well-formed XML");

    let foreign = zip_of(&[("project.qde", b"<CodeBook/>")]);
    let (status, body) = import(&app, &ann, ann.id, foreign).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    refused(&body, "not a REFI-QDA project");

    // A megabyte of spaces in a project.qde that packs to a kilobyte, against a budget
    // of ten times the 20 kB upload limit: past a limit, 413.
    let mut bomb_xml = b"<Project xmlns=\"urn:QDA-XML:project:1.0\" name=\"x\">".to_vec();
    bomb_xml.extend(std::iter::repeat_n(b' ', 1_000_000));
    bomb_xml.extend(b"</Project>");
    let bomb = zip_of(&[("project.qde", &bomb_xml)]);
    assert!(bomb.len() < 20_000);
    let (status, body) = import(&app, &ann, ann.id, bomb).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(
        body["detail"].as_str().unwrap_or_default().contains("zip bomb"),
        "{body}"
    );

    let (status, body) = import(&app, &ann, ann.id, vec![b'x'; 30_000]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    let (status, body) = app
        .post(
            &format!("/workspaces/{}/import/qdpx", ann.id),
            &ann,
            json!({ "file": "x" }),
        )
        .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");

    let form = reqwest::multipart::Form::new().text("title", "no file");
    let response = app
        .client
        .post(app.url(&format!("/workspaces/{}/import/qdpx", ann.id)))
        .bearer_auth(&ann.token)
        .multipart(form)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["detail"][0]["loc"], json!(["body", "file"]));
    assert_eq!(body["detail"][0]["type"], "missing");

    // None of these made a project.
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(projects, json!([]));
}

#[tokio::test]
async fn nobody_exports_or_imports_where_he_is_not_a_member() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Private study").await;
    finished_record(&app, &ann, &project, "Anna", ANNA).await;
    let intruder = app.user().await;
    for path in [
        format!("/projects/{project}/highlights.csv"),
        format!("/projects/{project}/export.qdpx"),
    ] {
        let (status, _, body) = download(&app, &intruder, &path).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{path}: {}",
            String::from_utf8_lossy(&body)
        );
        assert!(!String::from_utf8_lossy(&body).contains("Anna"));
    }
    let (status, _, export) = download(&app, &ann, &format!("/projects/{project}/export.qdpx")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = import(&app, &intruder, ann.id, export).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, projects) = app.get("/projects/", &ann).await;
    assert_eq!(
        projects.as_array().map(Vec::len),
        Some(1),
        "nothing was imported: {projects}"
    );
}
