//! Report generation throughput against a model: 1,000 reports of one prompt each, on
//! the release binary as its own process (SQLite file, synchronous=FULL) with the
//! OpenAI-compatible engine, against a local stub of the Chat Completions API that
//! answers after a fixed latency. Run with `cargo bench --bench generation`.
//!
//! Prints the wall time from the first report sent to the API to the last completed, the
//! ideal (calls x latency / concurrency), the service's overhead per call, the most calls
//! the stub saw at once, and the server's peak RSS. The latency in the ideal is the one
//! the stub really took, timed where a model server meets the network: from the first
//! bytes of a request read off its socket to the answer written to it. Its sleep lasts a
//! little longer than asked (tokio's timer rounds up to the next millisecond and the
//! stub's task must be scheduled), and between the socket and its handler the stub parses
//! the request and writes the answer: that is the model server's time, not the service's.
//! The figures timed at the stub's handler instead, which count the stub's own HTTP
//! handling as the service's, are printed too, and so is the ideal with the nominal
//! latency.
//!
//! The service's overhead is the time the model's slots sat idle because of the service,
//! per call: (wall - rounds x latency) x concurrency / calls, where `rounds` is the calls
//! divided into rounds of `concurrency`, rounded up. That is the wall beyond the shortest
//! any service reaches, even one that costs nothing: the ideal counts the last round's
//! empty slots as work, and 1,000 calls make 62 full rounds of 16 and one of 8, so 8
//! slots wait one latency (0.41 ms per call at 51 ms) whatever the service does. The
//! overhead against the ideal itself, (wall - ideal) x concurrency / calls, is printed
//! beside it; when the calls fill their rounds (1,008 reports) the two are the same.
//! The idle time is split by where it happened: filling the slots at the start, handing
//! a freed slot to the next call, and the end (which includes the empty slots).
//!
//! Only the reports' calls are counted: the record's persona, which the model is asked
//! for too, is settled before the clock starts, and so are the clients' connections.
//! Settings: `INSIGHT_BENCH_REPORTS` (default 1000), `INSIGHT_BENCH_LATENCY_MS` (50),
//! `INSIGHT_BENCH_CONCURRENCY` (16: `INSIGHT_LLM_CONCURRENCY`), `INSIGHT_BENCH_WORKERS`
//! (unset: the server's default, twice the concurrency), `INSIGHT_BENCH_CLIENTS` (32 API
//! clients queue the reports).
//! A report, not a test: it exits 0 unless the run itself fails.

use std::pin::Pin;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

#[path = "../tests/common/openai_stub.rs"]
mod openai_stub;
use openai_stub::{OpenAiStub, Reply, SocketArrival};
mod server_process;
use server_process::ServerProcess;
mod stats;
use stats::{peak_rss_mb, percentile, rss_mib, settle};

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
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

/// The shared model stub, served with each connection timed at its socket.
#[derive(Clone)]
struct Stub {
    model: OpenAiStub,
    /// Each connection's calls as timed at its socket.
    connections: Arc<std::sync::Mutex<Vec<Arc<std::sync::Mutex<SocketTimes>>>>>,
}

impl Stub {
    /// When each call reached the stub's handler and when the handler answered it.
    fn handler_times(&self) -> Vec<(Instant, Instant)> {
        let calls = self.model.calls();
        calls
            .iter()
            .filter_map(|call| Some((call.arrived, call.finished()?)))
            .collect()
    }

    /// Each call as its socket saw it: when its request's first bytes were read, and when
    /// the last bytes of its answer were written.
    fn socket_times(&self) -> Vec<(Instant, Instant)> {
        let connections = self.connections.lock().expect("connections");
        let mut times = Vec::new();
        for connection in connections.iter() {
            let connection = connection.lock().expect("socket times");
            times.extend(&connection.calls);
            times.extend(connection.answered());
        }
        times
    }

    /// Forgets the calls so far (none is in flight).
    fn clear(&self) {
        self.model.clear();
        for connection in self.connections.lock().expect("connections").iter() {
            let mut connection = connection.lock().expect("socket times");
            connection.calls.clear();
            connection.request_at = None;
            connection.written_at = None;
        }
    }
}

/// One connection's calls, timed at its socket. HTTP/1.1 without pipelining: a request,
/// then its answer, then the next request.
#[derive(Default)]
struct SocketTimes {
    /// Calls answered, but for the last.
    calls: Vec<(Instant, Instant)>,
    /// When the request in progress (or the last) began to be read.
    request_at: Option<Instant>,
    /// When its answer was last written to.
    written_at: Option<Instant>,
}

