//! Record intake: how interview material becomes a record of a project, whichever door
//! it came in by.

use std::path::{Path, PathBuf};

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::quota::Counted;
use crate::domain::record::{Record, transcribe};
use crate::domain::workspace::Need;
use crate::engines::ingest::{self, Format, IngestError, Transcript, stt};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::Target;
use crate::store::{NewRecord, RecordContent};

/// How much of an upload is looked at to recognise its format.
pub const HEAD_BYTES: usize = 16 * 1024;

/// Largest text or document read into memory (recordings stream, up to the upload limit).
pub const MAX_DOCUMENT_BYTES: u64 = 100 * 1024 * 1024;

/// What an upload brought, before it is read.
pub struct Upload {
    pub title: Option<String>,
    pub language: Option<String>,
    pub source: Source,
}

pub enum Source {
    Text(String),
    /// A file streamed to `path` in the data folder; `head` is its beginning.
    File {
        path: PathBuf,
        name: Option<String>,
        content_type: Option<String>,
        head: Vec<u8>,
    },
}

/// Removes an upload's temporary file when the request ends, however it ends.
pub struct TempFile(pub Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A fresh temporary path for an upload in the data folder.
pub fn upload_path(data_dir: &Path) -> Result<PathBuf> {
    let folder = data_dir.join("uploads");
    std::fs::create_dir_all(&folder)
        .map_err(|error| anyhow::anyhow!("cannot create the upload folder {}: {error}", folder.display()))?;
    Ok(folder.join(format!("{}.part", Uuid::new_v4())))
}

/// A file that could not be read: 415 for a format Insight does not read, else 422 on `file`.
pub fn ingest_error(error: IngestError, field: &str) -> Error {
    match error {
        IngestError::Unsupported(message) => Error::UnsupportedFormat(message),
        IngestError::Invalid(message) => Error::validation(vec![ValidationIssue::new(
            vec![json!("body"), json!(field)],
            "value_error",
            message,
        )]),
    }
}

/// Leave to file one record in a project. Only the checks below make one and every
/// function that files a record takes one, so a door or an import that forgot the role
/// or the quota does not compile; it is spent by the record it files.
#[must_use]
pub struct RecordPermit {
    project_id: Uuid,
}

impl RecordPermit {
    pub fn project_id(&self) -> Uuid {
        self.project_id
    }
}

/// Whether the user may add a record to the project now: his role allows it, and the
/// project's record quota is not reached. Checked before an upload is read.
pub async fn may_add(services: &Services, caller: &Caller, project_id: Uuid) -> Result<RecordPermit> {
    caller
        .require(&services.store, Target::Project(project_id), Need::Write)
        .await?;
    within_quota(services, project_id).await
}

/// The leave for a project an import is making, whose workspace the caller was checked
/// to write to (the project itself is not visible until the import is done): its record
/// quota only.
pub(crate) async fn within_quota(services: &Services, project_id: Uuid) -> Result<RecordPermit> {
    services.check_quota(Counted::Records { project_id }).await?;
    Ok(RecordPermit { project_id })
}

/// Files an upload as a record of the project (see [`intake`]) and answers the record as
/// written; the caller was checked by [`may_add`] before the upload was read.
pub async fn add(services: &Services, caller: &Caller, permit: RecordPermit, upload: Upload) -> Result<Record> {
    let user_id = caller.id();
    let project_id = permit.project_id;
    let record_id = match intake(services, permit, upload).await {
        Ok(id) => id,
        // The project was deleted while the upload came in.
        Err(Error::Internal(_)) if !services.store.sees_project(user_id, project_id).await? => {
            return Err(Error::not_found("Project"));
        }
        Err(error) => return Err(error),
    };
    services
        .store
        .get_record(user_id, record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))
}

/// Files an upload as a record of the project: text and documents are read now (a
/// broken file is refused before anything is written), recordings are filed for
/// transcription in the background.
pub async fn intake(services: &Services, permit: RecordPermit, upload: Upload) -> Result<Uuid> {
    let project_id = permit.project_id;
    let (format, bytes, source_name, field) = match upload.source {
        Source::Text(text) => {
            let bytes = text.into_bytes();
            let format = ingest::detect(bytes.get(..HEAD_BYTES.min(bytes.len())).unwrap_or_default(), None, None)
                .map_err(|error| ingest_error(error, "text"))?;
            if matches!(format, Format::Media | Format::Docx | Format::Pdf) {
                return Err(ingest_error(
                    IngestError::Invalid("Send documents and recordings as a multipart file upload.".to_owned()),
                    "text",
                ));
            }
            (format, bytes, None, "text")
        }
        Source::File {
            path,
            name,
            content_type,
            head,
        } => {
            let format = ingest::detect(&head, name.as_deref(), content_type.as_deref())
                .map_err(|error| ingest_error(error, "file"))?;
            if format == Format::Media {
                return file_recording(
                    services,
                    project_id,
                    upload.title,
                    upload.language,
                    path,
                    name,
                    content_type,
                    &head,
                )
                .await;
            }
            let size = tokio::fs::metadata(&path).await.map(|m| m.len()).unwrap_or(0);
            if size > MAX_DOCUMENT_BYTES {
                return Err(Error::TooLarge(format!(
                    "Text and documents are read up to {MAX_DOCUMENT_BYTES} bytes; this one has {size}. \
                     Split it, or upload the recording instead."
                )));
            }
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|error| anyhow::anyhow!("cannot read the upload back: {error}"))?;
            (format, bytes, name, "file")
        }
    };
    // Documents can take a moment (a long PDF): off the async threads.
    let transcript: Transcript = match tokio::task::spawn_blocking(move || ingest::read(format, &bytes)).await {
        Ok(read) => read.map_err(|error| ingest_error(error, field))?,
        // A reader that panics on a file has met a file it cannot read.
        Err(error) if error.is_panic() => {
            return Err(ingest_error(
                IngestError::Invalid(format!(
                    "The {} file could not be read; it may be damaged.",
                    format.as_str().to_uppercase()
                )),
                field,
            ));
        }
        Err(error) => return Err(anyhow::anyhow!("reading the upload failed: {error}").into()),
    };
    file_transcript(
        services,
        permit,
        upload.title,
        upload.language,
        format,
        source_name,
        transcript,
        field,
    )
    .await
}

