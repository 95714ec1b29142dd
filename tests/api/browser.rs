//! The respondent's page in a real browser: headless Chromium driven over W3C WebDriver
//! (chromedriver, spoken to with reqwest), against a real server. Runs where Debian's
//! chromium and chromium-driver are installed, or where `INSIGHT_TEST_CHROMEDRIVER` and
//! `INSIGHT_TEST_CHROMIUM` name them; elsewhere it says it was skipped and passes.

use std::panic::AssertUnwindSafe;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use insight::app::interview::phrases::phrases;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::TestApp;

/// How long anything in the page may take.
pub(crate) const WAIT: Duration = Duration::from_secs(15);
/// The key of a web element reference in WebDriver's JSON.
pub(crate) const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

const PROJECT: &str = "Weekly planning study";
/// The interview guide's questions, in order.
pub(crate) const QUESTIONS: [&str; 3] = [
    "How do you plan your week?",
    "What gets in the way of your plans?",
    "What would make planning easier for you?",
];

/// The interview guide the interviewer follows: `QUESTIONS`, numbered.
pub(crate) fn guide() -> String {
    QUESTIONS
        .iter()
        .enumerate()
        .map(|(i, question)| format!("{}. {question}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}
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
    assert_eq!(browser.state().await, "join");
    assert_eq!(browser.text(&browser.find("header h1").await).await, PROJECT);
    assert_eq!(browser.text(&browser.find("header .project").await).await, PROJECT);

    browser
        .type_into(&browser.find("#email").await, "respondent@example.org")
        .await;
    browser.click(&browser.find("#join").await).await;
    browser
        .wait_for("the interview to start", async || {
            (browser.state().await == "interview").then_some(())
        })
        .await;
    let opening = browser.wait_for_turns(1).await;
    assert!(
        opening[0].0 == "interviewer" && opening[0].1.ends_with(QUESTIONS[0]),
        "{opening:?}"
    );

    for (i, answer) in ANSWERS.iter().enumerate() {
        browser.type_into(&browser.find("#message").await, answer).await;
        browser.click(&browser.find("#send").await).await;
        let turns = browser.wait_for_turns(2 * i + 3).await;
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
    browser
        .wait_for("the interview to complete", async || {
            (browser.state().await == "completed").then_some(())
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
    let page_turns = browser.turns().await;
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

/// A chromedriver process on a free port, killed when dropped.
pub(crate) struct ChromeDriver {
    process: Child,
    pub(crate) url: String,
}

impl ChromeDriver {
    pub(crate) async fn start(path: &std::ffi::OsStr) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let process = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("start {}: {error}", path.display()));
        let mut driver = Self {
            process,
            url: format!("http://127.0.0.1:{port}"),
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(response) = client.get(format!("{}/status", driver.url)).send().await
                && let Ok(status) = response.json::<Value>().await
                && status["value"]["ready"] == true
            {
                return driver;
            }
            if let Ok(Some(exit)) = driver.process.try_wait() {
                panic!("chromedriver exited before it was ready: {exit}");
            }
            assert!(Instant::now() < deadline, "chromedriver was not ready after {WAIT:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// One WebDriver session: the few commands the test needs.
pub(crate) struct Browser {
    http: reqwest::Client,
    /// `{driver}/session/{id}`.
    session: String,
}

impl Browser {
    pub(crate) async fn open(driver: &str, chromium: &str) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("HTTP client");
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=390,844"],
            },
            "goog:loggingPrefs": { "browser": "ALL" },
        }}});
        let response = http
            .post(format!("{driver}/session"))
            .json(&capabilities)
            .send()
            .await
            .expect("new session sent");
        let answer: Value = response.json().await.expect("new session answer");
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"));
        Self {
            session: format!("{driver}/session/{id}"),
            http,
        }
    }

    /// A command's `value`, or the driver's status and error.
    pub(crate) async fn try_command(
        &self,
        method: Method,
        path: &str,
        body: Value,
    ) -> Result<Value, (StatusCode, Value)> {
        let mut request = self.http.request(method.clone(), format!("{}{path}", self.session));
        if method != Method::GET && method != Method::DELETE {
            request = request.json(&body);
        }
        let response = request.send().await.expect("WebDriver command sent");
        let status = response.status();
        let answer: Value = response.json().await.expect("WebDriver answer");
        if status.is_success() {
            Ok(answer["value"].clone())
        } else {
            Err((status, answer["value"].clone()))
        }
    }

    pub(crate) async fn command(&self, method: Method, path: &str, body: Value) -> Value {
        self.try_command(method, path, body)
            .await
            .unwrap_or_else(|(status, error)| panic!("WebDriver {path}: {status} {error}"))
    }

    pub(crate) async fn go(&self, url: &str) {
        self.command(Method::POST, "/url", json!({ "url": url })).await;
    }

    /// The element `css` selects (the first one); fails when there is none.
    pub(crate) async fn find(&self, css: &str) -> String {
        let found = self
            .command(
                Method::POST,
                "/element",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        found[ELEMENT].as_str().expect("element reference").to_owned()
    }

    pub(crate) async fn find_all(&self, css: &str) -> Vec<String> {
        let found = self
            .command(
                Method::POST,
                "/elements",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        let found = found.as_array().expect("element list");
        found
            .iter()
            .map(|e| e[ELEMENT].as_str().expect("element reference").to_owned())
            .collect()
    }

    pub(crate) async fn click(&self, element: &str) {
        self.command(Method::POST, &format!("/element/{element}/click"), json!({}))
            .await;
    }

    pub(crate) async fn type_into(&self, element: &str, text: &str) {
        self.command(
            Method::POST,
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        )
        .await;
    }

    /// The element's text as the page shows it.
    pub(crate) async fn text(&self, element: &str) -> String {
        let text = self
            .command(Method::GET, &format!("/element/{element}/text"), Value::Null)
            .await;
        text.as_str().expect("element text").to_owned()
    }

    pub(crate) async fn script(&self, script: &str) -> Value {
        self.command(Method::POST, "/execute/sync", json!({ "script": script, "args": [] }))
            .await
    }

    /// `document.body.dataset.state`.
    async fn state(&self) -> String {
        let state = self.script("return document.body.dataset.state ?? null").await;
        state.as_str().unwrap_or_default().to_owned()
    }

    /// The conversation on the page: who (`interviewer` or `respondent`) and the
    /// turn's text, in order.
    async fn turns(&self) -> Vec<(String, String)> {
        let turns = self
            .script(
                "return [...document.querySelectorAll('#log .turn')].map((turn) => \
                 [turn.classList.contains('respondent') ? 'respondent' : 'interviewer', turn.textContent])",
            )
            .await;
        let turns: Vec<(String, String)> = serde_json::from_value(turns).expect("turns");
        turns
    }

    /// The conversation once it has `count` turns, the last the interviewer's.
    async fn wait_for_turns(&self, count: usize) -> Vec<(String, String)> {
        self.wait_for(&format!("{count} turns"), async || {
            let turns = self.turns().await;
            (turns.len() == count && turns[count - 1].0 == "interviewer").then_some(turns)
        })
        .await
    }

    /// Polls `check` until it gives a value; after `WAIT` fails with what the page shows.
    async fn wait_for<T>(&self, what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(value) = check().await {
                return value;
            }
            if Instant::now() >= deadline {
                let page = self
                    .script("return {state: document.body.dataset.state, error: document.getElementById('error')?.textContent}")
                    .await;
                panic!(
                    "waited {WAIT:?} for {what}; the page: {page}, turns: {:#?}",
                    self.turns().await
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The browser console's entries since the last call; `None` when the driver has no
    /// log endpoint.
    pub(crate) async fn console_log(&self) -> Option<Vec<Value>> {
        match self
            .try_command(Method::POST, "/se/log", json!({ "type": "browser" }))
            .await
        {
            Ok(entries) => Some(entries.as_array().expect("log entries").clone()),
            Err((StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED, _)) => None,
            Err((status, error)) => panic!("browser log: {status} {error}"),
        }
    }

    /// Presses keys (WebDriver's key codes: "\u{E004}" Tab, "\u{E007}" Enter) on whatever
    /// has the focus, as a person at the keyboard would.
    pub(crate) async fn keys(&self, keys: &str) {
        let mut actions = Vec::new();
        for key in keys.chars() {
            actions.push(json!({ "type": "keyDown", "value": key.to_string() }));
            actions.push(json!({ "type": "keyUp", "value": key.to_string() }));
        }
        self.command(
            Method::POST,
            "/actions",
            json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] }),
        )
        .await;
    }

    /// A PNG of the window as it is now.
    pub(crate) async fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let png = self.command(Method::GET, "/screenshot", Value::Null).await;
        base64::engine::general_purpose::STANDARD
            .decode(png.as_str().expect("base64"))
            .expect("a PNG")
    }

    /// Makes the window `width` pixels wide.
    pub(crate) async fn set_width(&self, width: u32, height: u32) {
        self.command(
            Method::POST,
            "/window/rect",
            json!({ "width": width, "height": height }),
        )
        .await;
    }

    pub(crate) async fn quit(&self) {
        if let Err((status, error)) = self.try_command(Method::DELETE, "", Value::Null).await {
            eprintln!("closing the browser failed: {status} {error}");
        }
    }
}
