//! Concurrent AI-led interviews. Run with `cargo bench --bench interview`.
//!
//! Sets up the real server (SQLite file) with the OpenAI-compatible engine against a local
//! stub of the Chat Completions API that streams a short interviewer question a fixed time
//! after each request and measures its own time per call (from the request's arrival to the
//! end of its response body). Rooms with a 10-question guide, one per respondent. Then every
//! respondent at once, one task each: join (the interviewer's opening, one model call), then
//! a number of answers (one model call each), over HTTP as JSON. Measures:
//!
//! 1. Turn latency added by the service: per turn, the client's time from sending the answer
//!    to reading the whole reply, minus the stub's time for the call made for that turn
//!    (matched by a marker in the answer; for a join, in the room's topics). Prints p50, p99
//!    and max (target: p99 < 5 ms), joins separately.
//! 2. Memory per active session: this process's resident memory once every session has
//!    joined and answered once, minus a baseline taken after a warm-up, per session (target:
//!    < 50 KB). An upper bound: client, stub and server share the process.
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
    let chunk = |delta: Value, finish: Value, usage: Value| {
        let chunk = json!({ "id": "b", "object": "chat.completion.chunk", "model": request["model"],
            "choices": [ { "index": 0, "delta": delta, "finish_reason": finish } ], "usage": usage });
        format!("data: {chunk}\n\n")
    };
    let chunks = vec![
        chunk(
            json!({ "role": "assistant", "content": "Could you tell me " }),
            Value::Null,
            Value::Null,
        ),
        chunk(
            json!({ "content": "about the last time that happened?" }),
            Value::Null,
            Value::Null,
        ),
        chunk(
            json!({}),
            json!("stop"),
            json!({ "prompt_tokens": 700, "completion_tokens": 12, "total_tokens": 712 }),
        ),
        "data: [DONE]\n\n".to_owned(),
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
    let pages: u64 = statm.split_whitespace().nth(1).context("statm")?.parse()?;
    Ok(pages * 4096)
}

/// A JSON POST and the time from sending it to having read the whole answer, in ms.
async fn post_json(client: &reqwest::Client, url: &str, body: Value) -> anyhow::Result<(Value, f64)> {
    let sent = Instant::now();
    let response = client.post(url).json(&body).send().await?;
    let status = response.status();
    let bytes = response.bytes().await?;
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    if status != reqwest::StatusCode::OK {
        bail!("{url} answered {status}: {}", String::from_utf8_lossy(&bytes));
    }
    Ok((serde_json::from_slice(&bytes)?, ms))
}

/// One respondent's session: what it measured, and its session id to leave with.
#[derive(Default)]
struct Outcome {
    /// (marker, client ms) of the join and of each turn.
    calls: Vec<(String, f64)>,
    session: Option<String>,
    error: Option<String>,
}

