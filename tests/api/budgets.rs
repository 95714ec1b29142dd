//! Monthly budgets (tag `usage`) for every caller: the research assistant over projects
//! of several workspaces is checked against, and charged to, each of them; an anonymous
//! respondent's interview stops calling the model once its workspace's budget is spent,
//! closing in the offline interviewer's words, and new interviews wait; a new record's
//! persona is written by the offline engine.

use std::time::Duration;

use reqwest::header::COOKIE;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::accounts::http_session;
use crate::support::interviews::{join, public, say};
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::{TestApp, TestUser, eventually};

const GREETING: &str = "Hello! Thanks for joining. What do you do for a living?";
const TRANSCRIPT: &str = "Interviewer: How do you pay your suppliers?\n\
    Respondent: Invoices arrive late, so I pay by bank transfer at the end of the month.";

/// A model that answers every chat call with 1,000 tokens in and 200 out (1.4 at the
/// prices below) and fails the structured ones (personas) for good, which costs nothing.
async fn priced_app() -> (TestApp, OpenAiStub) {
    let (addr, model) = OpenAiStub::start().await;
    model.respond(|call| {
        if call.is_structured() {
            Reply::status(400)
        } else {
            Reply::text(GREETING).usage(1_000, 200)
        }
    });
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
        settings.model.llm_max_attempts = 1;
        settings.model.llm_prices = insight::domain::usage::Prices::parse("stub-model=1000/2000").expect("prices");
    })
    .await;
    (app, model)
}

fn chat_calls(model: &OpenAiStub) -> usize {
    model.calls().iter().filter(|call| !call.is_structured()).count()
}

