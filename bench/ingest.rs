//! Import speed and memory: a 3-hour WebVTT transcript (about 30,000 words) and a
//! 200-page PDF, each taken the way an upload is: format recognised, read into
//! utterances, speakers and roles worked out, and written with its processing job to a
//! real SQLite file (synchronous=FULL). Run with `cargo bench --bench ingest`.
//!
//! Prints wall time per import (best and median of several runs) and the process's peak
//! resident memory (VmHWM) after each part, so the VTT figure is not inflated by the
//! PDF. The PDF comes from `INSIGHT_BENCH_PDF` (a path) or is made by
//! `tests/fixtures/make_large_pdf.py` (needs `pip install reportlab`); without either the
//! PDF part is skipped with a note. A report, not a test: it exits 0 unless the import
//! itself fails.

#[path = "stats.rs"]
mod stats;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use insight::Store;
use insight::domain::record::transcribe;
use insight::domain::{now, project::NewProject};
use insight::engines::ingest::{self, Format};
use insight::store::{NewRecord, RecordContent};
use stats::peak_rss_mb;

const RUNS: usize = 5;

/// A Zoom-style VTT: `cues` cues of about 11 words, two speakers, 3 hours long.
fn three_hour_vtt(cues: usize) -> String {
    let words = "so we usually plan the release on friday and the spreadsheet never matches what \
                 support hears from customers about pricing onboarding exports and the mobile app"
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>();
    let step_ms = 3 * 3_600_000 / cues as u64;
    let mut out = String::from("WEBVTT\n\n");
    let mut seed = 7u64;
    for cue in 0..cues {
        let start = cue as u64 * step_ms;
        let end = start + step_ms - 100;
        let speaker = if cue % 3 == 0 { "Ben Okafor" } else { "Anna Schmidt" };
        let mut text = Vec::new();
        for _ in 0..11 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push(words[(seed >> 33) as usize % words.len()]);
        }
        let ending = if cue % 3 == 0 { "?" } else { "." };
        out.push_str(&format!(
            "{}\n{} --> {}\n{speaker}: {}{ending}\n\n",
            cue + 1,
            stamp(start),
            stamp(end),
            text.join(" ")
        ));
    }
    out
}

fn stamp(ms: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// One import as an upload does it; returns the utterance count.
async fn import(store: &Store, project_id: uuid::Uuid, name: &str, bytes: Vec<u8>) -> anyhow::Result<usize> {
    let format = ingest::detect(&bytes[..bytes.len().min(16 * 1024)], Some(name), None)?;
    let transcript = tokio::task::spawn_blocking(move || ingest::read(format, &bytes)).await??;
    let count = transcript.utterances.len();
    let transcribed = transcribe(transcript.utterances);
    store
        .create_record(
            project_id,
            NewRecord {
                name: name.to_owned(),
                language: transcript.language,
                source_format: format.as_str().to_owned(),
                source_name: Some(name.to_owned()),
                content: RecordContent::Transcript(transcribed),
            },
        )
        .await?;
    Ok(count)
}

async fn measure(store: &Store, project_id: uuid::Uuid, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let mut times = Vec::new();
    let mut count = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        count = import(store, project_id, name, bytes.to_vec()).await?;
        times.push(started.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<28} {:>8.1} KB  {count:>6} utterances  best {:>7.1} ms  median {:>7.1} ms  peak RSS so far {:>6.1} MB",
        bytes.len() as f64 / 1024.0,
        ms(times[0]),
        ms(times[RUNS / 2]),
        peak_rss_mb("self")
    );
    Ok(())
}

async fn run() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = Store::connect(&url, 4).await?;
    let user = store
        .add_user("bench@example.org")
        .await?
        .ok_or_else(|| anyhow::anyhow!("no user"))?;
    let project = store
        .create_project(
            user.id,
            user.id,
            NewProject {
                name: "Bench".into(),
                description: String::new(),
                research_goals: String::new(),
                interview_guide: String::new(),
            },
        )
        .await?;
    println!(
        "Import benchmark ({}; SQLite in {})",
        now().format("%Y-%m-%d"),
        dir.path().display()
    );
    println!("peak RSS before importing: {:.1} MB", peak_rss_mb("self"));

    let vtt = three_hour_vtt(2_800);
    let words = vtt
        .lines()
        .filter(|l| l.contains(": "))
        .map(|l| l.split_whitespace().count() - 2)
        .sum::<usize>();
    println!("3-hour VTT: {words} words in 2,800 cues");
    assert_eq!(ingest::detect(vtt.as_bytes(), Some("call.vtt"), None)?, Format::Vtt);
    measure(&store, project.id, "3-hour call.vtt", vtt.as_bytes()).await?;
    println!("target for the VTT: < 1 s and < 100 MB");

    let pdf_path = match std::env::var("INSIGHT_BENCH_PDF") {
        Ok(path) => Some(std::path::PathBuf::from(path)),
        Err(_) => {
            let made = std::process::Command::new("python3")
                .args([
                    "tests/fixtures/make_large_pdf.py",
                    &dir.path().display().to_string(),
                    "reportlab",
                ])
                .output();
            match made {
                Ok(output) if output.status.success() => Some(dir.path().join("large_reportlab.pdf")),
                _ => None,
            }
        }
    };
    match pdf_path {
        Some(path) => {
            let bytes = std::fs::read(&path)?;
            measure(&store, project.id, "200-page notes.pdf", &bytes).await?;
        }
        None => println!(
            "200-page PDF: skipped (set INSIGHT_BENCH_PDF, or `pip install reportlab` for tests/fixtures/make_large_pdf.py)"
        ),
    }
    store.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("import benchmark failed: {error:#}");
            ExitCode::FAILURE
        }
    }
}