/// Joins room `n`, answers `turns` times, and when `gates` are given waits at them after
/// the first answer (every session must reach them, failed or not).
async fn session(
    client: reqwest::Client,
    join: String,
    n: usize,
    turns: usize,
    gates: Option<Arc<[Barrier; 2]>>,
) -> Outcome {
    let mut outcome = Outcome::default();
    let answer = async |outcome: &mut Outcome, session: &str, turn: usize| -> anyhow::Result<()> {
        let marker = format!("t{n}-{turn}");
        let text = format!("{marker} We usually export the invoices to a spreadsheet every Friday afternoon.");
        let (reply, ms) = post_json(
            &client,
            &format!("{join}/messages"),
            json!({ "session_id": session, "text": text }),
        )
        .await?;
        if reply["done"] != false || reply["message"].as_str().is_none_or(str::is_empty) {
            bail!("turn {marker}: unexpected answer {reply}");
        }
        outcome.calls.push((marker, ms));
        Ok(())
    };
    let started: anyhow::Result<String> = async {
        let (joined, ms) = post_json(&client, &join, json!({ "email": format!("r{n}@example.org") })).await?;
        outcome.calls.push((format!("j{n}"), ms));
        let session = joined["session_id"].as_str().context("no session_id")?.to_owned();
        answer(&mut outcome, &session, 0).await?;
        Ok(session)
    }
    .await;
    if let Some(gates) = gates {
        gates[0].wait().await;
        gates[1].wait().await;
    }
    let finished = match started {
        Ok(session) => {
            let mut result = Ok(());
            for turn in 1..turns {
                result = answer(&mut outcome, &session, turn).await;
                if result.is_err() {
                    break;
                }
            }
            outcome.session = Some(session);
            result
        }
        Err(error) => Err(error),
    };
    outcome.error = finished.err().map(|error| format!("session {n}: {error:#}"));
    outcome
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
    // No background AI work; the model semaphore and the per-address limit out of the way
    // (every respondent comes from 127.0.0.1).
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

    let setup = Instant::now();
    let project: Value = client
        .post(format!("{base}/projects/"))
        .bearer_auth(&token)
        .json(&json!({ "name": "Bench" }))
        .send()
        .await?
        .json()
        .await?;
    let project_id = project["id"].as_str().context("project id")?.to_owned();
    let guide: String = (1..=10)
        .map(|q| format!("{q}. How did step {q} of your invoicing go the last time?\n"))
        .collect();
    let mut joins = Vec::new();
    while joins.len() < sessions + WARM_UP {
        let count = (sessions + WARM_UP - joins.len()).min(100);
        let body = json!({ "project_id": project_id, "count": count, "interview_guide_override": guide });
        let response = client
            .post(format!("{base}/api/interviews/rooms"))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await?;
        if response.status() != reqwest::StatusCode::CREATED {
            bail!("creating rooms answered {}", response.status());
        }
        let created: Value = response.json().await?;
        for room in created["rooms"].as_array().context("rooms")? {
            // The room's topics carry the marker of its opening call.
            let id = room["id"].as_str().context("room id")?;
            let changes = json!({ "topics_for_respondent": format!("j{}", joins.len()) });
            let response = client
                .patch(format!("{base}/api/interviews/rooms/{id}"))
                .bearer_auth(&token)
                .json(&changes)
                .send()
                .await?;
            if !response.status().is_success() {
                bail!("updating a room answered {}", response.status());
            }
            let access = room["access_token"].as_str().context("access token")?;
            joins.push(format!("{base}/api/interviews/join/{access}"));
        }
    }
    let setup = setup.elapsed();

    // Warm-up on rooms of their own, then the baseline.
    let warm = (sessions..sessions + WARM_UP).map(|n| session(client.clone(), joins[n].clone(), n, 2, None));
    for outcome in futures_util::future::join_all(warm).await {
        if let Some(error) = outcome.error {
            bail!("warm-up: {error}");
        }
    }
    let baseline = rss()?;

    let gates = Arc::new([Barrier::new(sessions + 1), Barrier::new(sessions + 1)]);
    let started = Instant::now();
    let tasks: Vec<_> = (0..sessions)
        .map(|n| tokio::spawn(session(client.clone(), joins[n].clone(), n, turns, Some(gates.clone()))))
        .collect();
    gates[0].wait().await;
    let active = rss()?;
    gates[1].wait().await;
    let mut outcomes = Vec::with_capacity(sessions);
    for task in tasks {
        outcomes.push(task.await?);
    }
    let wall = started.elapsed();

    let mut errors: Vec<String> = outcomes.iter().filter_map(|o| o.error.clone()).collect();
    let leaves = outcomes
        .iter()
        .enumerate()
        .filter_map(|(n, o)| Some((n, o.session.clone()?)))
        .map(|(n, session)| {
            let client = client.clone();
            let url = format!("{}/leave", joins[n]);
            async move { post_json(&client, &url, json!({ "session_id": session })).await }
        });
    for left in futures_util::future::join_all(leaves).await {
        if let Err(error) = left {
            errors.push(format!("leaving: {error:#}"));
        }
    }
    let times = stub.times.lock().expect("lock").clone();
    let (mut join_added, mut turn_added, mut turn_client) = (Vec::new(), Vec::new(), Vec::new());
    for (marker, ms) in outcomes.iter().flat_map(|o| &o.calls) {
        let Some(stub_time) = times.get(marker) else {
            errors.push(format!("the stub saw no call for {marker}"));
            continue;
        };
        let added = ms - stub_time.as_secs_f64() * 1000.0;
        if marker.starts_with('j') {
            join_added.push(added);
        } else {
            turn_added.push(added);
            turn_client.push(*ms);
        }
    }
    let (turns_done, joins_done) = (turn_added.len(), join_added.len());

    println!(
        "Interview benchmark: {sessions} concurrent respondent sessions x {turns} turns, SQLite, model stub \
         streaming its question {} ms after each request (set up in {:.1} s)",
        latency.as_millis(),
        setup.as_secs_f64()
    );
    let (p50, p99, max) = summary(join_added);
    println!("join latency added (opening, one model call): p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms");
    let (c50, c99, _) = summary(turn_client);
    let (p50, p99, max) = summary(turn_added);
    println!(
        "turn latency added: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target p99 < 5 ms); \
         client-observed p50 {c50:.2} ms, p99 {c99:.2} ms"
    );
    let per_session = active.saturating_sub(baseline) as f64 / sessions.max(1) as f64 / 1024.0;
    println!(
        "memory per active session: {per_session:.1} KB (target < 50 KB; an upper bound: resident memory after \
         every session joined and answered once, {:.1} MB, minus {:.1} MB after the warm-up, includes the \
         client's and the stub's own per-connection memory in this same process)",
        active as f64 / 1048576.0,
        baseline as f64 / 1048576.0
    );
    println!(
        "{turns_done} turns, {joins_done} joins, {} errors, wall time {:.2} s",
        errors.len(),
        wall.as_secs_f64()
    );
    for error in errors.iter().take(5) {
        println!("  error: {error}");
    }
    server.stop().await?;
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
