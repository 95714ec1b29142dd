//! A person's edit of a report is a version of its own: it is kept when it is saved, so
//! regenerating the report (from the JSON API or the console, which asks first), or a
//! generation that retries after the edit, can never lose it.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::{Value, json};

use crate::support::accounts::http_session;
use crate::support::models::report_reply;
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::reports::{preset_id, study, wait_generation};
use crate::support::{TestApp, TestUser, eventually};

/// A line no engine writes, added by hand (no apostrophe: pages escape it).
const NOTE: &str = "Note from the workshop: finance is the real customer here.";

/// A completed report of the study from the "Pain points" preset; its path.
async fn generated_report(app: &TestApp, user: &TestUser) -> (String, String) {
    let project = study(app, user).await;
    let preset = preset_id(app, user, "Pain points").await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            user,
            json!({ "title": "Billing pains", "preset_id": preset }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(app, user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    (project, path)
}

async fn versions(app: &TestApp, user: &TestUser, path: &str) -> Vec<Value> {
    let (status, versions) = app.get(&format!("{path}/versions"), user).await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    versions.as_array().expect("versions").clone()
}

/// (version, kind, author_email) of each version, newest first.
fn summary(versions: &[Value]) -> Vec<(i64, String, Option<String>)> {
    versions
        .iter()
        .map(|v| {
            (
                v["version"].as_i64().expect("version"),
                v["kind"].as_str().unwrap_or("(no kind)").to_owned(),
                v["author_email"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_hand_edit_is_a_version_of_its_own_and_outlives_regeneration() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (_, path) = generated_report(&app, &ann).await;
    let (_, report) = app.get(&path, &ann).await;
    let generated = report["content"].as_str().expect("content").to_owned();
    let edited = format!("{generated}\n{NOTE}\n");

    let (status, body) = app.put(&path, &ann, json!({ "content": edited })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Neither a change of something else nor saving the same text again is a new version.
    let (status, _) = app.put(&path, &ann, json!({ "title": "Billing pains (read)" })).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .put(&path, &ann, json!({ "content": edited, "is_public": false }))
        .await;
    assert_eq!(status, StatusCode::OK);

    let listed = versions(&app, &ann, &path).await;
    assert_eq!(
        summary(&listed),
        vec![
            (2, "edit".to_owned(), Some(ann.email.clone())),
            (1, "generation".to_owned(), None),
        ],
        "{listed:#?}"
    );
    assert_eq!(listed[0]["content"], json!(edited));
    assert!(listed[0]["provenance"].is_null(), "a person's edit has no provenance");
    let changes = listed[0]["changes"].as_str().expect("a diff against the generation");
    assert!(changes.contains(&format!("+{NOTE}")), "{changes}");
    assert!(listed[0]["generated_at"].is_string());

    // Regenerating answers as always (the edit is safe already) and writes a new version.
    let (status, queued) = app.post(&format!("{path}/regenerate"), &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let generation = wait_generation(&app, &ann, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    let (_, report) = app.get(&path, &ann).await;
    assert!(
        !report["content"].as_str().unwrap_or_default().contains(NOTE),
        "the report is written anew"
    );
    let listed = versions(&app, &ann, &path).await;
    assert_eq!(
        summary(&listed),
        vec![
            (3, "generation".to_owned(), None),
            (2, "edit".to_owned(), Some(ann.email.clone())),
            (1, "generation".to_owned(), None),
        ],
        "{listed:#?}"
    );
    assert_eq!(listed[1]["content"], json!(edited), "the edit is kept");
    let changes = listed[0]["changes"].as_str().expect("a diff against the edit");
    assert!(changes.contains(&format!("-{NOTE}")), "{changes}");
    app.stop().await;
}

#[tokio::test]
async fn an_edit_made_while_a_generation_waits_for_its_retry_is_kept() {
    let (addr, stub) = OpenAiStub::start().await;
    // The model fails the report's first attempt (only the report's calls: records call it
    // too); the retry is answered.
    let sections = std::sync::atomic::AtomicUsize::new(0);
    stub.respond(move |call| {
        let section = call.body.to_string().contains("report section");
        if section && sections.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            Reply::status(500)
        } else {
            report_reply(call)
        }
    });
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_max_attempts = 1;
        settings.jobs.job_max_attempts = 3;
        settings.jobs.job_retry_base_seconds = 1.0;
    })
    .await;
    let ann = app.user().await;
    let project = study(&app, &ann).await;
    let preset = preset_id(&app, &ann, "Pain points").await;
    let (_, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &ann,
            json!({ "title": "Retried", "preset_id": preset }),
        )
        .await;
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    eventually(Duration::from_secs(30), "no failed attempt", async || {
        let (_, generation) = app.get(&format!("{path}/generation"), &ann).await;
        if generation["status"] == "generating" && generation["error"].is_string() {
            return Ok(());
        }
        assert_ne!(generation["status"], "completed", "the first attempt was to fail");
        Err(generation)
    })
    .await;
    let typed = format!("# Retried\n\n{NOTE}\n");
    let (status, body) = app.put(&path, &ann, json!({ "content": typed })).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let generation = wait_generation(&app, &ann, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    assert_eq!(generation["attempts"], 2, "{generation}");
    let listed = versions(&app, &ann, &path).await;
    assert_eq!(
        summary(&listed),
        vec![
            (2, "generation".to_owned(), None),
            (1, "edit".to_owned(), Some(ann.email.clone())),
        ],
        "{listed:#?}"
    );
    assert_eq!(listed[1]["content"], json!(typed));
    app.stop().await;
}

#[tokio::test]
async fn the_console_asks_before_regenerating_an_edited_report_and_keeps_the_edit() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (project, path) = generated_report(&app, &ann).await;
    let report_id = path.rsplit('/').next().expect("id").to_owned();
    let page = format!("/p/{project}/reports/{report_id}");
    let (client, cookie, csrf) = http_session(&app, &ann, &page).await;
    let get = async |address: &str| {
        let response = client
            .get(app.url(address))
            .header(COOKIE, &cookie)
            .send()
            .await
            .expect("page");
        (response.status(), response.text().await.expect("html"))
    };
    let post = async |address: &str, form: &[(&str, &str)]| {
        let response = client
            .post(app.url(address))
            .header(COOKIE, &cookie)
            .header(ORIGIN, &app.base)
            .form(form)
            .send()
            .await
            .expect("form");
        let status = response.status();
        let location = response
            .headers()
            .get("location")
            .map(|l| l.to_str().expect("location").to_owned());
        (status, location, response.text().await.expect("html"))
    };
    let confirm = format!("{page}/regenerate");
    let (_, html) = get(&page).await;
    assert!(
        !html.contains(&format!("href=\"{confirm}\"")),
        "a report as generated regenerates at once"
    );

    let (_, edit_page) = get(&format!("{page}/edit")).await;
    assert!(edit_page.contains("name=\"content\""), "the editor");
    let (_, report) = app.get(&path, &ann).await;
    let edited = format!("{}\n{NOTE}\n", report["content"].as_str().expect("content"));
    let (status, location, _) = post(
        &format!("{page}/edit"),
        &[("csrf", &csrf), ("title", "Billing pains"), ("content", &edited)],
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some(page.as_str()));

    // Edited: Regenerate leads to a question first.
    let (_, html) = get(&page).await;
    assert!(html.contains(&format!("href=\"{confirm}\"")), "Regenerate asks first");
    let asks = "Your edits since the last generation will be kept as a version";
    let (status, question) = get(&confirm).await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains(asks), "{question}");
    assert!(question.contains("name=\"confirmed\""), "{question}");
    // A form from an older page (or a script) that did not confirm is asked too.
    let (status, _, question) = post(&confirm, &[("csrf", &csrf)]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(question.contains(asks), "{question}");
    let (_, report) = app.get(&path, &ann).await;
    assert_eq!(report["status"], "completed", "nothing was queued unasked");
    assert_eq!(report["content"], json!(edited));

    let (status, location, _) = post(&confirm, &[("csrf", &csrf), ("confirmed", "yes")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some(page.as_str()));
    let generation = wait_generation(&app, &ann, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");

    // The Versions page lists the edit by its author, compared with the version before.
    let (status, html) = get(&format!("{page}/versions")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !html.contains("The same text as the version before"),
        "every version differs from the one before:\n{html}"
    );
    let edit = html
        .split("id=\"version-2\"")
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .expect("version 2");
    assert!(edit.contains(&format!("Edited by {}", ann.email)), "{edit}");
    assert!(edit.contains(&format!("+ {NOTE}")), "{edit}");
    let newest = html
        .split("id=\"version-3\"")
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .expect("version 3");
    assert!(newest.contains(&format!("- {NOTE}")), "{newest}");
    let (_, html) = get(&page).await;
    assert!(
        !html.contains(&format!("href=\"{confirm}\"")),
        "regenerated: nothing to ask any more"
    );
    app.stop().await;
}
