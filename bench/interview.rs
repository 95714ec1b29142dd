//! Concurrent AI-led interviews. Run with `cargo bench --bench interview`.
//!
//! Sets up the real server (SQLite file, synchronous=FULL) with the OpenAI-compatible engine
//! against a local stub of the Chat Completions API that streams a short interviewer
//! question a fixed time after each request and measures its own time per call, from the
//! request's arrival to the end of its response body. Rooms with a 10-question guide, one per
//! respondent. Then all respondents at once, one task each, over HTTP as JSON: join (the
//! interviewer's opening, one model call), answer a number of times (one model call each),
//! and, once every session is through, leave. Prints:
//!
//! 1. Turn latency added by the service: per answer, the client's time from sending it to
//!    having read the whole reply, minus the stub's time for the model call of that turn
//!    (matched by a marker that starts the answer; for a join, the room's topics). p50, p99
//!    and max (target: p99 < 5 ms); joins separately.
//! 2. Memory per active session: this process's resident memory once every session has
//!    joined and answered once, minus a baseline taken after a warm-up, per session (target:
//!    < 50 KB). An upper bound: the client and the stub share the process with the server.
//! 3. Turns, errors (the run fails on any), wall time, and the process's CPU time per call.
//!
//! Settings: `INSIGHT_BENCH_SESSIONS` (200), `INSIGHT_BENCH_TURNS` (5),
//! `INSIGHT_BENCH_MODEL_MS` (50). A report, not a test: it exits 0 unless the run fails.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Barrier;

use insight::{Server, Settings, Store};

/// Sessions of the warm-up, on rooms of their own.
const WARM_UP: usize = 8;

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
}

#[derive(Clone)]
struct Stub {
    latency: Duration,
    /// Per call, by the marker of its turn: from the request's arrival to the end of the body.
    times: Arc<Mutex<HashMap<String, Duration>>>,
}

/// The turn a request is for: the marker starting the respondent's last answer (`t3-1`), or
/// for an opening, the room's topics (`j3`).
fn marker(request: &Value) -> Option<String> {
    let messages = request["messages"].as_array()?;
    let last = messages.iter().rev().find(|m| m["role"] == "user")?["content"].as_str()?;
    let text = if last.starts_with('t') {
        last
    } else {
        let system = messages.first()?["content"].as_str()?;
        system.split("<topics_told_to_the_respondent>").nth(1)?
    };
    text.split_whitespace().next().map(str::to_owned)
}

/// Chat Completions streaming: a short question `latency` after the request, all at once.
async fn complete(State(stub): State<Stub>, request: axum::extract::Request) -> axum::response::Response {
    use axum::response::IntoResponse;
    let taken = Instant::now();
    let body = axum::body::to_bytes(request.into_body(), 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let key = marker(&request).unwrap_or_default();
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({ "id": "b", "object": "chat.completion.chunk", "model": request["model"],
            "choices": [ { "index": 0, "delta": delta, "finish_reason": finish } ],
            "usage": if finish.is_null() { Value::Null } else { json!({ "prompt_tokens": 700, "completion_tokens": 9 }) } });
        format!("data: {chunk}\n\n")
    };
    let chunks = vec![
        chunk(
            json!({ "role": "assistant", "content": "Could you tell me " }),
            Value::Null,
        ),
        chunk(json!({ "content": "about the last time that happened?" }), Value::Null),
        chunk(json!({}), json!("stop")) + "data: [DONE]\n\n",
    ];
    // The stub's time ends when the stream is asked for more after its last chunk.
    let state = (chunks.into_iter(), true, stub, key);
    let body = futures_util::stream::unfold(state, move |(mut chunks, first, stub, key)| async move {
        if first {
            tokio::time::sleep(stub.latency.saturating_sub(taken.elapsed())).await;
        }
        match chunks.next() {
            Some(text) => Some((Ok::<_, std::convert::Infallible>(text), (chunks, false, stub, key))),
            None => {
                stub.times.lock().expect("lock").insert(key, taken.elapsed());
                None
            }
        }
    });
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn summary(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (
        percentile(&samples, 50.0),
        percentile(&samples, 99.0),
        samples.last().copied().unwrap_or(f64::NAN),
    )
}

/// This process's resident memory in bytes.
fn rss() -> anyhow::Result<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm")?;
    Ok(statm.split_whitespace().nth(1).context("statm")?.parse::<u64>()? * 4096)
}

/// The CPU time this process has used, user and system, in seconds (clock ticks of 1/100 s).
fn cpu() -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let fields: Vec<&str> = stat.rsplit_once(')').context("stat")?.1.split_whitespace().collect();
    Ok((fields[11].parse::<u64>()? + fields[12].parse::<u64>()?) as f64 / 100.0)
}

