//! Imports are atomic even when the server is killed mid-way: the real binary is sent
//! SIGKILL while a large `.qdpx` or archive import is being written, then started again on
//! the same database. Nothing of the import is visible at any point, and what it left is
//! gone after the restart.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::exchange::zip_of;
use crate::support::programs::Served;
use crate::support::{eventually, fresh_database};

const PATIENCE: Duration = Duration::from_secs(60);

/// One number the database answers, read beside the server (SQLite or PostgreSQL).
async fn count(database_url: &str, sql: &str) -> i64 {
    if database_url.starts_with("sqlite:") {
        let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(database_url)
            .await
            .expect("open the SQLite file");
        sqlx::query_scalar::<_, i64>(sql).fetch_one(&mut conn).await.expect(sql)
    } else {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(database_url)
            .await
            .expect("connect to PostgreSQL");
        sqlx::query_scalar::<_, i64>(sql).fetch_one(&mut conn).await.expect(sql)
    }
}

const HOLDING: &str = "SELECT COUNT(*) FROM workspaces WHERE importing_since IS NOT NULL";
const HELD_RECORDS: &str = "SELECT COUNT(*) FROM records r JOIN projects p ON p.id = r.project_id \
     JOIN workspaces w ON w.id = p.workspace_id WHERE w.importing_since IS NOT NULL";
const HELD_TAGS: &str = "SELECT COUNT(*) FROM tags t JOIN workspaces w ON w.id = t.workspace_id \
     WHERE w.importing_since IS NOT NULL";
const ALL_PROJECTS: &str = "SELECT COUNT(*) FROM projects";
const ALL_RECORDS: &str = "SELECT COUNT(*) FROM records";
const ALL_TAGS: &str = "SELECT COUNT(*) FROM tags";

/// The first start's server and its token, and the caller's workspace.
async fn first_start(database_url: &str) -> (Served, String, String) {
    let mut server = Served::start_with(database_url, &[]).await;
    let token = server.next_stdout_line().await.expect("the first token");
    let (status, me) = server.get("/me", &token).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    let workspace = me["id"].as_str().expect("id").to_owned();
    (server, token, workspace)
}

/// What the user sees: his projects, the workspace's tags, and a search's hits.
async fn seen(server: &Served, token: &str, workspace: &str) -> (usize, usize) {
    let (_, projects) = server.get("/projects/", token).await;
    let projects = projects["items"].as_array().or(projects.as_array()).map_or(0, Vec::len);
    let (_, tags) = server.get(&format!("/workspaces/{workspace}/tags"), token).await;
    (projects, tags.as_array().map_or(0, Vec::len))
}

fn send(
    base: String,
    token: String,
    path: String,
    file: Vec<u8>,
) -> tokio::task::JoinHandle<Result<StatusCode, String>> {
    tokio::spawn(async move {
        let form =
            reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(file).file_name("upload"));
        reqwest::Client::new()
            .post(format!("{base}{path}"))
            .bearer_auth(token)
            .multipart(form)
            .send()
            .await
            .map(|response| response.status())
            .map_err(|error| error.to_string())
    })
}

/// Waits until the database shows `sql` at `at_least` or more.
async fn until(database_url: &str, sql: &str, at_least: i64, server: &Served) {
    eventually(PATIENCE, "the import never got going", async || {
        if count(database_url, sql).await >= at_least {
            Ok(())
        } else {
            Err(format!("\n{}", server.log()))
        }
    })
    .await;
}

/// A `.qdpx` of 3,000 text sources, each coded with one of three codes.
fn large_qdpx() -> Vec<u8> {
    let mut qde = String::from(
        "<Project xmlns=\"urn:QDA-XML:project:1.0\" name=\"Big study\"><CodeBook><Codes>\
         <Code guid=\"c0\" name=\"Pricing\"/><Code guid=\"c1\" name=\"Support\"/><Code guid=\"c2\" name=\"Onboarding\"/>\
         </Codes></CodeBook><Sources>",
    );
    for n in 0..3_000 {
        qde.push_str(&format!(
            "<TextSource guid=\"s{n}\" name=\"Interview {n}\"><PlainTextContent>Interviewer: Why?\n\
             Anna: The invoices arrive late, month {n}.</PlainTextContent>\
             <PlainTextSelection guid=\"x{n}\" startPosition=\"25\" endPosition=\"37\">\
             <Coding guid=\"k{n}\"><CodeRef targetGUID=\"c{}\"/></Coding></PlainTextSelection></TextSource>",
            n % 3
        ));
    }
    qde.push_str("</Sources></Project>");
    zip_of(&BTreeMap::from([("project.qde".to_owned(), qde.into_bytes())]))
}

