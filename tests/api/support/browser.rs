//! The console and the respondent's page in a real headless Chromium, over W3C WebDriver
//! (chromedriver, spoken to with reqwest): the driver and its sessions, a walk that always
//! closes its browsers, waiting for the page, a look at phone and desktop widths, and the
//! console's sign-in and forms. Runs where Debian's chromium and chromium-driver are
//! installed, or where `INSIGHT_TEST_CHROMEDRIVER` and `INSIGHT_TEST_CHROMIUM` name them;
//! elsewhere a walk says it was skipped.

use std::panic::AssertUnwindSafe;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures_util::FutureExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::accounts::PASSWORD;
use super::{TestApp, eventually};

/// How long anything in the page may take.
pub const WAIT: Duration = Duration::from_secs(15);

/// The key of a web element reference in WebDriver's JSON.
pub const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Where chromedriver and Chromium are (`INSIGHT_TEST_CHROMEDRIVER` and
/// `INSIGHT_TEST_CHROMIUM`, else Debian's), when both are there.
fn browser_paths() -> Option<(String, String)> {
    let named = |variable: &str, default: &str| {
        std::env::var(variable)
            .ok()
            .filter(|path| !path.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let chromedriver = named("INSIGHT_TEST_CHROMEDRIVER", "/usr/bin/chromedriver");
    let chromium = named("INSIGHT_TEST_CHROMIUM", "/usr/bin/chromium");
    (std::path::Path::new(&chromedriver).exists() && std::path::Path::new(&chromium).exists())
        .then_some((chromedriver, chromium))
}

/// A chromedriver process on a free port, killed when dropped.
pub struct ChromeDriver {
    process: Child,
    pub url: String,
}

impl ChromeDriver {
    pub async fn start(path: &std::ffi::OsStr) -> Self {
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
        eventually(WAIT, "chromedriver was not ready", async || {
            if let Ok(response) = client.get(format!("{}/status", driver.url)).send().await
                && let Ok(status) = response.json::<Value>().await
                && status["value"]["ready"] == true
            {
                return Ok(());
            }
            if let Ok(Some(exit)) = driver.process.try_wait() {
                panic!("chromedriver exited before it was ready: {exit}");
            }
            Err("")
        })
        .await;
        driver
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// One WebDriver session: the few commands the tests need.
pub struct Browser {
    http: reqwest::Client,
    /// `{driver}/session/{id}`.
    session: String,
}

impl Browser {
    pub async fn open(driver: &str, chromium: &str) -> Self {
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
    pub async fn try_command(&self, method: Method, path: &str, body: Value) -> Result<Value, (StatusCode, Value)> {
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

    pub async fn command(&self, method: Method, path: &str, body: Value) -> Value {
        self.try_command(method, path, body)
            .await
            .unwrap_or_else(|(status, error)| panic!("WebDriver {path}: {status} {error}"))
    }

    pub async fn go(&self, url: &str) {
        self.command(Method::POST, "/url", json!({ "url": url })).await;
    }

    /// The element `css` selects (the first one); fails when there is none.
    pub async fn find(&self, css: &str) -> String {
        let found = self
            .command(
                Method::POST,
                "/element",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        found[ELEMENT].as_str().expect("element reference").to_owned()
    }

    pub async fn find_all(&self, css: &str) -> Vec<String> {
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

    pub async fn click(&self, element: &str) {
        self.command(Method::POST, &format!("/element/{element}/click"), json!({}))
            .await;
    }

    pub async fn type_into(&self, element: &str, text: &str) {
        self.command(
            Method::POST,
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        )
        .await;
    }

    /// The element's text as the page shows it.
    pub async fn text(&self, element: &str) -> String {
        let text = self
            .command(Method::GET, &format!("/element/{element}/text"), Value::Null)
            .await;
        text.as_str().expect("element text").to_owned()
    }

    pub async fn script(&self, script: &str) -> Value {
        self.command(Method::POST, "/execute/sync", json!({ "script": script, "args": [] }))
            .await
    }

    /// The browser console's entries since the last call; `None` when the driver has no
    /// log endpoint.
    pub async fn console_log(&self) -> Option<Vec<Value>> {
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
    pub async fn keys(&self, keys: &str) {
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
    pub async fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let png = self.command(Method::GET, "/screenshot", Value::Null).await;
        base64::engine::general_purpose::STANDARD
            .decode(png.as_str().expect("base64"))
            .expect("a PNG")
    }

    /// Makes the window `width` pixels wide.
    pub async fn set_width(&self, width: u32, height: u32) {
        self.command(
            Method::POST,
            "/window/rect",
            json!({ "width": width, "height": height }),
        )
        .await;
    }

    pub async fn quit(&self) {
        if let Err((status, error)) = self.try_command(Method::DELETE, "", Value::Null).await {
            eprintln!("closing the browser failed: {status} {error}");
        }
    }
}

/// How a walk in Chromium ended: `then` stops the app, and then fails as the walk did.
#[must_use = "stop the app with `.then(app.stop())`"]
pub struct Walked(std::thread::Result<()>);

impl Walked {
    /// Runs `stop` (the app's `stop()`), then passes on the walk's panic, if there was one.
    pub async fn then(self, stop: impl Future<Output = ()>) {
        stop.await;
        if let Err(panic) = self.0 {
            std::panic::resume_unwind(panic);
        }
    }
}

/// Runs `walk` in a headless Chromium: `N` browsers of one chromedriver (a second is a
/// respondent's or a member's own session), all closed afterwards, even when the walk
/// panics. Where no browser is installed it says that `what` was skipped and runs nothing.
pub async fn in_chromiums<const N: usize>(what: &str, walk: impl AsyncFnOnce(&[Browser; N])) -> Walked {
    let Some((chromedriver, chromium)) = browser_paths() else {
        eprintln!("skipped {what}: no chromedriver or chromium (see browser.rs)");
        return Walked(Ok(()));
    };
    let driver = ChromeDriver::start(chromedriver.as_ref()).await;
    let mut opened = Vec::with_capacity(N);
    for _ in 0..N {
        opened.push(Browser::open(&driver.url, &chromium).await);
    }
    let Ok(browsers) = <[Browser; N]>::try_from(opened) else {
        unreachable!("{N} browsers were opened");
    };
    let outcome = AssertUnwindSafe(walk(&browsers)).catch_unwind().await;
    for browser in &browsers {
        browser.quit().await;
    }
    drop(driver);
    Walked(outcome)
}

/// [`in_chromiums`] with one browser.
pub async fn in_chromium(what: &str, walk: impl AsyncFnOnce(&Browser)) -> Walked {
    in_chromiums(what, async |[browser]: &[Browser; 1]| walk(browser).await).await
}

/// Waits until `script` (a function body) returns something other than null or false.
pub async fn until(browser: &Browser, what: &str, script: &str) -> Value {
    eventually(WAIT, format!("{what} never came; the page says"), async || {
        let value = browser.script(script).await;
        if !value.is_null() && value != Value::Bool(false) {
            return Ok(value);
        }
        let page = browser.script("return document.body.innerText.slice(0, 2000)").await;
        Err(format!("\n{}", page.as_str().unwrap_or_default()))
    })
    .await
}

/// Saves the page at phone and desktop widths and checks it with axe-core.
pub async fn look(browser: &Browser, name: &str) {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots");
    std::fs::create_dir_all(&folder).expect("screenshot folder");
    for (width, height) in [(375, 812), (1440, 900)] {
        browser.set_width(width, height).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        // Saved first, so that a page that fails the check below can be looked at.
        std::fs::write(folder.join(format!("{name}-{width}.png")), browser.screenshot().await).expect("save");
        let overflow = browser
            .script(
                "return document.documentElement.scrollWidth > window.innerWidth + 1 \
                 ? [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1) \
                   .slice(0, 5).map((e) => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 60)) : false",
            )
            .await;
        assert_eq!(overflow, Value::Bool(false), "{name} scrolls sideways at {width} px");
    }
    axe(browser, name).await;
}

/// Checks the page with axe-core (its script is `INSIGHT_TEST_AXE`): no serious or critical
/// violation; skipped, and said so, where it is not set.
pub async fn axe(browser: &Browser, name: &str) {
    let Ok(path) = std::env::var("INSIGHT_TEST_AXE") else {
        eprintln!("axe-core skipped on {name}: INSIGHT_TEST_AXE is not set (.ci/run sets it)");
        return;
    };
    let source = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    // The page's CSP forbids inline script, but WebDriver's scripts run regardless.
    browser.script(&format!("{source}\nreturn true;")).await;
    let violations = browser
        .command(
            Method::POST,
            "/execute/async",
            json!({ "script": "const done = arguments[arguments.length - 1]; \
                axe.run(document, { resultTypes: ['violations'] }).then((r) => done(r.violations \
                .filter((v) => v.impact === 'serious' || v.impact === 'critical') \
                .map((v) => v.id + ': ' + v.help + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')')))", "args": [] }),
        )
        .await;
    assert_eq!(violations, json!([]), "axe-core on {name}");
}

/// Signs in on the console's page as `email`, whose password is [`PASSWORD`], and waits for
/// the projects page.
pub async fn sign_in(browser: &Browser, app: &TestApp, email: &str) {
    browser.go(&app.url("/")).await;
    until(browser, "the sign-in page", "return location.pathname === '/sign-in'").await;
    let email_field = browser.find("#email").await;
    browser.type_into(&email_field, email).await;
    let password = browser.find("#password").await;
    browser.type_into(&password, PASSWORD).await;
    // The keyboard's way: Enter in the password field submits the form.
    browser.type_into(&password, "\u{E007}").await;
    until(
        browser,
        "the projects page",
        "return location.pathname === '/' && document.querySelector('h1')?.textContent.includes('Projects')",
    )
    .await;
}

/// Submits the form around the element `css` finds, as its submit button would.
pub async fn submit(browser: &Browser, css: &str) {
    let done = browser
        .script(&format!(
            "const f = document.querySelector({css:?})?.form ?? document.querySelector({css:?})?.closest('form'); \
             if (!f) return false; f.requestSubmit(); return true"
        ))
        .await;
    assert_eq!(done, Value::Bool(true), "a form around {css}");
}

/// Sets a field's value (a select's option, or text replacing what is there).
pub async fn set(browser: &Browser, css: &str, value: &str) {
    let done = browser
        .script(&format!(
            "const e = document.querySelector({css:?}); if (!e) return false; e.value = {value:?}; return e.value === {value:?}"
        ))
        .await;
    assert_eq!(done, Value::Bool(true), "{css} takes {value}");
}
