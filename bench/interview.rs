//! Concurrent AI-led interviews. Run with `cargo bench --bench interview`.
//!
//! Starts the real release binary, `insight serve` (the `insight` target of this package,
//! which `cargo bench` builds), as a child process on a free port, with a SQLite file in a
//! temporary folder (synchronous=FULL) and the OpenAI-compatible engine pointed at the
//! shared model stub (`tests/common/openai_stub.rs`). The stub runs in this process, next
//! to the HTTP client: it streams a short interviewer question a fixed time after each
//! request and times each call, from the request's arrival to the end of its response
//! body. The token is the one the server prints for its first user on an empty database.
//! Rooms with a 10-question guide, one per respondent; one task per respondent, over HTTP
//! as JSON: join (the interviewer's opening, one model call), answer a number of times
//! (one model call each), and, once every session is through, leave.
//!
//! Two runs, each on a fresh server:
//!
//! - **Paced** (the targets are for this one): 200 people in interviews at the same time, as
//!   people are: they open their links over `INSIGHT_BENCH_JOIN_SECONDS` (2 s) and each
//!   answer comes after a pause for reading and typing, uniform over 0 to twice
//!   `INSIGHT_BENCH_THINK_MS` (1,000 ms). Both are far quicker than people (an answer takes
//!   tens of seconds to type), so the load is heavier than real interviews would make it.
//! - **Lockstep** (a stress test, printed for reference): everyone joins at the same moment
//!   and answers the instant the reply arrives, so 200 turns hit the server at once, every
//!   turn. The added latency then measures the queue of 200 turns' work on two cores
//!   (about 200 x the CPU per turn / 2), not what a turn adds.
//!
//! For each run it prints:
//!
//! 1. Turn latency added by the service: per answer, the client's time from sending it to
//!    having read the whole reply, minus the stub's time for the model call of that turn
//!    (matched by a marker that starts the answer; for a join, the room's topics). p50, p99
//!    and max (target: p99 < 5 ms); joins separately. The server has its own process and
//!    runtime, but shares the machine's cores with the client and the stub.
//! 2. Memory per active session: the server's heap in use (the allocator's bytes handed out
//!    and not given back, its `insight_heap_in_use_bytes` metric) once every session has
//!    joined and answered once, minus a baseline taken after a warm-up, per session
//!    (target: < 50 KB); its resident memory (`VmRSS`) likewise, which also counts what
//!    the allocator keeps after a burst and leaves out what it reuses of earlier work. The server alone: its end of the
//!    respondent's connection, its connections to the model, and the session's state. The
//!    server opens its SQLite read connections when it starts; its thread count is printed
//!    at both points to show that none were added. This process's own figure (client and
//!    stub, which keeps each call's request) is printed apart, for reference.
//! 3. Turns, errors (the run fails on any), wall time, and CPU time per call of the server
//!    and of this process.
//!
//! Settings: `INSIGHT_BENCH_SESSIONS` (200), `INSIGHT_BENCH_TURNS` (5),
//! `INSIGHT_BENCH_MODEL_MS` (50), `INSIGHT_BENCH_JOIN_SECONDS` (2) and
//! `INSIGHT_BENCH_THINK_MS` (1000) for the paced run, `INSIGHT_BENCH_LOCKSTEP` (1; 0 skips
//! the lockstep run). The server gets its settings as `INSIGHT_*` variables, and only those
//! this benchmark sets: the caller's own are not passed on. A report, not a test: it exits
//! 0 unless a run fails.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::sync::Barrier;

#[path = "../tests/common/openai_stub.rs"]
mod openai_stub;
use openai_stub::{OpenAiStub, Reply};
mod server_process;
use server_process::{ServerProcess, tail_text};
mod stats;
use stats::summary;

/// Sessions of the warm-up, on rooms of their own.
const WARM_UP: usize = 8;

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
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

/// A number from a process's (`self` or a pid) status: `VmRSS` (in kB), `Threads`.
fn status(process: &str, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status"))?;
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .with_context(|| format!("no {field} in the status of process {process}"))?;
    Ok(value.trim().trim_end_matches("kB").trim().parse()?)
}

/// The server's heap in use, from its metrics, in bytes.
async fn heap(client: &reqwest::Client, base: &str) -> anyhow::Result<u64> {
    let page = client.get(format!("{base}/metrics")).send().await?.text().await?;
    page.lines()
        .find_map(|line| line.strip_prefix("insight_heap_in_use_bytes "))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map(|bytes| bytes as u64)
        .context("no insight_heap_in_use_bytes in the server's metrics")
}