impl SocketTimes {
    /// The last call, when it has been answered.
    fn answered(&self) -> Option<(Instant, Instant)> {
        self.request_at.zip(self.written_at)
    }
}

/// The stub's side of a connection, timing its calls in `times`.
struct TimedSocket {
    socket: TcpStream,
    times: Arc<std::sync::Mutex<SocketTimes>>,
}

impl AsyncRead for TimedSocket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.socket).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let now = Instant::now();
            let mut times = self.times.lock().expect("socket times");
            // The first bytes of a request: the one before, if any, was answered.
            if times.request_at.is_none() || times.written_at.is_some() {
                if let Some(call) = times.answered() {
                    times.calls.push(call);
                }
                times.request_at = Some(now);
                times.written_at = None;
            }
        }
        polled
    }
}

impl TimedSocket {
    fn wrote(&self, polled: &Poll<std::io::Result<usize>>) {
        if matches!(polled, Poll::Ready(Ok(written)) if *written > 0) {
            self.times.lock().expect("socket times").written_at = Some(Instant::now());
        }
    }
}

impl AsyncWrite for TimedSocket {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.socket).poll_write(cx, buf);
        self.wrote(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.socket).poll_write_vectored(cx, bufs);
        self.wrote(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.socket).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.socket).poll_shutdown(cx)
    }
}

