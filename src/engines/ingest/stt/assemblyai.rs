//! AssemblyAI's asynchronous transcription: the recording streams from the file store to
//! `POST /v2/upload`, `POST /v2/transcript` starts the work (with speaker labels, and a
//! `webhook_url` whose calls carry a secret header of ours), and `GET /v2/transcript/{id}`
//! says whether it is done and, when it is, gives the utterances.

use crate::providers::files::Reading;
use serde_json::{Value, json};

use super::{SttError, describe, reachable, read_answer};
use crate::config::Settings;
use crate::engines::ingest::{Transcript, json};

/// Where AssemblyAI is when `INSIGHT_STT_BASE_URL` does not say (its EU region is
/// `https://api.eu.assemblyai.com`).
pub const DEFAULT_BASE_URL: &str = "https://api.assemblyai.com";

/// The header AssemblyAI's callbacks carry our secret for the record in.
pub const CALLBACK_HEADER: &str = "X-Insight-Callback-Token";

/// The AssemblyAI API.
#[derive(Debug, Clone)]
pub struct AssemblyAi {
    client: reqwest::Client,
    base: String,
    api_key: Option<String>,
    /// `speech_models`, when the operator chose them.
    models: Vec<String>,
    /// Where callbacks go; `None` when Insight's public URL is one AssemblyAI cannot
    /// reach (loopback), and then only the checks find a finished transcript.
    callback_url: Option<String>,
}

/// Where and how AssemblyAI calls back for one recording.
#[derive(Debug, Clone)]
pub struct Callback {
    pub url: String,
    pub token: String,
}

/// How a transcription stands.
#[derive(Debug)]
pub enum Progress {
    /// Queued or in progress.
    Pending,
    Done(Transcript),
    /// AssemblyAI could not transcribe it; its reason.
    Failed(String),
}

impl AssemblyAi {
    pub(super) fn new(client: reqwest::Client, settings: &Settings) -> Self {
        let base = settings.speech.stt_base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let base = base.strip_suffix("/v2").unwrap_or(base).to_owned();
        let models = settings
            .speech
            .stt_model
            .iter()
            .flat_map(|models| models.split(','))
            .map(str::trim)
            .filter(|model| !model.is_empty())
            .map(str::to_owned)
            .collect();
        let callback_url = reachable(&settings.server.public_url)
            .then(|| format!("{}/api/webhooks/assemblyai", settings.server.public_url));
        Self {
            client,
            base,
            api_key: settings.speech.stt_api_key.clone().filter(|key| !key.is_empty()),
            models,
            callback_url,
        }
    }

    /// Where callbacks go, if AssemblyAI can reach this instance.
    pub fn callback_url(&self) -> Option<&str> {
        self.callback_url.as_deref()
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.client.request(method, format!("{}{path}", self.base));
        match &self.api_key {
            // AssemblyAI takes the key itself, not a bearer token.
            Some(key) => request.header(reqwest::header::AUTHORIZATION, key),
            None => request,
        }
    }

    /// Uploads the recording and starts its transcription; the transcript's id.
    pub async fn submit(
        &self,
        recording: Reading,
        language: Option<&str>,
        callback: Option<Callback>,
    ) -> Result<String, SttError> {
        let length = recording.size;
        let response = self
            .request(reqwest::Method::POST, "/v2/upload")
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .header(reqwest::header::CONTENT_LENGTH, length)
            .body(reqwest::Body::wrap_stream(recording.bytes))
            .send()
            .await
            .map_err(unreachable)?;
        let uploaded = answer(response, self.api_key.as_deref()).await?;
        let Some(upload_url) = uploaded["upload_url"].as_str() else {
            return Err(SttError::Permanent(
                "AssemblyAI's answer to the upload has no upload_url.".to_owned(),
            ));
        };
        let mut body = json!({ "audio_url": upload_url, "speaker_labels": true });
        match language.and_then(|tag| tag.split(['-', '_']).next()) {
            Some(language) => body["language_code"] = json!(language.to_ascii_lowercase()),
            None => body["language_detection"] = json!(true),
        }
        if !self.models.is_empty() {
            body["speech_models"] = json!(self.models);
        }
        if let Some(callback) = callback {
            body["webhook_url"] = json!(callback.url);
            body["webhook_auth_header_name"] = json!(CALLBACK_HEADER);
            body["webhook_auth_header_value"] = json!(callback.token);
        }
        let response = self
            .request(reqwest::Method::POST, "/v2/transcript")
            .json(&body)
            .send()
            .await
            .map_err(unreachable)?;
        let started = answer(response, self.api_key.as_deref()).await?;
        if started["status"] == "error" {
            return Err(SttError::Permanent(failure(&started)));
        }
        match started["id"].as_str() {
            Some(id) if !id.is_empty() => Ok(id.to_owned()),
            _ => Err(SttError::Permanent(
                "AssemblyAI's answer to the transcription request has no id.".to_owned(),
            )),
        }
    }

    /// Deletes the transcript `id` (and with it the uploaded recording) from AssemblyAI,
    /// once Insight holds it: interviews are personal data, and no copy stays behind.
    pub async fn delete(&self, id: &str) -> Result<(), SttError> {
        let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        let response = self
            .request(reqwest::Method::DELETE, &format!("/v2/transcript/{id}"))
            .send()
            .await
            .map_err(unreachable)?;
        read_answer(response, self.api_key.as_deref()).await.map(|_| ())
    }

    /// How the transcription `id` stands.
    pub async fn check(&self, id: &str) -> Result<Progress, SttError> {
        let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        let response = self
            .request(reqwest::Method::GET, &format!("/v2/transcript/{id}"))
            .send()
            .await
            .map_err(unreachable)?;
        let body = read_answer(response, self.api_key.as_deref()).await?;
        let transcript: Value = serde_json::from_slice(&body)
            .map_err(|error| SttError::Transient(format!("AssemblyAI's answer could not be read: {error}")))?;
        match transcript["status"].as_str() {
            Some("completed") => json::parse(&body)
                .map(Progress::Done)
                .map_err(|error| SttError::Permanent(format!("AssemblyAI's transcript could not be read: {error}"))),
            Some("error") => Ok(Progress::Failed(failure(&transcript))),
            _ => Ok(Progress::Pending),
        }
    }
}

fn unreachable(error: reqwest::Error) -> SttError {
    SttError::Transient(format!("AssemblyAI did not answer: {}", describe(error)))
}

async fn answer(response: reqwest::Response, api_key: Option<&str>) -> Result<Value, SttError> {
    let body = read_answer(response, api_key).await?;
    serde_json::from_slice(&body)
        .map_err(|error| SttError::Transient(format!("AssemblyAI's answer could not be read: {error}")))
}

/// AssemblyAI's reason for an `error` status.
fn failure(transcript: &Value) -> String {
    let reason = transcript["error"].as_str().unwrap_or("no reason given");
    format!(
        "AssemblyAI could not transcribe the recording: {}",
        reason.chars().take(300).collect::<String>()
    )
}
