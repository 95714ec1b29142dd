//! The respondent's page in a real browser: headless Chromium driven over W3C WebDriver
//! (chromedriver, spoken to with reqwest), against a real server. Runs where Debian's
//! chromium and chromium-driver are installed, or where `INSIGHT_TEST_CHROMEDRIVER` and
//! `INSIGHT_TEST_CHROMIUM` name them; elsewhere it says it was skipped and passes.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use insight::app::interview::phrases::phrases;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::browser::{Browser, ChromeDriver, WAIT};
use crate::support::interviews::{QUESTIONS, guide};
use crate::support::{TestApp, eventually};

const PROJECT: &str = "Weekly planning study";

/// Each long enough (8 words or more) that the interviewer goes straight on; the first
/// tries to become markup.
const ANSWERS: [&str; 3] = [
    r#"I use <img src=x onerror="document.body.dataset.pwned=1"> every single day at work, honestly"#,
    "Meetings that appear at short notice and eat the afternoon I had blocked.",
    "A calendar that moves my focus blocks around when a meeting lands on them.",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_respondent_takes_an_interview_in_a_real_browser() {
    let named = |variable: &str, default: &str| {
        std::env::var(variable)
            .ok()
            .filter(|path| !path.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let chromedriver = named("INSIGHT_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
    let chromium = named("INSIGHT_TEST_CHROMIUM", "/usr/bin/chromium");
    if !std::path::Path::new(&chromedriver).exists() || !std::path::Path::new(&chromium).exists() {
        eprintln!(
            "skipped a_respondent_takes_an_interview_in_a_real_browser: no {chromedriver} or {chromium} \
             (install Debian's chromium and chromium-driver, or set INSIGHT_TEST_CHROMEDRIVER and INSIGHT_TEST_CHROMIUM)"
        );
        return;
    }
    let driver = ChromeDriver::start(chromedriver.as_ref()).await;
    let browser = Browser::open(&driver.url, &chromium).await;
    // The browser is closed whatever the outcome.
    let outcome = AssertUnwindSafe(take_the_interview(&browser)).catch_unwind().await;
    browser.quit().await;
    drop(driver);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn take_the_interview(browser: &Browser) {
    let started = Instant::now();
    let app = TestApp::start().await;
    let user = app.user().await;
    let project_id = app.project(&user, PROJECT).await;
    let guide = guide();
    let (status, created) = app
        .post(
            "/api/interviews/rooms",
            &user,
            json!({
                "project_id": project_id,
                "count": 1,
                "language": "en",
                "topics_for_respondent": "How you plan your working week",
                "interview_guide_override": guide,
            }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let room_id = created["rooms"][0]["id"].as_str().expect("room id").to_owned();
    let token = created["rooms"][0]["access_token"].as_str().expect("access token");

    // The join form, under the room's name (the project's, as none was given).
    browser.go(&app.url(&format!("/interview/{token}"))).await;
    assert_eq!(state(browser).await, "join");
    assert_eq!(browser.text(&browser.find("header h1").await).await, PROJECT);
    assert_eq!(browser.text(&browser.find("header .project").await).await, PROJECT);

    browser
        .type_into(&browser.find("#email").await, "respondent@example.org")
        .await;
    browser.click(&browser.find("#join").await).await;
    wait_for(browser, "the interview to start", async || {
        (state(browser).await == "interview").then_some(())
    })
    .await;
    let opening = wait_for_turns(browser, 1).await;
    assert!(
        opening[0].0 == "interviewer" && opening[0].1.ends_with(QUESTIONS[0]),
        "{opening:?}"
    );

    for (i, answer) in ANSWERS.iter().enumerate() {
        browser.type_into(&browser.find("#message").await, answer).await;
        browser.click(&browser.find("#send").await).await;
        let turns = wait_for_turns(browser, 2 * i + 3).await;
        assert_eq!(turns[2 * i + 1], ("respondent".to_owned(), (*answer).to_owned()));
        let expected = QUESTIONS.get(i + 1).copied().unwrap_or(phrases("en").closing);
        assert_eq!(turns[2 * i + 2], ("interviewer".to_owned(), expected.to_owned()));
        if i == 0 {
            // Shown as the text it is, not as markup: no image, its handler never ran
            // (the next question has come meanwhile, so an error event would have fired).
            let shown = browser.find("#log .turn.respondent").await;
            assert_eq!(browser.text(&shown).await, *answer);
            assert!(browser.find_all("#log img").await.is_empty());
            assert_eq!(
                browser.script("return document.body.dataset.pwned ?? null").await,
                Value::Null
            );
        }
    }

    // The interviewer closed after the last question, and the page says so.
    wait_for(browser, "the interview to complete", async || {
        (state(browser).await == "completed").then_some(())
    })
    .await;
    assert_eq!(
        browser.text(&browser.find("#state").await).await,
        "This interview is complete. Thank you!"
    );
    assert_eq!(
        browser.script("return document.getElementById('answer').hidden").await,
        true
    );

    let (status, room) = app.get(&format!("/api/interviews/rooms/{room_id}"), &user).await;
    assert_eq!(status, StatusCode::OK, "{room}");
    assert_eq!(room["status"], "completed", "{room}");
    let record_id = room["record_id"].as_str().expect("the completed room's record");
    let record = app.wait_finished(&user, record_id).await;
    let utterances = record["utterances"].as_array().expect("utterances");
    let page_turns = turns(browser).await;
    assert_eq!(utterances.len(), page_turns.len(), "{record}");
    for (i, (utterance, (who, text))) in utterances.iter().zip(&page_turns).enumerate() {
        let respondent = i % 2 == 1;
        assert_eq!(who, if respondent { "respondent" } else { "interviewer" });
        assert_eq!(
            utterance["speaker"],
            if respondent { "Respondent" } else { "Interviewer" }
        );
        assert_eq!(utterance["is_respondent"], respondent, "{utterance}");
        assert_eq!(utterance["text"], text.as_str(), "{utterance}");
    }
    let answered: Vec<&str> = utterances
        .iter()
        .filter(|u| u["is_respondent"] == true)
        .map(|u| u["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(answered, ANSWERS);

    // Nothing on the page broke its Content-Security-Policy. The marker shows the log
    // is really read.
    browser
        .script("console.warn('insight-browser-test: console is logged')")
        .await;
    match browser.console_log().await {
        Some(entries) => {
            let messages: Vec<&str> = entries.iter().filter_map(|e| e["message"].as_str()).collect();
            assert!(
                messages.iter().any(|m| m.contains("insight-browser-test")),
                "{messages:#?}"
            );
            assert!(
                !messages.iter().any(|m| m.contains("Content Security Policy")),
                "{messages:#?}"
            );
        }
        // A driver without the (non-W3C) log endpoint: this one check cannot be made.
        None => eprintln!("the driver has no browser log; the CSP check was skipped"),
    }

    app.stop().await;
    eprintln!("the interview in the browser took {:?}", started.elapsed());
}

/// `document.body.dataset.state`.
async fn state(browser: &Browser) -> String {
    let state = browser.script("return document.body.dataset.state ?? null").await;
    state.as_str().unwrap_or_default().to_owned()
}

/// The conversation on the page: who (`interviewer` or `respondent`) and the turn's text,
/// in order.
async fn turns(browser: &Browser) -> Vec<(String, String)> {
    let turns = browser
        .script(
            "return [...document.querySelectorAll('#log .turn')].map((turn) => \
             [turn.classList.contains('respondent') ? 'respondent' : 'interviewer', turn.textContent])",
        )
        .await;
    let turns: Vec<(String, String)> = serde_json::from_value(turns).expect("turns");
    turns
}

/// The conversation once it has `count` turns, the last the interviewer's.
async fn wait_for_turns(browser: &Browser, count: usize) -> Vec<(String, String)> {
    wait_for(browser, &format!("{count} turns"), async || {
        let turns = turns(browser).await;
        (turns.len() == count && turns[count - 1].0 == "interviewer").then_some(turns)
    })
    .await
}

/// Polls `check` until it gives a value; after `WAIT` fails with what the page shows.
async fn wait_for<T>(browser: &Browser, what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    eventually(WAIT, format!("{what} never came"), async || {
        if let Some(value) = check().await {
            return Ok(value);
        }
        let page = browser
            .script("return {state: document.body.dataset.state, error: document.getElementById('error')?.textContent}")
            .await;
        Err(format!("the page: {page}, turns: {:#?}", turns(browser).await))
    })
    .await
}
