//! Records (tag `insight`): upload interview material into a project, read it back with
//! its utterances, fix who is who, correct an utterance, delete it.
//!
//! An upload is JSON `{title, text, language?}` or `multipart/form-data` with `file`
//! (and optional `title`, `language`). Text and document formats are read at once, so a
//! broken file is refused (415 or 422) before anything is written; recordings are
//! streamed to the data folder and transcribed in the background.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::records::intake::{self, MAX_DOCUMENT_BYTES, Source, TempFile, Upload, upload_path};
use crate::app::records::speakers;
use crate::app::records::{correction, removal};
use crate::domain::record::{Record, RecordDetail, is_language_tag};
use crate::doors::http::AppState;
use crate::doors::http::extract::{IdNumberAndJson, Ids, IdsAndJson, path_ids, read_json_body_up_to};
use crate::doors::http::openapi::Conflicts;
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::doors::http::upload::{multipart_error, stream_to_file, too_large};
use crate::doors::http::validation::parse_body;
use crate::engines::ingest::stt;
use crate::error::{Error, Result, ValidationIssue};

/// Interview material as text: a transcript in any text format Insight reads (plain
/// `Speaker: text` lines, Markdown, WebVTT, SRT, or a JSON export), or notes.
#[derive(Deserialize, ToSchema)]
pub struct RecordCreate {
    #[schema(min_length = 1, max_length = 300)]
    pub title: String,
    #[schema(min_length = 1)]
    pub text: String,
    /// BCP 47 tag of the material's language, e.g. `en` or `de-CH`.
    #[schema(
        nullable = false,
        min_length = 2,
        max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
    )]
    pub language: Option<String>,
}

/// A file upload: a transcript, a document or a recording.
#[derive(ToSchema)]
#[allow(dead_code)] // Describes the multipart form for the API document.
pub struct RecordUpload {
    /// The file: .txt, .md, .vtt, .srt, .docx, .pdf, .json, or audio/video.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// The record's name; the file's name when left out.
    #[schema(nullable = false, max_length = 300)]
    title: Option<String>,
    /// BCP 47 tag of the material's language, e.g. `en` or `de-CH`.
    #[schema(
        nullable = false,
        min_length = 2,
        max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
    )]
    language: Option<String>,
}

/// Changes to a record: a field left out (or null) stays as it is.
#[derive(Deserialize, ToSchema)]
pub struct RecordUpdate {
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 300)]
    pub name: Option<String>,
    /// Whether the record's persona can be read without a token, at
    /// `GET /insight/public/{rec_id}/persona-report`.
    #[serde(default)]
    #[schema(required = false)]
    pub is_public: Option<bool>,
    /// BCP 47 tag of the material's language, e.g. `en` or `de-CH`: its text is searched
    /// (stemmed) in that language from then on.
    #[serde(default)]
    #[schema(
        required = false,
        min_length = 2,
        max_length = 35,
        pattern = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"
    )]
    pub language: Option<String>,
}

/// Renames a speaker everywhere in the record.
#[derive(Deserialize, ToSchema)]
pub struct SpeakerName {
    /// The speaker as the record names them now.
    #[schema(min_length = 1, max_length = 200)]
    pub speaker: String,
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
}

/// Marks a speaker as a respondent (or as an interviewer).
#[derive(Deserialize, ToSchema)]
pub struct SpeakerRespondent {
    #[schema(min_length = 1, max_length = 200)]
    pub speaker: String,
    pub is_respondent: bool,
}

/// Corrects one utterance: a field left out (or null) stays as it is.
#[derive(Deserialize, ToSchema)]
pub struct UtteranceUpdate {
    /// What was said, as it should read.
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 50000)]
    pub text: Option<String>,
    /// Who said it: moves just this utterance to that speaker (the speaker's role comes
    /// along if the record has them already). To rename a speaker everywhere, use
    /// `PATCH /insight/{rec_id}/speaker_name`.
    #[serde(default)]
    #[schema(required = false, min_length = 1, max_length = 200)]
    pub speaker: Option<String>,
}

#[utoipa::path(post, path = "/projects/{project_id}/records", tag = "insight", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project")),
    request_body(content(
        (RecordCreate = "application/json"),
        (RecordUpload = "multipart/form-data"),
    )),
    responses(
        (status = 201, description = "The record; text is read at once, recordings are transcribed in the background", body = Record),
        (status = 503, description = "A recording, and no speech-to-text provider is configured", body = crate::error::ErrorBody),
        Conflicts,
    ))]
