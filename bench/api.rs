//! API throughput and latency, end to end: the real release binary, a real listener,
//! real HTTP clients. Run with `cargo bench --bench api`.
//!
//! For each backend (SQLite in a temporary folder always; PostgreSQL when
//! `INSIGHT_BENCH_DATABASE_URL` or `INSIGHT_TEST_DATABASE_URL` names a database, next to
//! which a fresh `<name>_bench_<uuid>` database is created and dropped afterwards) it
//! starts `insight serve`, creates 50 projects and one report through the API, and then
//! measures three scenarios:
//!
//! 1. `GET /healthz`: no auth, no database. The ceiling of the HTTP stack on this machine.
//! 2. `GET /projects/`: auth plus the list of 50 projects with their counts.
//! 3. `PUT /projects/{p}/reports/{r}`: a durable write (spec operation 1).
//!
//! Each scenario runs `INSIGHT_BENCH_CONCURRENCY` client tasks (default 32) on one
//! `reqwest::Client` for `INSIGHT_BENCH_SECONDS` (default 5) after a 1 s warm-up. The
//! first two alternate in five slices of a fifth of that time each, so that the ratio of
//! the list to the ceiling compares the same moments of a machine whose speed drifts. The
//! client runs on the same machine as the server, so both share its cores: the figures
//! are what one box does, not what the server alone could do.
//!
//! This is a report, not a test: a missed target still exits 0. It exits non-zero when a
//! server does not start, the setup fails, or more than 1% of a scenario's requests fail.
//! The SQLite file goes where `TMPDIR` points; its filesystem is printed because on
//! tmpfs an fsync costs nothing and the write figures would overstate durable writes.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;

const PROJECTS: usize = 50;
/// Slices the ceiling and the list alternate in (see `bench_scenarios`).
const SLICES: u32 = 5;
const WARM_UP: Duration = Duration::from_secs(1);
/// Generous: a request that takes this long is a hung server, not a slow one.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// More failed requests than this in any scenario makes the run fail.
const MAX_ERROR_RATE: f64 = 0.01;

mod server_process;
use server_process::ServerProcess;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("benchmark failed: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "benchmark failed: more than {:.0}% of a scenario's requests failed",
                MAX_ERROR_RATE * 100.0
            );
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("benchmark failed: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// How long and how hard each scenario runs.
struct Load {
    duration: Duration,
    concurrency: usize,
}

impl Load {
    fn from_env() -> anyhow::Result<Self> {
        let seconds: f64 = env_number("INSIGHT_BENCH_SECONDS", 5.0)?;
        ensure!(
            seconds.is_finite() && seconds > 0.0,
            "INSIGHT_BENCH_SECONDS must be a positive number of seconds, not {seconds}"
        );
        let concurrency: usize = env_number("INSIGHT_BENCH_CONCURRENCY", 32)?;
        ensure!(concurrency > 0, "INSIGHT_BENCH_CONCURRENCY must be at least 1");
        Ok(Self {
            duration: Duration::from_secs_f64(seconds),
            concurrency,
        })
    }
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} must be a number, not {value:?}")),
        Err(_) => Ok(default),
    }
}

