//! Trust, personal data: a workspace's settings, what a record holds, and the model
//! seeing placeholders while the researcher sees the values (the model is a local stub
//! speaking the real wire format; it refuses any call that carries a fixture's or the
//! corpus's personal value, so every test of the suite checks this too).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::accounts::set_password;
use crate::support::db::made_at;
use crate::support::exchange::download;
use crate::support::models::{model_app, stream_events};
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::records::ANNA;
use crate::support::reports::wait_generation;
use crate::support::{TestApp, TestUser, error_locs, eventually};

const MARIA: &str = "Interviewer: Thanks for joining. How can we reach you?\n\
    Maria Lopez: Write to maria.lopez@example.org or call +44 20 7946 0958. My colleague Tom Becker handles invoices.\n\
    Interviewer: And billing?\n\
    Maria Lopez: We pay by card 4111 1111 1111 1111, refunds go to GB82 WEST 1234 5698 7654 32. \
    The portal logs 81.2.69.160 and my profile is linkedin.com/in/maria-lopez.";

const VALUES: &[&str] = &[
    "Maria Lopez",
    "maria.lopez@example.org",
    "+44 20 7946 0958",
    "Tom Becker",
    "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32",
    "81.2.69.160",
    "linkedin.com/in/maria-lopez",
];

