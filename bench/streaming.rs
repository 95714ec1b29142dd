//! The first streamed character in the browser. Run with `cargo bench --bench streaming`.
//!
//! Starts the real server (SQLite file) with the OpenAI-compatible engine against the
//! local model stub, which sends its first token 20 ms after a request and the rest of
//! the answer 300 ms later. A researcher signed in in headless Chromium asks a record a
//! question from the console's chat panel `INSIGHT_BENCH_QUESTIONS` (50) times, each in a
//! new thread, as a person would: typing, then Ask. The page's own script streams the
//! answer from the JSON API; the time from the stub sending its first token to that text
//! appearing in the page's answer is the latency a researcher feels beyond the model's.
//! Both ends are read on this machine's wall clock: the stub's moment from its monotonic
//! clock anchored to the wall clock once, the page's from `performance.timeOrigin +
//! performance.now()` when a MutationObserver sees the first character. Prints p50 and
//! p99 (target: p99 < 50 ms). A report, not a test: it exits 0 unless the run fails.

#[path = "../tests/common/openai_stub.rs"]
mod openai_stub;
#[path = "server_process.rs"]
mod server_process;
#[path = "stats.rs"]
mod stats;
#[path = "webdriver.rs"]
mod webdriver;

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use insight::{Server, Settings, Store};
use openai_stub::{OpenAiStub, Reply};
use webdriver::Chromium;

const PASSWORD: &str = "the benchmark's own passphrase";
const TRANSCRIPT: &str = "Interviewer: How do you pay for the tool today?\n\
    Anna: The invoices arrive late and I have to chase finance every month.\n\
    Interviewer: What would help?\n\
    Anna: Honestly the pricing page is confusing, I could not tell what the team plan costs.";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("streaming benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Converts the stub's monotonic moments to wall-clock milliseconds since the epoch.
struct WallClock {
    instant: Instant,
    epoch_ms: f64,
}

impl WallClock {
    fn now() -> Self {
        let epoch_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        Self {
            instant: Instant::now(),
            epoch_ms,
        }
    }

    fn epoch_ms(&self, at: Instant) -> f64 {
        if at >= self.instant {
            self.epoch_ms + at.duration_since(self.instant).as_secs_f64() * 1000.0
        } else {
            self.epoch_ms - self.instant.duration_since(at).as_secs_f64() * 1000.0
        }
    }
}

/// Asks the question in the page and answers the wall-clock moment its first character
/// appeared, once the answer is complete and the panel shows the stored thread.
const ASK: &str = "const done = arguments[arguments.length - 1];
    let first = null;
    const seen = () => {
      const answer = document.querySelector('#chat .message.answer.streaming .report');
      if (first === null && answer && answer.textContent.length > 0) first = performance.timeOrigin + performance.now();
    };
    const watcher = new MutationObserver(seen);
    watcher.observe(document.body, { subtree: true, childList: true, characterData: true });
    const field = document.getElementById('chat-message');
    field.value = 'What does Anna say about invoices?';
    field.form.requestSubmit();
    const started = performance.now();
    const wait = () => {
      const status = document.querySelector('#chat [data-chat-status]')?.textContent ?? '';
      if (!document.querySelector('#chat .streaming') && status === 'Answered.') {
        watcher.disconnect();
        done({ first, error: null });
      } else if (document.querySelector('#chat .message.answer .error')) {
        watcher.disconnect();
        done({ first: null, error: document.querySelector('#chat .message.answer .error').textContent });
      } else if (performance.now() - started > 20000) {
        watcher.disconnect();
        done({ first: null, error: 'no answer in 20 s' });
      } else {
        setTimeout(wait, 5);
      }
    };
    wait();";

async fn run() -> anyhow::Result<()> {
    let questions: usize = std::env::var("INSIGHT_BENCH_QUESTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let (stub_addr, stub) = OpenAiStub::start().await;
    stub.respond(|_| {
        Reply::pieces(["Anna ", "chases finance every month [Anna, #2]."])
            .delay(Duration::from_millis(20))
            .gap(Duration::from_millis(300))
            .usage(200, 12)
    });

    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let mut settings = Settings::for_database(&url);
    settings.storage.data_dir = dir.path().join("data");
    settings.model.llm_base_url = Some(format!("http://{stub_addr}/v1"));
    settings.model.llm_model = "bench".into();
    // No persona work in the background while answers are timed.
    settings.jobs.report_workers = Some(0);
    settings.quotas.threads_per_record = i64::try_from(questions + 20).unwrap_or(i64::MAX);
    let store = Store::connect(&url, 8).await?;
    let server = Server::start(settings, store.clone()).await?;
    let base = format!("http://{}", server.addr);
    let user = store.add_user("bench@example.org").await?.context("user")?;
    let phc = insight::app::accounts::password::hash(PASSWORD.to_owned()).await?;
    store.set_password_hash(user.id, &phc, None).await?;
    let (_, token) = store
        .issue_token(user.id, "bench", insight::domain::user::TokenScope::Write, None)
        .await?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let project: Value = client
        .post(format!("{base}/projects/"))
        .bearer_auth(&token)
        .json(&json!({ "name": "Bench" }))
        .send()
        .await?
        .json()
        .await?;
    let project = project["id"].as_str().context("project id")?;
    let record: Value = client
        .post(format!("{base}/projects/{project}/records"))
        .bearer_auth(&token)
        .json(&json!({ "title": "Anna", "text": TRANSCRIPT, "language": "en" }))
        .send()
        .await?
        .json()
        .await?;
    let record = record["id"].as_str().context("record id")?.to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status: Value = client
            .get(format!("{base}/insight/{record}/"))
            .bearer_auth(&token)
            .send()
            .await?
            .json()
            .await?;
        if status["status"] == "Finished" {
            break;
        }
        ensure!(Instant::now() < deadline, "the record did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cookie = webdriver::session_cookie(&client, &base, "bench@example.org", PASSWORD).await?;

    let Some(browser) = Chromium::open(1440, 900).await? else {
        println!("streaming benchmark skipped: no /usr/bin/chromium and /usr/bin/chromedriver");
        return Ok(());
    };
    browser.sign_in(&base, &cookie).await?;
    let clock = WallClock::now();
    let mut latencies = Vec::with_capacity(questions);
    // The first five warm up the page's caches and the connections.
    for n in 0..questions + 5 {
        browser.go(&format!("{base}/r/{record}?thread=new")).await?;
        let seen = browser.script_async(ASK).await?;
        if let Some(error) = seen["error"].as_str() {
            anyhow::bail!("question {n}: {error}");
        }
        let first = seen["first"].as_f64().context("no first character seen")?;
        let call = stub.last_call().context("the stub saw no call")?;
        let token = call.first_byte().context("the stub sent no token")?;
        if n >= 5 {
            latencies.push(first - clock.epoch_ms(token));
        }
    }
    browser.quit().await;
    let (p50, p99, max) = stats::summary(latencies);
    println!(
        "first streamed character in Chromium after the model stub's first token, {questions} questions: \
         p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms (target: p99 < 50 ms)"
    );
    Ok(())
}