/// Sends a request: its JSON answer and the time from sending it to having read it all, in ms.
async fn call(request: reqwest::RequestBuilder) -> anyhow::Result<(Value, f64)> {
    let sent = Instant::now();
    let response = request.send().await?;
    let status = response.status();
    let bytes = response.bytes().await?;
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    if !status.is_success() {
        bail!("answered {status}: {}", String::from_utf8_lossy(&bytes));
    }
    Ok((serde_json::from_slice(&bytes)?, ms))
}

/// The join (`step` 0) or an answer of respondent `n`: the marker of its model call, the
/// client's time in ms, and the answer.
async fn exchange(
    client: &reqwest::Client,
    join: &str,
    n: usize,
    step: usize,
    id: &str,
) -> anyhow::Result<(String, f64, Value)> {
    let (marker, request) = if step == 0 {
        (
            format!("j{n}"),
            client.post(join).json(&json!({ "email": format!("r{n}@example.org") })),
        )
    } else {
        let marker = format!("t{n}-{step}");
        let text = format!("{marker} We usually export the invoices to a spreadsheet every Friday afternoon.");
        let request = client
            .post(format!("{join}/messages"))
            .json(&json!({ "session_id": id, "text": text }));
        (marker, request)
    };
    let (answer, ms) = call(request).await.with_context(|| marker.clone())?;
    if answer["message"].as_str().is_none_or(str::is_empty) || answer["done"] == true {
        bail!("{marker}: unexpected answer {answer}");
    }
    Ok((marker, ms, answer))
}

/// What one respondent's session measured: (marker, client ms) per call, and its errors.
type Outcome = (Vec<(String, f64)>, Vec<String>);

/// Respondent `n`: joins, answers `turns` times, leaves. With `gates`, waits after its first
/// answer (twice: the memory is sampled in between) and after its last; every session gets
/// there, failed or not.
async fn respondent(
    client: reqwest::Client,
    join: String,
    n: usize,
    turns: usize,
    gates: Option<Arc<[Barrier; 3]>>,
) -> Outcome {
    let (mut calls, mut errors) = (Vec::new(), Vec::new());
    let mut id = String::new();
    for step in 0..=turns {
        if errors.is_empty() {
            match exchange(&client, &join, n, step, &id).await {
                Ok((marker, ms, answer)) => {
                    if step == 0 {
                        id = answer["session_id"].as_str().unwrap_or_default().to_owned();
                    }
                    calls.push((marker, ms));
                }
                Err(error) => errors.push(format!("{error:#}")),
            }
        }
        if step == 1
            && let Some(gates) = &gates
        {
            gates[0].wait().await;
            gates[1].wait().await;
        }
    }
    if let Some(gates) = &gates {
        gates[2].wait().await;
    }
    if !id.is_empty() {
        let leave = client.post(format!("{join}/leave")).json(&json!({ "session_id": id }));
        if let Err(error) = call(leave).await {
            errors.push(format!("leaving {n}: {error:#}"));
        }
    }
    (calls, errors)
}