async fn create_record(
    caller: Caller,
    State(app): State<AppState>,
    req: Request,
) -> Result<(StatusCode, Json<Record>)> {
    let (parts, body) = req.into_parts();
    let (ids, issues) = path_ids::<1>(&parts)?;
    if !issues.is_empty() {
        return Err(Error::validation(issues));
    }
    let [project_id] = ids;
    let permit = intake::may_add(&app, &caller, project_id).await?;
    let limit = app.settings.material.max_upload_bytes;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit) {
        return Err(too_large(limit));
    }
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let req = Request::from_parts(parts, body);
    let mut temp = TempFile(None);
    let upload = if content_type.to_ascii_lowercase().starts_with("multipart/form-data") {
        read_multipart(req, &content_type, &app, &mut temp).await?
    } else {
        let bytes = read_json_body_up_to(req, limit.min(MAX_DOCUMENT_BYTES))
            .await
            .map_err(|error| {
                match error {
            Error::UnsupportedFormat(_) => Error::UnsupportedFormat(
                "Send JSON {\"title\", \"text\"} (Content-Type: application/json) or a file as multipart/form-data."
                    .to_owned(),
            ),
            other => other,
        }
            })?;
        let body: RecordCreate = parse_body(&bytes)?;
        Upload {
            title: Some(body.title),
            language: body.language,
            source: Source::Text(body.text),
        }
    };
    let record = intake::add(&app, &caller, permit, upload).await?;
    Ok((StatusCode::CREATED, Json(record)))
}

/// Reads the multipart form: the file streams to a temporary file in the data folder.
async fn read_multipart(req: Request, content_type: &str, app: &AppState, temp: &mut TempFile) -> Result<Upload> {
    let limit = app.settings.material.max_upload_bytes;
    let boundary = multer::parse_boundary(content_type).map_err(|_| {
        Error::validation(vec![ValidationIssue::new(
            vec![json!("body")],
            "value_error",
            "The multipart body has no boundary in its Content-Type header.",
        )])
    })?;
    let stream = req.into_body().into_data_stream();
    // Bounded everywhere: the whole body, and the small fields (part headers count too).
    let constraints = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .whole_stream(limit.saturating_add(64 * 1024))
            .per_field(limit)
            .for_field("title", 4 * 1024)
            .for_field("language", 1024),
    );
    let mut multipart = multer::Multipart::with_constraints(stream, boundary, constraints);
    let mut title = None;
    let mut language = None;
    let mut file = None;
    let mut issues = Vec::new();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Err(multipart_error(error)),
        };
        match field.name().unwrap_or_default() {
            "file" if file.is_none() => {
                let name = field.file_name().map(str::to_owned);
                let part_type = field.content_type().map(|mime| mime.essence_str().to_owned());
                let is_media = part_type
                    .as_deref()
                    .is_some_and(|t| t.starts_with("audio/") || t.starts_with("video/"));
                if is_media && app.stt.is_none() {
                    return Err(Error::Unavailable(stt::SETTINGS_HINT.to_owned()));
                }
                let path = upload_path(&app.settings.storage.data_dir)?;
                temp.0 = Some(path.clone());
                let head = stream_to_file(field, &path, limit).await?;
                file = Some((path, name, part_type, head));
            }
            "file" => {
                // Taking one and dropping the other would file half of what was sent.
                return Err(Error::validation(vec![ValidationIssue::new(
                    vec![json!("body"), json!("file")],
                    "value_error",
                    "Value error, send one file per upload: this form has more than one part named file",
                )]));
            }
            "title" => title = Some(small_text(field, "title", 300, &mut issues).await?),
            "language" => {
                let tag = small_text(field, "language", 35, &mut issues).await?;
                if !tag.is_empty() && !is_language_tag(&tag) {
                    issues.push(
                        ValidationIssue::new(
                            vec![json!("body"), json!("language")],
                            "string_pattern_mismatch",
                            "String should be a BCP 47 language tag such as en or de-CH",
                        )
                        .with_input(json!(tag)),
                    );
                }
                language = Some(tag);
            }
            _ => {
                // Unknown fields are ignored, as in JSON bodies; drain them within the limit.
                let mut field = field;
                while field.chunk().await.map_err(multipart_error)?.is_some() {}
            }
        }
    }
    let Some((path, name, content_type, head)) = file else {
        issues.insert(
            0,
            ValidationIssue::new(vec![json!("body"), json!("file")], "missing", "Field required"),
        );
        return Err(Error::validation(issues));
    };
    if !issues.is_empty() {
        return Err(Error::validation(issues));
    }
    Ok(Upload {
        title: title.filter(|t: &String| !t.trim().is_empty()),
        language: language.filter(|l: &String| !l.trim().is_empty()),
        source: Source::File {
            path,
            name,
            content_type,
            head,
        },
    })
}

