//! The workspace search (`GET /search`) at the scale of a large research repository:
//! `INSIGHT_BENCH_INTERVIEWS` (2,000) synthetic interviews of `INSIGHT_BENCH_WORDS`
//! (8,000) words in `INSIGHT_BENCH_PROJECTS` (20) projects of one workspace, through the
//! real release binary. Run with `cargo bench --bench repository`.
//!
//! 1. The interviews are written with the library's store into a fresh SQLite file, as
//!    the service writes them: the first user and his token as `serve` makes them on an
//!    empty database, each record created with its utterances and processing job, then
//!    claimed, marked in progress and finished as the record worker does. Uploading them
//!    through the API takes several times longer (one upload is timed in step 4).
//! 2. `insight serve` starts on that database with an empty `INSIGHT_SEARCH_DIR`, so it
//!    builds the index from the tables: the time from the start to its "search index
//!    built" log line, the documents it holds, and the folder's size on disk.
//! 3. `INSIGHT_BENCH_QUERIES` (200) queries per class, one at a time after warm-up, over
//!    HTTP: common, very common (function) and rare single words, quoted phrases, and
//!    common words filtered by project, speaker and dates. Target: p99 under 50 ms.
//! 4. Freshness, `INSIGHT_BENCH_ROUNDS` (5) times: a new interview with a word found
//!    nowhere else is uploaded through the API; once `GET /insight/{id}/` says
//!    `Finished`, `/search` is asked for the word every 10 ms until it is found.
//!    Target: under 1 s.
//! 5. The server's resident memory (`VmRSS`, and its peak `VmHWM`) after each step.
//!
//! The text comes from a fixed-seed generator (as in `bench/search.rs`): 55% function
//! words, 25% words of the domain, the rest a long tail of 20,000 invented words, each
//! class Zipf-distributed, in utterances of 5 to 80 words that alternate between the
//! interviewer and the respondent; a respondent's utterance holds one of 20 planted
//! two-word phrases one time in eight. Records are dated over the last two years.
//!
//! This is a report, not a test: a missed target still exits 0. It exits non-zero when
//! the load, the server or a request fails, or when the index misses documents.

mod server_process;
mod stats;
mod words;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use insight::domain::job::JobKind;
use insight::domain::project::NewProject;
use insight::domain::record::{RecordStatus, transcribe};
use insight::engines::ingest::ParsedUtterance;
use insight::store::{NewRecord, RecordContent, Store};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server_process::{ServerProcess, listening_addr};
use sqlx::{Connection, SqliteConnection};
use stats::settle;
use tokio::sync::mpsc::UnboundedReceiver;
use uuid::Uuid;
use words::{Rng, Vocabulary};

const TARGET_P99_MS: f64 = 50.0;
const TARGET_FRESHNESS_MS: f64 = 1000.0;
const WARM_UP: usize = 10;
/// The console's page of hits (`web/pages/repository.rs`).
const DEFAULT_LIMIT: usize = 20;
/// Records written at once while loading: their commits share fsyncs (group commit).
const LOAD_CONCURRENCY: usize = 8;
const START_TIMEOUT: Duration = Duration::from_secs(120);
const BUILD_TIMEOUT: Duration = Duration::from_secs(4 * 3600);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
const FINISH_TIMEOUT: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(10);
/// Speech at about 150 words a minute.
const MS_PER_WORD: u64 = 400;
const DAYS_SPANNED: i64 = 730;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("repository benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

struct Scale {
    interviews: usize,
    words: usize,
    projects: usize,
    queries: usize,
    rounds: usize,
    limit: usize,
}

impl Scale {
    fn from_env() -> anyhow::Result<Self> {
        let scale = Self {
            interviews: env_number("INSIGHT_BENCH_INTERVIEWS", 2000)?,
            words: env_number("INSIGHT_BENCH_WORDS", 8000)?,
            projects: env_number("INSIGHT_BENCH_PROJECTS", 20)?,
            queries: env_number("INSIGHT_BENCH_QUERIES", 200)?,
            rounds: env_number("INSIGHT_BENCH_ROUNDS", 5)?,
            limit: env_number("INSIGHT_BENCH_LIMIT", DEFAULT_LIMIT)?,
        };
        ensure!(
            scale.interviews > 0 && scale.words >= 100 && scale.projects > 0 && scale.queries > 0,
            "INSIGHT_BENCH_INTERVIEWS, INSIGHT_BENCH_PROJECTS and INSIGHT_BENCH_QUERIES must be at least 1, \
             INSIGHT_BENCH_WORDS at least 100"
        );
        ensure!((1..=500).contains(&scale.limit), "INSIGHT_BENCH_LIMIT must be 1 to 500");
        Ok(scale)
    }
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} must be a whole number, not {value:?}")),
        Err(_) => Ok(default),
    }
}