async fn run() -> anyhow::Result<()> {
    let sessions = env_number("INSIGHT_BENCH_SESSIONS", 200)? as usize;
    let turns = env_number("INSIGHT_BENCH_TURNS", 5)?.max(1) as usize;
    let latency = Duration::from_millis(env_number("INSIGHT_BENCH_MODEL_MS", 50)?);

    let stub = Stub {
        latency,
        times: Arc::default(),
    };
    let router = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let stub_addr = listener.local_addr()?;
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });

    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let mut settings = Settings::for_database(&url);
    settings.data_dir = dir.path().join("data");
    settings.llm_base_url = Some(format!("http://{stub_addr}/v1"));
    settings.llm_model = "bench".into();
    // No background AI work; neither the model semaphore nor the per-address limit (every
    // respondent comes from 127.0.0.1) is what is measured.
    settings.report_workers = 0;
    settings.llm_concurrency = 512;
    settings.public_rate_per_minute = 1_000_000;
    settings.public_rate_burst = 1_000_000;
    let store = Store::connect(&url, 16).await?;
    let server = Server::start(settings, store.clone()).await?;
    let base = format!("http://{}", server.addr);
    let user = store.add_user("bench@example.org").await?.context("user")?;
    let (_, token) = store.issue_token(user.id, "bench", None).await?;
    let client = reqwest::Client::builder().pool_max_idle_per_host(4096).build()?;

    // Rooms with a 10-question guide; each room's topics carry the marker of its opening.
    let setup = Instant::now();
    let (project, _) = call(
        client
            .post(format!("{base}/projects/"))
            .bearer_auth(&token)
            .json(&json!({ "name": "Bench" })),
    )
    .await?;
    let guide: String = (1..=10)
        .map(|q| format!("{q}. How did step {q} of your invoicing go the last time?\n"))
        .collect();
    let mut joins = Vec::new();
    while joins.len() < sessions + WARM_UP {
        let count = (sessions + WARM_UP - joins.len()).min(100);
        let rooms = json!({ "project_id": project["id"], "count": count, "interview_guide_override": guide });
        let (created, _) = call(
            client
                .post(format!("{base}/api/interviews/rooms"))
                .bearer_auth(&token)
                .json(&rooms),
        )
        .await?;
        for room in created["rooms"].as_array().context("rooms")? {
            let topics = json!({ "topics_for_respondent": format!("j{}", joins.len()) });
            let room_url = format!(
                "{base}/api/interviews/rooms/{}",
                room["id"].as_str().context("room id")?
            );
            call(client.patch(room_url).bearer_auth(&token).json(&topics)).await?;
            joins.push(format!(
                "{base}/api/interviews/join/{}",
                room["access_token"].as_str().context("token")?
            ));
        }
    }
    let setup = setup.elapsed();

    // A warm-up on rooms of their own, then the baseline.
    let warm_up = (sessions..sessions + WARM_UP).map(|n| respondent(client.clone(), joins[n].clone(), n, 2, None));
    if let Some(error) = futures_util::future::join_all(warm_up)
        .await
        .into_iter()
        .find_map(|(_, e)| e.into_iter().next())
    {
        bail!("warm-up: {error}");
    }
    let baseline = rss()?;

    let gates = Arc::new([(); 3].map(|_| Barrier::new(sessions + 1)));
    let (started, cpu_start) = (Instant::now(), cpu()?);
    let tasks: Vec<_> = (0..sessions)
        .map(|n| {
            let (client, join, gates) = (client.clone(), joins[n].clone(), Some(gates.clone()));
            tokio::spawn(respondent(client, join, n, turns, gates))
        })
        .collect();
    gates[0].wait().await;
    let active = rss()?;
    gates[1].wait().await;
    gates[2].wait().await;
    let (wall, cpu_used) = (started.elapsed(), cpu()? - cpu_start);
    let mut errors = Vec::new();
    let (mut join_added, mut turn_added, mut turn_client) = (Vec::new(), Vec::new(), Vec::new());
    for task in tasks {
        let (calls, mut failed) = task.await?;
        errors.append(&mut failed);
        let times = stub.times.lock().expect("lock");
        for (marker, ms) in calls {
            let Some(stub_time) = times.get(&marker) else {
                errors.push(format!("the stub saw no call for {marker}"));
                continue;
            };
            let added = ms - stub_time.as_secs_f64() * 1000.0;
            if marker.starts_with('j') {
                join_added.push(added);
            } else {
                turn_added.push(added);
                turn_client.push(ms);
            }
        }
    }
    server.stop().await?;

    println!(
        "Interview benchmark: {sessions} concurrent respondent sessions x {turns} turns, SQLite, model stub \
         streaming its question {} ms after each request (set up in {:.1} s)",
        latency.as_millis(),
        setup.as_secs_f64()
    );
    let calls = join_added.len() + turn_added.len();
    let (p50, p99, max) = summary(join_added);
    println!("join latency added (its opening is a model call too): p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms");
    let (c50, c99, _) = summary(turn_client);
    let (p50, p99, max) = summary(turn_added);
    println!(
        "turn latency added: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target p99 < 5 ms); \
         client-observed p50 {c50:.2} ms, p99 {c99:.2} ms"
    );
    println!(
        "memory per active session: {:.1} KB (target < 50 KB; an upper bound: resident memory once every session \
         joined and answered once, {:.1} MB, minus {:.1} MB after a warm-up, per session; it includes the client's \
         and the stub's own per-connection memory in this same process)",
        active.saturating_sub(baseline) as f64 / sessions.max(1) as f64 / 1024.0,
        active as f64 / 1048576.0,
        baseline as f64 / 1048576.0
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "{calls} joins and turns, {} errors, wall time {:.2} s, process CPU {cpu_used:.2} s on {cores} cores \
         ({:.2} ms per call; server, client and stub together)",
        errors.len(),
        wall.as_secs_f64(),
        cpu_used * 1000.0 / calls.max(1) as f64
    );
    for error in errors.iter().take(5) {
        println!("  error: {error}");
    }
    if !errors.is_empty() {
        bail!("{} errors", errors.len());
    }
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
            eprintln!("interview benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