/// The calls and cost of `kind` in a workspace's usage this month, once at least `calls`
/// are charged (charges are written just after each call).
async fn charged(app: &TestApp, user: &TestUser, workspace: &str, kind: &str, calls: i64) -> (i64, f64) {
    eventually(
        Duration::from_secs(5),
        format!("workspace {workspace}: {calls} {kind} calls not charged"),
        async || {
            let (status, usage) = app.get(&format!("/workspaces/{workspace}/usage"), user).await;
            assert_eq!(status, StatusCode::OK, "{usage}");
            let line = usage["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .find(|line| line["kind"] == kind)
                .cloned()
                .unwrap_or(Value::Null);
            let found = (
                line["calls"].as_i64().unwrap_or(0),
                line["cost"].as_f64().unwrap_or(0.0),
            );
            if found.0 >= calls {
                Ok(found)
            } else {
                Err(format!("{} charged: {usage}", found.0))
            }
        },
    )
    .await
}

async fn set_budget(app: &TestApp, user: &TestUser, workspace: &str, budget: Value) {
    let (status, body) = app
        .patch(
            &format!("/workspaces/{workspace}/settings"),
            user,
            json!({ "monthly_budget": budget }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A project with one processed record in `workspace`.
async fn project_in(app: &TestApp, user: &TestUser, workspace: &str, name: &str) -> String {
    let (status, project) = app
        .post("/projects/", user, json!({ "name": name, "workspace_id": workspace }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let project = project["id"].as_str().expect("project").to_owned();
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Supplier call", "text": TRANSCRIPT, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    app.wait_finished(user, record["id"].as_str().expect("record")).await;
    project
}

#[tokio::test]
async fn the_assistant_over_two_workspaces_is_checked_against_and_charged_to_each() {
    let (app, model) = priced_app().await;
    let ann = app.user().await;
    let (status, team) = app
        .post("/workspaces", &ann, json!({ "name": "Finance research" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{team}");
    let personal = ann.id.to_string();
    let team = team["id"].as_str().expect("workspace").to_owned();
    // Which sorts first must not matter: the later one is the one that spends.
    let (first, later) = if personal < team {
        (personal.clone(), team.clone())
    } else {
        (team.clone(), personal.clone())
    };
    let in_first = project_in(&app, &ann, &first, "Payments").await;
    let in_later = project_in(&app, &ann, &later, "Invoices").await;
    let ask = |projects: Vec<&str>| json!({ "message": "How do suppliers get paid?", "project_ids": projects });

    // One answer read both workspaces' material: each is charged its full cost.
    let (status, answer) = app.post("/agent/chat", &ann, ask(vec![&in_first, &in_later])).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    for workspace in [&first, &later] {
        let (calls, cost) = charged(&app, &ann, workspace, "assistant", 1).await;
        assert_eq!(calls, 1, "{workspace}");
        assert!((cost - 1.4).abs() < 1e-9, "{workspace}: {cost}");
    }

    // The workspace that sorts later spends its budget: no question that reads its
    // material reaches the model, whatever else it reads.
    set_budget(&app, &ann, &later, json!(1)).await;
    let calls = chat_calls(&model);
    for projects in [vec![in_first.as_str(), in_later.as_str()], vec![in_later.as_str()]] {
        let (status, refused) = app.post("/agent/chat", &ann, ask(projects.clone())).await;
        assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{projects:?}: {refused}");
        let detail = refused["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("spent its monthly budget"), "{refused}");
        if projects.len() > 1 {
            assert!(detail.starts_with("The workspace \u{201c}"), "names which: {refused}");
        }
    }
    let whole = json!({ "message": "How do suppliers get paid?", "workspace_id": later });
    let (status, refused) = app.post("/agent/chat", &ann, whole).await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{refused}");
    assert_eq!(chat_calls(&model), calls, "nothing refused reached the model");
    // A question over the other workspace alone goes on, charged to it alone.
    let (status, answer) = app.post("/agent/chat", &ann, ask(vec![&in_first])).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(charged(&app, &ann, &first, "assistant", 2).await.0, 2);
    assert_eq!(charged(&app, &ann, &later, "assistant", 1).await.0, 1);
    app.stop().await;
}

/// The respondent's page for a link.
async fn respondent_page(app: &TestApp, token: &str) -> String {
    let response = app
        .client
        .get(app.url(&format!("/interview/{token}")))
        .send()
        .await
        .expect("page");
    assert_eq!(response.status(), StatusCode::OK);
    response.text().await.expect("html")
}

#[tokio::test]
async fn past_the_budget_an_interview_closes_in_the_offline_words_and_new_links_wait() {
    let (app, model) = priced_app().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    let project = app.project(&ann, "Trip planning").await;
    let (status, made) = app
        .post(
            "/api/interviews/rooms",
            &ann,
            json!({ "project_id": project, "count": 2,
                    "interview_guide_override": "1. What do you do?\n2. How do you plan a trip?\n3. What annoys you?" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let token = |i: usize| made["rooms"][i]["access_token"].as_str().expect("token").to_owned();
    let room = |i: usize| made["rooms"][i]["id"].as_str().expect("room").to_owned();

    // The interview starts with the model, which spends the budget.
    let (status, joined) = join(&app, &token(0), "ana@example.com").await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(joined["message"], GREETING);
    let session = joined["session_id"].as_str().expect("session").to_owned();
    charged(&app, &ann, &workspace, "interview", 1).await;
    set_budget(&app, &ann, &workspace, json!(1)).await;

    // The next turn is the offline interviewer's closing, and the model is not called.
    let calls = chat_calls(&model);
    let (status, closing) = say(
        &app,
        &token(0),
        &session,
        "I work as a nurse in a big hospital, mostly night shifts these days.",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{closing}");
    assert_eq!(
        closing["message"],
        insight::app::interview::phrases::phrases("en").closing
    );
    assert_eq!(closing["done"], true, "{closing}");
    assert_eq!(chat_calls(&model), calls, "no model call past the budget");
    let (_, finished) = app.get(&format!("/api/interviews/rooms/{}", room(0)), &ann).await;
    assert_eq!(finished["status"], "completed", "{finished}");
    let record = app
        .wait_finished(&ann, finished["record_id"].as_str().expect("record"))
        .await;
    let last = record["utterances"].as_array().and_then(|u| u.last()).cloned();
    assert_eq!(
        last.map(|u| u["text"].clone()),
        Some(json!(insight::app::interview::phrases::phrases("en").closing)),
        "the transcript ends with the closing: {record}"
    );
    assert_eq!(charged(&app, &ann, &workspace, "interview", 1).await.0, 1);

    // A new respondent finds the interview not available, and it waits, still pending.
    let (status, refused) = join(&app, &token(1), "ben@example.com").await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let detail = refused["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("not available"), "{refused}");
    assert!(
        !detail.contains("budget"),
        "the respondent is not told the workspace's affairs: {refused}"
    );
    let page = respondent_page(&app, &token(1)).await;
    assert!(page.contains("data-state=\"unavailable\""), "{page}");
    assert!(page.contains("This interview is not available."), "{page}");
    assert!(!page.contains("id=\"join-form\""), "no form to join: {page}");
    let (_, info) = public(&app, Method::GET, &format!("/api/interviews/join/{}", token(1)), None).await;
    assert_eq!(info["status"], "pending", "{info}");
    assert_eq!(chat_calls(&model), calls);

    // The owner sees why on the interview links' page.
    let path = format!("/p/{project}/interviews");
    let (client, cookie, _) = http_session(&app, &ann, &path).await;
    let html = client
        .get(app.url(&path))
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(html.contains("spent its monthly budget"), "{html}");

    // Raising the budget opens the link again.
    set_budget(&app, &ann, &workspace, Value::Null).await;
    let (status, joined) = join(&app, &token(1), "ben@example.com").await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(joined["message"], GREETING);
    let html = client
        .get(app.url(&path))
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(!html.contains("spent its monthly budget"), "{html}");
    app.stop().await;
}

#[tokio::test]
async fn past_the_budget_a_new_records_persona_is_written_offline_and_charged_nothing() {
    let (app, model) = priced_app().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    // One chat call spends the budget of 1.
    let project = project_in(&app, &ann, &workspace, "Suppliers").await;
    let (_, records) = app.get(&format!("/projects/{project}/records"), &ann).await;
    let first = records["items"]
        .as_array()
        .or(records.as_array())
        .and_then(|items| items.first())
        .and_then(|record| record["id"].as_str())
        .expect("a record")
        .to_owned();
    let (status, _) = app
        .post(&format!("/insight/{first}/chat/"), &ann, json!({ "message": "How do they pay?", "search_settings": { "use_web": false, "search_scope": "transcript" } }))
        .await;
    assert_eq!(status, StatusCode::OK);
    charged(&app, &ann, &workspace, "chat", 1).await;
    set_budget(&app, &ann, &workspace, json!(1)).await;

    let structured = || model.calls().iter().filter(|call| call.is_structured()).count();
    let before = structured();
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &ann,
            json!({ "title": "Second call", "text": TRANSCRIPT, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let record = record["id"].as_str().expect("record").to_owned();
    app.wait_finished(&ann, &record).await;
    let persona = eventually(Duration::from_secs(10), "no persona", async || {
        let (status, body) = app.get(&format!("/insight/{record}/persona-report"), &ann).await;
        if status == StatusCode::OK && !body["persona"].is_null() {
            Ok(body)
        } else {
            Err(format!("{status} {body}"))
        }
    })
    .await;
    assert_eq!(persona["provenance"]["engine"], "offline", "{persona}");
    assert!(
        persona["persona"]["quotes"]
            .to_string()
            .contains("Invoices arrive late"),
        "the offline persona quotes the respondent: {persona}"
    );
    assert_eq!(structured(), before, "no model call for the persona past the budget");
    let (_, usage) = app.get(&format!("/workspaces/{workspace}/usage"), &ann).await;
    let personas = usage["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter(|line| line["kind"] == "persona")
        .count();
    assert_eq!(personas, 0, "nothing charged for it: {usage}");
}
