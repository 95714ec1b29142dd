//! Search across a workspace over the JSON API, on a small corpus with known answers:
//! words matched in their language (English stemmed, German given and guessed), phrases,
//! filters (project, record, tag, speaker, kind, date), snippets that mark the words, and
//! links to the moment; changes (a correction, a deletion) show within a second on the
//! instance that made them and within a few seconds on another sharing the database;
//! and no workspace ever finds another's text.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::records::finished_record;
use crate::support::{TestApp, TestUser, error_types, eventually};

const PRICING: &str = "Interviewer: What about the price?\n\
                       Anna: The pricing is confusing and we are not happy with it.\n\
                       Interviewer: Anything else?\n\
                       Anna: We are happy with support, not with the prices.";
const ONBOARDING: &str = "Interviewer: How was the start?\n\
                          Bob: Onboarding took three weeks because of the spreadsheet import.";
const GERMAN: &str = "Interviewer: Wie finden Sie den Preis?\n\
                      Jens: Die Preise sind für kleine Teams zu hoch.";
const OTHER: &str = "Interviewer: What about the price?\n\
                     Eve: The pricing is fine and we are not happy to switch.";

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

async fn search(app: &TestApp, user: &TestUser, query: &str) -> Value {
    let (status, body) = app.get(&format!("/search?{query}"), user).await;
    assert_eq!(status, StatusCode::OK, "{query}: {body}");
    body
}

fn hits(body: &Value) -> Vec<Value> {
    body["hits"].as_array().cloned().unwrap_or_default()
}

/// Searches until `check` holds (failing after `patience`); how long it took.
async fn until(
    app: &TestApp,
    user: &TestUser,
    query: &str,
    patience: Duration,
    check: impl Fn(&Value) -> bool,
) -> Duration {
    let started = Instant::now();
    eventually(patience, format!("{query}: not as expected"), async || {
        let body = search(app, user, query).await;
        if check(&body) { Ok(started.elapsed()) } else { Err(body) }
    })
    .await
}

