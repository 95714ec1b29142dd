//! Records: pasting a transcript into a project, and a record's transcript with its
//! speakers.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::post;
use serde::Deserialize;
use uuid::Uuid;

use super::chat::{ChatPanel, ThreadQuery};
use super::repository::{Segment, segments};
use super::settings::{Done, Message};
use super::{Button, ConfirmDelete, Shell};
use crate::app::persona::Current;
use crate::app::records::intake::{self, Source, Upload};
use crate::app::records::{correction, removal, speakers};
use crate::domain::highlight::Highlight;
use crate::domain::record::{Record, Utterance};
use crate::domain::tag::Tag;
use crate::domain::workspace::{Need, Role};
use crate::doors::console::markdown::{CitationIndex, render};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

/// The record named in a page's address, if the visitor's role on it allows `need`
/// (unseen is a 404, seen but not allowed a 403), with that role and its project's name.
async fn record_for(
    services: &Services,
    visitor: &Visitor,
    record_id: Uuid,
    need: Need,
) -> Result<(Role, Record, String), Error> {
    crate::app::records::of_user(services, &visitor.caller, record_id, need).await
}

#[derive(Deserialize)]
struct PasteForm {
    title: String,
    text: String,
}

async fn paste(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<PasteForm>,
) -> PageResult {
    let permit = intake::may_add(&services, &visitor.caller, project_id).await?;
    let upload = Upload {
        title: Some(form.title),
        language: None,
        source: Source::Text(form.text),
    };
    intake::intake(&services, permit, upload).await?;
    Ok(Redirect::to(&format!("/p/{project_id}")).into_response())
}

struct Speaker {
    name: String,
    is_respondent: bool,
}

/// An utterance and its text cut where highlights begin and end.
struct Turn {
    u: Utterance,
    segments: Vec<Segment>,
}

const DONE: &[(&str, &str)] = &[
    ("highlighted", "Highlighted."),
    (
        "suggesting",
        "Suggestions are being made; they appear under Highlights in a moment (reload the page).",
    ),
];

#[derive(Template)]
#[template(path = "record.html")]
struct RecordPage {
    shell: Shell,
    record: Record,
    project_name: String,
    utterances: Vec<Turn>,
    /// The record's highlights (suggestions among them), and the workspace's tags.
    highlights: Vec<Highlight>,
    tags: Vec<Tag>,
    /// Where the highlight cards' forms return.
    back: String,
    notice: Option<&'static str>,
    speakers: Vec<Speaker>,
    has_recording: bool,
    can_write: bool,
    csrf: String,
    chat: ChatPanel,
    /// The personal data the record holds, and whether models see it as placeholders.
    pii: crate::domain::privacy::PiiReport,
    /// What the respondent of the interview it came from accepted.
    consent: Option<crate::domain::record::Consent>,
}

impl RecordPage {
    /// The transcript's export formats and their names; subtitles only when it has times.
    fn downloads(&self) -> Vec<(&'static str, &'static str)> {
        let mut formats = vec![("docx", "Word"), ("txt", "Text")];
        if self.utterances.iter().any(|turn| turn.u.start_ms.is_some()) {
            formats.extend([("vtt", "WebVTT subtitles"), ("srt", "SubRip subtitles")]);
        }
        formats
    }

