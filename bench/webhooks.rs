//! Webhook deliveries under load. Run with `cargo bench --bench webhooks`.
//!
//! Sets up the real server (SQLite file, synchronous=FULL) and a local receiver with 10
//! endpoints, all subscribed to every event. Then 1,000 text records are uploaded over
//! HTTP by 8 clients at once; each record's processing ends in `record.finished`, queued
//! in the same transaction for all 10 endpoints: 10,000 deliveries. Measures:
//!
//! 1. Deliveries per second, from the first delivery to the last.
//! 2. The delay from the change (the event's `timestamp`, the moment its transaction
//!    commits) to the receiver having the request: p50, p99 and max (target: p99 < 200 ms
//!    with a healthy receiver).
//!
//! Settings: `INSIGHT_BENCH_RECORDS` (1000), `INSIGHT_BENCH_ENDPOINTS` (10). A report,
//! not a test: it exits 0 unless the run fails.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::State;
use axum::routing::post;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use insight::{Server, Settings, Store};

mod stats;
use stats::percentile;

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
}

/// Per delivery: the delay from the event's timestamp, and when it came.
#[derive(Clone, Default)]
struct Receiver {
    arrivals: Arc<Mutex<Vec<(f64, Instant)>>>,
}

async fn receive(State(receiver): State<Receiver>, body: String) -> &'static str {
    let now = Utc::now();
    let arrived = Instant::now();
    let event: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let delay = event["timestamp"]
        .as_str()
        .and_then(|stamp| stamp.parse::<DateTime<Utc>>().ok())
        .map(|stamp| (now - stamp).num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0)
        .unwrap_or(f64::NAN);
    receiver.arrivals.lock().expect("lock").push((delay, arrived));
    "ok"
}

async fn run() -> anyhow::Result<()> {
    let records = env_number("INSIGHT_BENCH_RECORDS", 1000)? as usize;
    let endpoints = env_number("INSIGHT_BENCH_ENDPOINTS", 10)? as usize;
    let expected = records * endpoints;

    let receiver = Receiver::default();
    let router = axum::Router::new()
        .route("/hooks/{n}", post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver_addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });

    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let mut settings = Settings::for_database(&url);
    settings.storage.data_dir = dir.path().join("data");
    settings.webhooks.webhooks_allow_http = true;
    settings.webhooks.webhooks_allow_private = true;
    // No persona work in the background: what is measured is the outbox.
    settings.jobs.report_workers = Some(0);
    let store = Store::connect(&url, 16).await?;
    let server = Server::start(settings, store.clone()).await?;
    let base = format!("http://{}", server.addr);
    let user = store.add_user("bench@example.org").await?.context("user")?;
    let (_, token) = store
        .issue_token(user.id, "bench", insight::domain::user::TokenScope::Write, None)
        .await?;
    let client = reqwest::Client::new();

    for n in 0..endpoints {
        let response = client
            .post(format!("{base}/webhooks/endpoints"))
            .bearer_auth(&token)
            .json(&json!({ "url": format!("http://{receiver_addr}/hooks/{n}") }))
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("making an endpoint: {}", response.text().await?);
        }
    }
    let project: Value = client
        .post(format!("{base}/projects/"))
        .bearer_auth(&token)
        .json(&json!({ "name": "Bench" }))
        .send()
        .await?
        .json()
        .await?;
    let project_id = project["id"].as_str().context("project id")?.to_owned();

    let started = Instant::now();
    let uploads = futures_util::future::try_join_all((0..8).map(|worker| {
        let (client, base, token, project_id) = (client.clone(), base.clone(), token.clone(), project_id.clone());
        async move {
            for n in (worker..records).step_by(8) {
                let response = client
                    .post(format!("{base}/projects/{project_id}/records"))
                    .bearer_auth(&token)
                    .json(&json!({
                        "title": format!("Interview {n}"),
                        "text": format!("Interviewer: What happened?\nRespondent {n}: The invoice came late again."),
                    }))
                    .send()
                    .await?;
                if !response.status().is_success() {
                    bail!("upload {n}: {}", response.text().await?);
                }
            }
            Ok::<_, anyhow::Error>(())
        }
    }));
    uploads.await?;
    let uploaded = started.elapsed();

    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let count = receiver.arrivals.lock().expect("lock").len();
        if count >= expected {
            break;
        }
        if Instant::now() > deadline {
            bail!("only {count} of {expected} deliveries arrived in 5 minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let arrivals = receiver.arrivals.lock().expect("lock").clone();
    let first = arrivals.iter().map(|(_, at)| *at).min().context("no deliveries")?;
    let last = arrivals.iter().map(|(_, at)| *at).max().context("no deliveries")?;
    let mut delays: Vec<f64> = arrivals.iter().map(|(delay, _)| *delay).collect();
    delays.sort_by(f64::total_cmp);
    let span = (last - first).as_secs_f64().max(f64::EPSILON);

    println!("webhook deliveries: {records} records x {endpoints} endpoints = {expected} events");
    println!(
        "  uploads took {:.1} s; deliveries from first to last {:.1} s: {:.0} deliveries/s",
        uploaded.as_secs_f64(),
        span,
        arrivals.len() as f64 / span
    );
    println!(
        "  delay from change to delivery: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (target p99 < 200 ms)",
        percentile(&delays, 50.0),
        percentile(&delays, 99.0),
        delays.last().copied().unwrap_or(f64::NAN)
    );
    if arrivals.len() != expected {
        println!(
            "  note: {} deliveries for {expected} events (at least once)",
            arrivals.len()
        );
    }
    server.stop().await?;
    Ok(())
}

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("webhooks benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
