//! The console's interviews and prompt library. In a real Chromium (as `console.rs`): a
//! researcher makes an interview link, a respondent takes the interview in a second
//! browser, and the researcher watches the link complete and opens its record; a system
//! preset is cloned, one of its prompts rewritten, its order changed, and a report made
//! from it. Over plain HTTP: a viewer cannot make links or clone presets, a form without
//! its CSRF token changes nothing, and a wrong number is named in plain words.

use reqwest::StatusCode;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, csrf_meta, forms, http_session, researcher_and_viewer, set_password};
use crate::support::browser::{Browser, in_chromium, in_chromiums, look, sign_in, until};
use crate::support::interviews::guide;
use crate::support::{TestApp, TestUser};

/// Each long enough (8 words or more) that the interviewer goes straight on.
const ANSWERS: [&str; 3] = [
    "I write a list every Monday morning before I open my email inbox.",
    "Meetings that appear at short notice and eat the afternoon I had blocked.",
    "A calendar that moves my focus blocks around when a meeting lands on them.",
];

/// Sets a form field's value by script (typing into a prefilled field would append).
async fn fill(browser: &Browser, css: &str, value: &str) {
    let script = format!(
        "const f = document.querySelector({css:?}); f.value = {value:?}; return true",
        value = value
    );
    assert_eq!(browser.script(&script).await, Value::Bool(true), "{css}");
}

async fn take_the_interview(respondent: &Browser, link: &str) {
    respondent.go(link).await;
    until(
        respondent,
        "the join form",
        "return document.body.dataset.state === 'join' || null",
    )
    .await;
    respondent
        .type_into(&respondent.find("#email").await, "respondent@example.org")
        .await;
    respondent.click(&respondent.find("#join").await).await;
    until(
        respondent,
        "the interviewer's opening",
        "return document.querySelectorAll('#log .turn.interviewer').length === 1 || null",
    )
    .await;
}

async fn answer_everything(respondent: &Browser) {
    for (i, answer) in ANSWERS.iter().enumerate() {
        respondent.type_into(&respondent.find("#message").await, answer).await;
        respondent.click(&respondent.find("#send").await).await;
        until(
            respondent,
            "the interviewer's next turn",
            &format!(
                "return document.querySelectorAll('#log .turn.interviewer').length === {} || null",
                i + 2
            ),
        )
        .await;
    }
    until(
        respondent,
        "the completed interview",
        "return document.body.dataset.state === 'completed' || null",
    )
    .await;
}