async fn run() -> anyhow::Result<()> {
    let started = Instant::now();
    let scale = Scale::from_env()?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "workspace search: {} interviews x {} words = {} words in {} projects of one workspace; {cores} cores \
         (the benchmark and the server share them)",
        thousands(scale.interviews as u64),
        thousands(scale.words as u64),
        thousands((scale.interviews * scale.words) as u64),
        scale.projects
    );
    let dir = tempfile::Builder::new()
        .prefix("insight-bench-repository-")
        .tempdir()
        .context("cannot make a temporary folder")?;
    let database = dir.path().join("insight.db");
    let database_url = format!("sqlite://{}", database.display());
    let search_dir = dir.path().join("search");
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let vocabulary = Arc::new(Vocabulary::new(&mut rng));

    // 1. The load.
    let load_started = Instant::now();
    let loaded = load(&database_url, &scale, &vocabulary)
        .await
        .context("loading the interviews")?;
    let load_seconds = load_started.elapsed().as_secs_f64();
    println!(
        "load (the store, into SQLite): {} records, {} utterances, {} words in {load_seconds:.1} s; database {:.1} MiB",
        thousands(scale.interviews as u64),
        thousands(loaded.utterances),
        thousands(loaded.words),
        mib(file_bytes(&database) + file_bytes(&dir.path().join("insight.db-wal")))
    );

    // 2. The build.
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url", &database_url])
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("INSIGHT_SEARCH_DIR", &search_dir)
        .env("INSIGHT_LOG_FORMAT", "json")
        // The default level, whatever the caller's environment says.
        .env("RUST_LOG", "info");
    let started_server = start_server(command, loaded.token.clone()).await?;
    let server = &started_server.server;
    let built = wait_built(started_server.built, started_server.lines)
        .await
        .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    let (build, built_at) = built;
    let wall = built_at.duration_since(started_server.spawned).as_secs_f64();
    println!(
        "index build (empty INSIGHT_SEARCH_DIR): {wall:.1} s from the server's start to \"search index built\" \
         (the indexer's own figure {:.1} s); {} documents ({:.2} M words/s)",
        build.seconds,
        thousands(build.documents),
        loaded.words as f64 / build.seconds.max(f64::EPSILON) / 1e6
    );
    ensure!(
        build.documents == loaded.utterances,
        "the index holds {} documents, the database {} utterances",
        build.documents,
        loaded.utterances
    );
    let pid = server.child.0.id();
    let memory_built = memory(pid)?;
    let on_disk = folder_bytes(&search_dir);
    println!(
        "index on disk: {:.1} MiB (the folder walked; tantivy counts {:.1} MiB), {} segments; {:.1} bytes per word",
        mib(on_disk),
        mib(build.bytes),
        segments(&search_dir),
        on_disk as f64 / loaded.words.max(1) as f64
    );
    println!("server memory after the build: {memory_built}");
    let quiet = settle(pid, Duration::from_secs(300)).await;
    println!(
        "server idle {:.1} s after the build (background merges), now {} segments",
        quiet.as_secs_f64(),
        segments(&search_dir)
    );

    // 3. Queries.
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .context("cannot build the HTTP client")?;
    let api = Api {
        client,
        base: server.base.clone(),
        token: server.token.clone(),
    };
    let queries_started = Instant::now();
    let rows = query_classes(&api, &scale, &vocabulary, &loaded)
        .await
        .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    let queries_seconds = queries_started.elapsed().as_secs_f64();
    let memory_queried = memory(pid)?;
    println!("server memory after the queries: {memory_queried}");

    // 4. Freshness.
    let fresh = freshness(&api, &scale, &vocabulary, &loaded, pid)
        .await
        .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    let memory_fresh = memory(pid)?;
    println!("server memory after the freshness rounds: {memory_fresh}");

    // The summary.
    println!();
    println!("summary");
    println!(
        "  corpus: {} records, {} utterances, {} words; loaded in {load_seconds:.1} s",
        thousands(scale.interviews as u64),
        thousands(loaded.utterances),
        thousands(loaded.words)
    );
    println!(
        "  build: {wall:.1} s ({:.1} s in the indexer), index {:.1} MiB on disk",
        build.seconds,
        mib(on_disk)
    );
    for row in &rows {
        println!(
            "  {:<36} p50 {:>6.2} ms, p99 {:>6.2} ms (target < {TARGET_P99_MS:.0} ms: {})",
            row.name,
            row.p50,
            row.p99,
            met(row.p99 < TARGET_P99_MS)
        );
    }
    if let Some(worst) = fresh.iter().copied().reduce(f64::max) {
        println!(
            "  freshness: max {worst:.0} ms over {} rounds (target < {TARGET_FRESHNESS_MS:.0} ms: {})",
            fresh.len(),
            met(worst < TARGET_FRESHNESS_MS)
        );
    }
    println!("  memory: after the build {memory_built}; after the queries {memory_queried}; at the end {memory_fresh}");
    println!(
        "  time: {:.1} s in all ({load_seconds:.0} s loading, {wall:.0} s building, {queries_seconds:.0} s querying)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

// ---------------------------------------------------------------------------------------
// The synthetic interviews.
// ---------------------------------------------------------------------------------------

/// Planted in respondents' utterances, so that phrase queries have hits.
const PHRASES: [&str; 20] = [
    "not happy",
    "too expensive",
    "hidden fees",
    "free trial",
    "customer support",
    "monthly plan",
    "annual contract",
    "data export",
    "dark mode",
    "mobile app",
    "team lead",
    "sales call",
    "credit card",
    "load time",
    "user interface",
    "search bar",
    "price increase",
    "weekly report",
    "single sign",
    "shipping costs",
];

/// One respondent per interview, each the respondent of many interviews (the speaker filter).
const RESPONDENTS: [&str; 40] = [
    "Anna", "Ben", "Chloe", "David", "Emma", "Felix", "Grace", "Henry", "Isla", "Jack", "Kate", "Liam", "Maya", "Noah",
    "Olivia", "Paul", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera", "Will", "Xena", "Yusuf", "Zoe", "Aisha", "Bruno",
    "Carmen", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kiara", "Lars", "Mina", "Nils",
];
const INTERVIEWER: &str = "Interviewer";

/// One interview's utterances of 5 to 80 words, the interviewer asking and the respondent
/// answering in turn, timed at speaking pace; `planted` goes into a respondent's
/// utterance half-way through.
fn interview(
    vocabulary: &Vocabulary,
    seed: u64,
    words: usize,
    respondent: &str,
    planted: Option<&str>,
) -> Vec<ParsedUtterance> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut utterances = Vec::new();
    let mut said = 0;
    let mut at = 0;
    let mut planted = planted;
    while said < words {
        let asking = utterances.len() % 2 == 0;
        let len = (5 + rng.below(76)).min(words - said);
        let phrase_at = (!asking && rng.below(8) == 0).then(|| rng.below(len));
        let plant_here = !asking && said >= words / 2 && planted.is_some();
        let mut text = String::new();
        for i in 0..len {
            let word = match (phrase_at == Some(i), plant_here && i == len / 2) {
                (_, true) => planted.take().unwrap_or_default(),
                (true, false) => PHRASES[rng.below(PHRASES.len())],
                _ => vocabulary.draw(&mut rng),
            };
            words::push_word(&mut text, word, i, len, &mut rng);
        }
        // The interviewer asks: the speaker who asks most is taken for the interviewer.
        text.push(if asking || rng.below(10) == 0 { '?' } else { '.' });
        let end = at + len as u64 * MS_PER_WORD;
        utterances.push(ParsedUtterance {
            speaker: Some(if asking { INTERVIEWER } else { respondent }.to_owned()),
            start_ms: Some(at),
            end_ms: Some(end),
            text,
        });
        said += len;
        at = end + 600;
    }
    utterances
}

