//! Speech-to-text over the OpenAI-compatible `/audio/transcriptions` API (OpenAI,
//! Azure OpenAI, Groq, faster-whisper-server, LocalAI, whisper.cpp's server...). The
//! recording streams from disk into the multipart request; it is never whole in memory.

use std::path::Path;
use std::time::Duration;

use reqwest::multipart::{Form, Part};
use tokio_util::io::ReaderStream;

use super::{Transcript, json};
use crate::config::Settings;

/// A transcription that did not work, and whether trying again may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SttError {
    /// The provider is down, slow or busy: retry later.
    Transient(String),
    /// The provider refused the file or answered nonsense: retrying will not help.
    Permanent(String),
}

/// A configured speech-to-text provider.
#[derive(Debug, Clone)]
pub struct SpeechToText {
    client: reqwest::Client,
    endpoint: String,
    api_key: Option<String>,
    model: String,
}

/// The settings an audio upload needs, for the 503 that names them.
pub const SETTINGS_HINT: &str = "Audio and video need a speech-to-text provider: set INSIGHT_STT_BASE_URL (an \
     OpenAI-compatible API such as https://api.openai.com/v1), and INSIGHT_STT_API_KEY and INSIGHT_STT_MODEL as it needs.";

impl SpeechToText {
    /// The provider the settings name, if any.
    pub fn from_settings(settings: &Settings) -> Option<Self> {
        let base = settings.stt_base_url.as_deref()?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // Long recordings take long to transcribe.
            .timeout(Duration::from_secs(30 * 60))
            .build()
            .ok()?;
        Some(Self {
            client,
            endpoint: format!("{base}/audio/transcriptions"),
            api_key: settings.stt_api_key.clone().filter(|key| !key.is_empty()),
            model: settings.stt_model.clone(),
        })
    }

    /// Transcribes the recording at `path`.
    pub async fn transcribe(
        &self,
        path: &Path,
        file_name: &str,
        media_type: Option<&str>,
        language: Option<&str>,
    ) -> Result<Transcript, SttError> {
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|error| SttError::Permanent(format!("The uploaded recording is missing ({error}).")))?;
        let length = file.metadata().await.map(|m| m.len()).unwrap_or(0);
        let body = reqwest::Body::wrap_stream(ReaderStream::new(file));
        let mut part = Part::stream_with_length(body, length).file_name(file_name.to_owned());
        if let Some(media_type) = media_type {
            part = part
                .mime_str(media_type)
                .map_err(|_| SttError::Permanent(format!("{media_type:?} is not a valid media type.")))?;
        }
        let mut form = Form::new()
            .part("file", part)
            .text("model", self.model.clone())
            .text("response_format", "verbose_json");
        if let Some(language) = language.and_then(|tag| tag.split(['-', '_']).next()) {
            form = form.text("language", language.to_ascii_lowercase());
        }
        let mut request = self.client.post(&self.endpoint).multipart(form);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|error| {
            SttError::Transient(format!(
                "The speech-to-text provider did not answer: {}",
                describe(error)
            ))
        })?;
        let status = response.status();
        let body = response.bytes().await.map_err(|error| {
            SttError::Transient(format!("The speech-to-text answer broke off: {}", describe(error)))
        })?;
        if !status.is_success() {
            let detail = provider_message(&body);
            let message = format!("The speech-to-text provider answered {status}: {detail}");
            let transient = status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408;
            return Err(if transient {
                SttError::Transient(message)
            } else {
                SttError::Permanent(message)
            });
        }
        json::parse_openai_verbose(&body).map_err(|error| {
            SttError::Permanent(format!(
                "The speech-to-text provider's answer could not be read: {error}"
            ))
        })
    }
}

/// An error without the URL's query or any header (they may carry secrets).
fn describe(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "it timed out".to_owned()
    } else if error.is_connect() {
        "the connection failed".to_owned()
    } else {
        error.without_url().to_string()
    }
}

/// The provider's own error message (`{"error":{"message":...}}`), else the start of the body.
fn provider_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|value| value.pointer("/error/message").or_else(|| value.pointer("/detail")))
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    message.chars().take(300).collect()
}