/// Returns whether every scenario stayed within the error budget.
async fn run() -> anyhow::Result<bool> {
    let load = Load::from_env()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "Insight API benchmark: {} s per scenario after a {} s warm-up, {} concurrent clients, {} cores \
         (client and server share them)",
        load.duration.as_secs_f64(),
        WARM_UP.as_secs(),
        load.concurrency,
        cores
    );

    let mut rows = Vec::new();

    let dir = tempfile::Builder::new()
        .prefix("insight-bench-")
        .tempdir()
        .context("cannot create a temporary folder for the SQLite database")?;
    let file = dir.path().join("insight.db");
    let filesystem = filesystem_of(dir.path()).unwrap_or_else(|| "unknown filesystem".into());
    println!("sqlite:   {} ({filesystem})", file.display());
    if filesystem == "tmpfs" {
        println!("          warning: tmpfs makes fsync free; set TMPDIR to a disk for durable-write figures");
    }
    rows.extend(bench_backend("sqlite", &format!("sqlite://{}", file.display()), &load).await?);

    let postgres = std::env::var("INSIGHT_BENCH_DATABASE_URL").or_else(|_| std::env::var("INSIGHT_TEST_DATABASE_URL"));
    if let Ok(base) = postgres {
        match bench_postgres(&base, &load).await {
            Ok(more) => rows.extend(more),
            Err(err) => {
                // SQLite's figures are still worth seeing before the failure.
                println!();
                print_table(&rows);
                return Err(err);
            }
        }
    } else {
        println!("postgres: skipped (set INSIGHT_BENCH_DATABASE_URL or INSIGHT_TEST_DATABASE_URL)");
    }

    println!();
    print_table(&rows);
    let within_budget = rows.iter().all(|row| row.error_rate() <= MAX_ERROR_RATE);
    Ok(within_budget)
}

/// Runs the scenarios on a fresh database next to the one `base` names, then drops it.
async fn bench_postgres(base: &str, load: &Load) -> anyhow::Result<Vec<Row>> {
    let database = PgDatabase::create(base).await?;
    // Named without the URL, which may hold a password.
    println!("postgres: database {}", database.name);
    let result = bench_backend("postgres", &database.url, load).await;
    // The server is stopped by now (bench_backend owns it), so the drop can succeed.
    if let Err(err) = database.drop_it().await {
        eprintln!(
            "warning: could not drop the benchmark database {}: {err:#}",
            database.name
        );
    }
    result
}

/// The filesystem type holding `path`, from the longest matching mount point (Linux).
fn filesystem_of(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            Some((fields.next()?, fields.next()?))
        })
        .filter(|(mount_point, _)| path.starts_with(mount_point))
        // `max_by_key` keeps the last of equals: a later mount on the same point wins.
        .max_by_key(|(mount_point, _)| mount_point.len())
        .map(|(_, kind)| kind.to_owned())
}

// ---------------------------------------------------------------------------------------
// One backend: start the server, set up data, run the scenarios.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Healthz,
    ListProjects,
    ListProjectsSession,
    UpdateReport,
}

impl Scenario {
    fn label(self) -> &'static str {
        match self {
            Self::Healthz => "GET /healthz",
            Self::ListProjects => "GET /projects/ (50)",
            Self::ListProjectsSession => "GET /projects/ (50), session cookie",
            Self::UpdateReport => "PUT /projects/{p}/reports/{r}",
        }
    }
}

/// What a scenario is held to.
#[derive(Clone, Copy)]
enum Target {
    /// At least this fraction of the same backend's `/healthz` requests/s.
    OfCeiling(f64),
    /// At least this many requests/s.
    PerSecond(f64),
}

struct Row {
    backend: &'static str,
    scenario: Scenario,
    stats: Stats,
    /// requests/s divided by the same backend's `/healthz` requests/s.
    ratio: Option<f64>,
    target: Option<Target>,
}

impl Row {
    fn error_rate(&self) -> f64 {
        let total = self.stats.ok + self.stats.errors;
        if total == 0 {
            // Nothing answered at all: as bad as it gets.
            1.0
        } else {
            self.stats.errors as f64 / total as f64
        }
    }

    fn target_met(&self) -> Option<bool> {
        Some(match self.target? {
            Target::OfCeiling(fraction) => self.ratio? >= fraction,
            Target::PerSecond(rate) => self.stats.per_second() >= rate,
        })
    }
}

