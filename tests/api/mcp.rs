//! The MCP server at `/mcp`, driven by the official MCP Python SDK (`mcp_client.py`) as
//! an assistant drives it: every tool called and judged against what the JSON API says,
//! the resources listed and read, a `read` token refused each write tool (and nothing
//! written), another workspace's objects invisible through every tool and resource, and
//! no token no entry.
//!
//! The SDK runs in the Python `INSIGHT_TEST_MCP_PYTHON` names (`.ci/run` makes a venv of
//! its own with `mcp==2.3.0`); without it these tests are skipped and say so, except under CI.

use std::path::PathBuf;
use std::process::Stdio;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::support::accounts::researcher_and_viewer;
use crate::support::programs::tool;
use crate::support::records::TIMED_ANNA;
use crate::support::{TestApp, TestUser};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/mcp_client.py");

fn python() -> Option<PathBuf> {
    tool(
        "INSIGHT_TEST_MCP_PYTHON",
        None,
        "a Python with the MCP SDK: pip install mcp==2.3.0",
    )
}

/// Runs `steps` through the SDK's client with `token`; the server's answers, in order.
pub(crate) async fn session(python: &PathBuf, app: &TestApp, token: &str, steps: Value, repeat: usize) -> Value {
    let plan = json!({ "url": app.url("/mcp"), "token": token, "steps": steps, "repeat": repeat });
    let mut child = tokio::process::Command::new(python)
        .arg(CLIENT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(plan.to_string().as_bytes())
        .await
        .expect("plan written");
    drop(stdin);
    let out = child.wait_with_output().await.expect("client ends");
    assert!(
        out.status.success(),
        "the MCP client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the client prints JSON")
}

fn call(name: &str, arguments: Value) -> Value {
    json!({ "op": "call_tool", "name": name, "arguments": arguments })
}

/// A tool's structured answer, which must not be an error.
fn ok<'a>(step: &'a Value, what: &str) -> &'a Value {
    assert_eq!(step["is_error"], false, "{what} failed: {step}");
    assert_eq!(
        serde_json::from_str::<Value>(step["text"].as_str().unwrap_or_default())
            .ok()
            .as_ref(),
        Some(&step["structured"]),
        "{what}: the text is the structured answer"
    );
    &step["structured"]
}

/// A tool error, with its sentence.
fn refused(step: &Value, what: &str) -> String {
    assert_eq!(step["is_error"], true, "{what} should be refused: {step}");
    step["text"].as_str().unwrap_or_default().to_owned()
}

/// A project with one processed interview.
async fn study(app: &TestApp, user: &TestUser, name: &str, text: &str) -> (String, String, String) {
    let project = app.project(user, name).await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Interview Anna", "text": text, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("id").to_owned();
    app.wait_finished(user, &record).await;
    let (_, project_json) = app.get(&format!("/projects/{project}"), user).await;
    let workspace = project_json["workspace_id"].as_str().expect("workspace").to_owned();
    (project, record, workspace)
}

