//! Speech-to-text providers calling back when an asynchronous transcription is ready.
//!
//! AssemblyAI posts `{transcript_id, status}` to `/api/webhooks/assemblyai` with the
//! header we gave it for that recording (`X-Insight-Callback-Token`, derived from the
//! instance key and the record). A verified callback only wakes the record's job, which
//! fetches the transcript from AssemblyAI itself: nothing in the callback is trusted
//! beyond "look now", so a replayed one changes nothing twice.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::http::AppState;
use crate::ingest::stt::{ASSEMBLYAI_JOB, CALLBACK_HEADER, SpeechToText, callback_token};
use crate::secret::KeyMaterial;

/// AssemblyAI's callback for a transcript that finished or failed.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct AssemblyAiCallback {
    #[schema(min_length = 1, max_length = 200)]
    pub transcript_id: String,
    /// `completed` or `error`.
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
async fn assemblyai_callback(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> ApiResult<StatusCode> {
    let refused =
        |why: &str| ApiError::Unauthorized(format!("Not a callback from AssemblyAI for this service: {why}."));
    if !matches!(app.stt, Some(SpeechToText::AssemblyAi(_))) {
        return Err(refused(
            "AssemblyAI is not the speech-to-text provider here (INSIGHT_STT_PROVIDER)",
        ));
    }
    let callback: AssemblyAiCallback =
        serde_json::from_slice(&body).map_err(|_| refused("the body is not AssemblyAI's {transcript_id, status}"))?;
    let given = headers
        .get(CALLBACK_HEADER)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| refused("the X-Insight-Callback-Token header is missing"))?;
    let record_id = app
        .store
        .record_for_stt_job(&format!("{ASSEMBLYAI_JOB}{}", callback.transcript_id))
        .await?
        // Answered like a wrong secret, so a caller learns nothing about which ids exist.
        .ok_or_else(|| refused("the secret does not match"))?;
    if !KeyMaterial::new(callback_token(&app.secret, record_id)).matches(given) {
        return Err(refused("the secret does not match"));
    }
    if app.store.wake_record_job(record_id).await? {
        app.wake_workers();
    }
    tracing::info!(%record_id, status = %callback.status.chars().take(20).collect::<String>(), "AssemblyAI called back");
    Ok(StatusCode::NO_CONTENT)
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(assemblyai_callback))
}
