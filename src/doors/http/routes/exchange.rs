//! Exchange (tag `exports`): a report as Markdown, Word or PDF and a transcript as Word,
//! text or subtitles (`crate::app::exports`); a project's highlights as CSV, a project as a
//! REFI-QDA project (`.qdpx`) for QualCoder, MAXQDA, ATLAS.ti or NVivo, and a `.qdpx` from
//! any of them made into a new project (`crate::app::research::exchange`).

use axum::Json;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::Caller;
use crate::app::backup::{self, ArchiveImport};
use crate::app::exports::{self, ReportFormat, TranscriptFormat};
use crate::app::records::intake::{TempFile, upload_path};
use crate::app::research::exchange::{self, Download};
use crate::domain::exchange::QdpxImport;
use crate::doors::http::AppState;
use crate::doors::http::extract::{Ids, QueryReader, path_ids};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::upload::{multipart_error, stream_to_file};
use crate::error::{Error, ErrorBody, Result, ValidationIssue};

/// A REFI-QDA project to import.
#[derive(ToSchema)]
#[allow(dead_code)] // Describes the multipart form for the API document.
pub struct QdpxUpload {
    /// The `.qdpx` file, as QualCoder, MAXQDA, ATLAS.ti, NVivo or Insight export it.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// A REFI-QDA project: a zip of `project.qde` and `sources/`.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // Describes the download for the API document.
pub struct QdpxArchive(Vec<u8>);

/// A project archive to import.
#[derive(ToSchema)]
#[allow(dead_code)] // Describes the multipart form for the API document.
pub struct ArchiveUpload {
    /// The archive, as `GET /projects/{project_id}/archive` wrote it.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// A project archive: a zip of `manifest.json`, the project's rows as JSON, and `recordings/`.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // Describes the download for the API document.
pub struct ProjectArchive(Vec<u8>);

/// An exported file.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // Describes the download for the API document.
pub struct ExportedFile(Vec<u8>);

/// The required `format` parameter, one of `names`.
fn format<T>(uri: &Uri, names: &[&str], parse: impl Fn(&str) -> Option<T>) -> Result<T> {
    let mut query = QueryReader::new(uri.query());
    let format = query.choice("format", names, parse);
    let format = query.required("format", format);
    query.finish()?;
    format.ok_or_else(|| Error::Internal(anyhow::anyhow!("a format read without an issue")))
}

fn download(file: Download) -> Response {
    attachment(file.bytes, file.content_type, &file.filename)
}

/// `body` as a file to save, named `filename`.
fn attachment(body: impl IntoResponse, content_type: &'static str, filename: &str) -> Response {
    let disposition = exchange::content_disposition(filename);
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(CONTENT_DISPOSITION, value);
    }
    response
}

/// The report as a file to share: `md` is its Markdown as written, its title the first
/// heading; `docx` a Word document with Word's own styles (Title, Heading 1–4, Quote, List
/// Paragraph) and `pdf` an A4 PDF with its fonts embedded, an outline of its headings and
/// page numbers. In both, the report's citations are links to the moments they cite in the
/// console. A report with nothing written yet is a 409. The export is written to the audit
/// log.
#[utoipa::path(get, path = "/projects/{project_id}/reports/{report_id}/export", tag = "exports", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"),
        ("report_id" = Uuid, Path, description = "The report"),
        ("format" = inline(ReportFormat), Query, description = "The file's format")),
    responses((status = 200, description = "The report, as an attachment", content(
                (ExportedFile = "text/markdown"),
                (ExportedFile = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
                (ExportedFile = "application/pdf")),
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"<report title>.<format>\"`"))),
        (status = 404, description = "No such project or report", body = ErrorBody),
        (status = 409, description = "The report has nothing written yet", body = ErrorBody)))]
async fn report_export(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>, uri: Uri) -> Result<Response> {
    let format = format(&uri, ReportFormat::NAMES, ReportFormat::parse)?;
    Ok(download(exports::report(&app, &caller, ids[0], ids[1], format).await?))
}