async fn record(app: &TestApp, user: &TestUser, text: &str) -> (String, String) {
    let project = app.project(user, "Billing study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            user,
            json!({ "title": "Interview 7", "text": text, "language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    app.wait_finished(user, &id).await;
    (project, id)
}

/// Every message the model was sent, joined.
fn sent(model: &OpenAiStub) -> String {
    model
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn settings_have_safe_defaults_and_a_versioned_consent_text() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let path = format!("/workspaces/{}/settings", ann.id);
    let (status, settings) = app.get(&path, &ann).await;
    assert_eq!(status, StatusCode::OK, "{settings}");
    assert_eq!(
        settings,
        json!({ "pseudonymise": true, "known_names": [], "retention_recordings_days": null,
            "retention_records_days": null, "consent_text": null, "consent_version": 0,
            "monthly_budget": null, "currency": "USD" })
    );

    let (status, changed) = app
        .patch(
            &path,
            &ann,
            json!({ "known_names": ["  Zora   Quist ", "Zora Quist", "", "Acme's Lena"], "consent_text": "I agree to be recorded.",
                "retention_records_days": 365, "monthly_budget": 25.5, "currency": "EUR" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["known_names"], json!(["Zora Quist", "Acme's Lena"]));
    assert_eq!(changed["consent_version"], 1);
    assert_eq!(changed["retention_records_days"], 365);
    assert_eq!(changed["monthly_budget"], 25.5);
    assert_eq!(changed["currency"], "EUR");
    assert_eq!(changed["pseudonymise"], true, "a field left out stays");

    // The same text keeps its version; a new one counts up; null clears it.
    let (_, same) = app
        .patch(&path, &ann, json!({ "consent_text": "I agree to be recorded." }))
        .await;
    assert_eq!(same["consent_version"], 1);
    let (_, newer) = app
        .patch(
            &path,
            &ann,
            json!({ "consent_text": "I agree to be recorded and quoted." }),
        )
        .await;
    assert_eq!(newer["consent_version"], 2);
    let (_, cleared) = app
        .patch(
            &path,
            &ann,
            json!({ "consent_text": null, "retention_records_days": null }),
        )
        .await;
    assert_eq!(cleared["consent_text"], Value::Null);
    assert_eq!(cleared["retention_records_days"], Value::Null);
    assert_eq!(cleared["known_names"], json!(["Zora Quist", "Acme's Lena"]));
    let (_, read) = app.get(&path, &ann).await;
    assert_eq!(read, cleared);

    // Every problem of a body at once, in the contract's shape.
    let (status, body) = app
        .patch(
            &path,
            &ann,
            json!({ "retention_recordings_days": 0, "currency": "euro", "pseudonymise": "yes", "monthly_budget": -1 }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let locs = error_locs(&body);
    for field in [
        "retention_recordings_days",
        "currency",
        "pseudonymise",
        "monthly_budget",
    ] {
        assert!(locs.contains(&json!(["body", field])), "{field} in {body}");
    }

    // The audit log names the fields changed, never the names themselves.
    let (_, audit) = app.get(&format!("/workspaces/{}/audit?limit=100", ann.id), &ann).await;
    let entries: Vec<&Value> = audit
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "settings.changed")
        .collect();
    assert_eq!(entries.len(), 3, "{audit}");
    assert!(!audit.to_string().contains("Zora"), "{audit}");
    app.stop().await;
}

#[tokio::test]
async fn a_record_shows_what_personal_data_it_holds() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (_, record) = record(&app, &ann, MARIA).await;
    let (status, pii) = app.get(&format!("/insight/{record}/pii"), &ann).await;
    assert_eq!(status, StatusCode::OK, "{pii}");
    assert_eq!(
        pii,
        json!({ "kinds": { "email": 1, "phone": 1, "card": 1, "iban": 1, "ip": 1, "url": 1, "person": 2 },
            "pseudonymise": true })
    );
    // A name the workspace lists counts too.
    let (status, _) = app
        .patch(
            &format!("/workspaces/{}/settings", ann.id),
            &ann,
            json!({ "known_names": ["portal"] }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, pii) = app.get(&format!("/insight/{record}/pii"), &ann).await;
    assert_eq!(pii["kinds"]["person"], 3, "{pii}");
    let stranger = app.user().await;
    let (status, _) = app.get(&format!("/insight/{record}/pii"), &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// A report of the first system preset's first prompt over the project, generated: its
/// path and its last generation.
async fn billing_report(app: &TestApp, user: &TestUser, project: &str) -> (String, Value) {
    let (status, presets) = app.get("/presets/system/", user).await;
    assert_eq!(status, StatusCode::OK);
    let prompt = presets[0]["prompt_ids"][0].as_str().expect("prompt").to_owned();
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            user,
            json!({ "title": "Billing", "prompts_ids": [prompt] }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(app, user, &path, &["completed", "failed"]).await;
    (path, generation)
}

/// The placeholders of a request's last message, in order of first appearance.
fn placeholders(call_body: &Value) -> Vec<String> {
    let last = call_body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    let mut found = Vec::new();
    for piece in last.split('[').skip(1) {
        if let Some((inside, _)) = piece.split_once(']')
            && let Some((kind, number)) = inside.split_once('_')
            && kind.chars().all(|c| c.is_ascii_uppercase())
            && number.chars().all(|c| c.is_ascii_digit())
        {
            let placeholder = format!("[{inside}]");
            if !found.contains(&placeholder) {
                found.push(placeholder);
            }
        }
    }
    found
}

#[tokio::test]
async fn the_model_sees_placeholders_and_the_researcher_sees_the_values() {
    let (addr, model) = OpenAiStub::start().await;
    model.respond(|call| {
        let found = placeholders(&call.body);
        let is_chat = call.body.to_string().contains("Question:");
        if is_chat {
            // Reordered, repeated, in the other forms a model writes, and inside a quote.
            let mut reversed = found.clone();
            reversed.reverse();
            let plain: Vec<String> = found.iter().map(|p| p.trim_matches(['[', ']']).to_owned()).collect();
            Reply::pieces([
                format!("She said \"Write to [EMAIL_1] or call [PHONE_1].\" [Interview 7, #2] Seen: {}. ", reversed.join(", ")),
                format!("Again: {}.", plain.join(" ")),
            ])
        } else {
            Reply::text("## Findings\n\n[PERSON_2] handles invoices: \"My colleague [PERSON_2] handles invoices.\" [Interview 7, #2]")
        }
    });
    let app = model_app(addr).await;
    let ann = app.user().await;
    let (project, record) = record(&app, &ann, MARIA).await;

    let question = json!({ "message": "How do we reach her, what card, IBAN, portal address and profile, who handles invoices?",
        "search_settings": { "use_web": false, "search_scope": "transcript" } });
    let (status, answer) = app
        .post(&format!("/insight/{record}/chat/"), &ann, question.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let content = answer["content"].as_str().expect("content");
    // The quote holds once its placeholders are mapped back: it is the transcript's.
    assert!(
        content.contains("\"Write to maria.lopez@example.org or call +44 20 7946 0958.\""),
        "{content}"
    );
    assert!(
        !content.contains("[EMAIL_") && !content.contains("PERSON_") && !content.contains("[PHONE_"),
        "{content}"
    );
    for value in VALUES {
        assert!(content.contains(value), "{value} in {content}");
    }
    let to_model = sent(&model);
    for value in VALUES {
        assert!(!to_model.contains(value), "{value} reached the model:\n{to_model}");
    }
    assert!(
        to_model.contains("[EMAIL_1]") && to_model.contains("[PERSON_1]"),
        "{to_model}"
    );

    // Streamed: the deltas and the final message are mapped back too.
    let events = stream_events(&app, &ann, &record, question).await;
    let streamed: String = events
        .iter()
        .filter(|(name, _, _)| name == "delta")
        .map(|(_, data, _)| data["text"].as_str().unwrap_or_default())
        .collect();
    let (_, done, _) = events.last().expect("events");
    assert_eq!(streamed, done["content"].as_str().unwrap_or_default());
    for value in VALUES {
        assert!(streamed.contains(value), "{value} in {streamed}");
    }

    // A report: the section's placeholders are the material's own numbering.
    let (path, generation) = billing_report(&app, &ann, &project).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    let (_, report) = app.get(&path, &ann).await;
    let content = report["content"].as_str().expect("content");
    assert!(
        content.contains("Tom Becker handles invoices: \"My colleague Tom Becker handles invoices.\""),
        "{content}"
    );
    let to_model = sent(&model);
    for value in VALUES {
        assert!(!to_model.contains(value), "{value} reached the model:\n{to_model}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a_workspace_that_turns_pseudonymisation_off_sends_the_material_as_it_is() {
    let (addr, model) = OpenAiStub::start().await;
    model.allow_personal_data(true);
    model.answer(Reply::text("Noted."));
    let app = model_app(addr).await;
    let ann = app.user().await;
    let (_, record) = record(&app, &ann, MARIA).await;
    let (status, settings) = app
        .patch(
            &format!("/workspaces/{}/settings", ann.id),
            &ann,
            json!({ "pseudonymise": false }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{settings}");
    let (status, _) = app
        .post(
            &format!("/insight/{record}/chat/"),
            &ann,
            json!({ "message": "Who handles invoices, and where do we write or call?", "search_settings": { "use_web": false, "search_scope": "transcript" } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let to_model = sent(&model);
    assert!(
        to_model.contains("maria.lopez@example.org") && to_model.contains("Maria Lopez"),
        "{to_model}"
    );
    let (_, pii) = app.get(&format!("/insight/{record}/pii"), &ann).await;
    assert_eq!(pii["pseudonymise"], false);
    app.stop().await;
}

#[tokio::test]
async fn respondents_accept_the_consent_text_to_start_and_the_record_shows_it() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Trip planning").await;
    let (status, made) = app
        .post(
            "/api/interviews/rooms",
            &ann,
            json!({ "project_id": project, "count": 2 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let rooms = made["rooms"].as_array().expect("rooms").clone();
    let token = rooms[0]["access_token"].as_str().expect("token").to_owned();
    let join_path = format!("/api/interviews/join/{token}");

    // No consent text: the join info says nothing of it and joining needs no consent.
    let (_, info) = app.call(reqwest::Method::GET, &join_path, None, None).await;
    assert!(info.get("consent_text").is_none(), "{info}");
    let other = rooms[1]["access_token"].as_str().expect("token");
    let (status, _) = app
        .call(
            reqwest::Method::POST,
            &format!("/api/interviews/join/{other}"),
            None,
            Some(json!({ "email": "bo@example.com" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let consent = "We record this interview for research.\n\nYou may stop at any time.";
    let (status, _) = app
        .patch(
            &format!("/workspaces/{}/settings", ann.id),
            &ann,
            json!({ "consent_text": consent }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, info) = app.call(reqwest::Method::GET, &join_path, None, None).await;
    assert_eq!(info["consent_text"], consent);
    assert_eq!(info["consent_version"], 1);
    // The respondent's page shows the text and a box to tick.
    let page = app
        .client
        .get(app.url(&format!("/interview/{token}")))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(page.contains("<p>You may stop at any time.</p>"), "{page}");
    assert!(page.contains(r#"<input id="consent" name="consent" type="checkbox" required>"#));

    // Without consent, or refusing it: 422, and the room stays pending.
    for (body, kind) in [
        (json!({ "email": "ana@example.com" }), "missing"),
        (json!({ "email": "ana@example.com", "consent": false }), "value_error"),
    ] {
        let (status, refused) = app.call(reqwest::Method::POST, &join_path, None, Some(body)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(refused["detail"][0]["loc"], json!(["body", "consent"]));
        assert_eq!(refused["detail"][0]["type"], kind);
    }
    let (_, info) = app.call(reqwest::Method::GET, &join_path, None, None).await;
    assert_eq!(info["status"], "pending");

    let (status, joined) = app
        .call(
            reqwest::Method::POST,
            &join_path,
            None,
            Some(json!({ "email": "ana@example.com", "consent": true })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let session = joined["session_id"].as_str().expect("session").to_owned();
    // Rejoining the interview under way needs no second acceptance.
    let (status, _) = app
        .call(
            reqwest::Method::POST,
            &join_path,
            None,
            Some(json!({ "email": "ana@example.com" })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .call(
            reqwest::Method::POST,
            &format!("{join_path}/leave"),
            None,
            Some(json!({ "session_id": session })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, room) = app
        .get(
            &format!("/api/interviews/rooms/{}", rooms[0]["id"].as_str().expect("id")),
            &ann,
        )
        .await;
    let record = app
        .wait_finished(&ann, room["record_id"].as_str().expect("record"))
        .await;
    assert_eq!(record["consent"]["text"], consent);
    assert_eq!(record["consent"]["version"], 1);
    assert!(record["consent"]["accepted_at"].is_string(), "{record}");
    app.stop().await;
}

/// The workspace's usage this month, once `calls` calls are charged (charges are written
/// just after each call).
async fn usage_after(app: &TestApp, user: &TestUser, calls: i64) -> Value {
    eventually(
        Duration::from_secs(10),
        format!("not {calls} calls charged"),
        async || {
            let (status, usage) = app.get(&format!("/workspaces/{}/usage", user.id), user).await;
            assert_eq!(status, StatusCode::OK, "{usage}");
            let charged: i64 = usage["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .map(|l| l["calls"].as_i64().unwrap_or(0))
                .sum();
            if charged >= calls { Ok(usage) } else { Err(usage) }
        },
    )
    .await
}

#[tokio::test]
async fn an_estimate_counts_the_text_the_model_would_get() {
    let (addr, model) = OpenAiStub::start().await;
    model.respond(|_| Reply::status(400));
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
        settings.model.llm_max_attempts = 1;
    })
    .await;
    let ann = app.user().await;
    // Long addresses, each far more tokens than its placeholder.
    let text: String = (0..40)
        .map(|n| format!("Respondent: Write to maximiliane.oberhollenzer{n}@verwaltung-example.org about it.\n"))
        .collect();
    let (project, _) = record(&app, &ann, &text).await;
    let (_, presets) = app.get("/presets/system/", &ann).await;
    let prompt = presets[0]["prompt_ids"][0].as_str().expect("prompt").to_owned();
    let estimate = || async {
        let (status, estimate) = app
            .post(
                &format!("/projects/{project}/reports/estimate"),
                &ann,
                json!({ "title": "Billing", "prompts_ids": [prompt] }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{estimate}");
        estimate["prompt_tokens"].as_f64().expect("tokens")
    };
    let concealed = estimate().await;
    let settings = format!("/workspaces/{}/settings", ann.id);
    let (status, _) = app.patch(&settings, &ann, json!({ "pseudonymise": false })).await;
    assert_eq!(status, StatusCode::OK);
    let raw = estimate().await;
    // Each of the 40 addresses counts several tokens more than its placeholder.
    assert!(concealed + 100.0 < raw, "concealed {concealed}, raw {raw}");
}

#[tokio::test]
async fn work_is_estimated_charged_and_refused_past_the_monthly_budget() {
    let (addr, model) = OpenAiStub::start().await;
    // Personas (structured answers) fail for good and cost nothing: only chat and reports count here.
    model.respond(|call| {
        if call.is_structured() {
            Reply::status(400)
        } else {
            Reply::text("## Findings\n\nInvoices arrive late.").usage(1_000, 200)
        }
    });
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
        settings.model.llm_max_attempts = 1;
        settings.model.llm_prices = insight::domain::usage::Prices::parse("stub-model=1000/2000").expect("prices");
    })
    .await;
    let ann = app.user().await;
    let (project, record) = record(&app, &ann, ANNA).await;
    let (_, presets) = app.get("/presets/system/", &ann).await;
    let prompt = presets[0]["prompt_ids"][0].as_str().expect("prompt").to_owned();
    let report_body = json!({ "title": "Billing", "prompts_ids": [prompt] });

    // The estimate: the tokens of the call the report would make, at the model's price.
    // The record's persona (a structured call) is written meanwhile, in the background.
    let unstructured = || model.calls().iter().filter(|call| !call.is_structured()).count();
    let before = unstructured();
    let (status, estimate) = app
        .post(
            &format!("/projects/{project}/reports/estimate"),
            &ann,
            report_body.clone(),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{estimate}");
    assert_eq!(estimate["model"], "stub-model");
    assert_eq!(estimate["currency"], "USD");
    let (prompt_tokens, completion_tokens) = (
        estimate["prompt_tokens"].as_f64().expect("tokens"),
        estimate["completion_tokens"].as_f64().expect("tokens"),
    );
    assert!(prompt_tokens > 100.0 && completion_tokens > 0.0, "{estimate}");
    let cost = estimate["cost"].as_f64().expect("cost");
    assert!(
        (cost - (prompt_tokens * 1000.0 + completion_tokens * 2000.0) / 1e6).abs() < 1e-9,
        "{estimate}"
    );
    assert_eq!(unstructured(), before, "an estimate calls no model");
    let (status, refused) = app
        .post(
            &format!("/projects/{project}/reports/estimate"),
            &ann,
            json!({ "title": "x" }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");

    // A chat answer is charged: 1,000 tokens in at 1,000 and 200 out at 2,000 per million.
    let ask = json!({ "message": "What about invoices?", "search_settings": { "use_web": false, "search_scope": "transcript" } });
    let (status, _) = app.post(&format!("/insight/{record}/chat/"), &ann, ask.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let usage = usage_after(&app, &ann, 1).await;
    assert_eq!(usage["lines"][0]["kind"], "chat");
    assert_eq!(usage["lines"][0]["model"], "stub-model");
    assert_eq!(usage["lines"][0]["prompt_tokens"], 1_000);
    assert_eq!(usage["lines"][0]["completion_tokens"], 200);
    assert!(
        (usage["total_cost"].as_f64().expect("total") - 1.4).abs() < 1e-9,
        "{usage}"
    );

    // A budget of 2: the report is accepted (1.4 spent), runs and finishes past it...
    let (status, _) = app
        .patch(
            &format!("/workspaces/{}/settings", ann.id),
            &ann,
            json!({ "monthly_budget": 2 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, report) = app
        .post(&format!("/projects/{project}/reports"), &ann, report_body.clone())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &ann, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    let usage = usage_after(&app, &ann, 2).await;
    assert!(
        (usage["total_cost"].as_f64().expect("total") - 2.8).abs() < 1e-9,
        "{usage}"
    );
    assert_eq!(usage["budget"], 2.0);

    // ...and new work is refused with 402 and a sentence.
    let calls = unstructured();
    for (path, body) in [
        (format!("/insight/{record}/chat/"), ask.clone()),
        (format!("/projects/{project}/reports"), report_body.clone()),
        (format!("{path}/regenerate"), json!({})),
    ] {
        let (status, refused) = app.post(&path, &ann, body).await;
        assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{path}: {refused}");
        assert!(
            refused["detail"].as_str().is_some_and(|d| d.contains("budget")),
            "{refused}"
        );
    }
    assert_eq!(unstructured(), calls, "nothing refused reached the model");
    // Raising the budget lets work start again.
    let (_, _) = app
        .patch(
            &format!("/workspaces/{}/settings", ann.id),
            &ann,
            json!({ "monthly_budget": null }),
        )
        .await;
    let (status, _) = app.post(&format!("/insight/{record}/chat/"), &ann, ask).await;
    assert_eq!(status, StatusCode::OK);

    // Another month has no usage; a month that is not one is a 422.
    let (_, past) = app
        .get(&format!("/workspaces/{}/usage?month=2020-01", ann.id), &ann)
        .await;
    assert_eq!(past["lines"], json!([]));
    assert_eq!(past["month"], "2020-01");
    let (status, body) = app
        .get(&format!("/workspaces/{}/usage?month=2020-13", ann.id), &ann)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_locs(&body), [json!(["query", "month"])]);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_sets_privacy_and_a_budget_in_the_console_and_a_record_shows_its_personal_data() {
    use crate::support::accounts::PASSWORD;
    use crate::support::browser::{in_chromium, look, sign_in, until};
    use crate::support::browser::{set, submit};
    let app = TestApp::start().await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    let (_, record) = record(&app, &ann, MARIA).await;
    in_chromium("the privacy settings test", async |browser| {
        sign_in(browser, &app, &ann.email).await;
        browser.go(&app.url("/settings/privacy")).await;
        until(browser, "the privacy page", "return document.querySelector('#known-names') !== null || null").await;
        set(browser, "#known-names", "Zora Quist\nAcme's Lena").await;
        set(browser, "#consent-text", "We record this interview for research.").await;
        set(browser, "#budget", "abc").await;
        submit(browser, "#budget").await;
        until(
            browser,
            "the error summary",
            "return document.querySelector('.error-summary')?.textContent.includes('monthly budget must be a number') || null",
        )
        .await;
        set(browser, "#known-names", "Zora Quist\nAcme's Lena").await;
        set(browser, "#consent-text", "We record this interview for research.").await;
        set(browser, "#budget", "25,50").await;
        set(browser, "#currency", "eur").await;
        submit(browser, "#budget").await;
        until(
            browser,
            "the notice",
            "return document.querySelector('.notice')?.textContent.includes('saved') || null",
        )
        .await;
        look(browser, "settings-privacy").await;
        browser.go(&app.url(&format!("/r/{record}"))).await;
        let said = until(
            browser,
            "the record's personal data",
            "return document.querySelector('#personal-data')?.textContent || null",
        )
        .await;
        let said = said.as_str().unwrap_or_default();
        assert!(
            said.contains("2 people") && said.contains("1 e-mail address") && said.contains("placeholders"),
            "{said}"
        );
        // Redacting it for good, from its page.
        let href = browser
            .script("return document.querySelector('#redact-link')?.getAttribute('href')")
            .await;
        assert_eq!(href, json!(format!("/r/{record}/redact")));
        browser.go(&app.url(&format!("/r/{record}/redact"))).await;
        until(browser, "the question", "return document.querySelector('h1')?.textContent.includes('Redact') || null").await;
        look(browser, "record-redact").await;
        submit(browser, "button.danger").await;
        let said = until(
            browser,
            "the redacted transcript",
            "return document.body.textContent.includes('[EMAIL_1]') ? document.body.textContent : null",
        )
        .await;
        let said = said.as_str().unwrap_or_default();
        assert!(!said.contains("maria.lopez@example.org") && !said.contains("Tom Becker"), "{said}");
        let (_, settings) = app.get(&format!("/workspaces/{}/settings", ann.id), &ann).await;
        assert_eq!(settings["known_names"], json!(["Zora Quist", "Acme's Lena"]));
        assert_eq!(settings["consent_text"], "We record this interview for research.");
        assert_eq!(settings["monthly_budget"], 25.5);
        assert_eq!(settings["currency"], "EUR");
    })
    .await
    .then(app.stop())
    .await;
}

/// Every row of every table of the app's database as lower-case text, with its table:
/// to look for a value anywhere.
async fn every_row(app: &TestApp) -> Vec<(String, String)> {
    use sqlx::Connection;
    let mut rows = Vec::new();
    if app.database_url.starts_with("sqlite") {
        let mut conn = sqlx::SqliteConnection::connect(&app.database_url).await.expect("open");
        let tables: Vec<(String,)> =
            sqlx::query_as("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                .fetch_all(&mut conn)
                .await
                .expect("tables");
        for (table,) in tables {
            let columns: Vec<(String,)> = sqlx::query_as("SELECT name FROM pragma_table_info($1)")
                .bind(&table)
                .fetch_all(&mut conn)
                .await
                .expect("columns");
            let text: Vec<String> = columns
                .iter()
                .map(|(c, )| {
                    format!("CASE WHEN typeof(\"{c}\") = 'blob' THEN hex(\"{c}\") ELSE COALESCE(CAST(\"{c}\" AS TEXT), '') END")
                })
                .collect();
            let sql = format!("SELECT LOWER({}) FROM \"{table}\"", text.join(" || '|' || "));
            let found: Vec<(String,)> = sqlx::query_as(&sql).fetch_all(&mut conn).await.expect("rows");
            rows.extend(found.into_iter().map(|(row,)| (table.clone(), row)));
        }
    } else {
        let mut conn = sqlx::PgConnection::connect(&app.database_url).await.expect("open");
        let tables: Vec<(String,)> =
            sqlx::query_as("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()")
                .fetch_all(&mut conn)
                .await
                .expect("tables");
        for (table,) in tables {
            let found: Vec<(String,)> = sqlx::query_as(&format!("SELECT LOWER(CAST(t AS TEXT)) FROM \"{table}\" t"))
                .fetch_all(&mut conn)
                .await
                .expect("rows");
            rows.extend(found.into_iter().map(|(row,)| (table.clone(), row)));
        }
    }
    rows
}

const DANA: &str = "Dana.Erase@Example.org";

#[tokio::test]
async fn erasing_a_respondent_leaves_no_trace_of_their_address_and_a_receipt() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let workspace = owner.id.to_string();
    let project = app.project(&owner, "Billing study").await;
    let mut records = Vec::new();
    for (title, text) in [
        (
            "Dana",
            format!(
                "Interviewer: How can we reach you?\nDana: Write to me at {DANA} any time.\nInterviewer: Thanks.\nDana: The invoices are always late."
            ),
        ),
        (
            "Other",
            "Interviewer: How is billing?\nBo: Fine, the invoices arrive on time.".to_owned(),
        ),
    ] {
        let (status, record) = app
            .post(
                &format!("/projects/{project}/records"),
                &owner,
                json!({ "title": title, "text": text, "language": "en" }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        let id = record["id"].as_str().expect("id").to_owned();
        app.wait_finished(&owner, &id).await;
        records.push(id);
    }
    let (dana, other) = (records[0].clone(), records[1].clone());
    // An interview with Dana, by address.
    let (status, made) = app
        .post(
            "/api/interviews/rooms",
            &owner,
            json!({ "project_id": project, "respondent_email": DANA }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let room = made["rooms"][0].clone();
    let token = room["access_token"].as_str().expect("token");
    let (status, joined) = app
        .call(
            reqwest::Method::POST,
            &format!("/api/interviews/join/{token}"),
            None,
            Some(json!({ "email": DANA.to_lowercase() })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let session = joined["session_id"].as_str().expect("session");
    for path in ["messages", "leave"] {
        let (status, body) = app
            .call(
                reqwest::Method::POST,
                &format!("/api/interviews/join/{token}/{path}"),
                None,
                Some(json!({ "session_id": session, "text": "We plan every trip in a shared spreadsheet." })),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (_, room) = app
        .get(
            &format!("/api/interviews/rooms/{}", room["id"].as_str().expect("id")),
            &owner,
        )
        .await;
    let interview = room["record_id"].as_str().expect("the interview's record").to_owned();
    app.wait_finished(&owner, &interview).await;
    // What mentions Dana elsewhere: a highlight, a persona, chats, a report, an insight, an invitation.
    let (status, highlight) = app
        .post(
            &format!("/insight/{dana}/highlights"),
            &owner,
            json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 20 } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{highlight}");
    let (status, kept) = app
        .post(
            &format!("/insight/{other}/highlights"),
            &owner,
            json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 4 } }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    let (status, _) = app.get(&format!("/insight/{dana}/persona-report"), &owner).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .post(
            &format!("/insight/{dana}/chat/"),
            &owner,
            json!({ "message": format!("What did {DANA} say?") }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, assistant) = app
        .post(
            "/agent/chat",
            &owner,
            json!({ "message": format!("Summarise {DANA}"), "project_id": project }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{assistant}");
    let report = app.report(&owner, &project).await;
    let (status, _) = app
        .put(
            &format!("/projects/{project}/reports/{report}"),
            &owner,
            json!({ "status": "completed", "content": format!("## Contact\n\nReach {DANA} for more.") }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, insight) = app
        .post(
            &format!("/projects/{project}/insights"),
            &owner,
            json!({ "title": "Late invoices", "body": format!("As {} said.", DANA.to_uppercase()), "highlight_ids": [kept["id"]] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{insight}");
    let (status, invitation) = app
        .post(
            &format!("/workspaces/{workspace}/invitations"),
            &owner,
            json!({ "email": DANA, "role": "viewer" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{invitation}");
    let email = DANA.to_lowercase();
    assert!(
        every_row(&app).await.iter().any(|(_, row)| row.contains(&email)),
        "the address is there first"
    );

    // Only admins erase; an address is needed.
    let viewer = app.user().await;
    app.store
        .add_member(owner.id, viewer.id, insight::domain::workspace::Role::Viewer)
        .await
        .expect("member");
    let path = format!("/workspaces/{workspace}/erasure");
    let (status, _) = app.post(&path, &viewer, json!({ "email": DANA })).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, refused) = app.post(&path, &owner, json!({ "email": "dana" })).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(error_locs(&refused), vec![json!(["body", "email"])]);

    let (status, receipt) = app.post(&path, &owner, json!({ "email": format!(" {DANA} ") })).await;
    assert_eq!(status, StatusCode::OK, "{receipt}");
    let deleted = &receipt["deleted"];
    assert_eq!(deleted["records"], 2, "Dana's upload and her interview: {receipt}");
    assert_eq!(deleted["rooms"], 1, "{receipt}");
    assert!(deleted["personas"].as_u64() >= Some(1), "{receipt}");
    assert_eq!(deleted["invitations"], 1, "{receipt}");
    assert!(deleted["highlights"].as_u64() >= Some(1), "{receipt}");
    assert!(
        deleted["chat_messages"].as_u64() >= Some(4),
        "both questions and answers: {receipt}"
    );
    assert!(
        receipt["redacted"].as_u64() >= Some(3),
        "the report, the insight, the assistant's title: {receipt}"
    );

    let leftovers: Vec<(String, String)> = every_row(&app)
        .await
        .into_iter()
        .filter(|(_, row)| row.contains(&email))
        .collect();
    assert!(leftovers.is_empty(), "traces of the address: {leftovers:?}");
    for gone in [&dana, &interview] {
        let (status, _) = app.get(&format!("/insight/{gone}/"), &owner).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    let (status, _) = app.get(&format!("/insight/{other}/"), &owner).await;
    assert_eq!(status, StatusCode::OK, "another respondent's record stays");
    let (_, report) = app.get(&format!("/projects/{project}/reports/{report}"), &owner).await;
    assert_eq!(report["content"], "## Contact\n\nReach [erased] for more.");
    let entry = app
        .audit(&owner, &workspace, "respondent.erased")
        .await
        .first()
        .cloned();
    let entry = entry.expect("an audit entry");
    assert_eq!(entry["detail"]["deleted"]["records"], 2, "{entry}");
    // Again: nothing left to erase.
    let (_, again) = app.post(&path, &owner, json!({ "email": DANA })).await;
    assert_eq!(again["deleted"]["records"], 0, "{again}");
    app.stop().await;
}

#[tokio::test]
async fn records_and_recordings_past_the_retention_are_deleted_by_the_background_sweep() {
    use crate::support::records::{stt_stub, upload, wait_for, wav};
    let (addr, _stub) = stt_stub().await;
    let speech = move |settings: &mut insight::config::Settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_api_key = Some("sk-test-stt".into());
        settings.speech.stt_model = Some("whisper-large-v3".into());
    };
    let mut app = TestApp::start_with(speech).await;
    let owner = app.user().await;
    let workspace = owner.id.to_string();
    let project = app.project(&owner, "Calls").await;
    let mut calls = Vec::new();
    for name in ["old.wav", "month.wav", "today.wav"] {
        let (status, record) = upload(&app, &owner, &project, name, "audio/wav", wav(), None).await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        let id = record["id"].as_str().expect("id").to_owned();
        let record = wait_for(&app, &owner, &id, &["Finished", "Error"]).await;
        assert_eq!(record["status"], "Finished", "{record}");
        calls.push(id);
    }
    let media = app.data_dir.join("media");
    let recordings = |dir: &std::path::Path| std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    assert_eq!(recordings(&media), 3);
    let (status, settings) = app
        .patch(
            &format!("/workspaces/{workspace}/settings"),
            &owner,
            json!({ "retention_records_days": 90, "retention_recordings_days": 14 }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{settings}");
    let now = chrono::Utc::now();
    made_at(&app, &calls[0], now - chrono::Duration::days(91)).await;
    made_at(&app, &calls[1], now - chrono::Duration::days(30)).await;

    // The sweep runs when the service starts (and hourly).
    app.restart(speech).await;
    eventually(
        Duration::from_secs(20),
        "the old record was never deleted",
        async || {
            let (status, _) = app.get(&format!("/insight/{}/", calls[0]), &owner).await;
            if status == StatusCode::NOT_FOUND {
                Ok(())
            } else {
                Err(status)
            }
        },
    )
    .await;
    let (status, month) = app.get(&format!("/insight/{}/", calls[1]), &owner).await;
    assert_eq!(status, StatusCode::OK, "a record within the retention stays");
    assert!(
        !month["utterances"].as_array().expect("utterances").is_empty(),
        "its transcript stays"
    );
    let recording = |id: &str| app.store.record_media(uuid::Uuid::parse_str(id).expect("id"));
    assert_eq!(recording(&calls[1]).await.expect("read"), None, "its recording is gone");
    assert!(
        recording(&calls[2]).await.expect("read").is_some(),
        "today's recording stays"
    );
    // The audit entry is written once the sweep has removed the files, a moment after the
    // record is gone.
    let entry = eventually(Duration::from_secs(20), "no audit entry for the sweep", async || {
        let entry = app
            .audit(&owner, &workspace, "retention.applied")
            .await
            .first()
            .cloned();
        entry.ok_or("")
    })
    .await;
    assert_eq!(entry["detail"], json!({ "records": 1, "recordings": 1 }), "{entry}");
    assert_eq!(
        recordings(&media),
        1,
        "only today's recording is left in the data folder"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_redacted_record_keeps_placeholders_for_good_and_what_came_from_it_follows() {
    use crate::support::records::{stt_stub, upload, wait_for, wav};
    let (addr, _stub) = stt_stub().await;
    let app = TestApp::start_with(move |settings| {
        settings.speech.stt_base_url = Some(format!("http://{addr}/v1"));
        settings.speech.stt_api_key = Some("sk-test-stt".into());
        settings.speech.stt_model = Some("whisper-large-v3".into());
    })
    .await;
    let owner = app.user().await;
    let (project, record) = record(&app, &owner, MARIA).await;
    // What came from it: a highlight, a chat, a persona, a report.
    let (status, highlight) = app
        .post(
            &format!("/insight/{record}/highlights"),
            &owner,
            json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 40 }, "note": "Maria Lopez's contact" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{highlight}");
    let (status, answer) = app
        .post(
            &format!("/insight/{record}/chat/"),
            &owner,
            json!({ "message": "How do we reach Maria Lopez?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, _) = app.get(&format!("/insight/{record}/persona-report"), &owner).await;
    assert_eq!(status, StatusCode::OK);
    // A report on what the record talks of, so that it quotes the record.
    let (status, prompt) = app
        .post(
            "/prompts/",
            &owner,
            json!({ "title": "Billing", "text": "What do customers say about invoices, cards and billing?" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{prompt}");
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &owner,
            json!({ "title": "Billing", "prompts_ids": [prompt["id"]] }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let report_path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &owner, &report_path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed");

    let (_, written) = app.get(&report_path, &owner).await;
    assert!(
        VALUES.iter().any(|value| written.to_string().contains(value)),
        "the report quotes the record: {written}"
    );

    let viewer = app.user().await;
    app.store
        .add_member(owner.id, viewer.id, insight::domain::workspace::Role::Viewer)
        .await
        .expect("member");
    let path = format!("/insight/{record}/redact");
    let (status, _) = app.post(&path, &viewer, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, receipt) = app.post(&path, &owner, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{receipt}");
    assert_eq!(receipt["record_id"], json!(record));
    assert_eq!(
        receipt["replaced"],
        json!({ "email": 1, "phone": 1, "card": 1, "iban": 1, "ip": 1, "url": 1, "person": 2 }),
        "{receipt}"
    );
    assert_eq!(receipt["reports_marked"], 1, "{receipt}");
    assert_eq!(receipt["recording_deleted"], false);

    // Nothing of the values is left where the record's words were.
    let (_, detail) = app.get(&format!("/insight/{record}/"), &owner).await;
    let (_, highlights) = app.get(&format!("/insight/{record}/highlights"), &owner).await;
    let (_, history) = app
        .get(
            &format!("/insight/{record}/chat/?thread_id={}", answer["thread_id"]),
            &owner,
        )
        .await;
    let (_, threads) = app.get(&format!("/insight/{record}/chat/threads/"), &owner).await;
    for (what, body) in [
        ("record", &detail),
        ("highlights", &highlights),
        ("chat", &history),
        ("threads", &threads),
    ] {
        let text = body.to_string();
        for value in VALUES {
            assert!(!text.contains(value), "{value} is still in the {what}: {text}");
        }
    }
    let said: Vec<&str> = detail["utterances"]
        .as_array()
        .expect("utterances")
        .iter()
        .map(|u| u["text"].as_str().expect("text"))
        .collect();
    assert!(
        said[1].starts_with("Write to [EMAIL_1] or call [PHONE_1]. My colleague [PERSON_2]"),
        "{said:?}"
    );
    assert_eq!(detail["utterances"][1]["speaker"], "[PERSON_1]");
    assert!(highlights.to_string().contains("[PERSON_1]'s contact"), "{highlights}");
    // The persona is written again from the redacted words; the report is marked.
    eventually(
        Duration::from_secs(20),
        "the persona was not written again",
        async || {
            let (status, persona) = app.get(&format!("/insight/{record}/persona-report"), &owner).await;
            if status == StatusCode::OK {
                let text = persona.to_string();
                assert!(
                    !text.contains("Maria Lopez") && !text.contains("maria.lopez@"),
                    "{text}"
                );
                return Ok(());
            }
            Err(persona)
        },
    )
    .await;
    let (_, marked) = app.get(&report_path, &owner).await;
    assert!(
        marked["needs_regeneration"]
            .as_str()
            .is_some_and(|r| r.contains("redacted")),
        "{marked}"
    );
    // Until then, the report (and so its exports) names nobody the record no longer names.
    let (status, _, markdown) = download(&app, &owner, &format!("{report_path}/export?format=md")).await;
    assert_eq!(status, StatusCode::OK);
    let markdown = String::from_utf8_lossy(&markdown);
    for value in VALUES {
        assert!(
            !marked.to_string().contains(value),
            "{value} is still in the report: {marked}"
        );
        assert!(!markdown.contains(value), "{value} is still in its export: {markdown}");
    }
    let (status, _) = app.post(&format!("{report_path}/regenerate"), &owner, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    wait_generation(&app, &owner, &report_path, &["completed", "failed"]).await;
    let (_, regenerated) = app.get(&report_path, &owner).await;
    assert!(regenerated.get("needs_regeneration").is_none(), "{regenerated}");
    let entries = app.audit(&owner, owner.id, "record.redacted").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(!entries[0].to_string().contains("Maria"), "{entries:?}");

    // A recording goes with the redaction.
    let (status, call) = upload(&app, &owner, &project, "call.wav", "audio/wav", wav(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{call}");
    let call = call["id"].as_str().expect("id").to_owned();
    wait_for(&app, &owner, &call, &["Finished"]).await;
    let (status, receipt) = app.post(&format!("/insight/{call}/redact"), &owner, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{receipt}");
    assert_eq!(receipt["recording_deleted"], true);
    let media = app.data_dir.join("media");
    assert_eq!(
        std::fs::read_dir(&media).map(|d| d.count()).unwrap_or(0),
        0,
        "the recording's file is gone"
    );
    app.stop().await;
}

/// The labelled interviews (`tests/fixtures/pii/interviews.jsonl`) as records, and every
/// kind of model call on them (record chat, a report across them, the research assistant,
/// the persona written in the background): what the model received is read back for
/// each labelled value, in any casing.
#[tokio::test]
async fn the_labelled_interviews_reach_the_model_only_as_placeholders() {
    let (addr, model) = OpenAiStub::start().await;
    // The model names back placeholders it saw, and one it made up.
    model.respond(|call| {
        let seen = placeholders(&call.body);
        Reply::text(&format!("Mentioned: {} and [PERSON_999].", seen.join(", ")))
    });
    let app = model_app(addr).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Billing study").await;
    let corpus = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pii/interviews.jsonl"
    ))
    .expect("read the corpus");
    let interviews: Vec<Value> = corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("an interview"))
        .collect();
    // One of each locale, two written in lower case and one in upper case among them.
    let chosen: Vec<&Value> = [
        "iv-01", "iv-02", "iv-03", "iv-06", "iv-11", "iv-13", "iv-20", "iv-26", "iv-38", "iv-46",
    ]
    .iter()
    .map(|id| interviews.iter().find(|i| i["id"] == *id).expect("the interview"))
    .collect();
    let unmark = |text: &str, values: &mut Vec<(String, String)>| {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('⟦') {
            out.push_str(&rest[..open]);
            let after = &rest[open + '⟦'.len_utf8()..];
            let close = after.find('⟧').expect("a closed mark");
            let (mark, value) = after[..close].split_once(':').expect("a kind");
            if !mark.starts_with("WORD") {
                values.push((mark.to_owned(), value.to_owned()));
            }
            out.push_str(value);
            rest = &after[close + '⟧'.len_utf8()..];
        }
        out + rest
    };
    let mut values: Vec<(String, String)> = Vec::new();
    let mut records = Vec::new();
    for interview in &chosen {
        let title = unmark(interview["title"].as_str().expect("title"), &mut values);
        let text: Vec<String> = interview["utterances"]
            .as_array()
            .expect("utterances")
            .iter()
            .map(|u| {
                let speaker = unmark(u["speaker"].as_str().expect("speaker"), &mut values);
                let said = unmark(u["text"].as_str().expect("text"), &mut values);
                format!("{speaker}: {}", said.replace('\n', " "))
            })
            .collect();
        let (status, record) = app
            .post(
                &format!("/projects/{project}/records"),
                &ann,
                json!({ "title": title, "text": text.join("\n"), "language": interview["language"] }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        records.push(record["id"].as_str().expect("id").to_owned());
    }
    for record in &records {
        app.wait_finished(&ann, record).await;
    }

    let (status, answer) = app
        .post(
            &format!("/insight/{}/chat/", records[0]),
            &ann,
            json!({ "message": "Who handles invoices, and how do we reach Franziska Hiller?",
                "search_settings": { "use_web": false, "search_scope": "transcript" } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let content = answer["content"].as_str().expect("content");
    assert!(!content.contains("PERSON_") && content.contains("someone"), "{content}");
    let (status, answer) = app
        .post(
            "/agent/chat",
            &ann,
            json!({ "message": "What do they say about billing? Ask Raju and Elliott Gray.", "project_id": project }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    billing_report(&app, &ann, &project).await;
    let _ = app.get(&format!("/insight/{}/persona-report", records[1]), &ann).await;

    let calls = model.calls();
    assert!(calls.len() >= 3, "{} model calls", calls.len());
    let sent: String = calls
        .iter()
        .flat_map(|c| c.body["messages"].as_array().cloned().unwrap_or_default())
        .map(|m| m["content"].as_str().unwrap_or_default().to_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    let reached = |value: &str| {
        let value = value.to_lowercase().replace('\n', " ");
        sent.match_indices(&value).any(|(at, _)| {
            let before = sent[..at].chars().next_back();
            let after = sent[at + value.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    };
    let mut leaked: Vec<&(String, String)> = Vec::new();
    let mut names = 0;
    for pair in &values {
        let (mark, value) = pair;
        if value.chars().count() < 3 {
            continue;
        }
        names += usize::from(mark.starts_with("PERSON"));
        if reached(value) {
            leaked.push(pair);
        }
    }
    // No speaker, no title's name, no value with a shape ever; other names as the
    // detector's benchmark says (docs/benchmarks.md), guarded against a collapse.
    let never: Vec<_> = leaked
        .iter()
        .filter(|(mark, _)| !mark.starts_with("PERSON") || mark == "PERSON.speaker" || mark == "PERSON.title")
        .collect();
    assert!(never.is_empty(), "reached the model: {never:?}");
    let people = leaked.iter().filter(|(mark, _)| mark.starts_with("PERSON")).count();
    assert!(
        people * 100 <= names * 15,
        "{people} of {names} names reached the model: {leaked:?}"
    );
    app.stop().await;
}