/// Files a transcript already read as a record of the project, processed like any upload
/// (the limits checked, speakers' roles guessed, the record queued). `field` is the part
/// of the request a refusal names.
#[allow(clippy::too_many_arguments)]
pub async fn file_transcript(
    services: &Services,
    permit: RecordPermit,
    title: Option<String>,
    language: Option<String>,
    format: Format,
    source_name: Option<String>,
    transcript: Transcript,
    field: &str,
) -> Result<Uuid> {
    check_limits(services, &transcript, field)?;
    let project_id = permit.project_id;
    let transcribed = transcribe(transcript.utterances);
    // Decided once here, so that search, suggestions and the persona analyse the record
    // in one language instead of guessing it again for every utterance.
    let language = language.or(transcript.language).or_else(|| {
        crate::engines::search::bm25::guess_language_of(transcribed.utterances.iter().map(|u| u.text.as_str()))
            .map(str::to_owned)
    });
    let name = record_name(title, source_name.as_deref());
    let id = services
        .store
        .create_record(
            project_id,
            NewRecord {
                name,
                language,
                source_format: format.as_str().to_owned(),
                source_name,
                content: RecordContent::Transcript(transcribed),
            },
        )
        .await?;
    Ok(id)
}

/// Where a new recording is kept in the file store: `media/<random>.<extension>`, the
/// extension of the file `name` when it is a plain one (1–5 letters or digits), else
/// `fallback`.
pub fn recording_key(name: Option<&str>, fallback: &str) -> String {
    let extension = name
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .filter(|extension| (1..=5).contains(&extension.len()) && extension.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or_else(|| fallback.to_owned());
    format!("media/{}.{extension}", Uuid::new_v4())
}

/// Moves a recording into the file store and queues it for transcription.
#[allow(clippy::too_many_arguments)]
async fn file_recording(
    services: &Services,
    project_id: Uuid,
    title: Option<String>,
    language: Option<String>,
    path: PathBuf,
    name: Option<String>,
    content_type: Option<String>,
    head: &[u8],
) -> Result<Uuid> {
    if services.stt.is_none() {
        return Err(Error::Unavailable(stt::SETTINGS_HINT.to_owned()));
    }
    let stored = recording_key(name.as_deref(), ingest::media_extension(head));
    // Stored before the record is written, so a record always has its recording; were
    // this request dropped while the record commits, the stored file stays (the startup
    // sweep removes it if no record came of it).
    services.files.keep(&path, &stored).await?;
    let created = services
        .store
        .create_record(
            project_id,
            NewRecord {
                name: record_name(title, name.as_deref()),
                language,
                source_format: Format::Media.as_str().to_owned(),
                source_name: name,
                content: RecordContent::Media {
                    path: stored.clone(),
                    media_type: content_type.as_deref().and_then(crate::engines::ingest::playable_type),
                },
            },
        )
        .await;
    if created.is_err() {
        services.files.delete(&stored).await;
    }
    Ok(created?)
}

fn check_limits(services: &Services, transcript: &Transcript, field: &str) -> Result<()> {
    let limit = services.settings.material.max_utterances;
    let count = transcript.utterances.len();
    let invalid = |message: String| ingest_error(IngestError::Invalid(message), field);
    if count > limit {
        return Err(invalid(format!(
            "The material has {count} utterances; the limit is {limit} (INSIGHT_MAX_UTTERANCES)."
        )));
    }
    let last_ms = transcript
        .utterances
        .iter()
        .filter_map(|u| u.end_ms.or(u.start_ms))
        .max()
        .unwrap_or(0);
    let max_minutes = services.settings.material.max_duration_minutes;
    if last_ms / 60_000 >= max_minutes {
        return Err(invalid(format!(
            "The material runs {} minutes; the limit is {max_minutes} (INSIGHT_MAX_DURATION_MINUTES).",
            last_ms / 60_000
        )));
    }
    Ok(())
}

/// The title given, else the file's name without its extension, else "Untitled record".
fn record_name(title: Option<String>, file_name: Option<&str>) -> String {
    let name = title
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .or_else(|| {
            file_name
                .map(|name| name.rsplit(['/', '\\']).next().unwrap_or(name))
                .map(|name| name.rsplit_once('.').map_or(name, |(stem, _)| stem).trim().to_owned())
                .filter(|name| !name.is_empty())
        })
        .unwrap_or_else(|| "Untitled record".to_owned());
    name.chars().take(300).collect()
}
