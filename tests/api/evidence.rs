//! Evidence that holds: a model that writes real, invented, altered, misattributed,
//! mis-cited, block-quoted, stitched and unclosed quotes, and a citation of nothing; each
//! ends the same way in a report, a chat answer (JSON and the stream's last event), the
//! research assistant's answer and a persona.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::chat::{REAL_QUOTE, interview, stream_events};
use crate::generation::{ANNA, wait_generation};
use crate::openai_stub::{OpenAiStub, Reply};
use crate::support::TestApp;

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
    let persona_path = format!("/insight/{record}/persona-report");
    let deadline = Instant::now() + Duration::from_secs(20);
    let persona = loop {
        let (status, body) = app.get(&persona_path, &user).await;
        if status == StatusCode::OK {
            break body;
        }
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert!(Instant::now() < deadline, "the persona was never written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
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