/// The record's transcript as a file: `docx` a Word document, one paragraph per utterance
/// (the speaker in bold, the time a link to the moment in the console); `txt` one paragraph
/// per utterance as `[hh:mm:ss.mmm - hh:mm:ss.mmm] Speaker: words`; `vtt` WebVTT with the
/// speaker as each cue's voice (`<v Speaker>`); `srt` SubRip with a `Speaker: ` prefix. Insight
/// reads each back to the same utterances. Subtitles need times: a transcript without any
/// is a 409 as `vtt` or `srt`, and so is a record with no transcript yet. The export is
/// written to the audit log.
#[utoipa::path(get, path = "/insight/{rec_id}/export", tag = "exports", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record"),
        ("format" = inline(TranscriptFormat), Query, description = "The file's format")),
    responses((status = 200, description = "The transcript, as an attachment", content(
                (ExportedFile = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
                (ExportedFile = "text/plain"),
                (ExportedFile = "text/vtt"),
                (ExportedFile = "application/x-subrip")),
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"<record name>.<format>\"`"))),
        (status = 404, description = "No such record", body = ErrorBody),
        (status = 409, description = "No transcript yet, or subtitles asked of one without times", body = ErrorBody)))]
async fn transcript_export(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    uri: Uri,
) -> Result<Response> {
    let format = format(&uri, TranscriptFormat::NAMES, TranscriptFormat::parse)?;
    Ok(download(exports::transcript(&app, &caller, ids[0], format).await?))
}

/// The project's highlights as CSV (UTF-8 with a byte order mark, one row per
/// highlight): its record, utterances, time, speaker, quote, tags (names joined by
/// `; `), note, status, author, date, and a link to the moment in the console.
/// Suggested highlights that nobody accepted yet are left out. A cell that a spreadsheet
/// would run as a formula starts with `'`. The export is written to the audit log.
#[utoipa::path(get, path = "/projects/{project_id}/highlights.csv", tag = "exports", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    responses((status = 200, description = "The highlights, as a CSV attachment", content_type = "text/csv", body = String,
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"<project>-highlights.csv\"`"))),
        (status = 404, description = "No such project", body = ErrorBody)))]
async fn highlights_csv(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Response> {
    Ok(download(exchange::highlights_csv(&app, &caller, ids[0]).await?))
}

/// The project as a REFI-QDA project (a zip of `project.qde` and `sources/`): the
/// workspace's tags as the codebook (groups holding their tags, colours, descriptions),
/// each record's transcript as a text source, one utterance a line (`Speaker: words`),
/// and each highlight as a coded segment of it, its note as the segment's description.
/// Suggested highlights nobody accepted, and detached ones (their words are no longer in
/// the transcript), are left out. The export is written to the audit log.
#[utoipa::path(get, path = "/projects/{project_id}/export.qdpx", tag = "exports", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    responses((status = 200, description = "The project, as a .qdpx attachment", content_type = "application/zip", body = QdpxArchive,
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"<project>.qdpx\"`"))),
        (status = 404, description = "No such project", body = ErrorBody)))]
async fn project_qdpx(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Response> {
    Ok(download(exchange::project_qdpx(&app, &caller, ids[0]).await?))
}

/// Makes a new project of the workspace from a REFI-QDA project (`.qdpx`) another tool
/// exported. Each text source becomes a record (a line `Speaker: words` is that
/// speaker's utterance, any other line one of an unknown speaker), processed like an
/// upload; the codes become the workspace's tags (joined by name, without case, to
/// those it has; a code under another goes into that one's group); coded segments become
/// highlights. Sources that are not text are skipped, and so are segments that hold no
/// words of their text; the answer counts both. The file is limited like record uploads
/// (INSIGHT_MAX_UPLOAD_BYTES); project.qde is read as a stream within the import limits
/// (INSIGHT_IMPORT_MAX_*), and what the file unpacks to within INSIGHT_IMPORT_MAX_EXPANSION
/// times its size.
#[utoipa::path(post, path = "/workspaces/{workspace_id}/import/qdpx", tag = "exports", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body(content = QdpxUpload, content_type = "multipart/form-data"),
    responses((status = 201, description = "The new project and what went into it", body = QdpxImport),
        (status = 404, description = "No such workspace", body = ErrorBody),
        (status = 413, description = "Larger than INSIGHT_MAX_UPLOAD_BYTES, or past an import limit (the sentence names the entry and the limit); nothing was made", body = ErrorBody),
        (status = 429, description = "INSIGHT_IMPORT_CONCURRENCY imports are being read; see Retry-After", body = ErrorBody),
        Conflicts))]