#[tokio::test]
async fn a_qdpx_import_killed_mid_way_leaves_nothing_visible_and_nothing_after_a_restart() {
    let (database_url, _dir) = fresh_database().await;
    let (server, token, workspace) = first_start(&database_url).await;
    let path = format!("/workspaces/{workspace}/import/qdpx");
    let import = send(server.base.clone(), token.clone(), path, large_qdpx());

    // Some records of the import are written: the project is not visible, nor its tags.
    until(&database_url, HELD_RECORDS, 10, &server).await;
    assert_eq!(
        seen(&server, &token, &workspace).await,
        (0, 0),
        "an import in progress is invisible"
    );
    server.kill().await;
    let answered = import.await.expect("the request task");
    assert!(answered.is_err(), "the import was cut off, not answered: {answered:?}");
    assert!(
        count(&database_url, HELD_RECORDS).await >= 10,
        "the kill left a half-made import"
    );
    assert!(count(&database_url, HELD_TAGS).await >= 1, "and the tags it made");

    let server = Served::start_with(&database_url, &[]).await;
    assert_eq!(seen(&server, &token, &workspace).await, (0, 0));
    assert_eq!(
        count(&database_url, HOLDING).await,
        0,
        "the leftovers are removed at start"
    );
    assert_eq!(count(&database_url, ALL_PROJECTS).await, 0);
    assert_eq!(count(&database_url, ALL_RECORDS).await, 0);
    assert_eq!(count(&database_url, ALL_TAGS).await, 0);
    let (status, hits) = server.get("/search?q=invoices", &token).await;
    assert!(
        status == StatusCode::OK || status == StatusCode::NOT_FOUND,
        "{status} {hits}"
    );
    if status == StatusCode::OK {
        assert!(!hits.to_string().contains("Interview 1"), "{hits}");
    }

    // The same file, left alone, goes in whole.
    let path = format!("/workspaces/{workspace}/import/qdpx");
    let status = send(server.base.clone(), token.clone(), path, large_qdpx())
        .await
        .expect("task")
        .expect("answered");
    assert_eq!(status, StatusCode::CREATED, "{}", server.log());
    assert_eq!(seen(&server, &token, &workspace).await, (1, 3));
    assert_eq!(count(&database_url, ALL_RECORDS).await, 3_000);
    assert_eq!(count(&database_url, HOLDING).await, 0);
    server.kill().await;
}

#[tokio::test]
async fn an_archive_import_killed_while_it_makes_4000_tags_leaves_no_tag_after_a_restart() {
    let (database_url, _dir) = fresh_database().await;
    let (server, token, workspace) = first_start(&database_url).await;
    let (status, project) = server
        .send(
            reqwest::Method::POST,
            "/projects/",
            &token,
            json!({ "name": "Tagged study" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let id = project["id"].as_str().expect("id");
    let bytes = reqwest::Client::new()
        .get(format!("{}/projects/{id}/archive", server.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("archive")
        .bytes()
        .await
        .expect("archive bytes");
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("zip");
    let mut files = BTreeMap::new();
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).expect("entry");
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read");
        files.insert(entry.name().expect("name").to_string(), data);
    }
    let tags: Vec<Value> = (0..4_000)
        .map(|n| {
            json!({ "id": uuid::Uuid::new_v4(), "name": format!("Theme {n}"), "color": "#336699",
                    "description": "", "parent_id": null })
        })
        .collect();
    files.insert("tags.json".into(), serde_json::to_vec(&tags).expect("json"));
    let archive = zip_of(&files);
    let (status, _) = server
        .send(reqwest::Method::DELETE, &format!("/projects/{id}"), &token, json!({}))
        .await;
    assert!(status.is_success(), "{status}");

    let path = format!("/workspaces/{workspace}/import/archive");
    let import = send(server.base.clone(), token.clone(), path.clone(), archive.clone());
    until(&database_url, HELD_TAGS, 100, &server).await;
    assert_eq!(
        seen(&server, &token, &workspace).await,
        (0, 0),
        "no tag shows before the project does"
    );
    server.kill().await;
    assert!(import.await.expect("task").is_err(), "the import was cut off");
    assert!(
        count(&database_url, HELD_TAGS).await >= 100,
        "the kill left tags in the making"
    );

    let server = Served::start_with(&database_url, &[]).await;
    assert_eq!(seen(&server, &token, &workspace).await, (0, 0));
    assert_eq!(
        count(&database_url, HOLDING).await,
        0,
        "the leftovers are removed at start"
    );
    assert_eq!(count(&database_url, ALL_TAGS).await, 0);
    assert_eq!(count(&database_url, ALL_PROJECTS).await, 0);

    let status = send(server.base.clone(), token.clone(), path, archive)
        .await
        .expect("task")
        .expect("answered");
    assert_eq!(status, StatusCode::CREATED, "{}", server.log());
    assert_eq!(seen(&server, &token, &workspace).await, (1, 4_000));
    assert_eq!(count(&database_url, HOLDING).await, 0);
    server.kill().await;
}
