//! Bulk ingest until searchable, against PostgreSQL full-text search loading the same
//! utterances in the same run. Run with `cargo bench --bench bulk`.
//!
//! 1. `insight serve` (the release binary) starts on an empty SQLite file; its resident
//!    memory idle is the baseline.
//! 2. Throughput: `INSIGHT_BENCH_INTERVIEWS` (200) interviews of `INSIGHT_BENCH_WORDS`
//!    (8,000) words are pasted as `Speaker: text` lines through `POST
//!    /projects/{id}/records` by `INSIGHT_BENCH_CLIENTS` (8) clients at once, without a
//!    language (as the console sends them). Every interview holds one word found nowhere
//!    else in the corpus; the clock stops when `/search` finds it in every one. Printed:
//!    words per second, upload to searchable.
//! 3. The same utterances go into PostgreSQL (`INSIGHT_BENCH_POSTGRES_URL`, default the local
//!    server; a database of its own, dropped after) as a team would build it: a table with a
//!    generated `tsvector` column (`english`) and a GIN index, one transaction per interview,
//!    by as many clients. Searchable once committed. Target: Insight's words per second at
//!    least PostgreSQL's.
//! 4. Freshness at a steady rate: `INSIGHT_BENCH_RATE` (50) records a second for
//!    `INSIGHT_BENCH_RATE_SECONDS` (10) seconds, of `INSIGHT_BENCH_RATE_WORDS` (1,000)
//!    words each, each with its own word; per record, the time from its upload's answer
//!    until `/search` finds it (one query for every record not yet found, every 20 ms).
//!    That bounds the time from finished to searchable from above. Target: p99 under 1 s.
//! 5. The server's resident memory after each step, once it is idle again. Target: within
//!    twice the idle figure.
//!
//! A report, not a test: a missed target still exits 0; a failed request or a record that
//! never becomes searchable exits non-zero.

mod server_process;
mod stats;
mod words;

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use futures_util::StreamExt;
use serde_json::{Value, json};
use server_process::ServerProcess;
use sqlx::Connection;
use stats::{anon_mib, rss_mib, settle};
use words::{Rng, Vocabulary};

const TARGET_FRESHNESS_MS: f64 = 1000.0;
const MEMORY_FACTOR: f64 = 2.0;
const SEARCHABLE_TIMEOUT: Duration = Duration::from_secs(900);
const POLL: Duration = Duration::from_millis(20);
/// How long the server may stay busy after a step before its memory is read anyway.
const SETTLE: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bulk ingest benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

struct Scale {
    interviews: usize,
    words: usize,
    clients: usize,
    rate: usize,
    rate_seconds: usize,
    rate_words: usize,
}

fn env_number(name: &str, default: usize) -> anyhow::Result<usize> {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} must be a whole number, not {value:?}")),
        Err(_) => Ok(default),
    }
}

/// A word found nowhere else: letters only (the tokenizer keeps it whole), never a
/// vocabulary word (those have vowels).
fn marker(kind: char, n: usize) -> String {
    let mut word = format!("zq{kind}");
    let mut n = n;
    loop {
        word.push(char::from(b"bcdfghjklmnpqrstvwxz"[n % 20]));
        n /= 20;
        if n == 0 {
            break;
        }
    }
    word.push_str("zq");
    word
}

/// An interview as pasted text: `Speaker: text` lines, interviewer and respondent in turn,
/// `marker` in the middle of one answer; its utterances come back beside it.
fn interview(vocabulary: &Vocabulary, seed: u64, words: usize, marker: &str) -> (String, Vec<(String, String)>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut utterances = Vec::new();
    let mut said = 0;
    let mut planted = false;
    while said < words {
        let asking = utterances.len() % 2 == 0;
        let len = (5 + rng.below(76)).min(words - said);
        let mut text = String::new();
        for i in 0..len {
            let word = if !asking && !planted && said >= words / 2 && i == len / 2 {
                planted = true;
                marker
            } else {
                vocabulary.draw(&mut rng)
            };
            words::push_word(&mut text, word, i, len, &mut rng);
        }
        text.push(if asking { '?' } else { '.' });
        let speaker = if asking { "Interviewer" } else { "Respondent" };
        utterances.push((speaker.to_owned(), text));
        said += len;
    }
    if !planted && let Some((_, text)) = utterances.last_mut() {
        text.push(' ');
        text.push_str(marker);
    }
    let pasted = utterances
        .iter()
        .map(|(speaker, text)| format!("{speaker}: {text}"))
        .collect::<Vec<_>>()
        .join("\n");
    (pasted, utterances)
}

