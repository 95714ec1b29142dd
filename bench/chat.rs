//! Chat latency and retrieval at project scale. Run with `cargo bench --bench chat`.
//!
//! Sets up the real server (SQLite file, synchronous=FULL) with the OpenAI-compatible
//! engine against a local stub of the Chat Completions API that streams its answer and
//! sends its first token a fixed time after the request, and a project of 200 records
//! (synthetic interviews of 200 utterances each, 40,000 utterances in all). Then:
//!
//! 1. 500 chat questions about one record over HTTP with `Accept: text/event-stream`, one
//!    after the other, each starting a thread: the time from sending the request to the
//!    first byte of the first SSE event, minus the stub's own time from the arrival of the
//!    request to sending its first token (measured by the stub), is what the service adds. Prints
//!    p50 and p99 (target: < 2 ms at p99).
//! 2. Retrieval alone over the same 200 records, 500 questions, from the workspace search
//!    index (`Search::passages`, built first in a folder of its own): within one record
//!    (what chat does) and across the project (what the research assistant does, with the
//!    wait for the index to hold every change). Prints p50 and p99 (target: < 10 ms at p99).
//!
//! Settings: `INSIGHT_BENCH_CHATS` (500), `INSIGHT_BENCH_RECORDS` (200),
//! `INSIGHT_BENCH_TTFT_MS` (20). A report, not a test: it exits 0 unless the run fails.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::StreamExt;
use serde_json::{Value, json};

use insight::engines::search::Scope;
use insight::engines::search::indexer::Search;
use insight::{Server, Settings, Store};

#[path = "../tests/common/openai_stub.rs"]
mod openai_stub;
use openai_stub::{OpenAiStub, Reply};
mod stats;
use stats::summary;

fn env_number(name: &str, default: u64) -> anyhow::Result<u64> {
    match std::env::var(name) {
        Ok(value) => value.parse().with_context(|| format!("{name} must be a whole number")),
        Err(_) => Ok(default),
    }
}

/// A fixed-seed xorshift generator: the same interviews every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[(self.next() % words.len() as u64) as usize]
    }
}

const FUNCTION: &[&str] = &[
    "the", "a", "and", "I", "we", "it", "to", "of", "that", "is", "was", "for", "on", "with", "so", "but", "just",
    "really", "then", "they", "you", "have", "had", "do", "when",
];
const DOMAIN: &[&str] = &[
    "invoice",
    "invoices",
    "pricing",
    "price",
    "export",
    "report",
    "finance",
    "team",
    "onboarding",
    "dashboard",
    "spreadsheet",
    "customer",
    "support",
    "billing",
    "plan",
    "seat",
    "login",
    "permissions",
    "workflow",
    "approval",
    "integration",
    "slack",
    "email",
    "deadline",
    "budget",
    "manager",
    "contract",
    "renewal",
    "trial",
    "feature",
];
const QUESTIONS: &[&str] = &[
    "What did she say about pricing?",
    "How does the team handle invoices?",
    "Why is the export a problem?",
    "What happens during onboarding?",
    "Who approves the budget and the contract?",
    "What do they use spreadsheets for?",
    "How do permissions slow the workflow?",
    "What would make the renewal easier?",
];

/// One synthetic interview: an interviewer asking, a respondent answering.
fn interview(rng: &mut Rng, utterances: usize) -> String {
    let mut text = String::new();
    for n in 0..utterances {
        let speaker = if n.is_multiple_of(2) {
            "Interviewer"
        } else {
            "Respondent"
        };
        let words = 8 + (rng.next() % 30) as usize;
        let sentence: Vec<&str> = (0..words)
            .map(|_| {
                if rng.next().is_multiple_of(3) {
                    rng.pick(DOMAIN)
                } else {
                    rng.pick(FUNCTION)
                }
            })
            .collect();
        let end = if speaker == "Interviewer" { "?" } else { "." };
        text.push_str(&format!("{speaker}: {}{end}\n", sentence.join(" ")));
    }
    text
}