async fn import_qdpx(
    caller: Caller,
    State(app): State<AppState>,
    req: Request,
) -> Result<(StatusCode, Json<QdpxImport>)> {
    let limit = app.settings.material.max_upload_bytes;
    let (workspace_id, temp) = receive(&app, &caller, req, limit, "INSIGHT_MAX_UPLOAD_BYTES", ".qdpx file").await?;
    let path = temp
        .0
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the upload has no temporary file"))?;
    let imported = exchange::import(&app, &caller, workspace_id, path).await?;
    Ok((StatusCode::CREATED, Json(imported)))
}

/// Takes in a workspace's import: the writer's access checked and the declared size
/// against `limit` (named by `setting` in a 413) before the upload is read, then the
/// form's file streamed to a temporary file.
async fn receive(
    app: &AppState,
    caller: &Caller,
    req: Request,
    limit: u64,
    setting: &str,
    what: &str,
) -> Result<(uuid::Uuid, TempFile)> {
    let too_large = || {
        Error::TooLarge(format!(
            "The upload is larger than the limit of {limit} bytes ({setting})."
        ))
    };
    let (parts, body) = req.into_parts();
    let (ids, issues) = path_ids::<1>(&parts)?;
    if !issues.is_empty() {
        return Err(Error::validation(issues));
    }
    let [workspace_id] = ids;
    crate::app::research::exchange::may_import(app, caller, workspace_id).await?;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if !content_type.to_ascii_lowercase().starts_with("multipart/form-data") {
        return Err(Error::UnsupportedFormat(format!(
            "Send the {what} as multipart/form-data, in a part named file."
        )));
    }
    let mut temp = TempFile(None);
    match read_file(
        Request::from_parts(parts, body),
        &content_type,
        limit,
        what,
        app,
        &mut temp,
    )
    .await
    {
        Err(Error::TooLarge(_)) => Err(too_large()),
        Err(error) => Err(error),
        Ok(()) => Ok((workspace_id, temp)),
    }
}

/// Streams the form's `file` (a `what`, of at most `limit` bytes) to a temporary file in
/// the data folder; other fields are ignored, as unknown fields are in JSON bodies.
async fn read_file(
    req: Request,
    content_type: &str,
    limit: u64,
    what: &str,
    app: &AppState,
    temp: &mut TempFile,
) -> Result<()> {
    let boundary = multer::parse_boundary(content_type).map_err(|_| {
        Error::validation(vec![ValidationIssue::new(
            vec![json!("body")],
            "value_error",
            "The multipart body has no boundary in its Content-Type header.",
        )])
    })?;
    let constraints = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .whole_stream(limit.saturating_add(64 * 1024))
            .per_field(limit),
    );
    let mut multipart = multer::Multipart::with_constraints(req.into_body().into_data_stream(), boundary, constraints);
    let mut found = false;
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        match field.name() {
            Some("file") if found => {
                return Err(Error::validation(vec![ValidationIssue::new(
                    vec![json!("body"), json!("file")],
                    "value_error",
                    format!("Send one {what} per import: this form has more than one part named file."),
                )]));
            }
            Some("file") => {
                let path = upload_path(&app.settings.storage.data_dir)?;
                temp.0 = Some(path.clone());
                stream_to_file(field, &path, limit).await?;
                found = true;
            }
            _ => while field.chunk().await.map_err(multipart_error)?.is_some() {},
        }
    }
    if !found {
        return Err(Error::validation(vec![ValidationIssue::new(
            vec![json!("body"), json!("file")],
            "missing",
            "Field required",
        )]));
    }
    Ok(())
}

