//! Report generation throughput against a model: 1,000 reports of one prompt each, on
//! the release binary as its own process (SQLite file, synchronous=FULL) with the
//! OpenAI-compatible engine, against a local stub of the Chat Completions API that
//! answers after a fixed latency. Run with `cargo bench --bench generation`.
//!
//! Prints the wall time from the first report queued to the last completed, the ideal
//! (calls x latency / concurrency), the service's overhead per call ((wall - ideal) x
//! concurrency / calls), the most calls the stub saw at once, and the server's peak RSS.
//! The latency in the ideal is the one the stub really took: it times each call from the
//! request's arrival to its answer, and its sleep lasts a little longer than asked (tokio's
//! timer rounds up to the next millisecond and the stub's task must be scheduled), which is
//! the model's time, not the service's. The ideal with the nominal latency is printed too.
//!
//! The overhead is the time the model's slots sat idle, per call, and it is split by
//! where that happened: filling the slots at the start, handing a freed slot to the next
//! call, and the end. The end includes the last round's empty slots, which no service
//! avoids when the calls do not divide into rounds (1,000 calls make 62 full rounds of 16
//! and one of 8: 8 slots x the latency, 0.41 ms per call at 51 ms).
//!
//! Only the reports' calls are counted: the record's persona, which the model is asked
//! for too, is settled before the clock starts, and so are the clients' connections.
//! Settings: `INSIGHT_BENCH_REPORTS` (default 1000), `INSIGHT_BENCH_LATENCY_MS` (50),
//! `INSIGHT_BENCH_CONCURRENCY` (16: `INSIGHT_LLM_CONCURRENCY`), `INSIGHT_BENCH_WORKERS`
//! (unset: the server's default, twice the concurrency), `INSIGHT_BENCH_CLIENTS` (32 API
//! clients queue the reports).
//! A report, not a test: it exits 0 unless the run itself fails.

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::State;
use axum::routing::post;
use futures_util::StreamExt;
use serde_json::{Value, json};

mod server_process;
use server_process::ServerProcess;
mod stats;
use stats::percentile;

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
}

/// The peak resident memory of process `pid`, in MB.
fn peak_rss_mb(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The CPU time process `pid` has used, user and system, in seconds (clock ticks of 1/100 s).
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|t| t.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0
}

#[derive(Clone)]
struct Stub {
    latency: Duration,
    in_flight: Arc<AtomicU64>,
    most_in_flight: Arc<AtomicU64>,
    /// When each call arrived and when it was answered: the stub's own time is between.
    times: Arc<std::sync::Mutex<Vec<(Instant, Instant)>>>,
}