fn respondent_of(interview: usize, projects: usize) -> &'static str {
    RESPONDENTS[(interview / projects) % RESPONDENTS.len()]
}

// ---------------------------------------------------------------------------------------
// 1. The load.
// ---------------------------------------------------------------------------------------

struct Loaded {
    token: String,
    projects: Vec<Uuid>,
    utterances: u64,
    words: u64,
    first_day: DateTime<Utc>,
}

async fn load(database_url: &str, scale: &Scale, vocabulary: &Arc<Vocabulary>) -> anyhow::Result<Loaded> {
    let store = Store::connect(database_url, 4).await?;
    // What `serve` does on an empty database: the admin, his personal workspace (whose id
    // is his) and a token.
    let (user, token) = store.ensure_first_user().await?.context("the database is not empty")?;
    let mut projects = Vec::with_capacity(scale.projects);
    for n in 1..=scale.projects {
        let project = store
            .create_project(
                user.id,
                user.id,
                NewProject {
                    name: format!("Study {n}"),
                    description: String::new(),
                    research_goals: "Why do customers choose, stay and leave?".into(),
                    interview_guide: String::new(),
                },
            )
            .await?;
        projects.push(project.id);
    }
    let now = Utc::now();
    let first_day = now - chrono::Duration::days(DAYS_SPANNED);
    let mut rng = Rng(0x0dd_ba11);
    let dates: Vec<DateTime<Utc>> = (0..scale.interviews)
        .map(|_| {
            first_day
                + chrono::Duration::days(rng.below(DAYS_SPANNED as usize) as i64)
                + chrono::Duration::seconds(rng.below(86_400) as i64)
        })
        .collect();
    let lease = chrono::Duration::minutes(30);
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<anyhow::Result<(Uuid, u64, u64)>> = futures_util::stream::iter(0..scale.interviews)
        .map(|n| {
            let store = &store;
            let vocabulary = Arc::clone(vocabulary);
            let project = projects[n % projects.len()];
            let progress = &progress;
            async move {
                let respondent = respondent_of(n, scale.projects);
                let parsed = interview(&vocabulary, n as u64 + 1, scale.words, respondent, None);
                let transcribed = transcribe(parsed);
                let (utterances, words) = (transcribed.utterances.len() as u64, transcribed.word_count as u64);
                let id = store
                    .create_record(
                        project,
                        NewRecord {
                            name: format!("Interview {} with {respondent}", n + 1),
                            language: Some("en".into()),
                            source_format: "vtt".into(),
                            source_name: Some(format!("interview-{}.vtt", n + 1)),
                            content: RecordContent::Transcript(transcribed),
                        },
                    )
                    .await?;
                // As the record worker finishes a transcript: claim a job (each task
                // created one, so one waits), mark its record in progress, finish it.
                let job = store
                    .claim_job(JobKind::ProcessRecord, lease)
                    .await?
                    .context("no record job waiting")?;
                store
                    .set_record_status(job.subject_id, RecordStatus::InProgress, None)
                    .await?;
                ensure!(store.finish_record(&job, None, None).await?, "a record job was lost");
                // Personas of a repository's interviews were written long ago; writing
                // 2,000 now would compete with the build for the cores. Their jobs are done.
                let persona = store
                    .claim_job(JobKind::WritePersona, lease)
                    .await?
                    .context("no persona job waiting")?;
                store.complete_job(&persona).await?;
                let done = progress.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if done.is_multiple_of((scale.interviews / 10).max(1)) {
                    eprintln!("loaded {done} of {} interviews", scale.interviews);
                }
                Ok((id, utterances, words))
            }
        })
        .buffer_unordered(LOAD_CONCURRENCY)
        .collect()
        .await;
    store.close().await;
    let mut ids = Vec::with_capacity(results.len());
    let (mut utterances, mut words) = (0, 0);
    for result in results {
        let (id, n, w) = result?;
        ids.push(id);
        utterances += n;
        words += w;
    }
    // The store dates a record when it is made; a repository's were made over two years,
    // which the date filters need. Nothing else in the service writes these columns.
    let mut conn = SqliteConnection::connect(database_url).await?;
    let mut tx = conn.begin().await?;
    for (id, date) in ids.iter().zip(&dates) {
        sqlx::query("UPDATE records SET created_at = $1, updated_at = $1 WHERE id = $2")
            .bind(date)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    conn.close().await?;
    Ok(Loaded {
        token,
        projects,
        utterances,
        words,
        first_day,
    })
}

// ---------------------------------------------------------------------------------------
// 2. The server and its build.
// ---------------------------------------------------------------------------------------

struct Started {
    server: ServerProcess,
    spawned: Instant,
    /// The server's log lines after the listening line.
    lines: UnboundedReceiver<String>,
    /// The build's line, when it came before the listening line.
    built: Option<(Built, Instant)>,
}

struct Built {
    documents: u64,
    bytes: u64,
    seconds: f64,
}

/// Starts `command` (`insight serve` on the loaded database). `ServerProcess::start`
/// waits for the token a server prints only on an empty database; this one already has
/// its user, whose token the load kept.
async fn start_server(command: Command, token: String) -> anyhow::Result<Started> {
    let spawned = Instant::now();
    let server_process::Spawned {
        child,
        log,
        lines_rx: mut lines,
        ..
    } = server_process::spawn(command)?;
    let mut built = None;
    let waited = tokio::time::timeout(START_TIMEOUT, async {
        while let Some(line) = lines.recv().await {
            if let Some(addr) = listening_addr(&line) {
                return Some(addr);
            }
            if let Some(build) = built_line(&line) {
                built = Some((build, Instant::now()));
            }
        }
        None
    })
    .await;
    let server = ServerProcess {
        child,
        base: String::new(),
        token,
        log,
    };
    let addr = match waited {
        Ok(Some(addr)) => addr,
        Ok(None) => bail!("the server exited before listening\n{}", server.log_tail()),
        Err(_) => bail!(
            "no \"Insight listening on http://...\" line within {} s\n{}",
            START_TIMEOUT.as_secs(),
            server.log_tail()
        ),
    };
    let mut server = server;
    server.base = format!("http://{addr}");
    Ok(Started {
        server,
        spawned,
        lines,
        built,
    })
}

/// The figures of the indexer's "search index built" line (JSON log format).
fn built_line(line: &str) -> Option<Built> {
    let value: Value = serde_json::from_str(line).ok()?;
    let fields = value.get("fields")?;
    if fields.get("message")?.as_str()? != "search index built" {
        return None;
    }
    Some(Built {
        documents: fields.get("documents")?.as_u64()?,
        bytes: fields.get("bytes")?.as_u64()?,
        seconds: fields.get("seconds")?.as_f64()?,
    })
}

/// Waits for the build's log line: the indexer logs it once the last batch is committed
/// and searchable, with its own count, which `/search` has no way to give (every query
/// needs words).
async fn wait_built(
    early: Option<(Built, Instant)>,
    mut lines: UnboundedReceiver<String>,
) -> anyhow::Result<(Built, Instant)> {
    if let Some(built) = early {
        return Ok(built);
    }
    let waited = tokio::time::timeout(BUILD_TIMEOUT, async {
        while let Some(line) = lines.recv().await {
            if let Some(build) = built_line(&line) {
                return Some((build, Instant::now()));
            }
            if line.contains("\"WARN\"") || line.contains("\"ERROR\"") {
                eprintln!("server: {line}");
            }
        }
        None
    })
    .await;
    match waited {
        Ok(Some(built)) => Ok(built),
        Ok(None) => bail!("the server exited before the index was built"),
        Err(_) => bail!("no \"search index built\" within {} s", BUILD_TIMEOUT.as_secs()),
    }
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Bytes of the files under `path`.
fn folder_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_bytes(&entry.path()),
            Ok(_) => entry.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// tantivy segments under `path`: its files are named by their segment's id.
fn segments(path: &Path) -> usize {
    fn collect(path: &Path, ids: &mut HashSet<String>) {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                collect(&path, ids);
            } else if let Some(stem) = path.file_stem().and_then(|s| s.to_str())
                && stem.len() == 32
                && stem.chars().all(|c| c.is_ascii_hexdigit())
            {
                ids.insert(stem.to_owned());
            }
        }
    }
    let mut ids = HashSet::new();
    collect(path, &mut ids);
    ids.len()
}