/// The whole project as one archive, to keep as a backup or to move to another workspace
/// or another Insight (`POST /workspaces/{workspace_id}/import/archive`): a zip of
/// `manifest.json` (the format, `insight-project-archive`, its version, and what it
/// holds), the project's rows as JSON (`project.json`, `records.json` with each
/// transcript and persona, `reports.json` with earlier versions, `tags.json`,
/// `highlights.json`, `insights.json`, `themes.json`, `interviews.json` with each room's
/// turns) and `recordings/`. It is streamed as it is written. Each person is named by
/// e-mail address; interview links, chat threads (each member's own) and the workspace's
/// usage are not in it. Needs write access to the project (and, with a token, one of
/// scope `write`); the export is written to the audit log.
#[utoipa::path(get, path = "/projects/{project_id}/archive", tag = "exports", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    responses((status = 200, description = "The project, as a zip attachment", content_type = "application/zip", body = ProjectArchive,
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"<project>.insight.zip\"`"))),
        (status = 403, description = "A viewer of the project, or a token with scope read", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 503, description = "The file store holding the recordings does not answer", body = ErrorBody)))]
async fn project_archive(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Response> {
    let archive = backup::export(&app, &caller, ids[0]).await?;
    Ok(attachment(
        axum::body::Body::from_stream(archive.body),
        "application/zip",
        &archive.filename,
    ))
}

/// Makes a new project of the workspace from a project archive, from this Insight or
/// another (`GET /projects/{project_id}/archive`). Everything in it is kept as it was
/// (names, texts, times, statuses, versions, who made what, by e-mail address where that
/// person has an account here), under new ids. Tags join the workspace's by name, without
/// case, or are made; presets and prompts a report names are kept when the workspace has
/// them. A record still being processed is processed again; a report still being written
/// is failed, to be generated again; an interview room gets a new link, and one in
/// progress is cancelled. The archive is limited by INSIGHT_MAX_ARCHIVE_BYTES; its JSON is
/// read as a stream, each entry within what it can hold and all within the import limits.
/// The import is written to the audit log.
#[utoipa::path(post, path = "/workspaces/{workspace_id}/import/archive", tag = "exports", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body(content = ArchiveUpload, content_type = "multipart/form-data"),
    responses((status = 201, description = "The new project and what went into it", body = ArchiveImport),
        (status = 403, description = "A viewer of the workspace", body = ErrorBody),
        (status = 404, description = "No such workspace", body = ErrorBody),
        (status = 413, description = "Larger than INSIGHT_MAX_ARCHIVE_BYTES, or an entry past its limit (the sentence names the entry and the limit); nothing was made", body = ErrorBody),
        (status = 429, description = "INSIGHT_IMPORT_CONCURRENCY imports are being read; see Retry-After", body = ErrorBody),
        (status = 503, description = "The file store does not answer; nothing was made", body = ErrorBody),
        Conflicts))]
async fn import_archive(
    caller: Caller,
    State(app): State<AppState>,
    req: Request,
) -> Result<(StatusCode, Json<ArchiveImport>)> {
    let limit = app.settings.material.max_archive_bytes;
    let (workspace_id, temp) = receive(
        &app,
        &caller,
        req,
        limit,
        "INSIGHT_MAX_ARCHIVE_BYTES",
        "project archive",
    )
    .await?;
    let path = temp
        .0
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the upload has no temporary file"))?;
    let imported = backup::import(&app, &caller, workspace_id, path).await?;
    Ok((StatusCode::CREATED, Json(imported)))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(report_export))
        .routes(routes!(transcript_export))
        .routes(routes!(highlights_csv))
        .routes(routes!(project_qdpx))
        .routes(routes!(import_qdpx))
        .routes(routes!(project_archive))
        .routes(routes!(import_archive))
}
