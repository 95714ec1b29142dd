//! Speech-to-text over the OpenAI-compatible `/audio/transcriptions` API (OpenAI,
//! Azure OpenAI, Groq, faster-whisper-server, LocalAI, whisper.cpp's server...). The
//! recording streams from the file store into the multipart request; it is never whole in memory.

use crate::providers::files::Reading;
use reqwest::multipart::{Form, Part};

use super::{SttError, describe, read_answer};
use crate::config::Settings;
use crate::engines::ingest::{Transcript, json};

/// An OpenAI-compatible `/audio/transcriptions` endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiStt {
    client: reqwest::Client,
    endpoint: String,
    api_key: Option<String>,
    model: String,
}

impl OpenAiStt {
    pub(super) fn new(client: reqwest::Client, base: &str, settings: &Settings) -> Self {
        Self {
            client,
            endpoint: format!("{base}/audio/transcriptions"),
            api_key: settings.speech.stt_api_key.clone().filter(|key| !key.is_empty()),
            model: settings
                .speech
                .stt_model
                .clone()
                .unwrap_or_else(|| "whisper-1".to_owned()),
        }
    }

    /// Transcribes the recording.
    pub async fn transcribe(
        &self,
        recording: Reading,
        file_name: &str,
        media_type: Option<&str>,
        language: Option<&str>,
    ) -> Result<Transcript, SttError> {
        let length = recording.size;
        let body = reqwest::Body::wrap_stream(recording.bytes);
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
        let body = read_answer(response, self.api_key.as_deref()).await?;
        json::parse_openai_verbose(&body).map_err(|error| {
            SttError::Permanent(format!(
                "The speech-to-text provider's answer could not be read: {error}"
            ))
        })
    }
}