#[tokio::test]
async fn an_assistant_uses_every_tool_and_resource_through_the_python_sdk() {
    let Some(python) = python() else { return };
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record, workspace) = study(&app, &user, "Billing study", TIMED_ANNA).await;
    let (status, tag) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &user,
            json!({ "name": "Billing" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{tag}");
    let tag = tag["id"].as_str().expect("tag").to_owned();
    let preset = app.system_preset_id(&user).await;

    let steps = json!([
        { "op": "list_tools" },
        call("list_projects", json!({})),
        call("list_records", json!({ "project_id": project })),
        call("read_transcript", json!({ "record_id": record })),
        call("search", json!({ "query": "invoices", "project_id": project, "kind": "utterance" })),
        call("ask_project", json!({ "project_id": project, "question": "What do people say about invoices?" })),
        call("list_presets", json!({})),
        call("list_tags", json!({ "workspace_id": workspace })),
        call("create_report", json!({
            "project_id": project, "title": "Billing pains", "preset_id": preset, "wait_seconds": 60
        })),
        call("add_highlight", json!({
            "record_id": record, "utterance_id": 2, "quote": "chase finance every month",
            "tag_ids": [tag], "note": "Late invoices"
        })),
        call("list_reports", json!({ "project_id": project })),
        { "op": "list_resources" },
        { "op": "list_resource_templates" },
        { "op": "read_resource", "uri": format!("insight://records/{record}") },
    ]);
    let out = session(&python, &app, &user.token, steps, 1).await;
    assert_eq!(out["server"], "insight", "{out}");
    assert!(
        out["instructions"]
            .as_str()
            .unwrap_or_default()
            .contains("list_projects"),
        "{out}"
    );
    assert_eq!(out["protocol"], "2026-07-28", "the current revision, stateless");
    let steps = out["steps"].as_array().expect("steps");

    let tools = steps[0]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap_or_default()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "add_highlight",
            "ask_project",
            "create_report",
            "list_presets",
            "list_projects",
            "list_records",
            "list_reports",
            "list_tags",
            "read_report",
            "read_transcript",
            "search"
        ]
    );
    for tool in tools {
        let writes =
            ["add_highlight", "ask_project", "create_report"].contains(&tool["name"].as_str().unwrap_or_default());
        assert_eq!(tool["read_only"], !writes, "{tool}");
    }
    let read_transcript = tools.iter().find(|t| t["name"] == "read_transcript").expect("tool");
    assert_eq!(read_transcript["required"], json!(["record_id"]));

    let projects = ok(&steps[1], "list_projects")["projects"].as_array().expect("projects");
    assert_eq!(projects.len(), 1, "{projects:?}");
    assert_eq!(projects[0]["id"], project);

    let records = ok(&steps[2], "list_records")["records"].as_array().expect("records");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["id"], record);
    assert_eq!(records[0]["name"], "Interview Anna");

    let transcript = ok(&steps[3], "read_transcript");
    let (_, api_record) = app.get(&format!("/insight/{record}/"), &user).await;
    let utterances = transcript["utterances"].as_array().expect("utterances");
    assert_eq!(
        utterances.len(),
        api_record["utterances"].as_array().expect("api").len()
    );
    for (ours, theirs) in utterances.iter().zip(api_record["utterances"].as_array().expect("api")) {
        for field in ["id", "speaker", "start_ms", "end_ms", "text"] {
            assert_eq!(ours[field], theirs[field], "{field}");
        }
    }
    let moment = utterances[1]["url"].as_str().unwrap_or_default();
    assert!(
        moment.starts_with("http") && moment.ends_with(&format!("/r/{record}#u2")),
        "each moment's address: {moment}"
    );

    let found = ok(&steps[4], "search");
    let hits = found["hits"].as_array().expect("hits");
    assert!(!hits.is_empty(), "{found}");
    assert_eq!(hits[0]["record_id"], record);
    assert!(hits.iter().all(|hit| hit["kind"] == "utterance"), "{found}");
    assert!(
        hits[0]["snippet"].as_str().unwrap_or_default().contains("<mark>"),
        "{found}"
    );
    assert!(
        hits[0]["url"].as_str().unwrap_or_default().starts_with("http"),
        "an address to cite: {found}"
    );

    let answer = ok(&steps[5], "ask_project");
    assert!(!answer["answer"].as_str().unwrap_or_default().is_empty(), "{answer}");
    let citations = answer["citations"].as_array().expect("citations");
    assert!(!citations.is_empty(), "the answer cites: {answer}");
    let (status, threads) = app.get("/agent/threads", &user).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(threads[0]["id"], answer["thread_id"], "kept as a thread: {threads}");

    let presets = ok(&steps[6], "list_presets")["presets"].as_array().expect("presets");
    assert_eq!(presets[0]["id"], preset);
    let tags = ok(&steps[7], "list_tags")["tags"].as_array().expect("tags");
    assert_eq!(tags.len(), 1);
    assert_eq!(tags[0]["id"], tag);

    let report = ok(&steps[8], "create_report");
    assert_eq!(report["status"], "completed", "waited until written: {report}");
    assert_eq!(report["title"], "Billing pains");
    let content = report["content"].as_str().unwrap_or_default();
    assert!(content.contains("[Interview Anna, "), "{content}");
    let report_id = report["id"].as_str().expect("id").to_owned();
    let (_, api_report) = app
        .get(&format!("/projects/{project}/reports/{report_id}"), &user)
        .await;
    assert_eq!(api_report["content"], report["content"]);

    let highlight = ok(&steps[9], "add_highlight");
    assert_eq!(highlight["quote"], "chase finance every month", "{highlight}");
    let (_, api_highlights) = app.get(&format!("/insight/{record}/highlights"), &user).await;
    let api_highlights = api_highlights.as_array().expect("highlights");
    assert_eq!(api_highlights.len(), 1);
    assert_eq!(api_highlights[0]["id"], highlight["id"]);
    assert_eq!(api_highlights[0]["note"], "Late invoices");
    assert_eq!(api_highlights[0]["tags"][0]["id"], tag, "{api_highlights:?}");

    let reports = ok(&steps[10], "list_reports")["reports"].as_array().expect("reports");
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["id"], report_id);

    let uris = steps[11]["uris"].as_array().expect("uris");
    assert!(uris.contains(&json!(format!("insight://records/{record}"))), "{uris:?}");
    assert!(
        uris.contains(&json!(format!("insight://reports/{project}/{report_id}"))),
        "{uris:?}"
    );
    assert_eq!(
        steps[12]["templates"],
        json!([
            "insight://records/{record_id}",
            "insight://reports/{project_id}/{report_id}"
        ])
    );
    assert_eq!(steps[13]["mime"], "text/plain");
    assert!(
        steps[13]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("] Anna: The invoices arrive late"),
        "{}",
        steps[13]
    );

    // The report as a tool and as a resource, the same Markdown.
    let steps = json!([
        call("read_report", json!({ "project_id": project, "report_id": report_id })),
        { "op": "read_resource", "uri": format!("insight://reports/{project}/{report_id}") },
        call("add_highlight", json!({ "record_id": record, "utterance_id": 2, "quote": "words nobody said" })),
        call("read_transcript", json!({ "record_id": "not-an-id" })),
    ]);
    let out = session(&python, &app, &user.token, steps, 1).await;
    let steps = out["steps"].as_array().expect("steps");
    assert_eq!(ok(&steps[0], "read_report")["content"], report["content"]);
    assert_eq!(steps[1]["mime"], "text/markdown");
    assert_eq!(steps[1]["text"], report["content"]);
    assert!(
        refused(&steps[2], "a misquote").contains("does not say"),
        "{}",
        steps[2]
    );
    assert!(
        steps[3]["is_error"] == true || steps[3].get("error").is_some(),
        "a bad id is refused: {}",
        steps[3]
    );
    app.stop().await;
}