    /// "2 people, 1 e-mail address": the kinds found, in words; empty when none.
    fn pii_summary(&self) -> String {
        let k = &self.pii.kinds;
        [
            (k.person, "person", "people"),
            (k.email, "e-mail address", "e-mail addresses"),
            (k.phone, "phone number", "phone numbers"),
            (k.card, "payment card", "payment cards"),
            (k.iban, "IBAN", "IBANs"),
            (k.ip, "IP address", "IP addresses"),
            (k.url, "profile link", "profile links"),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

async fn show(
    State(services): State<Services>,
    visitor: Visitor,
    Path(record_id): Path<Uuid>,
    Query(thread): Query<ThreadQuery>,
    Query(done): Query<Done>,
) -> PageResult {
    let crate::app::records::View {
        role,
        record,
        project_name,
        utterances,
        speakers,
        highlights,
        tags,
        has_recording,
        pii,
        consent,
        ..
    } = crate::app::records::view(&services, &visitor.caller, record_id).await?;
    let chat = super::chat::record_panel(&services, &visitor, record_id, record.project_id, &thread).await?;
    let html = RecordPage {
        chat,
        shell: Shell::of(&visitor),
        has_recording,
        record,
        project_name,
        utterances: utterances
            .into_iter()
            .map(|u| Turn {
                segments: segments(u.id, &u.text, &highlights),
                u,
            })
            .collect(),
        back: format!("/r/{record_id}#highlights"),
        notice: Message::done(&done, DONE).notice,
        highlights,
        tags,
        speakers: speakers
            .into_iter()
            .map(|speaker| Speaker {
                name: speaker.name,
                is_respondent: speaker.is_respondent,
            })
            .collect(),
        can_write: role.allows(Need::Write),
        csrf: visitor.csrf.clone(),
        pii,
        consent,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

#[derive(Deserialize)]
struct RenameForm {
    speaker: String,
    name: String,
}

async fn rename(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, form): Change<RenameForm>,
) -> PageResult {
    speakers::rename(&services.store, &visitor.caller, record_id, &form.speaker, &form.name).await?;
    Ok(Redirect::to(&format!("/r/{record_id}")).into_response())
}

#[derive(Deserialize)]
struct LanguageForm {
    language: String,
}

async fn language(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, form): Change<LanguageForm>,
) -> PageResult {
    let changes = crate::app::records::Changes {
        language: Some(form.language.trim()),
        ..Default::default()
    };
    crate::app::records::update(&services, &visitor.caller, record_id, changes).await?;
    Ok(Redirect::to(&format!("/r/{record_id}")).into_response())
}

#[derive(Deserialize)]
struct RespondentForm {
    speaker: String,
    is_respondent: bool,
}

async fn respondent(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, form): Change<RespondentForm>,
) -> PageResult {
    speakers::set_respondent(
        &services.store,
        &visitor.caller,
        record_id,
        &form.speaker,
        form.is_respondent,
    )
    .await?;
    Ok(Redirect::to(&format!("/r/{record_id}")).into_response())
}

/// The record's recording, for the player beside the transcript: streamed from the file
/// store with ranges (so the player can seek), to those who may read the record.
async fn recording(
    State(services): State<Services>,
    visitor: Visitor,
    Path(record_id): Path<Uuid>,
    request: axum::extract::Request,
) -> PageResult {
    let (path, media_type) = crate::app::records::recording(&services, &visitor.caller, record_id).await?;
    use axum::http::header::{ACCEPT_RANGES, CONTENT_LENGTH, CONTENT_RANGE, RANGE};
    let size = services.files.size(&path).await.map_err(Error::from)?;
    let asked = request
        .headers()
        .get(RANGE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| crate::providers::files::byte_range(value, size));
    let range = match asked {
        Some(Err(())) => {
            let mut response = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
            if let Ok(value) = axum::http::HeaderValue::from_str(&format!("bytes */{size}")) {
                response.headers_mut().insert(CONTENT_RANGE, value);
            }
            return Ok(response);
        }
        Some(Ok(range)) => Some(range),
        None => None,
    };
    let reading = services.files.read(&path, range.clone()).await.map_err(Error::from)?;
    let length = reading.range.end - reading.range.start;
    let status = if range.is_some() {
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    let mut response = (status, axum::body::Body::from_stream(reading.bytes)).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_LENGTH, axum::http::HeaderValue::from(length));
    headers.insert(ACCEPT_RANGES, axum::http::HeaderValue::from_static("bytes"));
    if range.is_some()
        && let Ok(value) = axum::http::HeaderValue::from_str(&format!(
            "bytes {}-{}/{}",
            reading.range.start,
            reading.range.end - 1,
            reading.size
        ))
    {
        headers.insert(CONTENT_RANGE, value);
    }
    let media_type = media_type
        .as_deref()
        .and_then(crate::engines::ingest::playable_type)
        .or_else(|| crate::engines::ingest::media_type_of(&path).map(str::to_owned))
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    if let Ok(value) = axum::http::HeaderValue::from_str(&media_type) {
        headers.insert(axum::http::header::CONTENT_TYPE, value);
    }
    // Whatever the file holds, it is never run as a page of this origin.
    headers.insert(
        axum::http::header::CONTENT_SECURITY_POLICY,
        axum::http::HeaderValue::from_static("sandbox; default-src 'none'; media-src 'self'"),
    );
    headers.insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("private, max-age=3600"),
    );
    Ok(response)
}

#[derive(Template)]
#[template(path = "persona.html")]
struct PersonaPage {
    shell: Shell,
    record: Record,
    project_name: String,
    pending: bool,
    message: Option<String>,
    html: String,
    provenance: Option<super::provenance::ProvenanceView>,
}

/// The record's persona, written from its transcript (and waited for while it is being
/// written); its quotes link to the moments they come from.
async fn persona(State(services): State<Services>, visitor: Visitor, Path(record_id): Path<Uuid>) -> PageResult {
    let (_, record, project_name) = record_for(&services, &visitor, record_id, Need::Read).await?;
    let mut provenance = None;
    let (pending, message, html) = match crate::app::persona::current(&services, &record, false).await {
        Ok(Current::Written(report)) => {
            let utterances = crate::app::records::utterances(&services, &visitor.caller, record_id).await?;
            let mut index = CitationIndex::default();
            index.add(record_id, &record.name, utterances.iter().map(|u| (u.id, u.start_ms)));
            if let Some(written) = &report.provenance {
                let currency = super::provenance::currency(&services, record.project_id).await?;
                provenance = Some(super::provenance::ProvenanceView::new(written, &currency));
            }
            (false, None, render(&report.markdown, &index))
        }
        Ok(Current::Pending) => (true, None, String::new()),
        Ok(Current::Failed { reason, .. }) => (
            false,
            Some(reason.unwrap_or_else(|| "Writing the persona failed; it is tried again shortly.".to_owned())),
            String::new(),
        ),
        Err(Error::Conflict(message)) => (false, Some(message), String::new()),
        Err(error) => return Err(error.into()),
    };
    let html = PersonaPage {
        shell: Shell::of(&visitor),
        record,
        project_name,
        pending,
        message,
        html,
        provenance,
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

#[derive(Template)]
#[template(path = "correct_utterance.html")]
struct CorrectionPage {
    shell: Shell,
    record: Record,
    project_name: String,
    utterance: Utterance,
    csrf: String,
}

/// The form that corrects one utterance, asked for when a person wants to correct it (the
/// transcript page carries a link per turn, not a form with the text again); the record
/// page's script shows it in place.
async fn correction_form(
    State(services): State<Services>,
    visitor: Visitor,
    Path((record_id, utterance_id)): Path<(Uuid, i64)>,
) -> PageResult {
    let (record, project_name, utterance) =
        crate::app::records::utterance(&services, &visitor.caller, record_id, utterance_id).await?;
    let html = CorrectionPage {
        shell: Shell::of(&visitor),
        record,
        project_name,
        utterance,
        csrf: visitor.csrf.clone(),
    };
    Ok(page(StatusCode::OK, super::render(&html)))
}

#[derive(Deserialize)]
struct CorrectionForm {
    text: String,
}

async fn correct(
    State(services): State<Services>,
    Path((record_id, utterance_id)): Path<(Uuid, i64)>,
    Change(visitor, form): Change<CorrectionForm>,
) -> PageResult {
    correction::correct_utterance(
        &services.store,
        &visitor.caller,
        record_id,
        utterance_id,
        Some(form.text),
        None,
    )
    .await?;
    Ok(Redirect::to(&format!("/r/{record_id}#u{utterance_id}")).into_response())
}

async fn confirm_delete(State(services): State<Services>, visitor: Visitor, Path(record_id): Path<Uuid>) -> PageResult {
    let (_, record, _) = record_for(&services, &visitor, record_id, Need::Write).await?;
    let consequence = "Its transcript, its recording, its persona and its chat threads are deleted with it; \
         reports already written keep their text. This cannot be undone.";
    Ok(ConfirmDelete::page(
        &visitor,
        record.name,
        consequence.to_owned(),
        format!("/r/{record_id}/delete"),
        format!("/r/{record_id}"),
    ))
}

async fn delete(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    let project_id = removal::delete(&services, &visitor.caller, record_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}")).into_response())
}

async fn confirm_redact(State(services): State<Services>, visitor: Visitor, Path(record_id): Path<Uuid>) -> PageResult {
    let (_, record, _) = record_for(&services, &visitor, record_id, Need::Write).await?;
    let consequence = "Every name, e-mail address, phone number, card, IBAN, IP address and profile link in its \
         transcript, its speakers and its name becomes a placeholder such as [PERSON_1], in the stored transcript, its \
         highlights and its chat threads; its recording is deleted; its persona is written again, and the reports \
         written from it are marked for regeneration. This cannot be undone.";
    Ok(ConfirmDelete::ask(
        &visitor,
        format!("Redact “{}” for good?", record.name),
        "Redact for good",
        consequence.to_owned(),
        format!("/r/{record_id}/redact"),
        format!("/r/{record_id}"),
    ))
}

async fn redact(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    crate::app::protection::redaction::redact(&services, &visitor.caller, record_id).await?;
    Ok(Redirect::to(&format!("/r/{record_id}")).into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/p/{project_id}/records", post(paste))
        .route("/r/{record_id}", axum::routing::get(show))
        .route("/r/{record_id}/speakers", post(rename))
        .route("/r/{record_id}/respondent", post(respondent))
        .route("/r/{record_id}/language", post(language))
        .route(
            "/r/{record_id}/u/{utterance_id}",
            axum::routing::get(correction_form).post(correct),
        )
        .route("/r/{record_id}/persona", axum::routing::get(persona))
        .route("/r/{record_id}/recording", axum::routing::get(recording))
        .route("/r/{record_id}/delete", axum::routing::get(confirm_delete).post(delete))
        .route("/r/{record_id}/redact", axum::routing::get(confirm_redact).post(redact))
}
