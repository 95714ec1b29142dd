//! Imports of small hostile uploads, and the server's peak resident memory (VmHWM) growth
//! for each: a `.qdpx` whose project.qde is 15.7 million empty elements (61 KB packed), an
//! archive whose tags.json is 300 MB of whitespace, three of each at once, and the densest
//! `.qdpx` of about 1 MB the limits accept (225,000 elements of coded selections). Each kind
//! runs on a fresh server, since the peak only grows. Target: any import of an upload of at
//! most 1 MB raises the peak by at most 64 MB.
//!
//! `cargo bench --bench imports`. A report, not a test: it fails only when an import
//! answers what it should not.

#[path = "server_process.rs"]
mod server_process;
#[path = "stats.rs"]
mod stats;

use std::io::{Cursor, Read, Write};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use server_process::ServerProcess;
use stats::peak_rss_mb;

const TARGET_MB: f64 = 64.0;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    match runtime.block_on(run()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn zip_of(files: &[(&str, &[u8])]) -> anyhow::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9));
    for (name, bytes) in files {
        zip.start_file(*name, options)?;
        zip.write_all(bytes)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// 15.7 million empty elements in one project.qde.
fn hostile_qdpx() -> anyhow::Result<Vec<u8>> {
    let mut qde = b"<Project xmlns=\"urn:QDA-XML:project:1.0\" name=\"x\">".to_vec();
    qde.extend(b"<a/>".repeat(15_700_000));
    qde.extend(b"</Project>");
    zip_of(&[("project.qde", &qde)])
}

/// A text source of a thousand lines and 75,000 coded selections on it: 225,000
/// elements, under INSIGHT_IMPORT_MAX_ELEMENTS' 500,000.
fn dense_qdpx() -> anyhow::Result<Vec<u8>> {
    let mut qde = String::from(
        "<Project xmlns=\"urn:QDA-XML:project:1.0\" name=\"Dense\"><CodeBook><Codes>\
         <Code guid=\"c1\" name=\"Pricing\"/><Code guid=\"c2\" name=\"Support\"/></Codes></CodeBook>\
         <Sources><TextSource guid=\"s\" name=\"Anna\" plainTextPath=\"internal://s.txt\">",
    );
    for n in 0..75_000u64 {
        // 500 ranges, each coded many times over: what is held grows with the elements.
        let start = (n % 500) * 120;
        qde.push_str(&format!(
            "<PlainTextSelection guid=\"g{n}\" startPosition=\"{start}\" endPosition=\"{}\">\
             <Coding guid=\"k{n}\"><CodeRef targetGUID=\"c{}\"/></Coding></PlainTextSelection>",
            start + 20,
            1 + n % 2
        ));
    }
    qde.push_str("</TextSource></Sources></Project>");
    let text: String = (0..1_000)
        .map(|n| format!("Anna: Line {n}, where the invoices arrive late every month again.\n"))
        .collect();
    zip_of(&[("project.qde", qde.as_bytes()), ("sources/s.txt", text.as_bytes())])
}

async fn start() -> anyhow::Result<(ServerProcess, tempfile::TempDir)> {
    let dir = tempfile::Builder::new().prefix("insight-bench-imports-").tempdir()?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("insight.db").display()))
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("RUST_LOG", "info");
    let server = ServerProcess::start(command)
        .await
        .context("the server did not start")?;
    Ok((server, dir))
}

async fn workspace(client: &reqwest::Client, server: &ServerProcess) -> anyhow::Result<String> {
    let me: Value = client
        .get(format!("{}/me", server.base))
        .bearer_auth(&server.token)
        .send()
        .await?
        .json()
        .await?;
    Ok(me["id"].as_str().context("user id")?.to_owned())
}

/// An archive as Insight writes it, with tags.json replaced by 300 MB of whitespace.
async fn hostile_archive(client: &reqwest::Client, server: &ServerProcess) -> anyhow::Result<Vec<u8>> {
    let project: Value = client
        .post(format!("{}/projects/", server.base))
        .bearer_auth(&server.token)
        .json(&json!({ "name": "Padded" }))
        .send()
        .await?
        .json()
        .await?;
    let id = project["id"].as_str().context("project id")?;
    let bytes = client
        .get(format!("{}/projects/{id}/archive", server.base))
        .bearer_auth(&server.token)
        .send()
        .await?
        .bytes()
        .await?;
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes.to_vec()))?;
    let mut files = Vec::new();
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index)?;
        let mut data = Vec::new();
        entry.read_to_end(&mut data)?;
        files.push((entry.name()?.to_string(), data));
    }
    let mut padded = b"[]".to_vec();
    padded.resize(300_000_000, b' ');
    for (name, data) in &mut files {
        if name == "tags.json" {
            *data = padded.clone();
        }
    }
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
    zip_of(&files)
}

async fn send(client: reqwest::Client, url: String, token: String, file: Vec<u8>) -> anyhow::Result<(u16, String)> {
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(file).file_name("upload"));
    let response = client.post(url).bearer_auth(token).multipart(form).send().await?;
    Ok((response.status().as_u16(), response.text().await?))
}

/// Sends `copies` of `file` at once and answers the peak growth in MB and the statuses.
async fn measure(kind: &str, file: &[u8], copies: usize, expected: &[u16]) -> anyhow::Result<bool> {
    let (server, _dir) = start().await?;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(600)).build()?;
    let workspace = workspace(&client, &server).await?;
    let file = if kind.contains("archive") {
        hostile_archive(&client, &server).await?
    } else {
        file.to_vec()
    };
    let path = if kind.contains("archive") { "archive" } else { "qdpx" };
    let url = format!("{}/workspaces/{workspace}/import/{path}", server.base);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = peak_rss_mb(&server.pid());
    let started = Instant::now();
    let sends: Vec<_> = (0..copies)
        .map(|_| tokio::spawn(send(client.clone(), url.clone(), server.token.clone(), file.clone())))
        .collect();
    let mut statuses = Vec::new();
    for sent in sends {
        let (status, body) = sent.await??;
        ensure!(expected.contains(&status), "{kind}: {status} {body}");
        statuses.push(status);
    }
    let took = started.elapsed().as_secs_f64();
    let growth = peak_rss_mb(&server.pid()) - before;
    let verdict = if growth <= TARGET_MB { "ok" } else { "OVER" };
    println!(
        "{kind:<34} upload {:>8.1} KB x{copies}  answers {statuses:?}  peak RSS +{growth:>6.1} MB  \
         (target <= {TARGET_MB} MB: {verdict})  {took:.2} s",
        file.len() as f64 / 1024.0
    );
    Ok(growth <= TARGET_MB)
}

async fn run() -> anyhow::Result<bool> {
    let qdpx = hostile_qdpx()?;
    let dense = dense_qdpx()?;
    ensure!(dense.len() <= 1_048_576, "the dense .qdpx is {} bytes", dense.len());
    let mut ok = true;
    ok &= measure("hostile qdpx (15.7M elements)", &qdpx, 1, &[413]).await?;
    ok &= measure("hostile archive (300 MB spaces)", &[], 1, &[413]).await?;
    ok &= measure("three hostile qdpx at once", &qdpx, 3, &[413, 429]).await?;
    ok &= measure("three hostile archives at once", &[], 3, &[413, 429]).await?;
    ok &= measure("dense qdpx (225k elements, accepted)", &dense, 1, &[201]).await?;
    Ok(ok)
}
