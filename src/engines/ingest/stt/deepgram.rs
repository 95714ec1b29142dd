//! Deepgram's pre-recorded transcription, `POST /v1/listen` with the recording streamed
//! from the file store as the body. With a `callback` URL Deepgram answers `{request_id}` at once
//! and later posts the whole result to it; Deepgram keeps no transcript to fetch, so the
//! callback's body is the transcript. Callbacks are authenticated as Deepgram
//! recommends: Basic credentials in the callback URL (`insight:<per-record secret>`).
//! Without an address Deepgram can reach, the request waits for the result instead.

use crate::providers::files::Reading;
use serde_json::Value;

use super::{SttError, describe, reachable, read_answer};
use crate::config::Settings;
use crate::engines::ingest::{Transcript, json};

/// Where Deepgram is when `INSIGHT_STT_BASE_URL` does not say.
pub const DEFAULT_BASE_URL: &str = "https://api.deepgram.com";

/// The user name in callback URLs; the password is the record's callback secret.
pub const CALLBACK_USER: &str = "insight";

/// The Deepgram API.
#[derive(Debug, Clone)]
pub struct Deepgram {
    client: reqwest::Client,
    base: String,
    api_key: Option<String>,
    model: String,
    /// Insight's public URL when Deepgram can reach it.
    public_url: Option<String>,
}

/// What `listen` got.
#[derive(Debug)]
pub enum Listened {
    /// Deepgram works on it and will call back; its request id.
    Started(String),
    /// The transcript, answered at once.
    Done(Transcript),
}

impl Deepgram {
    pub(super) fn new(client: reqwest::Client, settings: &Settings) -> Self {
        let base = settings.speech.stt_base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let base = base.strip_suffix("/v1").unwrap_or(base).to_owned();
        Self {
            client,
            base,
            api_key: settings.speech.stt_api_key.clone().filter(|key| !key.is_empty()),
            model: settings.speech.stt_model.clone().unwrap_or_else(|| "nova-3".to_owned()),
            public_url: reachable(&settings.server.public_url).then(|| settings.server.public_url.clone()),
        }
    }