/// Serves the stub on `listener`, each connection timed at its socket, with no Nagle
/// delay: a model server answers as soon as its latency is over.
async fn serve_stub(listener: tokio::net::TcpListener, router: axum::Router, stub: Stub) {
    use tower::ServiceExt;
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        let _ = socket.set_nodelay(true);
        let times = Arc::new(std::sync::Mutex::new(SocketTimes::default()));
        stub.connections.lock().expect("connections").push(times.clone());
        let service = {
            let (router, times) = (router.clone(), times.clone());
            hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                let arrived = times
                    .lock()
                    .expect("socket times")
                    .request_at
                    .unwrap_or_else(Instant::now);
                request.extensions_mut().insert(SocketArrival(arrived));
                router.clone().oneshot(request.map(axum::body::Body::new))
            })
        };
        let io = hyper_util::rt::TokioIo::new(TimedSocket { socket, times });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
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
        Self {
            ramp_ms: arrivals[..slots].iter().sum(),
            handoff_ms,
            handoffs_at,
            end_ms: answers[answers.len() - slots..]
                .iter()
                .map(|answered| wall_ms - answered)
                .sum(),
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
        model: OpenAiStub::new(),
        connections: Arc::default(),
    };
    // A short section quoting the transcript, `latency` after the request reached the socket.
    let content =
        "Invoices arrive late.\n\n> \"The invoices arrive late and I have to chase finance every month.\" [Anna, #2]";
    stub.model.answer(Reply::text(content).delay(latency).usage(200, 40));
    let router = stub.model.router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let stub_addr = listener.local_addr()?;
    tokio::spawn(serve_stub(listener, router, stub.clone()));

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
    let idle_mib = rss_mib(server.child.0.id());
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
    stub.clear();
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
        let (samples, model) = (samples.clone(), stub.model.clone());
        tokio::spawn(async move {
            loop {
                let at = started.elapsed().as_secs_f64();
                samples.lock().expect("samples").push((at, model.in_flight() as u64));
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
    let times = stub.socket_times();
    let at_handler = stub.handler_times();
    let calls = times.len() as u64;
    if at_handler.len() != times.len() {
        bail!(
            "the stub's socket saw {} calls and its handler {}",
            times.len(),
            at_handler.len()
        );
    }
    // The list comes in pages: follow `Link: rel="next"` to the end.
    let mut completed = 0;
    let mut next = Some(format!("/projects/{project_id}/reports?limit=500"));
    while let Some(path) = next.take() {
        let response = client
            .get(format!("{base}{path}"))
            .bearer_auth(&token)
            .send()
            .await?
            .error_for_status()?;
        next = response
            .headers()
            .get("link")
            .and_then(|link| link.to_str().ok())
            .and_then(|link| link.trim_start_matches('<').split('>').next())
            .map(str::to_owned);
        let page: Value = response.json().await?;
        completed += page
            .as_array()
            .context("report list")?
            .iter()
            .filter(|r| r["status"] == "completed")
            .count();
    }
    if completed != ids.len() {
        bail!("{completed} of {} reports completed", ids.len());
    }
    // For calls timed as `times`: the model's mean time per call, the ideal wall time in
    // seconds, the overhead per call against the ideal, and the service's overhead per call
    // (against the shortest wall any service reaches: whole rounds), both in ms.
    let rounds = calls.div_ceil(concurrency as u64);
    // Slots with no call in the last round.
    let empty_slots = rounds * concurrency as u64 - calls;
    let measure = |times: &[(Instant, Instant)]| {
        let busy: Duration = times.iter().map(|(arrived, answered)| *answered - *arrived).sum();
        let model_ms = busy.as_secs_f64() * 1000.0 / calls as f64;
        let ideal = model_ms / 1000.0 * calls as f64 / concurrency as f64;
        let per_call = |least: f64| (wall.as_secs_f64() - least) * concurrency as f64 / calls as f64 * 1000.0;
        let shortest = model_ms / 1000.0 * rounds as f64;
        (model_ms, ideal, per_call(ideal), per_call(shortest))
    };
    let (model_ms, ideal, against_ideal_ms, overhead_ms) = measure(&times);
    let empty_slots_ms = empty_slots as f64 * model_ms / calls as f64;
    let (handler_model_ms, _, handler_against_ideal_ms, handler_overhead_ms) = measure(&at_handler);
    let nominal = latency.as_secs_f64() * calls as f64 / concurrency as f64;
    println!(
        "queued {reports} reports through the API ({clients} clients at once) in {:.2} s",
        queued.as_secs_f64()
    );
    println!(
        "the model's time per call, as the stub took it (from its socket's read of the request to its write of \
         the answer): {model_ms:.2} ms on average (asked: {} ms); {handler_model_ms:.2} ms of it in the stub's \
         handler",
        latency.as_millis()
    );
    println!(
        "wall {:.2} s for {calls} model calls; ideal {ideal:.2} s; {:.1}% over the ideal (target <= 10%); \
         with the nominal latency: ideal {nominal:.2} s, {:.1}% over",
        wall.as_secs_f64(),
        (wall.as_secs_f64() / ideal - 1.0) * 100.0,
        (wall.as_secs_f64() / nominal - 1.0) * 100.0
    );
    println!(
        "service overhead per call: {overhead_ms:.2} ms (target < 1 ms): the model's slots' idle time per call \
         beyond the last round's empty slots, (wall - {rounds} rounds x the model's time) x {concurrency} / {calls}"
    );
    println!(
        "against the ideal instead, (wall - ideal) x {concurrency} / {calls}: {against_ideal_ms:.2} ms per call, of \
         which {empty_slots_ms:.2} ms are the last round's empty slots"
    );
    println!(
        "timed at the stub's handler instead, which counts the stub's own HTTP handling of each call ({:.2} ms) as \
         the service's: {handler_overhead_ms:.2} ms per call ({handler_against_ideal_ms:.2} against the ideal)",
        model_ms - handler_model_ms
    );
    let first_queued = first_queued.get().map_or(f64::NAN, |at| at.as_secs_f64() * 1000.0);
    let idle = Idle::of(&times, started, wall, concurrency);
    let handoffs_ms: f64 = idle.handoff_ms.iter().sum();
    println!(
        "overhead per call, by where the model's slots sat idle: {:.2} ms filling them at the start, {:.2} ms \
         handing a freed slot to the next call, {:.2} ms at the end, of which {empty_slots_ms:.2} ms are the last \
         round's empty slots ({} calls in it), which no service avoids: {calls} calls do not fill rounds of {concurrency}",
        idle.ramp_ms / calls as f64,
        handoffs_ms / calls as f64,
        idle.end_ms / calls as f64,
        concurrency as u64 - empty_slots,
    );
    println!(
        "a freed slot's next call reached the model's socket after {:.2} ms on average (p50 {:.2}, p99 {:.2} ms; \
         both ways over loopback included)",
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
        stub.model.most_in_flight(),
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
        stub.connections.lock().expect("connections").len()
    );
    println!("peak RSS of the server: {:.1} MB", peak_rss_mb(&server.pid()));
    settle(server.child.0.id(), Duration::from_secs(60)).await;
    let after_mib = rss_mib(server.child.0.id());
    println!(
        "server RSS: {idle_mib:.0} MiB idle at the start, {after_mib:.0} MiB once idle after the reports (target <= {:.0} \
         MiB, twice the idle figure: {})",
        idle_mib * 2.0,
        if after_mib <= idle_mib * 2.0 { "met" } else { "MISSED" }
    );
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
