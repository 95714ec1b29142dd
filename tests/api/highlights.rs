//! Highlights and insights over the JSON API: a span quoted exactly (offsets in
//! characters, spaces at the edges left out), tagged and counted, following corrections of
//! the transcript or detached when its words are gone, listed per record, project and tag
//! with filters; insights citing them; another workspace sees none of it.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::models::model_app;
use crate::support::openai_stub::{OpenAiStub, Reply};
use crate::support::records::finished_record;
use crate::support::reports::wait_generation;
use crate::support::{TestApp, TestUser, assert_unknown_references, error_types, eventually};

const TEXT: &str = "Interviewer: How do you send invoices?\n\
                    Anna: We email them from the finance tool.\n\
                    Interviewer: And then?\n\
                    Anna: Ça coûte trop cher. The export is slow\n\
                    Bob: It fails every month.";

fn span(from: (i64, i64), to: (i64, i64)) -> Value {
    json!({ "start": { "utterance_id": from.0, "offset": from.1 }, "end": { "utterance_id": to.0, "offset": to.1 } })
}

async fn highlight(
    app: &TestApp,
    user: &TestUser,
    record: &str,
    mut body: Value,
    tags: &[&Value],
) -> (StatusCode, Value) {
    body["tag_ids"] = json!(tags);
    app.post(&format!("/insight/{record}/highlights"), user, body).await
}

async fn patch(app: &TestApp, user: &TestUser, path: &str, body: Value) -> (StatusCode, Value) {
    app.call(Method::PATCH, path, Some(&user.token), Some(body)).await
}