struct Memory {
    rss_kib: u64,
    peak_kib: u64,
}

impl std::fmt::Display for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RSS {:.0} MiB, peak {:.0} MiB",
            self.rss_kib as f64 / 1024.0,
            self.peak_kib as f64 / 1024.0
        )
    }
}

/// The server's resident memory now and at its peak (`/proc/<pid>/status`).
fn memory(pid: u32) -> anyhow::Result<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading /proc/<pid>/status")?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0)
    };
    Ok(Memory {
        rss_kib: field("VmRSS:"),
        peak_kib: field("VmHWM:"),
    })
}

// ---------------------------------------------------------------------------------------
// 3. Queries.
// ---------------------------------------------------------------------------------------

struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    /// `GET /search` with `params`: the time to the whole answer, and the answer.
    async fn search(&self, params: &[(&str, String)]) -> anyhow::Result<(f64, Value)> {
        let sent = Instant::now();
        let response = self
            .client
            .get(format!("{}/search", self.base))
            .query(params)
            .bearer_auth(&self.token)
            .send()
            .await
            .context("GET /search")?;
        let status = response.status();
        let body = response.bytes().await.context("GET /search: reading the body")?;
        let ms = sent.elapsed().as_secs_f64() * 1000.0;
        ensure!(
            status == StatusCode::OK,
            "GET /search {params:?}: {status}: {}",
            String::from_utf8_lossy(&body)
        );
        Ok((ms, serde_json::from_slice(&body).context("GET /search: not JSON")?))
    }

    async fn expect(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        expected: StatusCode,
    ) -> anyhow::Result<Value> {
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.with_context(|| format!("{method} {path}"))?;
        let status = response.status();
        let text = response.text().await?;
        ensure!(
            status == expected,
            "{method} {path}: expected {expected}, got {status}: {text}"
        );
        serde_json::from_str(&text).with_context(|| format!("{method} {path}: not JSON"))
    }
}