#[tokio::test]
async fn a_read_token_is_refused_write_tools_and_strangers_see_nothing() {
    let Some(python) = python() else { return };
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record, workspace) = study(&app, &user, "Billing study", TIMED_ANNA).await;
    let (_, read_token) = app
        .store
        .issue_token(user.id, "assistant", insight::domain::user::TokenScope::Read, None)
        .await
        .expect("token");

    let steps = json!([
        call("list_projects", json!({})),
        call("read_transcript", json!({ "record_id": record })),
        call(
            "create_report",
            json!({ "project_id": project, "title": "Billing pains" })
        ),
        call("add_highlight", json!({ "record_id": record, "utterance_id": 2 })),
        call(
            "ask_project",
            json!({ "project_id": project, "question": "What about invoices?" })
        ),
    ]);
    let out = session(&python, &app, &read_token, steps, 1).await;
    let steps = out["steps"].as_array().expect("steps");
    assert_eq!(ok(&steps[0], "list_projects")["projects"][0]["id"], project);
    ok(&steps[1], "read_transcript");
    for (step, what) in steps[2..].iter().zip(["create_report", "add_highlight", "ask_project"]) {
        assert!(refused(step, what).contains("scope write"), "{what}: {step}");
    }
    let (_, reports) = app.get(&format!("/projects/{project}/reports"), &user).await;
    assert_eq!(reports, json!([]), "no report was made");
    let (_, highlights) = app.get(&format!("/insight/{record}/highlights"), &user).await;
    assert_eq!(highlights, json!([]), "no highlight was made");
    let (_, threads) = app.get("/agent/threads", &user).await;
    assert_eq!(threads, json!([]), "no question was asked");

    // Another workspace's objects, named to a stranger with a write token.
    let stranger = app.user().await;
    let (own, _, _) = study(&app, &stranger, "Stranger's study", "Bo: I like my zeppelin.\n").await;
    let report = app.report(&user, &project).await;
    let steps = json!([
        call("list_projects", json!({})),
        call("list_records", json!({ "project_id": project })),
        call("read_transcript", json!({ "record_id": record })),
        call("search", json!({ "query": "invoices" })),
        call("search", json!({ "query": "invoices", "project_id": project })),
        call("ask_project", json!({ "project_id": project, "question": "What about invoices?" })),
        call("list_reports", json!({ "project_id": project })),
        call("read_report", json!({ "project_id": project, "report_id": report })),
        call("list_tags", json!({ "workspace_id": workspace })),
        call("create_report", json!({ "project_id": project, "title": "Theirs" })),
        call("add_highlight", json!({ "record_id": record, "utterance_id": 2 })),
        { "op": "list_resources" },
        { "op": "read_resource", "uri": format!("insight://records/{record}") },
        { "op": "read_resource", "uri": format!("insight://reports/{project}/{report}") },
    ]);
    let out = session(&python, &app, &stranger.token, steps, 1).await;
    let steps = out["steps"].as_array().expect("steps");
    let projects = ok(&steps[0], "list_projects")["projects"].as_array().expect("projects");
    assert_eq!(projects.len(), 1);
    assert_eq!(projects[0]["id"], own, "only their own project");
    for (n, what) in [
        (1, "list_records"),
        (2, "read_transcript"),
        (5, "ask_project"),
        (6, "list_reports"),
        (7, "read_report"),
        (8, "list_tags"),
        (9, "create_report"),
        (10, "add_highlight"),
    ] {
        assert!(refused(&steps[n], what).contains("not found"), "{what}: {}", steps[n]);
    }
    assert_eq!(ok(&steps[3], "search")["total"], 0, "{}", steps[3]);
    assert!(
        refused(&steps[4], "search in their project").contains("not found"),
        "{}",
        steps[4]
    );
    let uris = steps[11]["uris"].as_array().expect("uris");
    assert!(
        uris.iter()
            .all(|uri| !uri.as_str().unwrap_or_default().contains(&record)
                && !uri.as_str().unwrap_or_default().contains(&project)),
        "{uris:?}"
    );
    assert!(!uris.is_empty(), "their own record is listed");
    for step in &steps[12..] {
        assert!(
            step["error"].as_str().unwrap_or_default().contains("No such resource"),
            "{step}"
        );
    }
    let (_, reports) = app.get(&format!("/projects/{project}/reports"), &user).await;
    assert_eq!(reports.as_array().map(Vec::len), Some(1), "only the owner's report");
    let (_, highlights) = app.get(&format!("/insight/{record}/highlights"), &user).await;
    assert_eq!(highlights, json!([]));

    // No token, a wrong one, a session cookie: no entry, before the protocol is spoken.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    for authorization in [None, Some("Bearer not-a-token"), Some("Basic dXNlcjpwYXNz")] {
        let mut request = app
            .client
            .post(app.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let response = request.send().await.expect("answer");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{authorization:?}");
        assert_eq!(
            response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
        let body: Value = response.json().await.expect("json");
        assert!(body["detail"].is_string(), "{body}");
    }
    app.stop().await;
}