    /// The URL Deepgram calls back for `record_id`, with the record's secret as its Basic
    /// credentials; `None` when Deepgram cannot reach this instance.
    pub fn callback_url(&self, record_id: uuid::Uuid, token: &str) -> Option<String> {
        let mut url = url::Url::parse(self.public_url.as_deref()?).ok()?;
        url.set_username(CALLBACK_USER).ok()?;
        url.set_password(Some(token)).ok()?;
        let path = format!("{}/api/webhooks/deepgram", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.query_pairs_mut()
            .clear()
            .append_pair("record_id", &record_id.to_string());
        Some(url.into())
    }

    /// Sends the recording: with `callback`, Deepgram answers its request id and calls
    /// back later; without, it answers the transcript.
    pub async fn listen(
        &self,
        recording: Reading,
        media_type: Option<&str>,
        language: Option<&str>,
        callback: Option<&str>,
    ) -> Result<Listened, SttError> {
        let length = recording.size;
        let mut query: Vec<(&str, String)> = vec![
            ("model", self.model.clone()),
            ("smart_format", "true".into()),
            ("punctuate", "true".into()),
            ("diarize", "true".into()),
            ("utterances", "true".into()),
        ];
        match language.map(deepgram_language) {
            Some(language) => query.push(("language", language)),
            None => query.push(("detect_language", "true".into())),
        }
        if let Some(callback) = callback {
            query.push(("callback", callback.to_owned()));
            query.push(("callback_method", "POST".into()));
        }
        let mut request = self
            .client
            .post(format!("{}/v1/listen", self.base))
            .query(&query)
            .header(
                reqwest::header::CONTENT_TYPE,
                media_type.unwrap_or("application/octet-stream"),
            )
            .header(reqwest::header::CONTENT_LENGTH, length)
            .body(reqwest::Body::wrap_stream(recording.bytes));
        if let Some(key) = &self.api_key {
            request = request.header(reqwest::header::AUTHORIZATION, format!("Token {key}"));
        }
        // Deepgram's messages never show the callback's credentials, even if it echoes the URL.
        let secret = callback
            .and_then(|url| url::Url::parse(url).ok())
            .and_then(|url| url.password().map(str::to_owned));
        let redact = |error: SttError| match error {
            SttError::Transient(message) => {
                SttError::Transient(crate::providers::client::redact(&message, secret.as_deref()))
            }
            SttError::Permanent(message) => {
                SttError::Permanent(crate::providers::client::redact(&message, secret.as_deref()))
            }
        };
        let response = request
            .send()
            .await
            .map_err(|error| SttError::Transient(format!("Deepgram did not answer: {}", describe(error))))?;
        let body = read_answer(response, self.api_key.as_deref()).await.map_err(redact)?;
        if callback.is_some() {
            let started: Value = serde_json::from_slice(&body)
                .map_err(|error| SttError::Transient(format!("Deepgram's answer could not be read: {error}")))?;
            return match started["request_id"].as_str() {
                Some(id) if !id.is_empty() => Ok(Listened::Started(id.to_owned())),
                _ => Err(SttError::Permanent(
                    "Deepgram's answer to the callback request has no request_id.".to_owned(),
                )),
            };
        }
        read_result(&body).map(Listened::Done).map_err(SttError::Permanent)
    }
}

/// A record's language (BCP 47) as Deepgram takes it: its regional variants as they are,
/// otherwise the language alone (`de-DE` is `de`).
fn deepgram_language(tag: &str) -> String {
    const REGIONAL: [&str; 16] = [
        "en-US", "en-GB", "en-AU", "en-IN", "en-NZ", "fr-CA", "pt-BR", "pt-PT", "es-419", "de-CH", "nl-BE", "zh-CN",
        "zh-TW", "zh-HK", "hi-Latn", "sv-SE",
    ];
    let tag = tag.replace('_', "-");
    REGIONAL
        .iter()
        .find(|regional| regional.eq_ignore_ascii_case(&tag))
        .map(|regional| (*regional).to_owned())
        .unwrap_or_else(|| tag.split('-').next().unwrap_or_default().to_ascii_lowercase())
}

/// A Deepgram result (answered, or posted to a callback) as a transcript; Deepgram's own
/// error (`err_msg`) when it is one.
pub fn read_result(body: &[u8]) -> Result<Transcript, String> {
    if let Ok(value) = serde_json::from_slice::<Value>(body)
        && let Some(message) = value["err_msg"].as_str()
    {
        let message: String = message.chars().take(300).collect();
        return Err(format!("Deepgram could not transcribe the recording: {message}"));
    }
    json::parse(body).map_err(|error| format!("Deepgram's transcript could not be read: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deepgram(public_url: &str) -> Deepgram {
        let mut settings = Settings::for_database("sqlite://unused.db");
        settings.server.public_url = public_url.to_owned();
        Deepgram::new(reqwest::Client::new(), &settings)
    }

    #[test]
    fn callback_urls_carry_the_record_and_its_secret_as_basic_credentials() {
        let record = uuid::Uuid::new_v4();
        let url = deepgram("https://research.example.org/insight")
            .callback_url(record, "s3cr-et_")
            .expect("reachable");
        assert_eq!(
            url,
            format!("https://insight:s3cr-et_@research.example.org/insight/api/webhooks/deepgram?record_id={record}")
        );
        assert!(deepgram("http://127.0.0.1:8000").callback_url(record, "x").is_none());
    }

    #[test]
    fn languages_are_tags_deepgram_takes() {
        assert_eq!(deepgram_language("de-DE"), "de");
        assert_eq!(deepgram_language("DE"), "de");
        assert_eq!(deepgram_language("en_us"), "en-US");
        assert_eq!(deepgram_language("pt-br"), "pt-BR");
        assert_eq!(deepgram_language("es-419"), "es-419");
        assert_eq!(deepgram_language("fr-FR"), "fr");
    }

    #[test]
    fn deepgram_errors_are_read_as_such() {
        let error = read_result(br#"{"err_code":"Bad Request","err_msg":"Bad Request: failed to process audio: corrupt or unsupported data","request_id":"r"}"#)
            .expect_err("an error");
        assert!(error.contains("corrupt or unsupported data"), "{error}");
        assert!(read_result(b"not json").is_err());
    }
}