/// Chat Completions with a fixed latency: a short section quoting the transcript.
async fn complete(State(stub): State<Stub>, request: axum::extract::Request) -> axum::response::Response {
    let arrived = Instant::now();
    let now = stub.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    stub.most_in_flight.fetch_max(now, Ordering::Relaxed);
    let request: Value = match axum::body::to_bytes(request.into_body(), usize::MAX).await {
        Ok(body) => serde_json::from_slice(&body).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    tokio::time::sleep_until((arrived + stub.latency).into()).await;
    stub.in_flight.fetch_sub(1, Ordering::Relaxed);
    let content =
        "Invoices arrive late.\n\n> \"The invoices arrive late and I have to chase finance every month.\" [Anna, #2]";
    let answer = axum::Json(json!({
        "id": "bench", "object": "chat.completion", "model": request["model"],
        "choices": [ { "index": 0, "message": { "role": "assistant", "content": content }, "finish_reason": "stop" } ],
        "usage": { "prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240 }
    }));
    stub.times.lock().expect("times").push((arrived, Instant::now()));
    axum::response::IntoResponse::into_response(answer)
}

/// Where the model's slots sat idle in a run. Over the run, `concurrency x wall` is the
/// stub's busy time plus these: each slot waits for its first call (the ramp), for the
/// next call after each answer (hand-offs: the n-th answer frees the slot that the
/// (n + concurrency)-th call takes), and after its last answer until the end is seen.
struct Idle {
    ramp_ms: f64,
    /// Each hand-off, sorted.
    handoff_ms: Vec<f64>,
    /// Each hand-off with when its slot was freed, in the order freed.
    handoffs_at: Vec<(f64, f64)>,
    end_ms: f64,
    /// Slots with no call in the last round.
    empty_last_round: u64,
    first_call_ms: f64,
    full_ms: f64,
    last_answer_ms: f64,
}

impl Idle {
    fn of(times: &[(Instant, Instant)], started: Instant, wall: Duration, concurrency: usize) -> Self {
        let ms = |instant: Instant| {
            if instant >= started {
                instant.duration_since(started).as_secs_f64() * 1000.0
            } else {
                -(started.duration_since(instant).as_secs_f64() * 1000.0)
            }
        };
        let mut arrivals: Vec<f64> = times.iter().map(|(arrived, _)| ms(*arrived)).collect();
        let mut answers: Vec<f64> = times.iter().map(|(_, answered)| ms(*answered)).collect();
        arrivals.sort_by(f64::total_cmp);
        answers.sort_by(f64::total_cmp);
        let slots = concurrency.min(arrivals.len());
        let handoffs_at: Vec<(f64, f64)> = arrivals[slots..]
            .iter()
            .zip(&answers)
            .map(|(arrived, freed)| (*freed, arrived - freed))
            .collect();
        let mut handoff_ms: Vec<f64> = handoffs_at.iter().map(|(_, ms)| *ms).collect();
        handoff_ms.sort_by(f64::total_cmp);
        let wall_ms = wall.as_secs_f64() * 1000.0;
        let calls = times.len() as u64;
        Self {
            ramp_ms: arrivals[..slots].iter().sum(),
            handoff_ms,
            handoffs_at,
            end_ms: answers[answers.len() - slots..]
                .iter()
                .map(|answered| wall_ms - answered)
                .sum(),
            empty_last_round: match calls % concurrency as u64 {
                0 => 0,
                rest => concurrency as u64 - rest,
            },
            first_call_ms: arrivals.first().copied().unwrap_or(f64::NAN),
            full_ms: arrivals.get(slots.saturating_sub(1)).copied().unwrap_or(f64::NAN),
            last_answer_ms: answers.last().copied().unwrap_or(f64::NAN),
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let reports = env_number("INSIGHT_BENCH_REPORTS", 1000)?;
    let latency = Duration::from_millis(env_number("INSIGHT_BENCH_LATENCY_MS", 50)?);
    let concurrency = usize::try_from(env_number("INSIGHT_BENCH_CONCURRENCY", 16)?)?;
    let clients = usize::try_from(env_number("INSIGHT_BENCH_CLIENTS", 32)?)?.max(1);

    let stub = Stub {
        latency,
        in_flight: Arc::default(),
        most_in_flight: Arc::default(),
        times: Arc::default(),
    };
    let router = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let stub_addr = listener.local_addr()?;
    // A model server answers as soon as its latency is over: no Nagle delay on top.
    let connections = Arc::new(AtomicU64::new(0));
    let counted = connections.clone();
    let listener = axum::serve::ListenerExt::tap_io(listener, move |tcp| {
        counted.fetch_add(1, Ordering::Relaxed);
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });

    let dir = tempfile::tempdir()?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command.args(["serve", "--addr", "127.0.0.1:0"]);
    // Only the settings below, whatever the caller's environment says.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INSIGHT_") {
            command.env_remove(name);
        }
    }
    command
        .env(
            "INSIGHT_DATABASE_URL",
            format!("sqlite://{}", dir.path().join("bench.db").display()),
        )
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("INSIGHT_LLM_BASE_URL", format!("http://{stub_addr}/v1"))
        .env("INSIGHT_LLM_CONCURRENCY", concurrency.to_string())
        // The persona's failed attempts (below) retry at once rather than over a minute;
        // the reports' calls never fail.
        .env("INSIGHT_JOB_RETRY_BASE_SECONDS", "0.01")
        .env("RUST_LOG", "warn,insight=info")
        .env("NO_COLOR", "1");
    if let Ok(workers) = std::env::var("INSIGHT_BENCH_WORKERS") {
        command.env("INSIGHT_REPORT_WORKERS", workers);
    }
    let server = ServerProcess::start(command).await?;
    let base = server.base.clone();
    let token = server.token.clone();
    let client = reqwest::Client::new();
    let send = |method: reqwest::Method, path: String, body: Option<Value>| {
        let mut request = client.request(method, format!("{base}{path}")).bearer_auth(&token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        async move {
            let response = request.send().await?;
            let status = response.status();
            let value: Value = response.json().await.unwrap_or(Value::Null);
            if !status.is_success() {
                bail!("{status}: {value}");
            }
            anyhow::Ok(value)
        }
    };

    let project = send(
        reqwest::Method::POST,
        "/projects/".into(),
        Some(json!({ "name": "Bench" })),
    )
    .await?;
    let project_id = project["id"].as_str().context("project id")?.to_owned();
    let text = "Interviewer: How do you pay?\nAnna: The invoices arrive late and I have to chase finance every month.";
    let record = send(
        reqwest::Method::POST,
        format!("/projects/{project_id}/records"),
        Some(json!({ "title": "Anna", "text": text })),
    )
    .await?;
    let record_id = record["id"].as_str().context("record id")?.to_owned();
    while send(reqwest::Method::GET, format!("/insight/{record_id}/"), None).await?["status"] != "Finished" {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The record's persona is asked of the model too (the stub's answer is no persona:
    // after three attempts it gives up for minutes). Let that settle first, so that the
    // run counts only the reports' calls.
    loop {
        let persona = client
            .get(format!("{base}/insight/{record_id}/persona-report"))
            .bearer_auth(&token)
            .send()
            .await?;
        match persona.status().as_u16() {
            200 | 503 => break,
            202 => tokio::time::sleep(Duration::from_millis(20)).await,
            other => bail!("the persona answered {other}"),
        }
    }
    stub.times.lock().expect("times").clear();
    let prompt = send(
        reqwest::Method::POST,
        "/prompts/".into(),
        Some(json!({ "title": "Billing", "text": "What do customers say about invoices?" })),
    )
    .await?;

    println!(
        "Generation benchmark: {reports} reports of one prompt, model stub latency {} ms, {concurrency} model calls \
         at once (INSIGHT_LLM_CONCURRENCY), report workers {}, SQLite, the server as its own process",
        latency.as_millis(),
        std::env::var("INSIGHT_BENCH_WORKERS").unwrap_or_else(|_| format!("{} (the default)", 2 * concurrency))
    );
    // The clients' connections are opened before the clock starts: their handshakes are
    // the benchmark's, not the service's work per call.
    let warm: Vec<anyhow::Result<reqwest::Response>> = futures_util::stream::iter(0..clients)
        .map(|_| async { Ok(client.get(format!("{base}/healthz")).send().await?) })
        .buffer_unordered(clients)
        .collect()
        .await;
    for response in warm {
        response?.error_for_status()?;
    }
    let (started, cpu_before) = (Instant::now(), cpu_seconds(&server.pid()));
    // How busy the model is, sampled every 5 ms: while reports are queued, and after.
    let samples = Arc::new(std::sync::Mutex::new(Vec::<(f64, u64)>::new()));
    let sampler = {
        let (samples, in_flight) = (samples.clone(), stub.in_flight.clone());
        tokio::spawn(async move {
            loop {
                let at = started.elapsed().as_secs_f64();
                samples
                    .lock()
                    .expect("samples")
                    .push((at, in_flight.load(Ordering::Relaxed)));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let first_queued = std::sync::OnceLock::new();
    // Queued by `INSIGHT_BENCH_CLIENTS` (32) clients at once, as a team's tools would.
    let created: Vec<anyhow::Result<Value>> = futures_util::stream::iter(0..reports)
        .map(|n| {
            let body =
                json!({ "title": format!("Report {n}"), "prompts_ids": [prompt["id"]], "reasoning_mode": "fast" });
            let request = send(
                reqwest::Method::POST,
                format!("/projects/{project_id}/reports"),
                Some(body),
            );
            let first_queued = &first_queued;
            async move {
                let report = request.await;
                first_queued.get_or_init(|| started.elapsed());
                report
            }
        })
        .buffer_unordered(clients)
        .collect()
        .await;
    let mut ids = Vec::new();
    for report in created {
        ids.push(report?["id"].as_str().context("report id")?.to_owned());
    }
    let queued = started.elapsed();
    // Wait on the server's own counter (cheap), not on listing 1,000 reports over and over.
    let metrics_url = format!("{base}/metrics");
    loop {
        let page = client.get(&metrics_url).send().await?.text().await?;
        let settled: f64 = page
            .lines()
            .filter(|line| line.starts_with("insight_jobs_total") && line.contains("report.generate"))
            .filter(|line| line.contains("result=\"done\"") || line.contains("result=\"failed\""))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        if settled >= ids.len() as f64 {
            break;
        }
        // Every 25 ms while most are still to come (a page of metrics costs the server
        // about 0.2 ms), every millisecond for the last two rounds, so that the end is
        // seen within a millisecond of it.
        let left = ids.len() as f64 - settled;
        let poll = if left > 2.0 * concurrency as f64 { 25 } else { 1 };
        tokio::time::sleep(Duration::from_millis(poll)).await;
    }
    let wall = started.elapsed();
    let cpu = cpu_seconds(&server.pid()) - cpu_before;
    sampler.abort();
    let samples = samples.lock().expect("samples").clone();
    let mean = |from: f64, to: f64| {
        let window: Vec<f64> = samples
            .iter()
            .filter(|(at, _)| *at >= from && *at < to)
            .map(|(_, n)| *n as f64)
            .collect();
        window.iter().sum::<f64>() / window.len().max(1) as f64
    };
    let times = stub.times.lock().expect("times").clone();
    let calls = times.len() as u64;
    let all = send(reqwest::Method::GET, format!("/projects/{project_id}/reports"), None).await?;
    let completed = all
        .as_array()
        .context("report list")?
        .iter()
        .filter(|r| r["status"] == "completed")
        .count();
    if completed != ids.len() {
        bail!("{completed} of {} reports completed", ids.len());
    }
    let busy: Duration = times.iter().map(|(arrived, answered)| *answered - *arrived).sum();
    let model_ms = busy.as_secs_f64() * 1000.0 / calls as f64;
    let nominal = latency.as_secs_f64() * calls as f64 / concurrency as f64;
    let ideal = model_ms / 1000.0 * calls as f64 / concurrency as f64;
    let overhead_ms = (wall.as_secs_f64() - ideal) * concurrency as f64 / calls as f64 * 1000.0;
    println!(
        "queued {reports} reports through the API ({clients} clients at once) in {:.2} s",
        queued.as_secs_f64()
    );
    println!(
        "the model's time per call, as the stub took it: {model_ms:.2} ms on average (asked: {} ms)",
        latency.as_millis()
    );
    println!(
        "wall {:.2} s for {calls} model calls; ideal {ideal:.2} s; {:.1}% over the ideal (target <= 10%); \
         with the nominal latency: ideal {nominal:.2} s, {:.1}% over",
        wall.as_secs_f64(),
        (wall.as_secs_f64() / ideal - 1.0) * 100.0,
        (wall.as_secs_f64() / nominal - 1.0) * 100.0
    );
    println!("service overhead per call: {overhead_ms:.2} ms (target < 1 ms)");
    let first_queued = first_queued.get().map_or(f64::NAN, |at| at.as_secs_f64() * 1000.0);
    let idle = Idle::of(&times, started, wall, concurrency);
    let handoffs_ms: f64 = idle.handoff_ms.iter().sum();
    println!(
        "overhead per call, by where the model's slots sat idle: {:.2} ms filling them at the start, {:.2} ms \
         handing a freed slot to the next call, {:.2} ms at the end, of which {:.2} ms are the last round's empty \
         slots ({} calls in it), which no service avoids: {calls} calls do not fill rounds of {concurrency}",
        idle.ramp_ms / calls as f64,
        handoffs_ms / calls as f64,
        idle.end_ms / calls as f64,
        idle.empty_last_round as f64 * model_ms / calls as f64,
        concurrency as u64 - idle.empty_last_round,
    );
    println!(
        "a freed slot's next call reached the model after {:.2} ms on average (p50 {:.2}, p99 {:.2} ms; the \
         stub's own handling of the answer and the request included)",
        handoffs_ms / idle.handoff_ms.len().max(1) as f64,
        percentile(&idle.handoff_ms, 50.0),
        percentile(&idle.handoff_ms, 99.0)
    );
    // Hand-offs while the API was busy queueing reports, and after.
    let queued_ms = queued.as_secs_f64() * 1000.0;
    let handoffs_while = |queueing: bool| {
        let ms: Vec<f64> = idle
            .handoffs_at
            .iter()
            .filter(|(freed, _)| (*freed < queued_ms) == queueing)
            .map(|(_, ms)| *ms)
            .collect();
        (ms.len(), ms.iter().sum::<f64>() / ms.len().max(1) as f64)
    };
    let (during, after) = (handoffs_while(true), handoffs_while(false));
    println!(
        "hand-offs while reports were being queued: {} at {:.2} ms on average; after: {} at {:.2} ms",
        during.0, during.1, after.0, after.1
    );
    println!(
        "timeline: first report queued at {first_queued:.1} ms, first model call at {:.1} ms, all {concurrency} \
         slots busy at {:.1} ms, last answer at {:.1} ms, the end seen at {:.1} ms",
        idle.first_call_ms,
        idle.full_ms,
        idle.last_answer_ms,
        wall.as_secs_f64() * 1000.0,
    );
    println!(
        "model calls at once: at most {} of {concurrency}; on average {:.1} while reports were queued, {:.1} after",
        stub.most_in_flight.load(Ordering::Relaxed),
        mean(0.0, queued.as_secs_f64()),
        mean(queued.as_secs_f64(), wall.as_secs_f64()),
    );
    println!(
        "server CPU: {cpu:.2} s on {} cores, {:.2} ms per report (queueing it through the API included)",
        std::thread::available_parallelism().map_or(0, usize::from),
        cpu * 1000.0 / ids.len() as f64
    );
    println!(
        "connections the model stub accepted: {}",
        connections.load(Ordering::Relaxed)
    );
    println!("peak RSS of the server: {:.1} MB", peak_rss_mb(&server.pid()));
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("generation benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