/// A short text field of the form.
async fn small_text(
    field: multer::Field<'_>,
    name: &str,
    max_chars: usize,
    issues: &mut Vec<ValidationIssue>,
) -> Result<String> {
    let mut field = field;
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > max_chars * 4 + 4 {
            break;
        }
    }
    let sent = String::from_utf8_lossy(&bytes);
    // NUL means nothing in text and PostgreSQL refuses it: dropped, as from JSON bodies,
    // once the length is checked as the document counts it (every character sent).
    let text = sent.replace('\0', "").trim().to_owned();
    if sent.chars().count() > max_chars {
        issues.push(
            ValidationIssue::new(
                vec![json!("body"), json!(name)],
                "string_too_long",
                format!("String should have at most {max_chars} characters"),
            )
            .with_ctx(json!({ "max_length": max_chars })),
        );
    }
    Ok(text)
}

#[utoipa::path(get, path = "/projects/{project_id}/records", tag = "insight", security(("bearer" = [])),
    params(("project_id" = Uuid, Path, description = "The project"), PageQuery),
    responses((status = 200, description = "A page of the project's records, newest first", body = Vec<Record>)))]
async fn list_records(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let [project_id] = ids;
    let page = paging.request()?;
    Ok(paged(
        &uri,
        crate::app::records::list(&app, &caller, project_id, &page).await?,
    ))
}

async fn record_detail(app: &AppState, caller: &Caller, record_id: Uuid) -> Result<RecordDetail> {
    crate::app::records::detail(&app.store, caller, record_id).await
}

#[utoipa::path(get, path = "/insight/{rec_id}/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 200, description = "The record with its utterances", body = RecordDetail)))]
async fn get_record(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<RecordDetail>> {
    let [record_id] = ids;
    Ok(Json(record_detail(&app, &caller, record_id).await?))
}

#[utoipa::path(delete, path = "/insight/{rec_id}/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    responses((status = 204, description = "Deleted with its utterances (and its recording, if any)")))]
async fn delete_record(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    let [record_id] = ids;
    removal::delete(&app, &caller, record_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(patch, path = "/insight/{rec_id}/", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = RecordUpdate,
    responses((status = 200, description = "The record, renamed, made public or private, or in another language", body = Record)))]
async fn update_record(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, RecordUpdate>,
) -> Result<Json<Record>> {
    let [record_id] = ids;
    let changes = crate::app::records::Changes {
        name: body.name.as_deref(),
        is_public: body.is_public,
        language: body.language.as_deref(),
    };
    let record = crate::app::records::update(&app, &caller, record_id, changes).await?;
    Ok(Json(record))
}

#[utoipa::path(patch, path = "/insight/{rec_id}/speaker_name", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = SpeakerName,
    responses((status = 200, description = "The record with the speaker renamed", body = RecordDetail), Conflicts))]
async fn rename_speaker(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, SpeakerName>,
) -> Result<Json<RecordDetail>> {
    let [record_id] = ids;
    speakers::rename(&app.store, &caller, record_id, &body.speaker, &body.name).await?;
    Ok(Json(record_detail(&app, &caller, record_id).await?))
}

#[utoipa::path(patch, path = "/insight/{rec_id}/speaker_respondent", tag = "insight", security(("bearer" = [])),
    params(("rec_id" = Uuid, Path, description = "The record")),
    request_body = SpeakerRespondent,
    responses((status = 200, description = "The record with the speaker's role set", body = RecordDetail), Conflicts))]
async fn set_speaker_respondent(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, SpeakerRespondent>,
) -> Result<Json<RecordDetail>> {
    let [record_id] = ids;
    speakers::set_respondent(&app.store, &caller, record_id, &body.speaker, body.is_respondent).await?;
    Ok(Json(record_detail(&app, &caller, record_id).await?))
}

#[utoipa::path(patch, path = "/insight/{rec_id}/utterances/{utterance_id}", tag = "insight", security(("bearer" = [])),
    params(
        ("rec_id" = Uuid, Path, description = "The record"),
        ("utterance_id" = i64, Path, description = "The utterance: its `id`, its position in the record from 1"),
    ),
    request_body = UtteranceUpdate,
    responses(
        (status = 200, description = "The record with the utterance corrected; its `updated_at` moves when anything changed", body = RecordDetail),
        Conflicts,
    ))]
async fn correct_utterance(
    caller: Caller,
    State(app): State<AppState>,
    IdNumberAndJson(record_id, utterance_id, body): IdNumberAndJson<UtteranceUpdate>,
) -> Result<Json<RecordDetail>> {
    let detail =
        correction::correct_utterance(&app.store, &caller, record_id, utterance_id, body.text, body.speaker).await?;
    Ok(Json(detail))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_record, list_records))
        .routes(routes!(get_record, update_record, delete_record))
        .routes(routes!(rename_speaker))
        .routes(routes!(set_speaker_respondent))
        .routes(routes!(correct_utterance))
}