/// The resident memory of a process (`self` or a pid) in bytes.
fn rss(process: &str) -> anyhow::Result<u64> {
    Ok(status(process, "VmRSS")? * 1024)
}

/// The CPU time a process (`self` or a pid) has used, user and system, in seconds (clock
/// ticks of 1/100 s).
fn cpu(process: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{process}/stat"))?;
    let fields: Vec<&str> = stat.rsplit_once(')').context("stat")?.1.split_whitespace().collect();
    Ok((fields[11].parse::<u64>()? + fields[12].parse::<u64>()?) as f64 / 100.0)
}

/// Starts the server on a free port with its database and data folder in `dir` and the
/// model at `stub`.
async fn start_service(dir: &Path, stub: SocketAddr) -> anyhow::Result<ServerProcess> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command.args(["serve", "--addr", "127.0.0.1:0"]);
    // Only the settings below, whatever the caller's environment says.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INSIGHT_") {
            command.env_remove(name);
        }
    }
    let database = format!("sqlite://{}", dir.join("bench.db").display());
    let stub = format!("http://{stub}/v1");
    command
        .env("INSIGHT_DATABASE_URL", database)
        .env("INSIGHT_DATA_DIR", dir.join("data"))
        .env("INSIGHT_LLM_BASE_URL", stub)
        .env("INSIGHT_LLM_MODEL", "bench")
        // No background AI work; neither the model semaphore nor the per-address limit
        // (every respondent comes from 127.0.0.1) is what is measured.
        .env("INSIGHT_LLM_CONCURRENCY", "512")
        .env("INSIGHT_REPORT_WORKERS", "0")
        .env("INSIGHT_PUBLIC_RATE_PER_MINUTE", "1000000")
        .env("INSIGHT_PUBLIC_RATE_BURST", "100000")
        // Warnings, and the binary's own start-up lines (the listening address among
        // them): per-request logging would measure the logger.
        .env("RUST_LOG", "warn,insight=info")
        .env("NO_COLOR", "1");
    ServerProcess::start(command).await
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

/// How respondents come and answer.
#[derive(Clone, Copy)]
struct Pace {
    /// What the run is called.
    name: &'static str,
    /// Joins are spread uniformly over this window.
    join_spread: Duration,
    /// The mean pause before each answer (uniform over 0 to twice this).
    think: Duration,
}

/// Respondent `n`: joins, answers `turns` times, leaves. With `gates`, waits after its first
/// answer (twice: the memory is sampled in between) and after its last; every session gets
/// there, failed or not.
async fn respondent(
    client: reqwest::Client,
    join: String,
    n: usize,
    turns: usize,
    gates: Option<Arc<[Barrier; 3]>>,
    pace: Pace,
) -> Outcome {
    let (mut calls, mut errors) = (Vec::new(), Vec::new());
    let mut id = String::new();
    // A fixed-seed xorshift per respondent: the same pauses every run.
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64 ^ (n as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D);
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 10_000) as f64 / 10_000.0
    };
    for step in 0..=turns {
        let pause = if step == 0 {
            // Uniform over the joining window: people open their links one by one.
            pace.join_spread.mul_f64(random())
        } else {
            // Uniform over [0, 2 × think): a respondent reads, thinks, types.
            pace.think.mul_f64(2.0 * random())
        };
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
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
    let mut paces = vec![Pace {
        name: "paced",
        join_spread: Duration::from_secs_f64(env_number("INSIGHT_BENCH_JOIN_SECONDS", 2)? as f64),
        think: Duration::from_millis(env_number("INSIGHT_BENCH_THINK_MS", 1000)?),
    }];
    if env_number("INSIGHT_BENCH_LOCKSTEP", 1)? != 0 {
        paces.push(Pace {
            name: "lockstep",
            join_spread: Duration::ZERO,
            think: Duration::ZERO,
        });
    }

    // A short interviewer question, streamed all at once `latency` after each request.
    let (stub_addr, stub) = OpenAiStub::start().await;
    stub.answer(
        Reply::pieces(["Could you tell me ", "about the last time that happened?"])
            .delay(latency)
            .usage(700, 9),
    );

    println!(
        "Interview benchmark: {sessions} concurrent respondent sessions x {turns} turns, `insight serve` as a child \
         process on SQLite, model stub streaming its question {} ms after each request",
        latency.as_millis(),
    );
    for pace in paces {
        let dir = tempfile::tempdir()?;
        let mut service = start_service(dir.path(), stub_addr).await?;
        stub.clear();
        let result = measure(&service, &stub, sessions, turns, pace).await;
        // The server is stopped as soon as it is measured; whether it was still running,
        // and its log, stay for the error, if any.
        let exited = match service.child.0.try_wait() {
            Ok(Some(status)) => format!("\nthe server had exited: {status}"),
            Ok(None) => String::new(),
            Err(error) => format!("\nthe server's state is unknown: {error}"),
        };
        let log = Arc::clone(&service.log);
        drop(service);
        let with_log =
            |error: anyhow::Error| anyhow::anyhow!("{error:#}{exited}\nserver log, last lines:{}", tail_text(&log));
        let report = result.map_err(with_log)?;
        println!();
        if pace.think.is_zero() && pace.join_spread.is_zero() {
            println!(
                "{}: a stress test, no targets: all join at once and answer the instant a reply arrives \
                 (set up in {:.1} s)",
                pace.name,
                report.setup.as_secs_f64()
            );
        } else {
            println!(
                "{}: joins over {:.1} s, pauses before answers uniform over 0 to {:.1} s (set up in {:.1} s)",
                pace.name,
                pace.join_spread.as_secs_f64(),
                2.0 * pace.think.as_secs_f64(),
                report.setup.as_secs_f64()
            );
        }
        report.print(sessions).map_err(with_log)?;
    }
    Ok(())
}

