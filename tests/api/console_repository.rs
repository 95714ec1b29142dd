//! The research repository in a real headless Chromium (as `console.rs`): a researcher
//! selects words in a transcript, tags them and highlights them; highlights a whole turn
//! by keyboard; finds the highlight on the project's board and through search; writes an
//! insight citing it; asks for suggestions and accepts one. Then the same forms over plain
//! HTTP without the script: a whole turn highlighted, a viewer refused.

use reqwest::StatusCode;
use reqwest::header::{COOKIE, ORIGIN};
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, csrf_meta, forms, researcher_and_viewer, set_password};
use crate::support::browser::{Browser, WAIT, in_chromium, look, sign_in, until};
use crate::support::records::finished_record;
use crate::support::reports::wait_generation;
use crate::support::{TestApp, TestUser, eventually};

const CALL: &str = "Interviewer: How do you find the price?\n\
                    Dana: The price went up twice this year! We pay per seat and it hurts.\n\
                    Interviewer: And exporting?\n\
                    Dana: Exporting to Excel breaks the layout every time.";

/// Selects characters `from..to` of utterance `n`'s words, as a reader's drag would.
async fn select(browser: &Browser, n: i64, from: usize, to: usize) {
    let done = browser
        .script(&format!(
            "const words = document.querySelector('#u{n} p.words'); \
             const walker = document.createTreeWalker(words, NodeFilter.SHOW_TEXT); \
             const at = (target) => {{ let left = target; let node; \
               while ((node = walker.nextNode())) {{ const length = Array.from(node.data).length; \
                 if (left <= length) return [node, Array.from(node.data).slice(0, left).join('').length]; left -= length; }} }}; \
             const [startNode, startOffset] = at({from}); walker.currentNode = words; \
             const [endNode, endOffset] = at({to}); \
             const range = document.createRange(); range.setStart(startNode, startOffset); range.setEnd(endNode, endOffset); \
             const selection = document.getSelection(); selection.removeAllRanges(); selection.addRange(range); \
             return selection.toString()"
        ))
        .await;
    assert!(done.as_str().is_some_and(|text| !text.is_empty()), "selected: {done}");
}

async fn highlights_of(app: &TestApp, user: &TestUser, record: &str) -> Vec<Value> {
    let (status, list) = app.get(&format!("/insight/{record}/highlights"), user).await;
    assert_eq!(status, StatusCode::OK);
    list.as_array().cloned().unwrap_or_default()
}

