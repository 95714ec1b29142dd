//! Backup and move over the JSON API: a project with everything a team puts into one (a
//! transcript, a recording, an AI-led interview and a room still waiting, a persona,
//! tags in a group, highlights with notes and a suggestion, an insight, a report
//! regenerated into a second version that includes the insight, theme proposals) goes
//! out as one archive and comes back, in another person's workspace and in its own,
//! field by field the same: the copy's own archive holds the same rows under new ids and
//! the same recording bytes, and the copy works (search finds it, the waiting room has a
//! link of its own). Broken, foreign and newer archives are refused with a sentence and
//! leave nothing behind; viewers and strangers are refused.

use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::accounts::{PASSWORD, researcher_and_viewer, set_password};
use crate::support::browser::{in_chromium, look, sign_in, until};
use crate::support::exchange::{download, header, import_archive, unzip};
use crate::support::interviews::{join, public, say};
use crate::support::records::{finished_record, stt_stub, upload, wait_for, wav};
use crate::support::reports::wait_generation;
use crate::support::{TestApp, TestUser, eventually};

const ANNA: &str = "Interviewer: What does invoicing cost you?\n\
                    Anna: Too much. The invoices arrive late every month and nobody can tell me why.\n\
                    Interviewer: And the export to the accounting tool?\n\
                    Anna: It fails; then I retry, and the invoices are late again.";

const JSON_ENTRIES: [&str; 8] = [
    "project.json",
    "records.json",
    "reports.json",
    "tags.json",
    "highlights.json",
    "insights.json",
    "themes.json",
    "interviews.json",
];

fn zip_of(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(name.as_str(), options).expect("entry");
        std::io::Write::write_all(&mut zip, bytes).expect("written");
    }
    zip.finish().expect("zip").into_inner()
}

