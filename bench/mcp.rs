//! What the MCP door costs over the JSON API: the same reads through both, one after the
//! other, against the real release binary on SQLite: a record's transcript
//! (`read_transcript` against `GET /insight/{rec_id}/`) and the project list
//! (`list_projects` against `GET /projects/`). The MCP calls are what an assistant's
//! client sends under protocol 2026-07-28: a stateless `tools/call` POST carrying its
//! protocol metadata (in `_meta` and in the `Mcp-*` headers). One client, one request
//! at a time, so the figures are latencies.
//!
//! `cargo bench --bench mcp` (`-- --quick` for fewer rounds). A report, not a test: it
//! fails only when a call fails.

#[path = "server_process.rs"]
mod server_process;
#[path = "stats.rs"]
mod stats;

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use server_process::ServerProcess;

const PROTOCOL: &str = "2026-07-28";
/// Utterances in the benchmark's interview (a one-hour interview has about this many).
const UTTERANCES: usize = 400;

fn main() -> ExitCode {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    match runtime.block_on(run(if quick { 100 } else { 1000 })) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

struct Bench {
    client: reqwest::Client,
    base: String,
    token: String,
    id: u64,
}

impl Bench {
    async fn api(&self, path: &str) -> anyhow::Result<Value> {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await?;
        ensure!(response.status().is_success(), "GET {path}: {}", response.status());
        Ok(response.json().await?)
    }

    async fn mcp(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        self.id += 1;
        let body = json!({
            "jsonrpc": "2.0", "id": self.id, "method": "tools/call",
            "params": { "name": tool, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "1" },
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        });
        let response = self
            .client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .json(&body)
            .send()
            .await?;
        ensure!(response.status().is_success(), "MCP {tool}: {}", response.status());
        let answer: Value = response.json().await?;
        if answer["result"]["isError"] != false {
            bail!("MCP {tool} answered {answer}");
        }
        Ok(answer["result"]["structuredContent"].clone())
    }
}

async fn run(rounds: usize) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new().prefix("insight-bench-mcp-").tempdir()?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("insight.db").display()))
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("RUST_LOG", "info");
    let server = ServerProcess::start(command)
        .await
        .context("the server did not start")?;
    let mut bench = Bench {
        client: reqwest::Client::builder().timeout(Duration::from_secs(30)).build()?,
        base: server.base.clone(),
        token: server.token.clone(),
        id: 0,
    };
    let record = setup(&bench)
        .await
        .map_err(|error| anyhow::anyhow!("{error:#}\n{}", server.log_tail()))?;
    let transcript = format!("/insight/{record}/");

    // Both doors must answer the same before their times mean anything.
    let ours = bench.mcp("read_transcript", json!({ "record_id": record })).await?;
    let theirs = bench.api(&transcript).await?;
    ensure!(
        ours["utterances"].as_array().map(Vec::len) == theirs["utterances"].as_array().map(Vec::len),
        "the doors disagree on the transcript"
    );

    println!("MCP door against the JSON API: {rounds} calls each, alternating, one at a time (SQLite)");
    println!(
        "{:<46} {:>9} {:>9} {:>9} {:>10}",
        "call", "p50 ms", "p99 ms", "max ms", "overhead"
    );
    for (name, tool, arguments, path) in [
        (
            "read a transcript (400 utterances)",
            "read_transcript",
            json!({ "record_id": record }),
            transcript.as_str(),
        ),
        ("list the projects", "list_projects", json!({}), "/projects/"),
    ] {
        let (mut api, mut mcp) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for _ in 0..rounds / 10 {
            bench.api(path).await?;
            bench.mcp(tool, arguments.clone()).await?;
        }
        for _ in 0..rounds {
            let started = Instant::now();
            bench.api(path).await?;
            api.push(started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            bench.mcp(tool, arguments.clone()).await?;
            mcp.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let (api50, api99, api_max) = stats::summary(api);
        let (mcp50, mcp99, mcp_max) = stats::summary(mcp);
        println!(
            "{:<46} {api50:>9.3} {api99:>9.3} {api_max:>9.3} {:>10}",
            format!("{name}, JSON API"),
            ""
        );
        println!(
            "{:<46} {mcp50:>9.3} {mcp99:>9.3} {mcp_max:>9.3} {:>+8.3}ms",
            format!("{name}, MCP"),
            mcp50 - api50
        );
    }
    Ok(())
}

/// A project with one processed interview of [`UTTERANCES`] utterances; its id.
async fn setup(bench: &Bench) -> anyhow::Result<String> {
    let post = |path: &str, body: Value| {
        bench
            .client
            .post(format!("{}{path}", bench.base))
            .bearer_auth(&bench.token)
            .json(&body)
            .send()
    };
    let project: Value = post("/projects/", json!({ "name": "Benchmark" })).await?.json().await?;
    let project = project["id"].as_str().context("project id")?.to_owned();
    let mut text = String::new();
    for n in 0..UTTERANCES {
        let (speaker, words) = if n % 2 == 0 {
            (
                "Interviewer",
                "How did the team decide on the plan, and who signed it off in the end?",
            )
        } else {
            (
                "Anna",
                "We compared three tools over a month; finance wanted the invoices monthly and the pricing page did not say.",
            )
        };
        let (start, end) = (n * 10, n * 10 + 9);
        text.push_str(&format!(
            "[{:02}:{:02}:{:02} - {:02}:{:02}:{:02}] {speaker}: {words}\n\n",
            start / 3600,
            start / 60 % 60,
            start % 60,
            end / 3600,
            end / 60 % 60,
            end % 60
        ));
    }
    let record: Value = post(
        &format!("/projects/{project}/records"),
        json!({ "title": "Interview Anna", "text": text, "language": "en" }),
    )
    .await?
    .json()
    .await?;
    let record = record["id"].as_str().context("record id")?.to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let status = bench.api(&format!("/insight/{record}/")).await?["status"].clone();
        if status == "Finished" {
            return Ok(record);
        }
        ensure!(Instant::now() < deadline, "the record was not processed: {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
