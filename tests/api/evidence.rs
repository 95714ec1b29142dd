//! Evidence that holds: a model that writes real, invented, altered, misattributed,
//! mis-cited, block-quoted, stitched and unclosed quotes, and a citation of nothing; each
//! ends the same way in a report, a chat answer (JSON and the stream's last event), the
//! research assistant's answer and a persona.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::support::accounts::set_password;
use crate::support::models::stream_events;
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::records::{ANNA, REAL_QUOTE, interview};
use crate::support::reports::wait_generation;
use crate::support::{TestApp, eventually};

const REMOVED: &str = "[quote removed: not found in the transcript]";
const INVENTED: &str = "We would pay double if the export worked on Fridays.";

/// The model's Markdown: one paragraph per kind of quote, the kind first.
fn written() -> String {
    [
        format!("Real: \"{REAL_QUOTE}\" [Anna, #2]"),
        format!("Invented: \"{INVENTED}\" [Anna, #4]"),
        "Altered: \"The invoices arrive early and I have to chase finance every month.\" [Anna, #2]".to_owned(),
        "Misattributed: Anna asked \"How do you pay for the tool today?\" [Anna, #1]".to_owned(),
        "Mis-cited: \"the pricing page is confusing, I could not tell\" [Anna, #2]".to_owned(),
        "> Honestly the pricing page is confusing, I could not tell what the team plan costs. — Anna [Anna, #4]"
            .to_owned(),
        "> Finance never answers my emails about the late invoices at all. — Anna [Anna, #2]".to_owned(),
        "Ellipsis: \"Honestly the pricing page … what the team plan costs\" [Anna, #4]".to_owned(),
        "Stitched: \"The invoices arrive late … what the team plan costs\" [Anna, #2]".to_owned(),
        "Unclosed: \"The invoices never arrive at all and nobody cares [Anna, #2].".to_owned(),
        "Nothing cited: see also [Anna, #9].".to_owned(),
    ]
    .join("\n\n")
}

/// What a reader gets: each kind as the rules say. The citation of nothing is left in a
/// report (its links resolve nothing) and taken out of an answer, whose citations list
/// must match its text.
fn checked(answer: bool) -> String {
    [
        format!("Real: \"{REAL_QUOTE}\" [Anna, #2]"),
        format!("Invented: {REMOVED} [Anna, #4]"),
        format!("Altered: {REMOVED} [Anna, #2]"),
        format!("Misattributed: Anna asked {REMOVED} [Anna, #1]"),
        "Mis-cited: \"the pricing page is confusing, I could not tell\" [Anna, #4]".to_owned(),
        "> Honestly the pricing page is confusing, I could not tell what the team plan costs. — Anna [Anna, #4]"
            .to_owned(),
        format!("> {REMOVED} — Anna [Anna, #2]"),
        "Ellipsis: \"Honestly the pricing page … what the team plan costs\" [Anna, #4]".to_owned(),
        format!("Stitched: {REMOVED} [Anna, #2]"),
        format!("Unclosed: {REMOVED} [Anna, #2]."),
        if answer {
            "Nothing cited: see also.".to_owned()
        } else {
            "Nothing cited: see also [Anna, #9].".to_owned()
        },
    ]
    .join("\n\n")
}

/// The persona the model writes: real, mis-cited, the interviewer's, altered, invented,
/// and quotes joined by ellipses (within one utterance, and across two).
fn persona() -> Value {
    json!({
        "name": "Anna", "role": "finance lead", "summary": "Anna runs billing for her team.",
        "demographics": null, "goals": ["Get invoices on time"], "pains": ["Chasing finance"],
        "behaviors": ["Chases finance by hand"], "motivations": ["Less busywork"],
        "quotes": [
            { "text": REAL_QUOTE, "utterance_id": 2 },
            { "text": "the pricing page is confusing, I could not tell what the team plan costs", "utterance_id": 2 },
            { "text": "How do you pay for the tool today?", "utterance_id": 1 },
            { "text": "The invoices arrive early and I have to chase finance every month.", "utterance_id": 2 },
            { "text": INVENTED, "utterance_id": 4 },
            { "text": "Honestly the pricing page … what the team plan costs", "utterance_id": 4 },
            { "text": "The invoices arrive late … what the team plan costs", "utterance_id": 2 }
        ],
        "jobs_to_be_done": [], "ideal_solution": null
    })
}