/// What a run measured.
struct Report {
    setup: Duration,
    wall: Duration,
    join_added: Vec<f64>,
    turn_added: Vec<f64>,
    turn_client: Vec<f64>,
    /// The server's resident memory after the warm-up and at the barrier, in bytes.
    server_rss: (u64, u64),
    /// The server's heap in use (its `insight_heap_in_use_bytes`), likewise.
    server_heap: (u64, u64),
    /// The server's threads, likewise.
    threads: (u64, u64),
    /// This process's (client and stub), likewise.
    own_rss: (u64, u64),
    /// CPU seconds during the run: the server's, this process's.
    cpu: (f64, f64),
    errors: Vec<String>,
}

/// Sets up rooms on `service`, warms up, runs `sessions` respondents of `turns` answers.
async fn measure(
    service: &ServerProcess,
    stub: &OpenAiStub,
    sessions: usize,
    turns: usize,
    pace: Pace,
) -> anyhow::Result<Report> {
    let (base, token, pid) = (&service.base, &service.token, service.pid());
    let client = reqwest::Client::builder().pool_max_idle_per_host(4096).build()?;

    // Rooms with a 10-question guide; each room's topics carry the marker of its opening.
    let setup = Instant::now();
    let (project, _) = call(
        client
            .post(format!("{base}/projects/"))
            .bearer_auth(token)
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
                .bearer_auth(token)
                .json(&rooms),
        )
        .await?;
        for room in created["rooms"].as_array().context("rooms")? {
            let topics = json!({ "topics_for_respondent": format!("j{}", joins.len()) });
            let room_url = format!(
                "{base}/api/interviews/rooms/{}",
                room["id"].as_str().context("room id")?
            );
            call(client.patch(room_url).bearer_auth(token).json(&topics)).await?;
            joins.push(format!(
                "{base}/api/interviews/join/{}",
                room["access_token"].as_str().context("token")?
            ));
        }
    }
    let setup = setup.elapsed();

    // A warm-up on rooms of their own, then the baselines.
    let warm_up = (sessions..sessions + WARM_UP).map(|n| {
        let quick = Pace {
            name: "warm-up",
            join_spread: Duration::ZERO,
            think: Duration::ZERO,
        };
        respondent(client.clone(), joins[n].clone(), n, 2, None, quick)
    });
    if let Some(error) = futures_util::future::join_all(warm_up)
        .await
        .into_iter()
        .find_map(|(_, e)| e.into_iter().next())
    {
        bail!("warm-up: {error}");
    }
    let heap_baseline = heap(&client, base).await?;
    let (server_baseline, own_baseline) = (rss(&pid)?, rss("self")?);
    let threads_baseline = status(&pid, "Threads")?;

    let gates = Arc::new([(); 3].map(|_| Barrier::new(sessions + 1)));
    let (started, server_cpu, own_cpu) = (Instant::now(), cpu(&pid)?, cpu("self")?);
    // Each respondent is a browser of its own, with its own connection to the server, as
    // people's are (one client for all would share a few connections between sessions).
    let browsers = (0..sessions)
        .map(|_| reqwest::Client::builder().build())
        .collect::<Result<Vec<_>, _>>()?;
    let tasks: Vec<_> = browsers
        .into_iter()
        .enumerate()
        .map(|(n, browser)| {
            let (join, gates) = (joins[n].clone(), Some(gates.clone()));
            tokio::spawn(respondent(browser, join, n, turns, gates, pace))
        })
        .collect();
    gates[0].wait().await;
    let (server_active, own_active) = (rss(&pid)?, rss("self")?);
    let heap_active = heap(&client, base).await?;
    let threads_active = status(&pid, "Threads")?;
    gates[1].wait().await;
    gates[2].wait().await;
    let wall = started.elapsed();
    let cpu_used = (cpu(&pid)? - server_cpu, cpu("self")? - own_cpu);
    let mut errors = Vec::new();
    let (mut join_added, mut turn_added, mut turn_client) = (Vec::new(), Vec::new(), Vec::new());
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await?);
    }
    // The stub's time per call, by the marker of its turn: from the request's arrival to
    // the end of its body.
    let times: HashMap<String, Duration> = stub
        .calls()
        .iter()
        .filter_map(|call| {
            let took = call.finished()?.duration_since(call.arrived);
            Some((marker(&call.body).unwrap_or_default(), took))
        })
        .collect();
    for (calls, mut failed) in results {
        errors.append(&mut failed);
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
    Ok(Report {
        setup,
        wall,
        join_added,
        turn_added,
        turn_client,
        server_rss: (server_baseline, server_active),
        server_heap: (heap_baseline, heap_active),
        threads: (threads_baseline, threads_active),
        own_rss: (own_baseline, own_active),
        cpu: cpu_used,
        errors,
    })
}

