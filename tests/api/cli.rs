//! The real `insight` binary: first run, users and tokens from the command line, a
//! restart after SIGKILL, and settings checked at start.

use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::support::db::assert_not_stored;
use crate::support::models::{chat_stub, report_reply};
use crate::support::programs::{PATIENCE, Served, command};
use crate::support::records::{ANNA, stt_stub};
use crate::support::{eventually, fresh_database};

/// What a finished command said.
struct Outcome {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs a command to completion (at most `PATIENCE`).
async fn finish(mut command: Command) -> Outcome {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::time::timeout(PATIENCE, command.output())
        .await
        .expect("the command finishes in time")
        .expect("the command runs");
    Outcome {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `insight --database-url DB ARGS...` run to completion.
async fn insight(database_url: &str, args: &[&str]) -> Outcome {
    let mut all = args.to_vec();
    all.extend(["--database-url", database_url]);
    finish(command(&all)).await
}

/// Asserts a token is refused as the contract says: 401 with `WWW-Authenticate: Bearer`.
async fn assert_refused(server: &Served, token: &str, why: &str) {
    let (status, headers, body) = server.call(reqwest::Method::GET, "/me", Some(token), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {body}");
    assert_eq!(
        headers.get("www-authenticate").map(|v| v.as_bytes()),
        Some(&b"Bearer"[..]),
        "{why}"
    );
    assert!(body["detail"].is_string(), "{why}: {body}");
}

/// The single line a command printed, which must be a token.
fn token_from(outcome: &Outcome) -> String {
    assert!(outcome.success, "stderr: {}", outcome.stderr);
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stdout: {:?}", outcome.stdout);
    let token = lines[0];
    assert_eq!(outcome.stdout, format!("{token}\n"), "the token alone");
    assert!(token.starts_with("ins_"), "{token}");
    // At least 128 random bits after the prefix, in base64 (6 bits a character).
    assert!(token.len() >= 4 + 22, "{token}");
    assert!(!token.contains(char::is_whitespace), "{token}");
    token.to_owned()
}

/// The id in the `tokens list` row of the token named `name`, and that row.
fn token_row(list: &str, name: &str) -> (uuid::Uuid, String) {
    let row = list
        .lines()
        .find(|line| line.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no token {name} in:\n{list}"));
    let id = row.split_whitespace().next().unwrap_or_default();
    let id = uuid::Uuid::parse_str(id).unwrap_or_else(|_| panic!("no id first in {row:?}"));
    (id, row.to_owned())
}

#[tokio::test]
async fn first_run_prints_the_admin_token_once() {
    let (database_url, _guard) = fresh_database().await;
    let mut server = Served::start(&database_url).await;
    let token = server
        .next_stdout_line()
        .await
        .unwrap_or_else(|| panic!("no token on stdout; log:\n{}", server.log()));
    assert!(token.starts_with("ins_") && token.len() >= 26, "{token:?}");
    let (status, me) = server.get("/me", &token).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["email"], "admin@localhost");
    assert!(me["id"].is_string() && me["created_at"].is_string(), "{me}");
    // Then a one-time link to set the admin's password, which signs him in once used.
    let link = server.next_stdout_line().await.expect("the password link");
    let link_token = link
        .strip_prefix("http://127.0.0.1:8000/reset-password/")
        .unwrap_or_else(|| panic!("{link:?}"))
        .to_owned();
    let (status, _, signed_in) = server
        .call(
            reqwest::Method::POST,
            "/auth/password-reset/confirm",
            None,
            Some(serde_json::json!({ "token": link_token, "password": "the admin's own passphrase" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{signed_in}");
    assert_eq!(signed_in["user"]["email"], "admin@localhost");
    assert_eq!(server.kill().await, Vec::<String>::new(), "two lines on stdout");

    // A later start finds its user and prints nothing; the first token still works.
    let server = Served::start(&database_url).await;
    let (status, again) = server.get("/me", &token).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again, me);
    assert_eq!(server.kill().await, Vec::<String>::new(), "nothing on stdout");
    assert_not_stored(&database_url, &[&token, &link_token]).await;
}

#[tokio::test]
async fn users_and_tokens_from_the_command_line() {
    let (database_url, _guard) = fresh_database().await;
    let db = database_url.as_str();
    let added = insight(db, &["users", "add", "ann@example.org"]).await;
    assert!(added.success, "{}", added.stderr);
    let laptop = token_from(&insight(db, &["tokens", "issue", "ann@example.org", "--name", "laptop"]).await);
    // The database may also come from the environment.
    let mut issue = command(&["tokens", "issue", "Ann@Example.org", "--name", "phone"]);
    issue.env("INSIGHT_DATABASE_URL", db);
    let phone = token_from(&finish(issue).await);
    assert_ne!(laptop, phone);

    let server = Served::start(db).await;
    for token in [&laptop, &phone] {
        let (status, me) = server.get("/me", token).await;
        assert_eq!(status, StatusCode::OK, "{me}");
        assert_eq!(me["email"], "ann@example.org");
    }

    let list = insight(db, &["tokens", "list", "ann@example.org"]).await;
    assert!(list.success, "{}", list.stderr);
    let (laptop_id, row) = token_row(&list.stdout, "laptop");
    assert!(row.ends_with("active"), "{row}");
    let (phone_id, _) = token_row(&list.stdout, "phone");
    assert_ne!(laptop_id, phone_id);
    for token in [&laptop, &phone] {
        assert!(!list.stdout.contains(token.as_str()), "the list shows a token");
        assert!(!list.stderr.contains(token.as_str()), "the list shows a token");
    }

    let revoked = insight(db, &["tokens", "revoke", &laptop_id.to_string()]).await;
    assert!(revoked.success, "{}", revoked.stderr);
    assert_refused(&server, &laptop, "a revoked token").await;
    let (status, _) = server.get("/me", &phone).await;
    assert_eq!(status, StatusCode::OK, "revoking one token leaves the others");
    let list = insight(db, &["tokens", "list", "ann@example.org"]).await;
    let (_, row) = token_row(&list.stdout, "laptop");
    assert!(row.ends_with("revoked"), "{row}");
    let again = insight(db, &["tokens", "revoke", &laptop_id.to_string()]).await;
    assert!(!again.success, "revoking twice fails");
    assert!(again.stderr.contains(&laptop_id.to_string()), "{}", again.stderr);

    // A token with a lifetime works until it ends, then gets 401. (A lifetime of a few
    // seconds, so that the first call surely falls inside it.)
    let issued = Instant::now();
    let brief = token_from(
        &insight(
            db,
            &[
                "tokens",
                "issue",
                "ann@example.org",
                "--name",
                "brief",
                "--expires-in",
                "3s",
            ],
        )
        .await,
    );
    let (status, _) = server.get("/me", &brief).await;
    assert!(
        issued.elapsed() < Duration::from_secs(3),
        "too slow to check the lifetime"
    );
    assert_eq!(status, StatusCode::OK, "a token within its lifetime");
    tokio::time::sleep(Duration::from_secs(4).saturating_sub(issued.elapsed())).await;
    assert_refused(&server, &brief, "an expired token").await;
    let list = insight(db, &["tokens", "list", "ann@example.org"]).await;
    let (_, row) = token_row(&list.stdout, "brief");
    assert!(row.ends_with("expired"), "{row}");

    // Mistakes fail with a sentence and print no token.
    for address in ["ann@example.org", "ANN@example.org"] {
        let twice = insight(db, &["users", "add", address]).await;
        assert!(!twice.success, "adding {address} twice succeeds");
        assert!(twice.stdout.is_empty(), "{}", twice.stdout);
        assert!(
            twice.stderr.contains("ann@example.org") && twice.stderr.contains("exists"),
            "{}",
            twice.stderr
        );
    }
    let nobody = insight(db, &["tokens", "issue", "nobody@example.org"]).await;
    assert!(!nobody.success, "a token for an unknown user");
    assert!(nobody.stdout.is_empty(), "{}", nobody.stdout);
    assert!(nobody.stderr.contains("nobody@example.org"), "{}", nobody.stderr);
    let bad = insight(db, &["tokens", "issue", "ann@example.org", "--expires-in", "soon"]).await;
    assert!(!bad.success && bad.stdout.is_empty(), "{}", bad.stdout);
    assert!(bad.stderr.contains("--expires-in"), "{}", bad.stderr);

    drop(server);
    assert_not_stored(db, &[&laptop, &phone, &brief]).await;
}

#[tokio::test]
async fn data_survives_a_kill_and_a_restart() {
    let (database_url, _guard) = fresh_database().await;
    // No report workers: the report stays as written, so both reads can compare it.
    let settings = [("INSIGHT_REPORT_WORKERS", "0".to_owned())];
    let mut server = Served::start_with(&database_url, &settings).await;
    let token = server.next_stdout_line().await.expect("first token");

    let (status, project) = server
        .send(
            reqwest::Method::POST,
            "/projects/",
            &token,
            json!({"name": "Churn study", "description": "Why teams leave",
                   "research_goals": "Find the three main reasons for churn",
                   "interview_guide": "1. When did you last use it?"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let project_id = project["id"].as_str().expect("project id").to_owned();
    let (status, presets) = server.get("/presets/system/", &token).await;
    assert_eq!(status, StatusCode::OK);
    let preset_id = presets[0]["id"].as_str().expect("preset id").to_owned();
    let reports = format!("/projects/{project_id}/reports");
    let (status, created) = server
        .send(
            reqwest::Method::POST,
            &reports,
            &token,
            json!({"title": "Churn findings", "preset_id": preset_id}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    let report_path = format!("{reports}/{}", created["id"].as_str().expect("report id"));
    let (status, report) = server
        .send(
            reqwest::Method::PUT,
            &report_path,
            &token,
            json!({"content": "# Findings", "is_public": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["content"], "# Findings");
    assert_eq!(report["is_public"], true);
    let (status, projects) = server.get("/projects/", &token).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(projects.as_array().map(Vec::len), Some(1), "{projects}");
    assert_eq!(projects[0]["research_goals"], "Find the three main reasons for churn");
    assert_eq!(projects[0]["total_reports_count"], 1);
    let (_, report_list) = server.get(&reports, &token).await;

    // No graceful shutdown: what the API acknowledged must be on disk.
    let rest = server.kill().await;
    assert!(
        rest.len() == 1 && rest[0].contains("/reset-password/"),
        "the password link, then nothing: {rest:?}"
    );

    let server = Served::start_with(&database_url, &settings).await;
    assert_eq!(server.get("/projects/", &token).await, (StatusCode::OK, projects));
    assert_eq!(server.get(&report_path, &token).await, (StatusCode::OK, report.clone()));
    assert_eq!(server.get(&reports, &token).await, (StatusCode::OK, report_list));
    let (status, presets_after) = server.get("/presets/system/", &token).await;
    assert_eq!((status, presets_after), (StatusCode::OK, presets));
    let public = format!(
        "/projects/public/{project_id}/reports/{}",
        report["id"].as_str().unwrap_or_default()
    );
    let (status, _, shared) = server.call(reqwest::Method::GET, &public, None, None).await;
    assert_eq!(status, StatusCode::OK, "{shared}");
    assert_eq!(shared["content"], "# Findings");
    assert_eq!(server.kill().await, Vec::<String>::new(), "no new first user");
}

#[tokio::test]
async fn a_bad_address_stops_the_start_naming_the_variable() {
    let (database_url, _guard) = fresh_database().await;
    let mut serve = command(&["serve", "--database-url", &database_url]);
    serve.env("INSIGHT_ADDR", "nonsense");
    let outcome = finish(serve).await;
    assert!(!outcome.success, "serve started with INSIGHT_ADDR=nonsense");
    assert!(outcome.stderr.contains("INSIGHT_ADDR"), "{}", outcome.stderr);
    assert!(outcome.stdout.is_empty(), "nothing was set up: {}", outcome.stdout);
}

/// Every setting's bad value is refused with a sentence naming its variable.
#[tokio::test]
async fn every_bad_setting_stops_the_start_naming_its_variable() {
    let (database_url, _guard) = fresh_database().await;
    let cases = [
        ("INSIGHT_ADDR", "nonsense"),
        ("INSIGHT_DATABASE_URL", "mysql://db/insight"),
        ("INSIGHT_MAX_BODY_BYTES", "lots"),
        ("INSIGHT_MAX_BODY_BYTES", "5"),
        ("INSIGHT_DB_MAX_CONNECTIONS", "0"),
        ("INSIGHT_PUBLIC_URL", "ftp://example.org"),
        ("INSIGHT_LOG_FORMAT", "xml"),
        ("INSIGHT_MAX_UPLOAD_BYTES", "12"),
        ("INSIGHT_MAX_UTTERANCES", "0"),
        ("INSIGHT_MAX_DURATION_MINUTES", "forever"),
        ("INSIGHT_STT_BASE_URL", "whisper.local"),
        ("INSIGHT_STT_PROVIDER", "speechmatics"),
        ("INSIGHT_STT_POLL_SECONDS", "0"),
        ("INSIGHT_STT_CALLBACK_WAIT_SECONDS", "a while"),
        ("INSIGHT_JOB_MAX_ATTEMPTS", "0"),
        ("INSIGHT_JOB_RETRY_BASE_SECONDS", "-1"),
        ("INSIGHT_JOB_LEASE_SECONDS", "0"),
        ("INSIGHT_REPORT_WORKERS", "many"),
        ("INSIGHT_AI", "magic"),
        ("INSIGHT_AI", "openai"),
        ("INSIGHT_LLM_BASE_URL", "localhost:8080"),
        ("INSIGHT_LLM_CONTEXT_TOKENS", "100"),
        ("INSIGHT_LLM_CONCURRENCY", "0"),
        ("INSIGHT_LLM_TIMEOUT_SECONDS", "0"),
        ("INSIGHT_LLM_MAX_ATTEMPTS", "0"),
        ("INSIGHT_LLM_PRICES", "gpt-4o=cheap"),
        ("INSIGHT_SMTP_URL", "mail.example.org"),
        // Refused without being repeated: it holds a password.
        ("INSIGHT_SMTP_URL", "smtp://me:hunter2@mail.example.org?tls=yes"),
        ("INSIGHT_MAIL_FROM", "Insight"),
        ("INSIGHT_SIGNUP", "anyone"),
        ("INSIGHT_SESSION_IDLE_MINUTES", "0"),
        ("INSIGHT_SESSION_LIFETIME_HOURS", "forever"),
        ("INSIGHT_INVITATION_DAYS", "365"),
        ("INSIGHT_PASSWORD_RESET_MINUTES", "1"),
        ("INSIGHT_SIGN_IN_LOCK_AFTER", "1"),
        ("INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER", "none"),
        ("INSIGHT_SIGN_IN_LOCK_MINUTES", "0"),
        ("INSIGHT_AUDIT_RETENTION_DAYS", "0"),
        ("INSIGHT_OIDC_ISSUER", "not a url"),
        ("INSIGHT_OIDC_ROLE", "boss"),
        ("INSIGHT_OIDC_WORKSPACE", "team"),
    ];
    let mut failures = Vec::new();
    for (name, value) in cases {
        // The other settings are good, so only the one under test can stop the start.
        let mut serve = command(&["serve"]);
        serve
            .env("INSIGHT_ADDR", "127.0.0.1:0")
            .env("INSIGHT_DATABASE_URL", &database_url)
            .env(name, value);
        let outcome = finish(serve).await;
        if outcome.success
            || !outcome.stderr.contains(name)
            || !outcome.stdout.is_empty()
            || outcome.stderr.contains("hunter2")
        {
            failures.push(format!("{name}={value}: {}", outcome.stderr.trim()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `serve --help` shows every setting the reference (docs/settings.md, rendered from the
/// same declarations by a unit test) describes, by its variable and its flag.
#[tokio::test]
async fn serve_help_lists_every_setting_of_the_reference() {
    let reference =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/settings.md")).expect("docs/settings.md");
    let described: Vec<(&str, &str)> = reference
        .lines()
        .filter_map(|line| {
            let (variable, rest) = line.strip_prefix("- **`")?.split_once("`**")?;
            let flag = rest.strip_prefix(" (`")?.split_once("`)")?.0;
            Some((variable, flag))
        })
        .collect();
    assert!(
        described.len() > 70,
        "the reference describes {} settings",
        described.len()
    );
    let outcome = finish(command(&["serve", "--help"])).await;
    assert!(outcome.success, "{}", outcome.stderr);
    let missing: Vec<_> = described
        .iter()
        .filter(|(variable, flag)| {
            !outcome.stdout.contains(&format!("[env: {variable}")) || !outcome.stdout.contains(&format!("{flag} <"))
        })
        .collect();
    assert!(missing.is_empty(), "not in serve --help: {missing:?}");
}

#[tokio::test]
async fn a_recording_being_transcribed_when_the_server_is_killed_is_finished_after_the_restart() {
    let (database_url, _guard) = fresh_database().await;
    let data = tempfile::tempdir().expect("data dir");
    let (addr, stub) = stt_stub().await;
    stub.hold(true);
    let settings = [
        ("INSIGHT_STT_BASE_URL", format!("http://{addr}/v1")),
        ("INSIGHT_DATA_DIR", data.path().display().to_string()),
        ("INSIGHT_JOB_LEASE_SECONDS", "1".to_owned()),
    ];
    let mut server = Served::start_with(&database_url, &settings).await;
    let token = server.next_stdout_line().await.expect("first token");
    let (_, project) = server
        .send(reqwest::Method::POST, "/projects/", &token, json!({ "name": "Calls" }))
        .await;
    let project_id = project["id"].as_str().expect("project id").to_owned();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(crate::support::records::wav())
            .file_name("call.wav")
            .mime_str("audio/wav")
            .expect("mime"),
    );
    let response = reqwest::Client::new()
        .post(format!("{}/projects/{project_id}/records", server.base))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert_eq!(response.status(), StatusCode::CREATED);
    let record: Value = response.json().await.expect("record");
    let path = format!("/insight/{}/", record["id"].as_str().expect("id"));

    // The provider has the recording and has not answered: the record is in progress.
    eventually(PATIENCE, "the recording never reached the provider", async || {
        if stub.call_count() > 0 { Ok(()) } else { Err("") }
    })
    .await;
    let (_, during) = server.get(&path, &token).await;
    assert_eq!(during["status"], "InProgress", "{during}");
    server.kill().await;

    stub.hold(false);
    let server = Served::start_with(&database_url, &settings).await;
    let record = eventually(PATIENCE, "not finished after the restart", async || {
        let (status, record) = server.get(&path, &token).await;
        assert_eq!(status, StatusCode::OK, "{record}");
        if record["status"] == "Finished" {
            Ok(record)
        } else {
            Err(format!("{record}\n{}", server.log()))
        }
    })
    .await;
    assert_eq!(record["utterances"][1]["text"], "It was confusing at first.");
    assert!(stub.call_count() >= 2, "the job ran again after the restart");
    server.kill().await;
}

#[tokio::test]
async fn a_report_being_generated_when_the_server_is_killed_completes_exactly_once_after_the_restart() {
    let (database_url, _guard) = fresh_database().await;
    let data = tempfile::tempdir().expect("data dir");
    let (addr, stub) = chat_stub().await;
    stub.hold(true);
    let settings = [
        ("INSIGHT_LLM_BASE_URL", format!("http://{addr}/v1")),
        ("INSIGHT_DATA_DIR", data.path().display().to_string()),
        ("INSIGHT_JOB_LEASE_SECONDS", "1".to_owned()),
        ("INSIGHT_REPORT_WORKERS", "1".to_owned()),
    ];
    let mut server = Served::start_with(&database_url, &settings).await;
    let token = server.next_stdout_line().await.expect("first token");
    let (_, project) = server
        .send(
            reqwest::Method::POST,
            "/projects/",
            &token,
            json!({ "name": "Billing" }),
        )
        .await;
    let project_id = project["id"].as_str().expect("project id").to_owned();
    let (status, record) = server
        .send(
            reqwest::Method::POST,
            &format!("/projects/{project_id}/records"),
            &token,
            json!({ "title": "Anna", "text": ANNA }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record_path = format!("/insight/{}/", record["id"].as_str().expect("id"));
    eventually(PATIENCE, "the record never finished", async || {
        let (_, record) = server.get(&record_path, &token).await;
        if record["status"] == "Finished" {
            Ok(())
        } else {
            Err(record)
        }
    })
    .await;
    let (_, prompt) = server
        .send(
            reqwest::Method::POST,
            "/prompts/",
            &token,
            json!({ "title": "Billing", "text": "What do customers say about invoices?" }),
        )
        .await;
    let (status, report) = server
        .send(
            reqwest::Method::POST,
            &format!("/projects/{project_id}/reports"),
            &token,
            json!({ "title": "Invoices", "prompts_ids": [prompt["id"]], "reasoning_mode": "fast" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project_id}/reports/{}", report["id"].as_str().expect("id"));

    // The model has the request and has not answered: the report is generating.
    let report_calls = || {
        stub.calls()
            .iter()
            .filter(|call| call.schema_name() != Some("persona"))
            .count()
    };
    eventually(PATIENCE, "the model was never called", async || {
        if report_calls() > 0 { Ok(()) } else { Err("") }
    })
    .await;
    let (_, during) = server.get(&format!("{path}/generation"), &token).await;
    assert_eq!(during["status"], "generating", "{during}");
    server.kill().await;

    stub.hold(false);
    let server = Served::start_with(&database_url, &settings).await;
    let generation = eventually(PATIENCE, "not completed after the restart", async || {
        let (_, generation) = server.get(&format!("{path}/generation"), &token).await;
        if generation["status"] == "completed" {
            Ok(generation)
        } else {
            Err(format!("{generation}\n{}", server.log()))
        }
    })
    .await;
    assert_eq!(generation["attempts"], 2, "{generation}");
    let (_, report) = server.get(&path, &token).await;
    let content = report["content"].as_str().expect("content");
    assert_eq!(content.matches("# Invoices").count(), 1, "written once:\n{content}");
    assert_eq!(content.matches("chase finance every month").count(), 1, "{content}");
    // Nothing runs it again: after a while it is still the same report.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(server.get(&path, &token).await.1, report);
    server.kill().await;
}

/// A counter's value in a Prometheus text page (summed over its label sets that match).
fn metric(page: &str, name: &str, labels: &[&str]) -> f64 {
    page.lines()
        .filter(|line| line.starts_with(name) && labels.iter().all(|label| line.contains(label)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn two_instances_on_one_postgresql_database_share_the_reports_and_write_each_once() {
    let (database_url, _guard) = fresh_database().await;
    if !database_url.starts_with("postgres") {
        eprintln!("SKIPPED: needs PostgreSQL (INSIGHT_TEST_DATABASE_URL); SQLite has one instance");
        return;
    }
    let (addr, stub) = chat_stub().await;
    stub.respond(|call| report_reply(call).delay(Duration::from_millis(100)));
    let data = tempfile::tempdir().expect("data dir");
    let settings = [
        ("INSIGHT_LLM_BASE_URL", format!("http://{addr}/v1")),
        ("INSIGHT_DATA_DIR", data.path().display().to_string()),
        ("INSIGHT_REPORT_WORKERS", "2".to_owned()),
    ];
    let mut first = Served::start_with(&database_url, &settings).await;
    let token = first.next_stdout_line().await.expect("first token");
    let second = Served::start_with(&database_url, &settings).await;

    let (_, project) = first
        .send(reqwest::Method::POST, "/projects/", &token, json!({ "name": "Shared" }))
        .await;
    let project_id = project["id"].as_str().expect("project id").to_owned();
    let (_, record) = first
        .send(
            reqwest::Method::POST,
            &format!("/projects/{project_id}/records"),
            &token,
            json!({ "title": "Anna", "text": ANNA }),
        )
        .await;
    let record_path = format!("/insight/{}/", record["id"].as_str().expect("id"));
    eventually(PATIENCE, "the record never finished", async || {
        let (_, record) = first.get(&record_path, &token).await;
        if record["status"] == "Finished" {
            Ok(())
        } else {
            Err(record)
        }
    })
    .await;
    let (_, prompt) = first
        .send(
            reqwest::Method::POST,
            "/prompts/",
            &token,
            json!({ "title": "Billing", "text": "Invoices?" }),
        )
        .await;
    let mut paths = Vec::new();
    for n in 0..50 {
        let (status, report) = first
            .send(
                reqwest::Method::POST,
                &format!("/projects/{project_id}/reports"),
                &token,
                json!({ "title": format!("Report {n}"), "prompts_ids": [prompt["id"]], "reasoning_mode": "fast" }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        paths.push(format!(
            "/projects/{project_id}/reports/{}",
            report["id"].as_str().expect("id")
        ));
    }
    // All fifty within the minute, each checked once it is completed.
    let mut waiting = paths.iter();
    let mut next = waiting.next();
    eventually(Duration::from_secs(60), "not all completed", async || {
        while let Some(path) = next {
            let (_, generation) = second.get(&format!("{path}/generation"), &token).await;
            if generation["status"] != "completed" {
                return Err(format!("{path}: {generation}"));
            }
            assert_eq!(generation["attempts"], 1, "{path}: {generation}");
            next = waiting.next();
        }
        Ok(())
    })
    .await;
    // One model call per report (one prompt, fast): none was written twice.
    let report_calls = stub
        .calls()
        .iter()
        .filter(|call| call.schema_name() != Some("persona"))
        .count();
    assert_eq!(report_calls, 50);
    let done = |page: &str| {
        metric(
            page,
            "insight_jobs_total",
            &["kind=\"report.generate\"", "result=\"done\""],
        )
    };
    let page = |base: String| async move {
        let response = reqwest::get(format!("{base}/metrics")).await.expect("metrics");
        response.text().await.expect("metrics text")
    };
    let (by_first, by_second) = (
        done(&page(first.base.clone()).await),
        done(&page(second.base.clone()).await),
    );
    assert_eq!(by_first + by_second, 50.0, "first {by_first}, second {by_second}");
    assert!(
        by_first > 0.0 && by_second > 0.0,
        "both did some: first {by_first}, second {by_second}"
    );
    first.kill().await;
    second.kill().await;
}

#[tokio::test]
async fn a_password_is_set_from_stdin_and_a_reset_link_printed_from_the_command_line() {
    use tokio::io::AsyncWriteExt;
    let (database_url, _guard) = fresh_database().await;
    assert!(
        insight(&database_url, &["users", "add", "ann@example.org"])
            .await
            .success
    );
    let set_password = |password: &'static str| {
        let database_url = database_url.clone();
        async move {
            let mut set = command(&[
                "users",
                "set-password",
                "ann@example.org",
                "--database-url",
                &database_url,
            ]);
            set.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = set.spawn().expect("runs");
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(password.as_bytes()).await.expect("write");
            drop(stdin);
            let output = child.wait_with_output().await.expect("finishes");
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
    };
    let (ok, stderr) = set_password("short\n").await;
    assert!(!ok && stderr.contains("10 characters"), "{stderr}");
    let (ok, stderr) = set_password("ann's long passphrase\n").await;
    assert!(ok, "{stderr}");
    let link = insight(
        &database_url,
        &[
            "users",
            "reset-link",
            "ann@example.org",
            "--public-url",
            "https://insight.example.org",
        ],
    )
    .await;
    assert!(link.success, "{}", link.stderr);
    let url = link.stdout.trim();
    assert!(
        url.starts_with("https://insight.example.org/reset-password/insl_"),
        "{url}"
    );
    let read = insight(
        &database_url,
        &["tokens", "issue", "ann@example.org", "--scope", "read"],
    )
    .await;
    assert!(read.success, "{}", read.stderr);
    let wrong = insight(
        &database_url,
        &["tokens", "issue", "ann@example.org", "--scope", "admin"],
    )
    .await;
    assert!(!wrong.success && wrong.stderr.contains("--scope"), "{}", wrong.stderr);

    let server = Served::start(&database_url).await;
    let token = read.stdout.trim();
    let (status, _) = server.get("/projects/", token).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = server
        .send(
            reqwest::Method::POST,
            "/projects/",
            token,
            serde_json::json!({ "name": "x" }),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a read token");
    let login = serde_json::json!({ "email": "ann@example.org", "password": "ann's long passphrase" });
    let (status, _, body) = server
        .call(reqwest::Method::POST, "/auth/login", None, Some(login))
        .await;
    assert_eq!(status, StatusCode::OK, "the password set from the command line: {body}");
    server.kill().await;
    assert_not_stored(&database_url, &[url.rsplit('/').next().expect("token"), token]).await;
}
