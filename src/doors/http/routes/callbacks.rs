//! Speech-to-text providers calling back when an asynchronous transcription is ready.
//! Each is verified by the scheme its provider supports; a missing or wrong credential
//! gets 401 and changes nothing.
//!
//! AssemblyAI posts `{transcript_id, status}` to `/api/webhooks/assemblyai` with the
//! header we gave it for that recording (`X-Insight-Callback-Token`, derived from the
//! instance key and the record). A verified callback only wakes the record's job, which
//! fetches the transcript from AssemblyAI itself: nothing in the callback is trusted
//! beyond "look now", so a replayed one changes nothing twice.
//!
//! Deepgram posts the whole result to the callback URL Insight gave it,
//! `INSIGHT_PUBLIC_URL/api/webhooks/deepgram?record_id=...` with Basic credentials
//! `insight:<the record's secret>` in it (Deepgram's recommended scheme). Deepgram keeps
//! no transcript to fetch, so a verified callback's body is the transcript: it finishes
//! the record (or fails it with Deepgram's reason) and the record's job in one
//! transaction; a replay finds the record finished and changes nothing.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::records;
use crate::doors::http::AppState;
use crate::doors::http::extract::{RawBody, read_json_body_up_to};
use crate::engines::ingest::stt::{CALLBACK_HEADER, SpeechToText, callback_token};
use crate::error::{Error, ErrorBody, Result};
use crate::secret::KeyMaterial;

crate::domain::string_enum! {
    /// What became of the transcript.
    AssemblyAiStatus { Completed = "completed", Error = "error" }
}

/// AssemblyAI's callback for a transcript that finished or failed.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct AssemblyAiCallback {
    #[schema(min_length = 1, max_length = 200)]
    pub transcript_id: String,
    #[schema(value_type = AssemblyAiStatus)]
    pub status: String,
}

#[utoipa::path(post, path = "/api/webhooks/assemblyai", tag = "webhooks",
    request_body(content = AssemblyAiCallback, description = "AssemblyAI's callback; `X-Insight-Callback-Token` \
        holds the secret Insight gave AssemblyAI for that recording"),
    params(("X-Insight-Callback-Token" = Option<String>, Header,
        description = "The per-recording secret Insight sent with the transcription request")),
    responses(
        (status = 204, description = "Verified: the record's transcript is fetched from AssemblyAI now (a \
         duplicate changes nothing)"),
        (status = 401, description = "Missing or wrong secret, a transcript Insight did not send, or AssemblyAI \
         is not the speech-to-text provider here: nothing changed", body = ErrorBody)))]
async fn assemblyai_callback(
    State(app): State<AppState>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<StatusCode> {
    let refused =
        |why: &str| Error::Unauthenticated(format!("Not a callback from AssemblyAI for this service: {why}."));
    if !matches!(app.stt, Some(SpeechToText::AssemblyAi(_))) {
        return Err(refused(
            "AssemblyAI is not the speech-to-text provider here (INSIGHT_STT_PROVIDER)",
        ));
    }
    let callback: AssemblyAiCallback = serde_json::from_slice(&body)
        .ok()
        .filter(|callback: &AssemblyAiCallback| transcript_id_is_valid(&callback.transcript_id))
        .ok_or_else(|| refused("the body is not AssemblyAI's {transcript_id, status}"))?;
    let given = headers
        .get(CALLBACK_HEADER)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| refused("the X-Insight-Callback-Token header is missing"))?;
    let record_id = records::transcription::assemblyai_ready(&app, &callback.transcript_id, given)
        .await?
        // Answered like a wrong secret, so a caller learns nothing about which ids exist.
        .ok_or_else(|| refused("the secret does not match"))?;
    tracing::info!(%record_id, status = %callback.status.chars().take(20).collect::<String>(), "AssemblyAI called back");
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/webhooks/deepgram", tag = "webhooks",
    params(("record_id" = Option<String>, Query,
        description = "The record the result is for, as Insight wrote it into the callback URL")),
    request_body(content = Object, description = "Deepgram's result for the recording (what `/v1/listen` \
        answers); `Authorization` holds the Basic credentials of the callback URL Insight gave Deepgram"),
    responses(
        (status = 204, description = "Verified: the transcript is the record's now, or the record shows why it \
         could not be (a duplicate changes nothing)"),
        (status = 401, description = "Missing or wrong credentials, no record named, or Deepgram is not the \
         speech-to-text provider here: nothing changed", body = ErrorBody),
        (status = 409, description = "The record's job is running just now: send it again", body = ErrorBody),
        (status = 413, description = "Larger than INSIGHT_MAX_UPLOAD_BYTES", body = ErrorBody),
        (status = 415, description = "Not JSON", body = ErrorBody)))]
async fn deepgram_callback(State(app): State<AppState>, request: Request) -> Result<StatusCode> {
    let refused = |why: &str| Error::Unauthenticated(format!("Not a callback from Deepgram for this service: {why}."));
    if !matches!(app.stt, Some(SpeechToText::Deepgram(_))) {
        return Err(refused(
            "Deepgram is not the speech-to-text provider here (INSIGHT_STT_PROVIDER)",
        ));
    }
    let record_id = request
        .uri()
        .query()
        .and_then(|query| {
            url::form_urlencoded::parse(query.as_bytes())
                .find(|(name, _)| name == "record_id")
                .and_then(|(_, value)| value.parse::<uuid::Uuid>().ok())
        })
        .ok_or_else(|| refused("the callback URL names no record"))?;
    let password = basic_password(request.headers()).ok_or_else(|| refused("Basic credentials are missing"))?;
    if !KeyMaterial::new(callback_token(&app.secret, record_id)).matches(&password) {
        return Err(refused("the credentials do not match"));
    }
    let body = read_json_body_up_to(request, app.settings.material.max_upload_bytes).await?;
    records::transcription::deepgram_result(&app, record_id, &body).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// AssemblyAI's transcript ids are short and URL-safe; anything else is not one of theirs.
fn transcript_id_is_valid(id: &str) -> bool {
    (1..=200).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The password of `Authorization: Basic ...`.
fn basic_password(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (_, password) = decoded.split_once(':')?;
    Some(password.to_owned())
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(assemblyai_callback))
        .routes(routes!(deepgram_callback))
}