async fn run() -> anyhow::Result<()> {
    let chats = env_number("INSIGHT_BENCH_CHATS", 500)? as usize;
    let records = env_number("INSIGHT_BENCH_RECORDS", 200)? as usize;
    let ttft = Duration::from_millis(env_number("INSIGHT_BENCH_TTFT_MS", 20)?);

    // The first token `ttft` after the request's arrival (its headers: reading and parsing
    // the body is the stub's time, as a provider's is), then the rest at once.
    let (stub_addr, stub) = OpenAiStub::start().await;
    stub.answer(
        Reply::pieces(["The ", "respondent talks about pricing [Interview 1, #2]."])
            .delay(ttft)
            .usage(900, 12),
    );

    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let mut settings = Settings::for_database(&url);
    settings.storage.data_dir = dir.path().join("data");
    settings.model.llm_base_url = Some(format!("http://{stub_addr}/v1"));
    settings.model.llm_model = "bench".into();
    // No persona work in the background while chat is measured.
    settings.jobs.report_workers = Some(0);
    // Every question, the warm-up's too, starts a thread about the same record.
    settings.quotas.threads_per_record = i64::try_from(chats + 20).unwrap_or(i64::MAX);
    let store = Store::connect(&url, 16).await?;
    let server = Server::start(settings, store.clone()).await?;
    let base = format!("http://{}", server.addr);
    let user = store.add_user("bench@example.org").await?.context("user")?;
    let (_, token) = store
        .issue_token(user.id, "bench", insight::domain::user::TokenScope::Write, None)
        .await?;
    let client = reqwest::Client::new();

    let project: Value = client
        .post(format!("{base}/projects/"))
        .bearer_auth(&token)
        .json(&json!({ "name": "Bench" }))
        .send()
        .await?
        .json()
        .await?;
    let project_id = project["id"].as_str().context("project id")?.to_owned();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut record_ids = Vec::new();
    let setup = Instant::now();
    for n in 0..records {
        let record: Value = client
            .post(format!("{base}/projects/{project_id}/records"))
            .bearer_auth(&token)
            .json(
                &json!({ "title": format!("Interview {}", n + 1), "text": interview(&mut rng, 200), "language": "en" }),
            )
            .send()
            .await?
            .json()
            .await?;
        record_ids.push(record["id"].as_str().context("record id")?.to_owned());
    }
    for id in &record_ids {
        loop {
            let record: Value = client
                .get(format!("{base}/insight/{id}/"))
                .bearer_auth(&token)
                .send()
                .await?
                .json()
                .await?;
            if record["status"] == "Finished" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    println!(
        "Chat benchmark: a project of {records} records x 200 utterances, SQLite, model stub streaming with its first \
         token {} ms after the request (set up in {:.1} s)",
        ttft.as_millis(),
        setup.elapsed().as_secs_f64()
    );

    // 1. Time to the first SSE byte, minus the stub's time to its first token.
    let record = &record_ids[0];
    let mut added = Vec::with_capacity(chats);
    let mut totals = Vec::with_capacity(chats);
    for n in 0..chats + 20 {
        let question = QUESTIONS[n % QUESTIONS.len()];
        let sent = Instant::now();
        let response = client
            .post(format!("{base}/insight/{record}/chat/"))
            .bearer_auth(&token)
            .header("accept", "text/event-stream")
            .json(&json!({ "message": question }))
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("chat answered {}", response.status());
        }
        let mut body = response.bytes_stream();
        let first = body.next().await.context("no event")??;
        let first_byte = sent.elapsed();
        if !first.starts_with(b"event: delta") {
            bail!("the first event is not a delta: {}", String::from_utf8_lossy(&first));
        }
        let mut rest = Vec::new();
        while let Some(chunk) = body.next().await {
            rest.extend_from_slice(&chunk?);
        }
        if !String::from_utf8_lossy(&rest).contains("event: done") {
            bail!("no done event: {}", String::from_utf8_lossy(&rest));
        }
        let stub_call = stub.last_call().context("the stub saw no call")?;
        let stub_first = stub_call
            .first_byte()
            .context("the stub sent no token")?
            .duration_since(stub_call.arrived);
        // The first 20 warm up connections and caches.
        if n >= 20 {
            added.push((first_byte.as_secs_f64() - stub_first.as_secs_f64()) * 1000.0);
            totals.push(first_byte.as_secs_f64() * 1000.0);
        }
    }
    let (p50, p99, max) = summary(added);
    let (t50, t99, _) = summary(totals);
    println!(
        "chat, {chats} questions with SSE: first byte p50 {t50:.2} ms, p99 {t99:.2} ms; added by the service \
         (first byte minus the stub's first token): p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target: p99 < 2 ms)"
    );

    // 2. Retrieval alone, index warm: the workspace index a second instance would build.
    let dir = tempfile::tempdir()?;
    let search = Search::open(store.clone(), dir.path())?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(search.clone().run(stopped));
    if !search.caught_up(Duration::from_secs(600)).await? {
        bail!("the search index was not built in 10 minutes");
    }
    let record_uuid: uuid::Uuid = record.parse()?;
    let project_uuid: uuid::Uuid = project_id.parse()?;
    let project = store.get_project(user.id, project_uuid).await?.context("the project")?;
    let record_row = store.get_record(user.id, record_uuid).await?.context("the record")?;
    // As record chat asks: the record's version says whether the index holds it.
    let one_record = Scope {
        workspace_ids: vec![project.workspace_id],
        project_ids: Vec::new(),
        record_id: Some(record_uuid),
        changed_at: Some(record_row.updated_at),
    };
    let whole_project = Scope {
        workspace_ids: vec![project.workspace_id],
        project_ids: vec![project_uuid],
        ..Scope::default()
    };
    search.passages(&whole_project, "warm up", 10).await?;
    for (label, scope, limit) in [
        ("one record", &one_record, 8),
        ("the whole project", &whole_project, 12),
    ] {
        let mut samples = Vec::with_capacity(chats);
        for n in 0..chats {
            let question = QUESTIONS[n % QUESTIONS.len()];
            let started = Instant::now();
            let hits = search.passages(scope, question, limit).await?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            if hits.is_empty() {
                bail!("retrieval found nothing");
            }
        }
        let (p50, p99, max) = summary(samples);
        println!(
            "retrieval within {label} ({records} records indexed, {} utterances): p50 {p50:.2} ms, p99 {p99:.2} ms, \
             max {max:.2} ms (target: p99 < 10 ms)",
            records * 200
        );
    }
    let _ = stop.send(true);
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
            eprintln!("chat benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