#[tokio::test]
async fn every_kind_of_quote_ends_as_specified_in_reports_answers_and_personas() {
    let (addr, stub) = OpenAiStub::start().await;
    stub.respond(|call| {
        let reply = match call.schema_name() {
            Some("persona") => persona().to_string(),
            Some("findings") => json!({ "findings": [
                { "finding": "Invoices are late.", "quotes": [{ "text": REAL_QUOTE, "citation": "[Anna, #2]" }] },
                { "finding": "Invented.", "quotes": [{ "text": INVENTED, "citation": "[Anna, #2]" }] }
            ] })
            .to_string(),
            _ => written(),
        };
        Reply::text(&reply).usage(40, 20)
    });
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
    })
    .await;
    let user = app.user().await;
    let (project, record) = interview(&app, &user, ANNA).await;

    // A report holding the invented sentence: a chat answer must not keep it on the report's word.
    let report = app.report(&user, &project).await;
    let content = format!("## Pricing\n\nTeams would pay more: \"{INVENTED}\" [Anna, #4]");
    let (status, body) = app
        .put(
            &format!("/projects/{project}/reports/{report}"),
            &user,
            json!({ "status": "completed", "content": content, "records_ids": [record] }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Chat, JSON.
    let question =
        json!({ "message": "What do they say about invoices?", "search_settings": { "search_scope": "report" } });
    let (status, answer) = app
        .post(&format!("/insight/{record}/chat/"), &user, question.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["content"], json!(checked(true)));
    let ids: Vec<i64> = answer["citations"]
        .as_array()
        .expect("citations")
        .iter()
        .map(|c| c["utterance_id"].as_i64().expect("utterance id"))
        .collect();
    assert_eq!(
        ids,
        [2, 4, 1],
        "every citation of the text, once, in order, and no other"
    );
    assert_eq!(answer["citations"][0]["quote"], json!(REAL_QUOTE));

    // Chat, the stream's last event, and the thread as stored.
    let events = stream_events(&app, &user, &record, question).await;
    let (name, done, _) = events.last().expect("events");
    assert_eq!(name, "done");
    assert_eq!(done["content"], json!(checked(true)));
    assert_eq!(done["citations"], answer["citations"]);

    // The research assistant, across the project.
    let (status, assistant) = app
        .post(
            "/agent/chat",
            &user,
            json!({ "message": "What do they say about invoices?", "project_id": project }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{assistant}");
    assert_eq!(assistant["content"], json!(checked(true)));
    let cited: Vec<(Value, Value)> = assistant["citations"]
        .as_array()
        .expect("citations")
        .iter()
        .map(|c| (c["record_id"].clone(), c["utterance_id"].clone()))
        .collect();
    assert_eq!(
        cited,
        [
            (json!(record), json!(2)),
            (json!(record), json!(4)),
            (json!(record), json!(1))
        ]
    );

    // A report written by the model.
    let (_, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({ "title": "Evidence", "text": "What do customers say about invoices?" }),
        )
        .await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Invoices", "prompts_ids": [prompt["id"]], "report_language": "en", "reasoning_mode": "fast" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let generation = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(generation["status"], "completed", "{generation}");
    let (_, report) = app.get(&path, &user).await;
    let content = report["content"].as_str().expect("content");
    assert!(
        content.contains(&format!("## Evidence\n\n{}", checked(false))),
        "the report:\n{content}"
    );

    // The persona.
    let persona = written_persona(&app, &user, &record).await;
    assert_eq!(
        persona["persona"]["quotes"],
        json!([
            { "text": REAL_QUOTE, "utterance_id": 2 },
            { "text": "the pricing page is confusing, I could not tell what the team plan costs", "utterance_id": 4 },
            { "text": "Honestly the pricing page … what the team plan costs", "utterance_id": 4 }
        ]),
        "real quotes kept (the mis-cited one cited right); the interviewer's, altered, invented and stitched dropped"
    );
    app.stop().await;
}

/// Polls a record's persona until it is written.
async fn written_persona(app: &TestApp, user: &crate::support::TestUser, record: &str) -> Value {
    let path = format!("/insight/{record}/persona-report");
    eventually(Duration::from_secs(20), "the persona was never written", async || {
        let (status, body) = app.get(&path, user).await;
        if status == StatusCode::OK {
            return Ok(body);
        }
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        Err("")
    })
    .await
}

/// Asserts the parts of a model's provenance every output shares.
fn assert_model_provenance(provenance: &Value, record: &Value, version: &Value) {
    assert_eq!(provenance["engine"], "openai", "{provenance}");
    assert_eq!(provenance["model"], "stub-model");
    let prompt_version = provenance["prompt_version"].as_str().expect("prompt version");
    assert_eq!(prompt_version.len(), 12);
    assert!(prompt_version.bytes().all(|b| b.is_ascii_hexdigit()));
    let prompts = provenance["prompts"].as_array().expect("prompts");
    assert!(!prompts.is_empty());
    for prompt in prompts {
        let user = prompt["user"].as_str().expect("user");
        assert!(!prompt["system"].as_str().expect("system").is_empty());
        assert!(
            user.contains("<transcripts>…</transcripts>"),
            "the material is left out: {user}"
        );
        assert!(
            !user.contains("chase finance"),
            "no transcript text in the template: {user}"
        );
    }
    assert_eq!(provenance["records"], json!([{ "id": record, "version": version }]));
    assert!(provenance["duration_ms"].is_u64());
}

#[tokio::test]
async fn reports_answers_and_personas_keep_what_wrote_them_and_a_report_its_versions() {
    let (addr, stub) = OpenAiStub::start().await;
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    stub.respond(move |call| {
        let reply = match call.schema_name() {
            Some("persona") => persona().to_string(),
            Some("findings") => json!({ "findings": [
                { "finding": "Invoices are late.", "quotes": [{ "text": REAL_QUOTE, "citation": "[Anna, #2]" }] }
            ] })
            .to_string(),
            _ if call.body.to_string().contains("report section") => {
                let run = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                format!("Run {run}: invoices are late.\n\n\"{REAL_QUOTE}\" [Anna, #2]")
            }
            _ => format!("\"{REAL_QUOTE}\" [Anna, #2]"),
        };
        Reply::text(&reply).usage(40, 20)
    });
    let app = TestApp::start_with(|settings| {
        settings.model.llm_base_url = Some(format!("http://{addr}/v1"));
        settings.model.llm_model = "stub-model".into();
        settings.model.llm_prices = insight::domain::usage::Prices::parse("stub-model=1000/2000").expect("prices");
    })
    .await;
    let user = app.user().await;
    let (project, record) = interview(&app, &user, ANNA).await;
    let (_, detail) = app.get(&format!("/insight/{record}/"), &user).await;
    let version = detail["updated_at"].clone();
    let record_id = json!(record);

    // A report, generated and then regenerated.
    let (_, prompt) = app
        .post(
            "/prompts/",
            &user,
            json!({ "title": "Billing", "text": "What do customers say about invoices?" }),
        )
        .await;
    let (status, report) = app
        .post(
            &format!("/projects/{project}/reports"),
            &user,
            json!({ "title": "Invoices", "prompts_ids": [prompt["id"]], "report_language": "en" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{report}");
    let path = format!("/projects/{project}/reports/{}", report["id"].as_str().expect("id"));
    let first = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(first["status"], "completed", "{first}");
    let provenance = &first["provenance"];
    assert_model_provenance(provenance, &record_id, &version);
    let (prompt_tokens, completion_tokens) = (
        provenance["usage"]["prompt_tokens"].as_i64().expect("tokens"),
        provenance["usage"]["completion_tokens"].as_i64().expect("tokens"),
    );
    assert!(prompt_tokens >= 40 && prompt_tokens % 40 == 0, "{provenance}");
    assert_eq!(completion_tokens * 2, prompt_tokens, "{provenance}");
    assert_eq!(first["usage"], provenance["usage"]);
    let cost = (prompt_tokens as f64 * 1000.0 + completion_tokens as f64 * 2000.0) / 1e6;
    assert!(
        (provenance["cost"].as_f64().expect("cost") - cost).abs() < 1e-9,
        "{provenance}"
    );
    let sections = provenance["sections"].as_array().expect("sections");
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0]["title"], "Billing");
    assert_eq!(sections[0]["usage"], provenance["usage"]);

    let (status, _) = app.post(&format!("{path}/regenerate"), &user, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let second = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    assert_eq!(second["status"], "completed", "{second}");
    assert_eq!(
        second["provenance"]["prompt_version"], provenance["prompt_version"],
        "asked the same way"
    );
    let (status, versions) = app.get(&format!("{path}/versions"), &user).await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    let versions = versions.as_array().expect("versions");
    assert_eq!(versions.len(), 2);
    assert_eq!(
        (versions[0]["version"].clone(), versions[1]["version"].clone()),
        (json!(2), json!(1))
    );
    assert!(
        versions[0]["content"]
            .as_str()
            .expect("content")
            .contains("Run 2: invoices are late.")
    );
    assert!(
        versions[1]["content"]
            .as_str()
            .expect("content")
            .contains("Run 1: invoices are late.")
    );
    let changes = versions[0]["changes"].as_str().expect("changes");
    assert!(
        changes.contains("-Run 1: invoices are late.") && changes.contains("+Run 2: invoices are late."),
        "{changes}"
    );
    assert!(versions[1]["changes"].is_null());
    assert_eq!(versions[0]["provenance"], second["provenance"]);
    let stranger = app.user().await;
    let (status, _) = app.get(&format!("{path}/versions"), &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A chat answer, as answered and in the thread's history.
    let (status, answer) = app
        .post(
            &format!("/insight/{record}/chat/"),
            &user,
            json!({ "message": "Invoices?" }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_model_provenance(&answer["provenance"], &record_id, &version);
    assert_eq!(
        answer["provenance"]["usage"],
        json!({ "prompt_tokens": 40, "completion_tokens": 20 })
    );
    let (_, history) = app
        .get(
            &format!("/insight/{record}/chat/?thread_id={}", answer["thread_id"]),
            &user,
        )
        .await;
    let messages = history["messages"].as_array().expect("messages").clone();
    assert!(messages[0].get("provenance").is_none(), "a question has none");
    assert_eq!(messages[1]["provenance"], answer["provenance"]);

    // The persona.
    let persona = written_persona(&app, &user, &record).await;
    assert_model_provenance(&persona["provenance"], &record_id, &version);

    // The console: under the report, what wrote it; its versions, compared.
    use crate::support::accounts::PASSWORD;
    use crate::support::browser::{in_chromium, look, sign_in, until};
    set_password(&app, &user, PASSWORD).await;
    let report_id = path.rsplit('/').next().expect("id").to_owned();
    in_chromium("the provenance pages", async |browser| {
        sign_in(browser, &app, &user.email).await;
        browser.go(&app.url(&format!("/p/{project}/reports/{report_id}"))).await;
        let said = until(
            browser,
            "the report's provenance",
            "const d = document.querySelector('#provenance'); if (!d) return null; d.open = true; \
             d.querySelectorAll('details').forEach((p) => p.open = true); return d.textContent",
        )
        .await;
        let said = said.as_str().unwrap_or_default();
        assert!(
            said.contains("the model stub-model") && said.contains("Billing"),
            "{said}"
        );
        assert!(said.contains("<transcripts>…</transcripts>"), "{said}");
        look(browser, "report-provenance").await;
        browser
            .go(&app.url(&format!("/p/{project}/reports/{report_id}/versions")))
            .await;
        let added = until(
            browser,
            "the changes",
            "return document.querySelector('#version-2 pre.diff .add')?.textContent || null",
        )
        .await;
        assert!(added.as_str().unwrap_or_default().contains("Run 2"), "{added}");
        let removed = browser
            .script("return document.querySelector('#version-2 pre.diff .del')?.textContent")
            .await;
        assert!(removed.as_str().unwrap_or_default().contains("Run 1"), "{removed}");
        look(browser, "report-versions").await;
        browser.go(&app.url(&format!("/r/{record}/persona"))).await;
        until(
            browser,
            "the persona's provenance",
            "return document.querySelector('#provenance')?.textContent.includes('stub-model') || null",
        )
        .await;
    })
    .await
    .then(app.stop())
    .await;
}

#[tokio::test]
async fn the_offline_engine_says_so_and_costs_nothing() {
    let app = TestApp::start().await;
    let user = app.user().await;
    let (project, record) = interview(&app, &user, ANNA).await;
    let report = app.report(&user, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    let generation = wait_generation(&app, &user, &path, &["completed", "failed"]).await;
    let provenance = &generation["provenance"];
    assert_eq!(provenance["engine"], "offline", "{generation}");
    assert!(provenance["model"].is_null());
    assert!(
        provenance["prompt_version"]
            .as_str()
            .expect("version")
            .starts_with("offline-")
    );
    assert_eq!(provenance["cost"], json!(0.0));
    assert_eq!(provenance["prompts"], json!([]));
    assert_eq!(provenance["records"][0]["id"], json!(record));
    let persona = written_persona(&app, &user, &record).await;
    assert_eq!(persona["provenance"]["engine"], "offline");
    app.stop().await;
}