struct Row {
    name: String,
    p50: f64,
    p99: f64,
}

type Params = Vec<(&'static str, String)>;

/// `count` queries made by `make`.
fn draw(count: usize, rng: &mut Rng, mut make: impl FnMut(&mut Rng) -> Params) -> Vec<Params> {
    (0..count).map(|_| make(rng)).collect()
}

/// The queries of each class: `count` of them, drawn with a fixed seed.
fn classes(scale: &Scale, vocabulary: &Vocabulary, loaded: &Loaded, count: usize) -> Vec<(&'static str, Vec<Params>)> {
    let mut rng = Rng(0x5ea4_c4ed);
    let content = &vocabulary.content.words;
    let function = &vocabulary.function.words;
    let tail = &vocabulary.tail.words;
    // Ranks 0 to 29 of the domain words: each in about 6% (rank 29) to 70% (rank 0) of
    // the utterances.
    let common = |rng: &mut Rng| content[rng.below(30)].clone();
    let first_day = loaded.first_day.date_naive();
    let mut classes = Vec::new();
    classes.push(("common word", draw(count, &mut rng, |rng| vec![("q", common(rng))])));
    // "the", "and", ...: in most utterances (stop words are kept, for phrases).
    classes.push((
        "very common word (function word)",
        draw(count, &mut rng, |rng| vec![("q", function[rng.below(10)].clone())]),
    ));
    // Ranks 5,000 and beyond of the tail: a few dozen uses each in 16M words, more where
    // stemming joins a word to a commoner inflection.
    classes.push((
        "rare word",
        draw(count, &mut rng, |rng| {
            vec![("q", tail[5000 + rng.below(tail.len() - 5000)].clone())]
        }),
    ));
    classes.push((
        "quoted phrase",
        draw(count, &mut rng, |rng| {
            vec![("q", format!("\"{}\"", PHRASES[rng.below(PHRASES.len())]))]
        }),
    ));
    classes.push((
        "common word, project_id filter",
        draw(count, &mut rng, |rng| {
            vec![
                ("q", common(rng)),
                (
                    "project_id",
                    loaded.projects[rng.below(loaded.projects.len())].to_string(),
                ),
            ]
        }),
    ));
    classes.push((
        "common word, speaker filter",
        draw(count, &mut rng, |rng| {
            let interview = rng.below(scale.interviews);
            vec![
                ("q", common(rng)),
                ("speaker", respondent_of(interview, scale.projects).to_owned()),
            ]
        }),
    ));
    classes.push((
        "common word, from/to (30 days)",
        draw(count, &mut rng, |rng| {
            let from = first_day + chrono::Duration::days(rng.below((DAYS_SPANNED - 30) as usize) as i64);
            let to = from + chrono::Duration::days(30);
            vec![
                ("q", common(rng)),
                ("from", from.format("%Y-%m-%d").to_string()),
                ("to", to.format("%Y-%m-%d").to_string()),
            ]
        }),
    ));
    classes
}

async fn query_classes(api: &Api, scale: &Scale, vocabulary: &Vocabulary, loaded: &Loaded) -> anyhow::Result<Vec<Row>> {
    let limit = scale.limit.to_string();
    println!();
    println!(
        "queries over HTTP: {} per class after {WARM_UP} warm-up, one at a time, limit {limit} \
         (target p99 < {TARGET_P99_MS:.0} ms)",
        scale.queries
    );
    println!(
        "{:<36} {:>8} {:>8} {:>8} {:>8} {:>12} {:>8}  target",
        "class", "mean ms", "p50 ms", "p99 ms", "max ms", "mean total", "no hits"
    );
    let mut rows = Vec::new();
    for (name, queries) in classes(scale, vocabulary, loaded, scale.queries + WARM_UP) {
        let mut times = Vec::with_capacity(scale.queries);
        let (mut totals, mut empty) = (0u64, 0usize);
        for (n, params) in queries.into_iter().enumerate() {
            let mut params = params;
            params.push(("limit", limit.clone()));
            let (ms, answer) = api.search(&params).await?;
            if n < WARM_UP {
                continue;
            }
            let total = answer["total"].as_u64().context("no total in the answer")?;
            totals += total;
            empty += usize::from(total == 0);
            times.push(ms);
        }
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        times.sort_by(f64::total_cmp);
        let (p50, p99) = (stats::percentile(&times, 50.0), stats::percentile(&times, 99.0));
        let max = times.last().copied().unwrap_or(f64::NAN);
        println!(
            "{name:<36} {mean:>8.2} {p50:>8.2} {p99:>8.2} {max:>8.2} {:>12} {empty:>8}  {}",
            thousands(totals / times.len().max(1) as u64),
            met(p99 < TARGET_P99_MS)
        );
        rows.push(Row {
            name: name.to_owned(),
            p50,
            p99,
        });
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------
// 4. Freshness.
// ---------------------------------------------------------------------------------------

/// Each round's time from the record seen `Finished` to its word found, in ms.
async fn freshness(
    api: &Api,
    scale: &Scale,
    vocabulary: &Vocabulary,
    loaded: &Loaded,
    pid: u32,
) -> anyhow::Result<Vec<f64>> {
    println!();
    println!(
        "freshness: a new {}-word interview uploaded through the API, then /search polled every {} ms from \
         the moment GET /insight/{{id}}/ says Finished (target < {TARGET_FRESHNESS_MS:.0} ms)",
        thousands(scale.words as u64),
        POLL.as_millis()
    );
    let mut fresh = Vec::new();
    let mut to_finished = Vec::new();
    for round in 0..scale.rounds {
        // Each round starts on an idle server (the previous round's persona written).
        settle(pid, Duration::from_secs(120)).await;
        let word = format!("xyzzy{round}fresh");
        let n = scale.interviews + round;
        let respondent = respondent_of(n, scale.projects);
        let text: String = interview(vocabulary, n as u64 + 1, scale.words, respondent, Some(&word))
            .iter()
            .map(|u| format!("{}: {}\n", u.speaker.as_deref().unwrap_or(INTERVIEWER), u.text))
            .collect();
        let project = loaded.projects[round % loaded.projects.len()];
        let sent = Instant::now();
        let record = api
            .expect(
                reqwest::Method::POST,
                &format!("/projects/{project}/records"),
                Some(json!({ "title": format!("Fresh interview {}", round + 1), "text": text, "language": "en" })),
                StatusCode::CREATED,
            )
            .await?;
        let uploaded = sent.elapsed();
        let id = record["id"].as_str().context("no record id")?.to_owned();
        let finished = loop {
            let record = api
                .expect(reqwest::Method::GET, &format!("/insight/{id}/"), None, StatusCode::OK)
                .await?;
            match record["status"].as_str() {
                Some("Finished") => break Instant::now(),
                Some("Error") => bail!("the fresh record failed: {record}"),
                _ => {}
            }
            ensure!(
                sent.elapsed() < FINISH_TIMEOUT,
                "the fresh record is not Finished after {} s",
                FINISH_TIMEOUT.as_secs()
            );
            tokio::time::sleep(POLL).await;
        };
        let found = loop {
            let (_, answer) = api.search(&[("q", word.clone()), ("limit", "1".into())]).await?;
            if answer["total"].as_u64().unwrap_or(0) > 0 {
                break Instant::now();
            }
            ensure!(
                finished.elapsed() < FINISH_TIMEOUT,
                "{word:?} not found {} s after its record finished",
                FINISH_TIMEOUT.as_secs()
            );
            tokio::time::sleep(POLL).await;
        };
        let ms = found.duration_since(finished).as_secs_f64() * 1000.0;
        let finishing = finished.duration_since(sent).as_secs_f64() * 1000.0;
        println!(
            "  round {}: POST {:.0} ms, Finished seen {finishing:.0} ms after the POST began, found {ms:.0} ms later",
            round + 1,
            uploaded.as_secs_f64() * 1000.0
        );
        fresh.push(ms);
        to_finished.push(finishing);
    }
    if let (Some(worst), Some(slowest)) = (
        fresh.iter().copied().reduce(f64::max),
        to_finished.iter().copied().reduce(f64::max),
    ) {
        println!(
            "  max {worst:.0} ms from Finished to found ({}); one upload to Finished takes up to {slowest:.0} ms, \
             so {} uploads one after another would take about {:.0} s",
            met(worst < TARGET_FRESHNESS_MS),
            thousands(scale.interviews as u64),
            slowest / 1000.0 * scale.interviews as f64
        );
    }
    Ok(fresh)
}

// ---------------------------------------------------------------------------------------
// Formatting.
// ---------------------------------------------------------------------------------------

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// 16000000 as "16,000,000".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut text = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}