struct Api {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Api {
    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        ensure!(status.is_success(), "POST {path}: {status}: {text}");
        Ok(serde_json::from_str(&text)?)
    }

    /// `/search`'s answer for `query`, its utterances only, at most `limit` hits.
    async fn search(&self, query: &str, limit: usize) -> anyhow::Result<Value> {
        let response = self
            .client
            .get(format!("{}/search", self.base))
            .bearer_auth(&self.token)
            .query(&[("q", query), ("limit", &limit.to_string()), ("kind", "utterance")])
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        ensure!(status.is_success(), "GET /search: {status}: {text}");
        Ok(serde_json::from_str(&text)?)
    }

    /// The records of the utterances `/search` finds for `query`, at most `limit`.
    async fn found_in(&self, query: &str, limit: usize) -> anyhow::Result<Vec<String>> {
        let body = self.search(query, limit).await?;
        Ok(body["hits"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|hit| hit["record_id"].as_str().map(str::to_owned))
            .collect())
    }

    /// How many utterances `/search` finds for `word`.
    async fn found(&self, word: &str) -> anyhow::Result<u64> {
        Ok(self.search(word, 1).await?["total"].as_u64().unwrap_or(0))
    }
}

async fn run() -> anyhow::Result<()> {
    let scale = Scale {
        interviews: env_number("INSIGHT_BENCH_INTERVIEWS", 200)?,
        words: env_number("INSIGHT_BENCH_WORDS", 8000)?,
        clients: env_number("INSIGHT_BENCH_CLIENTS", 8)?.max(1),
        rate: env_number("INSIGHT_BENCH_RATE", 50)?.max(1),
        rate_seconds: env_number("INSIGHT_BENCH_RATE_SECONDS", 10)?,
        rate_words: env_number("INSIGHT_BENCH_RATE_WORDS", 1000)?,
    };
    ensure!(
        scale.interviews > 0 && scale.words >= 100,
        "INSIGHT_BENCH_INTERVIEWS must be at least 1, INSIGHT_BENCH_WORDS at least 100"
    );
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "bulk ingest: {} interviews x {} words by {} clients; then {} records/s of {} words for {} s; {cores} cores \
         (the benchmark, the server and PostgreSQL share them)",
        scale.interviews, scale.words, scale.clients, scale.rate, scale.rate_words, scale.rate_seconds
    );
    let mut rng = Rng(0x005e_ed0f_b01c);
    let vocabulary = Vocabulary::new(&mut rng);
    let corpus: Vec<(String, Vec<(String, String)>)> = (0..scale.interviews)
        .map(|n| interview(&vocabulary, n as u64 + 1, scale.words, &marker('b', n)))
        .collect();
    let words: usize = corpus
        .iter()
        .flat_map(|(_, utterances)| utterances)
        .map(|(_, text)| text.split_whitespace().count())
        .sum();

    let dir = tempfile::Builder::new()
        .prefix("insight-bench-bulk-")
        .tempdir()
        .context("cannot make a temporary folder")?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("insight.db").display()))
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("RUST_LOG", "warn,insight=info");
    let server = ServerProcess::start(command).await?;
    let pid = server.child.0.id();
    let api = Arc::new(Api {
        client: reqwest::Client::builder().timeout(Duration::from_secs(120)).build()?,
        base: server.base.clone(),
        token: server.token.clone(),
    });
    let project = api
        .post("/projects/", &json!({"name": "Bulk"}))
        .await?
        .get("id")
        .and_then(Value::as_str)
        .context("no project id")?
        .to_owned();
    settle(pid, SETTLE).await;
    let idle = rss_mib(pid);
    let idle_anon = anon_mib(pid);
    println!("server idle: RSS {idle:.0} MiB ({idle_anon:.0} MiB anonymous)");

    // 2. Throughput.
    let started = Instant::now();
    let uploads = futures_util::stream::iter(corpus.iter().enumerate())
        .map(|(n, (text, _))| {
            let api = api.clone();
            let path = format!("/projects/{project}/records");
            async move {
                api.post(&path, &json!({"title": format!("Interview {n}"), "text": text}))
                    .await
                    .map(|_| ())
            }
        })
        .buffer_unordered(scale.clients)
        .collect::<Vec<_>>()
        .await;
    for upload in uploads {
        upload.map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    }
    let uploaded = started.elapsed().as_secs_f64();
    // In upload order: once the last one not yet found is found, all are.
    let mut next = 0;
    while next < scale.interviews {
        ensure!(
            started.elapsed() < SEARCHABLE_TIMEOUT,
            "{} interviews not searchable after {} s\n{}",
            scale.interviews - next,
            SEARCHABLE_TIMEOUT.as_secs(),
            server.log_tail()
        );
        if api.found(&marker('b', next)).await? > 0 {
            next += 1;
        } else {
            tokio::time::sleep(POLL).await;
        }
    }
    let searchable = started.elapsed().as_secs_f64();
    let insight_rate = words as f64 / searchable;
    let quiet = settle(pid, SETTLE).await.as_secs_f64();
    // The chore that hands freed memory back runs every 10 s.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (after_bulk, after_bulk_anon) = (rss_mib(pid), anon_mib(pid));
    println!(
        "Insight (HTTP API, SQLite): {} words uploaded in {uploaded:.1} s, all searchable after {searchable:.1} s: \
         {:.0}k words/s; RSS {after_bulk:.0} MiB ({after_bulk_anon:.0} MiB anonymous) once idle ({quiet:.0} s later)",
        words,
        insight_rate / 1e3
    );

    // 3. PostgreSQL full-text search, the same utterances.
    let postgres = match postgres_load(&corpus, scale.clients).await {
        Ok(seconds) => {
            let rate = words as f64 / seconds;
            println!(
                "PostgreSQL FTS (tsvector english + GIN, {} clients): {seconds:.1} s: {:.0}k words/s",
                scale.clients,
                rate / 1e3
            );
            Some(rate)
        }
        Err(error) => {
            println!("PostgreSQL FTS: skipped ({error:#})");
            None
        }
    };

    // 4. Freshness at a steady rate.
    let total = scale.rate * scale.rate_seconds;
    let interval = Duration::from_secs_f64(1.0 / scale.rate as f64);
    // One poller asks for every record not yet found in one query (a poller per record
    // would load the server more the further it falls behind).
    let pending: Arc<std::sync::Mutex<std::collections::HashMap<String, (String, Instant)>>> = Arc::default();
    let poller = {
        let (api, pending) = (api.clone(), pending.clone());
        tokio::spawn(async move {
            let mut freshness = Vec::with_capacity(total);
            let started = Instant::now();
            while freshness.len() < total {
                ensure!(
                    started.elapsed() < SEARCHABLE_TIMEOUT,
                    "{} records not searchable",
                    total - freshness.len()
                );
                let asked: Vec<(String, String)> = pending
                    .lock()
                    .expect("pending")
                    .iter()
                    .take(100)
                    .map(|(id, (word, _))| (id.clone(), word.clone()))
                    .collect();
                if !asked.is_empty() {
                    let words: Vec<&str> = asked.iter().map(|(_, word)| word.as_str()).collect();
                    for id in api.found_in(&words.join(" "), asked.len()).await? {
                        if let Some((_, answered)) = pending.lock().expect("pending").remove(&id) {
                            freshness.push(answered.elapsed().as_secs_f64() * 1e3);
                        }
                    }
                }
                tokio::time::sleep(POLL).await;
            }
            anyhow::Ok(freshness)
        })
    };
    let mut uploads = Vec::with_capacity(total);
    let rate_started = Instant::now();
    for n in 0..total {
        let due = rate_started + interval * n as u32;
        tokio::time::sleep_until(due.into()).await;
        let (text, _) = interview(&vocabulary, 1_000_000 + n as u64, scale.rate_words, &marker('r', n));
        let (api, pending) = (api.clone(), pending.clone());
        let path = format!("/projects/{project}/records");
        uploads.push(tokio::spawn(async move {
            let record = api
                .post(&path, &json!({"title": format!("Note {n}"), "text": text}))
                .await?;
            let id = record["id"].as_str().context("no record id")?.to_owned();
            pending
                .lock()
                .expect("pending")
                .insert(id, (marker('r', n), Instant::now()));
            anyhow::Ok(())
        }));
    }
    let sent_in = rate_started.elapsed().as_secs_f64();
    for upload in uploads {
        upload
            .await?
            .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    }
    let freshness = poller
        .await?
        .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    let (p50, p99, worst) = stats::summary(freshness);
    let quiet = settle(pid, SETTLE).await.as_secs_f64();
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (after_rate, after_rate_anon) = (rss_mib(pid), anon_mib(pid));
    println!(
        "after the steady rate: RSS {after_rate:.0} MiB ({after_rate_anon:.0} MiB anonymous) once idle ({quiet:.0} s later)"
    );

    println!();
    println!("summary");
    match postgres {
        Some(postgres) => println!(
            "  ingest until searchable: Insight {:.0}k words/s, PostgreSQL FTS {:.0}k words/s: {:.2}x (target >= 1x: {})",
            insight_rate / 1e3,
            postgres / 1e3,
            insight_rate / postgres,
            met(insight_rate >= postgres)
        ),
        None => println!(
            "  ingest until searchable: Insight {:.0}k words/s (PostgreSQL not reached: no ratio)",
            insight_rate / 1e3
        ),
    }
    println!(
        "  freshness at {} records/s ({total} sent in {sent_in:.1} s): upload to searchable p50 {p50:.0} ms, p99 {p99:.0} ms, \
         max {worst:.0} ms (target p99 < {TARGET_FRESHNESS_MS:.0} ms: {})",
        scale.rate,
        met(p99 < TARGET_FRESHNESS_MS)
    );
    let limit = idle * MEMORY_FACTOR;
    println!(
        "  memory: idle {idle:.0} MiB, after the bulk ingest {after_bulk:.0} MiB, after the steady rate {after_rate:.0} MiB \
         (target <= {limit:.0} MiB: {}); anonymous (heap) {idle_anon:.0}, {after_bulk_anon:.0} and {after_rate_anon:.0} MiB, \
         the rest the search index's files mapped",
        met(after_bulk.max(after_rate) <= limit)
    );
    Ok(())
}