async fn bench_backend(backend: &'static str, database_url: &str, load: &Load) -> anyhow::Result<Vec<Row>> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url", database_url])
        // The default level, whatever the caller's environment says: per-request debug
        // logging would measure the logger.
        .env("RUST_LOG", "info");
    let server = ServerProcess::start(command)
        .await
        .with_context(|| format!("the {backend} server did not start"))?;
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .context("cannot build the HTTP client")?;
    let result = bench_scenarios(backend, database_url, &server, &client, load).await;
    // Whatever went wrong, the server's last words are the best clue.
    result.map_err(|err| anyhow::anyhow!("{err:#}\n{}", server.log_tail()))
}

async fn bench_scenarios(
    backend: &'static str,
    database_url: &str,
    server: &ServerProcess,
    client: &reqwest::Client,
    load: &Load,
) -> anyhow::Result<Vec<Row>> {
    let mut api = Api {
        client: client.clone(),
        base: server.base.clone(),
        token: server.token.clone(),
        cookie: String::new(),
    };
    let report_path = setup(&api).await.context("setup through the API failed")?;
    api.cookie = sign_in(&api, database_url)
        .await
        .context("signing in for a session failed")?;

    // The ceiling and the list alternate in short slices: this machine's speed drifts
    // (other work on the host), and one 5 s window of each would compare different
    // moments; summed over the slices, the ratio compares the same ones.
    let mut rows = Vec::new();
    let paired = [Scenario::Healthz, Scenario::ListProjects, Scenario::ListProjectsSession];
    let requests: Vec<MakeRequest> = paired
        .iter()
        .map(|scenario| request_for(*scenario, &api, &report_path))
        .collect();
    let counter = Arc::new(AtomicU64::new(0));
    for (scenario, request) in paired.iter().zip(&requests) {
        check_once(*scenario, &api, request).await?;
        // Warm-up: connections opened, caches and statement caches filled; discarded.
        drive(&api.client, request, &counter, load.concurrency, WARM_UP).await?;
    }
    eprintln!(
        "{backend}: {}, {} and {}, alternating in {SLICES} slices ...",
        paired[0].label(),
        paired[1].label(),
        paired[2].label()
    );
    let mut totals = [Stats::default(), Stats::default(), Stats::default()];
    for _ in 0..SLICES {
        for (total, request) in totals.iter_mut().zip(&requests) {
            let slice = drive(&api.client, request, &counter, load.concurrency, load.duration / SLICES).await?;
            total.elapsed += slice.elapsed;
            total.absorb(slice);
        }
    }
    for (scenario, mut stats) in paired.into_iter().zip(totals) {
        stats.latencies.sort_unstable();
        rows.push((scenario, stats));
    }
    let scenario = Scenario::UpdateReport;
    let request = request_for(scenario, &api, &report_path);
    check_once(scenario, &api, &request).await?;
    eprintln!("{backend}: {} ...", scenario.label());
    drive(&api.client, &request, &counter, load.concurrency, WARM_UP).await?;
    rows.push((
        scenario,
        drive(&api.client, &request, &counter, load.concurrency, load.duration).await?,
    ));
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(scenario, stats)| {
            if let Some(error) = &stats.first_error {
                eprintln!("{backend}: {}: first error: {error}", scenario.label());
            }
            Row {
                backend,
                scenario,
                stats,
                ratio: None,
                target: match (scenario, backend) {
                    (Scenario::ListProjects | Scenario::ListProjectsSession, _) => Some(Target::OfCeiling(0.5)),
                    (Scenario::UpdateReport, "sqlite") => Some(Target::PerSecond(5000.0)),
                    _ => None,
                },
            }
        })
        .collect();
    if backend == "sqlite" {
        let metrics = client.get(format!("{}/metrics", api.base)).send().await?.text().await?;
        let value = |name: &str| -> f64 {
            metrics
                .lines()
                .find(|line| line.starts_with(name))
                .and_then(|line| line.split_whitespace().last())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0.0)
        };
        let (commits, writes) = (
            value("insight_sqlite_commits_total"),
            value("insight_sqlite_committed_writes_total"),
        );
        let commit_seconds = value("insight_sqlite_commit_seconds_sum");
        eprintln!(
            "sqlite: {writes} writes in {commits} commits ({:.1} writes per commit, group commit; \
             {:.2} ms per commit on average)",
            writes / commits.max(1.0),
            commit_seconds * 1000.0 / commits.max(1.0)
        );
    }
    let ceiling = rows
        .iter()
        .find(|row| row.scenario == Scenario::Healthz)
        .map(|row| row.stats.per_second())
        .filter(|rate| *rate > 0.0);
    for row in rows.iter_mut().filter(|row| row.scenario != Scenario::Healthz) {
        row.ratio = ceiling.map(|ceiling| row.stats.per_second() / ceiling);
    }
    Ok(rows)
}