#[tokio::test]
async fn search_finds_words_and_phrases_in_their_language_filters_marks_and_links() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let eve = app.user().await;
    let workspace = ann.id.to_string();
    let research = app.project(&ann, "Pricing research").await;
    let other_project = app.project(&ann, "Onboarding").await;
    let pricing = finished_record(&app, &ann, &research, "Anna", PRICING).await;
    let onboarding = finished_record(&app, &ann, &other_project, "Bob", ONBOARDING).await;
    let (status, german) = app
        .post(
            &format!("/projects/{research}/records"),
            &ann,
            json!({ "title": "Jens", "text": GERMAN, "language": "de" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{german}");
    let german = german["id"].as_str().expect("id").to_owned();
    app.wait_finished(&ann, &german).await;
    let eve_project = app.project(&eve, "Theirs").await;
    finished_record(&app, &eve, &eve_project, "Eve", OTHER).await;
    let (_, tag) = app
        .post(
            &format!("/workspaces/{workspace}/tags"),
            &ann,
            json!({ "name": "Pricing" }),
        )
        .await;
    let (status, highlight) = app
        .post(
            &format!("/insight/{pricing}/highlights"),
            &ann,
            json!({ "start": { "utterance_id": 2, "offset": 0 }, "end": { "utterance_id": 2, "offset": 25 },
                    "tag_ids": [tag["id"]], "note": "Confusion about tiers" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{highlight}");
    let (status, insight) = app
        .post(
            &format!("/projects/{research}/insights"),
            &ann,
            json!({ "title": "Tiers confuse buyers", "body": "Customers cannot tell the plans apart.", "highlight_ids": [highlight["id"]] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{insight}");

    // Everything made so far is searchable within a second of being made.
    let waited = until(&app, &ann, "q=plans", Duration::from_secs(5), |body| body["total"] == 1).await;
    assert!(
        waited < Duration::from_secs(2),
        "an insight took {waited:?} to be found"
    );

    // Stemmed English: "price" finds pricing and prices in utterances, the highlight's quote.
    let price = search(&app, &ann, "q=price").await;
    let kinds: Vec<String> = hits(&price)
        .iter()
        .map(|h| h["kind"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        kinds.contains(&"utterance".to_owned()) && kinds.contains(&"highlight".to_owned()),
        "{price}"
    );
    assert!(
        hits(&price).iter().all(|h| h["project_id"] == json!(research)),
        "{price}"
    );
    let utterance = hits(&price)
        .into_iter()
        .find(|h| h["kind"] == "utterance" && h["utterance_id"] == 4)
        .expect("the fourth utterance");
    assert_eq!(utterance["record_id"], json!(pricing));
    assert_eq!(utterance["id"], json!(pricing));
    assert_eq!(utterance["speaker"], json!("Anna"));
    assert_eq!(utterance["title"], json!("Anna"));
    assert_eq!(utterance["url"], json!(format!("/r/{pricing}#u4")));
    assert!(
        utterance["snippet"]
            .as_str()
            .unwrap_or("")
            .contains("<mark>prices</mark>"),
        "{utterance}"
    );
    // A phrase matches its words in order only.
    let phrase = search(&app, &ann, &format!("q={}", encode("\"not happy\""))).await;
    assert_eq!(phrase["total"], json!(1), "not \"happy with support, not\": {phrase}");
    assert!(hits(&phrase).iter().all(|h| h["utterance_id"] == 2), "{phrase}");
    assert!(
        hits(&phrase).iter().any(|h| h["snippet"]
            .as_str()
            .unwrap_or("")
            .contains("<mark>not</mark> <mark>happy</mark>")),
        "{phrase}"
    );
    // German, stemmed as German.
    let preis = search(&app, &ann, "q=Preis").await;
    assert_eq!(hits(&preis).len(), 2, "the question and the answer: {preis}");
    assert!(hits(&preis).iter().all(|h| h["record_id"] == json!(german)));

    // Filters.
    let in_project = search(&app, &ann, &format!("q=weeks&project_id={other_project}")).await;
    assert_eq!(in_project["total"], json!(1));
    let elsewhere = search(&app, &ann, &format!("q=weeks&project_id={research}")).await;
    assert_eq!(elsewhere["total"], json!(0));
    let in_record = search(&app, &ann, &format!("q=price&record_id={onboarding}")).await;
    assert_eq!(in_record["total"], json!(0));
    let by_speaker = search(&app, &ann, "q=price&speaker=interviewer").await;
    assert!(
        hits(&by_speaker).iter().all(|h| h["speaker"] == "Interviewer"),
        "{by_speaker}"
    );
    assert_eq!(hits(&by_speaker).len(), 1, "{by_speaker}");
    let tagged = search(
        &app,
        &ann,
        &format!("q=confusing&tag_id={}", tag["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(hits(&tagged).len(), 1, "{tagged}");
    assert_eq!(hits(&tagged)[0]["kind"], json!("highlight"));
    assert_eq!(hits(&tagged)[0]["id"], highlight["id"]);
    let notes = search(&app, &ann, "q=tiers&kind=highlight").await;
    assert_eq!(hits(&notes).len(), 1, "the note is searched: {notes}");
    let insights = search(&app, &ann, "q=tiers&kind=insight").await;
    assert_eq!(
        hits(&insights)[0]["url"],
        json!(format!(
            "/p/{research}/insights#insight-{}",
            insight["id"].as_str().expect("id")
        ))
    );
    let future = search(&app, &ann, "q=price&from=2999-01-01").await;
    assert_eq!(future["total"], json!(0));
    let past = search(&app, &ann, &format!("q=price&to=2999-01-01&workspace_id={workspace}")).await;
    assert_eq!(past["total"], price["total"]);

    // A page at a time, with a Link to the next.
    let response = app
        .client
        .get(app.url("/search?q=price&limit=1"))
        .bearer_auth(&ann.token)
        .send()
        .await
        .expect("sent");
    let link = response
        .headers()
        .get("link")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let first: Value = response.json().await.expect("json");
    assert_eq!(hits(&first).len(), 1);
    let next = link.expect("a next page");
    let next = next.trim_start_matches('<').split('>').next().expect("url");
    let (_, second) = app.get(next, &ann).await;
    assert_eq!(hits(&second).len(), 1);
    assert_ne!(hits(&second)[0], hits(&first)[0]);

    // Far past the last hit is an empty page, not a 500.
    let far = insight::domain::paging::encode_cursor(&(i64::MAX / 2));
    let (status, body) = app.get(&format!("/search?q=price&cursor={far}"), &ann).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(hits(&body).len(), 0);
    assert_eq!(body["total"], price["total"]);

    // Bad input is a 422 or a 404, never a 500.
    let (status, body) = app.get("/search?kind=poem&from=soon", &ann).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_types(&body), ["enum", "datetime_parsing"]);
    let (status, body) = app.get("/search?q=%20", &ann).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, _) = app.get(&format!("/search?q=price&workspace_id={}", eve.id), &ann).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for odd in ["q=%22unclosed", "q=AND", "q=price%5E", "q=(((", "q=*", "q=speaker:Anna"] {
        let (status, body) = app.get(&format!("/search?{odd}"), &ann).await;
        assert_eq!(status, StatusCode::OK, "{odd}: {body}");
    }

    // Isolation: Eve finds only her own words, whatever she asks.
    for query in [
        "price",
        "pricing",
        "\"not happy\"",
        "Preis",
        "weeks",
        "tiers",
        "plans",
        "confusing",
        "happy",
        "Anna",
    ] {
        let theirs = search(&app, &eve, &format!("q={}", encode(query))).await;
        assert!(
            hits(&theirs).iter().all(|h| h["project_id"] == json!(eve_project)),
            "{query}: {theirs}"
        );
        let (status, _) = app
            .get(&format!("/search?q={}&project_id={research}", encode(query)), &eve)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    let eves = search(&app, &eve, "q=happy").await;
    assert_eq!(eves["total"], json!(1), "{eves}");

    // A correction shows within a second; a deleted record's words are gone as fast.
    let (status, _) = app
        .call(
            reqwest::Method::PATCH,
            &format!("/insight/{onboarding}/utterances/2"),
            Some(&ann.token),
            Some(json!({ "text": "Onboarding took three weeks because of the CSV upload." })),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let waited = until(&app, &ann, "q=upload", Duration::from_secs(5), |body| {
        body["total"] == 1
    })
    .await;
    assert!(waited < Duration::from_secs(1), "a correction took {waited:?}");
    assert_eq!(search(&app, &ann, "q=spreadsheet").await["total"], json!(0));
    let (status, _) = app.delete(&format!("/insight/{german}/"), &ann).await;
    assert!(status.is_success(), "{status}");
    let waited = until(&app, &ann, "q=Preis", Duration::from_secs(5), |body| body["total"] == 0).await;
    assert!(waited < Duration::from_secs(1), "a deletion took {waited:?}");
}

#[tokio::test]
async fn another_instance_on_the_same_database_finds_what_this_one_made_within_seconds() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Shared").await;
    finished_record(&app, &ann, &project, "Anna", PRICING).await;
    until(&app, &ann, "q=confusing", Duration::from_secs(5), |body| {
        body["total"] == 1
    })
    .await;

    // A second instance with its own data folder builds its index from the database.
    let mut settings = insight::Settings::for_database(&app.database_url);
    settings.storage.db_max_connections = 2;
    let store = insight::Store::connect(&app.database_url, 2)
        .await
        .expect("second store");
    let other = insight::Server::start(settings, store).await.expect("second instance");
    let other_url = format!("http://{}", other.addr);
    let ask = |query: &'static str| {
        let client = app.client.clone();
        let url = format!("{other_url}/search?q={query}");
        let token = ann.token.clone();
        async move {
            let body: Value = client
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .expect("sent")
                .json()
                .await
                .expect("json");
            body["total"].as_u64().unwrap_or(0)
        }
    };
    eventually(
        Duration::from_secs(10),
        "the other instance built nothing",
        async || {
            let found = ask("confusing").await;
            if found == 1 {
                Ok(())
            } else {
                Err(format!("{found} found"))
            }
        },
    )
    .await;
    // What the first instance makes next, the second finds within a few seconds.
    finished_record(&app, &ann, &project, "Bob", ONBOARDING).await;
    eventually(
        Duration::from_secs(5),
        "the other instance did not catch up",
        async || {
            let found = ask("spreadsheet").await;
            if found == 1 {
                Ok(())
            } else {
                Err(format!("{found} found"))
            }
        },
    )
    .await;
    other.stop().await.expect("stop");
}

const BILLING_A: &str = "Interviewer: How do invoices reach you?\n\
                         Anna: Invoices arrive late every month and finance chases them.";
const BILLING_B: &str = "Interviewer: And invoices?\n\
                         Bob: Our invoices are sent twice because the export fails.";
const BILLING_STRANGER: &str = "Interviewer: Invoices?\n\
                                Eve: Invoices are perfect for us, never late.";

/// The utterance a citation names, as the record has it.
async fn cited_text(app: &TestApp, user: &TestUser, citation: &Value) -> String {
    let record = citation["record_id"].as_str().expect("record id");
    let (_, detail) = app.get(&format!("/insight/{record}/"), user).await;
    let utterance = citation["utterance_id"].as_i64().expect("utterance id");
    detail["utterances"]
        .as_array()
        .and_then(|all| all.iter().find(|u| u["id"] == utterance))
        .and_then(|u| u["text"].as_str())
        .expect("the cited utterance")
        .to_owned()
}

#[tokio::test]
async fn the_assistant_answers_across_chosen_projects_or_a_whole_workspace_citing_verbatim() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let eve = app.user().await;
    let first = app.project(&ann, "Billing 2025").await;
    let second = app.project(&ann, "Billing 2026").await;
    let third = app.project(&ann, "Unrelated").await;
    let record_a = finished_record(&app, &ann, &first, "Anna", BILLING_A).await;
    let record_b = finished_record(&app, &ann, &second, "Bob", BILLING_B).await;
    let theirs = app.project(&eve, "Eve's billing").await;
    let record_eve = finished_record(&app, &eve, &theirs, "Eve", BILLING_STRANGER).await;
    until(&app, &ann, "q=invoices", Duration::from_secs(5), |body| {
        body["total"].as_u64() >= Some(4)
    })
    .await;

    for scope in [
        json!({ "project_ids": [first, second] }),
        json!({ "workspace_id": ann.id }),
        json!({ "workspace_id": ann.id, "project_ids": [first, second, third] }),
    ] {
        let mut body = json!({ "message": "What do customers say about invoices?" });
        for (key, value) in scope.as_object().expect("object") {
            body[key] = value.clone();
        }
        let (status, answer) = app.post("/agent/chat", &ann, body).await;
        assert_eq!(status, StatusCode::OK, "{scope}: {answer}");
        let citations = answer["citations"].as_array().cloned().unwrap_or_default();
        let records: Vec<&str> = citations.iter().filter_map(|c| c["record_id"].as_str()).collect();
        assert!(records.contains(&record_a.as_str()), "{scope}: {answer}");
        assert!(records.contains(&record_b.as_str()), "{scope}: {answer}");
        assert!(
            !records.contains(&record_eve.as_str()),
            "{scope}: another's words: {answer}"
        );
        for citation in &citations {
            assert_eq!(citation["kind"], json!("record"));
            let said = cited_text(&app, &ann, citation).await;
            let quote = citation["quote"].as_str().expect("quote");
            assert!(said.contains(quote), "{quote:?} is not in {said:?}");
        }
        // The thread is not tied to one of the projects.
        let (_, threads) = app.get("/agent/threads", &ann).await;
        assert_eq!(threads[0]["id"], answer["thread_id"]);
        assert_eq!(threads[0]["project_id"], Value::Null);
    }
    // Only the chosen projects.
    let (_, answer) = app
        .post(
            "/agent/chat",
            &ann,
            json!({ "message": "What do customers say about invoices?", "project_ids": [second] }),
        )
        .await;
    let records: Vec<&str> = answer["citations"]
        .as_array()
        .map(|all| all.iter().filter_map(|c| c["record_id"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        !records.is_empty() && records.iter().all(|r| *r == record_b),
        "{answer}"
    );

    // Another's project or workspace is not found, and says where.
    let (status, body) = app
        .post(
            "/agent/chat",
            &ann,
            json!({ "message": "Invoices?", "project_ids": [first, theirs] }),
        )
        .await;
    crate::support::assert_unknown_references(status, &body, &["project_ids[1]"]);
    let (status, body) = app
        .post(
            "/agent/chat",
            &ann,
            json!({ "message": "Invoices?", "workspace_id": eve.id }),
        )
        .await;
    crate::support::assert_unknown_references(status, &body, &["workspace_id"]);
}

#[tokio::test]
async fn a_record_s_language_is_changed_by_a_person_and_its_text_searched_in_it_from_then_on() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Languages").await;
    // Turns too short to tell their own language: they are taken to be in the record's.
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            &ann,
            json!({
                "title": "Said to be English",
                "text": "Interviewer: Und die Rechnungen?\nJens: Die Rechnungen kommen immer zu spät.",
                "language": "en",
            }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().expect("id").to_owned();
    let finished = app.wait_finished(&ann, &id).await;
    let version = finished["updated_at"].clone();
    until(&app, &ann, "q=kommen", Duration::from_secs(5), |body| {
        body["total"] == 1
    })
    .await;
    assert_eq!(
        search(&app, &ann, "q=Rechnung").await["total"],
        0,
        "stemmed as English, Rechnungen is not Rechnung"
    );

    let (status, error) = app
        .patch(&format!("/insight/{id}/"), &ann, json!({ "language": "German!" }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    assert_eq!(error_types(&error), ["string_pattern_mismatch"], "{error}");
    let (status, changed) = app
        .patch(&format!("/insight/{id}/"), &ann, json!({ "language": "de" }))
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["language"], "de");
    assert_ne!(
        changed["updated_at"], version,
        "a new language is a new version of the record"
    );
    until(&app, &ann, "q=Rechnung", Duration::from_secs(5), |body| {
        body["total"] == 2 && hits(body).iter().all(|hit| hit["record_id"] == json!(id))
    })
    .await;
    let (_, record) = app.get(&format!("/insight/{id}/"), &ann).await;
    assert_eq!(record["language"], "de");
}

#[tokio::test]
async fn a_rebuild_after_a_restart_keeps_answering_from_the_whole_previous_index_until_it_switches() {
    let mut app = TestApp::start().await;
    let ann = app.user().await;
    let project = app.project(&ann, "Rebuilt").await;
    let id = finished_record(&app, &ann, &project, "Anna", PRICING).await;
    until(&app, &ann, "q=confusing", Duration::from_secs(5), |body| {
        body["total"] == 1
    })
    .await;

    // While the instance is down its text changes, and the outbox keeps too little to catch
    // up from: the next start rebuilds.
    app.restart(|_| {}).await;
    until(&app, &ann, "q=confusing", Duration::from_secs(5), |body| {
        body["total"] == 1
    })
    .await;
    app.halt().await;
    let record = uuid::Uuid::parse_str(&id).expect("uuid");
    let first_turn = "UPDATE utterances SET text = $1 WHERE record_id = $2 AND id = \
                      (SELECT MIN(id) FROM utterances WHERE record_id = $2 AND speaker = 'Anna')";
    behind_its_back(&app, first_turn, Some("The pricing is zebracorn."), record).await;
    // Each change to a record leaves an outbox row (its utterances' through the record).
    let touch = "UPDATE records SET name = name WHERE id = $1";
    behind_its_back(&app, touch, None, record).await;
    behind_its_back(&app, touch, None, record).await;
    behind_its_back(
        &app,
        "DELETE FROM search_outbox WHERE seq < (SELECT MAX(seq) FROM search_outbox) AND item_id <> $1",
        None,
        uuid::Uuid::nil(),
    )
    .await;
    app.restart(|_| {}).await;
    // From its first answer on, search answers from a whole index: the previous one until
    // the new one is complete, then the new one; never a 503, never part of one.
    let mut switched = false;
    let started = Instant::now();
    while !switched {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the rebuild never switched"
        );
        let (status, old) = app.get("/search?q=support", &ann).await;
        assert_eq!(status, StatusCode::OK, "{old}");
        assert_eq!(old["total"], 1, "the untouched answer is always whole: {old}");
        let (_, new) = app.get("/search?q=zebracorn", &ann).await;
        switched = new["total"] == 1;
    }
    let slot = app.data_dir.join("search").join("slot-0").join("v3");
    let current = std::fs::read_to_string(slot.join("current")).expect("current");
    assert_ne!(current.trim(), "g1", "a new generation is in use");
    eventually(Duration::from_secs(10), "the old generation's files stay", async || {
        if slot.join("g1").exists() {
            Err("g1 is still there")
        } else {
            Ok(())
        }
    })
    .await;
}

/// Runs one statement on the database beside the instance (SQLite or PostgreSQL).
async fn behind_its_back(app: &TestApp, sql: &str, text: Option<&str>, id: uuid::Uuid) {
    macro_rules! run {
        ($connection:ty) => {{
            let mut conn = <$connection as sqlx::Connection>::connect(&app.database_url)
                .await
                .expect("connect");
            let query = match text {
                Some(text) => sqlx::query(sql).bind(text).bind(id),
                None => sqlx::query(sql).bind(id),
            };
            query.execute(&mut conn).await.expect(sql);
        }};
    }
    if app.database_url.starts_with("sqlite:") {
        run!(sqlx::SqliteConnection)
    } else {
        run!(sqlx::PgConnection)
    }
}