#[tokio::test]
async fn viewers_and_revoked_tokens_are_refused_and_nul_characters_are_dropped() {
    let Some(python) = python() else { return };
    let app = TestApp::start().await;
    let (owner, viewer) = researcher_and_viewer(&app).await;
    let (project, record, _) = study(&app, &owner, "Billing study", TIMED_ANNA).await;

    // A viewer of the workspace reads through the door, but writes nothing.
    let steps = json!([
        call("read_transcript", json!({ "record_id": record })),
        call("add_highlight", json!({ "record_id": record, "utterance_id": 2 })),
        call(
            "create_report",
            json!({ "project_id": project, "title": "Billing pains" })
        ),
    ]);
    let out = session(&python, &app, &viewer.token, steps, 1).await;
    let steps = out["steps"].as_array().expect("steps");
    ok(&steps[0], "read_transcript");
    for (step, what) in steps[1..].iter().zip(["add_highlight", "create_report"]) {
        let sentence = refused(step, what);
        assert!(sentence.contains("(viewer) does not allow"), "{what}: {sentence}");
    }
    let (_, highlights) = app.get(&format!("/insight/{record}/highlights"), &owner).await;
    assert_eq!(highlights, json!([]));

    // A NUL character, which no database keeps in text, is dropped from the arguments.
    let out = session(
        &python,
        &app,
        &owner.token,
        json!([call(
            "add_highlight",
            json!({ "record_id": record, "utterance_id": 2, "note": "late\u{0} invoices" })
        )]),
        1,
    )
    .await;
    assert_eq!(ok(&out["steps"][0], "add_highlight")["note"], "late invoices");

    // A revoked token opens nothing, before the protocol is spoken.
    let (status, created) = app
        .post("/me/tokens", &owner, json!({ "name": "assistant", "scope": "write" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let token = created["token"].as_str().expect("token").to_owned();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let knock = || {
        app.client
            .post(app.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .bearer_auth(&token)
            .json(&initialize)
            .send()
    };
    assert_eq!(knock().await.expect("answer").status(), StatusCode::OK);
    let path = format!("/me/tokens/{}", created["id"].as_str().expect("id"));
    assert_eq!(app.delete(&path, &owner).await.0, StatusCode::NO_CONTENT);
    assert_eq!(knock().await.expect("answer").status(), StatusCode::UNAUTHORIZED);
    app.stop().await;
}