/// The server's address, the admin token (and a session cookie), and the client that
/// talks to it.
struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
    cookie: String,
}

/// Gives the admin a password with the CLI and signs in with it; returns the session
/// cookie (`name=value`).
async fn sign_in(api: &Api, database_url: &str) -> anyhow::Result<String> {
    const PASSWORD: &str = "the benchmark's own passphrase";
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_insight"))
        .args([
            "users",
            "set-password",
            "admin@localhost",
            "--database-url",
            database_url,
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("insight users set-password")?;
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().context("stdin")?;
        stdin.write_all(format!("{PASSWORD}\n").as_bytes()).await?;
    }
    ensure!(child.wait().await?.success(), "insight users set-password failed");
    let response = api
        .client
        .post(format!("{}/auth/login", api.base))
        .json(&json!({ "email": "admin@localhost", "password": PASSWORD }))
        .send()
        .await?;
    ensure!(response.status() == StatusCode::OK, "sign-in: {}", response.status());
    let cookie = response
        .headers()
        .get(reqwest::header::SET_COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .context("no session cookie")?;
    Ok(cookie.to_owned())
}

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .with_context(|| format!("{method} {path}: reading the body"))?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    /// Calls and insists on `expected`, naming the request and the answer otherwise.
    async fn expect(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        expected: StatusCode,
    ) -> anyhow::Result<Value> {
        let (status, value) = self.call(method.clone(), path, body).await?;
        ensure!(
            status == expected,
            "{method} {path}: expected {expected}, got {status}: {value}"
        );
        Ok(value)
    }
}

/// Creates the projects and the report; returns the report's path.
async fn setup(api: &Api) -> anyhow::Result<String> {
    let mut project_ids = Vec::with_capacity(PROJECTS);
    for n in 1..=PROJECTS {
        let body = json!({ "name": format!("Benchmark project {n}") });
        let project = api
            .expect(reqwest::Method::POST, "/projects/", Some(body), StatusCode::CREATED)
            .await?;
        project_ids.push(string_field(&project, "id")?);
    }
    let presets = api
        .expect(reqwest::Method::GET, "/presets/system/", None, StatusCode::OK)
        .await?;
    let preset = presets
        .as_array()
        .and_then(|presets| presets.first())
        .context("GET /presets/system/ returned no system preset")?;
    let preset_id = string_field(preset, "id")?;
    let project_id = &project_ids[0];
    let body = json!({ "title": "x", "preset_id": preset_id });
    let report = api
        .expect(
            reqwest::Method::POST,
            &format!("/projects/{project_id}/reports"),
            Some(body),
            StatusCode::ACCEPTED,
        )
        .await?;
    let report_id = string_field(&report, "id")?;
    Ok(format!("/projects/{project_id}/reports/{report_id}"))
}

fn string_field(value: &Value, name: &str) -> anyhow::Result<String> {
    value
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .with_context(|| format!("no string {name:?} in {value}"))
}

/// Builds the scenario's request; the number makes each write different.
type MakeRequest = Arc<dyn Fn(&reqwest::Client, u64) -> reqwest::RequestBuilder + Send + Sync>;

fn request_for(scenario: Scenario, api: &Api, report_path: &str) -> MakeRequest {
    let token = api.token.clone();
    match scenario {
        Scenario::Healthz => {
            let url = format!("{}/healthz", api.base);
            Arc::new(move |client, _| client.get(&url))
        }
        Scenario::ListProjects => {
            let url = format!("{}/projects/", api.base);
            Arc::new(move |client, _| client.get(&url).bearer_auth(&token))
        }
        Scenario::ListProjectsSession => {
            let url = format!("{}/projects/", api.base);
            let cookie = api.cookie.clone();
            Arc::new(move |client, _| client.get(&url).header(reqwest::header::COOKIE, &cookie))
        }
        Scenario::UpdateReport => {
            let url = format!("{}{report_path}", api.base);
            Arc::new(move |client, n| {
                let content = format!("# Findings\n\nEdit {n} of the benchmark: customers want faster exports.\n");
                client
                    .put(&url)
                    .bearer_auth(&token)
                    .json(&json!({ "content": content, "is_public": false }))
            })
        }
    }
}

/// One request before timing, to be sure the scenario measures what it claims.
async fn check_once(scenario: Scenario, api: &Api, request: &MakeRequest) -> anyhow::Result<()> {
    let label = scenario.label();
    let response = request(&api.client, 0)
        .send()
        .await
        .with_context(|| format!("{label}: the check request failed"))?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .with_context(|| format!("{label}: the answer is not JSON"))?;
    ensure!(status == StatusCode::OK, "{label}: expected 200, got {status}: {body}");
    if matches!(scenario, Scenario::ListProjects | Scenario::ListProjectsSession) {
        let count = body.as_array().map(Vec::len);
        ensure!(
            count == Some(PROJECTS),
            "{label}: expected {PROJECTS} projects, got {count:?}"
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The load: N tasks, each sending one request after another until the deadline.
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct Stats {
    /// 2xx answers.
    ok: u64,
    /// Non-2xx answers and failed requests.
    errors: u64,
    /// From the start until the last task finished (its last request may end after the deadline).
    elapsed: Duration,
    /// Every request's latency, errors included; sorted once all tasks are done.
    latencies: Vec<Duration>,
    first_error: Option<String>,
}

impl Stats {
    /// Successful requests per second.
    fn per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 { self.ok as f64 / seconds } else { 0.0 }
    }

    /// Nearest-rank percentile in milliseconds.
    fn percentile_ms(&self, percent: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let rank = (percent / 100.0 * self.latencies.len() as f64).ceil() as usize;
        let index = rank.clamp(1, self.latencies.len()) - 1;
        self.latencies[index].as_secs_f64() * 1000.0
    }

    fn absorb(&mut self, other: Stats) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.latencies.extend(other.latencies);
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

async fn drive(
    client: &reqwest::Client,
    request: &MakeRequest,
    counter: &Arc<AtomicU64>,
    concurrency: usize,
    duration: Duration,
) -> anyhow::Result<Stats> {
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let client = client.clone();
            let request = Arc::clone(request);
            let counter = Arc::clone(counter);
            tokio::spawn(async move {
                let mut stats = Stats::default();
                while Instant::now() < deadline {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    let sent = Instant::now();
                    let outcome = send(request(&client, n)).await;
                    stats.latencies.push(sent.elapsed());
                    match outcome {
                        Ok(()) => stats.ok += 1,
                        Err(error) => {
                            stats.errors += 1;
                            stats.first_error.get_or_insert(error);
                        }
                    }
                }
                stats
            })
        })
        .collect();
    let mut total = Stats::default();
    for task in tasks {
        total.absorb(task.await.context("a client task panicked")?);
    }
    total.elapsed = started.elapsed();
    total.latencies.sort_unstable();
    Ok(total)
}

/// Sends and reads the whole body (a response counts once it has fully arrived, and an
/// unread body would keep its connection from being reused).
async fn send(request: reqwest::RequestBuilder) -> Result<(), String> {
    let response = request.send().await.map_err(|err| format!("request failed: {err}"))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|err| format!("{status}, body unreadable: {err}"))?;
    if status.is_success() {
        Ok(())
    } else {
        let text = String::from_utf8_lossy(&body);
        Err(format!("{status}: {}", text.chars().take(300).collect::<String>()))
    }
}

// ---------------------------------------------------------------------------------------
// The server process.
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// A fresh PostgreSQL database next to the one named.
// ---------------------------------------------------------------------------------------

struct PgDatabase {
    /// The server's maintenance database, from which the benchmark database is made and dropped.
    admin_url: String,
    name: String,
    url: String,
}

impl PgDatabase {
    async fn create(base: &str) -> anyhow::Result<Self> {
        let (server, rest) = base
            .rsplit_once('/')
            .filter(|(server, _)| server.contains("://"))
            .context("the PostgreSQL URL must end in /DBNAME")?;
        let (base_name, query) = match rest.split_once('?') {
            Some((name, query)) => (name, format!("?{query}")),
            None => (rest, String::new()),
        };
        // PostgreSQL silently cuts names at 63 bytes; keep the uuid whole instead.
        let prefix: String = base_name.chars().take(63 - "_bench_".len() - 32).collect();
        let name = format!("{prefix}_bench_{}", Uuid::new_v4().simple());
        let admin_url = format!("{server}/postgres{query}");
        let mut conn = PgConnection::connect(&admin_url)
            .await
            .context("cannot connect to the PostgreSQL server's postgres database")?;
        conn.execute(format!("CREATE DATABASE \"{name}\"").as_str())
            .await
            .with_context(|| format!("cannot create the database {name}"))?;
        let _ = conn.close().await;
        Ok(Self {
            url: format!("{server}/{name}{query}"),
            admin_url,
            name,
        })
    }

    async fn drop_it(&self) -> anyhow::Result<()> {
        let mut conn = PgConnection::connect(&self.admin_url).await?;
        // FORCE (PostgreSQL 13+) ends sessions the killed server may have left behind.
        conn.execute(format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name).as_str())
            .await?;
        let _ = conn.close().await;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The report.
// ---------------------------------------------------------------------------------------

fn print_table(rows: &[Row]) {
    let header = [
        "backend",
        "scenario",
        "req/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "vs /healthz",
        "target",
        "",
    ];
    let lines: Vec<[String; 9]> = rows
        .iter()
        .map(|row| {
            let total = row.stats.ok + row.stats.errors;
            [
                row.backend.to_owned(),
                row.scenario.label().to_owned(),
                format!("{:.0}", row.stats.per_second()),
                format!("{:.2}", row.stats.percentile_ms(50.0)),
                format!("{:.2}", row.stats.percentile_ms(99.0)),
                format!("{}/{total}", row.stats.errors),
                row.ratio.map_or_else(|| "-".into(), |ratio| format!("{ratio:.2}x")),
                match row.target {
                    Some(Target::OfCeiling(fraction)) => format!(">= {fraction:.2}x /healthz"),
                    Some(Target::PerSecond(rate)) => format!(">= {rate:.0} req/s"),
                    None => "-".into(),
                },
                match row.target_met() {
                    Some(true) => "met".into(),
                    Some(false) => "MISSED".into(),
                    None => String::new(),
                },
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.len());
        }
    }
    // Text columns left-aligned, figures right-aligned.
    let numeric = [false, false, true, true, true, true, true, false, false];
    let format_line = |cells: &[&str]| {
        let mut text = String::new();
        for ((cell, width), right) in cells.iter().zip(widths).zip(numeric) {
            if right {
                text.push_str(&format!("{cell:>width$}  "));
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        text.trim_end().to_owned()
    };
    println!("{}", format_line(&header));
    for line in &lines {
        println!("{}", format_line(&line.each_ref().map(String::as_str)));
    }
    println!(
        "req/s counts 2xx answers; p50/p99 cover every request; vs /healthz is req/s over the same \
         backend's /healthz req/s."
    );
}