/// Loads the corpus into a fresh PostgreSQL database as a team would for full-text
/// search; the seconds until the last interview is committed.
async fn postgres_load(corpus: &[(String, Vec<(String, String)>)], clients: usize) -> anyhow::Result<f64> {
    let base = std::env::var("INSIGHT_BENCH_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("insight_bench_bulk_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&base).await.context("cannot connect")?;
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await?;
    let url = match base.rfind('/') {
        Some(slash) => format!("{}/{name}", &base[..slash]),
        None => bail!("INSIGHT_BENCH_POSTGRES_URL has no database name"),
    };
    let loaded = async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(clients as u32)
            .connect(&url)
            .await?;
        sqlx::query(
            "CREATE TABLE utterances (id bigserial PRIMARY KEY, record int NOT NULL, n int NOT NULL, \
             speaker text NOT NULL, body text NOT NULL, \
             tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)",
        )
        .execute(&pool)
        .await?;
        sqlx::query("CREATE INDEX utterances_tsv ON utterances USING gin (tsv)")
            .execute(&pool)
            .await?;
        let started = Instant::now();
        let loads = futures_util::stream::iter(corpus.iter().enumerate())
            .map(|(record, (_, utterances))| {
                let pool = pool.clone();
                async move {
                    let mut tx = pool.begin().await?;
                    let mut insert = sqlx::QueryBuilder::new("INSERT INTO utterances (record, n, speaker, body) ");
                    insert.push_values(utterances.iter().enumerate(), |mut row, (n, (speaker, text))| {
                        row.push_bind(record as i32)
                            .push_bind(n as i32)
                            .push_bind(speaker)
                            .push_bind(text);
                    });
                    insert.build().execute(&mut *tx).await?;
                    tx.commit().await?;
                    anyhow::Ok(())
                }
            })
            .buffer_unordered(clients)
            .collect::<Vec<_>>()
            .await;
        for load in loads {
            load?;
        }
        let seconds = started.elapsed().as_secs_f64();
        let found: i64 =
            sqlx::query_scalar("SELECT count(*) FROM utterances WHERE tsv @@ plainto_tsquery('english', 'zqbbzq')")
                .fetch_one(&pool)
                .await?;
        ensure!(found == 1, "PostgreSQL finds the first interview's word {found} times");
        pool.close().await;
        anyhow::Ok(seconds)
    }
    .await;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut admin)
        .await?;
    loaded
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}