fn entry_json(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Value {
    serde_json::from_slice(files.get(name).unwrap_or_else(|| panic!("{name} in the archive"))).expect(name)
}

/// Every id replaced by a label in order of first appearance (in a recording's entry name
/// too), and the tag ids of each highlight sorted: two archives of the same rows under
/// other ids compare equal.
fn canonical(files: &BTreeMap<String, Vec<u8>>) -> Value {
    fn walk(value: &mut Value, labels: &mut HashMap<Uuid, String>) {
        let label = |id: Uuid, labels: &mut HashMap<Uuid, String>| {
            let next = format!("id-{}", labels.len());
            labels.entry(id).or_insert(next).clone()
        };
        match value {
            Value::String(text) => {
                if let Ok(id) = Uuid::parse_str(text) {
                    *text = label(id, labels);
                } else if let Some(rest) = text.strip_prefix("recordings/")
                    && let Some((id, extension)) = rest.split_once('.')
                    && let Ok(id) = Uuid::parse_str(id)
                {
                    *text = format!("recordings/{}.{extension}", label(id, labels));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| walk(item, labels)),
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    walk(field, labels);
                    if key == "tag_ids"
                        && let Value::Array(ids) = field
                    {
                        ids.sort_by_key(|id| id.as_str().unwrap_or_default().to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    let mut labels = HashMap::new();
    let mut all = serde_json::Map::new();
    for name in JSON_ENTRIES {
        let mut value = entry_json(files, name);
        walk(&mut value, &mut labels);
        all.insert(name.to_owned(), value);
    }
    Value::Object(all)
}

/// Where two values differ, as JSON paths with both sides.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys().filter(|key| !x.contains_key(*key))) {
                let (left, right) = (x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null));
                differences(left, right, &format!("{path}.{key}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (left, right)) in x.iter().zip(y).enumerate() {
                differences(left, right, &format!("{path}[{index}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: {a} != {b}")),
        _ => {}
    }
}

/// The two archives hold the same rows, field by field.
fn assert_same_rows(copy: &BTreeMap<String, Vec<u8>>, original: &BTreeMap<String, Vec<u8>>) {
    let mut found = Vec::new();
    differences(&canonical(copy), &canonical(original), "", &mut found);
    assert!(found.is_empty(), "the copy differs:\n{}", found.join("\n"));
}

async fn archive(app: &TestApp, user: &TestUser, project: &str) -> BTreeMap<String, Vec<u8>> {
    let (status, headers, body) = download(app, user, &format!("/projects/{project}/archive")).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(header(&headers, "content-type"), "application/zip");
    assert!(
        header(&headers, "content-disposition").ends_with(".insight.zip\""),
        "{headers:?}"
    );
    unzip(&body)
}

async fn ok(app: &TestApp, user: &TestUser, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(path, user, body).await;
    assert!(status.is_success(), "{path}: {status} {answer}");
    answer
}

async fn projects(app: &TestApp, user: &TestUser) -> usize {
    let (_, list) = app.get("/projects/", user).await;
    list["items"].as_array().or(list.as_array()).map_or(0, Vec::len)
}

async fn tag_count(app: &TestApp, user: &TestUser, workspace: Uuid) -> usize {
    let (_, tags) = app.get(&format!("/workspaces/{workspace}/tags"), user).await;
    tags.as_array().map_or(0, Vec::len)
}

/// The project the round trip carries: ann's, in her workspace.
async fn full_project(app: &TestApp, ann: &TestUser) -> (String, Vec<u8>) {
    let project = app.project(ann, "Invoicing study").await;
    let (status, _) = app
        .put(
            &format!("/projects/{project}"),
            ann,
            json!({ "description": "Why invoices are late", "research_goals": "Find what delays invoices.",
                    "interview_guide": "1. What does invoicing cost you?\n2. What would you change?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let anna = finished_record(app, ann, &project, "Anna", ANNA).await;
    let recording = wav();
    let (status, uploaded) = upload(
        app,
        ann,
        &project,
        "call.wav",
        "audio/wav",
        recording.clone(),
        Some("Call"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{uploaded}");
    wait_for(app, ann, uploaded["id"].as_str().expect("id"), &["Finished"]).await;

    // An AI-led interview, held, and a room still waiting for its respondent.
    let (status, rooms) = app
        .post(
            "/api/interviews/rooms",
            ann,
            json!({ "project_id": project, "count": 2 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rooms}");
    let token = rooms["rooms"][0]["access_token"].as_str().expect("token");
    let (status, joined) = join(app, token, "ria@example.com").await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let session = joined["session_id"].as_str().expect("session").to_owned();
    say(app, token, &session, "Invoices cost me two evenings a month.").await;
    let (status, left) = public(
        app,
        reqwest::Method::POST,
        &format!("/api/interviews/join/{token}/leave"),
        Some(json!({ "session_id": session })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{left}");
    let (_, room) = app
        .get(
            &format!(
                "/api/interviews/rooms/{}",
                rooms["rooms"][0]["id"].as_str().expect("id")
            ),
            ann,
        )
        .await;
    app.wait_finished(ann, room["record_id"].as_str().expect("the interview's record"))
        .await;

    let (status, persona) = app.get(&format!("/insight/{anna}/persona-report"), ann).await;
    assert_eq!(status, StatusCode::OK, "{persona}");

    let pricing = ok(
        app,
        ann,
        &format!("/workspaces/{}/tags", ann.id),
        json!({ "name": "Pricing", "color": "#d62728", "description": "What they pay" }),
    )
    .await;
    let late = ok(
        app,
        ann,
        &format!("/workspaces/{}/tags", ann.id),
        json!({ "name": "Late invoices", "color": "#ff7f0e", "parent_id": pricing["id"] }),
    )
    .await;
    let tooling = ok(
        app,
        ann,
        &format!("/workspaces/{}/tags", ann.id),
        json!({ "name": "Tooling" }),
    )
    .await;
    let span = |utterance: i64, from: i64, to: i64| json!({ "start": { "utterance_id": utterance, "offset": from }, "end": { "utterance_id": utterance, "offset": to } });
    let mut body = span(2, 0, 9);
    body["tag_ids"] = json!([pricing["id"], late["id"]]);
    body["note"] = json!("Said twice");
    let first = ok(app, ann, &format!("/insight/{anna}/highlights"), body).await;
    let mut body = span(4, 0, 8);
    body["tag_ids"] = json!([tooling["id"]]);
    let second = ok(app, ann, &format!("/insight/{anna}/highlights"), body).await;
    crate::support::records::suggestion(app, &anna, 4, "It fails;").await;
    let insight = ok(
        app,
        ann,
        &format!("/projects/{project}/insights"),
        json!({ "title": "Late invoices cost evenings", "body": "Both say so.", "highlight_ids": [second["id"], first["id"]] }),
    )
    .await;

    // A report, regenerated into a second version, that includes the insight.
    let report = app.report(ann, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    assert_eq!(
        wait_generation(app, ann, &path, &["completed", "failed"]).await["status"],
        "completed"
    );
    ok(app, ann, &format!("{path}/regenerate"), json!({})).await;
    assert_eq!(
        wait_generation(app, ann, &path, &["completed", "failed"]).await["status"],
        "completed"
    );
    let (status, _) = app
        .put(
            &format!("{path}/insights/{}", insight["id"].as_str().expect("id")),
            ann,
            json!({}),
        )
        .await;
    assert!(status.is_success(), "{status}");
    let (status, _) = app.put(&path, ann, json!({ "is_public": true })).await;
    assert!(status.is_success(), "{status}");
    // And edited by hand: a third version, ann's.
    let (_, written) = app.get(&path, ann).await;
    let edited = format!(
        "{}\nRead with the finance team.\n",
        written["content"].as_str().expect("content")
    );
    let (status, _) = app.put(&path, ann, json!({ "content": edited })).await;
    assert!(status.is_success(), "{status}");

    // Two highlights without a tag, for theme proposals to group.
    ok(app, ann, &format!("/insight/{anna}/highlights"), span(2, 10, 34)).await;
    ok(app, ann, &format!("/insight/{anna}/highlights"), span(4, 28, 49)).await;
    ok(app, ann, &format!("/projects/{project}/highlights/themes"), json!({})).await;
    eventually(Duration::from_secs(20), "no theme was proposed", async || {
        let (_, themes) = app.get(&format!("/projects/{project}/themes"), ann).await;
        if themes.as_array().is_some_and(|all| !all.is_empty()) {
            Ok(())
        } else {
            Err(themes)
        }
    })
    .await;
    (project, recording)
}

#[tokio::test]
async fn a_project_goes_out_as_one_archive_and_comes_back_the_same_anywhere() {
    let (stt, _stub) = stt_stub().await;
    let app = TestApp::start_with(|settings| {
        settings.speech.stt_base_url = Some(format!("http://{stt}/v1"));
    })
    .await;
    let ann = app.user().await;
    let (project, recording) = full_project(&app, &ann).await;

    let original = archive(&app, &ann, &project).await;
    let manifest = entry_json(&original, "manifest.json");
    assert_eq!(manifest["format"], "insight-project-archive");
    assert_eq!(manifest["version"], 1);
    assert_eq!(manifest["project_id"], json!(project));
    let counts = manifest["counts"].clone();
    assert_eq!(
        counts,
        json!({ "records": 3, "recordings": 1, "reports": 1, "tags": 3, "highlights": 5, "insights": 1,
                "themes": counts["themes"], "interviews": 2 }),
        "{manifest}"
    );
    assert!(
        counts["themes"].as_u64().is_some_and(|themes| themes >= 1),
        "{manifest}"
    );
    // Each entry is dated as the export is (zip keeps no zone: UTC).
    let (status, _, raw) = download(&app, &ann, &format!("/projects/{project}/archive")).await;
    assert_eq!(status, StatusCode::OK);
    let exported: chrono::DateTime<chrono::Utc> = entry_json(&unzip(&raw), "manifest.json")["exported_at"]
        .as_str()
        .expect("exported_at")
        .parse()
        .expect("a time");
    let expected = exported.format("%Y-%m-%d %H:%M").to_string();
    let mut raw = zip::ZipArchive::new(Cursor::new(raw)).expect("a zip");
    for index in 0..raw.len() {
        let entry = raw.by_index(index).expect("entry");
        let dated = entry.last_modified().expect("a date");
        let dated = format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            dated.year(),
            dated.month(),
            dated.day(),
            dated.hour(),
            dated.minute()
        );
        assert_eq!(dated, expected, "{}", entry.name().unwrap_or_default());
    }
    let recordings: Vec<&String> = original.keys().filter(|name| name.starts_with("recordings/")).collect();
    assert_eq!(recordings.len(), 1, "{:?}", original.keys());
    assert_eq!(original[recordings[0]], recording, "the recording, byte for byte");
    // What the rows hold, as a spot check of the format (the rest is compared below).
    let reports = entry_json(&original, "reports.json");
    let kinds: Vec<(&Value, &Value)> = reports[0]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .map(|version| (&version["kind"], &version["created_by"]))
        .collect();
    let (generation, edit) = (json!("generation"), json!("edit"));
    let ann_email = json!(ann.email);
    assert_eq!(
        kinds,
        vec![
            (&generation, &Value::Null),
            (&generation, &Value::Null),
            (&edit, &ann_email)
        ],
        "{reports}"
    );
    assert_eq!(reports[0]["insight_ids"].as_array().map(Vec::len), Some(1), "{reports}");
    assert_eq!(reports[0]["is_public"], true);
    let records = entry_json(&original, "records.json");
    let anna = records
        .as_array()
        .expect("records")
        .iter()
        .find(|r| r["name"] == "Anna")
        .expect("Anna");
    assert_eq!(anna["utterances"].as_array().map(Vec::len), Some(4), "{anna}");
    assert!(anna["persona"]["markdown"].is_string(), "{anna}");
    let highlights = entry_json(&original, "highlights.json");
    assert!(
        highlights
            .as_array()
            .expect("highlights")
            .iter()
            .any(|h| h["created_by"] == json!(ann.email))
    );
    let interviews = entry_json(&original, "interviews.json");
    let held = interviews
        .as_array()
        .expect("rooms")
        .iter()
        .find(|r| r["status"] == "completed")
        .expect("held");
    assert_eq!(held["respondent_email"], "ria@example.com");
    assert!(held["turns"].as_array().is_some_and(|turns| turns.len() >= 3), "{held}");
    let text = String::from_utf8_lossy(&zip_of(&original)).to_string();
    for room in interviews.as_array().expect("rooms") {
        assert!(
            room.get("token_hash").is_none() && room.get("access_token").is_none(),
            "{room}"
        );
    }
    assert!(!text.contains(&ann.token), "no token in the archive");
    let (_, log) = app
        .get(&format!("/workspaces/{}/audit?action=export.", ann.id), &ann)
        .await;
    assert_eq!(log[0]["detail"]["format"], "archive", "{log}");
    assert_eq!(log[0]["detail"]["counts"], counts);

    // Into another person's workspace, where none of it exists; ann is a member there, so
    // her highlights and insight stay hers.
    let other = app.user().await;
    app.store
        .add_member(other.id, ann.id, insight::domain::workspace::Role::Researcher)
        .await
        .expect("ann joins");
    let (status, imported) = import_archive(&app, &other, other.id, zip_of(&original)).await;
    assert_eq!(status, StatusCode::CREATED, "{imported}");
    assert_eq!(imported["imported"], counts, "{imported}");
    let copy = imported["project_id"].as_str().expect("project id").to_owned();
    assert_ne!(copy, project);

    // Field by field: the copy's own archive holds the same rows and the same recording
    // (read before anyone opens the copy, which marks it opened).
    let again = archive(&app, &other, &copy).await;
    assert_same_rows(&again, &original);
    let copied_recordings: Vec<&Vec<u8>> = again
        .iter()
        .filter(|(name, _)| name.starts_with("recordings/"))
        .map(|(_, bytes)| bytes)
        .collect();
    assert_eq!(copied_recordings, vec![&recording]);

    let (status, copied) = app.get(&format!("/projects/{copy}"), &other).await;
    assert_eq!(status, StatusCode::OK, "{copied}");
    assert_eq!(copied["workspace_id"], json!(other.id));
    assert_eq!(copied["research_goals"], "Find what delays invoices.");
    assert_eq!(tag_count(&app, &other, other.id).await, 3);
    let (_, log) = app
        .get(&format!("/workspaces/{}/audit?action=project.", other.id), &other)
        .await;
    assert_eq!(log[0]["action"], "project.imported", "{log}");
    assert_eq!(log[0]["detail"]["from"]["project_id"], json!(project));

    assert!(
        app.store
            .dump_project(project.parse().expect("id"))
            .await
            .expect("dump")
            .is_some(),
        "the original stays"
    );

    // The copy works as the original does: its transcript, its search, its rooms.
    let (_, records) = app.get(&format!("/projects/{copy}/records"), &other).await;
    let copied_anna = records["items"]
        .as_array()
        .or(records.as_array())
        .expect("records")
        .iter()
        .find(|r| r["name"] == "Anna")
        .expect("Anna")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let (_, detail) = app.get(&format!("/insight/{copied_anna}/"), &other).await;
    assert_eq!(
        detail["utterances"][1]["text"],
        json!(ANNA.lines().nth(1).unwrap().trim_start().trim_start_matches("Anna: ")),
        "{detail}"
    );
    let found = eventually(Duration::from_secs(20), "search does not find the copy", async || {
        let (_, hits) = app.get("/search?q=accounting", &other).await;
        if hits["hits"].as_array().is_some_and(|hits| !hits.is_empty()) {
            Ok(hits)
        } else {
            Err(hits)
        }
    })
    .await;
    assert_eq!(
        found["hits"][0]["project_id"],
        json!(copy),
        "search finds the copy: {found}"
    );
    assert_eq!(found["hits"][0]["record_id"], json!(copied_anna), "{found}");
    let (_, rooms) = app
        .get(&format!("/api/interviews/rooms?project_id={copy}"), &other)
        .await;
    let rooms = rooms["items"]
        .as_array()
        .or(rooms["rooms"].as_array())
        .or(rooms.as_array())
        .expect("rooms")
        .clone();
    assert_eq!(rooms.len(), 2, "{rooms:?}");
    let waiting = rooms
        .iter()
        .find(|room| room["status"] == "pending")
        .expect("the waiting room");
    let (_, originals) = app
        .get(&format!("/api/interviews/rooms?project_id={project}"), &ann)
        .await;
    let originals = originals["items"]
        .as_array()
        .or(originals["rooms"].as_array())
        .or(originals.as_array())
        .expect("rooms")
        .clone();
    let tokens: Vec<&Value> = originals.iter().map(|room| &room["access_token"]).collect();
    assert!(!tokens.contains(&&waiting["access_token"]), "a link of its own");
    let (status, info) = public(
        &app,
        reqwest::Method::GET,
        &format!(
            "/api/interviews/join/{}",
            waiting["access_token"].as_str().expect("token")
        ),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{info}");

    // Into its own workspace beside the original: the tags are found by name, not made twice.
    let tags_before = tag_count(&app, &ann, ann.id).await;
    let (status, twin) = import_archive(&app, &ann, ann.id, zip_of(&original)).await;
    assert_eq!(status, StatusCode::CREATED, "{twin}");
    assert_eq!(tag_count(&app, &ann, ann.id).await, tags_before);
    let twin_archive = archive(&app, &ann, twin["project_id"].as_str().expect("id")).await;
    assert_same_rows(&twin_archive, &original);

    // An archive of an older Insight: versions without a kind or an author, and a report
    // edited by hand beyond its newest version. The edit comes back as a version.
    let mut older = original.clone();
    let mut reports = entry_json(&older, "reports.json");
    let versions = reports[0]["versions"].as_array_mut().expect("versions");
    versions.pop();
    for version in versions.iter_mut() {
        let fields = version.as_object_mut().expect("a version");
        fields.remove("kind");
        fields.remove("created_by");
    }
    older.insert("reports.json".into(), serde_json::to_vec(&reports).expect("json"));
    let (status, imported) = import_archive(&app, &ann, ann.id, zip_of(&older)).await;
    assert_eq!(status, StatusCode::CREATED, "{imported}");
    let copy = imported["project_id"].as_str().expect("id");
    let (_, listed) = app.get(&format!("/projects/{copy}/reports"), &ann).await;
    let report = listed["items"].as_array().or(listed.as_array()).expect("reports")[0].clone();
    let (status, versions) = app
        .get(
            &format!(
                "/projects/{copy}/reports/{}/versions",
                report["id"].as_str().expect("id")
            ),
            &ann,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    let kinds: Vec<(&Value, &Value)> = versions
        .as_array()
        .expect("versions")
        .iter()
        .map(|version| (&version["kind"], &version["author_email"]))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (&edit, &Value::Null),
            (&generation, &Value::Null),
            (&generation, &Value::Null)
        ],
        "{versions}"
    );
    assert_eq!(
        versions[0]["content"], report["content"],
        "the text beyond its versions is kept"
    );
    app.stop().await;
}

#[tokio::test]
async fn broken_foreign_and_newer_archives_are_refused_and_leave_nothing_behind() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Small study").await;
    let anna = finished_record(&app, &ann, &project, "Anna", ANNA).await;
    ok(
        &app,
        &ann,
        &format!("/workspaces/{}/tags", ann.id),
        json!({ "name": "Pricing" }),
    )
    .await;
    let mut body = json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 9 } });
    let (_, tags) = app.get(&format!("/workspaces/{}/tags", ann.id), &ann).await;
    body["tag_ids"] = json!([tags[0]["id"]]);
    ok(&app, &ann, &format!("/insight/{anna}/highlights"), body).await;
    let good = archive(&app, &ann, &project).await;

    let other = app.user().await;
    let refused = |status: StatusCode, body: &Value, words: &str| {
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", "file"]), "{body}");
        let message = body["detail"][0]["msg"].as_str().unwrap_or_default();
        assert!(message.contains(words), "{words:?} in {message}");
    };
    let (status, body) = import_archive(&app, &other, other.id, b"not a zip".to_vec()).await;
    refused(status, &body, "not a zip archive");

    let mut newer = good.clone();
    let mut manifest = entry_json(&good, "manifest.json");
    manifest["version"] = json!(2);
    newer.insert("manifest.json".into(), serde_json::to_vec(&manifest).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&newer)).await;
    refused(status, &body, "Upgrade this Insight");

    let mut foreign = good.clone();
    foreign.remove("manifest.json");
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&foreign)).await;
    refused(status, &body, "no manifest.json");

    let mut damaged = good.clone();
    damaged.insert("records.json".into(), b"[{\"id\": 3}]".to_vec());
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&damaged)).await;
    refused(status, &body, "records.json is not what Insight writes");

    // A recording the rows name but the archive lacks: refused after the tags were
    // resolved, and none of them is left.
    let mut missing = good.clone();
    let mut records = entry_json(&good, "records.json");
    records[0]["recording"] = json!("recordings/gone.wav");
    missing.insert("records.json".into(), serde_json::to_vec(&records).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&missing)).await;
    refused(status, &body, "not in the archive");
    let mut unknown = good.clone();
    let mut highlights = entry_json(&good, "highlights.json");
    highlights[0]["status"] = json!("shiny");
    unknown.insert("highlights.json".into(), serde_json::to_vec(&highlights).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&unknown)).await;
    refused(status, &body, "shiny");
    assert_eq!(projects(&app, &other).await, 0, "no project was made");
    assert_eq!(tag_count(&app, &other, other.id).await, 0, "no tag was left");

    // A highlight of a record the archive does not hold is left out, not a failure.
    let mut dangling = good.clone();
    let mut highlights = entry_json(&good, "highlights.json");
    highlights[0]["record_id"] = json!(Uuid::new_v4());
    dangling.insert("highlights.json".into(), serde_json::to_vec(&highlights).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&dangling)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["imported"]["highlights"], 0, "{body}");
    // A "recording" that is a page, typed text/html in the rows: it comes in, but is only
    // ever served as something that cannot run on this origin.
    let mut page = good.clone();
    let mut records = entry_json(&good, "records.json");
    records[0]["recording"] = json!("recordings/page.html");
    records[0]["media_type"] = json!("text/html");
    page.insert("records.json".into(), serde_json::to_vec(&records).expect("json"));
    page.insert(
        "recordings/page.html".into(),
        b"<html><script>fetch('/me')</script></html>".to_vec(),
    );
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&page)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let copy = body["project_id"].as_str().expect("id");
    let (_, listed) = app.get(&format!("/projects/{copy}/records"), &other).await;
    let record = listed["items"]
        .as_array()
        .or(listed.as_array())
        .and_then(|records| records[0]["id"].as_str())
        .expect("the record")
        .to_owned();
    let cookie = crate::support::accounts::sign_in(&app, &other).await;
    let served = app
        .client
        .get(app.url(&format!("/r/{record}/recording")))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("sent");
    assert_eq!(served.status(), StatusCode::OK);
    let headers = served.headers();
    assert_eq!(headers["content-type"], "application/octet-stream", "{headers:?}");
    assert!(
        headers["content-security-policy"]
            .to_str()
            .is_ok_and(|csp| csp.starts_with("sandbox")),
        "{headers:?}"
    );
    assert_eq!(headers["x-content-type-options"], "nosniff", "{headers:?}");
    let copied = archive(&app, &other, copy).await;
    assert_eq!(
        entry_json(&copied, "records.json")[0]["media_type"],
        Value::Null,
        "the type is not kept"
    );
    // A NUL character, which PostgreSQL cannot keep, is taken out; a date before any
    // database's calendar is a 422 there, and never a 500 anywhere.
    let mut nul = good.clone();
    let mut records = entry_json(&good, "records.json");
    records[0]["name"] = json!("An\u{0}na");
    nul.insert("records.json".into(), serde_json::to_vec(&records).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&nul)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let copy = body["project_id"].as_str().expect("id");
    let (_, listed) = app.get(&format!("/projects/{copy}/records"), &other).await;
    assert!(listed.to_string().contains("\"Anna\""), "{listed}");
    let mut ancient = good.clone();
    let mut records = entry_json(&good, "records.json");
    records[0]["created_at"] = json!("-9999-01-01T00:00:00Z");
    ancient.insert("records.json".into(), serde_json::to_vec(&records).expect("json"));
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&ancient)).await;
    if status != StatusCode::CREATED {
        refused(status, &body, "");
    }
    // An author who is no member of the workspace is not named there.
    let (status, body) = import_archive(&app, &other, other.id, zip_of(&good)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let copy = body["project_id"].as_str().expect("id");
    let (_, highlights) = app.get(&format!("/projects/{copy}/highlights"), &other).await;
    let highlights = highlights["items"]
        .as_array()
        .or(highlights.as_array())
        .expect("highlights")
        .clone();
    assert_eq!(highlights.len(), 1, "{highlights:?}");
    assert_eq!(highlights[0]["author_email"], Value::Null, "{highlights:?}");
    let (_, highlights) = app.get(&format!("/projects/{project}/highlights"), &ann).await;
    let highlights = highlights["items"]
        .as_array()
        .or(highlights.as_array())
        .expect("highlights")
        .clone();
    assert_eq!(highlights[0]["author_email"], json!(ann.email), "{highlights:?}");
    app.stop().await;

    // Past the quota of records a project may hold: 409, nothing made.
    let app = TestApp::start_with(|settings| settings.quotas.records_per_project = 0).await;
    let ann = app.user().await;
    let (status, body) = import_archive(&app, &ann, ann.id, zip_of(&good)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("INSIGHT_QUOTA_RECORDS_PER_PROJECT")),
        "{body}"
    );
    assert_eq!(projects(&app, &ann).await, 0);
    app.stop().await;

    // Larger than the archive limit: 413, before it is read.
    let app = TestApp::start_with(|settings| settings.material.max_archive_bytes = 2048).await;
    let ann = app.user().await;
    let (status, body) = import_archive(&app, &ann, ann.id, vec![0; 4096]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("INSIGHT_MAX_ARCHIVE_BYTES")),
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn viewers_and_strangers_neither_export_nor_import() {
    let app = TestApp::start().await;
    let (owner, viewer) = researcher_and_viewer(&app).await;
    let stranger = app.user().await;
    let project = app.project(&owner, "Private study").await;
    finished_record(&app, &owner, &project, "Anna", ANNA).await;
    let good = archive(&app, &owner, &project).await;
    // Sent as it is: a zip is not gzipped again for a browser that would take gzip.
    let response = app
        .client
        .get(app.url(&format!("/projects/{project}/archive")))
        .bearer_auth(&owner.token)
        .header("accept-encoding", "gzip")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers().get("content-encoding").is_none(),
        "{:?}",
        response.headers()
    );

    let (status, _, _) = download(&app, &viewer, &format!("/projects/{project}/archive")).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a viewer reads but does not carry the project away"
    );
    let (status, _, _) = download(&app, &stranger, &format!("/projects/{project}/archive")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // The owner's own token of scope read reads the project, but does not carry it away.
    let (status, created) = app
        .post("/me/tokens", &owner, json!({ "name": "dashboard", "scope": "read" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let reader = TestUser {
        token: created["token"].as_str().expect("the token").to_owned(),
        ..owner.clone()
    };
    assert_eq!(
        app.get(&format!("/projects/{project}"), &reader).await.0,
        StatusCode::OK
    );
    let (status, _, body) = download(&app, &reader, &format!("/projects/{project}/archive")).await;
    let body = String::from_utf8_lossy(&body);
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("scope write"), "{body}");
    let (status, _) = import_archive(&app, &viewer, owner.id, zip_of(&good)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = import_archive(&app, &stranger, owner.id, zip_of(&good)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(projects(&app, &owner).await, 1);
    app.stop().await;
}

#[tokio::test]
async fn a_researcher_downloads_a_project_and_imports_it_in_the_console() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    let project = app.project(&ann, "Checkout study").await;
    finished_record(&app, &ann, &project, "Anna", ANNA).await;
    let folder = tempfile::tempdir().expect("a folder");
    let junk = folder.path().join("notes.zip");
    std::fs::write(&junk, b"not a zip at all").expect("written");
    in_chromium("the console's project import", async |browser| {
        sign_in(browser, &app, &ann.email).await;
        browser.go(&app.url(&format!("/p/{project}"))).await;
        let link = browser
            .script("return document.querySelector('#archive a')?.getAttribute('href') || null")
            .await;
        assert_eq!(link, json!(format!("/projects/{project}/archive")));
        // The link's file, as the browser would save it.
        let (status, _, bytes) = download(&app, &ann, &format!("/projects/{project}/archive")).await;
        assert_eq!(status, StatusCode::OK);
        let saved = folder.path().join("checkout-study.insight.zip");
        std::fs::write(&saved, bytes).expect("saved");

        browser.go(&app.url("/")).await;
        let input = browser.find("#import-file").await;
        browser.type_into(&input, junk.to_str().expect("path")).await;
        let refused = until(
            browser,
            "the refusal",
            "return document.querySelector('#import-state.error')?.textContent || null",
        )
        .await;
        assert!(
            refused.as_str().is_some_and(|text| text.contains("not a zip archive")),
            "{refused}"
        );
        browser
            .script("document.getElementById('import').scrollIntoView(); return true")
            .await;
        look(browser, "projects-import").await;

        let input = browser.find("#import-file").await;
        browser.type_into(&input, saved.to_str().expect("path")).await;
        let opened = until(
            browser,
            "the imported project",
            &format!(
                "return location.pathname.startsWith('/p/') && location.pathname !== '/p/{project}' \
                 && document.querySelector('h1')?.textContent || null"
            ),
        )
        .await;
        assert_eq!(opened, json!("Checkout study"));
        let records = browser
            .script("return [...document.querySelectorAll('#records tr[data-record] a')].map((a) => a.textContent)")
            .await;
        assert_eq!(records, json!(["Anna"]));
    })
    .await
    .then(app.stop())
    .await;
}
