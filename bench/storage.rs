//! A 1 GB recording uploaded to an instance that keeps recordings in an S3-compatible
//! bucket (moto in server mode on loopback), and the instance's peak resident memory
//! (VmHWM) before and after: the upload streams to the upload folder and from there to the
//! bucket in parts, so the peak should stay far below the file (target < 100 MB). Then the
//! project is moved: its archive streamed out of the bucket and imported back in, with the
//! peak after each (the same target).
//!
//! `cargo bench --bench storage` with `INSIGHT_TEST_MOTO` naming moto's `moto_server`
//! (`pip install 'moto[server]'`); `-- --quick` uploads 200 MB. A report, not a test: it
//! fails only when the upload does.

#[path = "server_process.rs"]
mod server_process;
#[path = "stats.rs"]
mod stats;

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use bytes::Bytes;
use serde_json::{Value, json};
use server_process::{ChildGuard, ServerProcess};
use stats::peak_rss_mb;
use tokio::io::AsyncWriteExt;

const BUCKET: &str = "bench-recordings";
const CHUNK: usize = 1024 * 1024;

fn main() -> ExitCode {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    match runtime.block_on(run(if quick { 200_000_000 } else { 1_000_000_000 })) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// A WAV header and then silence, `size` bytes in all, made as it is sent.
fn recording(size: u64) -> reqwest::Body {
    let mut head = Vec::with_capacity(CHUNK);
    head.extend_from_slice(b"RIFF");
    head.extend_from_slice(&u32::try_from(size - 8).unwrap_or(u32::MAX).to_le_bytes());
    head.extend_from_slice(b"WAVEfmt ");
    head.resize(CHUNK, 0);
    let (head, silence) = (Bytes::from(head), Bytes::from(vec![0u8; CHUNK]));
    let chunks = size.div_ceil(CHUNK as u64);
    let stream = futures_util::stream::iter((0..chunks).map(move |n| {
        let chunk = if n == 0 { head.clone() } else { silence.clone() };
        let left = size - n * CHUNK as u64;
        Ok::<_, std::io::Error>(chunk.slice(..(left.min(CHUNK as u64) as usize)))
    }));
    reqwest::Body::wrap_stream(stream)
}

async fn run(size: u64) -> anyhow::Result<()> {
    let moto = std::env::var("INSIGHT_TEST_MOTO").context("set INSIGHT_TEST_MOTO to moto's moto_server")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let _moto = ChildGuard(
        Command::new(moto)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("moto does not start")?,
    );
    let endpoint = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder().timeout(Duration::from_secs(1800)).build()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !client
        .put(format!("{endpoint}/{BUCKET}"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        ensure!(Instant::now() < deadline, "moto did not answer");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let dir = tempfile::Builder::new().prefix("insight-bench-storage-").tempdir()?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_insight"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("insight.db").display()))
        .env("INSIGHT_DATA_DIR", dir.path().join("data"))
        .env("INSIGHT_STORAGE_URL", format!("s3://{BUCKET}/bench"))
        .env("INSIGHT_S3_ENDPOINT", &endpoint)
        .env("INSIGHT_S3_REGION", "us-east-1")
        .env("INSIGHT_S3_ACCESS_KEY_ID", "bench")
        .env("INSIGHT_S3_SECRET_ACCESS_KEY", "bench")
        // Recordings are taken only with a speech-to-text provider; this one is never
        // reached in time to matter.
        .env("INSIGHT_STT_BASE_URL", "http://127.0.0.1:9/v1")
        .env("RUST_LOG", "info");
    let server = ServerProcess::start(command)
        .await
        .context("the server did not start")?;
    let project: Value = client
        .post(format!("{}/projects/", server.base))
        .bearer_auth(&server.token)
        .json(&json!({ "name": "Benchmark" }))
        .send()
        .await?
        .json()
        .await?;
    let project = project["id"].as_str().context("project id")?.to_owned();
    let before = peak_rss_mb(&server.pid());

    let part = reqwest::multipart::Part::stream_with_length(recording(size), size)
        .file_name("interview.wav")
        .mime_str("audio/wav")?;
    let started = Instant::now();
    let response = client
        .post(format!("{}/projects/{project}/records", server.base))
        .bearer_auth(&server.token)
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await?;
    let took = started.elapsed().as_secs_f64();
    let status = response.status();
    let body = response.text().await?;
    ensure!(
        status.as_u16() == 201,
        "the upload answered {status}: {body}\n{}",
        server.log_tail()
    );
    let after = peak_rss_mb(&server.pid());

    println!(
        "A {:.1} GB recording into an S3-compatible bucket (moto on loopback)",
        size as f64 / 1e9
    );
    println!(
        "upload, to the answer: {took:.1} s ({:.0} MB/s)",
        size as f64 / 1e6 / took
    );
    println!("server peak RSS before: {before:.1} MB");
    println!("server peak RSS after:  {after:.1} MB (target < 100 MB)");

    // The project moved: its archive streamed out of the bucket, then imported back in.
    let archive = dir.path().join("project.insight.zip");
    let started = Instant::now();
    let mut response = client
        .get(format!("{}/projects/{project}/archive", server.base))
        .bearer_auth(&server.token)
        .send()
        .await?;
    ensure!(
        response.status().is_success(),
        "the archive answered {}",
        response.status()
    );
    let mut file = tokio::fs::File::create(&archive).await?;
    while let Some(chunk) = response.chunk().await? {
        file.write_all(&chunk).await?;
    }
    file.flush().await?;
    let exported = started.elapsed().as_secs_f64();
    let archived = tokio::fs::metadata(&archive).await?.len();
    let after_export = peak_rss_mb(&server.pid());
    let workspaces: Value = client
        .get(format!("{}/workspaces", server.base))
        .bearer_auth(&server.token)
        .send()
        .await?
        .json()
        .await?;
    let workspace = workspaces["items"][0]["id"]
        .as_str()
        .or(workspaces[0]["id"].as_str())
        .context("a workspace")?
        .to_owned();
    let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(
        tokio::fs::File::open(&archive).await?,
    ));
    let part = reqwest::multipart::Part::stream_with_length(body, archived).file_name("project.insight.zip");
    let started = Instant::now();
    let response = client
        .post(format!("{}/workspaces/{workspace}/import/archive", server.base))
        .bearer_auth(&server.token)
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await?;
    let imported = started.elapsed().as_secs_f64();
    let status = response.status();
    let body = response.text().await?;
    ensure!(
        status.as_u16() == 201,
        "the import answered {status}: {body}\n{}",
        server.log_tail()
    );
    let after_import = peak_rss_mb(&server.pid());
    println!(
        "project archive out of the bucket: {:.1} GB in {exported:.1} s ({:.0} MB/s); server peak RSS {after_export:.1} MB",
        archived as f64 / 1e9,
        archived as f64 / 1e6 / exported
    );
    println!(
        "that archive imported into the bucket: {imported:.1} s ({:.0} MB/s); server peak RSS {after_import:.1} MB (target < 100 MB)",
        archived as f64 / 1e6 / imported
    );
    Ok(())
}