async fn correct(app: &TestApp, user: &TestUser, record: &str, utterance: i64, text: &str) {
    let (status, body) = patch(
        app,
        user,
        &format!("/insight/{record}/utterances/{utterance}"),
        json!({ "text": text }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

fn quotes(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|h| h["quote"].as_str().expect("quote"))
        .collect()
}

async fn get(app: &TestApp, user: &TestUser, path: &str) -> Value {
    let (status, body) = app.get(path, user).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

#[tokio::test]
async fn a_highlight_quotes_its_span_follows_corrections_and_detaches_when_its_words_go() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    let project = app.project(&ann, "Invoices").await;
    let record = finished_record(&app, &ann, &project, "Anna", TEXT).await;
    let (_, pricing) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Pricing" }),
        )
        .await;
    let (_, tooling) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Tooling" }),
        )
        .await;

    // "the finance tool" with a space on each side; offsets count characters.
    let (status, tool) = highlight(&app, &ann, &record, span((2, 18), (2, 35)), &[&tooling["id"]]).await;
    assert_eq!(status, StatusCode::CREATED, "{tool}");
    assert_eq!(tool["quote"], json!("the finance tool"));
    assert_eq!(tool["start"], json!({ "utterance_id": 2, "offset": 19 }));
    assert_eq!(tool["end"], json!({ "utterance_id": 2, "offset": 35 }));
    assert_eq!(tool["speaker"], json!("Anna"));
    assert_eq!(tool["is_respondent"], json!(true));
    assert_eq!(tool["status"], json!("ok"));
    assert_eq!(tool["record_name"], json!("Anna"));
    assert_eq!(tool["project_id"], json!(project));
    assert_eq!(tool["author_email"], json!(ann.email));
    assert_eq!(tool["tags"][0]["name"], json!("Tooling"));
    // Accented characters count once each.
    let (status, price) = highlight(&app, &ann, &record, span((4, 0), (4, 20)), &[&pricing["id"]]).await;
    assert_eq!(status, StatusCode::CREATED, "{price}");
    assert_eq!(price["quote"], json!("Ça coûte trop cher."));
    // Across utterances: from "The export" to "fails", joined by a line break.
    let (status, export) = highlight(
        &app,
        &ann,
        &record,
        span((4, 20), (5, 8)),
        &[&tooling["id"], &pricing["id"]],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{export}");
    assert_eq!(export["quote"], json!("The export is slow\nIt fails"));
    assert_eq!(export["tags"].as_array().map(Vec::len), Some(2));

    // Spans that do not fit the transcript, and tags that are not the workspace's.
    let (status, body) = highlight(&app, &ann, &record, span((2, 10), (2, 4)), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "end before start: {body}");
    let (status, body) = highlight(&app, &ann, &record, span((2, 0), (2, 500)), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "past the end: {body}");
    let (status, body) = highlight(&app, &ann, &record, span((2, 0), (9, 1)), &[]).await;
    assert_unknown_references(status, &body, &["end.utterance_id"]);
    let (status, body) = highlight(&app, &ann, &record, span((2, 2), (2, 3)), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "only a space: {body}");
    let stranger = app.user().await;
    let (_, foreign) = app
        .post(
            &format!("/workspaces/{}/tags", stranger.id),
            &stranger,
            json!({ "name": "Pricing" }),
        )
        .await;
    let (status, body) = highlight(&app, &ann, &record, span((2, 0), (2, 5)), &[&foreign["id"]]).await;
    assert_unknown_references(status, &body, &["tag_ids[0]"]);
    let (status, body) = highlight(&app, &ann, &record, json!({ "start": { "utterance_id": 2 } }), &[]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["missing", "missing"]);

    // Counts, and the record's list in transcript order.
    let (_, tags) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    let count = |name: &str| {
        tags.as_array()
            .and_then(|tags| tags.iter().find(|t| t["name"] == name))
            .map(|t| t["highlights_count"].clone())
    };
    assert_eq!(count("Pricing"), Some(json!(2)));
    assert_eq!(count("Tooling"), Some(json!(2)));
    let listed = get(&app, &ann, &format!("/insight/{record}/highlights")).await;
    assert_eq!(
        quotes(&listed),
        [
            "the finance tool",
            "Ça coûte trop cher.",
            "The export is slow\nIt fails"
        ]
    );

    // An edit of another utterance changes nothing; one before the words moves them.
    correct(&app, &ann, &record, 3, "And what happens then?").await;
    correct(&app, &ann, &record, 2, "Honestly, we email them from the finance tool.").await;
    let moved = get(&app, &ann, &format!("/highlights/{}", tool["id"].as_str().expect("id"))).await;
    assert_eq!(moved["status"], json!("ok"));
    assert_eq!(moved["start"], json!({ "utterance_id": 2, "offset": 29 }));
    assert_eq!(moved["quote"], json!("the finance tool"));
    // An edit under the words that keeps them finds them again.
    correct(
        &app,
        &ann,
        &record,
        2,
        "Honestly, we email them, from the finance tool!",
    )
    .await;
    let moved = get(&app, &ann, &format!("/highlights/{}", tool["id"].as_str().expect("id"))).await;
    assert_eq!(moved["status"], json!("ok"));
    assert_eq!(moved["start"], json!({ "utterance_id": 2, "offset": 30 }));
    // One that takes them away detaches the highlight, which keeps its quote.
    correct(
        &app,
        &ann,
        &record,
        2,
        "Honestly, we email them from the accounting app!",
    )
    .await;
    let detached = get(&app, &ann, &format!("/highlights/{}", tool["id"].as_str().expect("id"))).await;
    assert_eq!(detached["status"], json!("detached"));
    assert_eq!(detached["quote"], json!("the finance tool"));
    // The highlight across utterances: its second part must still begin the next one.
    correct(&app, &ann, &record, 5, "Well, it fails every month.").await;
    let export_now = get(
        &app,
        &ann,
        &format!("/highlights/{}", export["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(export_now["status"], json!("detached"), "{export_now}");
    let untouched = get(
        &app,
        &ann,
        &format!("/highlights/{}", price["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(untouched["status"], json!("ok"));
    assert_eq!(untouched["quote"], json!("Ça coûte trop cher."));

    // A detached highlight cannot be accepted as it is; placed again it is whole.
    let tool_path = format!("/highlights/{}", tool["id"].as_str().expect("id"));
    let (status, body) = patch(&app, &ann, &tool_path, json!({ "status": "ok" })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, placed) = patch(&app, &ann, &tool_path, span((2, 33), (2, 47))).await;
    assert_eq!(status, StatusCode::OK, "{placed}");
    assert_eq!(placed["status"], json!("ok"));
    assert_eq!(placed["quote"], json!("accounting app"));
    let (status, noted) = patch(
        &app,
        &ann,
        &tool_path,
        json!({ "note": "  Their own tool  ", "tag_ids": [pricing["id"]] }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{noted}");
    assert_eq!(noted["note"], json!("Their own tool"));
    assert_eq!(noted["tags"][0]["name"], json!("Pricing"));
    let (status, body) = patch(&app, &ann, &tool_path, json!({ "status": "detached" })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // Merging a tag files its highlights under the other; a deleted tag leaves them.
    let (status, merged) = app
        .post(
            &format!("/tags/{}/merge", tooling["id"].as_str().expect("id")),
            &ann,
            json!({ "into_tag_id": pricing["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert_eq!(merged["highlights_count"], json!(3));
    let export_now = get(
        &app,
        &ann,
        &format!("/highlights/{}", export["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(export_now["tags"].as_array().map(Vec::len), Some(1), "{export_now}");

    // A stranger sees none of it.
    let (status, _) = app.get(&tool_path, &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get(&format!("/insight/{record}/highlights"), &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = patch(&app, &stranger, &tool_path, json!({ "note": "mine" })).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Deleting it takes it away.
    let (status, _) = app.delete(&tool_path, &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&tool_path, &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_project_lists_its_highlights_by_tag_speaker_status_and_date_and_insights_cite_them() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    let project = app.project(&ann, "Billing").await;
    let first = finished_record(&app, &ann, &project, "Anna", TEXT).await;
    let second = finished_record(
        &app,
        &ann,
        &project,
        "Carl",
        "Interviewer: Anything else?\nCarl: The invoices arrive late.",
    )
    .await;
    let (_, pricing) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Pricing" }),
        )
        .await;
    let (_, a) = highlight(&app, &ann, &first, span((4, 0), (4, 20)), &[&pricing["id"]]).await;
    let (_, b) = highlight(&app, &ann, &first, span((5, 0), (5, 8)), &[]).await;
    let (_, c) = highlight(&app, &ann, &second, span((2, 0), (2, 12)), &[&pricing["id"]]).await;

    let list = |query: &str| format!("/projects/{project}/highlights{query}");
    let all = get(&app, &ann, &list("")).await;
    assert_eq!(
        quotes(&all),
        ["The invoices", "It fails", "Ça coûte trop cher."],
        "newest first"
    );
    let tagged = get(
        &app,
        &ann,
        &list(&format!("?tag_id={}", pricing["id"].as_str().expect("id"))),
    )
    .await;
    assert_eq!(quotes(&tagged), ["The invoices", "Ça coûte trop cher."]);
    let bob = get(&app, &ann, &list("?speaker=Bob")).await;
    assert_eq!(quotes(&bob), ["It fails"]);
    let carl = get(&app, &ann, &list("?respondent=Carl")).await;
    assert_eq!(quotes(&carl), ["The invoices"]);
    let nobody = get(&app, &ann, &list("?respondent=Interviewer")).await;
    assert_eq!(quotes(&nobody), Vec::<&str>::new());
    let future = get(&app, &ann, &list("?from=2999-01-01")).await;
    assert_eq!(quotes(&future), Vec::<&str>::new());
    let past = get(&app, &ann, &list("?to=2999-01-01T00:00:00Z&status=ok")).await;
    assert_eq!(past.as_array().map(Vec::len), Some(3));
    let (status, body) = app.get(&list("?status=maybe&from=yesterday&tag_id=x"), &ann).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["uuid_parsing", "enum", "datetime_parsing"]);
    // A page at a time.
    let page = app
        .client
        .get(app.url(&list("?limit=2")))
        .bearer_auth(&ann.token)
        .send()
        .await
        .expect("sent");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers().get("link").is_some(), "a next page");
    // Per tag, across the workspace.
    let by_tag = get(
        &app,
        &ann,
        &format!("/tags/{}/highlights", pricing["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(quotes(&by_tag), ["The invoices", "Ça coûte trop cher."]);

    // An insight cites highlights of its project, in the order given.
    let (status, insight) = app
        .post(
            &format!("/projects/{project}/insights"),
            &ann,
            json!({ "title": " Billing hurts ", "body": "Two of **two** said so.", "highlight_ids": [c["id"], a["id"], c["id"]] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{insight}");
    assert_eq!(insight["title"], json!("Billing hurts"));
    assert_eq!(quotes(&insight["highlights"]), ["The invoices", "Ça coûte trop cher."]);
    let cited = get(&app, &ann, &format!("/highlights/{}", a["id"].as_str().expect("id"))).await;
    assert_eq!(cited["insights"][0]["title"], json!("Billing hurts"));
    let other = app.project(&ann, "Elsewhere").await;
    let (status, body) = app
        .post(
            &format!("/projects/{other}/insights"),
            &ann,
            json!({ "title": "Borrowed", "highlight_ids": [b["id"]] }),
        )
        .await;
    assert_unknown_references(status, &body, &["highlight_ids[0]"]);
    let (status, body) = app
        .post(&format!("/projects/{project}/insights"), &ann, json!({ "title": "  " }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let insight_path = format!("/insights/{}", insight["id"].as_str().expect("id"));
    let (status, changed) = patch(&app, &ann, &insight_path, json!({ "highlight_ids": [b["id"]] })).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(quotes(&changed["highlights"]), ["It fails"]);
    assert_eq!(changed["body"], json!("Two of **two** said so."));
    let listed = get(&app, &ann, &format!("/projects/{project}/insights")).await;
    assert_eq!(listed[0]["id"], insight["id"]);
    // Deleting a highlight takes it out of the evidence; deleting the insight leaves the highlights.
    let (status, _) = app
        .delete(&format!("/highlights/{}", b["id"].as_str().expect("id")), &ann)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let changed = get(&app, &ann, &insight_path).await;
    assert_eq!(quotes(&changed["highlights"]), Vec::<&str>::new());
    let stranger = app.user().await;
    let (status, _) = app.get(&insight_path, &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.delete(&insight_path, &ann).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let still = get(&app, &ann, &format!("/highlights/{}", a["id"].as_str().expect("id"))).await;
    assert_eq!(still["insights"], json!([]));
}

/// Waits until the record has no suggestion job pending (failing after 30 s with `failure`).
async fn suggestions_done(app: &TestApp, record_id: uuid::Uuid, failure: &str) {
    eventually(Duration::from_secs(30), failure, async || {
        let pending = app.store.suggestions_pending(record_id).await.expect("pending");
        if pending { Err("") } else { Ok(()) }
    })
    .await;
}

/// Polls the record's highlights until `count` are suggested (failing after 30 s).
async fn suggested(app: &TestApp, user: &TestUser, record: &str, count: usize) -> Vec<Value> {
    eventually(Duration::from_secs(30), "no suggestions came", async || {
        let listed = get(app, user, &format!("/insight/{record}/highlights")).await;
        let found: Vec<Value> = listed
            .as_array()
            .expect("a list")
            .iter()
            .filter(|h| h["status"] == "suggested")
            .cloned()
            .collect();
        if found.len() >= count { Ok(found) } else { Err(listed) }
    })
    .await
}

const CALL: &str = "Interviewer: How is billing going?\n\
                    Dana: We started last spring. The price went up twice this year! Support answers fast.\n\
                    Interviewer: And the export?\n\
                    Dana: Exporting to Excel breaks the layout every time.";

#[tokio::test]
async fn suggestions_wait_for_a_person_who_accepts_or_rejects_each_and_rejected_ones_stay_away() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    let project = app.project(&ann, "Billing").await;
    let record = finished_record(&app, &ann, &project, "Dana", CALL).await;
    let suggest = format!("/insight/{record}/highlights/suggest");
    let (status, body) = app.post(&suggest, &ann, json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "no tags yet: {body}");
    let (_, pricing) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Pricing", "description": "What they pay and how it changes" }),
        )
        .await;
    let (_, export) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Export", "description": "Getting data out to spreadsheets" }),
        )
        .await;
    let (status, body) = app
        .post(&suggest, &ann, json!({ "tag_ids": [uuid::Uuid::new_v4()] }))
        .await;
    assert_unknown_references(status, &body, &["tag_ids[0]"]);

    let (status, queued) = app.post(&suggest, &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert_eq!(queued["status"], json!("queued"));
    let found = suggested(&app, &ann, &record, 2).await;
    let by_tag = |tag: &Value| {
        found
            .iter()
            .find(|h| h["tags"][0]["id"] == tag["id"])
            .cloned()
            .unwrap_or_else(|| panic!("a suggestion for {tag}: {found:?}"))
    };
    let price = by_tag(&pricing);
    assert_eq!(price["quote"], json!("The price went up twice this year!"));
    assert_eq!(price["author_email"], json!(ann.email));
    let excel = by_tag(&export);
    assert_eq!(
        excel["quote"],
        json!("Exporting to Excel breaks the layout every time.")
    );
    // Suggestions are not evidence yet: not counted, not citable.
    let (_, tags) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    assert!(
        tags.as_array()
            .expect("tags")
            .iter()
            .all(|t| t["highlights_count"] == 0),
        "{tags}"
    );
    let (status, body) = app
        .post(
            &format!("/projects/{project}/insights"),
            &ann,
            json!({ "title": "Too early", "highlight_ids": [price["id"]] }),
        )
        .await;
    assert_unknown_references(status, &body, &["highlight_ids[0]"]);
    let only = get(&app, &ann, &format!("/projects/{project}/highlights?status=suggested")).await;
    assert_eq!(only.as_array().map(Vec::len), Some(2));

    // Accept one, reject the other.
    let (status, accepted) = patch(
        &app,
        &ann,
        &format!("/highlights/{}", price["id"].as_str().expect("id")),
        json!({ "status": "ok" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{accepted}");
    assert_eq!(accepted["status"], json!("ok"));
    let (status, _) = app
        .delete(&format!("/highlights/{}", excel["id"].as_str().expect("id")), &ann)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app
        .get(&format!("/highlights/{}", excel["id"].as_str().expect("id")), &ann)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a rejected suggestion is gone");
    let (_, tags) = app.get(&format!("/workspaces/{workspace}/tags"), &ann).await;
    let pricing_now = tags
        .as_array()
        .and_then(|tags| tags.iter().find(|t| t["id"] == pricing["id"]))
        .cloned()
        .expect("pricing");
    assert_eq!(pricing_now["highlights_count"], json!(1));

    // Asked again, neither comes back: one is a highlight, the other was rejected.
    let (status, _) = app.post(&suggest, &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let record_id = uuid::Uuid::parse_str(&record).expect("uuid");
    suggestions_done(&app, record_id, "the second request did not finish").await;
    let listed = get(&app, &ann, &format!("/insight/{record}/highlights")).await;
    assert_eq!(quotes(&listed), ["The price went up twice this year!"], "{listed}");
}

#[tokio::test]
async fn a_model_s_suggestions_are_kept_only_where_their_quotes_are_verbatim_in_the_transcript() {
    let (addr, model) = OpenAiStub::start().await;
    model.respond(|call| {
        if call.schema_name() == Some("suggestions") {
            let answer = json!({ "suggestions": [
                { "tag": "pricing", "utterance_id": 2, "quote": "The price went up twice this year!" },
                // Invented: not in the transcript.
                { "tag": "Pricing", "utterance_id": 2, "quote": "The price doubled overnight." },
                // The interviewer's words are no evidence.
                { "tag": "Export", "utterance_id": 3, "quote": "And the export?" },
                { "tag": "Roadmap", "utterance_id": 4, "quote": "Exporting to Excel" }
            ]});
            Reply::text(&answer.to_string())
        } else {
            Reply::status(503)
        }
    });
    let app = model_app(addr).await;
    let ann = app.user().await;
    let workspace = ann.id.to_string();
    let project = app.project(&ann, "Billing").await;
    let record = finished_record(&app, &ann, &project, "Dana", CALL).await;
    for name in ["Pricing", "Export"] {
        let (status, _) = app
            .post(&format!("/workspaces/{workspace}/tags"), &ann, json!({ "name": name }))
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, _) = app
        .post(&format!("/insight/{record}/highlights/suggest"), &ann, json!({}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let record_id = uuid::Uuid::parse_str(&record).expect("uuid");
    suggestions_done(&app, record_id, "the suggestions did not finish").await;
    let found = suggested(&app, &ann, &record, 1).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["quote"], json!("The price went up twice this year!"));
    assert_eq!(found[0]["start"], json!({ "utterance_id": 2, "offset": 24 }));
    assert_eq!(found[0]["tags"][0]["name"], json!("Pricing"));
    let provenance = &found[0]["provenance"];
    assert_eq!(
        (provenance["engine"].clone(), provenance["model"].clone()),
        (json!("openai"), json!("stub-model")),
        "what suggested it: {provenance}"
    );
    assert_eq!(provenance["records"][0]["id"], json!(record));
    assert!(!provenance["prompts"].as_array().expect("prompts").is_empty());
    let asked = model
        .calls()
        .into_iter()
        .find(|call| call.schema_name() == Some("suggestions"))
        .expect("the model was asked");
    assert!(
        format!("{:?}", asked.body).contains("Exporting to Excel"),
        "the transcript went to the model"
    );
}

#[tokio::test]
async fn a_report_includes_insights_with_their_evidence_as_they_are_at_each_generation() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&ann, "Billing").await;
    let record = finished_record(&app, &ann, &project, "Anna", TEXT).await;
    let (status, evidence) = highlight(&app, &ann, &record, span((4, 0), (4, 20)), &[]).await;
    assert_eq!(status, StatusCode::CREATED, "{evidence}");
    let (status, insight) = app
        .post(
            &format!("/projects/{project}/insights"),
            &ann,
            json!({ "title": "Price hurts", "body": "# Why\nThe **price** is the first complaint.", "highlight_ids": [evidence["id"]] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{insight}");
    let insight_id = insight["id"].as_str().expect("id").to_owned();

    let report = app.report(&ann, &project).await;
    let path = format!("/projects/{project}/reports/{report}");
    let included = format!("{path}/insights/{insight_id}");
    // Included while it is being generated: it shows once the generation completes.
    let (status, queued) = app.call(Method::PUT, &included, Some(&ann.token), None).await;
    assert_eq!(status, StatusCode::OK, "{queued}");
    wait_generation(&app, &ann, &path, &["completed"]).await;
    let content = get(&app, &ann, &path).await["content"]
        .as_str()
        .expect("content")
        .to_owned();
    let title_line = content.lines().next().expect("a title");
    assert_eq!(title_line, "# Onboarding findings", "{content}");
    let section = content
        .split("\n## Insights\n")
        .nth(1)
        .unwrap_or_else(|| panic!("an insights section under the title: {queued}\n{content}"));
    assert!(section.starts_with("\n### Price hurts\n"), "{content}");
    // The body's own heading sits under the insight's title.
    assert!(
        section.contains("\n#### Why\nThe **price** is the first complaint.\n"),
        "{content}"
    );
    assert!(
        section.contains("> \"Ça coûte trop cher.\" — Anna [Anna, #4]"),
        "its evidence is quoted with its citation: {content}"
    );
    assert!(
        content.find("## Insights") < content.find("\n## Executive summary"),
        "{content}"
    );
    let listed = get(&app, &ann, &format!("{path}/insights")).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], json!(insight_id));

    // Including it again changes nothing; a changed insight shows at the next generation.
    let (status, again) = app.call(Method::PUT, &included, Some(&ann.token), None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        again["content"].as_str().map(|c| c.matches("### Price hurts").count()),
        Some(1)
    );
    let (status, _) = patch(
        &app,
        &ann,
        &format!("/insights/{insight_id}"),
        json!({ "title": "Price hurts most" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app.post(&format!("{path}/regenerate"), &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    wait_generation(&app, &ann, &path, &["completed"]).await;
    let content = get(&app, &ann, &path).await["content"]
        .as_str()
        .expect("content")
        .to_owned();
    assert!(content.contains("### Price hurts most\n"), "{content}");
    assert_eq!(content.matches("## Insights").count(), 1, "{content}");

    // Taken out, the section goes and the rest stays.
    let (status, taken) = app.call(Method::DELETE, &included, Some(&ann.token), None).await;
    assert_eq!(status, StatusCode::OK, "{taken}");
    let content = taken["content"].as_str().expect("content");
    assert!(
        !content.contains("## Insights") && !content.contains("Price hurts"),
        "{content}"
    );
    assert!(
        content.starts_with("# Onboarding findings\n\n## Executive summary"),
        "{content}"
    );
    let (status, again) = app.call(Method::DELETE, &included, Some(&ann.token), None).await;
    assert_eq!(
        (status, &again),
        (StatusCode::OK, &taken),
        "taking it out again changes nothing"
    );

    // An insight of another project, or a stranger, finds nothing.
    let other = app.project(&ann, "Other").await;
    let (_, foreign) = app
        .post(
            &format!("/projects/{other}/insights"),
            &ann,
            json!({ "title": "Elsewhere" }),
        )
        .await;
    let foreign = format!("{path}/insights/{}", foreign["id"].as_str().expect("id"));
    let (status, _) = app.call(Method::PUT, &foreign, Some(&ann.token), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.call(Method::PUT, &included, Some(&stranger.token), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get(&format!("{path}/insights"), &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn untagged_highlights_are_grouped_into_proposed_themes_that_a_person_accepts_or_rejects() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let stranger = app.user().await;
    let project = app.project(&ann, "Dispatch").await;
    let said = [
        "The routing tool did not know our depots.",
        "We stopped using the routing tool after a month.",
        "A routing tool that knows depots would save hours.",
        "Invoices show the wrong VAT rate.",
        "Every invoice needs fixing by hand, the VAT is wrong.",
        "I like the new colours.",
        "The export button is hidden in a menu.",
        "Nobody finds the export button.",
    ];
    let text: String = said
        .iter()
        .map(|line| format!("Interviewer: And?\nDana: {line}\n"))
        .collect();
    let record = finished_record(&app, &ann, &project, "Dana", &text).await;
    let mut ids = Vec::new();
    for (n, line) in said.iter().enumerate().take(6) {
        let utterance = 2 * n as i64 + 2;
        let (status, made) = highlight(
            &app,
            &ann,
            &record,
            span((utterance, 0), (utterance, line.chars().count() as i64)),
            &[],
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        ids.push(made["id"].clone());
    }
    let themes_path = format!("/projects/{project}/themes");
    let propose = format!("/projects/{project}/highlights/themes");
    let wait_for = |wanted: usize| {
        let (app, ann, path) = (&app, &ann, themes_path.clone());
        eventually(
            Duration::from_secs(20),
            format!("no {wanted} proposals came"),
            async move || {
                let listed = get(app, ann, &path).await;
                if listed.as_array().map_or(0, Vec::len) >= wanted {
                    Ok(listed)
                } else {
                    Err(listed)
                }
            },
        )
    };

    let (status, queued) = app.post(&propose, &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert_eq!(queued["status"], "queued");
    let proposals = wait_for(2).await;
    let named = |name: &str| {
        proposals
            .as_array()
            .and_then(|all| all.iter().find(|p| p["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("a proposal {name}: {proposals}"))
    };
    let routing = named("Routing tool");
    assert_eq!(routing["status"], "suggested");
    let members: Vec<&Value> = routing["highlights"]
        .as_array()
        .expect("highlights")
        .iter()
        .map(|h| &h["id"])
        .collect();
    assert_eq!(members, vec![&ids[0], &ids[1], &ids[2]], "{routing}");
    let vat = proposals
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|p| p["name"].as_str().is_some_and(|n| n.to_lowercase().contains("vat")))
        })
        .cloned()
        .unwrap_or_else(|| panic!("a VAT proposal: {proposals}"));
    assert!(
        proposals
            .as_array()
            .into_iter()
            .flatten()
            .all(|p| !p.to_string().contains("new colours")),
        "a highlight that shares nothing is in no theme: {proposals}"
    );

    // Nothing is tagged until a person accepts; a stranger sees and does nothing.
    let (status, _) = app.get(&themes_path, &stranger).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let accept = |id: &Value| format!("/themes/{}/accept", id.as_str().expect("id"));
    let (status, _) = app.post(&accept(&routing["id"]), &stranger, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let first = get(&app, &ann, &format!("/highlights/{}", ids[0].as_str().expect("id"))).await;
    assert_eq!(first["tags"], json!([]));

    let (status, tag) = app.post(&accept(&routing["id"]), &ann, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{tag}");
    assert_eq!(
        (tag["name"].as_str(), tag["highlights_count"].as_i64()),
        (Some("Routing tool"), Some(3)),
        "{tag}"
    );
    let first = get(&app, &ann, &format!("/highlights/{}", ids[0].as_str().expect("id"))).await;
    assert_eq!(first["tags"][0]["id"], tag["id"]);
    let (status, _) = app.post(&accept(&routing["id"]), &ann, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "accepted once");

    let (status, _) = app
        .call(
            Method::DELETE,
            &format!("/themes/{}", vat["id"].as_str().expect("id")),
            Some(&ann.token),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(get(&app, &ann, &themes_path).await, json!([]));

    // Asked again with more highlights: the rejected name stays away, and a theme whose
    // name is a tag's files its highlights under that tag.
    let (status, export) = app
        .post(
            &format!("/workspaces/{}/tags", ann.id),
            &ann,
            json!({ "name": "export BUTTON" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{export}");
    for (n, line) in said.iter().enumerate().skip(6) {
        let utterance = 2 * n as i64 + 2;
        let (status, made) = highlight(
            &app,
            &ann,
            &record,
            span((utterance, 0), (utterance, line.chars().count() as i64)),
            &[],
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    let (status, _) = app.post(&propose, &ann, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let proposals = wait_for(1).await;
    assert_eq!(proposals.as_array().map(Vec::len), Some(1), "{proposals}");
    let button = &proposals[0];
    assert_eq!(button["name"], "Export button", "{proposals}");
    let (status, tag) = app
        .post(&accept(&button["id"]), &ann, json!({ "name": "Export button" }))
        .await;
    assert_eq!(status, StatusCode::OK, "{tag}");
    assert_eq!(
        (&tag["id"], tag["highlights_count"].as_i64()),
        (&export["id"], Some(2)),
        "{tag}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_model_s_themes_keep_only_the_highlights_it_was_given() {
    let (addr, model) = OpenAiStub::start().await;
    model.respond(|call| {
        if call.schema_name() == Some("themes") {
            let answer = json!({ "themes": [
                // #9 was never given; #1 twice counts once.
                { "name": "Pricing pressure", "description": "Price rises hurt.", "highlights": [1, 1, 2, 9] },
                // One highlight is not a theme.
                { "name": "Excel", "description": "Exports.", "highlights": [3] }
            ]});
            Reply::text(&answer.to_string())
        } else {
            Reply::status(503)
        }
    });
    let app = model_app(addr).await;
    let ann = app.user().await;
    let project = app.project(&ann, "Billing").await;
    let record = finished_record(&app, &ann, &project, "Dana", CALL).await;
    let mut ids = Vec::new();
    for (from, to) in [((2, 0), (2, 10)), ((2, 11), (2, 20)), ((4, 0), (4, 9))] {
        let (status, made) = highlight(&app, &ann, &record, span(from, to), &[]).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        ids.push(made["id"].clone());
    }
    let (status, _) = app
        .post(&format!("/projects/{project}/highlights/themes"), &ann, json!({}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let proposals = eventually(Duration::from_secs(20), "no theme was proposed", async || {
        let proposals = get(&app, &ann, &format!("/projects/{project}/themes")).await;
        if proposals.as_array().is_some_and(|all| !all.is_empty()) {
            Ok(proposals)
        } else {
            Err(proposals)
        }
    })
    .await;
    assert_eq!(proposals.as_array().map(Vec::len), Some(1), "{proposals}");
    assert_eq!(proposals[0]["name"], "Pricing pressure");
    assert_eq!(proposals[0]["description"], "Price rises hurt.");
    let members: Vec<&Value> = proposals[0]["highlights"]
        .as_array()
        .expect("list")
        .iter()
        .map(|h| &h["id"])
        .collect();
    assert_eq!(members, vec![&ids[0], &ids[1]]);
    let asked = model
        .calls()
        .into_iter()
        .find(|call| call.schema_name() == Some("themes"))
        .expect("the model was asked");
    let sent = format!("{:?}", asked.body);
    assert!(
        sent.contains("<highlights>") && sent.contains("#3 "),
        "the highlights went to the model as data: {sent}"
    );
    app.stop().await;
}
