//! A project out as an archive, streamed: the JSON is written first, then each recording
//! is copied from the file store into the zip as it is read, so a project with hours of
//! recordings is never held in memory and the download starts at once.

use std::io::Write;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde::Serialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::io::{StreamReader, SyncIoBridge};
use uuid::Uuid;
use zip::write::SimpleFileOptions;

use super::{Counts, Manifest};
use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::app::research::exchange::file_stem;
use crate::domain::workspace::Need;
use crate::error::{Error, Result};
use crate::providers::files::{FileError, Files};
use crate::services::Services;
use crate::store::Target;

/// Bytes the response holds back before it sends them, and chunks in flight.
const CHUNK_BYTES: usize = 256 * 1024;
const CHUNKS_IN_FLIGHT: usize = 4;

/// An archive being written as it is sent: chunks from the writing thread, where an
/// error ends the response early, so the client sees a broken download rather than a
/// short file.
pub struct Streamed {
    pub filename: String,
    pub body: BoxStream<'static, std::io::Result<Bytes>>,
}

/// `std::io::Write` onto the response, for the zip writer on its own thread.
struct ChannelWriter {
    sender: mpsc::Sender<std::io::Result<Bytes>>,
    buffer: BytesMut,
}

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = self.buffer.split().freeze();
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// A recording to copy into the archive: its entry, its key in the file store, its size.
struct Recording {
    entry: String,
    key: String,
    size: u64,
}

fn json_entry(name: &str, value: &impl Serialize) -> Result<(String, Vec<u8>)> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|error| anyhow::anyhow!("writing {name}: {error}"))?;
    Ok((name.to_owned(), bytes))
}

/// The project as an archive, for a member who may change it. Recordings the file store
/// has lost are left out (their records say so by naming no recording); a file store that
/// does not answer is a 503 before anything is sent. The export is written to the audit log.
pub async fn export(services: &Services, caller: &Caller, project_id: Uuid) -> Result<Streamed> {
    let actor = &caller.actor();
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    let mut dump = services
        .store
        .dump_project(project_id)
        .await?
        .ok_or_else(|| Error::not_found("Project"))?;
    let mut recordings = Vec::new();
    for record in &mut dump.records {
        let Some(key) = record.media_path.clone() else {
            continue;
        };
        let size = match services.files.size(&key).await {
            Ok(size) => size,
            Err(FileError::Missing) => continue,
            Err(error) => return Err(error.into()),
        };
        let extension = key
            .rsplit_once('.')
            .map(|(_, extension)| extension)
            .filter(|extension| !extension.contains('/'))
            .unwrap_or("bin");
        let entry = format!("{}{}.{extension}", super::RECORDINGS, record.id);
        record.recording = Some(entry.clone());
        recordings.push(Recording { entry, key, size });
    }
    let counts = Counts::of(&dump, recordings.len());
    let exported_at = crate::domain::now();
    let manifest = Manifest {
        format: super::FORMAT.to_owned(),
        version: super::VERSION,
        generator: format!("Insight {}", env!("CARGO_PKG_VERSION")),
        exported_at,
        project_id,
        project_name: dump.project.name.clone(),
        counts: counts.clone(),
    };
    let entries = vec![
        json_entry(super::MANIFEST, &manifest)?,
        json_entry(super::PROJECT, &dump.project)?,
        json_entry(super::RECORDS, &dump.records)?,
        json_entry(super::REPORTS, &dump.reports)?,
        json_entry(super::TAGS, &dump.tags)?,
        json_entry(super::HIGHLIGHTS, &dump.highlights)?,
        json_entry(super::INSIGHTS, &dump.insights)?,
        json_entry(super::THEMES, &dump.themes)?,
        json_entry(super::INTERVIEWS, &dump.interviews)?,
    ];
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: Some(dump.project.workspace_id),
            actor: actor.clone(),
            action: "export.created",
            target: Some(("project", project_id.to_string())),
            detail: json!({ "format": "archive", "counts": counts }),
        },
    )
    .await?;
    let (sender, receiver) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let files = services.files.clone();
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut writer = ChannelWriter {
            sender: sender.clone(),
            buffer: BytesMut::with_capacity(CHUNK_BYTES),
        };
        if let Err(error) = write_zip(
            &runtime,
            &files,
            &entries,
            &recordings,
            zip_time(exported_at),
            &mut writer,
        ) {
            if error.kind() != std::io::ErrorKind::BrokenPipe {
                tracing::warn!(error = %error, project = %project_id, "an archive could not be written to the end");
            }
            let _ = sender.blocking_send(Err(error));
        }
    });
    Ok(Streamed {
        filename: format!("{}.insight.zip", file_stem(&dump.project.name)),
        body: futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|chunk| (chunk, receiver))
        })
        .boxed(),
    })
}

/// The time the entries carry: the export's, in UTC (zip keeps no zone); a time zip
/// cannot hold leaves its default.
fn zip_time(at: chrono::DateTime<chrono::Utc>) -> zip::DateTime {
    use chrono::{Datelike, Timelike};
    let part = |value: u32| u8::try_from(value).unwrap_or_default();
    u16::try_from(at.year())
        .ok()
        .and_then(|year| {
            zip::DateTime::from_date_and_time(
                year,
                part(at.month()),
                part(at.day()),
                part(at.hour()),
                part(at.minute()),
                part(at.second()),
            )
            .ok()
        })
        .unwrap_or_default()
}

/// Writes the zip onto `writer` (blocking: runs on its own thread); the recordings are
/// read from the file store through `runtime`.
fn write_zip(
    runtime: &tokio::runtime::Handle,
    files: &Files,
    entries: &[(String, Vec<u8>)],
    recordings: &[Recording],
    time: zip::DateTime,
    writer: &mut ChannelWriter,
) -> std::io::Result<()> {
    let mut zip = zip::ZipWriter::new_stream(writer);
    let json = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(time);
    for (name, bytes) in entries {
        zip.start_file(name.as_str(), json)?;
        zip.write_all(bytes)?;
    }
    for recording in recordings {
        // Recordings are compressed already: stored as they are.
        let options = SimpleFileOptions::default()
            .last_modified_time(time)
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(recording.size >= u64::from(u32::MAX));
        zip.start_file(recording.entry.as_str(), options)?;
        let reading = runtime
            .block_on(files.read(&recording.key, None))
            .map_err(|error| std::io::Error::other(format!("reading {}: {error:?}", recording.key)))?;
        let mut reader = SyncIoBridge::new_with_handle(StreamReader::new(reading.bytes), runtime.clone());
        std::io::copy(&mut reader, &mut zip)?;
    }
    zip.finish()?.into_inner().flush()
}
