//! The console's pages under a large project: 500 records and 50 reports.
//!
//! Starts the release binary on a fresh SQLite file, fills one project through the API
//! (500 pasted transcripts, one of them an interview of 8,000 words, and 50 reports
//! written by the offline engine), signs in with a
//! password for a session, then asks each page `INSIGHT_BENCH_PAGE_REQUESTS` (200) times,
//! one after another, and prints the server time per page (p50, p99; target p99 < 10 ms)
//! and the bytes each page weighs with its stylesheet and script (target < 150 KB
//! uncompressed). Where Chromium and ChromeDriver are installed (as for the browser
//! tests), it also prints Chromium's navigation timing to `DOMContentLoaded` for the
//! project page. `INSIGHT_BENCH_SAVE_PAGES` names a folder to save each page's HTML in.

#[path = "server_process.rs"]
mod server_process;
#[path = "stats.rs"]
mod stats;
#[path = "webdriver.rs"]
mod webdriver;
#[path = "words.rs"]
mod words;

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use server_process::ServerProcess;
use webdriver::Chromium;

const RECORDS: usize = 500;
/// The words of the long interview whose transcript page is measured.
const LONG_WORDS: usize = 8000;
const REPORTS: usize = 50;
const PASSWORD: &str = "the benchmark's own passphrase";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("console benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let requests: usize = std::env::var("INSIGHT_BENCH_PAGE_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let database_url = format!("sqlite://{}", dir.path().join("insight.db").display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url", &database_url])
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("RUST_LOG", "info");
    let server = ServerProcess::start(command).await?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let api = |method: reqwest::Method, path: &str| {
        client
            .request(method, format!("{}{path}", server.base))
            .bearer_auth(&server.token)
    };

    eprintln!("filling a project with {RECORDS} records and {REPORTS} reports ...");
    let project: Value = api(reqwest::Method::POST, "/projects/")
        .json(&json!({ "name": "Checkout study", "research_goals": "Why do buyers abandon the cart?" }))
        .send()
        .await?
        .json()
        .await?;
    let project = project["id"].as_str().context("project id")?.to_owned();
    let mut records = Vec::new();
    for n in 0..RECORDS {
        let text = format!(
            "Interviewer: What happened at checkout, customer {n}?\nRespondent {n}: The shipping cost surprised me, \
             so I left the shop and bought elsewhere.\nInterviewer: What would have kept you?\nRespondent {n}: \
             Knowing the full price on the product page, before the last step."
        );
        let record: Value = api(reqwest::Method::POST, &format!("/projects/{project}/records"))
            .json(&json!({ "title": format!("Interview {n}"), "text": text }))
            .send()
            .await?
            .json()
            .await?;
        records.push(record["id"].as_str().context("record id")?.to_owned());
    }
    let long: Value = api(reqwest::Method::POST, &format!("/projects/{project}/records"))
        .json(&json!({ "title": "A long interview", "text": long_interview() }))
        .send()
        .await?
        .json()
        .await?;
    let long = long["id"].as_str().context("record id")?.to_owned();
    let preset: Value = api(reqwest::Method::GET, "/presets/system/")
        .send()
        .await?
        .json()
        .await?;
    let preset = preset[0]["id"].as_str().context("a system preset")?.to_owned();
    let mut reports = Vec::new();
    for (n, record) in records.iter().take(REPORTS).enumerate() {
        let report: Value = api(reqwest::Method::POST, &format!("/projects/{project}/reports"))
            .json(&json!({ "title": format!("Findings {n}"), "preset_id": preset, "records_ids": [record] }))
            .send()
            .await?
            .json()
            .await?;
        reports.push(report["id"].as_str().context("report id")?.to_owned());
    }
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let list: Value = api(reqwest::Method::GET, &format!("/projects/{project}/reports?limit=500"))
            .send()
            .await?
            .json()
            .await?;
        let done = list
            .as_array()
            .map_or(0, |l| l.iter().filter(|r| r["status"] == "completed").count());
        if done == REPORTS {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "reports not written after 5 minutes ({done} of {REPORTS})"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // A password for the admin (the CLI reads it from stdin), then a session.
    let mut set = std::process::Command::new(env!("CARGO_BIN_EXE_insight"))
        .args([
            "users",
            "set-password",
            "admin@localhost",
            "--database-url",
            &database_url,
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    {
        use std::io::Write;
        set.stdin
            .take()
            .context("stdin")?
            .write_all(format!("{PASSWORD}\n").as_bytes())?;
    }
    ensure!(set.wait()?.success(), "insight users set-password failed");
    let cookie = webdriver::session_cookie(&client, &server.base, "admin@localhost", PASSWORD).await?;

    let pages = [
        ("projects", "/".to_owned()),
        ("project (500 records, 50 reports)", format!("/p/{project}")),
        ("record", format!("/r/{}", records[0])),
        ("record (8,000 words)", format!("/r/{long}")),
        ("report", format!("/p/{project}/reports/{}", reports[0])),
    ];
    println!(
        "console pages, {requests} requests each, one at a time (targets: p99 < 10 ms, page with CSS and JS < 150 KB)"
    );
    println!(
        "{:<36} {:>8} {:>8} {:>10} {:>12}",
        "page", "p50 ms", "p99 ms", "HTML KB", "+CSS+JS KB"
    );
    for (name, path) in &pages {
        let url = format!("{}{path}", server.base);
        let mut times = Vec::with_capacity(requests);
        let mut html = String::new();
        for _ in 0..requests + 10 {
            let started = Instant::now();
            let response = client.get(&url).header("cookie", &cookie).send().await?;
            ensure!(response.status() == 200, "{path}: {}", response.status());
            html = response.text().await?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        if let Some(folder) = std::env::var_os("INSIGHT_BENCH_SAVE_PAGES") {
            // To see where a page's bytes go.
            let file = name.replace(|c: char| !c.is_ascii_alphanumeric(), "-");
            std::fs::write(std::path::Path::new(&folder).join(format!("{file}.html")), &html)?;
        }
        let times = times.split_off(10);
        let (p50, p99, _) = stats::summary(times);
        let mut total = html.len();
        for link in assets_of(&html) {
            let body = client
                .get(format!("{}{link}", server.base))
                .send()
                .await?
                .bytes()
                .await?;
            total += body.len();
        }
        println!(
            "{name:<36} {p50:>8.2} {p99:>8.2} {:>10.1} {:>12.1}",
            html.len() as f64 / 1024.0,
            total as f64 / 1024.0
        );
    }
    if let Some(ms) = dom_content_loaded(&server.base, &cookie, &format!("/p/{project}")).await? {
        println!("Chromium: project page to DOMContentLoaded {ms:.1} ms (navigation timing)");
    } else {
        println!("Chromium: skipped (no /usr/bin/chromium and /usr/bin/chromedriver)");
    }
    Ok(())
}

/// An interview of [`LONG_WORDS`] words in turns of 5 to 80, the interviewer asking and
/// the respondent answering, as pasted text.
fn long_interview() -> String {
    let mut rng = words::Rng(0x00c0_ffee);
    let vocabulary = words::Vocabulary::new(&mut rng);
    let (mut lines, mut said) = (Vec::new(), 0);
    while said < LONG_WORDS {
        let len = (5 + rng.below(76)).min(LONG_WORDS - said);
        let mut text = String::new();
        for i in 0..len {
            let word = vocabulary.draw(&mut rng).to_owned();
            words::push_word(&mut text, &word, i, len, &mut rng);
        }
        let speaker = if lines.len() % 2 == 0 {
            "Interviewer"
        } else {
            "Respondent"
        };
        lines.push(format!("{speaker}: {text}."));
        said += len;
    }
    lines.join("\n")
}

/// The stylesheet and scripts a page links to.
fn assets_of(html: &str) -> Vec<String> {
    html.split('"')
        .filter(|part| part.starts_with("/assets/") && !part.ends_with(".png"))
        .map(str::to_owned)
        .collect()
}

/// Chromium's `domContentLoadedEventEnd` for `path` (the median of five loads), when
/// Chromium and ChromeDriver are installed.
async fn dom_content_loaded(base: &str, cookie: &str, path: &str) -> anyhow::Result<Option<f64>> {
    let Some(browser) = Chromium::open(1440, 900).await? else {
        return Ok(None);
    };
    browser.sign_in(base, cookie).await?;
    let mut samples = Vec::new();
    for _ in 0..5 {
        browser.go(&format!("{base}{path}")).await?;
        let timing = browser
            .script("const n = performance.getEntriesByType('navigation')[0]; return n.domContentLoadedEventEnd - n.startTime;")
            .await?;
        samples.push(timing.as_f64().context("timing")?);
    }
    browser.quit().await;
    let (p50, _, _) = stats::summary(samples);
    Ok(Some(p50))
}