impl Report {
    fn print(self, sessions: usize) -> anyhow::Result<()> {
        let calls = self.join_added.len() + self.turn_added.len();
        let (p50, p99, max) = summary(self.join_added);
        println!(
            "join latency added (its opening is a model call too): p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"
        );
        let (c50, c99, _) = summary(self.turn_client);
        let (p50, p99, max) = summary(self.turn_added);
        println!(
            "turn latency added: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target p99 < 5 ms); \
             client-observed p50 {c50:.2} ms, p99 {c99:.2} ms"
        );
        let per_session =
            |(baseline, active): (u64, u64)| active.saturating_sub(baseline) as f64 / sessions.max(1) as f64 / 1024.0;
        let mb = |bytes: u64| bytes as f64 / 1048576.0;
        println!(
            "memory per active session: {:.1} KB of heap (target < 50 KB): the server's data in use once every \
             session joined and answered once ({:.1} MB, from {:.1} MB after a warm-up; its \
             insight_heap_in_use_bytes), per session: its end of the respondent's connection, its connections \
             to the model, and the session's state. Resident memory grew {:.1} KB per session ({:.1} MB, from \
             {:.1} MB; it also keeps what a burst freed, and reuses what earlier work freed). Server threads {} \
             then {}",
            per_session(self.server_heap),
            mb(self.server_heap.1),
            mb(self.server_heap.0),
            per_session(self.server_rss),
            mb(self.server_rss.1),
            mb(self.server_rss.0),
            self.threads.0,
            self.threads.1
        );
        println!(
            "  for reference, not the service: this benchmark process (client and stub) {:.1} KB per session \
             ({:.1} MB, from {:.1} MB)",
            per_session(self.own_rss),
            mb(self.own_rss.1),
            mb(self.own_rss.0)
        );
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let (server_cpu, own_cpu) = self.cpu;
        println!(
            "{calls} joins and turns, {} errors, wall time {:.2} s; CPU on {cores} cores: server {server_cpu:.2} s \
             ({:.2} ms per call), client and stub {own_cpu:.2} s ({:.2} ms per call)",
            self.errors.len(),
            self.wall.as_secs_f64(),
            server_cpu * 1000.0 / calls.max(1) as f64,
            own_cpu * 1000.0 / calls.max(1) as f64
        );
        for error in self.errors.iter().take(5) {
            println!("  error: {error}");
        }
        if !self.errors.is_empty() {
            bail!("{} errors", self.errors.len());
        }
        Ok(())
    }
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