async fn interviews_flow(researcher_browser: &Browser, respondent: &Browser, app: &TestApp, researcher: &TestUser) {
    let project = app.project(researcher, "Weekly planning study").await;
    let browser = researcher_browser;
    sign_in(browser, app, &researcher.email).await;
    browser.go(&app.url(&format!("/p/{project}"))).await;
    let tab = browser.find("nav.tabs a[href$='/interviews']").await;
    browser.click(&tab).await;
    until(
        browser,
        "the interviews page",
        "return location.pathname.endsWith('/interviews') && document.querySelector('.empty') ? true : null",
    )
    .await;
    look(browser, "interviews-empty").await;

    // One link, with the guide the interviewer follows.
    fill(browser, "#topics_for_respondent", "How you plan your working week").await;
    fill(browser, "#interview_guide_override", &guide()).await;
    let make = browser.find("#create-links button[type=submit]").await;
    browser.click(&make).await;
    let link = until(
        browser,
        "the new link",
        "return document.querySelector('#rooms tr[data-room] input[readonly]')?.value ?? null",
    )
    .await;
    let link = link.as_str().expect("link").replace("http://127.0.0.1:8000", &app.base);
    assert!(link.contains("/interview/"), "{link}");
    let shown = browser
        .script("return [document.querySelector('#rooms [data-room-status]').textContent, !document.querySelector('button[data-copy]').hidden, document.querySelector('.badge.new') !== null]")
        .await;
    assert_eq!(
        shown,
        json!(["pending", true, true]),
        "a pending link, its copy button, marked new"
    );
    look(browser, "interviews").await;

    // The preview: the respondent's page in the chosen language, switched off.
    browser
        .go(&app.url(&format!(
            "/p/{project}/interviews/preview?language=de&topics_for_respondent=Wie+Sie+planen"
        )))
        .await;
    let preview = until(
        browser,
        "the preview",
        "return document.querySelector('.preview-banner') ? [document.body.dataset.state, document.getElementById('join').disabled, document.documentElement.lang, document.querySelector('.topics p').textContent] : null",
    )
    .await;
    assert_eq!(preview, json!(["preview", true, "de", "Wie Sie planen"]));
    look(browser, "interview-preview").await;
    let (_, rooms) = app
        .get(&format!("/api/interviews/rooms?project_id={project}"), researcher)
        .await;
    assert_eq!(rooms.as_array().map(Vec::len), Some(1), "the preview made no room");

    // Back on the list while the respondent joins: the status changes without a reload.
    browser.go(&app.url(&format!("/p/{project}/interviews"))).await;
    until(
        browser,
        "the list",
        "return document.getElementById('rooms') ? true : null",
    )
    .await;
    browser.script("window.stayed = true; return true").await;
    take_the_interview(respondent, &link).await;
    until(
        browser,
        "the link shown active",
        "return document.querySelector('#rooms [data-room-status]')?.textContent === 'active' && window.stayed ? true : null",
    )
    .await;
    answer_everything(respondent).await;
    // Completion reloads the page once, so the record's link appears.
    let record = until(
        browser,
        "the completed link and its record",
        "return document.querySelector('#rooms [data-room-status]')?.textContent === 'completed' ? document.querySelector('#rooms a[data-record-link]')?.getAttribute('href') ?? null : null",
    )
    .await;
    let record = record.as_str().expect("record link").to_owned();
    let record_id = record.trim_start_matches("/r/").to_owned();
    app.wait_finished(researcher, &record_id).await;
    browser
        .script("document.getElementById('rooms-heading').scrollIntoView(); return true")
        .await;
    look(browser, "interviews-completed").await;
    let open = browser.find("#rooms a[data-record-link]").await;
    browser.click(&open).await;
    until(
        browser,
        "the interview's transcript",
        "return document.querySelectorAll('.transcript .turn.respondent').length === 3 || null",
    )
    .await;
    browser.go(&app.url(&format!("/p/{project}"))).await;
    let listed = until(
        browser,
        "the record in the project's records",
        &format!("return document.querySelector('#records a[href=\"{record}\"]') ? true : null"),
    )
    .await;
    assert_eq!(listed, Value::Bool(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_researcher_sends_an_interview_link_and_opens_the_record_it_became() {
    let app = TestApp::start().await;
    let researcher = app.user().await;
    set_password(&app, &researcher, PASSWORD).await;
    in_chromiums(
        "the console interviews test",
        async |[browser, respondent]: &[Browser; 2]| interviews_flow(browser, respondent, &app, &researcher).await,
    )
    .await
    .then(app.stop())
    .await;
}

/// The ids of the preset page's prompts, in order.
async fn order(browser: &Browser) -> Value {
    browser
        .script("return [...document.querySelectorAll('#preset-prompts [data-prompt]')].map((li) => li.dataset.prompt)")
        .await
}

async fn library_flow(browser: &Browser, app: &TestApp, researcher: &TestUser) {
    let project = app.project(researcher, "Checkout study").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            researcher,
            json!({ "title": "Interview with Anna", "text": "Interviewer: What happened at checkout?\nAnna: The shipping cost surprised me, so I left." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    app.wait_finished(researcher, record["id"].as_str().expect("id")).await;

    sign_in(browser, app, &researcher.email).await;
    browser.go(&app.url("/settings/library")).await;
    until(
        browser,
        "the library",
        "return document.getElementById('system-heading') ? true : null",
    )
    .await;
    // What a system prompt asks is there to read before it is used.
    let asks = browser
        .script("const d = document.querySelector('#system-heading + ul details'); d.open = true; return d.querySelector('.prose').textContent.length")
        .await;
    assert!(asks.as_i64().is_some_and(|n| n > 20), "a prompt's text: {asks}");
    look(browser, "library").await;

    let clone = browser.find("#system-heading + ul form[action$='/clone'] button").await;
    browser.click(&clone).await;
    let preset = until(
        browser,
        "the clone's page",
        "return document.querySelector('#edit-preset') && document.querySelector('.notice[role=status]') ? location.pathname.split('/').pop() : null",
    )
    .await;
    let preset = preset.as_str().expect("preset id").to_owned();
    let before = order(browser).await;
    let ids: Vec<String> = serde_json::from_value(before.clone()).expect("ids");
    assert!(ids.len() >= 2, "a preset with prompts to reorder: {before}");
    look(browser, "library-preset").await;

    // Rewrite what its first prompt asks.
    let edit = browser.find("#preset-prompts a[href*='/prompts/']").await;
    browser.click(&edit).await;
    until(
        browser,
        "the prompt's form",
        "return document.getElementById('edit-prompt') ? true : null",
    )
    .await;
    let text = "List the three biggest surprises buyers mention, each with a quote.";
    fill(browser, "#prompt-text", text).await;
    look(browser, "library-prompt").await;
    let save = browser.find("#edit-prompt button[type=submit]").await;
    browser.click(&save).await;
    let saved = until(
        browser,
        "the preset with the rewritten prompt",
        &format!(
            "return location.pathname.endsWith('{preset}') ? (document.querySelector('#preset-prompts .prose')?.textContent ?? null) : null"
        ),
    )
    .await;
    assert_eq!(saved, json!(text));

    // Move the first prompt down: the preset's order changes, here and in the API.
    let down = browser.find("#preset-prompts li:first-child button[value=down]").await;
    browser.click(&down).await;
    let mut expected = ids.clone();
    expected.swap(0, 1);
    until(
        browser,
        "the new order",
        &format!(
            "return JSON.stringify([...document.querySelectorAll('#preset-prompts [data-prompt]')].map((li) => li.dataset.prompt)) === {:?} || null",
            serde_json::to_string(&expected).expect("json")
        ),
    )
    .await;
    let (_, stored) = app.get(&format!("/presets/{preset}/"), researcher).await;
    assert_eq!(stored["prompt_ids"], json!(expected), "{stored}");
    let (_, prompt) = app.get(&format!("/prompts/{}/", ids[0]), researcher).await;
    assert_eq!(prompt["text"], text, "{prompt}");

    // A report from the clone, written by the offline engine.
    browser.go(&app.url(&format!("/p/{project}"))).await;
    browser
        .script("document.getElementById('generate').open = true; return true")
        .await;
    let chosen = browser
        .script(&format!(
            "const o = document.querySelector('#preset option[value=\"{preset}\"]'); if (!o) return null; o.selected = true; return true"
        ))
        .await;
    assert_eq!(chosen, Value::Bool(true), "the clone is offered for reports");
    let generate = browser.find("#generate button[type=submit]").await;
    browser.click(&generate).await;
    until(
        browser,
        "the report from the clone, written",
        "return document.getElementById('report-status')?.textContent === 'completed' && document.querySelector('.report h2, .report p') ? true : null",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_researcher_clones_a_preset_edits_and_reorders_it_and_reports_with_it() {
    let app = TestApp::start().await;
    let researcher = app.user().await;
    set_password(&app, &researcher, PASSWORD).await;
    in_chromium("the console library test", async |browser| {
        library_flow(browser, &app, &researcher).await
    })
    .await
    .then(app.stop())
    .await;
}

/// A signed-in console session over plain HTTP: its cookies and its CSRF token.
struct Session {
    client: reqwest::Client,
    cookie: String,
    csrf: String,
}

impl Session {
    /// Signs `user` in; `workspace` is the workspace the console shows.
    async fn start(app: &TestApp, user: &TestUser, workspace: uuid::Uuid) -> Self {
        let session = crate::support::accounts::sign_in(app, user).await;
        let mut this = Self {
            client: forms(),
            cookie: format!("{session}; insight_workspace={workspace}"),
            csrf: String::new(),
        };
        let (_, page) = this.get(app, "/settings/library").await;
        this.csrf = csrf_meta(&page);
        this
    }

    async fn get(&self, app: &TestApp, path: &str) -> (StatusCode, String) {
        let response = self
            .client
            .get(app.url(path))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .expect("page");
        (response.status(), response.text().await.expect("html"))
    }

    async fn post(&self, app: &TestApp, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let response = self
            .client
            .post(app.url(path))
            .header(COOKIE, &self.cookie)
            .header(ORIGIN, &app.base)
            .form(form)
            .send()
            .await
            .expect("form");
        (response.status(), response.text().await.expect("html"))
    }
}

#[tokio::test]
async fn interview_link_forms_refuse_viewers_forged_posts_and_wrong_numbers() {
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    let project = app.project(&researcher, "Planning").await;
    let links = format!("/p/{project}/interviews");
    let rooms = async || {
        let (_, rooms) = app
            .get(&format!("/api/interviews/rooms?project_id={project}"), &researcher)
            .await;
        rooms.as_array().map_or(0, Vec::len)
    };

    let mine = Session::start(&app, &researcher, researcher.id).await;
    // Without its token, or with another session's, the form makes nothing.
    let (status, _) = mine.post(&app, &links, &[("count", "2")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = mine.post(&app, &links, &[("csrf", "forged"), ("count", "2")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(rooms().await, 0);
    // A number out of range is named beside its field, and what was typed stays.
    let (status, html) = mine
        .post(
            &app,
            &links,
            &[
                ("csrf", &mine.csrf),
                ("count", "0"),
                ("topics_for_respondent", "Your week"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        html.contains("Enter how many links to make between 1 and 100"),
        "{html}"
    );
    assert!(html.contains(">Your week</textarea>"), "{html}");
    assert_eq!(rooms().await, 0);
    let (status, _) = mine
        .post(
            &app,
            &links,
            &[("csrf", &mine.csrf), ("count", "2"), ("max_duration_minutes", "20")],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(rooms().await, 2);

    // The viewer reads the links but has no form, and the server refuses his post.
    let theirs = Session::start(&app, &viewer, researcher.id).await;
    let (status, html) = theirs.get(&app, &links).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("data-room-status"), "the viewer sees the links");
    assert!(
        !html.contains("method=\"post\" action=\"/p/"),
        "no write control for a viewer"
    );
    assert!(!html.contains("/cancel"), "no cancel for a viewer");
    let (status, _) = theirs
        .post(&app, &links, &[("csrf", &theirs.csrf), ("count", "1")])
        .await;
    assert!(
        status == StatusCode::FORBIDDEN || status == StatusCode::NOT_FOUND,
        "{status}"
    );
    assert_eq!(rooms().await, 2);
    let (_, listed) = app
        .get(&format!("/api/interviews/rooms?project_id={project}"), &researcher)
        .await;
    let room = listed[0]["id"].as_str().expect("room").to_owned();
    let (status, _) = theirs
        .post(&app, &format!("{links}/{room}/cancel"), &[("csrf", &theirs.csrf)])
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The preview is for readers too, and makes nothing.
    let (status, html) = theirs.get(&app, &format!("{links}/preview")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("preview-banner") && html.contains(" disabled>"), "{html}");
    assert_eq!(rooms().await, 2);

    // The owner cancels after a confirmation page that says what is lost.
    let (status, html) = mine.get(&app, &format!("{links}/{room}/cancel")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("stops working"), "{html}");
    let (status, _) = mine
        .post(&app, &format!("{links}/{room}/cancel"), &[("csrf", &mine.csrf)])
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, cancelled) = app.get(&format!("/api/interviews/rooms/{room}"), &researcher).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    app.stop().await;
}

#[tokio::test]
async fn the_library_is_read_only_for_viewers_and_refuses_forged_forms() {
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    let system = app.system_preset_id(&researcher).await;
    let clone = format!("/settings/library/presets/{system}/clone");
    let own = async || {
        let (_, presets) = app.get("/presets/", &researcher).await;
        presets
            .as_array()
            .map_or(0, |all| all.iter().filter(|p| p["preset_type"] == "user").count())
    };

    let theirs = Session::start(&app, &viewer, researcher.id).await;
    let (status, html) = theirs.get(&app, "/settings/library").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("System presets"), "{html}");
    assert!(
        !html.contains("method=\"post\" action=\"/settings/library"),
        "no write control for a viewer"
    );
    let (status, _) = theirs.post(&app, &clone, &[("csrf", &theirs.csrf)]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = theirs
        .post(
            &app,
            "/settings/library/prompts",
            &[("csrf", &theirs.csrf), ("title", "Mine"), ("text", "Ask this")],
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(own().await, 0);

    let mine = Session::start(&app, &researcher, researcher.id).await;
    // Without a token the form is refused before it is read (a missing field) or after.
    let (status, _) = mine.post(&app, &clone, &[]).await;
    assert!(
        status == StatusCode::FORBIDDEN || status == StatusCode::UNPROCESSABLE_ENTITY,
        "no CSRF token: {status}"
    );
    let (status, _) = mine.post(&app, &clone, &[("csrf", "forged")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a forged CSRF token");
    assert_eq!(own().await, 0);
    let (status, html) = mine
        .post(
            &app,
            "/settings/library/presets",
            &[("csrf", &mine.csrf), ("title", "Empty")],
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("Choose at least one prompt"), "{html}");
    let (status, _) = mine.post(&app, &clone, &[("csrf", &mine.csrf)]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(own().await, 1);
    // A system preset cannot be changed from a forged form either.
    let (status, _) = mine
        .post(
            &app,
            &format!("/settings/library/presets/{system}/move"),
            &[
                ("csrf", mine.csrf.as_str()),
                ("prompt_id", "00000000-0000-0000-0000-000000000000"),
                ("direction", "up"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    app.stop().await;
}

#[tokio::test]
async fn a_preset_of_another_workspace_is_changed_only_from_that_workspace() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let (_, system) = app.get("/presets/system/", &owner).await;
    let prompt = system[0]["prompt_ids"][0].clone();
    let (status, preset) = app
        .post(
            "/presets/",
            &owner,
            json!({ "title": "Personal", "prompt_ids": [prompt] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{preset}");
    let preset_id = preset["id"].as_str().expect("id").to_owned();
    // The console shows a team workspace; the preset is in his personal one.
    let (status, team) = app.post("/workspaces", &owner, json!({ "name": "Team" })).await;
    assert_eq!(status, StatusCode::CREATED, "{team}");
    let (client, cookie, csrf) = http_session(&app, &owner, &format!("/settings/library/presets/{preset_id}")).await;
    let switched = client
        .post(app.url("/workspace"))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&[
            ("csrf", csrf.as_str()),
            ("workspace_id", team["id"].as_str().expect("team")),
        ])
        .send()
        .await
        .expect("switch");
    assert_eq!(switched.status(), StatusCode::SEE_OTHER);
    let workspace_cookie = switched.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .expect("cookie")
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let cookies = format!("{cookie}; {workspace_cookie}");
    let refused = client
        .post(app.url(&format!("/settings/library/presets/{preset_id}")))
        .header(COOKIE, &cookies)
        .header(ORIGIN, &app.base)
        .form(&[("csrf", csrf.as_str()), ("title", "Renamed from elsewhere")])
        .send()
        .await
        .expect("post");
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let said = refused.text().await.expect("page");
    assert!(said.contains("switch to it"), "{said}");
    let (_, kept) = app.get(&format!("/presets/{preset_id}/"), &owner).await;
    assert_eq!(kept["title"], json!("Personal"));
    assert_eq!(kept["prompt_ids"], preset["prompt_ids"], "its prompts are kept");
    app.stop().await;
}