async fn walk(browser: &Browser, app: &TestApp, user: &TestUser, project: &str, record: &str) {
    sign_in(browser, app, &user.email).await;
    browser.go(&app.url(&format!("/r/{record}"))).await;
    until(
        browser,
        "the transcript",
        "return document.querySelector('#u2 p.words') !== null",
    )
    .await;

    // Select "We pay per seat" (with the space before it) and tag it.
    select(browser, 2, 34, 50).await;
    until(
        browser,
        "the form to take the selection",
        "return document.querySelector('#highlighter input[name=start_offset]').value !== ''",
    )
    .await;
    let quote = browser
        .script("return document.querySelector('#highlighter .selection-quote').textContent")
        .await;
    assert_eq!(quote, json!("We pay per seat"));
    browser
        .script("document.querySelector('#highlighter input[name=tag_ids]').click(); return true")
        .await;
    let note = browser.find("#highlight-note").await;
    browser.type_into(&note, "Per-seat pricing hurts small teams").await;
    look(browser, "record-highlighting").await;
    browser
        .click(&browser.find("#highlighter .highlight-button").await)
        .await;
    until(
        browser,
        "the highlight in the transcript",
        "return document.querySelector('#u2 mark.hl') !== null",
    )
    .await;
    let marked = browser
        .script("return document.querySelector('#u2 mark.hl').textContent")
        .await;
    assert_eq!(marked, json!("We pay per seat"));
    let made = highlights_of(app, user, record).await;
    assert_eq!(made.len(), 1);
    assert_eq!(made[0]["quote"], json!("We pay per seat"));
    assert_eq!(made[0]["start"], json!({ "utterance_id": 2, "offset": 35 }));
    assert_eq!(made[0]["tags"][0]["name"], json!("Pricing"));
    assert_eq!(made[0]["note"], json!("Per-seat pricing hurts small teams"));

    // By keyboard: on turn 4, `h` takes the whole turn.
    browser
        .script("document.getElementById('u4').focus(); return true")
        .await;
    browser.keys("h").await;
    let quote = browser
        .script("return document.querySelector('#highlighter .selection-quote').textContent")
        .await;
    assert_eq!(quote, json!("Exporting to Excel breaks the layout every time."));
    browser
        .click(&browser.find("#highlighter .highlight-button").await)
        .await;
    until(
        browser,
        "the second highlight",
        "return document.querySelector('#u4 mark.hl') !== null",
    )
    .await;
    assert_eq!(highlights_of(app, user, record).await.len(), 2);
    look(browser, "record-highlights").await;

    // The board groups them by tag.
    browser.go(&app.url(&format!("/p/{project}/highlights"))).await;
    until(browser, "the board", "return document.querySelector('.board') !== null").await;
    let columns = browser
        .script("return [...document.querySelectorAll('.board .column h2')].map((h) => h.textContent.trim().split(/\\s+/)[0])")
        .await;
    assert_eq!(columns, json!(["Pricing", "Untagged"]));
    let card = browser
        .script("return document.querySelector('.board .column .quote').textContent")
        .await;
    assert_eq!(card, json!("We pay per seat"));
    look(browser, "highlights-board").await;

    // Search finds the words in the transcript and in the highlight.
    browser.go(&app.url("/search")).await;
    let field = browser.find("#search-q").await;
    browser.type_into(&field, "\"per seat\"\u{E007}").await;
    until(
        browser,
        "search results",
        "return document.querySelectorAll('.hit').length >= 2",
    )
    .await;
    let marked = browser
        .script("return [...document.querySelectorAll('.hit .snippet mark')].map((m) => m.textContent)")
        .await;
    assert!(
        marked
            .as_array()
            .is_some_and(|m| m.contains(&json!("per")) && m.contains(&json!("seat"))),
        "{marked}"
    );
    look(browser, "search").await;
    browser.click(&browser.find(".hit a").await).await;
    until(
        browser,
        "the moment",
        &format!("return location.pathname === '/r/{record}' && location.hash === '#u2'"),
    )
    .await;

    // An insight citing the highlight, put in a report.
    let report = app.report(user, project).await;
    browser.go(&app.url(&format!("/p/{project}/insights"))).await;
    let title = browser.find("#insight-title").await;
    browser
        .type_into(&title, "Per-seat pricing pushes small teams away")
        .await;
    browser
        .script("document.querySelector('input[name=highlight_ids]').click(); return true")
        .await;
    browser
        .click(&browser.find("#new-insight + form button[type=submit]").await)
        .await;
    until(
        browser,
        "the insight",
        "return document.querySelector('.evidence .quote') !== null",
    )
    .await;
    browser
        .click(&browser.find(".add-to-report button[type=submit]").await)
        .await;
    until(
        browser,
        "the insight in the report",
        &format!("return document.querySelector('.in-reports a[href$=\"/reports/{report}\"]') !== null"),
    )
    .await;
    look(browser, "insights").await;
    wait_generation(
        app,
        user,
        &format!("/projects/{project}/reports/{report}"),
        &["completed"],
    )
    .await;
    browser.go(&app.url(&format!("/p/{project}/reports/{report}"))).await;
    until(
        browser,
        "the insight on the report's page",
        "return [...document.querySelectorAll('h2')].some(h => h.textContent.trim() === 'Insights') \
         && document.body.textContent.includes('Per-seat pricing pushes small teams away')",
    )
    .await;
    look(browser, "report-with-insight").await;

    // Suggestions: asked for, then accepted.
    browser.go(&app.url(&format!("/r/{record}"))).await;
    browser
        .click(&browser.find("form[action$='/highlights/suggest'] button").await)
        .await;
    until(
        browser,
        "the notice",
        "return document.querySelector('.notice') !== null",
    )
    .await;
    eventually(WAIT, "no suggestion to accept", async || {
        browser.go(&app.url(&format!("/r/{record}"))).await;
        let found = browser
            .script("return document.querySelector('.highlight-card form input[name=accept]') !== null")
            .await;
        if found == json!(true) { Ok(()) } else { Err("") }
    })
    .await;
    browser
        .script("document.querySelector('.highlight-card form input[name=accept]').form.requestSubmit(); return true")
        .await;
    until(
        browser,
        "the record again",
        &format!("return location.pathname === '/r/{record}'"),
    )
    .await;
    let statuses: Vec<String> = highlights_of(app, user, record)
        .await
        .iter()
        .map(|h| h["status"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(statuses.iter().filter(|s| *s == "ok").count() >= 3, "{statuses:?}");
}

#[tokio::test]
async fn a_researcher_highlights_by_selection_and_keyboard_finds_it_on_the_board_and_in_search() {
    let app = TestApp::start().await;
    let user = app.user().await;
    set_password(&app, &user, PASSWORD).await;
    let project = app.project(&user, "Billing").await;
    let record = finished_record(&app, &user, &project, "Dana", CALL).await;
    let (status, _) = app
        .post(
            &format!("/workspaces/{}/tags", user.id),
            &user,
            json!({ "name": "Pricing", "description": "What they pay and how it changes" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    in_chromium("the console repository test", async |browser| {
        walk(browser, &app, &user, &project, &record).await
    })
    .await
    .then(app.stop())
    .await;
}

#[tokio::test]
async fn without_the_script_a_whole_turn_is_highlighted_and_a_viewer_is_refused() {
    let app = TestApp::start().await;
    let (researcher, viewer) = researcher_and_viewer(&app).await;
    let project = app.project(&researcher, "Billing").await;
    let record = finished_record(&app, &researcher, &project, "Dana", CALL).await;
    let (_, tag) = app
        .post(
            &format!("/workspaces/{}/tags", researcher.id),
            &researcher,
            json!({ "name": "Export" }),
        )
        .await;
    for (who, allowed) in [(&researcher, true), (&viewer, false)] {
        let cookie = crate::support::accounts::sign_in(&app, who).await;
        let page = forms()
            .get(app.url(&format!("/r/{record}")))
            .header(COOKIE, &cookie)
            .send()
            .await
            .expect("page");
        assert_eq!(page.status(), StatusCode::OK);
        let html = page.text().await.expect("html");
        assert_eq!(
            html.contains("id=\"highlighter\""),
            allowed,
            "the form only for those who may write"
        );
        let csrf = csrf_meta(&html);
        let body = format!(
            "csrf={csrf}&start_utterance=&start_offset=&end_utterance=&end_offset=&utterance=4&tag_ids={}&note=",
            tag["id"].as_str().expect("id")
        );
        let response = forms()
            .post(app.url(&format!("/r/{record}/highlights")))
            .header(COOKIE, &cookie)
            .header(ORIGIN, &app.base)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .expect("posted");
        if allowed {
            assert_eq!(response.status(), StatusCode::SEE_OTHER);
        } else {
            assert_eq!(response.status(), StatusCode::FORBIDDEN);
        }
    }
    let made = highlights_of(&app, &researcher, &record).await;
    assert_eq!(made.len(), 1);
    assert_eq!(
        made[0]["quote"],
        json!("Exporting to Excel breaks the layout every time.")
    );
    assert_eq!(made[0]["tags"][0]["name"], json!("Export"));
    // A form without its token changes nothing.
    let cookie = crate::support::accounts::sign_in(&app, &researcher).await;
    let response = forms()
        .post(app.url(&format!("/r/{record}/highlights")))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("utterance=2")
        .send()
        .await
        .expect("posted");
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(highlights_of(&app, &researcher, &record).await.len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn untagged_highlights_are_grouped_into_themes_a_researcher_renames_and_accepts() {
    let app = TestApp::start().await;
    let user = app.user().await;
    set_password(&app, &user, PASSWORD).await;
    let project = app.project(&user, "Dispatch").await;
    let said = [
        "The routing tool did not know our depots.",
        "We stopped using the routing tool after a month.",
        "A routing tool that knows depots would save hours.",
    ];
    let text: String = said
        .iter()
        .map(|line| format!("Interviewer: And?\nDana: {line}\n"))
        .collect();
    let record = finished_record(&app, &user, &project, "Dana", &text).await;
    for (n, line) in said.iter().enumerate() {
        let utterance = 2 * n + 2;
        let (status, made) = app
            .post(
                &format!("/insight/{record}/highlights"),
                &user,
                json!({ "start": { "utterance_id": utterance, "offset": 0 }, "end": { "utterance_id": utterance, "offset": line.chars().count() } }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    in_chromium("the console themes test", async |browser| {
        sign_in(browser, &app, &user.email).await;
        browser.go(&app.url(&format!("/p/{project}/highlights"))).await;
        browser
            .click(&browser.find("form[action$='/themes'] button").await)
            .await;
        until(browser, "the notice", "return document.querySelector('#themes .notice') !== null").await;
        eventually(WAIT, "no proposed theme", async || {
            browser.go(&app.url(&format!("/p/{project}/highlights"))).await;
            let found = browser
                .script("return document.querySelector('#themes input[name=name]') !== null")
                .await;
            if found == json!(true) { Ok(()) } else { Err("") }
        })
        .await;
        let name = browser
            .script("return document.querySelector('#themes input[name=name]').value")
            .await;
        assert_eq!(name, json!("Routing tool"));
        look(browser, "themes").await;
        browser
            .script("const field = document.querySelector('#themes input[name=name]'); field.value = ''; return true")
            .await;
        browser
            .type_into(&browser.find("#themes input[name=name]").await, "Routing tool trust")
            .await;
        browser
            .click(&browser.find("#themes form[action$='/accept'] button").await)
            .await;
        until(
            browser,
            "the new tag's column",
            "return [...document.querySelectorAll('.column h2')].some(h => h.textContent.includes('Routing tool trust')) \
             && document.querySelector('#themes .card') === null",
        )
        .await;
        let made = highlights_of(&app, &user, &record).await;
        assert!(
            made.iter().all(|h| h["tags"][0]["name"] == json!("Routing tool trust")),
            "{made:?}"
        );
    })
    .await
    .then(app.stop())
    .await;
}
